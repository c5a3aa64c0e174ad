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

__all__ = ["BUCKET_MAJORITY", "attractor_panels_figure", "bucket_line"]


#: the legend's name of the per-bucket majority line
BUCKET_MAJORITY = "majority answer of each bucket"


def bucket_line(ax, baseline: Mapping[str, np.ndarray], label: str = BUCKET_MAJORITY) -> None:
    """Each bucket's own level as a dash-dotted step one bucket wide (centred on its count), the steps of
    adjacent buckets joined, a gap where a bucket is missing: e.g. the majority answer of each attractor
    bucket, which differs from bucket to bucket where one pooled line would hide it.

    Args:
        baseline: ``count`` (the buckets) and ``accuracy`` (the level of each), as
            :func:`urnlib.metrics.accuracy_by_count_seeds` lays them out.
    """
    xs: list[float] = []
    ys: list[float] = []
    for count, level in zip(np.asarray(baseline["count"], dtype=float),
                            np.asarray(baseline["accuracy"], dtype=float)):
        if xs and count - 0.5 > xs[-1] + 1e-9:  # a missing bucket: no step across it
            xs.append(np.nan)
            ys.append(np.nan)
        xs += [count - 0.5, count + 0.5]
        ys += [level, level]
    ax.plot(xs, ys, color="black", linewidth=0.8, linestyle="-.", label=label)


def attractor_panels_figure(panels: Mapping[str, tuple[Mapping[str, Mapping[str, np.ndarray]],
                                                       Mapping[str, np.ndarray] | float]],
                            styles: Styles, *, notes: Mapping[str, str] | None = None,
                            reference: Mapping[str, tuple[float, str]] | None = None) -> Figure:
    """Paper 000 Fig. 2: accuracy by number of attractors, one panel per data source, with the majority answer
    of each bucket as a dash-dotted step (:func:`bucket_line`); two panels side by side, more in two columns
    (legible at a page's width), one legend for all (in the spare cell, or below).

    Args:
        panels: source -> ``(series, majority)``: ``series`` maps a model label to the output of
            :func:`urnlib.metrics.accuracy_by_count`; ``majority`` the majority answer's accuracy per bucket
            (``count``, ``accuracy``: the share of the more frequent verb number among the test sentences of
            each bucket), or one number for all buckets (a dash-dotted line, "majority class").
        styles: label -> :class:`~urnlib.models.registry.Style` of every model and heuristic drawn.
        notes: source -> a note under its panel's axis label (e.g. how a bucket was formed).
        reference: source -> ``(accuracy, label)``: a value the paper states for that data, drawn dotted.
    """
    fig, axes, spare = column_figure(len(panels), row_height=3.4, letters=False)
    handles: dict[str, object] = {}
    for ax, (source, (series, majority)) in zip(axes, panels.items()):
        pooled = isinstance(majority, (int, float))
        accuracy_by_count_figure(series, styles, ax=ax, baseline=majority if pooled else None,
                                 baseline_label="majority class",
                                 title=f"{source} (majority class {majority:.0%})" if pooled else source,
                                 legend=False)
        if not pooled:
            bucket_line(ax, majority)
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
