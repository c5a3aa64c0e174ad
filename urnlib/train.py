"""The one training loop of urnlib: every model, every task.

A dataset is a :class:`~urnlib.tokens.TokenData` pair ``inputs (N, T)``, ``targets (N, T)`` whose
ignored positions hold :data:`~urnlib.tokens.IGNORE`. By default a model maps ``(B, T)`` symbols to
``(B, T, V)`` logits and the loss is the token cross-entropy averaged over the non-ignored tokens of a
batch (reference-facts: "masked token cross-entropy / number of tokens"); a chapter whose model gives
probabilities another way passes its own ``loss``. Task-specific numbers (accuracy by attractors,
perplexity, ...) come from an ``evaluate`` callback, so the loop itself knows no task; anything else a
chapter needs at batch or epoch ends is a :class:`~urnlib.callbacks.Callback`.

Each epoch: shuffle (a permutation seeded by ``(seed, epoch)``), one pass of optimiser steps (Adam,
Adagrad or SGD, optional gradient value and norm clipping), the test loss in batches, the callback's
metrics, a :class:`History` row, the monitor (keep the best epoch's weights, stop early after ``patience``
epochs without improvement) and a checkpoint. A run interrupted after epoch e resumes from its checkpoint at
epoch e + 1 and gives the same numbers as an uninterrupted one, the monitor's best weights included.
The checkpoint is a file, or a :class:`CheckpointSink` (an object with ``load()`` and ``save(state)``)
when the file system is not the place for it, e.g. on a Dask worker (:mod:`urnlib.cluster`).

``fit`` trains on a ``device`` (``"cpu"``, ``"cuda"``, ...; default: the one :func:`default_device`
set, else the CPU): it moves the model and each batch there and gives the model back on the CPU.

The version of this component is ``train.loop`` in :mod:`urnlib.components`.
"""

from __future__ import annotations

import contextlib
import functools
import contextvars
import io
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.allocator import keep_freed_memory
from urnlib.atomic import atomic_write
from urnlib.callbacks import Callback, Monitor
from urnlib.errors import CheckpointError
from urnlib.params import ParameterError, check_bool, check_choice, check_float, check_int
from urnlib.progress import progress
from urnlib.tokens import IGNORE, TokenData, device_of as _device_of, predict

__all__ = ["IGNORE", "TokenData", "TrainConfig", "History", "Loss", "token_cross_entropy", "fit",
           "evaluate_loss", "predict", "seed_everything", "OPTIMIZERS", "CheckpointSink", "default_device",
           "checkpoint_bytes", "checkpoint_from_bytes"]

#: optimisers a run may name (paper 001 sec. 2: Adam; Bengio et al. 2003: SGD; paper 003's code: Adagrad;
#: paper 002's code: Adam with the AMSGrad correction)
OPTIMIZERS = {"adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD,
              "amsgrad": functools.partial(torch.optim.Adam, amsgrad=True)}
#: settings that stay out of :meth:`TrainConfig.params` at these defaults (added after runs were stored with
#: the other fields: a run's key never changes because a setting it does not use was added)
_LATER_DEFAULTS: dict[str, Any] = {"clip_value": None}

#: ``loss(model, inputs, targets) -> (mean loss over the batch's scored tokens, number of scored tokens)``
Loss = Callable[[nn.Module, torch.Tensor, torch.Tensor], tuple[torch.Tensor, int]]


