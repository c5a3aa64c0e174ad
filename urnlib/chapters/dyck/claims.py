"""The claims of the Dyck chapter, declared (:mod:`urnlib.declare`) and decided on every seed
(:mod:`urnlib.rules`) under each training setting: paper 000's in :data:`SPECS_000` (the claims on one model
once per model, :class:`~urnlib.chapters.dyck.claims_shared.Each`), paper 001's in
:data:`urnlib.chapters.dyck.claims_001.SPECS_001`, each with a small measure on one setting's runs.

Both papers train 100 epochs, so every measure is read at epoch 100
(:func:`~urnlib.chapters.dyck.report.final_row`), or over epochs 1-100 where a claim speaks of the training
curve; Tables 3 and 4 read the stored weights, which are epoch 100's. The papers select no epoch, and no claim
reads a run at an epoch chosen on its test measures (where the 8-unit LSTM's test curve turns up is itself
paper 001's claim). Each claim quotes the sentence it decides; its tolerance comes from the paper's words or
numbers and the seeds' spread, never from a number of ours. A claim resting on a model that did not train
(fewer than 100 epochs, or closing-bracket accuracy not clearly above the 20% majority class) is inconclusive
with cause ``untrained``. :func:`chapter_claims` decides them under every setting; a claim missed under one
setting and reproduced under another is missed because of that ``setting``.
"""

from __future__ import annotations

import numpy as np

from urnlib import rules
from urnlib.chapters.dyck.claims_001 import SPECS_001, table2_claim
from urnlib.chapters.dyck.claims_shared import (CURVE, FINAL, WEIGHTS, Each, Measures, decide, fmt,
                                                retrain)
from urnlib.chapters.dyck.report import MAJORITY_ACCURACY, PAPER_TABLE4, final_row, table3, table4
from urnlib.claims import Claim, across_settings
from urnlib.declare import Measured, Spec
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "chapter_claims", "table2_claim", "mask_evidence", "SPECS_000", "FINAL", "CURVE",
           "WEIGHTS", "SHARED_MASK", "SEQUENCE_MASK"]

#: the k-TURN variant whose parameter-dropout mask every symbol shares (experiment.VARIANTS)
SHARED_MASK = "shared parameter mask"
SEQUENCE_MASK = "sequence parameter mask"
#: the k-TURN's variants whose parameter-dropout mask keeps an exact inverse pair inverse, in words
MASK_WORDS = {SHARED_MASK: "one parameter-dropout mask per batch shared by every symbol",
              SEQUENCE_MASK: "the authors' mask: one per sequence, shared by its symbols"}
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
    units = [n for n in units if f"URN {n}" in view and f"LSTM {n}" in view]
    m = Measures(view, read, min_total, units, turn, [v for v in variants if v in view])
    return decide(setting, [*SPECS_000, *(SPECS_001 if units else [])], m)


def _fall_of(m: Measures, run) -> float:
    k, acc = m.buckets(run)
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


def _tables(m: Measures, lab: str) -> list[np.ndarray]:
    """Table 4's effects (ours) of each seed: the ten single brackets, then the five matching pairs."""
    if lab not in m.tables:
        m.tables[lab] = m.view[lab].each(lambda run: table4(run)[0]["effect (ours)"].to_numpy())
    return m.tables[lab]


def _no_fall(m: Measures, lab: str) -> Measured:
    drop = m.view[lab].stat(lambda run: _fall_of(m, run))
    return Measured(f"worst accuracy at >= 3 attractors minus mean at 0-2: {fmt(drop)}",
                    rules.threshold(drop, 0.0, name="worst at >= 3 minus mean at 0-2"), rests=[lab])


def _improves(m: Measures, lab: str) -> Measured:
    slope = m.view[lab].stat(lambda run: _slope(*m.buckets(run)))
    return Measured(f"least-squares slope of accuracy per attractor {fmt(slope, 4)}",
                    rules.threshold(slope, 0.0, name="slope"), rests=[lab],
                    settle=f"train {lab} with the authors' TypedFlow code on 3 seeds and read Fig. 3 at "
                    f"epoch 100 ({retrain(m.view[lab], seeds=3)})")


