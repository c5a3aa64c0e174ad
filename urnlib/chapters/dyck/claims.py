"""The claims of the Dyck chapter, decided on every seed (:mod:`urnlib.rules`) under each training setting.

Both papers train 100 epochs, so every measure is read at epoch 100
(:func:`~urnlib.chapters.dyck.report.final_row`), or over epochs 1-100 where a claim speaks of the training
curve; Tables 3 and 4 read the stored weights, which are epoch 100's. The epoch of the lowest test loss is
selected on test data (the papers have no validation set): where reading it gives another verdict, the claim's
``ours`` gives that reading and its verdict too (a retrain selecting on validation data comes later). Each
claim quotes the sentence it decides; its tolerance comes from the paper's words or numbers and the seeds'
spread, never from a number of ours. A claim resting on a model that did not train (fewer than 100 epochs, or
closing-bracket accuracy not clearly above the 20% majority class) is inconclusive with cause ``untrained``.
:func:`chapter_claims` decides them under every setting; a claim missed under one setting and reproduced under
another is missed because of that ``setting``.
"""

from __future__ import annotations


import numpy as np

from urnlib import rules
from urnlib.claims import Claim, across_settings
from urnlib.chapters.dyck.report import MAJORITY_ACCURACY, PAPER_TABLE4, final_row, table3, table4
from urnlib.chapters.dyck.claims_001 import (CURVE, FINAL, WEIGHTS, retrain, ClaimList, buckets, fmt,
                                            paper001, table2_claim)
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "chapter_claims", "table2_claim", "FINAL", "CURVE", "WEIGHTS"]

PAPER_PAIR_EFFECT = max(v for k, v in PAPER_TABLE4.items() if len(k) == 2)  # 0.07
_SINGLES = [v for k, v in PAPER_TABLE4.items() if len(k) == 1]
PAPER_SINGLE_SPREAD = (max(_SINGLES) - min(_SINGLES)) / float(np.mean(_SINGLES))  # 0.061


def claims(
    view: dict[str, Seeds],
    *,
    setting: str,
    turn: str,
    units: list[int],
    min_total: int,
    variants: list[str] = (),
    read=final_row,
) -> list[Claim]:
    """The claims of one setting's runs (``{model label: Seeds}``); statements start with ``[setting]``.

    Args:
        turn: label of the truncated model (e.g. "3-TURN").
        units: sizes of the paper 001 comparison (claimed only where both URN and LSTM were trained).
        min_total: attractor buckets with fewer scored predictions (on a seed) are left out of the rules.
        variants: labels of the k-TURN's variants in ``view`` (our extensions of the "remain accurate" claim).
        read: the history row a claim on one epoch reads (:func:`~urnlib.chapters.dyck.report.final_row`).
    """
    out = ClaimList(view, setting, read)
    _paper000(out, turn, min_total, [v for v in variants if v in view])
    units = [n for n in units if f"URN {n}" in view and f"LSTM {n}" in view]
    if units:
        paper001(out, units, min_total)
    return list(out)


