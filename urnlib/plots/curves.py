"""Line figures of the papers: one function per kind of figure. They take numbers and styles, not models.

Every series is drawn in the :class:`~urnlib.models.registry.Style` its caller gives it (``styles``: label ->
Style): a report takes a model's from its run's spec (:func:`urnlib.models.registry.style`: the book's one
colour-blind-safe palette keyed by model kind, :data:`urnlib.models.palette.PALETTE`: URNs blue, the k-TURN
reddish purple, LSTMs vermillion, the unconstrained matrix RNN grey ...) and gives reference lines
(heuristics, n-gram counts) :data:`BASELINE`, dark grey and dotted; a figure never reads a label. The series
of one colour in a figure take its :func:`~urnlib.models.palette.shades` (URN 8, URN 16, URN 32: three blues
apart in lightness and hue; one URN alone: the URN's blue, as in every chapter), so that a model keeps its
look across all panels of a chapter. A series is ``(x, y)`` or :class:`~urnlib.plots.series.SeedCurves` (each
seed's values: seaborn draws the mean with its ± sd band, :mod:`urnlib.plots.series`); bands stay inside the
measure's range (``bounds``).

Figures are as wide as the book's text column (:data:`urnlib.plots.style.COLUMN`), two panels to a row at most
(:func:`column_figure`).

A value a paper prints for a figure is drawn on the panel that shows it (:func:`draw_marks`): black, a dotted
line or a point, named in a legend of that panel's own; figure legends name the models only. Text is in the
book's theme (:mod:`urnlib.plots.style`): no smaller than its tick labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from urnlib.models.registry import Style
from urnlib.models.palette import PALETTE
from urnlib.plots.series import (NON_NEGATIVE, UNIT, Bounds, SeedCurves, Series, clip, dodge,
                                 draw_series)
from urnlib.plots.layout import cell_legend, fitting_legend, labelled, titled, wrapped
from urnlib.plots.style import COLUMN, MAX_COLS, ROW, grid_shape

__all__ = ["BASELINE", "Styles", "Mark", "MARK_GID", "series_style", "shaded", "draw_marks", "is_mark",
           "accuracy_by_count_figure", "curves_panel", "panel_grid", "column_figure", "figure_legend",
           "panels_figure"]

#: the look of reference lines: heuristics, n-gram counts, word vectors (not a model kind)
BASELINE = Style("baseline", PALETTE["baseline"], ".", ":")
#: the look of every series of a figure, by its label
Styles = Mapping[str, Style]
#: a value a paper prints, drawn on a panel (:func:`draw_marks`): ``(y, label)`` a horizontal line,
#: ``(x, None, label)`` a vertical line, ``(x, y, label)`` a point; the label says where it comes from
Mark = tuple
#: the gid of every artist :func:`draw_marks` draws: :func:`figure_legend` leaves them out
MARK_GID = "paper-mark"
#: the look of a mark: black, lines dotted (as the agreement chapter's paper line) under the curves, points on
#: top of them
_MARK_LINE = {"color": "black", "linewidth": 1.0, "linestyle": ":", "zorder": 1.8}
_MARK_POINT = {"color": "black", "marker": "D", "markersize": 5, "linestyle": "none", "zorder": 4}


def series_style(label: str, styles: Styles) -> Style:
    """``styles[label]``, or an error naming the series that has none."""
    try:
        return styles[label]
    except (KeyError, TypeError):
        given = sorted(styles) if isinstance(styles, Mapping) else styles
        raise ValueError(f"styles has no style for the series {label!r} (given: {given!r}); a report gives "
                         "each series its model's urnlib.models.registry.style(spec) or plots.curves.BASELINE"
                         ) from None


def shaded(labels: Sequence[str], styles: Styles) -> dict[str, dict]:
    """Matplotlib's ``{"color", "marker", "linestyle"}`` of each label, in the order drawn: the ``n`` series
    of one colour take its ``n`` :func:`~urnlib.models.palette.shades` in turn, the first the lightest (URN 8,
    16, 32: light, middle and dark blue); a series alone of its colour, the colour itself.

    Args:
        labels: the series, in the order drawn.
        styles: label -> :class:`~urnlib.models.registry.Style` (every label of ``labels``).
    """
    looks = {label: series_style(label, styles) for label in labels}
    of = Counter(look.colour for look in looks.values())
    seen: Counter = Counter()
    out = {}
    for label, look in looks.items():
        out[label] = look.matplotlib(seen[look.colour], of[look.colour])
        seen[look.colour] += 1
    return out


def is_mark(artist) -> bool:
    """Whether ``artist`` is a paper's value drawn by :func:`draw_marks`."""
    return getattr(artist, "get_gid", lambda: None)() == MARK_GID


