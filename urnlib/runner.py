"""Carry out a chapter's plan of runs against a store: load what is stored, train what is asked for.

A chapter's config expands to a list of :class:`~urnlib.results.RunSpec` (model x size x setting x
seed); :func:`run_plan` returns the stored :class:`~urnlib.results.Run` of each, by name. What it may
do is the ``mode``:

* ``"load"`` (the book): never trains. A missing run is a :class:`~urnlib.results.MissingRunError`
  naming it and the command that builds it; a stale one is used and flagged (``on_stale="warn"``) or
  refused (``on_stale="error"``).
* ``"train"`` (``make reproduce``): trains the runs that are missing or stale, loads the rest; a
  reproduction interrupted and started again redoes no finished run.
* ``"retrain"``: trains every run again.

Where the runs that must be trained are trained is the backend (``workers``, ``scheduler``; see
:mod:`urnlib.cluster`): in this process one after another (the default, for tiny scales and CI), or on
the worker processes of a Dask cluster (local, a running scheduler, or a batch queue). Stored runs are
always loaded here. ``device`` (``auto``, ``cpu``, ``cuda``) says where a run trains; it is recorded in
the run's ``machine``, not in its parameters: a run's key does not depend on it.

Training holds the store's lock of the run's key (:meth:`~urnlib.results.RunStore.lock`): a second
process asking for the same run waits, then loads the first one's result. This process writes the
store, for every backend (see :mod:`urnlib.cluster` for why and for how checkpoints travel).

Failures: in this process, the first run that raises stops the plan with its own exception (the runs
before it are stored). On a cluster, a run that raises is reported at once with its traceback, the
others go on and are stored, and at the end a :class:`PlanError` names every failed run.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from urnlib import cluster, cluster_runs
from urnlib.params import ParameterError, check_choice
from urnlib.progress import RunsBar
from urnlib.results import MissingRunError, Run, RunSpec, RunStore, Trained
from urnlib.train import default_device

__all__ = ["MODES", "ON_STALE", "StaleRunWarning", "PlanError", "run_plan", "obtain", "train_function"]

MODES = ("load", "train", "retrain")
ON_STALE = ("warn", "error")

TrainFunction = Callable[[RunSpec, Path], Trained]


class StaleRunWarning(UserWarning):
    """A stored run was made by other component or library versions than the current ones."""


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


def wait_for_newer(run: Run | None, since: float) -> bool:
    """Whether ``run`` was written after ``since`` (a ``time.time()``): another process trained it
    meanwhile."""
    if run is None:
        return False
    try:
        return (run.path / "record.json").stat().st_mtime >= since
    except FileNotFoundError:
        return False


def train_function(spec: RunSpec) -> TrainFunction:
    """The function named by ``spec.train`` (``"module:function"``)."""
    module, _, name = spec.train.partition(":")
    if not module or not name:
        raise ParameterError(f"run {spec.name!r}: its spec names no training function (train={spec.train!r})")
    return getattr(importlib.import_module(module), name)


def _stale(run: Run, spec: RunSpec, store: RunStore, on_stale: str) -> Run:
    reasons = "; ".join(run.stale_reasons())
    msg = f"stored run {spec.name!r} ({run.path}) is stale: {reasons}"
    if on_stale == "error":
        raise MissingRunError(f"{msg}. Rebuild it with `{store.rebuild}`, or pass on_stale='warn' to use it")
    warnings.warn(msg + "; shown as stale", StaleRunWarning, stacklevel=4)
    return run


def _stored(spec: RunSpec, store: RunStore, mode: str, on_stale: str) -> Run | None:
    """The run to use without training, or ``None`` when ``mode`` asks for it to be trained."""
    if mode == "retrain":
        return None
    run = store.load(spec)
    if run is not None and not run.stale:
        return run
    if mode != "load":
        return None
    if run is not None:
        return _stale(run, spec, store, on_stale)
    others = store.others(spec)
    if others:
        return _stale(others[0], spec, store, on_stale)
    raise MissingRunError(
        f"no stored run {spec.name!r} of {spec.experiment} (key {spec.key}) in {store.root}: "
        f"{store.folder(spec)} does not exist, and the book never trains. Build it with `{store.rebuild}`")


def _stored_meanwhile(spec: RunSpec, store: RunStore, mode: str, requested: float) -> Run | None:
    """Under the run's lock: the run another process stored while this one waited for the lock."""
    run = store.load(spec)
    if run is not None and not run.stale and (mode == "train" or wait_for_newer(run, requested)):
        return run
    return None