def _declines(m: Measures) -> Measured:
    slope = m.view["Arbitrary"].stat(lambda run: _slope(*m.buckets(run)))
    return Measured(f"least-squares slope per attractor {fmt(slope, 4)}",
                    rules.threshold(slope, 0.0, above=False, name="slope"), rests=["Arbitrary"])


def _above_majority(m: Measures) -> Measured:
    lowest = m.view["Arbitrary"].stat(lambda run: m.buckets(run)[1].min())
    return Measured(f"lowest bucket accuracy {fmt(lowest)}",
                    rules.threshold(lowest, MAJORITY_ACCURACY, name="lowest bucket"), rests=["Arbitrary"])


def _full_lower(m: Measures) -> Measured:
    full, arb = (m.view[lab].stat(lambda run: m.read(run)["test_loss"]) for lab in ("Full URN", "Arbitrary"))
    return Measured(f"{fmt(full, 4)} vs {fmt(arb, 4)}",
                    rules.compare(full, arb, higher=False, names=("Full URN", "Arbitrary")),
                    rests=["Full URN", "Arbitrary"],
                    settle="train both for longer than 100 epochs on 3 seeds ("
                    + retrain(m.view["Full URN"], m.view["Arbitrary"], seeds=3, per="per 100 epochs") + ")")


def _pair_effects(m: Measures, lab: str) -> tuple[Stat, Stat]:
    """The largest matching-pair effect and the mean single effect of Table 4 (ours), over the seeds."""
    tables = _tables(m, lab)
    return Stat.of(t[10:].max() for t in tables), Stat.of(t[:10].mean() for t in tables)


def mask_evidence(m: Measures, lab: str) -> tuple[str | None, str]:
    """The cause of a pair-effect miss from the k-TURN trained with a parameter-dropout mask that every symbol
    shares (:data:`MASK_WORDS`: per batch, the variant ``shared parameter mask``; per sequence, as the
    authors' code draws it, ``sequence parameter mask``): ``setting`` where such a variant's largest pair
    effect is at most the paper's (the claim's own rule), ``authors`` where the authors' own mask decides it
    above the paper's (the miss stands with their mask: that decision outranks the other variant's), with
    each variant's numbers as the evidence; ``(None, "")`` without such runs (the claim keeps its cause)."""
    found = [name for name in MASK_WORDS if f"{lab}, {name}" in m.view] if lab == m.turn else []
    texts, cause, theirs = [], None, None
    for name in found:
        pair_max, single = _pair_effects(m, f"{lab}, {name}")
        decided = rules.threshold(pair_max, PAPER_PAIR_EFFECT, above=False, name="largest pair effect")
        cause = "setting" if decided.holds else cause
        theirs = decided.holds if name == SEQUENCE_MASK else theirs
        undecided = (f"; not decided at {pair_max.n} seeds, about {decided.seeds_needed} would decide it"
                     if decided.holds is None and decided.seeds_needed else "")
        texts.append(f"the {lab}, {name} ({MASK_WORDS[name]}; the book's: one per symbol): largest pair "
                     f"effect {fmt(pair_max)}; mean single effect {fmt(single, 2)} ({decided.direction}"
                     f"{undecided})")
    return ("authors" if theirs is False else cause), "; ".join(texts)


def _pairs_identity(m: Measures, lab: str) -> Measured:
    pair_max, single = _pair_effects(m, lab)
    cause, evidence = mask_evidence(m, lab)
    return Measured(
        f"largest pair effect {fmt(pair_max)}; mean single effect {fmt(single, 2)}",
        rules.threshold(pair_max, PAPER_PAIR_EFFECT, above=False, name="largest pair effect"), rests=[lab],
        cause=cause, evidence=evidence,
        settle=f"train the {lab} past 100 epochs on 3 seeds, until its loss on a validation set drawn like "
        "the training data stops falling (never the test loss), and read Table 4 again; or the authors' code "
        f"on 3 seeds ({retrain(m.view[lab], seeds=3, per='per 100 epochs')})")


