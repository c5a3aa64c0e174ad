"""The run store: stored runs by key, and the one protocol that loads, checks, trains and saves them.

A run (:class:`~urnlib.records.RunSpec`) lives in ``<root>/<experiment>/<key>/``, named by its key alone:
its label (``name``) is for display and is kept in its record, so relabelling a run moves nothing.

* ``weights.pt``: the model's ``state_dict`` (or the tensors the chapter keeps of it);
* ``record.json`` (:mod:`urnlib.records`): what the run computed and with what, where it trained and the
  checksums of its content and of ``weights.pt``. It is written last and once, so a folder with a valid
  ``record.json`` is a complete run.

A run trained from a working tree that differs from its git commit records the SHA-256 of the difference;
the patch itself is kept once per difference in ``<root>/.diffs/<sha>.patch``, so the code that trained it
can be recovered (``git apply`` on the recorded commit).

**The protocol** (:meth:`RunStore.obtain`; the runner only decides where and in which order): a run that
is stored and current is loaded. What else happens is the ``mode``:

* ``"load"`` (the book): never trains. A missing run is a :class:`MissingRunError` naming it and the
  command that builds it; a stale one is used and flagged (``on_stale="warn"``) or refused
  (``on_stale="error"``).
* ``"train"`` (``make reproduce``): trains the runs that are missing or stale, loads the rest; a
  reproduction interrupted and started again redoes no finished run.
* ``"retrain"``: trains every run again.

Training holds a lock per run key (:meth:`RunStore.claim`), so two processes (or two Dask workers'
clients) never train the same run at once: the second waits, then loads the first's result. Every file
is written atomically (:mod:`urnlib.atomic`). The record's ``machine`` (with the device the run trained
on) and ``execution`` (in-process or Dask, which worker, after which epochs a checkpoint resumed it) are
written by :meth:`RunStore.save` and nowhere else. The ``git`` state of a run trained in this process is
the one when the process first trained (:func:`code_state`): the code the run was trained with, whatever
was edited or committed since (a run trained by Dask workers: the submitting process's state). A run
resumed from a checkpoint records where it finished; where its earlier epochs ran is not kept. The device
is not a parameter: the same run trained on a GPU and on the CPU has the same key (their numbers differ in
the last digits).

A run that is missing, unreadable, incomplete or whose content fails its checksum raises
:class:`MissingRunError` or :class:`CorruptRunError`, naming the folder, what is wrong and the command
that rebuilds it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from urnlib import cluster
from urnlib.atomic import atomic_write, atomic_write_bytes, atomic_write_text
from urnlib.components import library_versions
from urnlib.errors import CheckpointError, CorruptRunError, MissingRunError, RunError
from urnlib.params import check_choice
from urnlib.records import (FORMAT, REQUIRED, Run, RunSpec, Trained, content_checksum, git_state, params_key,
                            sha)

__all__ = ["RunSpec", "Run", "Trained", "RunStore", "RunError", "MissingRunError", "CorruptRunError",
           "StaleRunWarning", "MODES", "ON_STALE", "params_key", "git_state", "FORMAT"]

MODES = ("load", "train", "retrain")  #: what :meth:`RunStore.obtain` may do (see the module docstring)
ON_STALE = ("warn", "error")  #: what a stale run does in mode ``load``

TrainFunction = Callable[[RunSpec, Any], Trained]


class StaleRunWarning(UserWarning):
    """A stored run was made by other component or library versions than the current ones."""


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=1, sort_keys=True, default=float)


_CODE_STATE: dict[str, Any] | None = None


def code_state() -> dict[str, Any]:
    """The checkout's state (:func:`~urnlib.records.git_state`) when this process first trained a run. A
    process imports its code once, so every run it trains is trained with that code, whatever is edited or
    committed while it runs; the state at each run's start or end would name code the process never loaded."""
    global _CODE_STATE
    if _CODE_STATE is None:
        _CODE_STATE = git_state()
    return dict(_CODE_STATE)


