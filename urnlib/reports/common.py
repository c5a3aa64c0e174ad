"""Curve comparisons shared by the chapters' claims."""

from __future__ import annotations

import numpy as np

from urnlib.results import Run

__all__ = ["largest_rise", "share_lower_at_matched_x", "provenance_table", "provenance"]


def largest_rise(values) -> float:
    """Largest rise of a curve above its running minimum (0 for a curve that never goes back up)."""
    x = np.asarray(values, dtype=float)
    return float(np.max(x - np.minimum.accumulate(x)))


def share_lower_at_matched_x(x1, y1, x2, y2, points: int = 25) -> float | None:
    """Fraction of the x-levels both curves reach at which curve 1 is below curve 2.

    Used to compare error rates "at a given training loss" (paper 001 Fig. 2c and 3d): each curve is
    sorted by x and linearly interpolated on ``points`` levels of the shared x-range.

    Returns:
        the fraction, or ``None`` when the two x-ranges do not overlap.
    """
    curves = []
    for x, y in ((x1, y1), (x2, y2)):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        order = np.argsort(x)
        curves.append((x[order], y[order]))
    lo = max(curves[0][0].min(), curves[1][0].min())
    hi = min(curves[0][0].max(), curves[1][0].max())
    if hi <= lo:
        return None
    grid = np.linspace(lo, hi, points)
    first, second = (np.interp(grid, x, y) for x, y in curves)
    return float(np.mean(first < second))


def provenance_table(runs: list[Run]):
    """A pandas DataFrame: which commit, code and machine produced each run, and whether it is stale (why)."""
    import pandas as pd

    rows = []
    for run in runs:
        git = run.record.get("git", {}) or {}
        commit = (git.get("commit") or "unknown")[:10] + (" (dirty)" if git.get("dirty") else "")
        cpu = run.record.get("cpu_time_s")
        reasons = run.stale_reasons()
        rows.append({
            "run": run.name,
            "key": run.record["key"],
            "commit": commit,
            "created": run.record["created"][:16].replace("T", " "),
            "CPU time (min)": "-" if cpu is None else f"{cpu / 60:.1f}",
            "wall time (min)": f"{run.record.get('wall_time_s', 0) / 60:.1f}",
            "torch": (run.record.get("libraries") or run.record.get("versions", {})).get("torch", "?"),
            "status": "stale: " + "; ".join(reasons) if reasons else "current",
        })
    return pd.DataFrame(rows)


def provenance(runs) -> list:
    """What a chapter shows under "Runs and where they come from": a warning naming the stale runs and why
    (when there are any), then the table of :func:`urnlib.results.provenance_table`. ``runs``: a dict or list
    of :class:`~urnlib.results.Run`. Use as ``display(*provenance(runs))``."""
    from IPython.display import Markdown

    runs = list(runs.values()) if isinstance(runs, dict) else list(runs)
    table = provenance_table(runs)
    out = []
    stale = table[table["status"] != "current"]
    if len(stale):
        names = ", ".join(f"*{name}*" for name in stale["run"])
        out.append(Markdown(f"**Warning: {len(stale)} of {len(table)} runs are stale** ({names}): the code "
                            "or libraries that would train them today differ from those that did (the status "
                            "column says how). Run `make reproduce` to retrain them."))
    out.append(table.style.hide(axis="index"))
    return out
