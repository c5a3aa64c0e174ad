"""Callbacks of the training loop (:func:`urnlib.train.fit`), after minGPT's trainer callbacks.

A chapter that needs something at batch or epoch ends (a gradient statistic, a custom stopping rule)
writes a :class:`Callback` instead of wrapping the loop. A callback's :meth:`Callback.state_dict` is
saved in every epoch checkpoint, so an interrupted run resumes to the same numbers.

:class:`Monitor` is the built-in the loop adds when :class:`~urnlib.train.TrainConfig` names a
``monitor``: it keeps the weights of the best epoch and stops after ``patience`` epochs without
improvement.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
from torch import nn

from urnlib.params import ParameterError

__all__ = ["Callback", "Monitor", "EarlyStop", "stopping_callbacks"]


def _improves(value: float, best: float, minimize: bool) -> bool:
    """Whether ``value`` is strictly better than ``best`` (the one rule of Monitor and EarlyStop)."""
    return value < best if minimize else value > best


class Callback:
    """Base class: every hook does nothing. ``on_epoch_end`` returns ``True`` to stop training."""

    def on_batch_end(self, model: nn.Module, epoch: int, batch: int, loss: float) -> None:
        """After the optimiser step of ``batch`` (0-based) of ``epoch`` (0-based); ``loss`` is its mean
        loss."""

    def on_epoch_end(self, model: nn.Module, row: dict[str, Any]) -> bool:
        """After the epoch's row (train loss, test loss, the ``evaluate`` metrics) is complete."""
        return False

    def on_train_end(self, model: nn.Module) -> None:
        """After the last epoch (or the early stop)."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


class Monitor(Callback):
    """Keep the best epoch's weights and stop early, watching one metric of the epoch rows.

    Args:
        config: a :class:`~urnlib.train.TrainConfig` whose ``monitor`` names the metric; ``minimize``,
            ``keep_best`` and ``patience`` say what to do with it. An epoch is better when its value is
            strictly better than the best so far (the first of equal epochs is kept).
    """

    def __init__(self, config):
        self.key, self.minimize = config.monitor, config.minimize
        self.keep_best, self.patience = config.keep_best, config.patience
        self.best_value, self.best_epoch, self.best_weights, self.epochs_since = math.nan, None, None, 0

    def _better(self, value: float) -> bool:
        return self.best_epoch is None or _improves(value, self.best_value, self.minimize)

    def on_epoch_end(self, model: nn.Module, row: dict[str, Any]) -> bool:
        if self.key not in row:
            raise ParameterError(f"monitor={self.key!r} is not a metric of the epoch rows; they have "
                                 f"{sorted(row)}")
        value = float(row[self.key])
        if math.isfinite(value) and self._better(value):
            self.best_value, self.best_epoch, self.epochs_since = value, row["epoch"], 0
            if self.keep_best:
                self.best_weights = copy.deepcopy(model.state_dict())
        else:
            self.epochs_since += 1
        return self.patience is not None and self.epochs_since >= self.patience

    def on_train_end(self, model: nn.Module) -> None:
        if self.keep_best and self.best_weights is not None:
            model.load_state_dict(self.best_weights)

    def state_dict(self) -> dict[str, Any]:
        return {"best_value": self.best_value, "best_epoch": self.best_epoch,
                "epochs_since": self.epochs_since, "best_weights": self.best_weights}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state:
            self.best_value, self.best_epoch = state["best_value"], state["best_epoch"]
            self.epochs_since, self.best_weights = state["epochs_since"], state["best_weights"]
            if self.best_weights is not None:
                self.best_weights = {k: torch.as_tensor(v) for k, v in self.best_weights.items()}


class EarlyStop(Callback):
    """Stop after ``patience`` epochs without improvement of ``key``, but never before ``min_epochs`` epochs
    (a chapter whose claims speak of the training curve up to the paper's length, e.g. overfitting after
    epoch 30 of 100, trains at least that long, and on while the metric still improves).

    Use it with a :class:`~urnlib.train.TrainConfig` whose ``patience`` is ``None`` (the built-in
    :class:`Monitor` then only keeps the best epoch's weights); an epoch is better when strictly better.
    """

    def __init__(self, key: str, patience: int, min_epochs: int = 0, minimize: bool = True):
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise ParameterError(f"patience={patience!r} must be a whole number >= 1")
        if isinstance(min_epochs, bool) or not isinstance(min_epochs, int) or min_epochs < 0:
            raise ParameterError(f"min_epochs={min_epochs!r} must be a whole number >= 0")
        self.key, self.patience, self.min_epochs, self.minimize = key, patience, min_epochs, minimize
        self.best_value, self.epochs_since = math.nan, 0

    def on_epoch_end(self, model: nn.Module, row: dict[str, Any]) -> bool:
        if self.key not in row:
            raise ParameterError(f"EarlyStop key={self.key!r} is not a metric of the epoch rows; they have "
                                 f"{sorted(row)}")
        value = float(row[self.key])
        if math.isfinite(value) and (math.isnan(self.best_value) or _improves(value, self.best_value,
                                                                             self.minimize)):
            self.best_value, self.epochs_since = value, 0
        else:
            self.epochs_since += 1
        return row["epoch"] >= self.min_epochs and self.epochs_since >= self.patience

    def state_dict(self) -> dict[str, Any]:
        return {"best_value": self.best_value, "epochs_since": self.epochs_since}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state:
            self.best_value, self.epochs_since = state["best_value"], state["epochs_since"]


def stopping_callbacks(stop: dict[str, Any] | None) -> list[Callback]:
    """The callbacks of a planned run's stopping rule (its ``params["stop"]``: :class:`EarlyStop`'s keyword
    arguments): none when the plan has no rule or its ``patience`` is off (the loop's own settings decide)."""
    return [EarlyStop(**stop)] if stop and stop.get("patience") else []
