"""Figures of the primer chapter (lecture 004): Elman's tree of word states, and which a^n b^n strings each
network accepts and its states along one of them (the language models' validation curves are drawn by
:mod:`urnlib.plots.curves`). They take numbers (a linkage matrix, accept/reject flags, state traces), not
runs or models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from scipy.cluster.hierarchy import dendrogram

from urnlib.models.palette import COLORBLIND
from urnlib.plots.style import COLUMN, MAX_COLS

__all__ = ["ACCEPTED", "REJECTED", "REJECTED_HATCH", "word_tree_figure", "acceptance_figure",
           "state_panels_figure"]

#: the colours of a string accepted and rejected: blue and orange, apart for every colour vision
ACCEPTED, REJECTED = COLORBLIND[0], COLORBLIND[1]

#: the hatching of a rejected stretch, so that accepted and rejected differ in more than colour
REJECTED_HATCH = "////"
_ACCEPTED_LOOK = {"facecolor": ACCEPTED}
_REJECTED_LOOK = {"facecolor": REJECTED, "hatch": REJECTED_HATCH, "edgecolor": "white"}


def word_tree_figure(Z: np.ndarray, labels: Sequence[str], colours: Sequence[str], *, xlabel: str,
                     title: str) -> Figure:
    """Elman (1990) Fig. 7: a hierarchical clustering drawn as a tree lying on its side, each leaf's label in
    its own colour.

    Args:
        Z: the linkage matrix (:func:`scipy.cluster.hierarchy.linkage`) of the leaves.
        labels: the leaves' labels, in the order of the rows clustered (distinct).
        colours: the colour of each label, in the same order.
        xlabel, title: the axis label (what the distances are) and the title.
    """
    colour_of = dict(zip(labels, colours))
    fig, ax = plt.subplots(figsize=(COLUMN, 5.2), layout="constrained")
    dendrogram(Z, labels=list(labels), orientation="right", ax=ax, color_threshold=0,
               above_threshold_color="0.3")
    for tick in ax.get_yticklabels():
        tick.set_color(colour_of[tick.get_text()])
    ax.grid(axis="y", visible=False)  # the theme's grid: distances only
    ax.set(xlabel=xlabel, title=title)
    return fig


def acceptance_figure(accepted: Mapping[str, Sequence[bool]], max_train_n: int, columns: int = 2) -> Figure:
    """Accepted or rejected a^n b^n by n (log scale), one bar per run whose stretch of each n (from n - 1/2 to
    n + 1/2) shows the answer, the runs in ``columns`` panels side by side (in order, top to bottom, then left
    to right), and a dashed line at the end of the training range: accepted solid blue, rejected orange and
    hatched (:data:`REJECTED_HATCH`), told apart by the hatching as well as by the colours (the book's
    colour-blind palette), and named in a legend.

    Args:
        accepted: label -> whether the run accepts a^n b^n, for n = 1, 2, ...
        max_train_n: the largest n trained on.
        columns: the panels side by side at most (each holds an equal share of the runs).
    """
    labels = list(accepted)
    per = max(1, -(-len(labels) // max(1, columns)))  # runs per panel
    chunks = [labels[k:k + per] for k in range(0, len(labels), per)] or [[]]
    fig, axes = plt.subplots(1, len(chunks), figsize=(COLUMN, 0.16 * per + 1.3), layout="constrained",
                             sharex=True, squeeze=False)  # 16 px a run
    longest = len(max(accepted.values(), key=len, default=[]))
    for ax, chunk in zip(axes[0], chunks):
        for i, label in enumerate(chunk):
            acc = np.array(accepted[label], dtype=bool)
            edges = np.flatnonzero(np.diff(acc.astype(int))) + 1  # where a stretch of equal answers ends
            for start, stop in zip(np.r_[0, edges], np.r_[edges, len(acc)]):  # n = start + 1 ... stop
                ax.broken_barh([(start + 0.5, stop - start)], (i - 0.35, 0.7), linewidth=0,
                               **(_ACCEPTED_LOOK if acc[start] else _REJECTED_LOOK))
        ax.axvline(max_train_n + 0.5, color="k", lw=1, ls="--")
        ax.set_yticks(range(len(chunk)), chunk)
        ax.grid(axis="y", visible=False)
        ax.set(xlabel="n", xscale="log", xlim=(0.5, longest + 0.5))
        ax.set_ylim(per - 0.5, -0.5)  # the first run on top, as listed, every panel's rows alike
    fig.suptitle(f"a^n b^n accepted or rejected; trained on n <= {max_train_n}")
    trained = Line2D([], [], color="k", lw=1, ls="--", label=f"end of training (n = {max_train_n})")
    fig.legend(handles=[Patch(label="accepted", **_ACCEPTED_LOOK), Patch(label="rejected", **_REJECTED_LOOK),
                        trained], loc="outside lower center", ncols=3, frameon=False)
    return fig



def state_panels_figure(panels: Sequence[tuple[str, np.ndarray]], max_cols: int = MAX_COLS) -> Figure:
    """States along ``<s> a^n b^n``, one panel per trace (one line per unit), with a dashed line at the switch
    from a to b.

    Args:
        panels: ``(title, states)`` per panel; ``states`` has shape ``(2 n + 1, units)``.
        max_cols: the panels per row at most (two fill the book's column).
    """
    cols = min(max_cols, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(COLUMN / MAX_COLS * cols, 2.4 * rows), layout="constrained",
                             squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (title, states) in zip(axes.flat, panels):
        values = np.asarray(states)
        n = (len(values) - 1) // 2
        ax.plot(np.arange(len(values)), values, lw=1)
        ax.axvline(n + 0.5, color="k", lw=0.8, ls="--")
        ax.set(title=title, xlabel=f"position in <s> a^{n} b^{n}")
    return fig
