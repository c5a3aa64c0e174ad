"""Toy runs for testing the runner's backends: a module of the package, so that Dask worker processes can
import the training function (a module under ``tests/`` is not on their path).

:func:`toy_spec` makes the :class:`~urnlib.results.RunSpec` of a tiny LSTM on Dyck strings trained by
:func:`~urnlib.train.fit` (seconds on one thread); its parameters can make it slow (``sleep`` seconds
after each epoch), fail on purpose after its first epoch (``fail``), and leave a mark after every
checkpoint it saves (``marks``: a folder; the mark ``<name>.epoch<E>.pid<PID>`` says which process
saved the checkpoint of epoch E, so a test can kill that process mid-run and see where it resumed).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from urnlib.callbacks import Callback
from urnlib.results import RunSpec, Trained
from urnlib.train import TrainConfig, _load_checkpoint, _save_checkpoint, fit, seed_everything

__all__ = ["EXPERIMENT", "SAMPLE_SPECS", "toy_spec", "train_toy", "marks_of"]

EXPERIMENT = "toy"

#: small specs of every registered model kind, for tests that run each kind (tests/test_device.py and
#: tests/test_gpu.py check that a kind registered without one here is noticed); an SRN with V > n (a lookup),
#: V <= n (one-hot rows) and an embedding
SAMPLE_SPECS = {
    "urn": ["urn 4", "urn 6 k2"],
    "arbitrary": ["arbitrary 4"],
    "lstm": ["lstm 4 e3"],
    "srn": ["srn 4", "srn 8", "srn 4 e3"],
    "gru": ["gru 4", "gru 4 e3"],
    "nnlm": ["nnlm 3 5 4 direct"],
    "tpru": ["tpru 8 N4", "tpru 8 N4 s2"],
    "4.1": ["4.1 dense 3"],
    "4.2": ["4.2 diagonal 3"],
    "4.3": ["4.3 upper 3"],
}


def toy_spec(name: str, *, seed: int = 0, epochs: int = 3, sleep: float = 0.0, fail: bool = False,
             marks: str | Path | None = None, twin: int = 0) -> RunSpec:
    """A toy run (see the module docstring); ``twin`` tells apart runs that train the same numbers (a run
    is its parameters: two runs of one plan need different ones)."""
    params = {"seed": seed, "epochs": epochs, "sleep": sleep, "fail": fail,
              "marks": None if marks is None else str(marks)}
    if twin:
        params["twin"] = twin
    return RunSpec(EXPERIMENT, name, params, ("train.loop",), train_toy)


class _Pace(Callback):
    def __init__(self, name: str, params: dict[str, Any]):
        self.name, self.params = name, params

    def on_epoch_end(self, model, row) -> bool:
        if self.params["fail"]:
            raise RuntimeError(f"toy run {self.name!r} fails on purpose after epoch {row['epoch']}")
        time.sleep(self.params["sleep"])
        return False


class _Marking:
    """A checkpoint sink around a file or another sink: leaves a mark after each save."""

    def __init__(self, inner, marks: str, name: str):
        self.inner, self.marks, self.name = inner, Path(marks), name

    def load(self):
        return _load_checkpoint(self.inner)

    def save(self, state: dict[str, Any]) -> None:
        _save_checkpoint(self.inner, state)
        self.marks.mkdir(parents=True, exist_ok=True)
        (self.marks / f"{self.name}.epoch{state['epoch'] + 1}.pid{os.getpid()}").touch()


def marks_of(marks: str | Path, name: str) -> list[tuple[int, int]]:
    """``(epoch, pid)`` of every checkpoint run ``name`` saved, by epoch."""
    found = []
    for path in Path(marks).glob(f"{name}.epoch*.pid*"):
        epoch, pid = path.name[len(name) + len(".epoch"):].split(".pid")
        found.append((int(epoch), int(pid)))
    return sorted(found)


def train_toy(spec: RunSpec, checkpoint) -> Trained:
    """Train a toy run (a ``train`` function of :mod:`urnlib.runner`)."""
    from urnlib.languages import dyck
    from urnlib.models import build_model
    from urnlib.tokens import TokenData

    p = spec.params
    vocab = dyck.DyckVocab()
    train = TokenData(*dyck.encode(dyck.generate(64, 6, max_depth=3, rng=p["seed"]), vocab))
    test = TokenData(*dyck.encode(dyck.generate(32, 6, rng=p["seed"] + 1), vocab))
    seed_everything(p["seed"])
    model = build_model("lstm", len(vocab), n=4, embedding_size=3)
    sink = checkpoint
    if p["marks"] and checkpoint is not None:
        sink = _Marking(checkpoint, p["marks"], spec.name)
    config = TrainConfig(epochs=p["epochs"], batch_size=16, lr=0.01, seed=p["seed"])
    history, _ = fit(model, train, test, config, callbacks=[_Pace(spec.name, p)], checkpoint=sink,
                     desc=spec.name)
    return Trained(history.rows, dict(history.rows[-1]), model.state_dict(), history.wall_time,
                   history.cpu_time)