class RunStore:
    """Runs of one or more chapters under ``root`` (see the module docstring).

    Args:
        root: folder of the store (created on first save).
        rebuild: the command that rebuilds this store's runs, named in every error (e.g.
            ``"python -m urnlib.cli notebooks --scale paper --only dyck --train"``).
    """

    def __init__(self, root: str | os.PathLike, rebuild: str = "make reproduce"):
        self.root = Path(root)
        self.rebuild = rebuild
        self.checkpoints = self.root / ".checkpoints"
        self.diffs = self.root / ".diffs"

    # ------------------------------------------------------------------ paths and locks
    def folder(self, spec: RunSpec) -> Path:
        return self.root / spec.experiment / spec.key

    def checkpoint(self, spec: RunSpec) -> Path:
        return self.checkpoints / spec.experiment / f"{spec.key}.pt"

    @contextlib.contextmanager
    def lock(self, spec: RunSpec) -> Iterator[None]:
        """Hold the lock of ``spec``'s key (an ``flock`` on ``<root>/.locks/...``) while the block runs."""
        path = self.root / ".locks" / spec.experiment / f"{spec.key}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ reading
    def _corrupt(self, folder: Path, what: str) -> CorruptRunError:
        return CorruptRunError(f"stored run {folder} is corrupt: {what}. "
                               f"Delete the folder and rebuild it with `{self.rebuild}`")

    def read(self, folder: Path, *, weights: bool = True) -> Run:
        """The run stored in ``folder``, verified (key, checksums, weights).

        Raises:
            CorruptRunError: unreadable or inconsistent; the message says what and how to rebuild.
        """
        rec = folder / "record.json"
        try:
            record = json.loads(rec.read_text())
        except FileNotFoundError:
            raise self._corrupt(folder, "record.json is missing (an interrupted write?)") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise self._corrupt(folder, f"{rec.name} is not valid JSON ({err})") from None
        if not isinstance(record, dict):
            raise self._corrupt(folder, "record.json does not hold a mapping")
        if record.get("format", 1) != FORMAT:
            raise self._corrupt(folder, f"record format {record.get('format', 1)} is not {FORMAT}, the only "
                                        "one this urnlib reads")
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            raise self._corrupt(folder, f"record.json lacks the field(s) {', '.join(missing)}")
        key = params_key({"params": record["params"], "components": record["components"]})
        if key != record["key"] or folder.name != key:
            raise self._corrupt(folder, f"its parameters hash to {key}, not to the key {record['key']} it is "
                                        "stored under (edited by hand?)")
        if content_checksum(record) != record["checksums"].get("content"):
            raise self._corrupt(folder, "record.json does not match its content checksum (edited by hand?)")
        tensors = None
        wfile = folder / "weights.pt"
        if not wfile.is_file():
            raise self._corrupt(folder, "weights.pt is missing")
        blob = wfile.read_bytes()
        if sha(blob) != record["checksums"].get("weights"):
            raise self._corrupt(folder, "weights.pt does not match its checksum (truncated or replaced?)")
        if weights:
            try:
                tensors = torch.load(wfile, weights_only=True)
            except Exception as err:  # noqa: BLE001 - any reader error is a corrupt file
                raise self._corrupt(folder, f"weights.pt cannot be read ({type(err).__name__})") from None
        return Run(record, folder, tensors)

    def load(self, spec: RunSpec) -> Run | None:
        """The verified run of ``spec`` (these parameters and current component versions), or ``None``."""
        folder = self.folder(spec)
        if not folder.exists():
            return None
        run = self.read(folder)
        run.spec = spec
        return run

    def others(self, spec: RunSpec) -> list[Run]:
        """Stored runs with ``spec``'s parameters under other component versions (stale ones), newest
        first."""
        parent = self.root / spec.experiment
        found = []
        for rec in sorted(parent.glob("*/record.json")) if parent.is_dir() else []:
            if rec.parent.name == spec.key:
                continue
            try:
                params = json.loads(rec.read_text()).get("params")
            except (OSError, ValueError):
                params = None  # unreadable: read() below says what is wrong
            if params is None or params == spec.params:
                run = self.read(rec.parent, weights=False)
                if run.params == spec.params:
                    run.spec = spec
                    found.append(run)
        return sorted(found, key=lambda r: r.record.get("created", ""), reverse=True)

    def runs(self) -> Iterator[tuple[Path, Run | Exception]]:
        """Every run folder of the store with its verified run, or the error that reading it raised."""
        for rec in sorted(self.root.glob("**/record.json")):
            if ".checkpoints" in rec.parts or ".diffs" in rec.parts:
                continue
            try:
                yield rec.parent, self.read(rec.parent, weights=False)
            except RunError as err:
                yield rec.parent, err

    def missing_patch(self, run: Run) -> Path | None:
        """Where the patch of a run trained from a work tree with uncommitted edits should be and is not
        (``None``: a clean tree's run, or its patch is kept): without it, the code that made the run is
        lost."""
        git = run.record.get("git") or {}
        if not git.get("dirty") or not git.get("diff"):
            return None
        path = self.diffs / f"{git['diff']}.patch"
        return None if path.is_file() else path

    # ------------------------------------------------------------------ the protocol
    def stored(self, spec: RunSpec, mode: str = "load", on_stale: str = "warn") -> Run | None:
        """The run to use without training, or ``None`` when ``mode`` asks for it to be trained.

        Raises:
            MissingRunError: mode ``load`` and no stored run of ``spec`` (or a stale one and
                ``on_stale="error"``).
        """
        check_choice("mode", mode, MODES)
        check_choice("on_stale", on_stale, ON_STALE)
        if mode == "retrain":
            return None
        run = self.load(spec)
        if run is not None and not run.stale:
            return run
        if mode != "load":
            return None
        if run is None:
            others = self.others(spec)
            if not others:
                raise MissingRunError(
                    f"no stored run {spec.name!r} of {spec.experiment} (key {spec.key}) in {self.root}: "
                    f"{self.folder(spec)} does not exist, and the book never trains. Build it with "
                    f"`{self.rebuild}`")
            run = others[0]
        msg = f"stored run {spec.name!r} ({run.path}) is stale: {'; '.join(run.stale_reasons())}"
        if on_stale == "error":
            raise MissingRunError(f"{msg}. Rebuild it with `{self.rebuild}`, or pass on_stale='warn' to use "
                                  "it")
        warnings.warn(msg + "; shown as stale", StaleRunWarning, stacklevel=3)
        return run

    @contextlib.contextmanager
    def claim(self, spec: RunSpec, mode: str) -> Iterator[Run | None]:
        """Hold ``spec``'s lock; give the run another process stored while this one waited for it (then
        there is nothing to train), or ``None``: train it and :meth:`save` it before the block ends."""
        requested = time.time()
        with self.lock(spec):
            run = self.load(spec)
            if run is not None and (run.stale or not (mode == "train" or _written_since(run, requested))):
                run = None
            yield run

    def obtain(self, spec: RunSpec, *, mode: str = "load", on_stale: str = "warn",
               train: TrainFunction | None = None, device: str = "cpu") -> Run:
        """The run of ``spec``: loaded, or (as ``mode`` allows) trained in this process and saved.

        Args:
            spec: the run.
            mode, on_stale: see the module docstring.
            train: its training function (default: the one the spec names).
            device: ``"auto"`` (a GPU where there is one), ``"cpu"`` or ``"cuda"``.
        """
        from urnlib.train import default_device

        cluster.check_device(device)
        run = self.stored(spec, mode, on_stale)
        if run is not None:
            return run
        here = cluster.resolve_device(device)
        with self.claim(spec, mode) as meanwhile:
            if meanwhile is not None:
                return meanwhile
            execution: dict[str, Any] = {"backend": "in-process"}
            resumed = self.checkpoint_epoch(spec)
            if resumed is not None:
                execution["resumed_after_epoch"] = [resumed + 1]
            git = code_state()  # the code this process trains with, not the tree's state when it is stored
            with default_device(here):
                trained = (train or spec.trainer())(spec, self.checkpoint(spec))
            return self.save(spec, trained, machine=cluster.machine(here), execution=execution, git=git)

    def checkpoint_epoch(self, spec: RunSpec) -> int | None:
        """The epoch (0-based) of ``spec``'s checkpoint, or ``None`` where it has none or an unreadable one
        (training then starts afresh or names the damage itself)."""
        from urnlib.train import checkpoint_from_bytes

        path = self.checkpoint(spec)
        if not path.is_file():
            return None
        try:
            epoch = checkpoint_from_bytes(path.read_bytes(), str(path)).get("epoch")
        except CheckpointError:  # damaged: the training function says so
            return None
        return int(epoch) if isinstance(epoch, int) else None

    # ------------------------------------------------------------------ writing
    def save(self, spec: RunSpec, trained: Trained, *, machine: dict[str, Any] | None = None,
             execution: dict[str, Any] | None = None, git: dict[str, Any] | None = None,
             extra: dict[str, Any] | None = None) -> Run:
        """Write a finished run, weights first, then its record, each once and atomically; then drop its
        checkpoint and the same run stored under older component versions. Call it holding the lock.

        Args:
            machine: where it trained (default: this machine's CPU; :func:`urnlib.cluster.machine`).
            execution: how (``{"backend": "in-process"}``, or Dask's scheduler and worker).
            git: the checkout's state (default: now; :meth:`obtain` passes :func:`code_state`).
                A dirty tree's patch is kept in ``.diffs/``.
            extra: more fields outside the content checksum (e.g. ``restamped_from``).
        """
        folder = self.folder(spec)
        folder.mkdir(parents=True, exist_ok=True)
        weights = {k: v.detach().cpu().clone() for k, v in trained.weights.items()}
        atomic_write(folder / "weights.pt", lambda tmp: torch.save(weights, tmp))
        record = {
            "format": FORMAT,
            "experiment": spec.experiment,
            "name": spec.name,
            **({"coords": spec.coords} if spec.coords else {}),
            "key": spec.key,
            "params": spec.params,
            "components": spec.versions,
            "libraries": library_versions(spec.components),
            "history": trained.history,
            "final": trained.final,
            "wall_time_s": round(trained.wall_time, 2),
            "cpu_time_s": None if trained.cpu_time is None else round(trained.cpu_time, 2),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine if machine is not None else cluster.machine("cpu"),
            "git": self._git(git),
        }
        if execution:
            record["execution"] = execution
        record.update(extra or {})
        # a JSON round trip first, so the checksum covers exactly what a reader will see
        record = json.loads(json.dumps(record, default=float))
        record["checksums"] = {"content": content_checksum(record),
                               "weights": sha((folder / "weights.pt").read_bytes())}
        atomic_write_text(folder / "record.json", _dump(record))
        self.checkpoint(spec).unlink(missing_ok=True)
        for old in self.others(spec):  # the same run under older component versions: replaced
            shutil.rmtree(old.path, ignore_errors=True)
        return Run(record, folder, weights, spec)

    def _git(self, git: dict[str, Any] | None) -> dict[str, Any]:
        """The record's ``git``: a dirty tree's patch goes to ``.diffs/<sha>.patch`` (once per difference)."""
        state = dict(git if git is not None else git_state())
        patch = state.pop("patch", None)
        if patch is not None:
            path = self.diffs / f"{state['diff']}.patch"
            if not path.is_file():
                atomic_write_bytes(path, patch)
        return state

    def rewrite(self, run: Run, record: dict[str, Any], folder: Path | None = None) -> Run:
        """Write ``record`` (a stored run's, changed by a migration: a new name or layout, not new numbers)
        with a fresh content checksum, moving the run to ``folder`` when given; return it verified."""
        record = json.loads(json.dumps(record, default=float))
        record["checksums"] = {**record["checksums"], "content": content_checksum(record)}
        atomic_write_text(run.path / "record.json", _dump(record))
        if folder is not None and folder != run.path:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.replace(run.path, folder)
            return self.read(folder, weights=False)
        return self.read(run.path, weights=False)


def _written_since(run: Run, since: float) -> bool:
    """Whether ``run`` was written after ``since`` (a ``time.time()``): another process trained it."""
    try:
        return (run.path / "record.json").stat().st_mtime >= since
    except FileNotFoundError:
        return False
