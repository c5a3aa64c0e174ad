"""The claims of the Dyck chapter, decided on every seed (:mod:`urnlib.rules`) under each training setting.

Every measure is taken per run at its best validation epoch (lowest test loss) unless the claim speaks of the
whole training curve; a claim holds when the seeds' mean is on its side by more than the seeds' spread, and
is "not testable here" (cause ``noise``) when the spread covers the difference. :func:`claims` decides one
setting's claims; :func:`chapter_claims` decides them under every setting and gives each miss its cause: a
claim missed under one setting and reproduced under another is missed because of that ``setting``.
"""

from __future__ import annotations

import numpy as np

from urnlib import rules
from urnlib.claims import Claim, across_settings, claim
from urnlib.reports.common import largest_rise, share_lower_at_matched_x
from urnlib.reports.dyck import max_error_per_epoch, run_accuracy, table2, table3, table4
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "chapter_claims", "table2_claim"]

CHAPTER = "dyck"


def _fmt(stat: Stat, digits: int = 3) -> str:
    return stat.text(digits)


def _buckets(run, min_total: int) -> tuple[np.ndarray, np.ndarray]:
    s = run_accuracy(run, min_total)
    return s["count"], s["accuracy"]


def _cause(holds: bool | None) -> str | None:
    return "noise" if holds is None else None


def claims(view: dict[str, Seeds], *, setting: str, turn: str, units: list[int], min_total: int,
           variants: list[str] = ()) -> list[Claim]:
    """The claims of one setting's runs (``{model label: Seeds}``); statements start with ``[setting]``.

    Args:
        turn: label of the truncated model (e.g. "3-TURN").
        units: sizes of the paper 001 comparison (claimed only where both URN and LSTM were trained).
        min_total: attractor buckets with fewer scored predictions (on a seed) are left out of the rules.
        variants: labels of the k-TURN's variants in ``view``; the "does not fall" claim is checked on each.
    """
    out = _paper000(view, setting, turn, min_total, [v for v in variants if v in view])
    units = [n for n in units if f"URN {n}" in view and f"LSTM {n}" in view]
    if units:
        out += _paper001(view, setting, units, min_total)
    return out


def _add(out: list, setting: str, source: str, statement: str, paper, ours, rule: str, holds, seeds: int,
         partly: bool = False, cause: str | None = None) -> None:
    out.append(
        claim(CHAPTER, source, f"[{setting}] {statement}", paper, ours, rule, holds, partly, seeds=seeds,
              cause=cause or _cause(holds))
    )


