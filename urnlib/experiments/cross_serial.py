"""The cross-serial experiment (paper 001 sec. 3, Fig. 2a-d, Table 1).

Language models trained on strings of C_8 = { a^m b^n c^m d^n | m + n < 8 } and tested on C_10, where the
strings with m + n = 8 or 9 are longer than any seen in training. A test string counts as correct when
every next-symbol prediction, up to and including the stop symbol, is a valid continuation in C_10.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.experiments.common import check_plan, load_or_train, rebuild_model as _rebuild
from urnlib.languages import cross_serial as cs
from urnlib.params import ParameterError, check_choice, check_float, check_int
from urnlib.results import Run
from urnlib.train import TokenData, TrainConfig, predict

__all__ = ["CrossSerialTask", "make_data", "evaluate_strings", "plan_runs", "run_all", "rebuild_model", "EXPERIMENT"]

EXPERIMENT = "cross_serial"
#: model kinds of the comparison, and the label prefix of their runs
KINDS = {"urn": "URN", "lstm": "LSTM"}


@dataclass(frozen=True)
class CrossSerialTask:
    """Data settings; defaults are paper 001 sec. 3's."""

    train_k: int = 8  # "51,200 strings picked uniformly from C_8"
    test_k: int = 10  # "5,120 strings picked uniformly from C_10"; also the language predictions are scored in
    train_size: int = 51_200
    test_size: int = 5_120
    min_block: int = 1  # m, n >= 1: see urnlib.languages.cross_serial on how "uniformly" is read
    seed: int = 0

    def __post_init__(self):
        check_int("min_block", self.min_block, minimum=0, maximum=1)
        for name in ("train_k", "test_k"):
            value = getattr(self, name)
            check_int(name, value, minimum=2)
            cs.check_language(value, self.min_block, name)
        if self.train_k > self.test_k:
            raise ParameterError(
                f"train_k={self.train_k} is above test_k={self.test_k}: the test language must contain the "
                "training language (C_k grows with k), so use train_k <= test_k"
            )
        check_int("train_size", self.train_size, minimum=1)
        check_int("test_size", self.test_size, minimum=1)
        check_int("seed", self.seed, minimum=0)


@dataclass
class CrossSerialData:
    vocab: cs.CrossSerialVocab
    train: TokenData
    test: TokenData
    test_pairs: list[tuple[int, int]]


@lru_cache(maxsize=4)
def make_data(task: CrossSerialTask) -> CrossSerialData:
    """Seeded training strings from C_train_k and test strings from C_test_k."""
    vocab = cs.CrossSerialVocab()
    train = cs.generate(task.train_size, task.train_k, min_block=task.min_block, rng=np.random.default_rng([task.seed, 0]))
    test = cs.generate(task.test_size, task.test_k, min_block=task.min_block, rng=np.random.default_rng([task.seed, 1]))
    return CrossSerialData(vocab, TokenData(*cs.encode(train, vocab)), TokenData(*cs.encode(test, vocab)), test)


def evaluate_strings(model: torch.nn.Module, data: CrossSerialData, task: CrossSerialTask) -> dict[str, Any]:
    """Full-string error rate on the test set, overall and by pattern length m + n.

    Returns:
        ``error_rate`` and lists indexed by m + n: ``length_wrong``, ``length_total``.
    """
    predicted = predict(model, data.test.inputs).argmax(dim=-1)
    correct = cs.score_strings(predicted, data.test_pairs, data.vocab, task.test_k, task.min_block)
    lengths = torch.tensor([m + n for m, n in data.test_pairs])
    total = torch.bincount(lengths, minlength=task.test_k)
    wrong = torch.bincount(lengths, weights=(~correct).double(), minlength=task.test_k)
    return {
        "error_rate": float((~correct).double().mean()),
        "length_wrong": [int(v) for v in wrong.tolist()],
        "length_total": [int(v) for v in total.tolist()],
    }


def plan_runs(*, units: list[int], models: list[str], lstm_embedding: int, dropout: float) -> dict[str, dict[str, Any]]:
    """Each kind of ``models`` (paper: URN and LSTM) at each size of ``units`` (paper: 8, 16, 32).

    The URN is untruncated and has no state dropout (reference-facts: cross-serial URN); dropout acts on
    its parameters and output. The LSTM has dropout on its input and state.
    """
    check_float("dropout", dropout, minimum=0.0, maximum=0.99)
    if not isinstance(units, (list, tuple)) or not units:
        raise ParameterError(f"units={units!r} must be a non-empty list of unit counts, e.g. [8, 16, 32]")
    if not isinstance(models, (list, tuple)) or not models:
        raise ParameterError(f"models={models!r} must be a non-empty list drawn from {list(KINDS)}")
    for kind in models:
        check_choice("models", kind, list(KINDS))
    specs = {
        "urn": lambda n: {"kind": "urn", "n": n, "k": None, "dropout": dropout, "state_dropout": False},
        "lstm": lambda n: {"kind": "lstm", "n": n, "embedding_size": lstm_embedding, "dropout": dropout},
    }
    plan = {f"{KINDS[kind]} {n}": specs[kind](n) for kind in models for n in units}
    check_plan(plan, len(cs.CrossSerialVocab()), lambda label: "units, models")
    return plan


def run_all(plan: dict[str, dict[str, Any]], task: CrossSerialTask, cfg: TrainConfig, store_dir: str | Path, *,
            retrain: bool = False, on_stale: str = "warn") -> dict[str, Run]:
    """Load or train every planned model; return the runs by label."""
    data = lambda: make_data(task)  # noqa: E731 - built only if something trains
    return load_or_train(
        EXPERIMENT, __name__, plan, task, cfg, store_dir, vocab_size=len(cs.CrossSerialVocab()),
        train_data=lambda: (data().train, data().test),
        evaluate=lambda model: evaluate_strings(model, data(), task),
        retrain=retrain, on_stale=on_stale,
    )


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run, in eval mode."""
    return _rebuild(run, len(cs.CrossSerialVocab()))
