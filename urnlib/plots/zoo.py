"""The zoo chapter's figures: every cell's curve on one task, one panel per parameter budget.

Each cell keeps one colour, marker and line style across the chapter, its kind's as in every other chapter
(the :class:`~urnlib.models.registry.Style` the report gives it from the cell's spec: URNs blue, the k-TURN
purple, LSTMs red, GRUs green, SRNs orange, TPRUs magenta, the unconstrained matrix RNN grey), in the one
shade its style names for the zoo (``shade``), so that seven curves stay apart in one panel.
Series are ``(x, mean, low, high)``: the mean over seeds with a band.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from urnlib.models.registry import Style
from urnlib.plots.curves import Styles, panel_grid, series_style

__all__ = ["cell_style", "cells_figure"]


def cell_style(look: Style) -> dict:
    """Matplotlib's ``{"color", "marker", "linestyle"}`` of a cell drawn in ``look``: the one shade the style
    names for the zoo (``look.shade``), its marker and line style."""
    return look.matplotlib(look.shade)


def cells_figure(panels: Sequence[Mapping], styles: Styles, *, height: float = 4.0,
                 empty: str = "nothing to draw") -> Figure:
    """One row of panels labelled (a), (b) ... with one legend below them.

    Args:
        panels: one mapping per panel: ``series`` (label -> ``(x, mean, low, high)``), ``xlabel``, ``ylabel``,
            ``title``, and optionally ``hline`` (``(y, text)``: a dash-dotted reference line), ``vline``
            (``(x, text)``: a dotted vertical line) and ``markers`` (draw the points).
        styles: label -> :class:`~urnlib.models.registry.Style` of every cell (its spec's).
        height: the figure's height in inches.
        empty: the text of the figure drawn when there is no panel.
    """
    if not panels:
        fig, ax = panel_grid(1, 1, width=5.0, height=1.5)
        ax = np.ravel(ax)[0]
        ax.axis("off")
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
        return fig
    fig, axes = panel_grid(1, len(panels), width=4.6 * len(panels) + 0.6, height=height)
    axes = np.ravel(axes)
    for ax, panel in zip(axes, panels):
        for label, (x, mean, low, high) in panel["series"].items():
            style = cell_style(series_style(label, styles))
            if not panel.get("markers", False):
                style.pop("marker")
            (line,) = ax.plot(x, mean, label=label, linewidth=1.4, markersize=4, **style)
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
        if panel.get("hline") is not None:
            y, text = panel["hline"]
            ax.axhline(y, color="black", linewidth=0.8, linestyle="-.", label=text)
        if panel.get("vline") is not None:
            x, text = panel["vline"]
            ax.axvline(x, color="black", linewidth=0.8, linestyle=":", label=text)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.set_title(panel["title"], fontsize="medium")
        ax.grid(alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="outside lower center", ncol=min(len(names), 5))
    return fig