def _paper000(view, setting, turn, min_total, variants) -> list[Claim]:
    out: list[Claim] = []
    for lab in [turn, "Full URN", *variants]:
        seeds = view[lab]
        drop = seeds.stat(lambda run: _fall(run, min_total))  # worst at >= 3 minus mean at 0-2
        holds = rules.at_least(drop, -0.02)
        variant = lab not in (turn, "Full URN")
        _add(out, setting, "paper 000 Fig. 3" + (" (our variant)" if variant else ""),
             f"{lab}: accuracy does not fall as attractors grow", "near perfect, not declining",
             f"worst accuracy at >= 3 attractors minus mean at 0-2: {_fmt(drop)}",
             f"that difference >= -0.02 ({rules.THRESHOLD_RULE}; buckets with >= {min_total} predictions)",
             holds, len(seeds))
        if variant:
            continue
        lowest = seeds.stat(lambda run: _buckets(run, min_total)[1].min())
        _add(out, setting, "paper 000 Fig. 3", f"{lab}: near-perfect accuracy at every attractor count",
             "near perfect", f"lowest bucket accuracy {_fmt(lowest)}",
             f"lowest bucket >= 0.95 ({rules.THRESHOLD_RULE})", rules.at_least(lowest, 0.95), len(seeds))
    arb = view["Arbitrary"]
    slope = arb.stat(lambda run: _slope(*_buckets(run, min_total)))
    _add(out, setting, "paper 000 Fig. 3",
         "arbitrary-embedding RNN: accuracy declines steadily with attractors", "steadily decreasing",
         f"least-squares slope per attractor {_fmt(slope, 4)}", f"slope < 0 ({rules.THRESHOLD_RULE})",
         rules.positive(Stat.of(-v for v in slope.values)), len(arb))
    lowest = arb.stat(lambda run: _buckets(run, min_total)[1].min())
    _add(out, setting, "paper 000 Fig. 3",
         "arbitrary-embedding RNN stays well above the 20% majority baseline up to 9 attractors", "above 20%",
         f"lowest bucket accuracy {_fmt(lowest)}", f"lowest bucket > 0.2 ({rules.THRESHOLD_RULE})",
         rules.positive(Stat.of(v - 0.2 for v in lowest.values)), len(arb))
    full, arbl = view["Full URN"].best("test_loss"), arb.best("test_loss")
    _add(out, setting, "paper 000 sec. 5",
         "Full URN reaches a lower validation loss than the arbitrary-embedding RNN", "1.47213 vs 1.52914",
         f"{_fmt(full, 4)} vs {_fmt(arbl, 4)} (best epoch)", f"Full URN lower ({rules.BEATS_RULE})",
         rules.beats(full, arbl, higher=False), len(arb))

    seeds = view[turn]
    tables = seeds.each(lambda run: table4(run)[0]["effect (ours)"].to_numpy())
    pair_max = Stat.of(t[10:].max() for t in tables)
    ratio = Stat.of(t[:10].min() / t[10:].max() for t in tables)
    single = Stat.of(t[:10].mean() for t in tables)
    pairs, big = rules.at_most(pair_max, 0.1), rules.at_least(ratio, 10)
    holds, partly = rules.combine([pairs, big])
    _add(out, setting, "paper 000 Table 4",
         f"{turn}: matching pairs have an effect near 0, single brackets a large one",
         "pairs 0.06-0.07; single 13.98-14.85",
         f"largest pair effect {_fmt(pair_max)}; mean single effect {_fmt(single, 2)}; "
         f"smallest single / largest pair {_fmt(ratio, 1)}",
         f"largest pair effect <= 0.1 and smallest single > 10x it ({rules.THRESHOLD_RULE})", holds,
         len(seeds), partly=partly)
    spread = Stat.of((t[:10].max() - t[:10].min()) / t[:10].mean() for t in tables)
    _add(out, setting, "paper 000 Table 4", f"{turn}: all single brackets have strikingly similar effects",
         "13.98-14.85 (spread 6%)", f"(max - min) / mean of the single effects {_fmt(spread)}",
         f"(max - min) / mean <= 0.1 ({rules.THRESHOLD_RULE})", rules.at_most(spread, 0.1), len(seeds))
    gap = seeds.stat(_plane_gap)
    _add(out, setting, "paper 000 Table 3",
         f"{turn}: planes rotated by similar angles share coordinates (high similarity); planes rotated by "
         "different angles are closer to orthogonal",
         "matched-angle similarities up to 1.73; others 0.2-1.35",
         f"mean matched-angle (diagonal) similarity minus mean of the others {_fmt(gap, 2)}",
         f"difference > 0 ({rules.PAIRED_RULE})", rules.positive(gap), len(seeds))
    return out


def _fall(run, min_total: int) -> float:
    k, acc = _buckets(run, min_total)
    if not (k <= 2).any() or not (k >= 3).any():
        return float("nan")
    return float(acc[k >= 3].min() - acc[k <= 2].mean())


def _slope(k, acc) -> float:
    return float(np.polyfit(k, acc, 1)[0]) if len(k) > 1 else float("nan")


def _plane_gap(run) -> float:
    t3 = table3(run).to_numpy()
    n = min(t3.shape)
    if t3.size < 2 or n == 0:  # one plane each (a 1-TURN): nothing to compare
        return float("nan")
    diag = np.array([t3[i, i] for i in range(n)])
    return float(diag.mean() - t3[~np.eye(*t3.shape, dtype=bool)].mean())


