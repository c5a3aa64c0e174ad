"""The runs of :func:`urnlib.runner.run_plan` on Dask workers: what a worker runs for one run
(:func:`train_task`, with a :class:`DaskSink` for its checkpoints) and what the client does meanwhile
(:func:`run_jobs`: submit, show progress, copy checkpoints into the store's ``.checkpoints/``, store
finished runs, report failed ones). :mod:`urnlib.cluster` describes the design and starts the clusters.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from urnlib.atomic import atomic_write_bytes
from urnlib.cluster import machine, resolve_device
from urnlib.errors import BackendError
from urnlib.progress import RunsBar
from urnlib.records import RunSpec, Trained
from urnlib.train import checkpoint_bytes, checkpoint_from_bytes, default_device

__all__ = ["DaskSink", "train_task", "run_jobs", "Failure", "POLL"]

POLL = 0.25  #: seconds between looks at the runs in flight

#: the Dask priority of the runs submitted from this thread: a free worker takes a higher one first, runs of
#: equal priority in the order submitted (``experiments.orchestrate.run_chapters`` ranks the chapters)
PRIORITY: ContextVar[int] = ContextVar("urnlib_runs_priority", default=0)
#: set once this thread's runs are submitted (``run_chapters`` submits each plan after the ones before it)
SUBMITTED: ContextVar[threading.Event | None] = ContextVar("urnlib_runs_submitted", default=None)


# --------------------------------------------------------------------------- the worker's side
class DaskSink:
    """The checkpoint of one run on a Dask worker (a :class:`~urnlib.train.CheckpointSink`): the state is
    kept in the Dask :class:`~distributed.Variable` ``variable`` and each save is announced as an event
    of ``topic`` (see :mod:`urnlib.cluster`)."""

    def __init__(self, variable: str, topic: str, run: str):
        self.variable, self.topic, self.run = variable, topic, run
        self.resumed_after: list[int] = []  # epochs after which attempts of this run resumed

    def _var(self):
        from distributed import Variable, get_client

        return Variable(self.variable, client=get_client())

    def load(self) -> dict[str, Any] | None:
        value = self._var().get(timeout=60)
        self.resumed_after = list(value.get("resumed_after", []))
        if value.get("state") is None:
            return None
        state = checkpoint_from_bytes(value["state"], f"the checkpoint of run {self.run}")
        self.resumed_after.append(int(state["epoch"]) + 1)
        _event(self.topic, {"run": self.run, "event": "epoch", "epoch": int(state["epoch"]) + 1,
                            "epochs": state.get("epochs"), "resumed": True})
        return state

    def save(self, state: dict[str, Any]) -> None:
        epoch = int(state["epoch"]) + 1
        value = {"epoch": epoch, "state": checkpoint_bytes(state), "resumed_after": self.resumed_after}
        self._var().set(value)  # returns once the scheduler holds it
        _event(self.topic, {"run": self.run, "event": "epoch", "epoch": epoch, "epochs": state.get("epochs")})


def _event(topic: str, message: dict[str, Any]) -> None:
    from distributed import get_worker

    get_worker().log_event(topic, message)


def train_task(spec: RunSpec, train: Callable | None, device: str, variable: str, topic: str,
               run: str) -> tuple[Trained, dict[str, Any]]:
    """What a worker runs for one run: its training function with a :class:`DaskSink`, on one torch thread.
    Returns the run's :class:`Trained` (weights on the CPU) and where and how it was trained."""
    from distributed import get_worker

    from urnlib.components import library_versions, versions

    os.environ["URNLIB_QUIET"] = "1"  # no epoch bars in the worker's log: the client shows the epochs
    torch.set_num_threads(1)
    address = get_worker().address
    _event(topic, {"run": run, "event": "start", "worker": address})
    here = resolve_device(device)
    sink = DaskSink(variable, topic, run)
    with default_device(here):
        trained = (train or spec.trainer())(spec, sink)
    trained.weights = {k: v.detach().cpu() for k, v in trained.weights.items()}
    info = {"machine": machine(here), "worker": address, "resumed_after": sink.resumed_after,
            "components": versions(spec.components), "libraries": library_versions(spec.components)}
    return trained, info


# --------------------------------------------------------------------------- the client's side
@dataclass
class Failure:
    """A run that did not finish: its spec, ``summary`` (``Type: message``) and the worker's traceback."""

    spec: RunSpec
    summary: str
    traceback: str


@dataclass
class _Job:
    spec: RunSpec
    run: str
    variable: Any
    checkpoint: Path
    saved: int = 0  # the last epoch copied into the checkpoint file
    latest: int = 0  # the last epoch announced
    finished: bool = False  # stored or failed: later events of it are ignored


def _flush(job: _Job, force: bool = False) -> None:
    """Copy the run's newest checkpoint from its Variable into its file (atomically)."""
    if job.latest <= job.saved and not force:
        return
    try:
        value = job.variable.get(timeout=10)
    except Exception:  # noqa: BLE001 - the scheduler is gone: the file keeps the last copy
        return
    if value.get("state") is None or value.get("epoch", 0) <= job.saved:
        return
    atomic_write_bytes(job.checkpoint, value["state"])
    job.saved = value["epoch"]


