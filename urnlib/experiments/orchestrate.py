"""Every chapter's plan on one Dask backend at once: ``python -m urnlib.cli train``.

Each chapter obtains its runs with its experiment module's ``run(config)`` (:func:`urnlib.runner.run_plan`
underneath); :func:`run_chapters` runs those of several chapters side by side, each from a thread of its own,
against one cluster, so that a worker that finishes the last run of one chapter takes the next run of another.
The chapters are those of the chapter registry (:mod:`urnlib.chapters.registry`).
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from urnlib import cluster
from urnlib.cluster_runs import PRIORITY, SUBMITTED
from urnlib.chapters import registry
from urnlib.progress import RUNS_LABEL

__all__ = ["run_chapters"]


def run_chapters(chapters: list[str], scale: str, *, workers: int | str | None = None, scheduler: str = "",
                 each: dict[str, dict] | None = None, **overrides) -> dict[str, dict | Exception]:
    """Every run of every chapter's plan (its ``Config.load(scale, **overrides, **each[chapter])``: ``mode``
    ``train`` trains what is missing or stale), on one Dask backend at once: a local cluster of ``workers``
    processes, a batch-queue cluster or a running ``scheduler``, to which each chapter submits its plan from
    a thread of its own (its module's ``run``, one progress bar per chapter). The scheduler gives every free
    worker the next run of any chapter (of the first listed that has one waiting; a chapter submits after the
    ones listed before it have), so no worker waits for another chapter's last runs. Without
    ``workers`` or ``scheduler`` the chapters train here, one after another.

    Every config is loaded (and so validated) before anything trains: a bad parameter stops them all.

    Returns:
        ``{chapter: what its module's run returns}`` (its runs, by name or grouped), or the exception that
        stopped a chapter's plan (the other chapters go on, and whatever it stored stays stored).
    """
    n_workers, where = cluster.check_workers(workers), cluster.check_scheduler(scheduler or None)
    modules = {name: registry.get(name).experiment for name in chapters}
    with contextlib.ExitStack() as stack:
        if where is not None and where[0] == "address":
            address = where[1]
        elif where is not None or n_workers not in (None, 1):
            address = stack.enter_context(cluster.connect(n_workers, where)).scheduler.address
        else:
            address = ""
        configs = {name: module.Config.load(scale, **{**overrides, **(each or {}).get(name, {})},
                                            scheduler=address or None) for name, module in modules.items()}

        names = list(configs)
        submitted = {name: threading.Event() for name in names}

        def one(name: str):
            i = names.index(name)
            if i:  # idle workers take what is submitted first: the chapters listed before this one
                submitted[names[i - 1]].wait()
            RUNS_LABEL.set(name)  # this thread's bars, and its runs' rank: the chapters listed first go first
            PRIORITY.set(len(names) - i)
            SUBMITTED.set(submitted[name])
            try:
                return modules[name].run(configs[name])
            except Exception as exc:  # noqa: BLE001 - reported with the chapter's name, the others go on
                return exc
            finally:
                submitted[name].set()  # also when it had nothing to train, or failed before submitting

        with ThreadPoolExecutor(max(1, len(configs)) if address else 1) as pool:
            done = dict(zip(configs, pool.map(one, configs)))
    return done
