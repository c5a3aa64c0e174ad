"""What a run is and what a stored run holds: :class:`RunSpec`, :class:`Trained`, :class:`Run`.

A run is described by a :class:`RunSpec`: its chapter (``experiment``), label (``name``), parameters
(model, data, training; JSON) and the components (:mod:`urnlib.components`) whose behaviour decides
what it computes. Its key hashes the parameters *and* the components' versions. A stored run's
``record.json`` holds the parameters, component versions, library versions (torch, numpy, and e.g. the
spaCy model or the npm corpora where a component depends on them), per-epoch history, final metrics, CPU
and wall time, the machine and device that trained it, date, git commit (and, for a dirty working tree,
the hash of the difference the store keeps beside the runs: :func:`git_state`), and checksums of its own
content and of ``weights.pt``.

A stored run is *stale* when a component it used has a newer version now, or a library that can change
its numbers has another version (:meth:`Run.stale_reasons` says which), unless its core libraries are those
of an environment the project accepts beside the running one (:data:`urnlib.components.OTHER_ENVIRONMENTS`:
the lent GPU machine). :mod:`urnlib.results` (the store)
reads, verifies, trains and writes them.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

import urnlib
from urnlib.components import accepted_environment, library_versions, versions
from urnlib.errors import CorruptRunError, MissingRunError, ParameterError, RunError

__all__ = ["RunSpec", "Run", "Trained", "RunError", "MissingRunError", "CorruptRunError", "params_key",
           "git_state", "git_diff", "FORMAT", "REQUIRED", "content_checksum"]

PACKAGE_ROOT = Path(urnlib.__file__).resolve().parent
FORMAT = 2  #: record format: 2 = component versions, library versions, checksums
REQUIRED = ("experiment", "name", "key", "params", "components", "libraries", "history", "final", "checksums")


def params_key(params: dict[str, Any]) -> str:
    """12-hex-digit SHA-256 of the canonical JSON of ``params`` (sorted keys)."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def canonical(obj: Any) -> bytes:
    """The canonical JSON bytes a checksum is taken of (sorted keys, no spaces)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=float).encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content(record: dict[str, Any]) -> dict[str, Any]:
    """The part of a record its content checksum covers: what it computed and with what, and its
    coordinates (not where or when: ``machine``, ``execution``, ``created`` and ``git`` lie outside it)."""
    return {k: record[k] for k in ("experiment", "name", "coords", "key", "params", "components", "libraries",
                                   "history", "final") if k in record}


def content_checksum(record: dict[str, Any]) -> str:
    """The content checksum of ``record`` (see :func:`content`)."""
    return sha(canonical(content(record)))


@dataclass(frozen=True)
class RunSpec:
    """What one run is: enough to find it in a store, and (with ``train``) to train it anywhere.

    A run's identity is its key (``params`` and the components' versions); where it sits among the
    chapter's runs is ``coords``, data that tables and figures select and group by (:mod:`urnlib.seeds`);
    ``name`` is its display label, derived from them (:meth:`of`), never parsed back.

    Args:
        experiment: the store's folder for the chapter, e.g. ``"dyck"`` (may contain ``/``).
        name: the run's display label, e.g. ``"3-TURN"`` or ``"URN 16 seed 2"``.
        params: everything that determines the run (JSON-able; hashed into the key).
        components: names of the :mod:`urnlib.components` whose behaviour the run depends on.
        train: the function that trains it, ``train(spec, checkpoint) -> Trained`` (an object: the store
            and the workers call it; it is not part of the key).
        coords: the run's coordinates (JSON-able): ``label`` (the group of runs it belongs to, all its
            coordinates but the seed, as displayed), ``seed`` (``None``: a deterministic run), and the
            chapter's own (``model``, ``setting``, ``task``, ``source`` ...).
    """

    experiment: str
    name: str
    params: dict[str, Any] = field(hash=False)
    components: tuple[str, ...] = ()
    train: Callable[["RunSpec", Any], "Trained"] | None = None
    coords: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def of(cls, experiment: str, label: str, params: dict[str, Any], components: tuple[str, ...] = (),
           train: Callable[["RunSpec", Any], "Trained"] | None = None, *, seed: int | None = None,
           **coords: Any) -> "RunSpec":
        """The run of ``label`` under ``seed`` (``None``: one deterministic run), with its coordinates:
        its name is ``"<label> seed <s>"`` (or ``label``), derived here and never parsed."""
        name = label if seed is None else f"{label} seed {seed}"
        return cls(experiment, name, params, tuple(components), train,
                   {"label": label, "seed": seed, **coords})

    @property
    def versions(self) -> dict[str, int]:
        return versions(self.components)

    @property
    def key(self) -> str:
        return params_key({"params": self.params, "components": self.versions})

    @property
    def folder_name(self) -> str:
        """The run's folder in its chapter's store: its key (the label is display, in the record)."""
        return self.key

    def trainer(self) -> Callable[["RunSpec", Any], "Trained"]:
        """The training function of the run (an object the chapter's experiment registered in its spec)."""
        if not callable(self.train):
            raise ParameterError(f"run {self.name!r}: its spec names no training function "
                                 f"(train={self.train!r}); pass the function itself")
        return self.train


@dataclass
class Trained:
    """What a training function returns for the store."""

    history: list[dict[str, Any]]
    final: dict[str, Any]
    weights: dict[str, torch.Tensor]
    wall_time: float
    cpu_time: float | None = None


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=PACKAGE_ROOT, capture_output=True, timeout=30)