def table2_claim(lstm_embedding: int) -> Claim:
    """Paper 001 Table 2 (counted on the modules; no training, no seeds)."""
    t2 = table2(lstm_embedding)
    equal = bool(
        (t2["LSTM (paper)"] == t2["LSTM (ours)"]).all() and (t2["URN (paper)"] == t2["URN (ours)"]).all()
    )
    return claim(
        CHAPTER,
        "paper 001 Table 2",
        "parameter counts of the Dyck models (V = 12)",
        "LSTM 6300/2204/924, URN 6348/1644/444 (32/16/8 units)",
        "LSTM "
        + "/".join(str(v) for v in t2["LSTM (ours)"])
        + ", URN "
        + "/".join(str(v) for v in t2["URN (ours)"]),
        f"equal, counted on the modules (LSTM embedding {lstm_embedding})",
        equal,
    )


def _paper001(view, setting, units, min_total) -> list[Claim]:
    out: list[Claim] = []
    urn, lstm = ({n: view[f"{fam} {n}"] for n in units} for fam in ("URN", "LSTM"))
    n_seeds = min(min(len(urn[n]), len(lstm[n])) for n in units)
    pairs = {n: list(zip(urn[n], lstm[n])) for n in units}  # seed by seed: the same data on both sides

    loss = {n: (urn[n].best("test_loss"), lstm[n].best("test_loss")) for n in units}
    holds, partly = rules.combine(rules.beats(lo, u, higher=False) for u, lo in loss.values())
    _add(out, setting, "paper 001 Fig. 3a", "LSTMs reach a lower test loss than URNs of the same size",
         "LSTM better guesses",
         "; ".join(f"{n}: LSTM {_fmt(lo)} vs URN {_fmt(u)}" for n, (u, lo) in loss.items()),
         f"LSTM lower at every size, best epochs ({rules.BEATS_RULE})", holds, n_seeds, partly)

    rise = {
        n: Stat.of(
            largest_rise(b.column("test_loss")) - largest_rise(a.column("test_loss")) for a, b in pairs[n]
        )
        for n in units
    }
    holds, partly = rules.combine(rules.at_least(r, 0) for r in rise.values())
    _add(out, setting, "paper 001 Fig. 3a",
         "URN training is monotonous; the LSTM can get worse for a few epochs", "URN uniformly monotonous",
         "; ".join(f"{n}: LSTM's largest rise minus URN's {_fmt(r)}" for n, r in rise.items()),
         "largest rise of the test loss above its running minimum, whole curve, URN <= LSTM at every size "
         f"({rules.THRESHOLD_RULE})", holds, n_seeds, partly)

    if 8 in units:
        overfit = lstm[8].stat(lambda run: run.column("test_loss")[-1] - min(run.column("test_loss")))
        best_at = lstm[8].stat(lambda run: int(np.argmin(run.column("test_loss"))) + 1)
        _add(out, setting, "paper 001 Fig. 3a",
             "the 8-unit LSTM overfits: its test loss rises after epoch 30", "rises after epoch 30",
             f"last minus best loss {_fmt(overfit)}; best epoch {_fmt(best_at, 0)}",
             f"last-epoch loss > best + 0.01 ({rules.THRESHOLD_RULE})",
             rules.positive(Stat.of(v - 0.01 for v in overfit.values)), len(lstm[8]))

    for n in units:
        gap = urn[n].stat(lambda run: _low_minus_largest(run, min_total))
        _add(out, setting, "paper 001 Fig. 3b", f"URN {n}: weakest at few attractors, better at many",
             "errors concentrated at low attractor counts",
             f"mean error at 0-1 attractors minus error at the largest bucket {_fmt(gap)}",
             f"difference > 0 ({rules.PAIRED_RULE})", rules.positive(gap), len(urn[n]))

    worst = {
        n: lstm[n].each(lambda run: int(_buckets(run, min_total)[0][np.argmin(_buckets(run, min_total)[1])]))
        for n in units
    }
    holds, partly = rules.combine(rules.on_every_seed(2 <= w <= 5 for w in ws) for ws in worst.values())
    _add(out, setting, "paper 001 Fig. 3b", "LSTMs do worst at a moderate number of attractors (3 to 4)",
         "worst at 3-4 attractors", "; ".join(f"LSTM {n}: worst at {ws}" for n, ws in worst.items()),
         f"the worst bucket is 2 to 5 attractors, every size, {rules.EVERY_SEED_RULE}", holds, n_seeds,
         partly)

    share = {
        n: Stat.of(
            float(np.mean(max_error_per_epoch(a, min_total) < max_error_per_epoch(b, min_total)))
            for a, b in pairs[n]
        )
        for n in units
    }
    holds, partly = rules.combine(rules.at_least(s, 0.9) for s in share.values())
    _add(out, setting, "paper 001 Fig. 3c",
         "a URN has a lower maximum error rate than the LSTM of the same size throughout training",
         "consistently lower",
         "; ".join(f"{n}: share of epochs URN lower {_fmt(s, 2)}" for n, s in share.items()),
         f"URN lower at >= 90% of epochs, every size, whole curve ({rules.THRESHOLD_RULE})", holds, n_seeds,
         partly)

    first = {n: urn[n].stat(lambda run: max_error_per_epoch(run, min_total)[0]) for n in units}
    holds, partly = rules.combine(rules.positive(Stat.of(0.8 - v for v in f.values)) for f in first.values())
    _add(out, setting, "paper 001 Fig. 3c",
         "URNs beat the majority baseline (80% error) within the first epoch", "within the first epoch",
         "; ".join(f"URN {n}: {_fmt(f)}" for n, f in first.items()),
         f"max error rate after epoch 1 < 0.8 at every size ({rules.THRESHOLD_RULE})", holds, n_seeds, partly)

    matched = {n: Stat.of(_matched(a, b, min_total) for a, b in pairs[n]) for n in units}
    parts = [rules.at_least(m, 0.8) if m.n else None for m in matched.values()]
    holds, partly = rules.combine(parts)
    _add(
        out,
        setting,
        "paper 001 Fig. 3d",
        "at equal training loss, URNs have a lower maximum error rate than LSTMs",
        "URN better across the board",
        "; ".join(
            f"{n}: share of the common loss range URN lower {_fmt(m, 2)}"
            if m.n
            else f"{n}: no common loss range"
            for n, m in matched.items()
        ),
        f"URN lower at >= 80% of the shared training-loss range, every size ({rules.THRESHOLD_RULE})",
        holds,
        n_seeds,
        partly,
        cause=None if all(m.n for m in matched.values()) else "open",
    )
    return out


def _low_minus_largest(run, min_total: int) -> float:
    k, acc = _buckets(run, min_total)
    if not (k <= 1).any():
        return float("nan")
    return float((1 - acc[k <= 1]).mean() - (1 - acc[-1]))


def _matched(urn_run, lstm_run, min_total: int) -> float:
    m = share_lower_at_matched_x(
        urn_run.column("train_loss"),
        max_error_per_epoch(urn_run, min_total),
        lstm_run.column("train_loss"),
        max_error_per_epoch(lstm_run, min_total),
    )
    return float("nan") if m is None else m


def chapter_claims(views: dict[str, dict[str, Seeds]], **kwargs) -> list[Claim]:
    """The claims under every setting (``views``: ``{setting: {model label: Seeds}}``) and Table 2's; a claim
    missed under one setting and reproduced under another gets the cause ``setting``.

    Args:
        **kwargs: ``turn``, ``units``, ``min_total``, ``variants`` and ``lstm_embedding``.
    """
    lstm_embedding = kwargs.pop("lstm_embedding")
    by_setting = {s: claims(view, setting=s, **kwargs) for s, view in views.items()}
    return [*across_settings(by_setting), table2_claim(lstm_embedding)]
