"""Schedule a chapter's plan of runs on a backend; the store (:mod:`urnlib.results`) does the rest.

A chapter's config expands to a list of :class:`~urnlib.records.RunSpec` (model x size x setting x
seed); :func:`run_plan` returns the :class:`~urnlib.records.Run` of each, by name. What may happen to a
run (load it, train it, refuse a stale one) is the store's protocol and its ``mode`` (see
:mod:`urnlib.results`); the runner only decides where the runs that must be trained are trained and in
which order: in this process one after another (the default, for tiny scales and CI), or on the worker
processes of a Dask cluster (local, a running scheduler, or a batch queue; see :mod:`urnlib.cluster`).
``device`` (``auto``, ``cpu``, ``cuda``) says where a run trains; the store records it in the run's
``machine``, not in its parameters: a run's key does not depend on it.

On a cluster the client holds each submitted run's claim (:meth:`~urnlib.results.RunStore.claim`) until
the run is stored, and this process writes the store (see :mod:`urnlib.cluster` for why and for how
checkpoints travel).

Failures: in this process, the first run that raises stops the plan with its own exception (the runs
before it are stored). On a cluster, a run that raises is reported at once with its traceback, the
others go on and are stored, and at the end a :class:`PlanError` names every failed run.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from urnlib import cluster, cluster_runs
from urnlib.params import ParameterError, check_choice
from urnlib.progress import RunsBar
from urnlib.results import (MODES, ON_STALE, Run, RunSpec, RunStore, StaleRunWarning, Trained,
                            code_state)

__all__ = ["MODES", "ON_STALE", "StaleRunWarning", "PlanError", "run_plan"]

TrainFunction = Callable[[RunSpec, Path], Trained]


class PlanError(RuntimeError):
    """Runs of a plan failed on a cluster; the others were stored. ``failures``: the
    :class:`urnlib.cluster_runs.Failure` of each (spec, summary, traceback); ``runs``: the runs obtained."""

    def __init__(self, failures: list, runs: dict[str, Run]):
        self.failures, self.runs = failures, runs
        lines = [f"  - {f.spec.name!r} ({f.spec.experiment}, key {f.spec.key}): {f.summary}"
                 for f in failures]
        tracebacks = "\n".join(f"--- {f.spec.name!r}\n{f.traceback.rstrip()}" for f in failures)
        super().__init__(f"{len(failures)} run(s) of the plan failed; the {len(runs)} other(s) are stored, "
                         "and a failed run resumes from its last checkpoint when the plan runs again:\n"
                         + "\n".join(lines) + "\n\nTracebacks:\n" + tracebacks)


def run_plan(specs: Sequence[RunSpec], store: RunStore, *, mode: str = "load", on_stale: str = "warn",
             train: TrainFunction | None = None, workers: int | str | None = None,
             scheduler: str | None = None, device: str = "cpu") -> dict[str, Run]:
    """Every run of the plan, by name (see the module docstring).

    Args:
        specs: the plan; every run needs its own name.
        store: where runs are loaded from and stored.
        mode, on_stale: see the module docstring.
        train: the training function of every run (default: the one each spec names); on a cluster it
            must be importable by the workers (a module-level function of an installed module).
        workers: ``None`` or 1 (train here, one run after another), N (a local Dask cluster of N
            single-threaded worker processes) or ``"auto"`` (one per core).
        scheduler: ``"tcp://host:port"`` (a running Dask scheduler) or ``"slurm:FILE"``, ``"pbs:FILE"``, ...
            (a batch-queue cluster described by FILE; see ``notebooks/params/cluster.example.yaml``).
        device: ``"auto"`` (a GPU where the machine that trains has one), ``"cpu"`` or ``"cuda"``.

    Raises:
        PlanError: runs failed on a cluster (the others are stored).
    """
    check_choice("mode", mode, MODES)
    check_choice("on_stale", on_stale, ON_STALE)
    n_workers, where = cluster.check_workers(workers), cluster.check_scheduler(scheduler)
    cluster.check_device(device)
    if where is not None and where[0] == "address" and n_workers not in (None, 1):
        raise ParameterError(f"workers={workers!r} with scheduler={scheduler!r}: a running scheduler has the "
                             "workers it has; pass workers=None")
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ParameterError(f"the plan names these runs twice: {duplicates}; every run needs its own name")
    # a run is its parameters: specs with the same key (two labels that coincide at a tiny scale) are one
    # run, obtained once and returned under each name
    first: dict[tuple[str, str], RunSpec] = {}
    for spec in specs:
        first.setdefault((spec.experiment, spec.key), spec)
    runs: dict[str, Run] = {}
    todo = []
    for spec in first.values():
        run = store.stored(spec, mode, on_stale)
        if run is None:
            todo.append(spec)
        else:
            runs[spec.name] = run
    if todo and where is None and n_workers in (None, 1):
        cluster.resolve_device(device)  # a GPU asked for and absent: say so before training anything
        with RunsBar(len(todo)) as bar:
            for spec in todo:
                bar.started(spec.name)
                runs[spec.name] = store.obtain(spec, mode=mode, on_stale=on_stale, train=train,
                                               device=device)
                bar.finished(spec.name)
    elif todo:
        failures = _run_on_dask(todo, store, mode, train, n_workers, where, device, runs)
        if failures:
            raise PlanError(failures, _each(specs, first, runs))
    return _each(specs, first, runs)


def _each(specs: Sequence[RunSpec], first: dict[tuple[str, str], RunSpec], runs: dict[str, Run]
          ) -> dict[str, Run]:
    """``{name: run}`` for every spec of the plan, each run carrying its own spec (coordinates, label)."""
    out = {}
    for spec in specs:
        run = runs.get(first[(spec.experiment, spec.key)].name)
        if run is not None:
            out[spec.name] = run if run.spec is spec else replace(run, spec=spec)
    return out


def _run_on_dask(todo: list[RunSpec], store: RunStore, mode: str, train: TrainFunction | None,
                 n_workers: int | None, where: tuple[str, str] | None, device: str,
                 runs: dict[str, Run]) -> list:
    """Train ``todo`` on a Dask backend, holding each run's lock until it is stored or has failed."""
    locks: dict[str, contextlib.ExitStack] = {}
    try:
        submit = []
        for spec in sorted(todo, key=lambda s: (s.experiment, s.folder_name)):  # one order: no deadlock
            locks[spec.name] = stack = contextlib.ExitStack()
            run = stack.enter_context(store.claim(spec, mode))
            if run is not None:  # another process stored it meanwhile
                runs[spec.name] = run
                stack.close()
            else:
                submit.append(spec)
        if not submit:
            return []

        # this checkout's state when the plan starts (a local cluster's workers import its code then; a remote
        # worker's own checkout is not known here), not when a run ends
        git = code_state()

        def done(spec: RunSpec, trained: Trained, info: dict[str, Any]) -> None:
            execution = {"backend": "dask", "scheduler": address, "worker": info["worker"],
                         "resumed_after_epoch": info["resumed_after"], "libraries": info["libraries"]}
            runs[spec.name] = store.save(spec, trained, machine=info["machine"], execution=execution,
                                         git=git)
            locks[spec.name].close()

        order = {spec.name: i for i, spec in enumerate(todo)}
        submit.sort(key=lambda s: order[s.name])
        with cluster.connect(n_workers, where) as client:
            address = client.scheduler.address
            return cluster_runs.run_jobs(client, submit, checkpoint=store.checkpoint, train=train,
                                         device=device, done=done)
    finally:
        for stack in locks.values():
            stack.close()