def _store_trained(spec: RunSpec, store: RunStore, trained: Trained, machine: dict[str, Any],
                   execution: dict[str, Any] | None = None) -> Run:
    """Under the run's lock: write ``trained``, with the machine that trained it; drop its checkpoint and
    the same run stored under older component versions."""
    run = store.save(spec, trained)
    run.record["machine"] = machine
    if execution:
        run.record["execution"] = execution
    path = run.path / "record.json"  # machine and execution lie outside the content checksum
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(json.dumps(run.record, indent=1, sort_keys=True, default=float))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    store.checkpoint(spec).unlink(missing_ok=True)
    for old in store.others(spec):  # the same run under older component versions: replaced
        if old.record.get("format", 1) > 1 and old.params == spec.params:
            shutil.rmtree(old.path, ignore_errors=True)
    return run


def obtain(spec: RunSpec, store: RunStore, *, mode: str = "load", on_stale: str = "warn",
           train: TrainFunction | None = None, device: str = "cpu") -> Run:
    """The stored run of ``spec``, trained first in this process if ``mode`` asks for it (see the module
    docstring); ``device``: ``auto``, ``cpu`` or ``cuda``."""
    check_choice("mode", mode, MODES)
    check_choice("on_stale", on_stale, ON_STALE)
    cluster.check_device(device)
    run = _stored(spec, store, mode, on_stale)
    if run is not None:
        return run
    here = cluster.resolve_device(device)
    requested = time.time()
    with store.lock(spec):
        run = _stored_meanwhile(spec, store, mode, requested)  # another process may have trained it meanwhile
        if run is not None:
            return run
        with default_device(here):
            trained = (train or train_function(spec))(spec, store.checkpoint(spec))
        return _store_trained(spec, store, trained, cluster.machine(here), {"backend": "in-process"})


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
    runs: dict[str, Run] = {}
    todo = []
    for spec in specs:
        run = _stored(spec, store, mode, on_stale)
        if run is None:
            todo.append(spec)
        else:
            runs[spec.name] = run
    if todo and where is None and n_workers in (None, 1):
        cluster.resolve_device(device)  # a GPU asked for and absent: say so before training anything
        with RunsBar(len(todo)) as bar:
            for spec in todo:
                bar.started(spec.name)
                runs[spec.name] = obtain(spec, store, mode=mode, on_stale=on_stale, train=train,
                                         device=device)
                bar.finished(spec.name)
    elif todo:
        failures = _run_on_dask(todo, store, mode, train, n_workers, where, device, runs)
        if failures:
            raise PlanError(failures, {s.name: runs[s.name] for s in specs if s.name in runs})
    return {spec.name: runs[spec.name] for spec in specs}


def _run_on_dask(todo: list[RunSpec], store: RunStore, mode: str, train: TrainFunction | None,
                 n_workers: int | None, where: tuple[str, str] | None, device: str,
                 runs: dict[str, Run]) -> list:
    """Train ``todo`` on a Dask backend, holding each run's lock until it is stored or has failed."""
    locks: dict[str, contextlib.ExitStack] = {}
    requested = time.time()
    try:
        submit = []
        for spec in sorted(todo, key=lambda s: (s.experiment, s.folder_name)):  # one order: no deadlock
            locks[spec.name] = stack = contextlib.ExitStack()
            stack.enter_context(store.lock(spec))
            run = _stored_meanwhile(spec, store, mode, requested)
            if run is not None:
                runs[spec.name] = run
                stack.close()
            else:
                submit.append(spec)
        if not submit:
            return []

        def done(spec: RunSpec, trained: Trained, info: dict[str, Any]) -> None:
            execution = {"backend": "dask", "scheduler": address, "worker": info["worker"],
                         "resumed_after_epoch": info["resumed_after"], "libraries": info["libraries"]}
            runs[spec.name] = _store_trained(spec, store, trained, info["machine"], execution)
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