def draw_marks(ax: Axes, marks: Sequence[Mark] | None) -> list:
    """Draw the values a paper prints for this panel (:data:`Mark`): black, lines dotted and under the curves,
    points as diamonds on top, each named by its label in a legend of the panel's own, placed where it
    covers the fewest data (matplotlib's ``"best"``); figure legends leave marks out (:func:`figure_legend`).
    Nothing is drawn (and no legend made) for ``None`` or no marks.

    Returns:
        the artists drawn, one per mark.
    """
    drawn = []
    for mark in marks or ():
        if len(mark) == 2:
            (y, label), x = mark, None
        elif len(mark) == 3:
            x, y, label = mark
        else:
            raise ValueError(f"a mark is (y, label), (x, None, label) or (x, y, label), not {mark!r}")
        if x is None:
            artist = ax.axhline(y, label=label, **_MARK_LINE)
        elif y is None:
            artist = ax.axvline(x, label=label, **_MARK_LINE)
        else:
            (artist,) = ax.plot([x], [y], label=label, **_MARK_POINT)
        artist.set_gid(MARK_GID)
        drawn.append(artist)
    if drawn:
        size = plt.rcParams["legend.fontsize"]
        names = [wrapped(ax, a.get_label().replace("\n", " "), size, room=0.85) for a in drawn]  # and key
        ax.legend(drawn, names, loc="best", framealpha=0.85, handlelength=1.6)
    return drawn


