"""Dask backends of :func:`urnlib.runner.run_plan`: where the runs that must be trained are trained.

``run_plan(..., workers=, scheduler=)`` picks one:

* ``workers`` None or 1, no ``scheduler``: in this process, one run after another (no Dask at all);
* ``workers=N`` or ``"auto"`` (one per core): a :class:`distributed.LocalCluster` of N single-threaded
  worker processes, started for the plan and closed after it;
* ``scheduler="tcp://host:8786"``: the workers of a running Dask scheduler (``dask scheduler`` and
  ``dask worker tcp://host:8786`` started by hand, each in an environment with this urnlib installed);
* ``scheduler="slurm:path/cluster.yaml"`` (or ``pbs:``, ``sge:``, ``lsf:``, ``htcondor:``, ``moab:``,
  ``oar:``): a batch-queue cluster of dask-jobqueue, described by a small YAML file
  (``notebooks/params/cluster.example.yaml`` shows one); ``workers=N`` there overrides the file's count.

Every worker sets torch to one thread, so a run gives the same numbers on any worker as in a process
with one thread; runs go to a GPU where ``device`` asks for one (``auto``: when the worker has one).

**Who writes the store: the client.** A cluster's nodes need not see the client's file system, so a
worker returns its :class:`~urnlib.results.Trained` (weights on the CPU, with the worker's machine and
library versions) and the client writes it, atomically, while it holds the run's lock
(:meth:`~urnlib.results.RunStore.lock`, taken before the run is submitted, so another process asking
for the run waits and then loads it). A worker whose component or library versions differ from the
client's would store numbers under the wrong versions: its run fails instead.

**How checkpoints travel.** The training function gets a :class:`~urnlib.cluster_runs.DaskSink` as its
``checkpoint`` (a :class:`~urnlib.train.CheckpointSink`: ``fit`` calls ``load()`` once and
``save(state)`` after every epoch). ``save`` puts the checkpoint's bytes into the run's
:class:`distributed.Variable` (held by the scheduler; it returns once the scheduler has them) and logs
an event; on each event the client copies the bytes into the store's ``.checkpoints/`` file of the
run. Before submitting, the client puts that file's bytes (from an earlier, interrupted session) into
the Variable. So a run whose worker dies (a killed process, a lost node) is resubmitted by Dask to
another worker (up to the scheduler's ``distributed.scheduler.allowed-failures``, 3 by default), whose
``load()`` resumes from the last epoch saved, losing at most the epoch that was under way; and a plan
interrupted and started again resumes its unfinished runs from the client's files. Checkpoints pass
through the scheduler's memory (a few hundred MB each at most).

A run that raises is not retried (its error would recur): it is reported at once, with its traceback,
and the others go on; :func:`urnlib.runner.run_plan` raises one error naming every failed run at the end.
The client shows one bar over the runs (done, running, failed, ETA, each running run's epoch, from the
workers' events) and prints the address of the Dask dashboard (served when bokeh is installed).

This module checks the parameters and starts the clusters; :mod:`urnlib.cluster_runs` runs the plan on them.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import platform
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from urnlib.errors import BackendError, DeviceError
from urnlib.params import ParameterError, check_choice, check_int
from urnlib.progress import note

__all__ = ["DEVICES", "JOBQUEUE", "check_workers", "check_scheduler", "check_device", "resolve_device",
           "machine", "connect", "local_cluster", "read_cluster_file", "jobqueue_cluster"]

DEVICES = ("auto", "cpu", "cuda")
#: prefixes of ``scheduler`` for batch-queue clusters, and their dask-jobqueue classes
JOBQUEUE = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster", "lsf": "LSFCluster",
            "htcondor": "HTCondorCluster", "moab": "MoabCluster", "oar": "OARCluster"}
ADDRESS_SCHEMES = ("tcp://", "tls://", "ucx://", "ws://", "wss://", "inproc://")
CONNECT_TIMEOUT = 10.0  #: seconds to wait for an existing scheduler to answer


# --------------------------------------------------------------------------- parameters
def check_workers(workers: int | str | None) -> int | None:
    """The number of local worker processes ``workers`` asks for (``"auto"``: one per core), or ``None``."""
    if workers is None:
        return None
    if workers == "auto":
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return check_int("workers", workers, minimum=1,
                     message="is not allowed: pass a number of worker processes >= 1, 'auto' (one per core), "
                             "or None (train in this process, one run after another)")


def check_scheduler(scheduler: str | None) -> tuple[str, str] | None:
    """``("address", "tcp://...")``, ``("slurm", path)`` (a :data:`JOBQUEUE` kind), or ``None``."""
    if scheduler is None:
        return None
    if isinstance(scheduler, str) and scheduler.startswith(ADDRESS_SCHEMES):
        return "address", scheduler
    kind, sep, path = scheduler.partition(":") if isinstance(scheduler, str) else ("", "", "")
    if not sep or kind not in JOBQUEUE:
        raise ParameterError(f"scheduler={scheduler!r} is not allowed: pass a Dask scheduler's address "
                             f"('tcp://host:8786'), or KIND:FILE with KIND in {list(JOBQUEUE)} and FILE a "
                             "cluster description (see notebooks/params/cluster.example.yaml)")
    if not Path(path).expanduser().is_file():
        raise ParameterError(f"scheduler={scheduler!r}: the cluster description {path} does not exist")
    return kind, str(Path(path).expanduser())


def check_device(device: str) -> str:
    return check_choice("device", device, DEVICES)


def resolve_device(device: str) -> str:
    """The device a run trains on here: ``auto`` is ``cuda`` where a GPU is present, else ``cpu``."""
    check_device(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise DeviceError(f"device='cuda' but {platform.node() or 'this machine'} has no CUDA GPU that "
                          "torch can use; pass device='auto' (a GPU where there is one) or 'cpu'")
    return device


def machine(device: str) -> dict[str, Any]:
    """The record's ``machine`` of a run trained here on ``device``."""
    info = {"platform": platform.platform(), "host": platform.node(), "cpus": os.cpu_count(),
            "threads": torch.get_num_threads(), "device": device}
    if device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info