@dataclass
class TrainConfig:
    """Optimisation settings of one run. Every chapter sets them from its parameter file.

    Args:
        epochs: the cap on training epochs (training may stop earlier, see ``patience``).
        batch_size: sequences per optimiser step.
        lr: learning rate.
        seed: data order and dropout masks (initialisation is seeded by the caller).
        optimizer: a key of :data:`OPTIMIZERS`.
        clip: the largest global gradient norm (``None``: no clipping).
        clip_value: the largest absolute value of any gradient entry (``None``: no clipping), applied
            before ``clip`` when both are set.
        monitor: a key of the epoch rows (``"test_loss"`` or one the ``evaluate`` callback returns) that
            ``keep_best`` and ``patience`` watch.
        minimize: whether a lower ``monitor`` value is better.
        keep_best: end with the weights of the best epoch by ``monitor`` (its row is ``History.best_row``).
        patience: stop after this many epochs without improvement of ``monitor`` (``None``: never).
    """

    epochs: int = 100
    batch_size: int = 512
    lr: float = 0.01
    seed: int = 0
    optimizer: str = "adam"
    clip: float | None = None
    monitor: str | None = None
    minimize: bool = True
    keep_best: bool = False
    patience: int | None = None
    clip_value: float | None = None

    def __post_init__(self):
        check_int("epochs", self.epochs, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("seed", self.seed, minimum=0)
        check_choice("optimizer", self.optimizer, list(OPTIMIZERS))
        if self.clip is not None:
            check_float("clip", self.clip, minimum=0.0, strict_min=True)
        if self.clip_value is not None:
            check_float("clip_value", self.clip_value, minimum=0.0, strict_min=True)
        check_bool("minimize", self.minimize)
        check_bool("keep_best", self.keep_best)
        if self.patience is not None:
            check_int("patience", self.patience, minimum=1)
        if (self.keep_best or self.patience is not None) and not self.monitor:
            raise ParameterError("keep_best and patience need monitor: the epoch metric to watch, "
                                 "e.g. 'test_loss'")

    def params(self) -> dict[str, Any]:
        """The fields as a run's ``train`` parameters: ``TrainConfig(**params())`` is this config; settings
        added later stay out at their defaults, so that stored runs keep their keys."""
        out = asdict(self)
        for name, default in _LATER_DEFAULTS.items():
            if out[name] == default:
                del out[name]
        return out


@dataclass
class History:
    """Per-epoch records: ``rows[e]`` has ``epoch``, ``train_loss``, ``test_loss`` (when there is test data),
    ``seconds`` and whatever the ``evaluate`` callback returned.

    ``best_epoch`` is the 1-based epoch the monitor chose (``None`` without a monitor), ``stopped_early``
    whether patience ended training, ``wall_time`` and ``cpu_time`` the seconds spent in training (process
    CPU time counts every thread, so it does not depend on what else the machine runs).
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    best_epoch: int | None = None
    stopped_early: bool = False
    wall_time: float = 0.0
    cpu_time: float = 0.0

    def column(self, key: str) -> list:
        return [row[key] for row in self.rows]

    @property
    def best_row(self) -> dict[str, Any]:
        """The row of the monitor's best epoch, or the last row."""
        return self.rows[self.best_epoch - 1] if self.best_epoch else self.rows[-1]

    def to_dict(self) -> dict:
        return asdict(self)


def seed_everything(seed: int) -> None:
    """Seed torch's global generator (initialisers, dropout masks)."""
    torch.manual_seed(seed)


def token_cross_entropy(model: nn.Module, inputs: torch.Tensor,
                        targets: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The default :data:`Loss`: mean cross-entropy of ``model(inputs)`` ``(B, T, V)`` over non-ignored
    targets."""
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE,
                           reduction="mean")
    return loss, int((targets != IGNORE).sum())


@torch.no_grad()
def evaluate_loss(model: nn.Module, data: TokenData, batch_size: int = 1024,
                  loss: Loss | None = None) -> float:
    """Mean loss per scored token (nats) over ``data``, no dropout, ``batch_size`` rows at a time: it never
    holds more than one batch of logits."""
    loss = loss or token_cross_entropy
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    device = _device_of(model)
    try:
        for i in range(0, len(data), batch_size):
            mean, n = loss(model, data.inputs[i : i + batch_size].to(device),
                           data.targets[i : i + batch_size].to(device))
            if n:
                total, count = total + float(mean) * n, count + n
    finally:
        model.train(was_training)
    return total / count if count else math.nan


@runtime_checkable
class CheckpointSink(Protocol):
    """Where :func:`fit` keeps its epoch checkpoints when not in a file: ``load()`` gives the last state
    saved (``None``: none yet, train from the first epoch), ``save(state)`` keeps a new one.
    :func:`checkpoint_bytes` and :func:`checkpoint_from_bytes` turn a state into bytes and back."""

    def load(self) -> dict[str, Any] | None: ...

    def save(self, state: dict[str, Any]) -> None: ...


def checkpoint_bytes(state: dict[str, Any]) -> bytes:
    """``state`` as the bytes a checkpoint file holds."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def checkpoint_from_bytes(blob: bytes, where: str = "checkpoint") -> dict[str, Any]:
    """The state in ``blob`` (what :func:`checkpoint_bytes` made, or a checkpoint file's content), its
    tensors on the CPU; an unreadable one is a :class:`~urnlib.errors.CheckpointError` naming ``where``."""
    try:
        return torch.load(io.BytesIO(blob), weights_only=False, map_location="cpu")
    except Exception as err:  # noqa: BLE001 - a checkpoint cut short by a crash
        raise CheckpointError(f"{where} cannot be read ({type(err).__name__}: {err}); delete it to train "
                              "this run from its first epoch") from None


def _save_checkpoint(target: str | os.PathLike | CheckpointSink, state: dict[str, Any]) -> None:
    if not isinstance(target, (str, os.PathLike)):
        target.save(state)
        return
    # atomic: an interruption never leaves half a checkpoint
    atomic_write(target, lambda tmp: torch.save(state, tmp))


def _load_checkpoint(target: str | os.PathLike | CheckpointSink) -> dict[str, Any] | None:
    if not isinstance(target, (str, os.PathLike)):
        return target.load()
    try:
        blob = Path(target).read_bytes()
    except FileNotFoundError:
        return None
    return checkpoint_from_bytes(blob, f"checkpoint {target}")


_DEVICE: contextvars.ContextVar[str | None] = contextvars.ContextVar("urnlib_device", default=None)


@contextlib.contextmanager
def default_device(device: str | torch.device | None) -> Iterator[None]:
    """Within the block, :func:`fit` calls that name no ``device`` train on ``device`` (the runner sets it
    around a chapter's training function, so chapters need not pass it on)."""
    token = _DEVICE.set(None if device is None else str(device))
    try:
        yield
    finally:
        _DEVICE.reset(token)


def fit(
    model: nn.Module,
    train: TokenData,
    test: TokenData | None,
    config: TrainConfig,
    *,
    valid: TokenData | None = None,
    loss: Loss | None = None,
    evaluate: Callable[[nn.Module], dict[str, Any]] | None = None,
    callbacks: Sequence[Callback] = (),
    checkpoint: str | Path | CheckpointSink | None = None,
    desc: str = "train",
    eval_batch_size: int = 1024,
    device: str | torch.device | None = None,
) -> tuple[History, float]:
    """Train ``model``; return its :class:`History` and the training wall time (s).

    Args:
        model: maps ``(B, T)`` symbols to what ``loss`` reads (default ``(B, T, V)`` logits).
        train: training data.
        test: data for the per-epoch test loss, evaluated in batches (``None``: skip); read for reporting.
        valid: data drawn like the training data for the per-epoch ``val_loss`` (``None``: skip), what the
            book's protocol selects on (``config.monitor = "val_loss"``).
        config: epochs, batch size, learning rate, seed, optimiser, clipping, monitor.
        loss: the :data:`Loss` (default :func:`token_cross_entropy`).
        evaluate: called after every epoch in eval mode without gradients; its dict joins the epoch's row.
        callbacks: :class:`~urnlib.callbacks.Callback` objects called at batch and epoch ends; their
            ``state_dict`` is checkpointed.
        checkpoint: file written after every epoch; if it exists, training resumes from it. Or a
            :class:`CheckpointSink`: its ``load()`` gives the state to resume from, ``save`` keeps each
            epoch's.
        desc: progress-bar label.
        eval_batch_size: rows per batch of the test loss.
        device: where to train (default: the :func:`default_device` of the caller, else ``"cpu"``). The
            model is moved there and back to the CPU at the end; batches are moved one at a time.
    """
    loss = loss or token_cross_entropy
    keep_freed_memory()  # a step reuses the pages the last one freed (urnlib.allocator): no number changes
    device = torch.device(device if device is not None else (_DEVICE.get() or "cpu"))
    model.to(device)
    optimizer = OPTIMIZERS[config.optimizer](model.parameters(), lr=config.lr)
    monitor = Monitor.from_config(config) if config.monitor else None
    hooks = [*callbacks, *([monitor] if monitor else [])]
    history = History()
    ckpt = checkpoint if isinstance(checkpoint, CheckpointSink) or checkpoint is None else Path(checkpoint)
    start_epoch, wall, cpu, stopped = _resume(ckpt, model, optimizer, history, hooks, device)
    bar = progress(range(start_epoch, config.epochs), desc=desc, initial=start_epoch, total=config.epochs)
    for epoch in bar:
        if stopped:
            break
        t0, c0 = time.perf_counter(), time.process_time()
        total, tokens = _train_epoch(model, train, config, loss, optimizer, hooks, epoch, device, desc)
        if not math.isfinite(total):
            raise FloatingPointError(f"training loss became {total} at epoch {epoch + 1}: "
                                     f"lower the learning rate (lr={config.lr}) or clip the gradients (clip)")
        row: dict[str, Any] = {"epoch": epoch + 1, "train_loss": total / max(tokens, 1)}
        _evaluate_epoch(model, row, test=test, valid=valid, evaluate=evaluate, loss=loss,
                        batch_size=eval_batch_size)
        row["seconds"] = time.perf_counter() - t0
        wall, cpu = wall + row["seconds"], cpu + time.process_time() - c0
        history.rows.append(row)
        for hook in hooks:
            stopped = hook.on_epoch_end(model, row) or stopped
        bar.set_postfix(train=f"{row['train_loss']:.4f}", test=f"{row.get('test_loss', float('nan')):.4f}")
        if ckpt is not None:
            _save_checkpoint(ckpt, {
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "history": history.rows,
                "epoch": epoch, "epochs": config.epochs, "rng": torch.get_rng_state(), "wall": wall,
                "cpu": cpu, "stopped": stopped,
                "callbacks": {str(i): hook.state_dict() for i, hook in enumerate(hooks)},
                **({"cuda_rng": torch.cuda.get_rng_state(device)} if device.type == "cuda" else {})})
    for hook in hooks:
        hook.on_train_end(model)
    model.to("cpu")
    model.eval()
    history.wall_time, history.cpu_time, history.stopped_early = wall, cpu, stopped
    history.best_epoch = monitor.best_epoch if monitor else None
    return history, wall


def _resume(ckpt, model: nn.Module, optimizer, history: History, hooks, device: torch.device
            ) -> tuple[int, float, float, bool]:
    """Restore the state a checkpoint keeps (model, optimiser, history, RNG, callbacks); return the epoch to
    start from, the wall and CPU time spent and whether training had stopped (``(0, 0, 0, False)``: none)."""
    state = _load_checkpoint(ckpt) if ckpt is not None else None
    if state is None:
        return 0, 0.0, 0.0, False
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    history.rows = state["history"]
    torch.set_rng_state(state["rng"])
    if device.type == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], device)
    for i, hook in enumerate(hooks):
        hook.load_state_dict(state.get("callbacks", {}).get(str(i), {}))
    return state["epoch"] + 1, state["wall"], state.get("cpu", 0.0), state.get("stopped", False)


