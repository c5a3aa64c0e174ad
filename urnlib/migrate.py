"""Moving stored runs without retraining them: under today's component versions (:func:`restamp`, when the
behaviour probes show the code still computes what made them) or under a new name (:func:`rename`, when only a
chapter's labels changed; :func:`with_key` finds such a run by its key).
"""

from __future__ import annotations

import json
import os

import torch

from urnlib.results import (RunError, Run, RunSpec, RunStore, Trained, _atomic_write, _canonical, _content,
                            _sha)

__all__ = ["restamp", "with_key", "rename"]


def restamp(store: RunStore, spec: RunSpec, old: Run, weights: dict[str, torch.Tensor] | None = None
            ) -> Run:
    """Store ``old`` (a run whose behaviour is unchanged, as its probes show) under ``spec``: today's
    component and library versions, new checksums; the old folder is removed."""
    trained = Trained(old.history, old.final, weights if weights is not None else (old.weights or {}),
                      old.record.get("wall_time_s", 0.0), old.record.get("cpu_time_s"))
    run = store.save(spec, trained, git=old.record.get("git"))
    run.record["restamped_from"] = {"folder": old.path.name, "created": old.record.get("created")}
    run.record["created"] = old.record.get("created", run.record["created"])
    run.record["machine"] = old.record.get("machine", run.record["machine"])
    text = json.dumps(run.record, indent=1, sort_keys=True, default=float)
    _atomic_write(run.path / "record.json", lambda tmp: tmp.write_text(text))
    if old.path != run.path:
        import shutil

        shutil.rmtree(old.path)
    return run


def with_key(store: RunStore, spec: RunSpec) -> list[Run]:
    """The stored runs of ``spec``'s experiment with ``spec``'s key, whatever their names (a run renamed
    by a change of labels: same parameters, same components)."""
    parent = store.root / spec.experiment
    out = []
    for folder in sorted(parent.glob(f"*-{spec.key}")) if parent.is_dir() else []:
        try:
            out.append(store.read(folder, weights=False))
        except RunError:
            continue
    return out

def rename(store: RunStore, run: Run, spec: RunSpec) -> Run:
    """Store ``run`` under ``spec``'s name: the same key (parameters and components), so the same numbers
    and weights; the record's name and content checksum change, the folder moves (atomically)."""
    if run.record["key"] != spec.key:
        raise ValueError(f"{run.path} has key {run.record['key']}, not {spec.key}: it is another run")
    record = dict(run.record, name=spec.name)
    record["renamed_from"] = run.name
    record["checksums"] = {**record["checksums"], "content": _sha(_canonical(_content(record)))}
    text = json.dumps(record, indent=1, sort_keys=True, default=float)
    _atomic_write(run.path / "record.json", lambda tmp: tmp.write_text(text))
    target = store.folder(spec)
    os.replace(run.path, target)
    return store.read(target, weights=False)
