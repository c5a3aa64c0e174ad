"""Line figures of the papers: one function per kind of figure. They take numbers and styles, not models.

Every series is drawn in the :class:`~urnlib.models.registry.Style` its caller gives it (``styles``: label ->
Style): a report takes a model's from its run's spec (:func:`urnlib.models.registry.style`: URNs blue, the
k-TURN purple, LSTMs red, the unconstrained matrix RNN grey ...) and gives reference lines (heuristics,
n-gram counts) :data:`BASELINE`, grey and dotted; a figure never reads a label. Series of one style in a panel
take its shades in turn (URN 8, URN 16, URN 32), so that a model keeps its look across all panels of a
chapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from urnlib.models.registry import Style

__all__ = ["BASELINE", "Styles", "series_style", "shaded", "accuracy_by_count_figure", "curves_panel",
           "panel_grid", "panels_figure"]

#: the look of reference lines: heuristics, n-gram counts, word vectors (not a model kind)
BASELINE = Style("baseline", ("#969696", "#525252", "#bdbdbd"), ".", ":", shade=1)
#: the look of every series of a figure, by its label
Styles = Mapping[str, Style]


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
    """Matplotlib's ``{"color", "marker", "linestyle"}`` of each label, in the order drawn: the series of one
    style take its shades in turn (the first URN the lightest blue, the second the next ...).

    Args:
        labels: the series, in the order drawn.
        styles: label -> :class:`~urnlib.models.registry.Style` (every label of ``labels``).
    """
    seen: dict[Style, int] = {}
    out = {}
    for label in labels:
        look = series_style(label, styles)
        out[label] = look.matplotlib(seen.get(look, 0))
        seen[look] = seen.get(look, 0) + 1
    return out


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
) -> Figure:
    """Accuracy (or error rate) per bucket with error bars (``low``/``high``: Wilson 95% intervals of one run,
    or mean ± one standard deviation over seeds), one line per model.

    Paper 000 Fig. 2-3 (accuracy by attractors), paper 001 Fig. 3b (error rate by attractors).

    Args:
        series: label -> output of :func:`urnlib.metrics.accuracy_by_count` or
            :func:`urnlib.metrics.accuracy_by_count_seeds`.
        styles: label -> the series' :class:`~urnlib.models.registry.Style` (see :func:`shaded`).
        baseline: horizontal reference line (e.g. 0.2, the 5-way majority class).
        error: plot ``1 - accuracy`` (error rate) instead of accuracy.
        ax: draw into this axes (else a new figure).
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    fig = ax.figure
    looks = shaded(list(series), styles)
    offsets = np.linspace(-0.12, 0.12, max(len(series), 1))
    for off, (label, s) in zip(offsets, series.items()):
        x = np.asarray(s["count"]) + off
        y, lo, hi = s["accuracy"], s["low"], s["high"]
        if error:
            y, lo, hi = 1 - y, 1 - hi, 1 - lo
        yerr = np.clip([y - lo, hi - y], 0, None)  # rounding: Wilson bounds can sit 1e-16 inside p at 0 or 1
        ax.errorbar(x, y, yerr=yerr, label=label, capsize=2, markersize=4, linewidth=1.2,
                    **looks[label])
    if baseline is not None:
        ax.axhline(baseline, color="black", linewidth=0.8, linestyle="-.", label=baseline_label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return fig


def curves_panel(
    ax: Axes,
    series: Mapping[str, tuple[Sequence[float], ...]],
    styles: Styles,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    logy: bool = False,
    invert_x: bool = False,
    markers: bool = False,
    integer_x: bool = False,
) -> Axes:
    """One panel of curves, e.g. test loss per epoch (paper 001 Fig. 2a/3a), maximum error rate
    per epoch (Fig. 3c) or error rate against training loss (Fig. 2c/3d). A series is ``(x, y)`` or
    ``(x, mean, low, high)``: the mean over seeds with a band (e.g. mean ± one standard deviation); each is
    drawn in its ``styles[label]`` (see :func:`shaded`)."""
    looks = shaded(list(series), styles)
    for label, curve in series.items():
        x, y = curve[0], curve[1]
        st = dict(looks[label])
        if not markers:
            st.pop("marker")
        (line,) = ax.plot(x, y, label=label, linewidth=1.3, markersize=3, **st)
        if len(curve) == 4:  # (x, mean, low, high): the seeds' spread as a band
            ax.fill_between(x, curve[2], curve[3], color=line.get_color(), alpha=0.18, linewidth=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if invert_x:
        ax.invert_xaxis()
    if integer_x:  # whole-number ticks (epochs)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize="medium")
    return ax


def panel_grid(rows: int = 2, cols: int = 2, width: float = 10.0,
               height: float = 7.5) -> tuple[Figure, np.ndarray]:
    """A figure of ``rows x cols`` panels labelled (a), (b), ... like the papers' multi-panel figures."""
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), layout="constrained")
    for letter, ax in zip("abcdefgh", np.ravel(axes)):
        ax.text(-0.12, 1.04, f"({letter})", transform=ax.transAxes, fontweight="bold")
    return fig, axes


def panels_figure(panels: Sequence[Mapping], styles: Styles, rows: int = 2, cols: int = 2,
                  max_legend_cols: int = 6) -> Figure:
    """Panels of curves labelled (a), (b), ... with one legend below them (paper 001 Fig. 3a-d).

    Args:
        panels: one mapping per panel: the keyword arguments of :func:`curves_panel` (``series``,
            ``xlabel``, ``ylabel``, ``title``, ``logy``, ``invert_x``, ``markers``, ``integer_x``) and
            optionally ``hline``, the height of a dash-dotted reference line (e.g. the majority-class error
            rate).
        styles: label -> :class:`~urnlib.models.registry.Style` of every series of every panel.
        rows, cols: the grid (``rows * cols`` panels at least).
        max_legend_cols: the legend's columns at most (one entry per model of the first panel).
    """
    fig, axes = panel_grid(rows, cols)
    for ax, panel in zip(np.ravel(axes), panels):
        options = dict(panel)
        hline = options.pop("hline", None)
        curves_panel(ax, styles=styles, **options)
        if hline is not None:
            ax.axhline(hline, color="black", linewidth=0.8, linestyle="-.")
    handles, names = np.ravel(axes)[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="outside lower center", ncol=min(len(names), max_legend_cols))
    return fig
