"""The claims of the cross-serial chapter (paper 001 sec. 3 and 5), decided on every seed with
:mod:`urnlib.rules`.

The paper trains 100 epochs, so each measure is read at epoch 100
(:func:`~urnlib.chapters.cross_serial.report.final_row`) or, where the paper speaks of training, over epochs
1-100. Our runs trained on with early stopping on the validation loss (strings drawn from C_8 like the
training strings; the test set is read for reporting only): where reading a run at the epoch of its lowest
validation loss gives another verdict, the claim's ``ours`` gives that reading too. Every tolerance comes from
the paper's words or numbers and the seeds' spread; a run that trained fewer than 100 epochs, or whose
validation loss is not below a uniform guess's (:func:`urnlib.rules.off_chance`), is no evidence (cause
``untrained``). Overfitting is measured as in the Dyck chapter: how far a curve ends (epoch 100) above its
lowest value over epochs 1-100.
"""

from __future__ import annotations

import math

import numpy as np

from urnlib.claims import Claim, both_readings, claim
from urnlib.reports.common import overfit_rise, share_lower_at_matched_x
from urnlib.chapters.cross_serial.claims_settle import lstm_settle, more_seeds
from urnlib.chapters.cross_serial.report import (
    CHAPTER,
    PAPER_EPOCHS,
    PAPER_ERROR,
    PAPER_URN32_ERROR,
    PAPER_URN32_LOSS,
    SHARE,
    Grouped,
    _grouped,
    _ms,
    _unseen_seen,
    best_row,
    final_row,
    labels_of,
    table1,
    untrained,
)
from urnlib.results import Run
from urnlib.rules import (BEATS_RULE, EVERY_SEED_RULE, THRESHOLD_RULE, combine, compare, every_seed, needed,
                          threshold)
from urnlib.seeds import Stat

__all__ = ["claims", "FINAL", "CURVE"]

FINAL = (
    f"final (epoch {PAPER_EPOCHS}, the paper's); `ours` adds the reading at the epoch selected on validation "
    "data where its verdict differs"
)
SELECTED = "at the epoch of the lowest validation loss (selected on validation data)"
CURVE = f"every epoch, 1-{PAPER_EPOCHS} (the training curve)"
_OVERFIT = "Additionally, the URN appears to be less prone to overfitting, on both tasks."


def _curve(run: Run, key: str) -> np.ndarray:
    return np.asarray(run.column(key)[:PAPER_EPOCHS], dtype=float)


def claims(seeds: Grouped, *, units: list[int], train_k: int, lstm_embedding: int = 20) -> list[Claim]:
    """Every claim of paper 001 sec. 3 (and sec. 5's on overfitting) with its verdict, read at epoch 100 or
    epochs 1-100; where the reading at the epoch selected on validation data gives another verdict, the
    claim's ``ours`` says so."""
    final = _claims(seeds, units=units, train_k=train_k, lstm_embedding=lstm_embedding, read=final_row)
    selected = _claims(seeds, units=units, train_k=train_k, lstm_embedding=lstm_embedding, read=best_row)
    return both_readings(final, selected, reading=SELECTED)


