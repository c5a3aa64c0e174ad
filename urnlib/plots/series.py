"""How one series of a figure is drawn: a line, or the seeds' values through seaborn's estimators.

A series is given as numbers, in one of two forms:

* ``(x, y)``: one line;
* :class:`SeedCurves`: each seed's values, over epochs 1, 2, ... or over x values of the seed's own (``x=``:
  attractor counts, pattern lengths, training losses). Drawn by ``seaborn.lineplot`` from the seeds' values
  in long form (:meth:`SeedCurves.frame`): the mean over the seeds at each x with a band of ± one standard
  deviation (``errorbar="sd"``, cut to the measure's range: :func:`sd_within`), or bars at each x
  (``bars=True``). Where seeds stopped at different epochs (early stopping), one thin line per seed
  (``units="seed", estimator=None``) and the mean only over the epochs every seed reached, so that the mean
  never jumps where it stops averaging a seed; with ``each=True``, each seed's line and no estimate.

A band and a seed's line never leave the measure's range (``bounds``: accuracy in [0, 1], a count or a loss
non-negative): a mean ± one standard deviation of values near a bound would otherwise cross it (an accuracy of
1.2, a negative n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

__all__ = ["SeedCurves", "Series", "Bounds", "NON_NEGATIVE", "UNIT", "clip", "sd_within", "draw_series",
           "dodge"]

#: a measure's range: (lowest, highest), None for no limit on that side
Bounds = tuple[Union[float, None], Union[float, None]]
#: losses, perplexities, error rates, counts: every measure of the papers' curves
NON_NEGATIVE: Bounds = (0.0, None)
#: accuracies and error rates as fractions
UNIT: Bounds = (0.0, 1.0)
#: the look of the thin line of one seed, next to its series' mean
SEED_LINE = {"linewidth": 0.7, "alpha": 0.45}


class SeedCurves:
    """Each seed's values of one series: one value per epoch from epoch 1 (a seed that stopped early has a
    shorter curve), or one per x of the seed's own.

    Args:
        curves: one sequence of values per seed (e.g. ``[run.column("train_loss") for run in seeds]``).
        x: one sequence of x values per seed, as long as its curve (``None``: epochs 1, 2, ...); the seeds'
            x may differ (a bucket only some seeds fill): each x is averaged over the seeds that have it.
        each: draw each seed's line (the series' width and look) and no mean.
    """

    def __init__(self, curves: Sequence[Sequence[float]], x: Sequence[Sequence[float]] | None = None,
                 each: bool = False):
        self.each = each
        self.curves = tuple(np.asarray(c, dtype=float) for c in curves)
        if not self.curves or any(c.ndim != 1 or c.size == 0 for c in self.curves):
            raise ValueError("SeedCurves needs one non-empty curve per seed, got "
                             f"{[np.shape(c) for c in self.curves] or 'none'}")
        self.x = None if x is None else tuple(np.asarray(v, dtype=float) for v in x)
        if self.x is not None and [v.shape for v in self.x] != [c.shape for c in self.curves]:
            raise ValueError(f"SeedCurves: x has {[v.size for v in self.x]} values per seed, the curves "
                             f"{[c.size for c in self.curves]}")

    def __repr__(self) -> str:
        return f"SeedCurves({len(self.curves)} seeds, points {[c.size for c in self.curves]})"

    @property
    def ragged(self) -> bool:
        """Whether the seeds stopped at different epochs (curves over epochs of different lengths)."""
        return self.x is None and len({c.size for c in self.curves}) > 1

    @property
    def common(self) -> int:
        """The epochs every seed reached."""
        return min(c.size for c in self.curves)

    def frame(self, bounds: Bounds | None = None) -> pd.DataFrame:
        """The seeds' values in long form, one row per seed and x: columns ``x``, ``y`` (cut to ``bounds``)
        and ``seed`` (its position), what ``seaborn.lineplot`` aggregates."""
        xs = self.x or tuple(np.arange(1, c.size + 1, dtype=float) for c in self.curves)
        return pd.DataFrame({"x": np.concatenate(xs), "y": clip(np.concatenate(self.curves), bounds),
                             "seed": np.repeat(np.arange(len(self.curves)), [c.size for c in self.curves])})


#: one series of a figure, in any of the forms of the module's docstring
Series = Union[tuple, SeedCurves]


def clip(values, bounds: Bounds | None) -> np.ndarray:
    """``values`` limited to ``bounds`` (``None``: as they are)."""
    values = np.asarray(values, dtype=float)
    if bounds is None:
        return values
    low, high = bounds
    return np.clip(values, -np.inf if low is None else low, np.inf if high is None else high)


def sd_within(bounds: Bounds | None):
    """seaborn's ``errorbar`` for the seeds' spread: ``"sd"`` (the mean ± one sample standard deviation over
    the seeds at an x; none for one seed), cut to ``bounds`` (a function of the values, as seaborn takes)."""
    if bounds is None:
        return "sd"

    def interval(values) -> tuple[float, float]:
        values = np.asarray(values, dtype=float)
        half = values.std(ddof=1) if values.size > 1 else 0.0
        low, high = clip([values.mean() - half, values.mean() + half], bounds)
        return float(low), float(high)

    return interval


def dodge(count: int, spread: float) -> np.ndarray:
    """Sideways shifts of ``count`` series' points, evenly over ``[-spread, spread]``, so that series with
    equal values (many at an accuracy of 1) stay apart; 0 for one series."""
    return np.linspace(-spread, spread, count) if count > 1 else np.zeros(count)


def _seeds(ax: Axes, label: str, series: SeedCurves, style: dict, bounds, shift: float, bars: bool,
           band_alpha: float, **line) -> Line2D:
    """Draw :class:`SeedCurves` with seaborn (see the module's docstring); returns the mean's line."""
    data = series.frame(bounds).assign(x=lambda f: f["x"] + shift)
    look = {"color": style["color"], "linestyle": style.get("linestyle", "-"),
            "markeredgewidth": 0}  # seaborn rims its markers in white: a 3 pt marker would all but vanish
    if series.each:  # every seed's own line, the first named in legends
        before = len(ax.get_lines())
        sns.lineplot(data=data, x="x", y="y", units="seed", estimator=None, ax=ax, legend=False,
                     label="_nolegend_", marker=style.get("marker"), **look, **line)
        first = ax.get_lines()[before]
        first.set_label(label)
        return first
    if series.ragged:  # each seed thin, to its own last epoch; the mean where every seed is averaged
        sns.lineplot(data=data, x="x", y="y", units="seed", estimator=None, ax=ax, legend=False,
                     label="_nolegend_", **look, **SEED_LINE)
        data = data[data["x"] <= series.common + shift]
        line = {**line, "linewidth": line["linewidth"] * 1.15}
    errorbar = None if series.ragged else sd_within(bounds)
    bar = ({"err_style": "bars", "err_kws": {"capsize": 2, "linewidth": line["linewidth"] * 0.8}} if bars
           else {"err_kws": {"alpha": band_alpha, "linewidth": 0}})
    before = len(ax.get_lines())
    sns.lineplot(data=data, x="x", y="y", errorbar=errorbar, ax=ax, legend=False, label=label,
                 marker=style.get("marker"), **look, **line, **bar)
    return next(drawn for drawn in ax.get_lines()[before:] if drawn.get_label() == label)


def draw_series(ax: Axes, label: str, series: Series, look: dict, *, bounds: Bounds | None = NON_NEGATIVE,
                markers: bool = False, linewidth: float = 1.3, markersize: float = 3.0, shift: float = 0.0,
                band_alpha: float = 0.18, bars: bool = False) -> Line2D:
    """Draw one series (see the module's docstring) in ``look`` (matplotlib's ``color``, ``marker``,
    ``linestyle``); returns its labelled line (the mean's).

    Args:
        bounds: the measure's range: the band and the seeds' lines are clipped to it (``None``: not clipped).
        markers: draw the points of the labelled line.
        shift: added to every x (see :func:`dodge`).
        bars: the seeds' spread as error bars at each x (seaborn's ``err_style="bars"``), not a band.
    """
    style = dict(look)
    if not markers:
        style.pop("marker", None)
    if isinstance(series, SeedCurves):
        return _seeds(ax, label, series, style, bounds, shift, bars, band_alpha, linewidth=linewidth,
                      markersize=markersize)
    if len(series) != 2:
        raise ValueError(f"series {label!r}: give (x, y) or SeedCurves (each seed's values: seaborn draws "
                         f"the mean and its band), got a tuple of {len(series)}")
    (line,) = ax.plot(np.asarray(series[0], dtype=float) + shift, series[1], label=label,
                      linewidth=linewidth, markersize=markersize, **style)
    return line