def _paper000(out: ClaimList, turn, min_total, variants) -> None:
    view, read = out.view, out.read
    for lab in [turn, "Full URN", *variants]:
        seeds = view[lab]
        variant = lab not in (turn, "Full URN")
        drop = seeds.stat(lambda run: _fall(run, min_total, read))
        out.add(
            "paper 000 Fig. 3" + (" (our variant)" if variant else ""),
            f"{lab}: accuracy does not fall as attractors grow",
            "remains accurate",
            f"worst accuracy at >= 3 attractors minus mean at 0-2: {fmt(drop)}",
            f"that difference > 0 ({rules.THRESHOLD_RULE}; buckets with >= {min_total} predictions)",
            rules.threshold(drop, 0.0, name="worst at >= 3 minus mean at 0-2"),
            quote="By contrast, the URN models remain accurate as the number of attractors grows.",
            epoch=FINAL,
            rests=[lab],
            extension=variant,
        )
        if variant:
            continue
        slope = seeds.stat(lambda run: _slope(*buckets(run, min_total, read)))
        out.add(
            "paper 000 Fig. 3",
            f"{lab}: accuracy improves with the number of attractors",
            "improves with attractors",
            f"least-squares slope of accuracy per attractor {fmt(slope, 4)}",
            f"slope > 0 ({rules.THRESHOLD_RULE})",
            rules.threshold(slope, 0.0, name="slope"),
            quote="Perhaps surprisingly, the URN improves in relation to the number of attractors.",
            epoch=FINAL,
            rests=[lab],
            settle=f"train {lab} with the authors' TypedFlow code on 3 seeds and read Fig. 3 at epoch 100 "
            f"({retrain(view[lab], seeds=3)})",
        )
    arb = view["Arbitrary"]
    slope = arb.stat(lambda run: _slope(*buckets(run, min_total, read)))
    out.add(
        "paper 000 Fig. 3",
        "arbitrary-embedding RNN: accuracy declines steadily with attractors",
        "steadily decreasing",
        f"least-squares slope per attractor {fmt(slope, 4)}",
        f"slope < 0 ({rules.THRESHOLD_RULE})",
        rules.threshold(slope, 0.0, above=False, name="slope"),
        quote="However, it shows steadily decreasing accuracy as the number of attractors increases.",
        epoch=FINAL,
        rests=["Arbitrary"],
    )
    lowest = arb.stat(lambda run: buckets(run, min_total, read)[1].min())
    out.add(
        "paper 000 Fig. 3",
        "arbitrary-embedding RNN stays well above the 20% majority baseline up to 9 attractors",
        "above 20%",
        f"lowest bucket accuracy {fmt(lowest)}",
        f"lowest bucket > 0.2 ({rules.THRESHOLD_RULE})",
        rules.threshold(lowest, MAJORITY_ACCURACY, name="lowest bucket"),
        quote="Up to 9 attractors, it achieves performance that is well above a majority class baseline "
        "(20%).",
        epoch=FINAL,
        rests=["Arbitrary"],
    )
    full = view["Full URN"].stat(lambda run: read(run)["test_loss"])
    arbl = arb.stat(lambda run: read(run)["test_loss"])
    out.add(
        "paper 000 sec. 5",
        "Full URN reaches a lower validation loss than the arbitrary-embedding RNN",
        "1.47213 vs 1.52914",
        f"{fmt(full, 4)} vs {fmt(arbl, 4)}",
        f"Full URN lower ({rules.BEATS_RULE})",
        rules.compare(full, arbl, higher=False, names=("Full URN", "Arbitrary")),
        quote="The performance of the full URN is better over the long term and in general, with a "
        "validation loss of 1.47213 compared to 1.52914 for the arbitrary case.",
        epoch=FINAL,
        rests=["Full URN", "Arbitrary"],
        settle="train both for longer than 100 epochs on 3 seeds ("
        + retrain(view["Full URN"], arb, seeds=3, per="per 100 epochs") + ")",
    )

    seeds = view[turn]
    tables = seeds.each(lambda run: table4(run)[0]["effect (ours)"].to_numpy())
    pair_max = Stat.of(t[10:].max() for t in tables)
    single = Stat.of(t[:10].mean() for t in tables)
    out.add(
        "paper 000 Table 4",
        f"{turn}: matching pairs compose to nearly the identity (effect near 0)",
        "pairs 0.06-0.07; single 13.98-14.85",
        f"largest pair effect {fmt(pair_max)}; mean single effect {fmt(single, 2)}",
        f"largest pair effect <= the paper's largest, {PAPER_PAIR_EFFECT} ({rules.THRESHOLD_RULE})",
        rules.threshold(pair_max, PAPER_PAIR_EFFECT, above=False, name="largest pair effect"),
        quote="Such compositions are close to identity (table 4).",
        epoch=WEIGHTS,
        rests=[turn],
        settle=f"train the {turn} past 100 epochs on 3 seeds, until its loss on a validation set drawn like "
        f"the training data stops falling (never the test loss), and read Table 4 again; or the authors' "
        f"code on 3 seeds ({retrain(seeds, seeds=3, per='per 100 epochs')})",
    )
    spread = Stat.of((t[:10].max() - t[:10].min()) / t[:10].mean() for t in tables)
    out.add(
        "paper 000 Table 4",
        f"{turn}: all single brackets have strikingly similar effects",
        f"13.98-14.85 (spread {PAPER_SINGLE_SPREAD:.3f})",
        f"(max - min) / mean of the single effects {fmt(spread)}",
        f"that spread <= the paper's, {PAPER_SINGLE_SPREAD:.3f} ({rules.THRESHOLD_RULE})",
        rules.threshold(spread, PAPER_SINGLE_SPREAD, above=False, name="spread"),
        quote="The average effect, and even the signatures of all embeddings are strikingly similar.",
        epoch=WEIGHTS,
        rests=[turn],
        settle=f"train the {turn} on 3 more seeds ({retrain(seeds, seeds=3)})",
    )
    gap = seeds.stat(_plane_gap)
    out.add(
        "paper 000 Table 3",
        f"{turn}: planes rotated by similar angles share coordinates (high similarity); planes rotated by "
        "different angles are closer to orthogonal",
        "matched-angle similarities up to 1.73; others 0.2-1.35",
        f"mean matched-angle (diagonal) similarity minus mean of the others {fmt(gap, 2)}",
        f"difference > 0 ({rules.PAIRED_RULE})",
        rules.paired(gap, name="diagonal minus the others"),
        quote="We see in table 3 that the planes which undergo rotation by similar angles are far from "
        "orthogonal to each other— one pair even exhibits a similarity of 1.73.",
        epoch=WEIGHTS,
        rests=[turn],
    )


def _fall(run, min_total: int, read) -> float:
    k, acc = buckets(run, min_total, read)
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


def chapter_claims(views: dict[str, dict[str, Seeds]], **kwargs) -> list[Claim]:
    """The claims under every setting (``views``: ``{setting: {model label: Seeds}}``) and Table 2's, read at
    epoch 100 (the papers' final epoch; they select none); a claim missed under one setting and reproduced
    under another gets the cause ``setting``.

    Args:
        **kwargs: ``turn``, ``units``, ``min_total``, ``variants`` and ``lstm_embedding``.
    """
    lstm_embedding = kwargs.pop("lstm_embedding")
    by_setting = {s: claims(view, setting=s, **kwargs) for s, view in views.items()}
    return [*across_settings(by_setting), table2_claim(lstm_embedding)]
