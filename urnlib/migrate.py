"""Moving stored runs without retraining them: under today's component versions (:func:`restamp`, when the
behaviour probes show the code still computes what made them), or from the store's old layout of folders
named ``<label>-<key>`` to folders named by key (:func:`key_folders`; ``python -m urnlib.migrate ROOT``).
A run's label is display only: relabelling a chapter's runs moves nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

from urnlib.errors import RunError
from urnlib.records import Run, RunSpec, Trained
from urnlib.results import RunStore

__all__ = ["restamp", "key_folders", "add_coords"]


def restamp(store: RunStore, spec: RunSpec, old: Run, weights: dict[str, torch.Tensor] | None = None
            ) -> Run:
    """Store ``old`` (a run whose behaviour is unchanged, as its probes show) under ``spec``: today's
    component and library versions, new checksums; the old folder is removed."""
    trained = Trained(old.history, old.final, weights if weights is not None else (old.weights or {}),
                      old.record.get("wall_time_s", 0.0), old.record.get("cpu_time_s"))
    extra = {"restamped_from": {"folder": old.path.name, "created": old.record.get("created")}}
    if "created" in old.record:
        extra["created"] = old.record["created"]
    if "execution" in old.record:
        extra["execution"] = old.record["execution"]
    run = store.save(spec, trained, git=old.record.get("git"), machine=old.record.get("machine"), extra=extra)
    if old.path != run.path and old.path.exists():
        import shutil

        shutil.rmtree(old.path)
    return run


def key_folders(root: str | os.PathLike) -> list[tuple[Path, Path]]:
    """Move every run of the store at ``root`` stored under the old layout, ``<experiment>/<name>-<key>/``,
    to ``<experiment>/<key>/`` (:mod:`urnlib.results`); its record and weights are not touched, so its key
    and checksums stay valid and nothing is retrained. Returns the ``(old, new)`` folders moved; a folder
    whose record does not name a key it ends with is left where it is."""
    moved = []
    for rec in sorted(Path(root).glob("**/record.json")):
        folder = rec.parent
        if ".checkpoints" in rec.parts:
            continue
        try:
            key = json.loads(rec.read_text())["key"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if folder.name == key or not folder.name.endswith("-" + key):
            continue
        target = folder.with_name(key)
        if target.exists():
            raise RunError(f"cannot move {folder} to {target}: it exists (two runs with one key?)")
        os.replace(folder, target)
        moved.append((folder, target))
    return moved


def add_coords(store: RunStore, specs: list[RunSpec]) -> tuple[int, int]:
    """Give the stored run of each spec of a plan the spec's coordinates and label (a record made before
    runs had coordinates); its numbers, key and weights are untouched, its content checksum is renewed.
    Returns ``(updated, already current)``; a spec without a stored run is skipped."""
    updated = same = 0
    for spec in specs:
        folder = store.folder(spec)
        if not (folder / "record.json").is_file():
            continue
        run = store.read(folder, weights=False)
        if run.record.get("coords") == spec.coords and run.record["name"] == spec.name:
            same += 1
            continue
        store.rewrite(run, {**run.record, "coords": spec.coords, "name": spec.name})
        updated += 1
    return updated, same


if __name__ == "__main__":
    for root in sys.argv[1:] or ["notebooks/results"]:
        pairs = key_folders(root)
        print(f"{root}: {len(pairs)} run(s) moved to folders named by key")
