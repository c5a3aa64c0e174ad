"""How one series of a figure is drawn: a line, a mean with the seeds' band, or each seed's curve.

A series is given as numbers, in one of three forms:

* ``(x, y)``: one line;
* ``(x, mean, low, high)``: the mean over seeds with a band (e.g. mean ± one standard deviation,
  :func:`urnlib.seeds.band`);
* :class:`SeedCurves`: each seed's curve over epochs 1, 2, ... . Drawn as the mean with a ± one standard
  deviation band while every seed has the same epochs; where seeds stopped at different epochs (early
  stopping), as one thin line per seed and the mean only over the epochs every seed reached, so that the
  mean never jumps where it stops averaging a seed.

A band and a seed's line never leave the measure's range (``bounds``: accuracy in [0, 1], a count or a loss
non-negative): a mean ± one standard deviation of values near a bound would otherwise cross it (an accuracy of
1.2, a negative n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

__all__ = ["SeedCurves", "Series", "Bounds", "NON_NEGATIVE", "UNIT", "clip", "draw_series", "dodge"]

#: a measure's range: (lowest, highest), None for no limit on that side
Bounds = tuple[Union[float, None], Union[float, None]]
#: losses, perplexities, error rates, counts: every measure of the papers' curves
NON_NEGATIVE: Bounds = (0.0, None)
#: accuracies and error rates as fractions
UNIT: Bounds = (0.0, 1.0)
#: the look of the thin line of one seed, next to its series' mean
SEED_LINE = {"linewidth": 0.7, "alpha": 0.45}


class SeedCurves:
    """Each seed's curve of one series, one value per epoch from epoch 1 (a seed that stopped early has a
    shorter curve).

    Args:
        curves: one sequence of values per seed (e.g. ``[run.column("train_loss") for run in seeds]``).
    """

    def __init__(self, curves: Sequence[Sequence[float]]):
        self.curves = tuple(np.asarray(c, dtype=float) for c in curves)
        if not self.curves or any(c.ndim != 1 or c.size == 0 for c in self.curves):
            raise ValueError("SeedCurves needs one non-empty curve per seed, got "
                             f"{[np.shape(c) for c in self.curves] or 'none'}")

    def __repr__(self) -> str:
        return f"SeedCurves({len(self.curves)} seeds, epochs {[c.size for c in self.curves]})"

    @property
    def ragged(self) -> bool:
        """Whether the seeds stopped at different epochs."""
        return len({c.size for c in self.curves}) > 1

    @property
    def common(self) -> int:
        """The epochs every seed reached."""
        return min(c.size for c in self.curves)

    def mean(self) -> tuple[np.ndarray, np.ndarray]:
        """``(epochs, mean)`` over the seeds, on the epochs every seed reached."""
        n = self.common
        return np.arange(1, n + 1), np.mean([c[:n] for c in self.curves], axis=0)

    def band(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(epochs, mean, mean - sd, mean + sd)`` on the epochs every seed reached (sample sd; 0 for one
        seed)."""
        x, mean = self.mean()
        stacked = np.array([c[: self.common] for c in self.curves])
        sd = stacked.std(axis=0, ddof=1) if len(stacked) > 1 else np.zeros_like(mean)
        return x, mean, mean - sd, mean + sd


#: one series of a figure, in any of the forms of the module's docstring
Series = Union[tuple, SeedCurves]


def clip(values, bounds: Bounds | None) -> np.ndarray:
    """``values`` limited to ``bounds`` (``None``: as they are)."""
    values = np.asarray(values, dtype=float)
    if bounds is None:
        return values
    low, high = bounds
    return np.clip(values, -np.inf if low is None else low, np.inf if high is None else high)


def dodge(count: int, spread: float) -> np.ndarray:
    """Sideways shifts of ``count`` series' points, evenly over ``[-spread, spread]``, so that series with
    equal values (many at an accuracy of 1) stay apart; 0 for one series."""
    return np.linspace(-spread, spread, count) if count > 1 else np.zeros(count)


def draw_series(ax: Axes, label: str, series: Series, look: dict, *, bounds: Bounds | None = NON_NEGATIVE,
                markers: bool = False, linewidth: float = 1.3, markersize: float = 3.0, shift: float = 0.0,
                band_alpha: float = 0.18) -> Line2D:
    """Draw one series (see the module's docstring) in ``look`` (matplotlib's ``color``, ``marker``,
    ``linestyle``); returns its labelled line (the mean's).

    Args:
        bounds: the measure's range: the band and the seeds' lines are clipped to it (``None``: not clipped).
        markers: draw the points of the labelled line.
        shift: added to every x (see :func:`dodge`).
    """
    style = dict(look)
    if not markers:
        style.pop("marker", None)
    if isinstance(series, SeedCurves):
        if series.ragged:  # each seed thin, to its own last epoch; the mean where every seed is averaged
            for curve in series.curves:
                ax.plot(np.arange(1, curve.size + 1) + shift, clip(curve, bounds), color=style["color"],
                        linestyle=style.get("linestyle", "-"), label="_nolegend_", **SEED_LINE)
            x, mean = series.mean()
            (line,) = ax.plot(x + shift, mean, label=label, linewidth=linewidth * 1.15, markersize=markersize,
                              **style)
            return line
        series = series.band()
    if len(series) not in (2, 4):
        raise ValueError(f"series {label!r}: give (x, y), (x, mean, low, high) or SeedCurves, got a tuple of "
                         f"{len(series)}")
    x = np.asarray(series[0], dtype=float) + shift
    (line,) = ax.plot(x, series[1], label=label, linewidth=linewidth, markersize=markersize, **style)
    if len(series) == 4:  # (x, mean, low, high): the seeds' spread as a band, inside the measure's range
        ax.fill_between(x, clip(series[2], bounds), clip(series[3], bounds), color=line.get_color(),
                        alpha=band_alpha, linewidth=0)
    return line
