"""The figure of the agreement chapter (paper 000 sec. 4): accuracy by number of attractors, one panel per
data source. It takes numbers (accuracies per bucket with their intervals) and each series' style, not runs
or models.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from urnlib.plots.curves import Styles, accuracy_by_count_figure

__all__ = ["attractor_panels_figure"]


def attractor_panels_figure(panels: Mapping[str, tuple[Mapping[str, Mapping[str, np.ndarray]], float]],
                            styles: Styles, min_total: int) -> Figure:
    """Paper 000 Fig. 2: accuracy by number of attractors, one panel per data source, with its majority class
    as a dash-dotted line.

    Args:
        panels: source -> ``(series, majority)``: ``series`` maps a model label to the output of
            :func:`urnlib.metrics.accuracy_by_count`; ``majority`` is the share of the source's more frequent
            verb number in its test set.
        styles: label -> :class:`~urnlib.models.registry.Style` of every model and heuristic drawn.
        min_total: the fewest test sentences of a drawn bucket (only named in the panels' titles).
    """
    k = len(panels)
    fig, axes = plt.subplots(1, k, figsize=(5.2 * k, 3.9), layout="constrained", squeeze=False)
    for ax, (source, (series, majority)) in zip(axes[0], panels.items()):
        accuracy_by_count_figure(series, styles, ax=ax, baseline=majority,
                                 baseline_label=f"majority class ({majority:.0%})",
                                 title=f"{source} (test buckets with >= {min_total} sentences)")
        ax.set_ylim(min(0.45, ax.get_ylim()[0]), 1.01)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # attractors are counted
    return fig
