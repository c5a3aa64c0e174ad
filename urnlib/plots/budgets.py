"""The zoo chapter's figures: every cell's curve on one task, one panel per parameter budget.

Each cell keeps one colour, marker and line style across the chapter, its kind's as in every other chapter
(the :class:`~urnlib.models.registry.Style` the report gives it from the cell's spec, in the book's palette
keyed by kind: URNs blue, the k-TURN reddish purple, LSTMs vermillion, GRUs green, SRNs orange, TPRUs sky
blue, the unconstrained matrix RNN grey), so that seven curves stay apart in one panel. The panels are
stacked, each as wide as the book's column: seven cells side by side in half a column would hide each other.
Series are :class:`~urnlib.plots.series.SeedCurves` (each seed's values: seaborn's mean over seeds with a ± sd
band cut to the measure's range; each seed's curve, thin, where the seeds stopped at different epochs); on a
panel with markers, each cell's points are shifted a little sideways (:data:`DODGE`), so that cells with
equal values (several at an accuracy of 1) stay apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from urnlib.plots.curves import Styles, column_figure, figure_legend, shaded
from urnlib.plots.layout import labelled, titled
from urnlib.plots.series import NON_NEGATIVE, dodge, draw_series

__all__ = ["DODGE", "cells_figure"]

#: how far (in x units) the points of the first and last cell of a panel with markers are shifted
DODGE = 0.3


def cells_figure(panels: Sequence[Mapping], styles: Styles, *, height: float = 2.5,
                 empty: str = "nothing to draw") -> Figure:
    """Panels labelled (a), (b) ..., one above the other, with one legend below them.

    Args:
        panels: one mapping per panel: ``series`` (label -> :class:`~urnlib.plots.series.SeedCurves` or
            ``(x, y)``), ``xlabel``, ``ylabel``, ``title``, and optionally
            ``bounds`` (the measure's range, which no band leaves; default non-negative), ``hline``
            (``(y, text)``: a dash-dotted reference line), ``vline`` (``(x, text)``: a dotted vertical line)
            and ``markers`` (draw the points, shifted sideways by up to :data:`DODGE`).
        styles: label -> :class:`~urnlib.models.registry.Style` of every cell (its spec's; cells of one
            colour take its shades, :func:`~urnlib.plots.curves.shaded`).
        height: the height of one panel in inches.
        empty: the text of the figure drawn when there is no panel.
    """
    if not panels:
        fig, (ax,), _ = column_figure(1, row_height=1.5)
        ax.axis("off")
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
        return fig
    fig, axes, _ = column_figure(len(panels), row_height=height, max_cols=1)
    looks = shaded(list(dict.fromkeys(label for panel in panels for label in panel["series"])), styles)
    for ax, panel in zip(axes, panels):
        markers = panel.get("markers", False)
        shifts = dodge(len(panel["series"]), DODGE if markers else 0.0)
        for shift, (label, series) in zip(shifts, panel["series"].items()):
            draw_series(ax, label, series, looks[label],
                        bounds=panel.get("bounds", NON_NEGATIVE), markers=markers, linewidth=1.4,
                        markersize=3.5, shift=shift, band_alpha=0.15)
        if panel.get("hline") is not None:
            y, text = panel["hline"]
            ax.axhline(y, color="black", linewidth=0.8, linestyle="-.", label=text)
        if panel.get("vline") is not None:
            x, text = panel["vline"]
            ax.axvline(x, color="black", linewidth=0.8, linestyle=":", label=text)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        labelled(ax, panel["xlabel"], panel["ylabel"])
        titled(ax, panel["title"])
    figure_legend(fig, axes[0], max_cols=4)
    return fig
