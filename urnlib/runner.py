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

Training holds the store's lock of the run's key (:meth:`~urnlib.results.RunStore.lock`): a second
process asking for the same run waits, then loads the first one's result.
"""

from __future__ import annotations

import importlib
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from urnlib.params import ParameterError, check_choice
from urnlib.results import MissingRunError, Run, RunSpec, RunStore, Trained, wait_for_newer

__all__ = ["MODES", "ON_STALE", "StaleRunWarning", "run_plan", "obtain", "train_function"]

MODES = ("load", "train", "retrain")
ON_STALE = ("warn", "error")

TrainFunction = Callable[[RunSpec, Path], Trained]


class StaleRunWarning(UserWarning):
    """A stored run was made by other component or library versions than the current ones."""


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
    warnings.warn(msg + "; shown as stale", StaleRunWarning, stacklevel=3)
    return run


def obtain(spec: RunSpec, store: RunStore, *, mode: str = "load", on_stale: str = "warn",
           train: TrainFunction | None = None) -> Run:
    """The stored run of ``spec``, trained first if ``mode`` asks for it (see the module docstring)."""
    check_choice("mode", mode, MODES)
    check_choice("on_stale", on_stale, ON_STALE)
    if mode != "retrain":
        run = store.load(spec)
        if run is not None and not run.stale:
            return run
        if mode == "load":
            if run is not None:
                return _stale(run, spec, store, on_stale)
            others = store.others(spec)
            if others:
                return _stale(others[0], spec, store, on_stale)
            raise MissingRunError(
                f"no stored run {spec.name!r} of {spec.experiment} (key {spec.key}) in {store.root}: "
                f"{store.folder(spec)} does not exist, and the book never trains. Build it with "
                f"`{store.rebuild}`")
    requested = time.time()
    with store.lock(spec):
        run = store.load(spec)  # another process may have trained it while this one waited
        if run is not None and not run.stale and (mode == "train" or wait_for_newer(run, requested)):
            return run
        trained = (train or train_function(spec))(spec, store.checkpoint(spec))
        run = store.save(spec, trained)
        store.checkpoint(spec).unlink(missing_ok=True)
        for old in store.others(spec):  # the same run under older component versions: replaced
            if old.record.get("format", 1) > 1 and old.params == spec.params:
                shutil.rmtree(old.path, ignore_errors=True)
    return run


def run_plan(specs: Sequence[RunSpec], store: RunStore, *, mode: str = "load", on_stale: str = "warn",
             train: TrainFunction | None = None) -> dict[str, Run]:
    """Every run of the plan, by name (see the module docstring for ``mode`` and ``on_stale``)."""
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ParameterError(f"the plan names these runs twice: {duplicates}; every run needs its own name")
    return {spec.name: obtain(spec, store, mode=mode, on_stale=on_stale, train=train) for spec in specs}