# --------------------------------------------------------------------------- clusters
def local_cluster(n_workers: int, **options):
    """A LocalCluster of ``n_workers`` single-threaded worker processes (dashboard on a free port). Dask's
    own log is kept to critical messages: failed and resumed runs are reported by the runner."""
    import logging

    import dask
    from distributed import LocalCluster

    options = {"threads_per_worker": 1, "processes": True, "dashboard_address": ":0",
               "silence_logs": logging.CRITICAL, **options}
    with dask.config.set(UNSET_WORKER_ENV):
        return LocalCluster(n_workers=n_workers, **options)


#: Dask starts worker processes with ``MALLOC_TRIM_THRESHOLD_=65536`` (to give freed memory back to the system
#: at once). That fixes glibc's mmap threshold, so every tensor over 128 KiB is mapped afresh for each batch
#: and its pages fault in again; on this 2-core machine two workers doing so at once each trained 1.2-1.6x
#: slower (CPU time) than a run in a plain process, which ate the second core's gain
#: (benchmarks/sweep_speed.py).
#: Workers of a LocalCluster get the environment of the process that starts them instead.
UNSET_WORKER_ENV = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def read_cluster_file(kind: str, path: str | Path) -> dict[str, Any]:
    """The cluster description in the YAML file ``path``: ``cluster`` (keyword arguments of the
    dask-jobqueue class of ``kind``, see :data:`JOBQUEUE`), and ``workers`` (how many worker processes to
    start) or ``adapt`` (``{minimum: M, maximum: N}``, let Dask scale). Checked, not started."""
    import yaml

    where = f"scheduler='{kind}:{path}'"
    try:
        spec = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as err:
        raise BackendError(f"{where}: cannot read the cluster description ({err})") from None
    allowed = {"cluster", "workers", "adapt"}
    if not isinstance(spec, dict) or set(spec) - allowed or not isinstance(spec.get("cluster", {}), dict):
        raise BackendError(f"{where}: the file must hold a mapping with the keys {sorted(allowed)}: "
                           f"'cluster' the keyword arguments of dask_jobqueue.{JOBQUEUE[kind]}, "
                           "'workers' a number of worker processes or 'adapt' {minimum: M, maximum: N}; "
                           "see notebooks/params/cluster.example.yaml")
    if spec.get("workers") is not None:
        check_workers(spec["workers"])
    if spec.get("adapt") is not None and not isinstance(spec["adapt"], dict):
        raise BackendError(f"{where}: 'adapt' must be a mapping such as {{minimum: 0, maximum: 8}}")
    return {"cluster": spec.get("cluster") or {}, "workers": spec.get("workers"), "adapt": spec.get("adapt")}


def jobqueue_cluster(kind: str, path: str | Path, workers: int | None = None, *, start: bool = True):
    """The dask-jobqueue cluster of the file ``path`` (:func:`read_cluster_file`); with ``start``, scaled
    to ``workers`` (default: the file's ``workers``, else its ``adapt``), which submits the jobs."""
    where = f"scheduler='{kind}:{path}'"
    spec = read_cluster_file(kind, path)
    try:
        jobqueue = importlib.import_module("dask_jobqueue")
    except ImportError:
        raise BackendError(f"{where} needs dask-jobqueue: pip install dask-jobqueue") from None
    try:
        cluster = getattr(jobqueue, JOBQUEUE[kind])(**spec["cluster"])
    except (TypeError, ValueError) as err:
        raise BackendError(f"{where}: dask_jobqueue.{JOBQUEUE[kind]} refuses the 'cluster' settings "
                           f"({err})") from None
    count = workers if workers is not None else spec["workers"]
    if start and count is not None:
        cluster.scale(check_workers(count))
    elif start and spec["adapt"]:
        cluster.adapt(**spec["adapt"])
    elif start:
        cluster.close()
        raise BackendError(f"{where}: the file says neither how many workers to start ('workers: N') nor "
                           "'adapt: {minimum: M, maximum: N}'; pass workers=N or add one of them")
    return cluster


@contextlib.contextmanager
def connect(workers: int | None, scheduler: tuple[str, str] | None) -> Iterator[Any]:
    """A :class:`distributed.Client` of the backend (see the module docstring); clusters it started are
    closed on leaving. Prints the dashboard's address."""
    from distributed import Client

    with contextlib.ExitStack() as stack:
        if scheduler is None:
            cluster = stack.enter_context(local_cluster(workers))
            client = stack.enter_context(Client(cluster, set_as_default=False))
        elif scheduler[0] == "address":
            try:
                client = Client(scheduler[1], timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError) as err:
                raise BackendError(
                    f"scheduler={scheduler[1]!r}: no Dask scheduler answered there within "
                    f"{CONNECT_TIMEOUT:g} s ({type(err).__name__}: {err}). Start one (`dask scheduler`, then "
                    f"`dask worker {scheduler[1]}` on each machine), or pass workers=N for a local cluster"
                ) from None
            stack.enter_context(client)
        else:
            cluster = stack.enter_context(jobqueue_cluster(*scheduler, workers))
            client = stack.enter_context(Client(cluster, set_as_default=False))
        hint = "" if importlib.util.find_spec("bokeh") else " (install bokeh>=3.1 to see it)"
        note(f"Dask cluster: {client.scheduler.address}, dashboard {client.dashboard_link}{hint}")
        yield client
