"""The zoo's learning-rate choice: each (task, budget, cell) trained at every candidate rate of the chapter's
``lr_choices``, and read at the rate whose runs reach the lower mean validation loss over seeds (the shared
rule of :mod:`urnlib.lr_choice`).

The choice reads only the validation loss (the loss at each run's best epoch on held-out data drawn like the
training data, stored as ``test_loss``), never a test measure. An exact tie keeps the task's own ``lr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from urnlib.lr_choice import Measure, RateChoice, candidates, check_rates, choose, lr_text
from urnlib.seeds import Seeds, Stat

__all__ = ["LrChoice", "candidates", "check_lr_choices", "lr_text", "VALIDATION_LOSS", "MEASURE"]

#: the final metric the choice reads: the best epoch's validation loss (the loop calls it test_loss)
VALIDATION_LOSS = "test_loss"
#: what the zoo's choice compares
MEASURE = Measure(lambda run: run.final[VALIDATION_LOSS], "validation loss", minimize=True)


def check_lr_choices(lr_choices: Any, tasks: dict[str, dict[str, Any]]) -> None:
    """``lr_choices`` is ``None`` or a non-empty list of distinct positive rates that holds every task's
    ``lr`` (the rate a tie keeps); else raise naming it."""
    check_rates(lr_choices, {f"tasks[{task!r}].lr": settings["lr"] for task, settings in tasks.items()})


@dataclass(frozen=True)
class LrChoice(RateChoice):
    """The choice of one (task, budget, cell): :class:`~urnlib.lr_choice.RateChoice` with the
    cell's label as ``label`` (also ``cell``), and where it is (``task``, ``budget``)."""

    task: str = ""
    budget: int = 0

    @classmethod
    def of(cls, task: str, budget: int, cell: str, own: float, seeds: int,  # type: ignore[override]
           runs: dict[float, Seeds | None]) -> "LrChoice":
        return cls(cell, own, seeds, runs, MEASURE, choose(runs, own, MEASURE), task=task, budget=budget)

    @property
    def cell(self) -> str:
        return self.label

    def loss(self, lr: float) -> Stat | None:
        """The validation loss of the stored seeds at ``lr`` (``None``: none stored)."""
        return self.stat(lr)
