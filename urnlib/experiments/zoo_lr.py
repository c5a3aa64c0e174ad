"""The zoo's learning-rate choice: each (task, budget, cell) trained at every candidate rate of the chapter's
``lr_choices``, and read at the rate whose runs reach the lower mean validation loss over seeds.

No paper makes this choice: it is the book's, so that a cell that fails at its task's rate is not shown
failing only for want of another rate. The choice reads only the validation loss (the loss at each run's best
epoch on held-out data drawn like the training data, stored as ``test_loss``), never a test measure. An exact
tie keeps the task's own ``lr``; a seed whose loss is not finite (a diverged run) counts as infinitely high. A
candidate whose runs are not all stored is compared on the seeds that are, and its row says so
(:attr:`LrChoice.notes`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from urnlib.params import ParameterError, check_float, check_list
from urnlib.seeds import Seeds, Stat

__all__ = ["LrChoice", "choose", "candidates", "check_lr_choices", "lr_text", "VALIDATION_LOSS"]

#: the final metric the choice reads: the best epoch's validation loss (the loop calls it test_loss)
VALIDATION_LOSS = "test_loss"


def lr_text(lr: float) -> str:
    """``"0.001"``: a rate as names and tables write it."""
    return f"{lr:g}"


def check_lr_choices(lr_choices: Any, tasks: dict[str, dict[str, Any]]) -> None:
    """``lr_choices`` is ``None`` or a non-empty list of distinct positive rates that holds every task's
    ``lr`` (the rate a tie keeps); else raise naming it."""
    if lr_choices is None:
        return
    def rate(name: str, lr: Any) -> str:  # two rates written alike would name the same runs
        return lr_text(check_float(name, lr, minimum=0.0, maximum=10.0, strict_min=True))

    check_list("lr_choices", lr_choices, example="[0.01, 0.001]", each=rate)
    for task, settings in tasks.items():
        if not any(float(lr) == float(settings["lr"]) for lr in lr_choices):
            raise ParameterError(f"lr_choices={lr_choices!r} must hold every task's own rate, which a tie "
                                 f"keeps: tasks[{task!r}].lr={settings['lr']} is not in it")


def candidates(lr_choices: list | None, own: float) -> list[float]:
    """A task's candidate rates: its own ``lr`` first, then the others of ``lr_choices`` in their order."""
    return [own] + [float(lr) for lr in lr_choices or [] if float(lr) != float(own)]


def _score(seeds: Seeds) -> float:
    """The mean validation loss over the stored seeds, a loss that is not finite counting as infinite."""
    values = [run.final[VALIDATION_LOSS] for run in seeds]
    return sum(v if math.isfinite(v) else math.inf for v in values) / len(values)


def choose(runs: dict[float, Seeds | None], own: float) -> float | None:
    """The rate of ``runs`` (``{rate: its stored seeds, or None}``) with the lowest mean validation loss; an
    exact tie keeps ``own``; ``None`` where no rate has a stored run."""
    scores = {lr: _score(seeds) for lr, seeds in runs.items() if seeds}
    if not scores:
        return None
    best = min(scores.values())
    if scores.get(own) == best:
        return own
    return next(lr for lr, score in scores.items() if score == best)


@dataclass(frozen=True)
class LrChoice:
    """The choice of one (task, budget, cell).

    Attributes:
        task, budget: where. cell: the cell's label.
        own: the task's ``lr`` (first of the candidates; kept on a tie).
        seeds: the seeds planned at each rate.
        runs: ``{rate: the stored runs of its seeds, or None}``, every candidate in order.
        chosen: the rate whose runs the chapter reads (``None``: no candidate stored).
    """

    task: str
    budget: int
    cell: str
    own: float
    seeds: int
    runs: dict[float, Seeds | None]
    chosen: float | None

    @classmethod
    def of(cls, task: str, budget: int, cell: str, own: float, seeds: int,
           runs: dict[float, Seeds | None]) -> "LrChoice":
        return cls(task, budget, cell, own, seeds, runs, choose(runs, own))

    def loss(self, lr: float) -> Stat | None:
        """The validation loss of the stored seeds at ``lr`` (``None``: none stored)."""
        seeds = self.runs.get(lr)
        return seeds.final(VALIDATION_LOSS) if seeds else None

    @property
    def picked(self) -> Seeds | None:
        """The chosen rate's runs."""
        return None if self.chosen is None else self.runs[self.chosen]

    @property
    def notes(self) -> list[str]:
        """What the choice could not compare: a rate with no stored run, or fewer seeds than planned."""
        out = []
        for lr, seeds in self.runs.items():
            if not seeds:
                out.append(f"lr {lr_text(lr)} not stored")
            elif len(seeds) < self.seeds:
                out.append(f"lr {lr_text(lr)}: {len(seeds)} of {self.seeds} seeds stored")
        return out