def _singles_alike(m: Measures, lab: str) -> Measured:
    spread = Stat.of((t[:10].max() - t[:10].min()) / t[:10].mean() for t in _tables(m, lab))
    return Measured(f"(max - min) / mean of the single effects {fmt(spread)}",
                    rules.threshold(spread, PAPER_SINGLE_SPREAD, above=False, name="spread"), rests=[lab],
                    settle=f"train the {lab} on 3 more seeds ({retrain(m.view[lab], seeds=3)})")


def _planes(m: Measures, lab: str) -> Measured:
    gap = m.view[lab].stat(_plane_gap)
    return Measured(f"mean matched-angle (diagonal) similarity minus mean of the others {fmt(gap, 2)}",
                    rules.paired(gap, name="diagonal minus the others"), rests=[lab])


NO_FALL = Spec(
    "paper 000 Fig. 3", "{lab}: accuracy does not fall as attractors grow",
    "By contrast, the URN models remain accurate as the number of attractors grows.", "remains accurate",
    "vs-number", lambda m: f"that difference > 0 (buckets with >= {m.min_total} predictions)", FINAL,
    _no_fall)
IMPROVES = Spec(
    "paper 000 Fig. 3", "{lab}: accuracy improves with the number of attractors",
    "Perhaps surprisingly, the URN improves in relation to the number of attractors.",
    "improves with attractors", "vs-number", "slope > 0", FINAL, _improves)

SPECS_000: list[Spec | Each] = [
    Each(lambda m: [m.turn, "Full URN"], (NO_FALL, IMPROVES)),
    Each(lambda m: m.variants, (NO_FALL,), variant=True),
    Spec("paper 000 Fig. 3", "arbitrary-embedding RNN: accuracy declines steadily with attractors",
         "However, it shows steadily decreasing accuracy as the number of attractors increases.",
         "steadily decreasing", "vs-number", "slope < 0", FINAL, _declines),
    Spec("paper 000 Fig. 3", "arbitrary-embedding RNN stays well above the 20% majority baseline up to 9 "
         "attractors",
         "Up to 9 attractors, it achieves performance that is well above a majority class baseline (20%).",
         "above 20%", "vs-number", "lowest bucket > 0.2", FINAL, _above_majority),
    Spec("paper 000 sec. 5", "Full URN reaches a lower validation loss than the arbitrary-embedding RNN",
         "The performance of the full URN is better over the long term and in general, with a validation "
         "loss of 1.47213 compared to 1.52914 for the arbitrary case.", "1.47213 vs 1.52914", "beats",
         "Full URN lower", FINAL, _full_lower),
    Each(lambda m: [m.turn], (
        Spec("paper 000 Table 4", "{lab}: matching pairs compose to nearly the identity (effect near 0)",
             "Such compositions are close to identity (table 4).", "pairs 0.06-0.07; single 13.98-14.85",
             "vs-number", f"largest pair effect <= the paper's largest, {PAPER_PAIR_EFFECT}", WEIGHTS,
             _pairs_identity),
        Spec("paper 000 Table 4", "{lab}: all single brackets have strikingly similar effects",
             "The average effect, and even the signatures of all embeddings are strikingly similar.",
             f"13.98-14.85 (spread {PAPER_SINGLE_SPREAD:.3f})", "vs-number",
             f"that spread <= the paper's, {PAPER_SINGLE_SPREAD:.3f}", WEIGHTS, _singles_alike),
        Spec("paper 000 Table 3",
             "{lab}: planes rotated by similar angles share coordinates (high similarity); planes rotated by "
             "different angles are closer to orthogonal",
             "We see in table 3 that the planes which undergo rotation by similar angles are far from "
             "orthogonal to each other— one pair even exhibits a similarity of 1.73.",
             "matched-angle similarities up to 1.73; others 0.2-1.35", "beats-paired", "difference > 0",
             WEIGHTS, _planes),
    )),
]


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
