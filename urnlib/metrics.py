"""Numbers computed from predictions or from stored per-epoch counts.

Everything here takes plain counts or arrays, so figures can be redrawn from stored runs
without the models.
"""

from __future__ import annotations

import numpy as np

__all__ = ["wilson_interval", "accuracy_by_count", "accuracy_by_count_seeds", "max_error_rate"]


def wilson_interval(correct, total, z: float = 1.959964) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a binomial proportion (95% by default).

    Args:
        correct: successes (array-like).
        total: trials (array-like, same shape); where 0 the interval is ``(nan, nan)``.
        z: normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)``: arrays, or floats when both inputs are scalars.
    """
    scalar = np.ndim(correct) == 0 and np.ndim(total) == 0
    k = np.atleast_1d(np.asarray(correct, dtype=float))
    n = np.atleast_1d(np.asarray(total, dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    low, high = centre - half, centre + half
    low[n == 0] = np.nan
    high[n == 0] = np.nan
    return (float(low[0]), float(high[0])) if scalar else (low, high)


def accuracy_by_count(correct, total, min_total: int = 1) -> dict[str, np.ndarray]:
    """Accuracy per bucket (e.g. per number of attractors) with Wilson 95% intervals.

    Buckets with fewer than ``min_total`` scored predictions are dropped.

    Returns:
        dict of arrays ``count`` (bucket index), ``accuracy``, ``low``, ``high``, ``total``.
    """
    correct = np.asarray(correct, dtype=float)
    total = np.asarray(total, dtype=float)
    keep = total >= max(min_total, 1)
    idx = np.nonzero(keep)[0]
    low, high = wilson_interval(correct[keep], total[keep])
    return {"count": idx, "accuracy": correct[keep] / total[keep], "low": low, "high": high,
            "total": total[keep].astype(int)}


def accuracy_by_count_seeds(rows, min_total: int = 1) -> dict[str, np.ndarray]:
    """Accuracy per bucket over seeds: the mean of the seeds' accuracies with mean ± one standard deviation as
    ``low``/``high`` (0 for one seed).

    Args:
        rows: one ``(correct, total)`` pair of per-bucket counts per seed (lists may differ in length).
        min_total: a bucket is kept only where every seed has at least this many scored predictions.

    Returns:
        dict of arrays ``count``, ``accuracy``, ``low``, ``high``, ``total`` (summed over seeds) and
        ``per_seed`` (seeds x kept buckets).
    """
    size = max(len(t) for _, t in rows)
    correct = np.zeros((len(rows), size))
    total = np.zeros((len(rows), size))
    for i, (c, t) in enumerate(rows):
        correct[i, : len(c)], total[i, : len(t)] = c, t
    keep = np.all(total >= max(min_total, 1), axis=0)
    acc = correct[:, keep] / total[:, keep]
    mean = acc.mean(axis=0)
    sd = acc.std(axis=0, ddof=1) if len(rows) > 1 else np.zeros_like(mean)
    return {"count": np.nonzero(keep)[0], "accuracy": mean, "low": mean - sd, "high": mean + sd,
            "total": total[:, keep].sum(axis=0).astype(int), "per_seed": acc}


def max_error_rate(correct, total, min_total: int = 1) -> float:
    """Largest error rate over the buckets with at least ``min_total`` predictions.

    Paper 001 Fig. 3c-d report "the maximum error rate across number of attractors".
    """
    acc = accuracy_by_count(correct, total, min_total)["accuracy"]
    return float(1 - acc.min()) if len(acc) else float("nan")
