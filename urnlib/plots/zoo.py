"""The zoo chapter's figures: every cell's curve on one task, one panel per parameter budget.

Each cell keeps one colour, marker and line style across the chapter, its family's as in every other
chapter (:func:`urnlib.plots.curves.style_for`: URNs blue, the k-TURN purple, LSTMs red, GRUs green, SRNs
orange, TPRUs magenta, the unconstrained matrix RNN grey), so that seven curves stay apart in one panel.
Series are ``(x, mean, low, high)``: the mean over seeds with a band.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from urnlib.plots.curves import family_of, panel_grid, style_for

__all__ = ["SHADES", "cell_style", "cells_figure"]

#: which shade of its family's colours (urnlib.plots.curves) each cell takes: one clearly visible colour each
SHADES = {"turn": 0, "urn": 1, "arbitrary": 0, "lstm": 2, "gru": 1, "srn": 1, "tpru": 1, "baseline": 1}


def cell_style(label: str) -> dict:
    """The matplotlib style of a cell label (``"3-TURN"``, ``"LSTM"`` ...): its family's colour, marker and
    line style, as in the other chapters' figures."""
    return style_for(label, SHADES[family_of(label)])


def cells_figure(panels: Sequence[Mapping], *, height: float = 4.0, empty: str = "nothing to draw") -> Figure:
    """One row of panels labelled (a), (b) ... with one legend below them.

    Args:
        panels: one mapping per panel: ``series`` (label -> ``(x, mean, low, high)``), ``xlabel``, ``ylabel``,
            ``title``, and optionally ``hline`` (``(y, text)``: a dash-dotted reference line), ``vline``
            (``(x, text)``: a dotted vertical line) and ``markers`` (draw the points).
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
            style = cell_style(label)
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
