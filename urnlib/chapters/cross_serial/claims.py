"""The claims of the cross-serial chapter (paper 001 sec. 3 and 5), declared (:mod:`urnlib.declare`): one
:class:`~urnlib.declare.Spec` per claim in :data:`SPECS`, each with a small measure on the runs.

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
from dataclasses import dataclass, field

import numpy as np

from urnlib.chapters.cross_serial.claims_settle import (authors_lstm_evidence, authors_whole, lstm_settle,
                                                       more_seeds)
from urnlib.chapters.cross_serial.report import (CHAPTER, PAPER_EPOCHS, PAPER_ERROR, PAPER_URN32_ERROR,
                                                 PAPER_URN32_LOSS, SHARE, Grouped, best_row, final_row,
                                                 grouped, labels_of, ms, table1, unseen_seen, untrained)
from urnlib.claims import Claim, both_readings
from urnlib.declare import Measured, Spec, evaluate
from urnlib.reports.common import overfit_rise, share_lower_at_matched_x
from urnlib.results import Run
from urnlib.rules import combine, compare, every_seed, rates, threshold
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "SPECS", "FINAL", "CURVE", "Measures"]

FINAL = (
    f"final (epoch {PAPER_EPOCHS}, the paper's); `ours` adds the reading at the epoch selected on validation "
    "data where its verdict differs"
)
SELECTED = "at the epoch of the lowest validation loss (selected on validation data)"
CURVE = f"every epoch, 1-{PAPER_EPOCHS} (the training curve)"


@dataclass
class Measures:
    """What the measures read: the runs by model, the sizes trained as both URN and LSTM, the row read."""

    seeds: dict[str, Seeds]
    pairs: list[int]
    labels: list[str]
    read: object
    train_k: int
    lstm_embedding: int
    more: str  # three more seeds of each model, with their cost
    variants: dict[str, Seeds] = field(default_factory=dict)  # models trained again as the authors' code does

    def at(self, key: str) -> dict[str, Stat]:
        return {lab: self.seeds[lab].stat(lambda run: self.read(run)[key]) for lab in self.labels}

    def unseen(self) -> dict[str, Stat]:
        return {lab: self.seeds[lab].stat(lambda r: unseen_seen(r, self.train_k, self.read)[0])
                for lab in self.labels}

    def seen(self) -> dict[str, Stat]:
        return {lab: self.seeds[lab].stat(lambda r: unseen_seen(r, self.train_k, self.read)[1])
                for lab in self.labels}


def claims(seeds: Grouped, *, units: list[int], train_k: int, lstm_embedding: int = 20,
           variants: dict[str, Seeds] | None = None) -> list[Claim]:
    """Every claim of paper 001 sec. 3 (and sec. 5's on overfitting) with its verdict, read at epoch 100 or
    epochs 1-100; where the reading at the epoch selected on validation data gives another verdict, the
    claim's ``ours`` says so. ``variants``: models trained again in another setting
    (:meth:`~urnlib.chapters.cross_serial.experiment.Config.variant_view`), the evidence behind a miss's
    cause."""
    kw = dict(units=units, train_k=train_k, lstm_embedding=lstm_embedding, variants=variants or {})
    final = _claims(seeds, read=final_row, **kw)
    selected = _claims(seeds, read=best_row, **kw)
    return both_readings(final, selected, reading=SELECTED)


def _claims(seeds: Grouped, *, units, train_k, lstm_embedding, read, variants) -> list[Claim]:
    seeds = grouped(seeds)
    pairs = [n for n in units if f"URN {n}" in seeds and f"LSTM {n}" in seeds]
    labels = labels_of(seeds, pairs)
    m = Measures(seeds, pairs, labels, read, train_k, lstm_embedding, more_seeds(seeds, list(seeds)),
                 variants)
    return evaluate(CHAPTER, SPECS, m, seeds={lab: len(seeds[lab]) for lab in labels},
                    idle=untrained(seeds, labels, read) if pairs else {})


def _curve(run: Run, key: str) -> np.ndarray:
    return np.asarray(run.column(key)[:PAPER_EPOCHS], dtype=float)


def _table1(m: Measures) -> Measured:
    t1 = table1(m.lstm_embedding)
    equal = bool((t1["LSTM (paper)"] == t1["LSTM (ours, V=10)"]).all()
                 and (t1["URN (paper)"] == t1["URN (ours, V=10)"]).all())
    ours = ("LSTM " + "/".join(str(v) for v in t1["LSTM (ours, V=10)"])
            + ", URN " + "/".join(str(v) for v in t1["URN (ours, V=10)"]))
    return Measured(ours, equal, rests=(), direction="equal" if equal else "different")


def _lstm_lower(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    loss = m.at("test_loss")
    parts = [compare(loss[f"LSTM {n}"], loss[f"URN {n}"], higher=False) for n in m.pairs]
    cause, evidence = authors_lstm_evidence(m.variants, {n: loss[f"URN {n}"] for n in m.pairs}, m.read)
    cause = cause if combine(parts)[0] is False else None  # a cause explains a miss only
    return Measured(
        "; ".join(f"{n}: LSTM {ms(loss[f'LSTM {n}'])} vs URN {ms(loss[f'URN {n}'])}" for n in m.pairs),
        parts, settle="" if cause else lstm_settle(loss, m.pairs, m.seeds, m.more, tried=bool(evidence),
                                                   whole=bool(authors_whole(m.variants, m.pairs, m.read)[1])),
        cause=cause, evidence=evidence)


def _below_10(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    error = m.at("error_rate")
    verdicts = [threshold(error[lab], PAPER_ERROR, above=False).holds for lab in m.labels]
    best = min(m.labels, key=lambda lab: error[lab].mean)
    holds = True if True in verdicts else (None if None in verdicts else False)
    return Measured(f"best {best}: {ms(error[best])}", holds)


def _larger_lstms(m: Measures) -> list[str]:
    return [f"LSTM {n}" for n in m.pairs if n > min(m.pairs)] or [f"LSTM {max(m.pairs)}"]


def _overfit(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    big = _larger_lstms(m)
    rises = {lab: [overfit_rise(_curve(r, "error_rate")) for r in m.seeds[lab]] for lab in big}
    flags = {lab: every_seed((v > 0 for v in rises[lab]), what="error at epoch 100 above its lowest")
             for lab in big}
    ours = "; ".join(f"{lab}: {flags[lab].direction} (rise {ms(Stat.of(rises[lab]))})" for lab in big)
    return Measured(ours,
                    list(flags.values()), rests=big, settle=m.more)


def _share(m: Measures, n: int) -> Stat:
    lstm = dict(zip(m.seeds[f"LSTM {n}"].seeds, m.seeds[f"LSTM {n}"].runs))
    values = []
    for seed, urn in zip(m.seeds[f"URN {n}"].seeds, m.seeds[f"URN {n}"].runs):
        if seed in lstm:
            s = share_lower_at_matched_x(_curve(urn, "train_loss"), _curve(urn, "error_rate"),
                                         _curve(lstm[seed], "train_loss"), _curve(lstm[seed], "error_rate"))
            values.append(math.nan if s is None else s)
    return Stat.of(values)


def _urn_errs_less(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    share = {n: _share(m, n) for n in m.pairs}
    return Measured(
        "; ".join(f"{n}: URN lower at {ms(share[n], 2)} of shared loss levels" if share[n].n
                  else f"{n}: no shared range" for n in m.pairs),
        [threshold(share[n], SHARE) for n in m.pairs], settle=m.more)


def _low_at_one(run: Run) -> float:
    curves = zip(_curve(run, "error_rate"), _curve(run, "train_loss"))
    at_one = [e for e, tl in curves if tl >= PAPER_URN32_LOSS]
    return min(at_one) if at_one else math.nan


def _urn32(m: Measures) -> Measured | None:
    if 32 not in m.pairs:
        return None
    stat = m.seeds["URN 32"].stat(_low_at_one)
    never = f"; {stat.missing} seeds never at training loss >= {PAPER_URN32_LOSS:g}" if stat.missing else ""
    ours = (f"lowest error at training loss >= {PAPER_URN32_LOSS:g}: {ms(stat)}{never}" if stat.n
            else f"training loss never >= {PAPER_URN32_LOSS:g} after epoch 1")
    settle = ("not the loss's scale: sec. 2 says the token losses are summed ('which we sum for each "
              "position'), but the authors' code (GU-CLASP/unitary-recurrent-network) divides their sum by "
              "the number of tokens, per symbol as here. The paper shows one run: "
              f"{more_seeds(m.seeds, ['URN 32'], 7)} would show whether a single run can reach 0.4 at this "
              "loss")
    decision = threshold(stat, PAPER_URN32_ERROR, above=False, name="URN 32") if stat.n else None
    cause, evidence = setting_evidence(m.seeds["URN 32"], m.variants)
    settle = "" if cause == "setting" else settle  # the variants found the cause: nothing left to settle
    return Measured(ours, decision, rests=["URN 32"], direction="" if stat.n else ours, settle=settle,
                    cause=cause, evidence=evidence)


def setting_evidence(book: Seeds, variants: dict[str, Seeds]) -> tuple[str | None, str]:
    """The cause of a Fig. 2c miss from the URN 32 variants trained as the authors' code does: ``setting``
    when some variant reaches error < 0.4 at training loss >= 1 on significantly more seeds than the book's
    runs (:func:`urnlib.rules.rates`, Fisher's exact test), with every URN 32 variant's count as the
    evidence (the other models' variants are other claims'); ``(None, "")`` without one (the claim keeps its
    cause)."""
    def reached(seeds: Seeds) -> tuple[int, int]:
        values = [v for v in (_low_at_one(r) for r in seeds) if not math.isnan(v)]
        return int(sum(v <= PAPER_URN32_ERROR for v in values)), len(values)

    found = {label: reached(s) for label, s in variants.items() if len(s) and label.startswith("URN 32,")}
    if not found:
        return None, ""
    k0, n0 = reached(book)
    decided = {label: rates(k, n, k0, n0, names=(label, "the book's URN 32"))
               for label, (k, n) in found.items()}
    text = "; ".join(f"{label}: {k} of {n} seeds below {PAPER_URN32_ERROR} at training loss >= "
                     f"{PAPER_URN32_LOSS:g} (against the book's {k0} of {n0}: "
                     + ("more, Fisher's exact test at 5%" if decided[label].holds else
                        "not decided at these seeds" if decided[label].holds is None else "fewer") + ")"
                     for label, (k, n) in found.items())
    return ("setting" if any(d.holds for d in decided.values()) else None), text


def _largest_fall(run: Run) -> float:
    return max(0.0, float(np.max(-np.diff(_curve(run, "error_rate")), initial=0.0)))


def _smoother(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    drops = {lab: m.seeds[lab].stat(_largest_fall) for lab in m.labels}
    return Measured("; ".join(f"{lab}: {ms(d, 2)}" for lab, d in drops.items()),
                    [compare(drops[f"URN {n}"], drops[f"LSTM {n}"], higher=False) for n in m.pairs],
                    settle=m.more)


def _less_overfit(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    parts, texts = [], []
    for n in m.pairs:
        for key, what in (("test_loss", "test loss"), ("error_rate", "error rate")):
            u, lo = (m.seeds[f"{fam} {n}"].stat(lambda r, key=key: overfit_rise(_curve(r, key)))
                     for fam in ("URN", "LSTM"))
            parts.append(compare(u, lo, higher=False))
            texts.append(f"{n}, {what}: URN {ms(u)} vs LSTM {ms(lo)}")
    return Measured("rise at epoch 100 above the lowest: " + "; ".join(texts), parts, settle=m.more)


def _families(m: Measures) -> dict[str, list[str]]:
    return {fam: [lab for lab in m.labels if lab.startswith(fam)] for fam in ("URN", "LSTM")}


def _unseen_errs(m: Measures) -> Measured | None:
    if not m.pairs:
        return None
    unseen, seen = m.unseen(), m.seen()
    if not any(s.n for s in unseen.values()):  # the test language has no length beyond the training one
        return Measured(f"no unseen length in the test set (needs test_k > train_k, here {m.train_k})", None)
    fams = _families(m)
    errs = {fam: every_seed((v > 0 for lab in labs for v in unseen[lab].values),
                            what="errs on unseen lengths") for fam, labs in fams.items()}
    fit = every_seed(v == 0 for lab in m.labels for v in seen[lab].values)  # "model the training data well"
    ours = (f"{fit.direction.replace('the property', 'no error on seen lengths').replace('seeds', 'runs')}; "
            + "; ".join(f"{fam}: {errs[fam].direction.replace('seeds', 'runs')}" for fam in fams) + "; "
            + "; ".join(f"{lab} unseen {ms(unseen[lab], 2)}" for lab in m.labels))
    return Measured(ours, [fit, *errs.values()])


def _lstm_unseen(m: Measures) -> Measured | None:
    unseen = m.unseen() if m.pairs else {}
    if not any(s.n for s in unseen.values()):
        return None
    pooled = {fam: Stat.of(v for lab in labs for v in unseen[lab].values)
              for fam, labs in _families(m).items()}
    return Measured(
        f"all sizes: LSTM {ms(pooled['LSTM'], 2)} vs URN {ms(pooled['URN'], 2)}; "
        + "; ".join(f"{n}: LSTM {ms(unseen[f'LSTM {n}'], 2)} vs URN {ms(unseen[f'URN {n}'], 2)}"
                    for n in m.pairs),
        compare(pooled["LSTM"], pooled["URN"], higher=False, names=("LSTM", "URN")), settle=m.more)


def _with_size(m: Measures) -> Measured | None:
    unseen = m.unseen() if len(m.pairs) > 1 else {}
    if not any(s.n for s in unseen.values()):
        return None
    small, large = min(m.pairs), max(m.pairs)
    return Measured(
        f"URN {ms(unseen[f'URN {small}'], 2)} -> {ms(unseen[f'URN {large}'], 2)}; "
        f"LSTM {ms(unseen[f'LSTM {small}'], 2)} -> {ms(unseen[f'LSTM {large}'], 2)} "
        f"({small} -> {large} units)",
        [compare(unseen[f"URN {large}"], unseen[f"URN {small}"], higher=False),  # URN: lower error
         compare(unseen[f"LSTM {large}"], unseen[f"LSTM {small}"], higher=True)],  # LSTM: higher
        settle=m.more)


SPECS = [
    Spec("paper 001 Table 1", "parameter counts of the cross-serial models (V = 10)",
         "Table 1: Number of parameters for cross-dependency pattern models",
         "LSTM 7314/2738/1218, URN 5290/1370/370 (32/16/8 units)", "check",
         lambda m: f"equal, counted on modules built with V = 10 (LSTM embedding {m.lstm_embedding})",
         "- (not trained)", _table1),
    Spec("paper 001 Fig. 2a",
         "LSTMs make better per-symbol guesses (lower test loss) than URNs, across the board",
         "We see that LSTM models generally make better guesses than URNs, across the board.",
         "LSTM lower", "beats", "test loss LSTM < URN at every size", FINAL, _lstm_lower),
    Spec("paper 001 Fig. 2b", "the best models reach less than 10% full-string error on the test set",
         "The best models can achieve less then ten percent error rate on average on the test set.",
         f"< {PAPER_ERROR:.2f}", "vs-number", f"error rate <= {PAPER_ERROR:.2f} for some model", FINAL,
         _below_10),
    Spec("paper 001 Fig. 2b", "the larger LSTMs overfit: their error rate goes back up",
         "However, the LSTM models with a larger number of units exhibit overfitting.", "overfitting",
         "every-seed",
         "error rate at epoch 100 above its lowest over epochs 1-100, every LSTM above the smallest",
         CURVE, _overfit),
    Spec("paper 001 Fig. 2c", "at a given training loss, URNs tend to have lower error rates than LSTMs",
         "The URN models tend to achieve lower error rates for this task, even though they do less well from "
         "a generative language modelling perspective.", "URN lower", "vs-number",
         "share of the training-loss levels both reach where the URN's error is lower (seed against seed) > "
         f'{SHARE} ("tend to": more often than not) at every size', CURVE, _urn_errs_less),
    Spec("paper 001 Fig. 2c",
         "the 32-unit URN gets below 0.4 error while its training loss is still as high as 1",
         "For instance, the 32-unit URN is able to obtain an error rate below 0.4 with a training loss as "
         "high as 1.", f"< {PAPER_URN32_ERROR} at training loss {PAPER_URN32_LOSS:g}", "vs-number",
         f"per seed, the lowest error rate of an epoch with training loss >= {PAPER_URN32_LOSS:g} (nats per "
         f"symbol) <= {PAPER_URN32_ERROR}", CURVE, _urn32),
    Spec("paper 001 Fig. 2c", "URNs' error rate falls smoothly; LSTMs' drops sharply",
         "In general, the URNs provide a smoother decrease in error rate as they learn the language.",
         "URN smoother", "beats",
         "largest one-epoch fall of the error rate (epochs 1-100) URN < LSTM at every size", CURVE,
         _smoother),
    Spec("paper 001 sec. 5", "URNs are less prone to overfitting than LSTMs",
         "Additionally, the URN appears to be less prone to overfitting, on both tasks.",
         "URN less prone to overfitting", "beats",
         "the rise of the test loss and of the error rate at epoch 100 above their lowest (epochs 1-100), "
         "URN below LSTM at every size", CURVE, _less_overfit),
    Spec("paper 001 sec. 3.1",
         "both architectures fit the training lengths but err on longer, unseen strings",
         "They can model the training data well, but produce incorrect patterns in some cases on strings of "
         "any greater length than the samples in the training corpus.", "errors on unseen lengths",
         "every-seed",
         "every run errs on no seen length and on some unseen length, per architecture", FINAL, _unseen_errs),
    Spec("paper 001 Fig. 2d", "LSTMs do better than URNs on lengths unseen in training",
         "We see here that the LSTMs tend to do better overall than the URNs for lengths unseen in the "
         "training data.", "LSTM better overall", "beats",
         'mean unseen-length error over every size\'s runs ("overall") LSTM < URN', FINAL, _lstm_unseen),
    Spec("paper 001 Fig. 2d", "on unseen lengths URNs improve with more units while LSTMs get worse",
         "However, the LSTMs do worse when the number of units increases, while the URNs do better as that "
         "number increases, thanks to a lack of overfitting.", "URN better, LSTM worse with size", "beats",
         "mean unseen-length error lower for the largest URN than the smallest, higher for the largest LSTM "
         "than the smallest", FINAL, _with_size),
]
