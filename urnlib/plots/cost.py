"""The Performance page's figure: what each chapter's runs cost to train, on the CPU and on one GPU."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import seaborn as sns

from urnlib.models.palette import PALETTE
from urnlib.plots.style import COLUMN, PRINT_KWARGS

__all__ = ["cost_bars", "write_svg"]


def cost_bars(frame, gpu: str | None):
    """Horizontal bars, hours on a log scale, one group per chapter: ``frame``'s rows (chapter, where,
    hours; :func:`urnlib.reports.cost.cost_frame`), the CPU's and, where sampled, the GPU's (``gpu``: its
    name, ``None`` without GPU results); a note names the chapters without a GPU estimate."""
    chapters = list(dict.fromkeys(frame["chapter"]))
    fig, ax = plt.subplots(figsize=(COLUMN, 0.45 * len(chapters) + 1.4))
    wheres = list(dict.fromkeys(frame["where"]))
    sns.barplot(frame, y="chapter", x="hours", hue="where", hue_order=wheres, order=chapters, ax=ax,
                palette=[PALETTE["baseline"], PALETTE["urn"]][:len(wheres)], orient="h")
    ax.set_xscale("log")
    ax.set_xlabel("hours to train the chapter's committed runs (log scale)")
    ax.set_ylabel("")
    ax.set_yticks(ax.get_yticks(), [textwrap.fill(c, 24) for c in chapters])  # long titles on two lines
    for bars in ax.containers:
        ax.bar_label(bars, fmt=lambda v: f"{v:.2f}" if v < 10 else f"{v:.0f}", padding=2, fontsize=9)
    ax.set_xlim(right=ax.get_xlim()[1] * 3)  # room for the labels
    missing = [c for c in chapters if (frame["chapter"] == c).sum() == 1] if gpu else []
    ax.legend(title=None, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, frameon=False)
    if missing:  # below the legend, wrapped to the figure's width
        note = "no GPU estimate (not sampled on the GPU machine): " + ", ".join(missing)
        ax.text(0.5, -0.3, textwrap.fill(note, 60), transform=ax.transAxes, ha="center", va="top", fontsize=9)
    fig.tight_layout()
    return fig


def write_svg(fig, out: str | Path) -> Path:
    """``fig`` as an SVG file (the book's figure format, no creation date), closed after."""
    out = Path(out)
    fig.savefig(out, format="svg", **PRINT_KWARGS)
    plt.close(fig)
    return out
