"""Stored runs: each training run saved with everything needed to trust and re-draw it.

A run is described by a :class:`RunSpec`: its chapter (``experiment``), label (``name``), parameters
(model, data, training; JSON) and the components (:mod:`urnlib.components`) whose behaviour decides
what it computes. Its key hashes the parameters *and* the components' versions, and its folder
``<root>/<experiment>/<name>-<key>/`` holds

* ``weights.pt``: the model's ``state_dict`` (or the tensors the chapter keeps of it);
* ``record.json``: parameters, component versions, library versions (torch, numpy, and e.g. the spaCy
  model or the npm corpora where a component depends on them), per-epoch history, final metrics, CPU
  and wall time, thread count, date, machine, git commit, and checksums of its own content and of
  ``weights.pt``. It is written last, so a folder with a valid ``record.json`` is a complete run.

Every file is written under a temporary name unique to the writing process and moved into place with
``os.replace``; :meth:`RunStore.lock` is a lock per run key, so two processes (or two Dask workers)
never train the same run at once: the second waits, then loads the first's result.

A stored run is *stale* when a component it used has a newer version now, or a library that can
change its numbers has another version (:meth:`Run.stale_reasons` says which). A run that is missing,
unreadable, incomplete or whose content fails its checksum raises :class:`MissingRunError` or
:class:`CorruptRunError`, naming the folder, what is wrong and the command that rebuilds it. Only a
:class:`~urnlib.runner` in mode ``train`` or ``retrain`` trains; the book loads.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import platform
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

import urnlib
from urnlib.components import library_versions, versions
from urnlib.params import ParameterError

__all__ = ["RunSpec", "Run", "Trained", "RunStore", "RunError", "MissingRunError", "CorruptRunError",
           "params_key", "git_state", "FORMAT"]

PACKAGE_ROOT = Path(urnlib.__file__).resolve().parent
FORMAT = 2  #: record format: 2 = component versions, library versions, checksums (1: source fingerprints)
REQUIRED = ("experiment", "name", "key", "params", "components", "libraries", "history", "final", "checksums")


class RunError(ParameterError):
    """A stored run cannot be used as it is; the message names it and says how to rebuild it."""


class MissingRunError(RunError):
    """No stored run has these parameters and component versions, and this mode does not train."""


class CorruptRunError(RunError):
    """A stored run is unreadable, incomplete, or its content does not match its checksum or key."""


def params_key(params: dict[str, Any]) -> str:
    """12-hex-digit SHA-256 of the canonical JSON of ``params`` (sorted keys)."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=float).encode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class RunSpec:
    """What one run is: enough to find it in a store, and (with ``train``) to train it anywhere.

    Args:
        experiment: the store's folder for the chapter, e.g. ``"dyck"`` (may contain ``/``).
        name: the run's label, e.g. ``"3-TURN"`` or ``"URN 16 seed 2"``.
        params: everything that determines the run (JSON-able; hashed into the key).
        components: names of the :mod:`urnlib.components` whose behaviour the run depends on.
        train: ``"module:function"`` that trains it, ``function(spec, checkpoint) -> Trained``.
    """

    experiment: str
    name: str
    params: dict[str, Any] = field(hash=False)
    components: tuple[str, ...] = ()
    train: str = ""

    @property
    def versions(self) -> dict[str, int]:
        return versions(self.components)

    @property
    def key(self) -> str:
        return params_key({"params": self.params, "components": self.versions})

    @property
    def folder_name(self) -> str:
        return f"{self.name}-{self.key}"


@dataclass
class Trained:
    """What a training function returns for the store."""

    history: list[dict[str, Any]]
    final: dict[str, Any]
    weights: dict[str, torch.Tensor]
    wall_time: float
    cpu_time: float | None = None


def git_state(paths: list[Path] | None = None) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout holding urnlib."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=10)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode:
            return {"commit": None, "dirty": None}
        dirty = git("status", "--porcelain", "--", *[str(p) for p in (paths or [PACKAGE_ROOT])])
        return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def _content(record: dict[str, Any]) -> dict[str, Any]:
    """The part of a record its content checksum covers: what it computed and with what."""
    return {k: record[k] for k in ("experiment", "name", "key", "params", "components", "libraries",
                                   "history", "final")}


