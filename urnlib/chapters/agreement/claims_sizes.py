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

On Linzen et al.'s files a second trend tells the training set's **size** apart from its **distribution**
(the **pooled** trend, :func:`pooled_trends_of`): a share of each test file trains beside the validation
file's sentences, held apart from the sentences tested, at a quarter, a half and all of that pooled set. The
cause is then decided from both trends: ``data`` when, on either trend's line, every part improves and
reaches the paper's value within its training size; and the evidence names **the training distribution**
where, for a part, the pooled trend improves significantly more per doubling of the training sentences than
the other (the two lines' slopes compared in one least-squares fit with a term per trend, two-sided p below
:data:`urnlib.rules.LEVEL`), lies significantly above it at equal size (the same fit with one slope), or
reaches the paper's value where the other does not (:func:`compare_trends`). A claim whose trends show
neither stays ``open``, with both trends as its evidence.
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
from urnlib.trends import log2_trend

__all__ = ["PAPER_TRAIN", "Points", "Part", "Fit", "Compared", "trends_of", "pooled_trends_of", "sentences",
           "size_of", "parts", "fit_part", "compare_trends", "size_cause"]

#: paper 000 sec. 4: 90% of its 1.7 million sentences train
PAPER_TRAIN = PAPER_SENTENCES * 0.9
#: a model's trend: ``[(share of the chapter's training sentences, its runs)]``, by increasing share
Points = list[tuple[float, Seeds]]
#: the trends' names in a claim's evidence
PLAIN = "trend on the validation file's sentences"
POOLED = "pooled trend (a share of each test file trains, held apart from the sentences tested)"


def _subset(seeds: Seeds, wanted: set[int]) -> Seeds | None:
    kept = [(run, s) for run, s in zip(seeds.runs, seeds.seeds) if s in wanted]
    return Seeds(seeds.label, [r for r, _ in kept], [s for _, s in kept]) if kept else None


def trends_of(sizes: dict[str, dict[str, Seeds]], by_source: dict[str, dict[str, Seeds]],
              rate: float | None = None) -> dict[str, dict[str, Points]]:
    """``{source: {model: points}}`` of the size trend's groups (``sizes``: ``AgreementRuns.sizes``) at the
    chapter's learning rate (``rate``: at the second setting's, the groups trained at it), each model's points
    with the chapter's runs of the same seeds at share 1 (``by_source``: the chapter's runs at that rate)."""
    out: dict[str, dict[str, Points]] = {}
    for source, groups in sizes.items():
        models: dict[str, Points] = {}
        for seeds in groups.values():
            coords = coords_of(seeds.runs[0])
            if coords.get("pool") or coords.get("rate") != rate:
                continue  # the pooled trend's (pooled_trends_of), or another rate's
            models.setdefault(coords["model"], []).append((float(coords["size"]), seeds))
        for model, points in models.items():
            wanted = {s for _, seeds in points for s in seeds.seeds}
            full = by_source.get(source, {}).get(model)
            full = _subset(full, wanted) if full is not None else None
            out.setdefault(source, {})[model] = sorted(points + ([(1.0, full)] if full else []),
                                                       key=lambda p: p[0])
    return out


def pooled_trends_of(sizes: dict[str, dict[str, Seeds]]) -> dict[str, dict[str, Points]]:
    """``{source: {model: points}}`` of the pooled trend's groups (a ``pool`` coordinate), by increasing share
    of the pooled training sentences; none of the chapter's runs (they trained on no test file)."""
    out: dict[str, dict[str, Points]] = {}
    for source, groups in sizes.items():
        for seeds in groups.values():
            coords = coords_of(seeds.runs[0])
            if coords.get("pool") and not coords.get("rate"):
                point = (float(coords["size"]), seeds)
                out.setdefault(source, {}).setdefault(coords["model"], []).append(point)
    return {source: {model: sorted(points, key=lambda p: p[0]) for model, points in models.items()}
            for source, models in out.items()}


