"""The figure the Performance page opens with: what each chapter's committed runs cost to train, on the CPU
(their records) and on one GPU (estimated from epochs sampled on a lent GPU machine).

The CPU hours are :func:`urnlib.reports.cost.cost_table`'s: each stored run's recorded process CPU time,
summed per chapter (runs stored before CPU time was recorded add their wall time). The GPU hours are an
estimate: ``benchmarks/gpu_chapters.py`` trained sample runs of each chapter's plan on the GPU and compared
an epoch there with the same run's CPU epoch; the chapter's GPU hours / CPU hours in its results
(``benchmarks/results/gpu_chapters.json``) scale today's CPU hours. A chapter the GPU machine did not sample
has no GPU bar, and says so.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["cost_frame", "cost_figure", "write_cost_figure"]


def cost_frame(store: str | Path, gpu_results: str | Path):
    """Per chapter (in the book's order, named by its title up to a colon): ``hours`` on ``where`` (CPU, or
    the GPU's name), one row each, and the GPU's name (``None`` without GPU results): ``(DataFrame, gpu)``."""
    import pandas as pd

    from urnlib.reports.claims_tables import chapter_title
    from urnlib.reports.cost import cost_table

    cpu = cost_table(store, staleness=False).set_index("chapter").drop(index="total")
    hours = cpu["CPU hours"] + cpu["wall hours (runs without CPU time)"]
    path = Path(gpu_results)
    found = json.loads(path.read_text()) if path.exists() else {}
    gpu = found.get("gpu", {}).get("gpu")
    from urnlib.chapters import registry

    order = [c for c in registry.names() if c in hours.index] + [c for c in hours.index
                                                               if c not in registry.names()]
    rows = []
    for chapter in order:
        value, name = hours[chapter], chapter_title(chapter).split(":")[0]  # "The TPRU", "Dyck languages"
        rows.append({"chapter": name, "where": "CPU (the stored runs' records)",
                     "hours": float(value)})
        sampled = found.get("chapters", {}).get(chapter, {})
        if gpu and sampled.get("gpu_hours") and sampled.get("cpu_hours"):
            ratio = sampled["gpu_hours"] / sampled["cpu_hours"]
            rows.append({"chapter": name, "where": f"one {gpu} (estimated)",
                         "hours": float(value) * ratio})
    return pd.DataFrame(rows, columns=["chapter", "where", "hours"]), gpu


def cost_figure(store: str | Path, gpu_results: str | Path):
    """Horizontal bars (seaborn), hours on a log scale, one group per chapter: CPU and, where sampled, GPU."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    import urnlib.plots  # noqa: F401 - the book's theme
    from urnlib.models.palette import PALETTE
    from urnlib.plots.style import COLUMN

    frame, gpu = cost_frame(store, gpu_results)
    if frame.empty:
        raise ValueError(f"no stored run under {store}: nothing to draw the cost of")
    chapters = list(dict.fromkeys(frame["chapter"]))
    fig, ax = plt.subplots(figsize=(COLUMN, 0.45 * len(chapters) + 1.4))
    wheres = list(dict.fromkeys(frame["where"]))
    sns.barplot(frame, y="chapter", x="hours", hue="where", hue_order=wheres, order=chapters, ax=ax,
                palette=[PALETTE["baseline"], PALETTE["urn"]][:len(wheres)], orient="h")
    ax.set_xscale("log")
    ax.set_xlabel("hours to train the chapter's committed runs (log scale)")
    ax.set_ylabel("")
    for bars in ax.containers:
        ax.bar_label(bars, fmt=lambda v: f"{v:.2f}" if v < 10 else f"{v:.0f}", padding=2, fontsize=9)
    ax.set_xlim(right=ax.get_xlim()[1] * 3)  # room for the labels
    missing = [c for c in chapters if (frame["chapter"] == c).sum() == 1] if gpu else []
    ax.legend(title=None, loc="upper center", bbox_to_anchor=(0.5, -0.18 if not missing else -0.24), ncols=2,
              frameon=False)
    if missing:
        ax.text(0.5, -0.16, "no GPU estimate (not sampled on the GPU machine): " + ", ".join(missing),
                transform=ax.transAxes, ha="center", va="top", fontsize=9)
    fig.tight_layout()
    return fig


def write_cost_figure(store: str | Path, gpu_results: str | Path, out: str | Path) -> Path:
    """:func:`cost_figure` as an SVG file (the book's figure format), written to ``out``."""
    import matplotlib.pyplot as plt

    from urnlib.plots.style import PRINT_KWARGS

    fig = cost_figure(store, gpu_results)
    out = Path(out)
    fig.savefig(out, format="svg", **PRINT_KWARGS)
    plt.close(fig)
    return out