def git_diff(paths: list[Path] | None = None) -> bytes:
    """The difference of the working tree's ``paths`` (default: the urnlib package) from ``HEAD``, as a
    patch ``git apply`` takes: changes to tracked files, then every untracked, not ignored file as added.
    Empty for a clean tree or outside a git checkout."""
    where = [str(p) for p in (paths or [PACKAGE_ROOT])]
    try:
        tracked = _git("diff", "--binary", "HEAD", "--", *where)
        if tracked.returncode:
            return b""
        untracked = _git("ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--", *where)
        patch, top = [tracked.stdout], _top()
        for name in sorted(n for n in untracked.stdout.decode().split("\0") if n):
            added = subprocess.run(["git", "diff", "--binary", "--no-index", "--", "/dev/null", name],
                                   cwd=top, capture_output=True, timeout=30)
            patch.append(added.stdout)  # exit status 1: the files differ, as they must
        return b"".join(patch)
    except (OSError, subprocess.SubprocessError):
        return b""


def _top() -> Path:
    out = _git("rev-parse", "--show-toplevel")
    return Path(out.stdout.decode().strip()) if not out.returncode else PACKAGE_ROOT


def git_state(paths: list[Path] | None = None) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout holding urnlib; a dirty one also
    gives ``"diff"``: the SHA-256 of :func:`git_diff` (the store keeps the patch under that name) and
    ``"patch"``: its bytes (which the store writes and drops from the record)."""
    try:
        head = _git("rev-parse", "HEAD")
        if head.returncode:
            return {"commit": None, "dirty": None}
        dirty = _git("status", "--porcelain", "--", *[str(p) for p in (paths or [PACKAGE_ROOT])])
        state: dict[str, Any] = {"commit": head.stdout.decode().strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    if state["dirty"]:
        patch = git_diff(paths)
        if patch:
            state["diff"], state["patch"] = sha(patch), patch
    return state


@dataclass
class Run:
    """One stored run (see the module docstring for the fields of ``record``)."""

    record: dict[str, Any]
    path: Path
    _weights: dict[str, torch.Tensor] | None = field(default=None, repr=False)
    spec: RunSpec | None = field(default=None, repr=False, compare=False)

    @property
    def weights(self) -> dict[str, torch.Tensor] | None:
        """The stored tensors (``weights.pt``), read on first use; ``None`` when the folder has none."""
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

    @property
    def coords(self) -> dict[str, Any]:
        """The run's coordinates (see :class:`RunSpec`): the plan's that asked for it (``spec``, set by
        :meth:`urnlib.results.RunStore.stored` and ``obtain``), else the record's."""
        spec = getattr(self, "spec", None)
        if spec is not None and spec.coords:
            return spec.coords
        return self.record.get("coords", {})

    @property
    def label(self) -> str:
        """The label of the run's group of seeds (its name for a run without coordinates)."""
        return self.coords.get("label", self.name)

    @property
    def seed(self) -> int | None:
        return self.coords.get("seed")

    @property
    def device(self) -> str:
        """Where the run trained (``"cpu"``, ``"cuda"``...), as the store recorded it."""
        return self.record.get("machine", {}).get("device", "cpu")

    def stale_reasons(self) -> list[str]:
        """Why this run would compute something else today: ``[]`` when it is current."""
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
        elsewhere = accepted_environment(self.record["libraries"])  # made on an accepted machine
        for lib, made in sorted(self.record["libraries"].items()):
            if current.get(lib, made) != made and lib not in elsewhere:
                reasons.append(f"library {lib} {made} -> {current[lib]}")
        return reasons

    @property
    def stale(self) -> bool:
        return bool(self.stale_reasons())

    def column(self, key: str) -> list:
        return [row[key] for row in self.history]

    def model(self, vocab_size: int | None = None, *, build=None, extra: tuple[str, ...] = (),
              **context) -> torch.nn.Module:
        """The trained model of this run, in eval mode: the one way to rebuild a model from a stored run.

        Args:
            vocab_size: V, as the chapter built the model (from its vocabulary or the run's data stats).
            build: ``build(params) -> nn.Module``, given the run's parameters, for a chapter whose models
                the registry does not build from ``(params["model"], V)`` alone (the default:
                :func:`urnlib.models.registry.build_model` of ``params["model"]``, ``vocab_size`` and
                ``context``).
            extra: stored tensors that are not the model's (e.g. the agreement URN's ``head_embedding``,
                kept for a table): left out of the ``state_dict`` loaded, which must otherwise match exactly.
            **context: the chapter's keyword arguments of the model (``n_out``, ``start_id`` ...).

        Raises:
            RunError: the run keeps no ``state_dict`` (only the tensors its tables read), so it cannot be
                rebuilt; the message says to retrain it in a store of one's own.
        """
        weights = {k: v for k, v in (self.weights or {}).items() if k not in extra}
        if not weights:
            raise RunError(f"stored run {self.name!r} ({self.path}) keeps no state_dict, only the numbers "
                           "its tables read; retrain it in a store of your own to rebuild the model")
        if build is None:
            from urnlib.models.registry import build_model
            if vocab_size is None:
                raise ParameterError(f"rebuilding run {self.name!r}: give vocab_size (or build)")
            model = build_model(self.params["model"], vocab_size, **context)
        else:
            model = build(self.params)
        model.load_state_dict(weights)
        return model.eval()
