"""A measure's trend on log2 of what grows (training sentences, epochs), and how far its line would have to
run to reach the paper's value: the evidence behind a ``data`` or ``scale`` cause (issue 50).

A claim missed for want of data or compute is explained only where more of it would close the gap. The
measure is fitted by least squares on log2 of the size, over every seed's value at every size
(:func:`log2_trend`); the line *improves* where its slope is in the claim's favour at two-sided p below
:data:`urnlib.rules.LEVEL`, and it *reaches* the paper's value where it does so within ``room`` doublings
beyond the largest size measured (the paper's own size). Anything beyond the sizes measured is an
extrapolation, and the text says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from scipy import stats as _stats

from urnlib import rules

__all__ = ["LogTrend", "log2_trend"]


@dataclass(frozen=True)
class LogTrend:
    """A least-squares line of a measure on log2 of the size, and what it says about the paper's value."""

    slope: float  #: per doubling, in the measure's units
    intercept: float  #: the line at size 1 (log2 = 0)
    pvalue: float  #: two-sided, of the slope
    improves: bool  #: the slope in the claim's favour, significantly
    worse: bool  #: the slope against the claim, significantly
    need: float  #: doublings beyond the largest size to the target on the line (0: there; inf: never)
    room: float  #: doublings from the largest size to the paper's

    @property
    def reaches(self) -> bool:
        """Improves, and reaches the paper's value within the paper's size on the line."""
        return self.improves and self.need <= self.room

    def words(self, unit: str, target: str, top: float, what: str = "size",
              theirs: str = "the paper's size is") -> str:
        """The slope and where the line meets the target, in words (``unit``: what doubles, e.g. "training
        sentences"; ``target``: the paper's value as printed; ``top``: the largest size measured, a ``what``;
        ``theirs``: the paper's size, with its verb)."""
        head = f"{self.slope:+.3g} per doubling of the {unit} (p = {self.pvalue:.2g}"
        if not self.improves:
            return head + (": significantly worse)" if self.worse else ": no significant improvement)")
        reach = ("the paper's value already reached" if self.need == 0 else
                 f"the paper's {target} about {self.need:.1f} doublings beyond the largest {what} "
                 f"({top * 2 ** self.need:,.0f}) on the fitted line, an extrapolation")
        return head + f"): {reach}; {theirs} {self.room:.1f} doublings beyond ours"


def log2_trend(sizes: Sequence[float], values: Sequence[float], *, target: float, higher: bool,
               room: float, top: float | None = None) -> LogTrend | None:
    """The trend of ``values`` (one per run) on log2 of ``sizes`` (the run's size), against the paper's
    ``target`` (``higher``: more is better), with ``room`` doublings from ``top`` (the size the gap is
    measured at; default the largest) to the paper's. ``None`` under two distinct sizes (no trend); NaN values
    are left out."""
    pairs = [(math.log2(s), float(v)) for s, v in zip(sizes, values, strict=True) if not math.isnan(float(v))]
    if len({x for x, _ in pairs}) < 2:
        return None
    x, y = zip(*pairs)
    line = _stats.linregress(x, y)
    sign = 1 if higher else -1
    improves = bool(sign * line.slope > 0 and line.pvalue < rules.LEVEL)
    worse = bool(sign * line.slope < 0 and line.pvalue < rules.LEVEL)
    at = line.intercept + line.slope * (max(x) if top is None else math.log2(top))  # the line at ``top``
    gap = sign * (target - at)  # > 0: still short of the target
    need = 0.0 if gap <= 0 else (gap / (sign * line.slope) if sign * line.slope > 0 else math.inf)
    return LogTrend(float(line.slope), float(line.intercept), float(line.pvalue), improves, worse, need, room)
