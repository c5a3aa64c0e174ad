"""The cost of the book: CPU time of the stored runs, per chapter, from their records, and the figure the
Performance page opens with (:func:`write_cost_figure`: the CPU hours, and the hours on one GPU estimated from
epochs of sampled runs trained there, ``benchmarks/results/gpu_chapters.json``: the chapter's GPU hours / CPU
hours there scale today's CPU hours).

Every run records the process CPU time of its training (``cpu_time_s``, not wall time: wall time on a shared
machine counts other people's work) and the threads it ran with; runs stored before CPU time was recorded
have only their wall time, counted apart. :func:`cost_table` sums them per chapter; :func:`cost_markdown`
writes the table the Performance page includes (``python -m urnlib.cli book`` rewrites it from the committed
runs before each build, so it always describes the runs the book shows).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from urnlib.chapters.registry import chapter_of_store, store_chapters
from urnlib.results import Run, RunStore

__all__ = ["CHAPTER_OF", "cost_table", "cost_markdown", "frame_markdown", "cost_frame", "write_cost_figure"]

#: the store's experiment folders -> the chapter that shows them (the chapter registry's ``stores``)
CHAPTER_OF = store_chapters()


def _chapter(run: Run) -> str:
    return chapter_of_store(run.record["experiment"].split("/")[0])


def cost_table(store: str | Path, staleness: bool = True):
    """A DataFrame, one row per chapter and a total: runs, runs that recorded CPU time, their CPU hours, the
    wall hours of the others, stale runs (unless ``staleness`` is False: the runs of an earlier commit are
    stale against today's code by design), the longest run's CPU hours, and the hours a reproduction takes on
    2 and 8 worker processes (on 1: the CPU hours): each worker trains one single-threaded run at a time, so
    about the CPU hours / workers, but never less than the longest run (runs do not split between workers)."""
    import pandas as pd

    rows: dict[str, dict] = {}
    for _, run in RunStore(store).runs():
        if isinstance(run, Exception):
            continue
        row = rows.setdefault(_chapter(run), {"runs": 0, "with CPU time": 0, "CPU hours": 0.0,
                                              "wall hours (runs without CPU time)": 0.0, "stale runs": 0,
                                              "longest run (CPU hours)": 0.0})
        row["runs"] += 1
        cpu = run.record.get("cpu_time_s")
        if cpu is not None:
            row["with CPU time"] += 1
            row["CPU hours"] += cpu / 3600
            row["longest run (CPU hours)"] = max(row["longest run (CPU hours)"], cpu / 3600)
        else:
            row["wall hours (runs without CPU time)"] += run.record.get("wall_time_s", 0.0) / 3600
        row["stale runs"] += bool(run.stale_reasons()) if staleness else 0
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("chapter").sort_index()
    if not staleness:
        frame = frame.drop(columns="stale runs")
    frame.loc["total"] = frame.sum(numeric_only=True)
    frame.loc["total", "longest run (CPU hours)"] = frame["longest run (CPU hours)"].drop("total").max()
    for workers in (2, 8):
        frame[f"hours on {workers} worker{'s' * (workers > 1)}"] = np.maximum(
            frame["CPU hours"] / workers, frame["longest run (CPU hours)"])
    return frame.reset_index()


def cost_markdown(store: str | Path) -> str:
    """The cost table as Markdown (numbers to two decimals)."""
    return frame_markdown(cost_table(store))


def frame_markdown(frame) -> str:
    """A cost table (or some of its columns) as Markdown: counts as integers, hours to two decimals."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in frame.iterrows():
        cells = [f"{v:.2f}" if isinstance(v, float) and not float(v).is_integer() or "hours" in c
                 else f"{int(v)}" if isinstance(v, (int, float)) else str(v) for c, v in row.items()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def cost_frame(store: str | Path, gpu_results: str | Path):
    """Per chapter (in the book's order, named by its title up to a colon): ``hours`` on ``where`` (CPU, or
    the GPU's name), one row each, and the GPU's name (``None`` without GPU results): ``(DataFrame, gpu)``."""
    import pandas as pd

    from urnlib.reports.claims_tables import chapter_title

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


def write_cost_figure(store: str | Path, gpu_results: str | Path, out: str | Path) -> Path:
    """The figure the Performance page opens with (:func:`urnlib.plots.cost.cost_bars` of :func:`cost_frame`:
    each chapter's CPU hours and, where sampled, the GPU estimate), as an SVG file written to ``out``."""
    from urnlib.plots.cost import cost_bars, write_svg

    frame, gpu = cost_frame(store, gpu_results)
    if frame.empty:
        raise ValueError(f"no stored run under {store}: nothing to draw the cost of")
    return write_svg(cost_bars(frame, gpu), out)
