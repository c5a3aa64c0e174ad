"""The Dyck experiment (paper 000 sec. 5 / Fig. 3; paper 001 sec. 4 / Fig. 3, Table 2).

Train next-symbol language models on Dyck strings of depth <= 3, test them on unconstrained
(deeper) strings, and score only the closing brackets, by number of attractors.

The notebook ``notebooks/dyck.ipynb`` passes its parameters to :func:`plan_runs` and
:func:`run_all`; everything it shows comes from the returned :class:`~urnlib.results.Run` objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.experiments.common import check_plan, load_or_train, rebuild_model as _rebuild
from urnlib.languages import dyck
from urnlib.params import ParameterError, check_choice, check_float, check_int
from urnlib.results import Run
from urnlib.train import TokenData, TrainConfig, predict

__all__ = ["DyckTask", "DyckData", "make_data", "plan_runs", "run_all", "evaluate_closing", "EXPERIMENT"]

EXPERIMENT = "dyck"


@dataclass(frozen=True)
class DyckTask:
    """Data settings; defaults are the papers' (paper 000 sec. 5, paper 001 sec. 4)."""

    n_pairs: int = 10  # "strings with a length of exactly 20 characters"
    train_size: int = 102_400  # "we train on 102,400 ... strings" (200 batches of 512)
    test_size: int = 5_120  # "... and test on 5120 random strings"
    train_max_depth: int = 3  # "with maximum depth 3"
    generator: str = "walk"  # paper 001 sec. 4 random walk; "midpoint" = the authors' code
    seed: int = 0  # data seed (train and test streams derive from it)

    def __post_init__(self):
        check_int("n_pairs", self.n_pairs, minimum=1)
        check_int("train_size", self.train_size, minimum=1)
        check_int("test_size", self.test_size, minimum=1)
        check_int("train_max_depth", self.train_max_depth, minimum=1, maximum=self.n_pairs)
        check_choice("generator", self.generator, list(dyck.GENERATORS))
        check_int("seed", self.seed, minimum=0)


@dataclass
class DyckData:
    vocab: dyck.DyckVocab
    train: TokenData
    test: TokenData
    test_strings: list[str]
    test_attractors: torch.Tensor  # (N, L) attractor count at closing positions, -1 elsewhere


@lru_cache(maxsize=4)
def make_data(task: DyckTask) -> DyckData:
    """Training strings (depth <= ``train_max_depth``) and unconstrained test strings, seeded."""
    vocab = dyck.DyckVocab()
    train = dyck.generate(task.train_size, task.n_pairs, max_depth=task.train_max_depth,
                          method=task.generator, rng=np.random.default_rng([task.seed, 0]))
    test = dyck.generate(task.test_size, task.n_pairs, max_depth=None, method=task.generator,
                         rng=np.random.default_rng([task.seed, 1]))
    attr = torch.tensor([[-1 if a is None else a for a in dyck.attractors(s)] for s in test])
    return DyckData(vocab, TokenData(*dyck.encode(train, vocab)), TokenData(*dyck.encode(test, vocab)), test, attr)


def evaluate_closing(model: torch.nn.Module, data: DyckData) -> dict[str, Any]:
    """Closing-bracket accuracy on the test set, overall and by number of attractors.

    Returns:
        ``closing_accuracy`` and two lists indexed by attractor count:
        ``attr_correct[a]``, ``attr_total[a]`` (a = 0 .. 2 n_pairs).
    """
    logits = predict(model, data.test.inputs)
    scored, correct = dyck.score_closing(logits, data.test.targets, data.vocab)
    size = int(data.test_attractors.max()) + 1
    attr = data.test_attractors[scored]
    total = torch.bincount(attr, minlength=size)
    right = torch.bincount(attr, weights=correct[scored].double(), minlength=size)
    return {
        "closing_accuracy": float(correct.sum() / scored.sum()),
        "attr_correct": [int(v) for v in right.tolist()],
        "attr_total": [int(v) for v in total.tolist()],
    }


#: model kinds of the paper 001 comparison, and the label prefix of their runs
COMPARISON_KINDS = {"urn": "URN", "lstm": "LSTM", "arbitrary": "Arbitrary"}


def plan_runs(*, units_000: int, truncation_k: int, units_001: list[int], models_001: list[str],
              lstm_embedding: int, dropout: float) -> dict[str, dict[str, Any]]:
    """The models of the chapter, by label.

    Paper 000 Fig. 3: ``"{k}-TURN"``, ``"Full URN"`` and ``"Arbitrary"`` at ``units_000`` units. Paper 001
    Fig. 3: each kind of ``models_001`` (paper: URN and LSTM) at each size of ``units_001``, labelled
    e.g. ``"URN 16"``. Every model is built once here, so an impossible one (odd n for a URN, k >= n, ...)
    fails before any training.
    """
    check_int("units_000", units_000, minimum=2)
    check_float("dropout", dropout, minimum=0.0, maximum=0.99)
    if not isinstance(units_001, (list, tuple)) or not units_001:
        raise ParameterError(f"units_001={units_001!r} must be a non-empty list of unit counts, e.g. [8, 16, 32]")
    if not isinstance(models_001, (list, tuple)) or not models_001:
        raise ParameterError(f"models_001={models_001!r} must be a non-empty list drawn from {list(COMPARISON_KINDS)}")
    for kind in models_001:
        check_choice("models_001", kind, list(COMPARISON_KINDS))
    plan = {
        f"{truncation_k}-TURN": {"kind": "urn", "n": units_000, "k": truncation_k, "dropout": dropout},
        "Full URN": {"kind": "urn", "n": units_000, "k": None, "dropout": dropout},
        "Arbitrary": {"kind": "arbitrary", "n": units_000, "dropout": dropout},
    }
    specs = {
        "urn": lambda n: {"kind": "urn", "n": n, "k": None, "dropout": dropout},
        "lstm": lambda n: {"kind": "lstm", "n": n, "embedding_size": lstm_embedding, "dropout": dropout},
        "arbitrary": lambda n: {"kind": "arbitrary", "n": n, "dropout": dropout},
    }
    for n in units_001:
        for kind in models_001:
            plan[f"{COMPARISON_KINDS[kind]} {n}"] = specs[kind](n)
    check_plan(plan, len(dyck.DyckVocab()),
               lambda label: "units_001, models_001" if label[-1].isdigit() else "units_000, truncation_k")
    return plan


def run_all(plan: dict[str, dict[str, Any]], task: DyckTask, cfg: TrainConfig, store_dir: str | Path, *,
            retrain: bool = False, on_stale: str = "warn") -> dict[str, Run]:
    """Load or train every planned model; return the runs by label.

    Args:
        plan: from :func:`plan_runs`.
        task, cfg: data and optimisation settings.
        store_dir: folder of the run store (``notebooks/results`` for the committed paper-scale runs).
        retrain: train even when a stored run matches.
        on_stale: see :meth:`urnlib.results.RunStore.get_or_train`.
    """
    data = lambda: make_data(task)  # noqa: E731 - cached; built only if something trains
    return load_or_train(
        EXPERIMENT, __name__, plan, task, cfg, store_dir, vocab_size=len(dyck.DyckVocab()),
        train_data=lambda: (data().train, data().test),
        evaluate=lambda model: evaluate_closing(model, data()),
        retrain=retrain, on_stale=on_stale,
    )


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run, in eval mode."""
    return _rebuild(run, len(dyck.DyckVocab()))