def size_of(share: float, seeds: Seeds) -> str:
    """A point's size in words: its runs' ``setting`` coordinate (``"1/4 of the sentences"``, ``"all pooled
    sentences"``, written by :func:`urnlib.chapters.agreement.sizes.size_words`), ``"the chapter's runs"`` for
    the chapter's own."""
    setting = coords_of(seeds.runs[0]).get("setting")
    if share == 1 and not coords_of(seeds.runs[0]).get("pool"):
        return "the chapter's runs"
    return str(setting or f"{share:g}x")


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
    """Fit ``part`` over every seed's run at every size of ``points`` (:func:`urnlib.trends.log2_trend`, the
    gap measured at the largest size's mean sentences); the text gives the measure per size (mean ± sd over
    seeds), the slope per doubling and how far the line would have to run to reach the paper's value (an
    extrapolation)."""
    stats = [part.measure(seeds) for _, seeds in points]
    sizes, y = _sizes_values(points, stats)
    shown = [f"{stat.mean_sd(3)} at {sentences(seeds):,.0f} sentences ({size_of(share, seeds)})"
             for (share, seeds), stat in zip(points, stats)]
    top_size = sentences(points[-1][1])
    room = math.log2(PAPER_TRAIN / top_size)
    head = f"{part.what} " + ", ".join(shown)
    line = log2_trend(sizes, y, target=part.target, higher=part.higher, room=room, top=top_size)
    if line is None:
        return Fit(math.nan, math.nan, math.nan, False, math.inf, room,
                   head + " (fewer than two sizes: no trend)")
    trend = f"; {line.slope:+.3g} per doubling of the training sentences (p = {line.pvalue:.2g}"
    if not line.improves:
        return Fit(line.slope, line.intercept, line.pvalue, False, line.need, room, head + trend + (
            ": significantly worse with more sentences)" if line.worse else ": no significant improvement)"))
    need = line.need
    reach = ("the paper's value already reached" if need == 0 else
             f"the paper's {part.target_text()} about {need:.1f} doublings beyond the largest size "
             f"({top_size * 2 ** need:,.0f} sentences) on the fitted line, an extrapolation")
    return Fit(line.slope, line.intercept, line.pvalue, True, need, room,
               head + trend + f"): {reach}; the paper trained on {room:.1f} doublings more")


def _sizes_values(points: Points, stats: list[Stat]) -> tuple[list[float], list[float]]:
    """``(training sentences, the part's value)`` of every seed's run at every size (``stats``: the part's
    measure of each point's seeds), NaN values left out."""
    sizes, y = [], []
    for (_, seeds), stat in zip(points, stats):
        for run, value in zip(seeds.runs, stat.values):
            if not math.isnan(value):
                sizes.append(float(run.final["data"]["train_examples"]))
                y.append(value)
    return sizes, y


def _values(points: Points, part: Part) -> tuple[list[float], list[float]]:
    """``(log2 of the training sentences, the part's value)`` of every seed's run at every size."""
    sizes, y = _sizes_values(points, [part.measure(seeds) for _, seeds in points])
    return [math.log2(n) for n in sizes], y


def _term(columns: list[list[float]], y: list[float]) -> tuple[float, float]:
    """The last coefficient of a least-squares fit of ``y`` on ``columns`` and its two-sided p-value (a t-test
    on the residuals' degrees of freedom); NaN where the fit has none to spare."""
    design, target = np.column_stack(columns), np.asarray(y, float)
    if len(target) <= design.shape[1] or np.linalg.matrix_rank(design) < design.shape[1]:
        return math.nan, math.nan
    beta, *_ = np.linalg.lstsq(design, target, rcond=None)
    df = len(target) - design.shape[1]
    sigma2 = float(np.sum((target - design @ beta) ** 2)) / df
    se = math.sqrt(sigma2 * float(np.linalg.inv(design.T @ design)[-1, -1]))
    if se == 0:
        return float(beta[-1]), (0.0 if beta[-1] else 1.0)
    return float(beta[-1]), float(2 * _stats.t.sf(abs(beta[-1] / se), df))


@dataclass(frozen=True)
class Compared:
    """A part's pooled trend against its trend on the validation file's sentences alone: how much more the
    pooled line improves per doubling (``steeper``, in the claim's favour when positive) and where it lies at
    equal size (``above``: one slope for both lines, the pooled line's offset in the claim's favour), each
    with its two-sided p-value; and whether only the pooled trend reaches the paper's value."""

    steeper: float
    steeper_p: float
    above: float
    above_p: float
    only_pooled: bool

    @property
    def distribution(self) -> bool:
        """The training distribution shows: a steeper line, a higher one at equal size (both in the claim's
        favour, p below :data:`urnlib.rules.LEVEL`), or the paper's value reached only with the pool."""
        steeper = self.steeper > 0 and self.steeper_p < rules.LEVEL
        return steeper or (self.above > 0 and self.above_p < rules.LEVEL) or self.only_pooled


