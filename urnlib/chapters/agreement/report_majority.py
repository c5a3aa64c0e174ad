"""The majority answer of each attractor bucket of the agreement chapter's Fig. 2 (paper 000 sec. 4): the
share of the more frequent verb number among the test sentences with that many attractors.

One pooled majority class misleads where the buckets differ: on Linzen et al.'s test files the plural share
rises from about 0.58 at 1 attractor to above 0.9 at 4 (a singular subject with plural attractors is rarer
than the reverse), so a model that answers "plural" whenever it sees several nouns scores high on the right
of the figure. Each bucket's own majority is what a model there must beat.

The stored runs keep each test set's attractor histogram and its pooled plural share, not the plural share
per bucket, so it is read again from each seed's test sentences (the split of
:mod:`urnlib.tasks.agreement` under the run's stored task), and checked against what the run stored: a test
set that is not the one the run was tested on is an error, never a silent baseline. Reading them takes some
seconds per seed (Linzen et al.'s files are tagged again; the grammar's training sentences are drawn with its
test ones), so the counts are kept in ``test_buckets.json`` beside the chapter's runs (:data:`CACHE`), each
under its run's key, once read and checked: the book reads them from there and needs no corpus.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from urnlib.errors import DataError
from urnlib.metrics import accuracy_by_count_seeds
from urnlib.seeds import Seeds
from urnlib.tasks.agreement import _split, task_of
from urnlib.tasks.agreement_linzen import POOL_PARAM

__all__ = ["bucket_counts", "bucket_majority", "test_counts", "majority_by_attractors", "CACHE"]

CACHE = "test_buckets.json"  #: the file beside the chapter's runs that keeps each run's test counts


def bucket_counts(examples) -> tuple[list[int], list[int]]:
    """``(plural[a], total[a])``: the plural verbs and the sentences with ``a`` attractors among
    ``examples`` (each with ``n_attractors`` and ``plural``), ``a`` from 0 to the largest count."""
    size = max((ex.n_attractors for ex in examples), default=-1) + 1
    plural, total = [0] * size, [0] * size
    for ex in examples:
        total[ex.n_attractors] += 1
        plural[ex.n_attractors] += int(ex.plural)
    return plural, total


def bucket_majority(rows, min_total: int = 1) -> dict[str, np.ndarray]:
    """The majority answer's accuracy per bucket over seeds, laid out as
    :func:`urnlib.metrics.accuracy_by_count_seeds` (``count``, ``accuracy`` the mean over seeds,
    ``per_seed``; buckets every seed fills with ``min_total`` sentences, as the models' are kept).

    Args:
        rows: one ``(plural[a], total[a])`` pair of per-bucket counts per seed (:func:`bucket_counts`).
    """
    return accuracy_by_count_seeds([([max(p, t - p) for p, t in zip(plural, total)], total)
                                    for plural, total in rows], min_total)


@lru_cache(maxsize=64)
def test_counts(task, pool: float = 0.0) -> tuple[tuple[int, ...], tuple[int, ...], float]:
    """``(plural[a], total[a], plural share)`` of the test sentences of ``task`` (a frozen task of
    :mod:`urnlib.tasks.agreement`), read from its data as the run's split drew them (``pool``: the run's share
    of Linzen et al.'s test files that trained, :mod:`urnlib.chapters.agreement.sizes`)."""
    _, test, _ = _split(task, pool)
    plural, total = bucket_counts(test)
    return tuple(plural), tuple(total), float(np.mean([ex.plural for ex in test]))


def _checked(run) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`test_counts` of a run's stored task, checked against the histogram and plural share the run
    stored when it was tested."""
    plural, total, share = test_counts(task_of(run.params["task"]), run.params.get(POOL_PARAM, 0.0))
    stats = run.final["data"]
    stored = {int(k): v for k, v in stats["test_attractors"].items()}
    read = {a: t for a, t in enumerate(total) if t}
    if read != stored or not math.isclose(share, stats["test_plural_share"], abs_tol=1e-9):
        raise DataError(f"run {run.name}: the test sentences read now ({read}, plural share {share:.4f}) are "
                        f"not those it was tested on ({stored}, {stats['test_plural_share']:.4f}): its data "
                        "changed since it was trained; retrain it (mode train) or restore the data")
    return plural, total


def _kept(runs: list) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """:func:`_checked` of each run, read from :data:`CACHE` in the chapter's folder of the store (the one
    above the runs' source folders) where it is kept, else read from the data and written back there."""
    path = Path(runs[0].path).parent.parent / CACHE
    kept = json.loads(path.read_text()) if path.is_file() else {}
    todo = [run for run in runs if run.record["key"] not in kept]
    for run in todo:
        plural, total = _checked(run)
        kept[run.record["key"]] = {"name": run.name, "plural": list(plural), "total": list(total)}
    if todo:
        path.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")
    return [(tuple(kept[r.record["key"]]["plural"]), tuple(kept[r.record["key"]]["total"])) for r in runs]


def majority_by_attractors(seeds: Seeds, min_total: int = 1) -> dict[str, np.ndarray]:
    """:func:`bucket_majority` of the test sets of ``seeds`` (one source's runs of one model; the models of
    a source and seed share their test sentences), their counts kept in :data:`CACHE`."""
    return bucket_majority(_kept(list(seeds)), min_total)
