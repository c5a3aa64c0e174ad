"""The cause of an agreement claim's miss, decided from the training-size trend (:mod:`.sizes`, issue 50).

The size trend trains a model of the chapter again on other numbers of training sentences (a quarter and a
half of the real text's, two and four times the grammar's); with the chapter's own runs of the same seeds it
gives each claim's measure at each size (:func:`trends_of`). For a claim that misses, each part of its
measure (:func:`parts`: the test error for "well under 1%", the fitted change over attractors and the accuracy
on sentences with attractors for "does not drop") is fitted by least squares on log2 of the training
sentences, over every seed's run at every size (:func:`fit_part`):

* ``data``: every part improves with size (the slope in the claim's favour, two-sided p below
  :data:`urnlib.rules.LEVEL`) and its line reaches the paper's value (the claim's target) within the
  doublings from our largest size to the paper's 1.5 million training sentences (paper 000 sec. 4: 90% of
  1.7 million) - an extrapolation, and said to be one;
* ``open`` otherwise: the measure does not improve significantly with the training sentences, or its line
  would need more sentences than the paper had; the trend is the evidence either way.

A model without size runs gets no trend: its claims keep the chapter's cause (:func:`size_cause` returns
``None``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats as _stats

from urnlib import rules
from urnlib.chapters.agreement.claims_read import attractor_stat, by_attractors, fall
from urnlib.chapters.agreement.report_tables import PAPER_SENTENCES
from urnlib.seeds import Seeds, Stat, coords_of

__all__ = ["PAPER_TRAIN", "Points", "Part", "Fit", "trends_of", "sentences", "size_of", "parts", "fit_part",
           "size_cause"]

#: paper 000 sec. 4: 90% of its 1.7 million sentences train
PAPER_TRAIN = PAPER_SENTENCES * 0.9
#: a model's trend: ``[(share of the chapter's training sentences, its runs)]``, by increasing share
Points = list[tuple[float, Seeds]]


def _subset(seeds: Seeds, wanted: set[int]) -> Seeds | None:
    kept = [(run, s) for run, s in zip(seeds.runs, seeds.seeds) if s in wanted]
    return Seeds(seeds.label, [r for r, _ in kept], [s for _, s in kept]) if kept else None


def trends_of(sizes: dict[str, dict[str, Seeds]], by_source: dict[str, dict[str, Seeds]]
              ) -> dict[str, dict[str, Points]]:
    """``{source: {model: points}}`` of the size trend's groups (``sizes``: ``AgreementRuns.sizes``), each
    model's points with the chapter's runs of the same seeds at share 1 (``by_source``: the chapter's runs at
    the trend's learning rate)."""
    out: dict[str, dict[str, Points]] = {}
    for source, groups in sizes.items():
        models: dict[str, Points] = {}
        for seeds in groups.values():
            coords = coords_of(seeds.runs[0])
            models.setdefault(coords["model"], []).append((float(coords["size"]), seeds))
        for model, points in models.items():
            wanted = {s for _, seeds in points for s in seeds.seeds}
            full = by_source.get(source, {}).get(model)
            full = _subset(full, wanted) if full is not None else None
            out.setdefault(source, {})[model] = sorted(points + ([(1.0, full)] if full else []),
                                                       key=lambda p: p[0])
    return out


def size_of(share: float, seeds: Seeds) -> str:
    """A point's size in words: its runs' ``setting`` coordinate (``"1/4 of the sentences"``, written by
    :func:`urnlib.chapters.agreement.sizes.size_words`), ``"the chapter's runs"`` for the chapter's own."""
    if share == 1:
        return "the chapter's runs"
    return str(coords_of(seeds.runs[0]).get("setting") or f"{share:g}x")


def sentences(seeds: Seeds) -> float:
    """The mean number of training sentences of a group's runs (their data statistics)."""
    return float(np.mean([run.final["data"]["train_examples"] for run in seeds]))


@dataclass(frozen=True)
class Part:
    """One part of a claim's measure: what it is, its value per seed of a group, the paper's value (the
    target), and whether higher is better."""

    what: str
    measure: Callable[[Seeds], Stat]
    target: float
    higher: bool

    def target_text(self) -> str:
        return f"{self.target:.3g}"


def parts(claim: str, *, read, min_total: int, start: int, base: float) -> list[Part]:
    """The parts of ``claim``'s measure (``"flat"``, ``"error"``, ``"beats"``, ``"declines"``) at the epoch
    ``read`` picks: the fitted change over attractors from ``start`` (target 0: no drop), the accuracy on
    sentences with attractors (target ``base``: the best of the majority class and the heuristics), the test
    error (target the paper's 1%)."""
    change = Part(f"the fitted change from {start} attractor{'s' if start != 1 else ''}",
                  lambda s: fall(by_attractors(s, min_total, read), start), 0.0, True)
    attractors = Part("the accuracy on sentences with attractors", lambda s: attractor_stat(s, read), base,
                      True)
    error = Part("the test error", lambda s: s.stat(lambda run: 1 - read(run)["accuracy"]), 0.01, False)
    decline = Part(change.what, change.measure, 0.0, False)
    return {"flat": [change, attractors], "error": [error], "beats": [attractors],
            "declines": [decline]}[claim]


@dataclass(frozen=True)
class Fit:
    """A part's least-squares line on log2 of the training sentences, and what it says."""

    slope: float  # per doubling, in the measure's units
    intercept: float  # the line's value at 1 sentence (log2 = 0)
    pvalue: float
    improves: bool  # the slope in the claim's favour, significantly
    need: float  # doublings beyond the largest size to the target on the line (0: there; inf: never)
    room: float  # doublings from the largest size to the paper's training sentences
    text: str

    @property
    def data(self) -> bool:
        return self.improves and self.need <= self.room


def fit_part(points: Points, part: Part) -> Fit:
    """Fit ``part`` over every seed's run at every size of ``points``; the text gives the measure per size
    (mean ± sd over seeds), the slope per doubling and how far the line would have to run to reach the
    paper's value (an extrapolation)."""
    x, y, shown = [], [], []
    for share, seeds in points:
        stat = part.measure(seeds)
        for run, value in zip(seeds.runs, stat.values):
            if not math.isnan(value):
                x.append(math.log2(run.final["data"]["train_examples"]))
                y.append(value)
        shown.append(f"{stat.mean_sd(3)} at {sentences(seeds):,.0f} sentences ({size_of(share, seeds)})")
    top_size = sentences(points[-1][1])
    room = math.log2(PAPER_TRAIN / top_size)
    head = f"{part.what} " + ", ".join(shown)
    if len(set(x)) < 2:
        return Fit(math.nan, math.nan, math.nan, False, math.inf, room,
                   head + " (fewer than two sizes: no trend)")
    line = _stats.linregress(x, y)
    top = line.intercept + line.slope * math.log2(top_size)  # the line at the largest size
    sign = 1 if part.higher else -1
    improves = bool(sign * line.slope > 0 and line.pvalue < rules.LEVEL)
    gap = sign * (part.target - top)  # > 0: still short of the target
    need = 0.0 if gap <= 0 else (gap / (sign * line.slope) if sign * line.slope > 0 else math.inf)
    trend = f"; {line.slope:+.3g} per doubling of the training sentences (p = {line.pvalue:.2g}"
    if not improves:
        worse = sign * line.slope < 0 and line.pvalue < rules.LEVEL
        return Fit(line.slope, line.intercept, line.pvalue, False, need, room, head + trend + (
            ": significantly worse with more sentences)" if worse else ": no significant improvement)"))
    reach = ("the paper's value already reached" if need == 0 else
             f"the paper's {part.target_text()} about {need:.1f} doublings beyond the largest size "
             f"({top_size * 2 ** need:,.0f} sentences) on the fitted line, an extrapolation")
    return Fit(line.slope, line.intercept, line.pvalue, True, need, room,
               head + trend + f"): {reach}; the paper trained on {room:.1f} doublings more")


def size_cause(points: Points | None, claim_parts: list[Part], note: str = "") -> tuple[str, str] | None:
    """``(cause, evidence)`` of a miss from a model's size trend: ``data`` when every part improves with size
    and reaches the paper's value within the paper's training sentences on its line, else ``open``;
    ``None`` without a trend (under two sizes). ``note`` opens the evidence (e.g. the trend's learning
    rate when the claim is another's)."""
    if not points or len(points) < 2:
        return None
    fits = [fit_part(points, part) for part in claim_parts]
    cause = "data" if all(f.data for f in fits) else "open"
    verdict = ("every part improves with the training sentences and reaches the paper's value within its "
               "training size" if cause == "data" else
               "the trend does not show the training size as the cause")
    seeds = len(points[-1][1])
    return cause, (f"size trend ({seeds} seeds{note}): " + "; ".join(f.text for f in fits) + f". {verdict}")