def compare_trends(plain: Points, pooled: Points, part: Part,
                   fits: tuple[Fit, Fit] | None = None) -> Compared:
    """:class:`Compared` of ``part`` on the two trends (``fits``: their :func:`fit_part`, computed when not
    given): the slopes' difference from ``y = a + b x + c g + d x g`` (``g`` 1 on the pooled trend), the
    offset from ``y = a + b x + c g``, both signed so that positive is the claim's favour."""
    (x0, y0), (x1, y1) = _values(plain, part), _values(pooled, part)
    x, y, g = x0 + x1, y0 + y1, [0.0] * len(x0) + [1.0] * len(x1)
    ones, sign = [1.0] * len(x), 1 if part.higher else -1
    steeper, steeper_p = _term([ones, x, g, [a * b for a, b in zip(x, g)]], y)
    above, above_p = _term([ones, x, g], y)
    plain_fit, pooled_fit = fits or (fit_part(plain, part), fit_part(pooled, part))
    return Compared(sign * steeper, steeper_p, sign * above, above_p, pooled_fit.data and not plain_fit.data)


def _compared_text(part: Part, c: Compared) -> str:
    """The comparison in words, signed for the claim: "more"/"less" per doubling, "better"/"worse" at equal
    size."""
    steeper = (f"the pooled line improves {abs(c.steeper):.3g} {'more' if c.steeper >= 0 else 'less'} per "
               f"doubling than the other (p = {c.steeper_p:.2g})")
    above = (f"and lies {abs(c.above):.3g} {'better' if c.above >= 0 else 'worse'} at equal size (one slope "
             f"for both, p = {c.above_p:.2g})")
    only = ("; only the pooled trend reaches the paper's value within its training size" if c.only_pooled
            else "")
    return f"{part.what}: {steeper}, {above}{only}"


def size_cause(points: Points | None, claim_parts: list[Part], note: str = "",
               pooled: Points | None = None) -> tuple[str, str] | None:
    """``(cause, evidence)`` of a miss from a model's size trend and, where it has one, its pooled trend:
    ``data`` when on a trend's line every part improves with size and reaches the paper's value within the
    paper's training sentences, else ``open``; ``None`` without a trend (under two sizes). With both trends,
    the evidence gives both and, where :attr:`Compared.distribution` holds for a part, names the training
    distribution (:func:`compare_trends`). ``note`` opens the evidence (e.g. the trend's learning rate when
    the claim is another's)."""
    trends = {name: p for name, p in ((PLAIN, points), (POOLED, pooled)) if p and len(p) >= 2}
    if not trends:
        return None
    fits = {name: [fit_part(p, part) for part in claim_parts] for name, p in trends.items()}
    reached = [name for name, found in fits.items() if all(f.data for f in found)]
    cause = "data" if reached else "open"
    head = f"size trend ({len(next(iter(trends.values()))[-1][1])} seeds{note})"
    if list(trends) == [PLAIN]:  # the chapter's trend alone, as before the pool
        verdict = ("every part improves with the training sentences and reaches the paper's value within its "
                   "training size" if cause == "data" else
                   "the trend does not show the training size as the cause")
        return cause, f"{head}: " + "; ".join(f.text for f in fits[PLAIN]) + f". {verdict}"
    said = " ".join(f"{name[0].upper()}{name[1:]}: " + "; ".join(f.text for f in found) + "."
                    for name, found in fits.items())
    verdict = (f"On the {' and on the '.join(reached)}, every part improves with the training sentences and "
               "reaches the paper's value within its training size." if reached else
               "Neither trend shows the training data as the cause: on neither does every part improve and "
               "reach the paper's value within its training size.")
    return cause, f"{head}. {said} {verdict}" + (_distribution(points, pooled, claim_parts, fits)
                                                  if len(trends) == 2 else "")


def _distribution(points: Points, pooled: Points, claim_parts: list[Part], fits: dict[str, list[Fit]]) -> str:
    """What the two trends say of the training distribution (:func:`compare_trends`), part by part."""
    compared = [compare_trends(points, pooled, part, (a, b))
                for part, a, b in zip(claim_parts, fits[PLAIN], fits[POOLED])]
    shown = [part.what for part, c in zip(claim_parts, compared) if c.distribution]
    each = "; ".join(_compared_text(part, c) for part, c in zip(claim_parts, compared))
    if not shown:
        return f" No sign of the training distribution: {each}."
    return (f" The training distribution: {each} ({', '.join(shown)}: better with the test files' sentences "
            "than with the validation file's alone).")

