"""Callbacks of the training loop (:func:`urnlib.train.fit`), after minGPT's trainer callbacks.

A chapter that needs something at batch or epoch ends (a gradient statistic, a custom stopping rule)
writes a :class:`Callback` instead of wrapping the loop. A callback's :meth:`Callback.state_dict` is
saved in every epoch checkpoint, so an interrupted run resumes to the same numbers.

:class:`Monitor` is the one patience rule: the loop adds one when :class:`~urnlib.train.TrainConfig` names a
``monitor`` (it keeps the weights of the best epoch and stops after ``patience`` epochs without
improvement), and a chapter's planned stopping rule is another (:class:`EarlyStop`, with ``min_epochs``).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
from torch import nn

from urnlib.params import ParameterError, check_int

__all__ = ["Callback", "Monitor", "EarlyStop", "stopping_callbacks"]


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
    """Watch one metric of the epoch rows: keep the best epoch's weights and stop after ``patience`` epochs
    without improvement, never before epoch ``min_epochs`` (the one patience rule of the loop).

    An epoch improves when its value is finite and strictly better than the best so far (the first of equal
    epochs is kept; NaN and inf never improve). Training stops at the end of epoch ``e`` when
    ``e >= min_epochs`` and the last ``patience`` epochs did not improve.

    Args:
        key: the metric (``"test_loss"`` or one the ``evaluate`` callback returns).
        minimize: whether a lower value is better.
        keep_best: end training with the weights of the best epoch (:attr:`best_epoch`).
        patience: epochs without improvement before stopping (``None``: never stop).
        min_epochs: never stop before this epoch (a chapter whose claims read the training curve up to the
            paper's length, e.g. overfitting after epoch 30 of 100, trains at least that long, and on while
            the metric still improves).
    """

    #: how the error for a key missing from the rows names the parameter
    _what = "monitor"

    def __init__(self, key: str, *, minimize: bool = True, keep_best: bool = False,
                 patience: int | None = None, min_epochs: int = 0):
        if patience is not None:
            check_int("patience", patience, minimum=1)
        check_int("min_epochs", min_epochs, minimum=0)
        self.key, self.minimize, self.keep_best = key, minimize, keep_best
        self.patience, self.min_epochs = patience, min_epochs
        self.best_value, self.best_epoch, self.best_weights, self.epochs_since = math.nan, None, None, 0

    @classmethod
    def from_config(cls, config) -> Monitor:
        """The loop's built-in monitor of a :class:`~urnlib.train.TrainConfig` (its ``monitor``, ``minimize``,
        ``keep_best`` and ``patience``)."""
        return cls(config.monitor, minimize=config.minimize, keep_best=config.keep_best,
                   patience=config.patience)

    def on_epoch_end(self, model: nn.Module, row: dict[str, Any]) -> bool:
        if self.key not in row:
            raise ParameterError(f"{self._what}={self.key!r} is not a metric of the epoch rows; they have "
                                 f"{sorted(row)}")
        value = float(row[self.key])
        better = math.isnan(self.best_value) or (value < self.best_value if self.minimize
                                                 else value > self.best_value)
        if math.isfinite(value) and better:
            self.best_value, self.best_epoch, self.epochs_since = value, row["epoch"], 0
            if self.keep_best:
                self.best_weights = copy.deepcopy(model.state_dict())
        else:
            self.epochs_since += 1
        return (self.patience is not None and row["epoch"] >= self.min_epochs
                and self.epochs_since >= self.patience)

    def on_train_end(self, model: nn.Module) -> None:
        if self.keep_best and self.best_weights is not None:
            model.load_state_dict(self.best_weights)

    def state_dict(self) -> dict[str, Any]:
        return {"best_value": self.best_value, "best_epoch": self.best_epoch,
                "epochs_since": self.epochs_since, "best_weights": self.best_weights}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict`'s dict, or from the ``{"best_value", "epochs_since"}`` that the
        former ``EarlyStop`` class checkpointed (the rule reads only those two)."""
        if state:
            self.best_value, self.epochs_since = state["best_value"], state["epochs_since"]
            self.best_epoch, self.best_weights = state.get("best_epoch"), state.get("best_weights")
            if self.best_weights is not None:
                self.best_weights = {k: torch.as_tensor(v) for k, v in self.best_weights.items()}


class EarlyStop(Monitor):
    """The planned stopping rule of a run (``params["stop"]``): a :class:`Monitor` of ``key`` that only stops,
    after ``patience`` epochs without improvement but never before ``min_epochs``, and keeps no weights.

    Use it with a :class:`~urnlib.train.TrainConfig` whose ``patience`` is ``None`` (the loop's own monitor
    then only keeps the best epoch's weights).
    """

    _what = "EarlyStop key"

    def __init__(self, key: str, patience: int, min_epochs: int = 0, minimize: bool = True):
        check_int("patience", patience, minimum=1)
        super().__init__(key, minimize=minimize, patience=patience, min_epochs=min_epochs)


def stopping_callbacks(stop: dict[str, Any] | None) -> list[Callback]:
    """The callbacks of a planned run's stopping rule (its ``params["stop"]``: :class:`EarlyStop`'s keyword
    arguments): none when the plan has no rule or its ``patience`` is off (the loop's own settings decide)."""
    return [EarlyStop(**stop)] if stop and stop.get("patience") else []
