"""A learning-rate choice on validation data, shared by the chapters that make one (the zoo per task, budget
and cell; the TPRU chapter per entailment encoder).

No paper makes these choices: they are the book's, so that a model that fails at the chapter's rate is not
shown failing only for want of another rate. Every model of a chapter gets the same candidates (its own
``lr`` first, then the others of the parameter ``lr_choices``), trains once per candidate and seed, and is
read at the rate whose runs reach the better mean of a validation measure over the seeds (:class:`Measure`):
never a test measure. An exact tie keeps the model's own rate; a seed whose measure is not finite (a diverged
run) counts as the worst. A candidate whose runs are not all stored is compared on the seeds that are, and
the choice says so (:attr:`RateChoice.notes`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from urnlib.params import ParameterError, check_float, check_list
from urnlib.seeds import Seeds, Stat

__all__ = ["Measure", "RateChoice", "lr_text", "check_rates", "candidates", "score", "choose"]


def lr_text(lr: float) -> str:
    """``"0.001"``: a rate as names and tables write it."""
    return f"{lr:g}"


@dataclass(frozen=True)
class Measure:
    """What a choice compares: ``value(run)``, a number read on validation data only, in ``words`` (``"best
    validation accuracy"``); ``minimize``: whether lower is better."""

    value: Callable[[Any], float]
    words: str
    minimize: bool


def check_rates(lr_choices: Any, own: dict[str, float], *, example: str = "[0.01, 0.001]") -> None:
    """``lr_choices`` is ``None`` or a non-empty list of distinct positive rates that holds the own rate of
    every model or task of ``own`` (``{where it is set: its lr}``; the rate a tie keeps); else raise naming
    it."""
    if lr_choices is None:
        return

    def rate(name: str, lr: Any) -> str:  # two rates written alike would name the same runs
        return lr_text(check_float(name, lr, minimum=0.0, maximum=10.0, strict_min=True))

    check_list("lr_choices", lr_choices, example=example, each=rate)
    for where, lr in own.items():
        if not any(float(c) == float(lr) for c in lr_choices):
            raise ParameterError(f"lr_choices={lr_choices!r} must hold the rate a tie keeps: {where}={lr} is "
                                 "not in it")


def candidates(lr_choices: list | None, own: float) -> list[float]:
    """The candidate rates: ``own`` first, then the others of ``lr_choices`` in their order."""
    return [float(own)] + [float(lr) for lr in lr_choices or [] if float(lr) != float(own)]


def score(seeds: Seeds, measure: Measure) -> float:
    """The mean of ``measure`` over the stored seeds, a value that is not finite counting as the worst."""
    worst = math.inf if measure.minimize else -math.inf
    values = [measure.value(run) for run in seeds]
    return sum(v if math.isfinite(v) else worst for v in values) / len(values)


def choose(runs: dict[float, Seeds | None], own: float, measure: Measure) -> float | None:
    """The rate of ``runs`` (``{rate: its stored seeds, or None}``) whose runs score best by ``measure``; an
    exact tie keeps ``own``; ``None`` where no rate has a stored run. A single candidate is read without
    being scored (nothing is chosen)."""
    if len(runs) == 1:
        return next((lr for lr, seeds in runs.items() if seeds), None)
    scores = {lr: score(seeds, measure) for lr, seeds in runs.items() if seeds}
    if not scores:
        return None
    best = (min if measure.minimize else max)(scores.values())
    if scores.get(own) == best:
        return own
    return next(lr for lr, value in scores.items() if value == best)


@dataclass(frozen=True)
class RateChoice:
    """The choice of one model.

    Attributes:
        label: the model's label (its runs at ``own`` carry it; at another rate, ``"<label>, lr <rate>"``).
        own: the model's own rate (first of the candidates; kept on a tie).
        seeds: how many seeds are planned at each rate.
        runs: ``{rate: the stored runs of its seeds, or None}``, every candidate in order.
        measure: what the choice compares.
        chosen: the rate whose runs the chapter reads (``None``: no candidate stored).
    """

    label: str
    own: float
    seeds: int
    runs: dict[float, Seeds | None]
    measure: Measure
    chosen: float | None

    @classmethod
    def of(cls, label: str, own: float, seeds: int, runs: dict[float, Seeds | None],
           measure: Measure) -> "RateChoice":
        return cls(label, own, seeds, runs, measure, choose(runs, own, measure))

    def stat(self, lr: float) -> Stat | None:
        """The measure of the stored seeds at ``lr`` (``None``: none stored)."""
        seeds = self.runs.get(lr)
        return seeds.stat(self.measure.value) if seeds else None

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