def _train_epoch(model: nn.Module, train: TokenData, config: TrainConfig, loss: Loss, optimizer, hooks,
                 epoch: int, device: torch.device, desc: str) -> tuple[float, int]:
    """One epoch over ``train`` in the epoch's seeded order; return the summed loss and the tokens scored."""
    model.train()
    n_batches = math.ceil(len(train) / config.batch_size)
    order = torch.randperm(len(train), generator=torch.Generator().manual_seed(config.seed * 100_003 + epoch))
    total, tokens, t0 = 0.0, 0, time.perf_counter()
    batches = progress(range(n_batches), desc=f"{desc} epoch {epoch + 1}", total=n_batches, unit="batch")
    for b in batches:
        x, y = train.batch(order[b * config.batch_size : (b + 1) * config.batch_size])
        x, y = x.to(device), y.to(device)
        value, count = loss(model, x, y)
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        if config.clip_value is not None:
            torch.nn.utils.clip_grad_value_(model.parameters(), config.clip_value)
        if config.clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimizer.step()
        total, tokens = total + float(value.detach()) * count, tokens + count
        for hook in hooks:
            hook.on_batch_end(model, epoch, b, float(value.detach()))
        if b % 16 == 15 or b == n_batches - 1:
            seconds = max(time.perf_counter() - t0, 1e-9)
            batches.set_postfix(loss=f"{total / max(tokens, 1):.4f}", tok_s=f"{tokens / seconds:,.0f}")
    return total, tokens


def _evaluate_epoch(model: nn.Module, row: dict[str, Any], *, test, valid, evaluate, loss,
                    batch_size) -> None:
    """Add the epoch's test and validation losses and ``evaluate``'s metrics to ``row``, in eval mode."""
    model.eval()
    if test is not None:
        row["test_loss"] = evaluate_loss(model, test, batch_size, loss)
    if valid is not None:
        row["val_loss"] = evaluate_loss(model, valid, batch_size, loss)
    if evaluate is not None:
        with torch.no_grad():
            row.update(evaluate(model))
    model.train()