def accuracy_by_count_figure(
    series: Mapping[str, Mapping[str, np.ndarray]],
    styles: Styles,
    *,
    xlabel: str = "number of attractors",
    ylabel: str = "accuracy",
    baseline: float | None = None,
    baseline_label: str = "majority class",
    title: str | None = None,
    error: bool = False,
    ax: Axes | None = None,
    legend: bool = True,
) -> Figure:
    """Accuracy (or error rate) per bucket with error bars, one line per model, each model's points shifted a
    little sideways so that equal accuracies stay apart: over seeds (``per_seed``), seaborn's mean with bars
    of ± one standard deviation, cut at 0 and 1; of one run (no ``per_seed``: a heuristic), its Wilson 95%
    intervals (``low``/``high``).

    Paper 000 Fig. 2-3 (accuracy by attractors), paper 001 Fig. 3b (error rate by attractors).

    Args:
        series: label -> output of :func:`urnlib.metrics.accuracy_by_count_seeds` (with ``per_seed``) or
            :func:`urnlib.metrics.accuracy_by_count`.
        styles: label -> the series' :class:`~urnlib.models.registry.Style` (see :func:`shaded`).
        baseline: horizontal reference line (e.g. 0.2, the 5-way majority class).
        error: plot ``1 - accuracy`` (error rate) instead of accuracy.
        ax: draw into this axes (else a new figure).
        legend: give the axes a legend (a figure of several panels gives one for all: :func:`figure_legend`).
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(COLUMN, 1.4 * ROW), layout="constrained")
    fig = ax.figure
    looks = shaded(list(series), styles)
    for off, (label, s) in zip(dodge(len(series), 0.12), series.items()):
        if "per_seed" in s and len(s["count"]):  # seeds: seaborn's estimate at each bucket
            per = np.asarray(s["per_seed"], dtype=float)
            curves = SeedCurves(list(1 - per if error else per), x=[s["count"]] * len(per))
            draw_series(ax, label, curves, looks[label], bounds=UNIT, markers=True, shift=off, bars=True,
                        linewidth=1.2, markersize=3.5)
            continue
        x = np.asarray(s["count"]) + off
        y, lo, hi = (np.asarray(s[k], dtype=float) for k in ("accuracy", "low", "high"))
        if error:
            y, lo, hi = 1 - y, 1 - hi, 1 - lo
        yerr = np.clip([y - clip(lo, UNIT), clip(hi, UNIT) - y], 0, None)  # rounding: 1e-16 inside p at 0, 1
        ax.errorbar(x, y, yerr=yerr, label=label, capsize=2, markersize=3.5, linewidth=1.2, **looks[label])
    if baseline is not None:
        ax.axhline(baseline, color="black", linewidth=0.8, linestyle="-.", label=baseline_label)
    labelled(ax, xlabel, ylabel)
    if legend:
        ax.legend()
    if title:
        titled(ax, title)
    return fig


def curves_panel(
    ax: Axes,
    series: Mapping[str, Series],
    styles: Styles,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    logy: bool = False,
    invert_x: bool = False,
    markers: bool = False,
    integer_x: bool = False,
    bounds: Bounds | None = NON_NEGATIVE,
    marks: Sequence[Mark] | None = None,
    looks: Mapping[str, dict] | None = None,
) -> Axes:
    """One panel of curves, e.g. test loss per epoch (paper 001 Fig. 2a/3a), maximum error rate
    per epoch (Fig. 3c) or error rate against training loss (Fig. 2c/3d). A series is ``(x, y)`` or
    :class:`~urnlib.plots.series.SeedCurves` (each seed's values: seaborn's mean over seeds with a ± sd
    band; thin lines where the seeds stopped at different epochs); each is drawn in its ``styles[label]``
    (see :func:`shaded`).

    Args:
        bounds: the measure's range, which no band leaves (default: non-negative, like every loss,
            perplexity, rate and count of the papers' curves; :data:`urnlib.plots.series.UNIT` for a
            fraction; ``None``: not clipped).
        marks: values the paper prints for this panel (:data:`Mark`, :func:`draw_marks`), each named in
            the panel's own legend; none by default.
        looks: each label's matplotlib look, where a figure of several panels chose them for all
            (:func:`shaded` of every panel's labels); default: :func:`shaded` of this panel's.
    """
    looks = shaded(list(series), styles) if looks is None else looks
    for label, curve in series.items():
        draw_series(ax, label, curve, looks[label], bounds=bounds, markers=markers)
    labelled(ax, xlabel, ylabel)
    if logy:
        ax.set_yscale("log")
    if invert_x:
        ax.invert_xaxis()
    if integer_x:  # whole-number ticks (epochs)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if title:
        titled(ax, title)
    draw_marks(ax, marks)
    return ax


def _letter(ax: Axes, letter: str) -> None:
    """Label a panel "(a)": its title's left slot, which the panel's title then follows (:func:`titled`), so
    that the letter never meets a long axis label or tick label."""
    ax.set_title(f"({letter})", loc="left")


def panel_grid(rows: int = 2, cols: int = 2, width: float = COLUMN,
               height: float | None = None) -> tuple[Figure, np.ndarray]:
    """A figure of ``rows x cols`` panels labelled (a), (b), ... like the papers' multi-panel figures, as wide
    as the book's column (``height``: :data:`urnlib.plots.style.ROW` per row unless given)."""
    fig, axes = plt.subplots(rows, cols, figsize=(width, rows * ROW if height is None else height),
                             layout="constrained")
    for letter, ax in zip("abcdefgh", np.ravel(axes)):
        _letter(ax, letter)
    return fig, axes


def column_figure(panels: int, *, row_height: float = ROW, max_cols: int = MAX_COLS,
                  letters: bool = True) -> tuple[Figure, list[Axes], Axes | None]:
    """A figure of ``panels`` panels that fits the book's column: ``max_cols`` side by side at most, in as
    many rows as they need (:func:`urnlib.plots.style.grid_shape`), labelled (a), (b) ... when ``letters``
    and there are several.

    Returns:
        the figure, its panels in reading order, and the grid's spare cell (hidden; e.g. for the legend,
        :func:`figure_legend`) or ``None``.
    """
    rows, cols = grid_shape(panels, max_cols)
    fig, axes = plt.subplots(rows, cols, figsize=(COLUMN, rows * row_height), layout="constrained",
                             squeeze=False)
    cells = list(axes.flat)
    for ax in cells[panels:]:
        ax.axis("off")
    if letters and panels > 1:
        for letter, ax in zip("abcdefghijkl", cells[:panels]):
            _letter(ax, letter)
    return fig, cells[:panels], (cells[panels] if panels < len(cells) else None)


def figure_legend(fig: Figure, ax: Axes, spare: Axes | None = None, max_cols: int = 6) -> None:
    """One legend for every panel of ``fig``, of ``ax``'s labelled lines (a paper's marks left out: the
    panel's own legend names them): in the ``spare`` cell of the grid when there is one, else below the
    panels, in as many columns as fit (:func:`fitting_legend`)."""
    pairs = [(h, n) for h, n in zip(*ax.get_legend_handles_labels()) if not is_mark(h)]
    handles, names = [h for h, _ in pairs], [n for _, n in pairs]
    if not handles:
        return
    if spare is not None:
        cell_legend(spare, handles, names)
    else:
        fitting_legend(fig, handles, names, max_cols, frameon=False)


def panels_figure(panels: Sequence[Mapping], styles: Styles, rows: int | None = None, cols: int | None = None,
                  max_legend_cols: int = 6) -> Figure:
    """Panels of curves labelled (a), (b), ... with one legend (paper 001 Fig. 3a-d), as wide as the book's
    column: two panels to a row unless ``rows`` and ``cols`` say otherwise; the legend goes below the panels,
    or into the grid's spare cell (three panels).

    Args:
        panels: one mapping per panel: the keyword arguments of :func:`curves_panel` (``series``,
            ``xlabel``, ``ylabel``, ``title``, ``logy``, ``invert_x``, ``markers``, ``integer_x``,
            ``bounds``, ``marks``: values the paper prints, each named in the panel's legend) and optionally
            ``hline``, the height of a dash-dotted, unlabelled reference line (e.g. the majority-class error
            rate).
        styles: label -> :class:`~urnlib.models.registry.Style` of every series of every panel.
        rows, cols: the grid (``rows * cols`` panels at least; default:
            :func:`~urnlib.plots.style.grid_shape`).
        max_legend_cols: the legend's columns at most (one entry per model of the first panel).
    """
    if rows is None or cols is None:
        rows, cols = grid_shape(len(panels))
    fig, axes = panel_grid(rows, cols)
    cells = list(np.ravel(axes))
    looks = shaded(list(dict.fromkeys(label for panel in panels for label in panel["series"])), styles)
    for ax, panel in zip(cells, panels):
        options = dict(panel)
        hline = options.pop("hline", None)
        curves_panel(ax, styles=styles, looks=looks, **options)
        if hline is not None:
            ax.axhline(hline, color="black", linewidth=0.8, linestyle="-.")
    for ax in cells[len(panels):]:  # a spare cell: no letter, no axes; the legend goes there
        ax.clear()
        ax.axis("off")
    figure_legend(fig, cells[0], cells[len(panels)] if len(panels) < len(cells) else None,
                  max_cols=max_legend_cols)
    return fig