@dataclass
class Run:
    """One stored run (see the module docstring for the fields of ``record``)."""

    record: dict[str, Any]
    path: Path
    _weights: dict[str, torch.Tensor] | None = field(default=None, repr=False)

    @property
    def weights(self) -> dict[str, torch.Tensor] | None:
        """The stored tensors (``weights.pt``), read on first use; ``None`` for a legacy run without them."""
        if self._weights is None and (self.path / "weights.pt").is_file():
            try:
                self._weights = torch.load(self.path / "weights.pt", weights_only=True)
            except Exception as err:  # noqa: BLE001 - any reader error is a corrupt file
                raise CorruptRunError(f"stored run {self.path} is corrupt: weights.pt cannot be read "
                                      f"({type(err).__name__})") from None
        return self._weights

    @property
    def name(self) -> str:
        return self.record["name"]

    @property
    def params(self) -> dict[str, Any]:
        return self.record["params"]

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.record["history"]

    @property
    def final(self) -> dict[str, Any]:
        return self.record["final"]

    def stale_reasons(self) -> list[str]:
        """Why this run would compute something else today: ``[]`` when it is current."""
        if self.record.get("format", 1) < FORMAT:
            return ["made before component versions (record format 1, source fingerprints): "
                    "restamp or retrain"]
        reasons = []
        for name, made in sorted(self.record["components"].items()):
            try:
                now = versions([name])[name]
            except KeyError:
                reasons.append(f"component {name} no longer exists")
                continue
            if now != made:
                reasons.append(f"component {name} v{made} -> v{now}")
        current = library_versions(self.record["components"])
        for lib, made in sorted(self.record["libraries"].items()):
            if current.get(lib, made) != made:
                reasons.append(f"library {lib} {made} -> {current[lib]}")
        return reasons

    @property
    def stale(self) -> bool:
        return bool(self.stale_reasons())

    def column(self, key: str) -> list:
        return [row[key] for row in self.history]


