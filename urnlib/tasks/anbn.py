"""The a^n b^n task (Weiss, Goldberg & Yahav 2018; lecture 004, "Training recurrent architectures on
a^nb^n"): its data and its evaluation.

A language model reads ``<s> a^n b^n`` (:mod:`urnlib.languages.anbn`) and predicts every next symbol; it is
trained on n = 1 .. N (:func:`training_data`) and a string is *accepted* when, at every position where the
next symbol is forced, the model gives that symbol probability above a threshold (:func:`acceptance`). The
largest n such that every a^m b^m with m <= n is accepted (:func:`largest`) measures how far a model counts
beyond its training range. The training language is finite: its validation data (:func:`validation_data`)
are the training strings, once each. Used by :mod:`urnlib.chapters.primer.anbn` and
:mod:`urnlib.chapters.zoo.experiment`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from urnlib.languages import anbn
from urnlib.params import ParameterError, check_float, check_int
from urnlib.tokens import TokenData, device_of

__all__ = ["AnbnTask", "training_data", "validation_data", "acceptance", "largest", "VOCAB_SIZE"]

VOCAB_SIZE = anbn.VOCAB_SIZE  #: input symbols of an a^n b^n model (:data:`urnlib.languages.anbn.VOCAB_SIZE`)


@dataclass(frozen=True)
class AnbnTask:
    """Training and test strings (values from a chapter's Config).

    Args:
        max_train_n: D_train = {a^n b^n : n <= N} (lecture 004: N = 20 on the slide).
        copies: each training string this many times per epoch.
        max_test_n: largest n tested.
        threshold: accept when p(forced next symbol) > threshold (see :mod:`urnlib.languages.anbn`).
        trace_n: the string a^n b^n whose states are plotted.
    """

    max_train_n: int
    copies: int
    max_test_n: int
    threshold: float
    trace_n: int

    def __post_init__(self):
        check_int("max_train_n", self.max_train_n, minimum=1)
        check_int("copies", self.copies, minimum=1)
        check_int("max_test_n", self.max_test_n, minimum=self.max_train_n)
        check_float("threshold", self.threshold, minimum=0.0, maximum=1.0, strict_min=True)
        check_int("trace_n", self.trace_n, minimum=1)
        if self.threshold >= 1:
            raise ParameterError(f"threshold={self.threshold}: need a probability strictly below 1")


def training_data(task: AnbnTask) -> TokenData:
    """a^n b^n for n = 1 .. N, each ``copies`` times."""
    ns = [n for n in range(1, task.max_train_n + 1) for _ in range(task.copies)]
    return TokenData(*anbn.encode(anbn.strings(ns), anbn.AnbnVocab()))


def acceptance(model: torch.nn.Module, task: AnbnTask) -> list[bool]:
    """Whether a^n b^n is accepted, for n = 1 .. max_test_n (one padded batch)."""
    inputs, targets = anbn.encode(anbn.strings(range(1, task.max_test_n + 1)), anbn.AnbnVocab())
    model.eval()
    with torch.no_grad():
        probs = torch.softmax(model(inputs.to(device_of(model))).double(), dim=-1).cpu()
    return [anbn.accepts(probs[n - 1, : 2 * n + 1], targets[n - 1, : 2 * n + 1], task.threshold)
            for n in range(1, task.max_test_n + 1)]


def largest(accepted: list[bool]) -> int:
    """Largest n with every m <= n accepted (0 if a b is rejected)."""
    return next((i for i, ok in enumerate(accepted) if not ok), len(accepted))


def validation_data(task: AnbnTask) -> TokenData:
    """The training strings a^n b^n, n = 1 .. N, once each (the language is finite: held-out strings drawn
    like the training strings are the training strings)."""
    return training_data(replace(task, copies=1))