def run_jobs(client, specs: Sequence[RunSpec], *, checkpoint: Callable[[RunSpec], Path],
             train: Callable | None, device: str,
             done: Callable[[RunSpec, Trained, dict], None]) -> list[Failure]:
    """Train ``specs`` on ``client``'s workers; ``done(spec, trained, info)`` is called on this process as
    each one finishes (it stores it; an error it raises fails the run). Returns the runs that failed."""
    from distributed import Variable

    token = uuid.uuid4().hex[:10]
    topic, events = f"urnlib-runs-{token}", queue.SimpleQueue()
    jobs: dict[Any, _Job] = {}  # the futures in flight
    by_run: dict[str, _Job] = {}
    failures: list[Failure] = []
    client.subscribe_topic(topic, events.put)
    with RunsBar(len(specs)) as bar:
        try:
            for i, spec in enumerate(specs):
                path = checkpoint(spec)
                job = _Job(spec, str(i), Variable(f"urnlib-checkpoint-{token}-{i}", client=client), path)
                by_run[job.run] = job
                blob = path.read_bytes() if path.is_file() else None  # from an interrupted session
                job.variable.set({"epoch": 0, "state": blob, "resumed_after": []})
                future = client.submit(train_task, spec, train, device, job.variable.name, topic, job.run,
                                       pure=False, retries=0, key=f"urnlib-train-{spec.name}-{token}-{i}",
                                       priority=PRIORITY.get())
                jobs[future] = job
            if (submitted := SUBMITTED.get()) is not None:
                submitted.set()
            while jobs:
                time.sleep(POLL)
                _drain(events, by_run, bar)
                for future in [f for f in jobs if f.done()]:
                    job = jobs.pop(future)  # dropping the future frees its result on the cluster
                    _drain(events, by_run, bar)  # its last epochs before it is stored
                    job.finished = True
                    failure = _finish(future, job, done)
                    bar.finished(job.spec.name, failed=failure is not None)
                    if failure is not None:
                        failures.append(failure)
                        spec = failure.spec
                        bar.note(f"run {spec.name!r} ({spec.experiment}, key {spec.key}) failed; the others "
                                 f"go on:\n{failure.traceback}")
        finally:
            _drain(events, by_run, bar)
            for job in jobs.values():  # interrupted: keep what the unfinished runs reached
                _flush(job, force=True)
            client.cancel(list(jobs))
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(topic)
            for job in by_run.values():
                with contextlib.suppress(Exception):
                    job.variable.delete()
    return failures


def _drain(events: queue.SimpleQueue, by_run: dict[str, _Job], bar: RunsBar) -> None:
    while True:
        try:
            _, message = events.get_nowait()
        except queue.Empty:
            return
        job = by_run.get(message.get("run")) if isinstance(message, dict) else None
        if job is None or job.finished:
            continue
        if message["event"] == "start":
            bar.started(job.spec.name)
        elif message["event"] == "epoch":
            if message.get("resumed"):
                bar.note(f"run {job.spec.name!r} resumes after epoch {message['epoch']} from its checkpoint")
            job.latest = max(job.latest, int(message["epoch"]))
            bar.epoch(job.spec.name, int(message["epoch"]), message.get("epochs"))
            _flush(job)


def _check_versions(spec: RunSpec, info: dict[str, Any]) -> None:
    """Refuse a run whose worker had other component or library versions than this process (the store
    records this process's); torch builds that differ only in their local label (``+cpu``, ``+cu128``)
    are the same version."""
    from urnlib.components import library_versions, versions

    def plain(libs):
        return {k: v.split("+")[0] if k == "torch" else v for k, v in libs.items()}

    differ = {}
    if info["components"] != versions(spec.components):
        differ["components"] = (info["components"], versions(spec.components))
    if plain(info["libraries"]) != plain(library_versions(spec.components)):
        differ["libraries"] = (info["libraries"], library_versions(spec.components))
    if differ:
        raise BackendError(f"worker {info['worker']} has other versions than this process (worker, here): "
                           f"{differ}; install the same urnlib and libraries on the workers")


def _finish(future, job: _Job, done: Callable) -> Failure | None:
    """Store a finished run through ``done``, or describe why it failed (its checkpoint kept)."""
    spec = job.spec
    try:
        if future.status != "finished":
            try:
                error, tb = future.exception(), future.traceback()
            except Exception as err:  # noqa: BLE001 - cancelled (the scheduler went away)
                error, tb = err, None
            _flush(job, force=True)  # a failed run keeps the epochs it reached
            text = "".join(traceback.format_exception(type(error), error, tb))
            if type(error).__name__ == "KilledWorker":
                text += (f"\nThe workers running {spec.name!r} died, again and again; its checkpoint is kept "
                         "and the next run of the plan resumes from it.")
            return Failure(spec, f"{type(error).__name__}: {error}", text)
        trained, info = future.result()
        _check_versions(spec, info)
        done(spec, trained, info)
        return None
    except Exception as err:  # noqa: BLE001 - storing failed: report it like a failed run
        return Failure(spec, f"{type(err).__name__}: {err}", traceback.format_exc())
