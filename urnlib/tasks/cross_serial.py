"""The cross-serial task (paper 001 sec. 3, Fig. 2a-d, Table 1): its data and its evaluation.

Language models are trained on strings of C_train_k = { a^m b^n c^m d^n | m + n < train_k }
(:mod:`urnlib.languages.cross_serial`) and tested on C_test_k, whose longer strings none saw in training. A
test string counts as correct when every next-symbol prediction, up to and including the stop symbol, is a
valid continuation in C_test_k (:func:`evaluate_strings`, by pattern length m + n). :func:`make_data` draws
the training and test strings from the streams ``[seed, 0]`` and ``[seed, 1]``, :func:`validation_data`
held-out strings of C_train_k from ``[seed, 2]`` (the zoo's early stopping). Used by
:mod:`urnlib.chapters.cross_serial.experiment` and :mod:`urnlib.chapters.zoo.experiment`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from urnlib.languages import cross_serial as cs
from urnlib.params import ParameterError, check_int
from urnlib.tokens import TokenData, predict

__all__ = ["CrossSerialTask", "CrossSerialData", "make_data", "evaluate_strings", "validation_data"]


@dataclass(frozen=True)
class CrossSerialTask:
    """Data settings of one run (the values come from a chapter's Config)."""

    train_k: int  # training strings from C_train_k
    test_k: int  # test strings from C_test_k; also the language predictions are scored in
    train_size: int
    test_size: int
    min_block: int  # m, n >= min_block: see urnlib.languages.cross_serial on how "uniformly" is read
    seed: int

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
        check_int("train_size", self.train_size, minimum=1, maximum=10_000_000)
        check_int("test_size", self.test_size, minimum=1, maximum=1_000_000)
        check_int("seed", self.seed, minimum=0)


@dataclass
class CrossSerialData:
    vocab: cs.CrossSerialVocab
    train: TokenData
    test: TokenData
    test_pairs: list[tuple[int, int]]


@lru_cache(maxsize=4)
def make_data(task: CrossSerialTask, sampler: str = "strings") -> CrossSerialData:
    """Seeded training strings from C_train_k and test strings from C_test_k, drawn by ``sampler``
    (:data:`urnlib.languages.cross_serial.SAMPLERS`; the default, uniformly over the strings)."""
    vocab = cs.CrossSerialVocab()
    train = cs.generate(task.train_size, task.train_k, min_block=task.min_block,
                        rng=np.random.default_rng([task.seed, 0]), sampler=sampler)
    test = cs.generate(task.test_size, task.test_k, min_block=task.min_block,
                       rng=np.random.default_rng([task.seed, 1]), sampler=sampler)
    return CrossSerialData(vocab, TokenData(*cs.encode(train, vocab)), TokenData(*cs.encode(test, vocab)),
                           test)


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


@lru_cache(maxsize=4)
def validation_data(task: CrossSerialTask, sampler: str = "strings") -> TokenData:
    """Validation strings of a cross-serial task: drawn from C_train_k like its training strings (by
    ``sampler``), from the stream ``[seed, 2]``."""
    pairs = cs.generate(task.test_size, task.train_k, min_block=task.min_block,
                        rng=np.random.default_rng([task.seed, 2]), sampler=sampler)
    return TokenData(*cs.encode(pairs, cs.CrossSerialVocab()))
