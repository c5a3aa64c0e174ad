"""The one training loop of urnlib: every model, every task.

A model maps ``(B, T)`` input symbols to ``(B, T, V)`` logits; a dataset is a pair of tensors
``inputs (N, T)`` and ``targets (N, T)`` whose ignored positions hold :data:`IGNORE`. The loss is
the token cross-entropy averaged over the non-ignored tokens of a batch (reference-facts: "masked
token cross-entropy / number of tokens"). Task-specific numbers (accuracy by attractors, error rate
by length, ...) come from an ``evaluate`` callback, so the loop itself knows no task.

Each epoch: shuffle (a permutation seeded by ``(seed, epoch)``), one pass of Adam steps, test loss,
the callback's metrics, a :class:`History` row, and a checkpoint. A run interrupted after epoch e
resumes from its checkpoint at epoch e + 1 and gives the same numbers as an uninterrupted one.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.params import ParameterError, check_float, check_int
from urnlib.progress import progress

__all__ = ["IGNORE", "TokenData", "TrainConfig", "History", "fit", "evaluate_loss", "predict", "seed_everything"]

IGNORE = -100  #: target value of positions that carry no loss (padding)


@dataclass
class TokenData:
    """Input and target symbol indices, both ``(N, T)`` long tensors."""

    inputs: torch.Tensor
    targets: torch.Tensor

    def __post_init__(self):
        if self.inputs.shape != self.targets.shape or self.inputs.dim() != 2:
            raise ParameterError(
                f"inputs {tuple(self.inputs.shape)} and targets {tuple(self.targets.shape)} "
                "must both be (N, T)"
            )

    def __len__(self) -> int:
        return self.inputs.shape[0]


@dataclass
class TrainConfig:
    """Optimisation settings; defaults are the Dyck experiment's (paper 000 sec. 5, paper 001 sec. 4)."""

    epochs: int = 100  # paper 000 sec. 5: "for 100 epochs"
    batch_size: int = 512  # paper 001 sec. 2: batch size 512
    lr: float = 0.01  # paper 000 sec. 5 and paper 001 sec. 4 (Dyck): learning rate 0.01
    seed: int = 0  # one seed for data order and dropout masks (initialisation is seeded by the caller)

    def __post_init__(self):
        check_int("epochs", self.epochs, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("seed", self.seed, minimum=0)


@dataclass
class History:
    """Per-epoch records: ``rows[e]`` has ``epoch``, ``train_loss``, ``test_loss``, ``seconds`` and
    whatever the ``evaluate`` callback returned."""

    rows: list[dict[str, Any]] = field(default_factory=list)

    def column(self, key: str) -> list:
        return [row[key] for row in self.rows]

    def to_dict(self) -> dict:
        return asdict(self)


def seed_everything(seed: int) -> None:
    """Seed torch's global generator (initialisers, dropout masks)."""
    torch.manual_seed(seed)


def _token_loss(logits: torch.Tensor, targets: torch.Tensor, reduction: str) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=IGNORE, reduction=reduction)


@torch.no_grad()
def predict(model: nn.Module, inputs: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Logits ``(N, T, V)`` in evaluation mode (no dropout)."""
    was_training = model.training
    model.eval()
    try:
        return torch.cat([model(inputs[i : i + batch_size]) for i in range(0, len(inputs), batch_size)])
    finally:
        model.train(was_training)


@torch.no_grad()
def evaluate_loss(model: nn.Module, data: TokenData, batch_size: int = 1024) -> float:
    """Mean token cross-entropy (nats) over the non-ignored targets, no dropout."""
    logits = predict(model, data.inputs, batch_size)
    return float(_token_loss(logits, data.targets, "mean"))


def _save_checkpoint(path: Path, model, optimizer, history: History, epoch: int, wall: float) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "history": history.rows,
         "epoch": epoch, "rng": torch.get_rng_state(), "wall": wall},
        tmp,
    )
    os.replace(tmp, path)  # atomic: an interruption never leaves half a checkpoint


def fit(
    model: nn.Module,
    train: TokenData,
    test: TokenData | None,
    config: TrainConfig,
    *,
    evaluate: Callable[[nn.Module], dict[str, Any]] | None = None,
    checkpoint: str | Path | None = None,
    desc: str = "train",
) -> tuple[History, float]:
    """Train ``model`` with Adam; return its :class:`History` and the training wall time (s).

    Args:
        model: maps ``(B, T)`` symbols to ``(B, T, V)`` logits.
        train: training data.
        test: data for the per-epoch test loss (``None``: skip).
        config: epochs, batch size, learning rate, seed.
        evaluate: called after every epoch in eval mode; its dict is added to the epoch's row.
        checkpoint: file written after every epoch; if it exists, training resumes from it.
        desc: progress-bar label.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)  # paper 001 sec. 2: Adam
    history, start_epoch, wall = History(), 0, 0.0
    ckpt = Path(checkpoint) if checkpoint is not None else None
    if ckpt is not None and ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        history.rows = state["history"]
        torch.set_rng_state(state["rng"])
        start_epoch, wall = state["epoch"] + 1, state["wall"]
    n_batches = math.ceil(len(train) / config.batch_size)
    bar = progress(range(start_epoch, config.epochs), desc=desc, initial=start_epoch, total=config.epochs)
    for epoch in bar:
        t0 = time.perf_counter()
        model.train()
        order = torch.randperm(len(train), generator=torch.Generator().manual_seed(config.seed * 100_003 + epoch))
        total, tokens = 0.0, 0
        for b in range(n_batches):
            idx = order[b * config.batch_size : (b + 1) * config.batch_size]
            x, y = train.inputs[idx], train.targets[idx]
            loss = _token_loss(model(x), y, "mean")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            count = int((y != IGNORE).sum())
            total, tokens = total + float(loss.detach()) * count, tokens + count
        if not math.isfinite(total):
            raise FloatingPointError(f"training loss became {total} at epoch {epoch}: lower the learning rate")
        row: dict[str, Any] = {"epoch": epoch + 1, "train_loss": total / max(tokens, 1)}
        model.eval()
        if test is not None:
            row["test_loss"] = evaluate_loss(model, test)
        if evaluate is not None:
            with torch.no_grad():
                row.update(evaluate(model))
        model.train()
        row["seconds"] = time.perf_counter() - t0
        wall += row["seconds"]
        history.rows.append(row)
        bar.set_postfix(train=f"{row['train_loss']:.4f}", test=f"{row.get('test_loss', float('nan')):.4f}")
        if ckpt is not None:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
            _save_checkpoint(ckpt, model, optimizer, history, epoch, wall)
    model.eval()
    return history, wall