def _claims(seeds: Grouped, *, units, train_k, lstm_embedding, read) -> list[Claim]:
    seeds = _grouped(seeds)
    more = more_seeds(seeds, list(seeds))
    out: list[Claim] = []
    t1 = table1(lstm_embedding)
    equal = bool(
        (t1["LSTM (paper)"] == t1["LSTM (ours, V=10)"]).all()
        and (t1["URN (paper)"] == t1["URN (ours, V=10)"]).all()
    )
    out.append(
        claim(
            CHAPTER,
            "paper 001 Table 1",
            "parameter counts of the cross-serial models (V = 10)",
            "LSTM 7314/2738/1218, URN 5290/1370/370 (32/16/8 units)",
            "LSTM "
            + "/".join(str(v) for v in t1["LSTM (ours, V=10)"])
            + ", URN "
            + "/".join(str(v) for v in t1["URN (ours, V=10)"]),
            f"equal, counted on modules built with V = 10 (LSTM embedding {lstm_embedding})",
            equal,
            quote="Table 1: Number of parameters for cross-dependency pattern models",
            epoch="- (not trained)",
            direction="equal" if equal else "different",
        )
    )

    pairs = [n for n in units if f"URN {n}" in seeds and f"LSTM {n}" in seeds]
    if not pairs:
        return out
    labels = labels_of(seeds, pairs)
    idle = untrained(seeds, labels, read)

    def add(source, statement, paper, ours, rule, holds, partly=False, *, quote, epoch, rests=labels,
            settle="", seeds_needed=None):
        direction = "" if hasattr(holds, "holds") else ours  # a combined claim: its measures
        idle_here = [f"{lab} {idle[lab]}" for lab in rests if lab in idle]
        out.append(claim(CHAPTER, source, statement, paper, ours, rule, holds, partly, quote=quote,
                         epoch=epoch, seeds=min(len(seeds[lab]) for lab in rests), settle=settle,
                         direction=direction, seeds_needed=seeds_needed, idle=idle_here))

    def at(key: str) -> dict[str, Stat]:
        return {lab: seeds[lab].stat(lambda run: read(run)[key]) for lab in labels}

    # ---- Fig. 2a: test loss
    loss = at("test_loss")
    parts = [compare(loss[f"LSTM {n}"], loss[f"URN {n}"], higher=False) for n in pairs]
    holds, partly = combine(parts)
    add(
        "paper 001 Fig. 2a",
        "LSTMs make better per-symbol guesses (lower test loss) than URNs, across the board",
        "LSTM lower",
        "; ".join(f"{n}: LSTM {_ms(loss[f'LSTM {n}'])} vs URN {_ms(loss[f'URN {n}'])}" for n in pairs),
        f"test loss LSTM < URN at every size; {BEATS_RULE}",
        holds,
        partly,
        quote="We see that LSTM models generally make better guesses than URNs, across the board.",
        epoch=FINAL,
        settle=lstm_settle(loss, pairs, seeds, more),
        seeds_needed=needed(parts),
    )

    # ---- Fig. 2b: below 10% error
    error = at("error_rate")
    verdicts = {lab: threshold(error[lab], PAPER_ERROR, above=False).holds for lab in labels}
    best_label = min(labels, key=lambda lab: error[lab].mean)
    holds = (
        True
        if any(v is True for v in verdicts.values())
        else (None if any(v is None for v in verdicts.values()) else False)
    )
    add(
        "paper 001 Fig. 2b",
        "the best models reach less than 10% full-string error on the test set",
        f"< {PAPER_ERROR:.2f}",
        f"best {best_label}: {_ms(error[best_label])}",
        f"error rate <= {PAPER_ERROR:.2f} for some model; {THRESHOLD_RULE}",
        holds,
        quote="The best models can achieve less then ten percent error rate on average on the test set.",
        epoch=FINAL,
    )

    # ---- Fig. 2b: the larger LSTMs overfit (epochs 1-100, per seed)
    big = [f"LSTM {n}" for n in pairs if n > min(pairs)] or [f"LSTM {max(pairs)}"]
    rises = {lab: [overfit_rise(_curve(r, "error_rate")) for r in seeds[lab]] for lab in big}
    flags = {
        lab: every_seed((v > 0 for v in rises[lab]), what="error at epoch 100 above its lowest")
        for lab in big
    }
    holds, partly = combine(flags.values())
    add(
        "paper 001 Fig. 2b",
        "the larger LSTMs overfit: their error rate goes back up",
        "overfitting",
        "; ".join(f"{lab}: {flags[lab].direction} (rise {_ms(Stat.of(rises[lab]))})" for lab in big),
        f"error rate at epoch 100 above its lowest over epochs 1-100, every LSTM above the smallest; "
        f"{EVERY_SEED_RULE}",
        holds,
        partly,
        quote="However, the LSTM models with a larger number of units exhibit overfitting.",
        epoch=CURVE,
        rests=big,
        settle=more,
        seeds_needed=needed(flags.values()),
    )

    # ---- Fig. 2c: at a given training loss, URNs tend to err less (epochs 1-100, per seed pair)
    def shares(n: int) -> Stat:
        lstm = dict(zip(seeds[f"LSTM {n}"].seeds, seeds[f"LSTM {n}"].runs))
        values = []
        for seed, urn in zip(seeds[f"URN {n}"].seeds, seeds[f"URN {n}"].runs):
            if seed in lstm:
                s = share_lower_at_matched_x(
                    _curve(urn, "train_loss"),
                    _curve(urn, "error_rate"),
                    _curve(lstm[seed], "train_loss"),
                    _curve(lstm[seed], "error_rate"),
                )
                values.append(math.nan if s is None else s)
        return Stat.of(values)

    share = {n: shares(n) for n in pairs}
    parts = [threshold(share[n], SHARE) for n in pairs]
    holds, partly = combine(parts)
    add(
        "paper 001 Fig. 2c",
        "at a given training loss, URNs tend to have lower error rates than LSTMs",
        "URN lower",
        "; ".join(
            f"{n}: URN lower at {_ms(share[n], 2)} of shared loss levels"
            if share[n].n
            else f"{n}: no shared range"
            for n in pairs
        ),
        f"share of the training-loss levels both reach where the URN's error is lower (seed against seed) > "
        f'{SHARE} ("tend to": more often than not) at every size; {THRESHOLD_RULE}',
        holds,
        partly,
        quote="The URN models tend to achieve lower error rates for this task, even though they do less well "
        "from a generative language modelling perspective.",
        epoch=CURVE,
        settle=more,
    )

    # ---- Fig. 2c: URN 32 below 0.4 error at training loss 1 (epochs 1-100, per seed)
    if 32 in pairs:

        def low_at_one(run: Run) -> float:
            at_one = [
                e
                for e, tl in zip(_curve(run, "error_rate"), _curve(run, "train_loss"))
                if tl >= PAPER_URN32_LOSS
            ]
            return min(at_one) if at_one else math.nan

        stat = seeds["URN 32"].stat(low_at_one)
        never = (
            f"; {stat.missing} seeds never at training loss >= {PAPER_URN32_LOSS:g}" if stat.missing else ""
        )
        add(
            "paper 001 Fig. 2c",
            "the 32-unit URN gets below 0.4 error while its training loss is still as high as 1",
            f"< {PAPER_URN32_ERROR} at training loss {PAPER_URN32_LOSS:g}",
            (
                f"lowest error at training loss >= {PAPER_URN32_LOSS:g}: {_ms(stat)}{never}"
                if stat.n
                else f"training loss never >= {PAPER_URN32_LOSS:g} after epoch 1"
            ),
            f"per seed, the lowest error rate of an epoch with training loss >= {PAPER_URN32_LOSS:g} (nats "
            "per "
            f"symbol) <= {PAPER_URN32_ERROR}; {THRESHOLD_RULE}",
            threshold(stat, PAPER_URN32_ERROR, above=False, name="URN 32") if stat.n else None,
            quote="For instance, the 32-unit URN is able to obtain an error rate below 0.4 with a training "
            "loss "
            "as high as 1.",
            epoch=CURVE,
            rests=["URN 32"],
            settle="not the loss's scale: sec. 2 says the token losses are summed ('which we sum for each "
            "position'), but the authors' code (GU-CLASP/unitary-recurrent-network) divides their sum by the "
            "number of tokens, per symbol as here. The paper shows one run: "
            f"{more_seeds(seeds, ['URN 32'], 7)} would show "
            "whether a single run can reach 0.4 at this loss",
        )

    # ---- Fig. 2c: URNs' error falls smoothly (epochs 1-100, per seed)
    def largest_fall(run: Run) -> float:
        return max(0.0, float(np.max(-np.diff(_curve(run, "error_rate")), initial=0.0)))

    drops = {lab: seeds[lab].stat(largest_fall) for lab in labels}
    parts = [compare(drops[f"URN {n}"], drops[f"LSTM {n}"], higher=False) for n in pairs]
    holds, partly = combine(parts)
    add(
        "paper 001 Fig. 2c",
        "URNs' error rate falls smoothly; LSTMs' drops sharply",
        "URN smoother",
        "; ".join(f"{lab}: {_ms(d, 2)}" for lab, d in drops.items()),
        f"largest one-epoch fall of the error rate (epochs 1-100) URN < LSTM at every size; {BEATS_RULE}",
        holds,
        partly,
        quote="In general, the URNs provide a smoother decrease in error rate as they learn the language.",
        epoch=CURVE,
        settle=more,
        seeds_needed=needed(parts),
    )

    # ---- sec. 5: the URN less prone to overfitting (epochs 1-100)
    parts, texts = [], []
    for n in pairs:
        for key, what in (("test_loss", "test loss"), ("error_rate", "error rate")):
            u, lo = (
                seeds[f"{fam} {n}"].stat(lambda r, key=key: overfit_rise(_curve(r, key)))
                for fam in ("URN", "LSTM")
            )
            parts.append(compare(u, lo, higher=False))
            texts.append(f"{n}, {what}: URN {_ms(u)} vs LSTM {_ms(lo)}")
    holds, partly = combine(parts)
    add(
        "paper 001 sec. 5",
        "URNs are less prone to overfitting than LSTMs",
        "URN less prone to overfitting",
        "rise at epoch 100 above the lowest: " + "; ".join(texts),
        "the rise of the test loss and of the error rate at epoch 100 above their lowest (epochs 1-100), URN "
        f"below LSTM at every size; {BEATS_RULE}",
        holds,
        partly,
        quote=_OVERFIT,
        epoch=CURVE,
        settle=more,
        seeds_needed=needed(parts),
    )

    # ---- sec. 3.1, Fig. 2d: lengths unseen in training
    unseen = {lab: seeds[lab].stat(lambda run: _unseen_seen(run, train_k, read)[0]) for lab in labels}
    seen = {lab: seeds[lab].stat(lambda run: _unseen_seen(run, train_k, read)[1]) for lab in labels}
    if not any(s.n for s in unseen.values()):  # the test language has no length beyond the training one
        add(
            "paper 001 sec. 3.1, Fig. 2d",
            "behaviour on lengths unseen in training",
            "errors on unseen lengths; LSTM better there",
            "no unseen length in the test set",
            f"needs test_k > train_k (here {train_k})",
            None,
            quote="",
            epoch=FINAL,
        )
        return out
    fams = {fam: [lab for lab in labels if lab.startswith(fam)] for fam in ("URN", "LSTM")}
    errs = {
        fam: every_seed((v > 0 for lab in labs for v in unseen[lab].values), what="errs on unseen lengths")
        for fam, labs in fams.items()
    }
    fit = every_seed(v == 0 for lab in labels for v in seen[lab].values)  # "model the training data well"
    holds, partly = combine([fit, *errs.values()])
    add(
        "paper 001 sec. 3.1",
        "both architectures fit the training lengths but err on longer, unseen strings",
        "errors on unseen lengths",
        f"{fit.direction.replace('the property', 'no error on seen lengths').replace('seeds', 'runs')}; "
        + "; ".join(f"{fam}: {errs[fam].direction.replace('seeds', 'runs')}" for fam in fams)
        + "; "
        + "; ".join(f"{lab} unseen {_ms(unseen[lab], 2)}" for lab in labels),
        f"every run errs on no seen length and on some unseen length, per architecture; {EVERY_SEED_RULE}",
        holds,
        partly,
        quote="They can model the training data well, but produce incorrect patterns in some cases on "
        "strings "
        "of any greater length than the samples in the training corpus.",
        epoch=FINAL,
        seeds_needed=needed([fit, *errs.values()]),
    )

    pooled = {fam: Stat.of(v for lab in labs for v in unseen[lab].values) for fam, labs in fams.items()}
    add(
        "paper 001 Fig. 2d",
        "LSTMs do better than URNs on lengths unseen in training",
        "LSTM better overall",
        f"all sizes: LSTM {_ms(pooled['LSTM'], 2)} vs URN {_ms(pooled['URN'], 2)}; "
        + "; ".join(
            f"{n}: LSTM {_ms(unseen[f'LSTM {n}'], 2)} vs URN {_ms(unseen[f'URN {n}'], 2)}" for n in pairs
        ),
        f'mean unseen-length error over every size\'s runs ("overall") LSTM < URN; {BEATS_RULE}',
        compare(pooled["LSTM"], pooled["URN"], higher=False, names=("LSTM", "URN")),
        quote="We see here that the LSTMs tend to do better overall than the URNs for lengths unseen in the "
        "training data.",
        epoch=FINAL,
        settle=more,
    )

    sizes = sorted(pairs)
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        parts = [
            compare(unseen[f"URN {large}"], unseen[f"URN {small}"], higher=False),  # URN: lower error
            compare(unseen[f"LSTM {large}"], unseen[f"LSTM {small}"], higher=True),
        ]  # LSTM: higher
        holds, partly = combine(parts)
        add(
            "paper 001 Fig. 2d",
            "on unseen lengths URNs improve with more units while LSTMs get worse",
            "URN better, LSTM worse with size",
            f"URN {_ms(unseen[f'URN {small}'], 2)} -> {_ms(unseen[f'URN {large}'], 2)}; "
            f"LSTM {_ms(unseen[f'LSTM {small}'], 2)} -> {_ms(unseen[f'LSTM {large}'], 2)} "
            f"({small} -> {large} "
            "units)",
            "mean unseen-length error lower for the largest URN than the smallest, higher for the largest "
            "LSTM "
            f"than the smallest; {BEATS_RULE}",
            holds,
            partly,
            quote="However, the LSTMs do worse when the number of units increases, while the URNs do better "
            "as "
            "that number increases, thanks to a lack of overfitting.",
            epoch=FINAL,
            settle=more,
            seeds_needed=needed(parts),
        )
    return out
