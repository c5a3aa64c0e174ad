"""The figure of the agreement chapter (paper 000 sec. 4): accuracy by number of attractors, one panel per
data source. It takes numbers (accuracies per bucket with their intervals) and each series' style, not runs
or models.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from urnlib.plots.curves import Styles, accuracy_by_count_figure, column_figure
from urnlib.plots.layout import cell_legend, fitting_legend, labelled

__all__ = ["attractor_panels_figure"]


def attractor_panels_figure(panels: Mapping[str, tuple[Mapping[str, Mapping[str, np.ndarray]], float]],
                            styles: Styles, *, notes: Mapping[str, str] | None = None,
                            reference: Mapping[str, tuple[float, str]] | None = None) -> Figure:
    """Paper 000 Fig. 2: accuracy by number of attractors, one panel per data source, with its majority class
    as a dash-dotted line; two panels side by side, more in two columns (legible at a page's width), one
    legend for all (in the spare cell, or below).

    Args:
        panels: source -> ``(series, majority)``: ``series`` maps a model label to the output of
            :func:`urnlib.metrics.accuracy_by_count`; ``majority`` is the share of the source's more frequent
            verb number in its test set.
        styles: label -> :class:`~urnlib.models.registry.Style` of every model and heuristic drawn.
        notes: source -> a note under its panel's axis label (e.g. how a bucket was formed).
        reference: source -> ``(accuracy, label)``: a value the paper states for that data, drawn dotted.
    """
    fig, axes, spare = column_figure(len(panels), row_height=3.4, letters=False)
    handles: dict[str, object] = {}
    for ax, (source, (series, majority)) in zip(axes, panels.items()):
        accuracy_by_count_figure(series, styles, ax=ax, baseline=majority, baseline_label="majority class",
                                 title=f"{source} (majority class {majority:.0%})",
                                 legend=False)
        if source in (reference or {}):
            value, label = reference[source]
            ax.axhline(value, color="black", linewidth=1.0, linestyle=":", label=label)
        if source in (notes or {}):
            labelled(ax, f"number of attractors\n({notes[source]})")
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)  # one legend for all panels
        ax.set_ylim(min(0.45, ax.get_ylim()[0]), 1.01)
        low, high = ax.get_xlim()
        ax.set_xlim(min(low, -0.5), max(high, 0.5))  # one bucket alone: still a readable axis
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # attractors are counted
    if spare:
        cell_legend(spare, list(handles.values()), list(handles))
    else:
        fitting_legend(fig, list(handles.values()), list(handles), max_cols=3, frameon=False)
    return fig