def _atomic_write(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


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

    # ------------------------------------------------------------------ paths and locks
    def folder(self, spec: RunSpec) -> Path:
        return self.root / spec.experiment / spec.folder_name

    def checkpoint(self, spec: RunSpec) -> Path:
        return self.checkpoints / spec.experiment / f"{spec.folder_name}.pt".replace(" ", "_")

    @contextlib.contextmanager
    def lock(self, spec: RunSpec) -> Iterator[None]:
        """Hold the lock of ``spec``'s key (an ``flock`` on ``<root>/.locks/...``) while the block runs."""
        path = self.root / ".locks" / spec.experiment / f"{spec.folder_name}.lock".replace(" ", "_")
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
        if record.get("format", 1) < FORMAT:
            return self._read_legacy(folder, record, weights)
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            raise self._corrupt(folder, f"record.json lacks the field(s) {', '.join(missing)}")
        key = params_key({"params": record["params"], "components": record["components"]})
        if key != record["key"] or not folder.name.endswith("-" + key):
            raise self._corrupt(folder, f"its parameters hash to {key}, not to the key {record['key']} it is "
                                        "stored under (edited by hand?)")
        if _sha(_canonical(_content(record))) != record["checksums"].get("content"):
            raise self._corrupt(folder, "record.json does not match its content checksum (edited by hand?)")
        tensors = None
        wfile = folder / "weights.pt"
        if not wfile.is_file():
            raise self._corrupt(folder, "weights.pt is missing")
        blob = wfile.read_bytes()
        if _sha(blob) != record["checksums"].get("weights"):
            raise self._corrupt(folder, "weights.pt does not match its checksum (truncated or replaced?)")
        if weights:
            try:
                tensors = torch.load(wfile, weights_only=True)
            except Exception as err:  # noqa: BLE001 - any reader error is a corrupt file
                raise self._corrupt(folder, f"weights.pt cannot be read ({type(err).__name__})") from None
        return Run(record, folder, tensors)

    def _read_legacy(self, folder: Path, record: dict, weights: bool) -> Run:
        """A format-1 record (before component versions): readable, always stale."""
        missing = [k for k in ("name", "params", "history", "final") if k not in record]
        if missing:
            raise self._corrupt(folder, f"record.json lacks the field(s) {', '.join(missing)}")
        tensors = None
        wfile = folder / "weights.pt"
        if weights and wfile.is_file():
            try:
                tensors = torch.load(wfile, weights_only=True)
            except Exception as err:  # noqa: BLE001
                raise self._corrupt(folder, f"weights.pt cannot be read ({type(err).__name__})") from None
        return Run(record, folder, tensors)

    def load(self, spec: RunSpec) -> Run | None:
        """The verified run of ``spec`` (these parameters and current component versions), or ``None``."""
        folder = self.folder(spec)
        if not folder.exists():
            return None
        return self.read(folder)

    def others(self, spec: RunSpec) -> list[Run]:
        """Stored runs with ``spec``'s name and parameters under other component versions (stale ones),
        newest first. A legacy (format 1) run counts when every parameter it recorded has ``spec``'s value
        (settings added to the loop since are absent from its record)."""
        parent = self.root / spec.experiment
        found = []
        for folder in sorted(parent.glob(f"{_glob_escape(spec.name)}-*")) if parent.is_dir() else []:
            if folder == self.folder(spec) or folder.name.rsplit("-", 1)[0] != spec.name:
                continue
            run = self.read(folder, weights=False)
            legacy = run.record.get("format", 1) < FORMAT
            if run.params == spec.params or (legacy and _recorded_within(run.params, spec.params)):
                found.append(run)
        return sorted(found, key=lambda r: r.record.get("created", ""), reverse=True)

    def runs(self) -> Iterator[tuple[Path, Run | Exception]]:
        """Every run folder of the store with its verified run, or the error that reading it raised."""
        for rec in sorted(self.root.glob("**/record.json")):
            if ".checkpoints" in rec.parts:
                continue
            try:
                yield rec.parent, self.read(rec.parent, weights=False)
            except RunError as err:
                yield rec.parent, err

    # ------------------------------------------------------------------ writing
    def save(self, spec: RunSpec, trained: Trained, *, git: dict[str, Any] | None = None) -> Run:
        """Write a finished run: weights first, then its record (atomically each); return it."""
        folder = self.folder(spec)
        folder.mkdir(parents=True, exist_ok=True)
        weights = {k: v.detach().cpu().clone() for k, v in trained.weights.items()}
        _atomic_write(folder / "weights.pt", lambda tmp: torch.save(weights, tmp))
        record = {
            "format": FORMAT,
            "experiment": spec.experiment,
            "name": spec.name,
            "key": spec.key,
            "params": spec.params,
            "components": spec.versions,
            "libraries": library_versions(spec.components),
            "history": trained.history,
            "final": trained.final,
            "wall_time_s": round(trained.wall_time, 2),
            "cpu_time_s": None if trained.cpu_time is None else round(trained.cpu_time, 2),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                        "threads": torch.get_num_threads(), "device": "cpu"},
            "git": git if git is not None else git_state(),
        }
        # a JSON round trip first, so the checksum covers exactly what a reader will see
        record = json.loads(json.dumps(record, default=float))
        record["checksums"] = {"content": _sha(_canonical(_content(record))),
                               "weights": _sha((folder / "weights.pt").read_bytes())}
        text = json.dumps(record, indent=1, sort_keys=True, default=float)
        _atomic_write(folder / "record.json", lambda tmp: tmp.write_text(text))
        return Run(record, folder, weights)


def _recorded_within(old: Any, new: Any) -> bool:
    """Whether every value recorded in ``old`` is in ``new`` at the same place (``new`` may have more
    keys)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and _recorded_within(v, new[k]) for k, v in old.items())
    return old == new


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "[]*?" else c for c in name)
