"""Two variants of the Dyck chapter's k-TURN, to see what the paper's setting depends on.

* ``"code lr"``: learning rate 0.001, the Adam default the authors' code ran (both papers state 0.01);
* ``"no state dropout"``: dropout on the parameters and the output only, none on the state.

Everything else is the chapter's k-TURN. Runs are stored like the chapter's (same experiment folder).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from urnlib.experiments import dyck
from urnlib.results import Run
from urnlib.train import TrainConfig

__all__ = ["CODE_LR", "run_ablations"]

CODE_LR = 0.001  # tf.keras.optimizers.Adam() default, as in the authors' dyck.py


def run_ablations(task: dyck.DyckTask, cfg: TrainConfig, store_dir: str | Path, *, units: int, truncation_k: int,
                  dropout: float, retrain: bool = False, on_stale: str = "warn") -> dict[str, Run]:
    """Train or load the two k-TURN variants; returns runs labelled ``"{k}-TURN, lr 0.001"`` and
    ``"{k}-TURN, no state dropout"``."""
    base: dict[str, Any] = {"kind": "urn", "n": units, "k": truncation_k, "dropout": dropout}
    runs = dyck.run_all({f"{truncation_k}-TURN, lr {CODE_LR}": base}, task, replace(cfg, lr=CODE_LR), store_dir,
                        retrain=retrain, on_stale=on_stale)
    runs |= dyck.run_all({f"{truncation_k}-TURN, no state dropout": {**base, "state_dropout": False}}, task, cfg,
                         store_dir, retrain=retrain, on_stale=on_stale)
    return runs
