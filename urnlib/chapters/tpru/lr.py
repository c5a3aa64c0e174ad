"""The TPRU chapter's learning-rate choice (not in paper 002; the book's, as the zoo's): with several
``lr_choices``, every entailment encoder of ``models`` trains at each candidate rate, every seed, and the
chapter reads it at the rate whose runs reach the higher mean best validation accuracy over the seeds (the
shared rule of :mod:`urnlib.lr_choice`; the validation pairs are drawn like the training pairs,
the test splits are never read).

Why: the ablation (:mod:`urnlib.chapters.tpru.ablation`) found the few-role TPRUs stay at chance at the
authors' Adam rate 1e-3 on most seeds and leave it at 3e-4. Reading every encoder (the GRU and LSTM too) at
the rate its own validation accuracy picks compares them trained alike, with no rate picked by hand.

The runs at the chapter's ``lr`` keep their labels (``"TPRU 64 N=4"``); at another rate they carry the
ablation's label for that rate (``"TPRU 64 N=4, lr 0.0003"``,
:func:`urnlib.chapters.tpru.entailment.ablation_label`) and the same key, so an ablation entry of that rate
and the choice share their runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from urnlib.chapters.tpru import entailment as ent
from urnlib.lr_choice import Measure, RateChoice, candidates, check_rates
from urnlib.chapters.tpru.ablation import Setting
from urnlib.results import Run, RunSpec
from urnlib.seeds import Seeds

__all__ = ["MEASURE", "LR_EXAMPLE", "check", "rate_label", "rate_setting", "plan", "choices"]

#: what the choice compares: each run's best validation accuracy (the epoch its weights are kept from)
MEASURE = Measure(lambda run: max(run.column("valid_acc"), default=math.nan), "best validation accuracy",
                  minimize=False)
LR_EXAMPLE = "[0.001, 0.0003]"


def check(lr_choices: Any, lr: float) -> None:
    """``lr_choices`` is ``None`` or a list of distinct rates > 0 that holds the chapter's ``lr``."""
    check_rates(lr_choices, {"lr": lr}, example=LR_EXAMPLE)


def rate_label(spec: dict[str, Any], lr: float, own: float) -> str:
    """The label of an encoder's runs at ``lr``: its own at the chapter's rate ``own``, else the ablation's
    for that rate."""
    return ent.ablation_label(spec, None if lr == own else {"lr": lr})


def rate_setting(spec: dict[str, Any], lr: float, own: float, seeds: list[int]) -> Setting | None:
    """The change a run at ``lr`` makes to the chapter's training (``None`` at ``own``): an ablation
    setting that changes the rate alone, so that its runs and such an entry's are one."""
    return None if lr == own else Setting(spec, list(seeds), None, {"lr": lr})


def plan(encoders: dict[str, dict[str, Any]], lr_choices: list | None, own: float, seeds: list[int],
         make: Callable[..., RunSpec]) -> dict[str, dict[float, list[RunSpec]]]:
    """``{encoder label: {rate: [one RunSpec per seed]}}``, the chapter's rate first; ``make(label, spec,
    seed, setting)`` is the chapter's spec of one entailment run."""
    return {label: {lr: [make(rate_label(spec, lr, own), spec, seed, rate_setting(spec, lr, own, seeds))
                         for seed in seeds]
                    for lr in candidates(lr_choices, own)}
            for label, spec in encoders.items()}


def choices(planned: dict[str, dict[float, list[RunSpec]]], runs: dict[str, Run], own: float,
            seeds: int) -> list[RateChoice]:
    """Per encoder of ``planned`` (:func:`plan`): its stored runs (of ``runs``, by name) at every rate and
    the rate the choice reads; each rate's runs under the encoder's label."""
    out = []
    for label, rates in planned.items():
        stored = {lr: [s for s in specs if s.name in runs] for lr, specs in rates.items()}
        grouped = {lr: Seeds(label, [runs[s.name] for s in found], [s.params["train"]["seed"] for s in found])
                   if found else None for lr, found in stored.items()}
        out.append(RateChoice.of(label, own, seeds, grouped, MEASURE))
    return out
