"""Stored runs: each training run saved with everything needed to trust and re-draw it.

A run is keyed by a hash of its parameters (model, data, training; JSON-canonical). Its folder
``<root>/<experiment>/<name>-<key>/`` holds

* ``record.json``: parameters, per-epoch history, final metrics, package versions, git commit (and
  whether the training code differed from it), a fingerprint of the library code that trains (every urnlib module the
  experiment's module imports, transitively), wall time, date, machine;
* ``weights.pt``: the model's ``state_dict`` (small: the papers' models have < 200k parameters).

:meth:`RunStore.get_or_train` loads a stored run whose parameters match, or trains and stores it.
A stored run whose training-code fingerprint differs from the current code's is *stale*: it is still
loaded (unless ``on_stale`` says otherwise) but flagged, and :func:`provenance_table` shows it, so a
book never mixes old results with new code silently.
"""

from __future__ import annotations

import datetime as _dt
import ast
import hashlib
import json
import os
import platform
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

import urnlib
from urnlib.params import ParameterError, check_choice

__all__ = ["Run", "RunStore", "params_key", "code_fingerprint", "training_modules", "git_state", "provenance_table", "StaleRunWarning"]

PACKAGE_ROOT = Path(urnlib.__file__).resolve().parent
#: urnlib modules that cannot change what training produces: storage, reporting, progress bars, runner
NOT_TRAINING = frozenset({"urnlib", "urnlib.results", "urnlib.claims", "urnlib.progress", "urnlib.cli",
                          "urnlib.analysis", "urnlib.metrics", "urnlib.plots", "urnlib.reports"})


class StaleRunWarning(UserWarning):
    """A stored run was produced by different training code than the current checkout's."""


def params_key(params: dict[str, Any]) -> str:
    """12-hex-digit SHA-256 of the canonical JSON of ``params`` (sorted keys)."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _module_file(module: str) -> Path | None:
    rel = Path(*module.split(".")[1:])
    for candidate in (PACKAGE_ROOT / rel / "__init__.py", (PACKAGE_ROOT / rel).with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def training_modules(module: str) -> list[str]:
    """The urnlib modules ``module`` imports, transitively (read from the source, nothing is run),
    less :data:`NOT_TRAINING` and anything under it; ``module`` itself included."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or any(name == x or name.startswith(x + ".") for x in NOT_TRAINING - {"urnlib"}):
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen.add(name)
        if path.name == "__init__.py" or "." in name:  # parents' __init__ run on import too
            parent = name.rsplit(".", 1)[0]
            if parent != "urnlib":
                todo.append(parent)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("urnlib.")]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("urnlib"):
                todo.append(node.module)
                todo += [f"{node.module}.{a.name}" for a in node.names]  # submodules named in the import
    return sorted(seen)


def code_fingerprint(module: str) -> str:
    """SHA-256 (12 hex) of the source of every module :func:`training_modules` finds for ``module``.

    A stored run keeps the fingerprint of its experiment module; when any code it trains with changes,
    the fingerprint changes and the run is reported stale.
    """
    h = hashlib.sha256()
    for name in training_modules(module):
        h.update(name.encode())
        h.update(_module_file(name).read_bytes())
    return h.hexdigest()[:12]


