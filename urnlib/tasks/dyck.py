"""The Dyck task (paper 000 sec. 5 / Fig. 3; paper 001 sec. 4 / Fig. 3, Table 2): its data and its evaluation.

Next-symbol language models are trained on Dyck strings nested at most ``train_max_depth`` deep and tested
on unconstrained (deeper) strings of :mod:`urnlib.languages.dyck`; only the closing brackets are scored, by
number of attractors (:func:`evaluate_closing`). :func:`make_data` draws the training and test strings
from the streams ``[seed, 0]`` and ``[seed, 1]``, :func:`validation_data` held-out strings drawn like the
training strings from ``[seed, 2]`` (the zoo's early stopping). Used by :mod:`urnlib.chapters.dyck.experiment`
and :mod:`urnlib.chapters.zoo.experiment`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from urnlib.languages import dyck
from urnlib.params import check_choice, check_int
from urnlib.tokens import TokenData, device_of

__all__ = ["DyckTask", "DyckData", "make_data", "evaluate_closing", "validation_data", "VOCAB_SIZE"]

VOCAB_SIZE = dyck.VOCAB_SIZE  #: input symbols of a Dyck model (:data:`urnlib.languages.dyck.VOCAB_SIZE`)


@dataclass(frozen=True)
class DyckTask:
    """Data settings of one run (the values come from a chapter's Config).

    Args:
        n_pairs: bracket pairs per string (a string has ``2 n_pairs`` characters).
        train_size, test_size: strings in the training and test sets.
        train_max_depth: nesting cap of the training strings (test strings have none).
        generator: ``"walk"`` or ``"midpoint"`` (see :mod:`urnlib.languages.dyck`).
        seed: data seed (the training and test streams derive from it).
    """

    n_pairs: int
    train_size: int
    test_size: int
    train_max_depth: int
    generator: str
    seed: int

    def __post_init__(self):
        check_int("n_pairs", self.n_pairs, minimum=1, maximum=500)
        check_int("train_size", self.train_size, minimum=1, maximum=10_000_000)
        check_int("test_size", self.test_size, minimum=1, maximum=1_000_000)
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
    return DyckData(vocab, TokenData(*dyck.encode(train, vocab)), TokenData(*dyck.encode(test, vocab)), test,
                    attr)


@torch.no_grad()
def evaluate_closing(model: torch.nn.Module, data: DyckData, batch_size: int = 1024) -> dict[str, Any]:
    """Closing-bracket accuracy on the test set, overall and by number of attractors, ``batch_size``
    strings at a time (it never holds more than one batch of logits).

    Returns:
        ``closing_accuracy`` and two lists indexed by attractor count:
        ``attr_correct[a]``, ``attr_total[a]`` (a = 0 .. the largest count in the test set).
    """
    was_training = model.training
    model.eval()
    size = int(data.test_attractors.max()) + 1
    total = torch.zeros(size, dtype=torch.long)
    right = torch.zeros(size, dtype=torch.long)
    n_correct = n_scored = torch.zeros((), dtype=torch.long)
    device = device_of(model)
    try:
        for i in range(0, len(data.test), batch_size):
            logits = model(data.test.inputs[i : i + batch_size].to(device)).cpu()
            scored, correct = dyck.score_closing(logits, data.test.targets[i : i + batch_size], data.vocab)
            attr = data.test_attractors[i : i + batch_size][scored]
            total += torch.bincount(attr, minlength=size)
            right += torch.bincount(attr[correct[scored]], minlength=size)
            n_correct, n_scored = n_correct + correct.sum(), n_scored + scored.sum()
    finally:
        model.train(was_training)
    return {
        "closing_accuracy": float(n_correct / n_scored),  # true division in the default dtype, as always
        "attr_correct": [int(v) for v in right.tolist()],
        "attr_total": [int(v) for v in total.tolist()],
    }


@lru_cache(maxsize=4)
def validation_data(task: DyckTask) -> TokenData:
    """Validation strings of a Dyck task: drawn like its training strings, from the stream ``[seed, 2]``."""
    strings = dyck.generate(task.test_size, task.n_pairs, max_depth=task.train_max_depth,
                            method=task.generator, rng=np.random.default_rng([task.seed, 2]))
    return TokenData(*dyck.encode(strings, dyck.DyckVocab()))