def git_state(paths: list[Path] | None = None) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout holding urnlib.

    ``dirty`` says whether any of ``paths`` (default: the whole package) differs from that commit.
    """
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


def _versions() -> dict[str, str]:
    import numpy

    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__,
            "urnlib": urnlib.__version__}


@dataclass
class Run:
    """One stored training run (see the module docstring for the fields of ``record``)."""

    record: dict[str, Any]
    path: Path
    weights: dict[str, torch.Tensor] | None = field(default=None, repr=False)

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
    def stale(self) -> bool:
        """True when the code that trains this experiment changed after the run was made."""
        return self.record.get("code_fingerprint") != code_fingerprint(self.record["code_module"])

    def column(self, key: str) -> list:
        return [row[key] for row in self.history]


class RunStore:
    """Runs of one or more experiments under ``root`` (see module docstring).

    Args:
        root: folder of the store (created on first save).
        code_module: the module that trains these runs, e.g. ``"urnlib.experiments.dyck"``; the code it
            imports is fingerprinted to tell stale runs.
        checkpoints: folder for per-epoch checkpoints of unfinished runs (default ``root/.checkpoints``).
    """

    def __init__(self, root: str | os.PathLike, code_module: str, checkpoints: str | os.PathLike | None = None):
        self.root = Path(root)
        self.code_module = code_module
        self.checkpoints = Path(checkpoints) if checkpoints is not None else self.root / ".checkpoints"

    def provenance(self) -> dict[str, Any]:
        """The commit (and whether the training code differs from it) and the training-code fingerprint, now."""
        return {"git": git_state([_module_file(m) for m in training_modules(self.code_module)]),
                "code_fingerprint": code_fingerprint(self.code_module)}

    def folder(self, experiment: str, name: str, params: dict[str, Any]) -> Path:
        return self.root / experiment / f"{name}-{params_key(params)}"

    def load(self, experiment: str, name: str, params: dict[str, Any]) -> Run | None:
        """The stored run with exactly these parameters, or ``None``."""
        folder = self.folder(experiment, name, params)
        rec = folder / "record.json"
        if not rec.exists():
            return None
        record = json.loads(rec.read_text())
        weights_file = folder / "weights.pt"
        weights = torch.load(weights_file, weights_only=True) if weights_file.exists() else None
        return Run(record, folder, weights)

    def save(self, experiment: str, name: str, params: dict[str, Any], *, history, final, weights,
             wall_time: float, start: dict[str, Any] | None = None) -> Run:
        """Write a finished run's record and weights; return it.

        ``start`` is :meth:`provenance` taken when training began (default: now).
        """
        start = start or self.provenance()
        folder = self.folder(experiment, name, params)
        folder.mkdir(parents=True, exist_ok=True)
        record = {
            "experiment": experiment,
            "name": name,
            "key": params_key(params),
            "params": params,
            "history": history,
            "final": final,
            "versions": _versions(),
            "code_module": self.code_module,
            **start,
            "wall_time_s": round(wall_time, 2),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                        "threads": torch.get_num_threads(), "device": "cpu"},
        }
        weights = {k: v.detach().cpu().clone() for k, v in weights.items()}
        torch.save(weights, folder / "weights.pt")
        (folder / "record.json").write_text(json.dumps(record, indent=1, sort_keys=True, default=float))
        return Run(record, folder, weights)

    def get_or_train(
        self,
        experiment: str,
        name: str,
        params: dict[str, Any],
        train: Callable[[Path], tuple[list, dict, dict, float]],
        *,
        retrain: bool = False,
        on_stale: str = "warn",
    ) -> Run:
        """Load the run with these parameters, or train and store it.

        Args:
            experiment: chapter name (folder under the root).
            name: run label, e.g. ``"3-TURN"``.
            params: everything that determines the run (hashed into its key).
            train: ``train(checkpoint_path) -> (history rows, final metrics, state_dict, wall time)``.
            retrain: train even if a stored run exists (``make reproduce``).
            on_stale: what to do with a stored run made by other training code: ``"warn"`` (use it,
                flagged), ``"retrain"`` or ``"error"``.
        """
        check_choice("on_stale", on_stale, ["warn", "retrain", "error"])
        run = None if retrain else self.load(experiment, name, params)
        if run is not None and run.stale:
            msg = (f"stored run {name!r} ({run.path}) was trained by commit "
                   f"{(run.record['git'].get('commit') or 'unknown')[:10]} with different training code "
                   f"(fingerprint {run.record.get('code_fingerprint')} != {code_fingerprint(self.code_module)})")
            if on_stale == "error":
                raise ParameterError(msg + "; re-run with retrain=True (make reproduce) or on_stale='warn'")
            if on_stale == "retrain":
                run = None
            else:
                warnings.warn(msg + "; shown as stale", StaleRunWarning, stacklevel=2)
        if run is not None:
            return run
        ckpt = self.checkpoints / f"{experiment}-{name}-{params_key(params)}.pt".replace(" ", "_")
        start = self.provenance()  # the code as training starts (it may change while a run trains)
        history, final, weights, wall = train(ckpt)
        run = self.save(experiment, name, params, history=history, final=final, weights=weights, wall_time=wall,
                        start=start)
        ckpt.unlink(missing_ok=True)
        return run


def provenance_table(runs: list[Run]):
    """A pandas DataFrame: which commit, code and machine produced each run, and whether it is stale."""
    import pandas as pd

    rows = []
    for run in runs:
        git = run.record.get("git", {})
        commit = (git.get("commit") or "unknown")[:10] + (" (dirty)" if git.get("dirty") else "")
        rows.append({
            "run": run.name,
            "key": run.record["key"],
            "commit": commit,
            "created": run.record["created"][:16].replace("T", " "),
            "wall time (min)": round(run.record["wall_time_s"] / 60, 1),
            "torch": run.record["versions"]["torch"],
            "training code": "changed since (stale)" if run.stale else "current",
        })
    return pd.DataFrame(rows)
