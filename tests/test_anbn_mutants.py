"""urnlib.languages.anbn at the edges that mutants of the module survived (benchmarks/mutation.py, issue 48):
the strict threshold and its default, the forced positions of the language with n >= 0, the shape checks of
accepts, the counts largest_accepted tries. Probabilities are made by hand (a perfect counter). Fast: the
mutation run puts this file first."""

from __future__ import annotations

import pytest
import torch

from urnlib.languages.anbn import AnbnVocab, accepts, encode, largest_accepted, next_symbol_sets, strings
from urnlib.params import ParameterError

V = AnbnVocab()
A, B, STOP = V.index["a"], V.index["b"], V.index[V.STOP]


def counter(n: int, p_last_b: float = 1.0, p_first_a: float = 1.0):
    """(2n + 1, V) probabilities of a counter reading a^n b^n, with p(a) = ``p_first_a`` after <s> (the rest
    on </s>) and p(b) = ``p_last_b`` before the last b (the rest on </s>); and the targets."""
    _, targets = encode(strings([n]), V)
    probs = torch.zeros(2 * n + 1, len(V))
    probs[0, A], probs[0, STOP] = p_first_a, 1 - p_first_a
    for t in range(1, n + 1):
        probs[t, A], probs[t, B] = 0.5, 0.5
    for t in range(n + 1, 2 * n):
        probs[t, B] = 1.0
    probs[2 * n, STOP] = 1.0
    if n >= 2:
        probs[2 * n - 1, B], probs[2 * n - 1, STOP] = p_last_b, 1 - p_last_b
    return probs, targets[0]


def test_the_threshold_is_strict_and_one_half_by_default():
    """lecture 004 / the docstring: accepted when p(actual next symbol) *exceeds* the threshold."""
    assert accepts(*counter(3, p_last_b=0.75))
    assert not accepts(*counter(3, p_last_b=0.5))  # exactly 0.5 does not exceed 0.5
    assert not accepts(*counter(3, p_last_b=0.25), threshold=0.25)
    assert accepts(*counter(3, p_last_b=0.25), threshold=0.125)


def test_the_first_symbol_is_forced_only_when_the_language_starts_at_n_1():
    """With min_n = 0 the empty string is in the language: after <s> both a and </s> are allowed, so the
    first a is not a forced position and a counter unsure of it is still accepted."""
    unsure = counter(3, p_first_a=0.25)
    assert accepts(*unsure, min_n=0)
    assert not accepts(*unsure)  # min_n = 1: a is forced after <s>


def test_accepts_wants_one_row_of_probabilities_per_target():
    probs, targets = counter(2)
    with pytest.raises(ParameterError, match="must be"):
        accepts(probs, targets[:3])  # 5 rows, 3 targets
    with pytest.raises(ParameterError, match="must be"):
        accepts(probs[:, A], targets)  # one probability a row, not a row of V
    with pytest.raises(ParameterError, match="must be"):
        accepts(probs, targets[None, :])


def test_largest_accepted_tries_min_n_to_max_n_and_no_further():
    asked = []

    def fails_from(first_bad):
        def prob_fn(n):
            asked.append(n)
            return counter(n, p_last_b=0.0 if n >= first_bad else 1.0)
        return prob_fn

    assert largest_accepted(fails_from(99), max_n=6) == 6 and asked == [1, 2, 3, 4, 5, 6]
    asked.clear()
    assert largest_accepted(fails_from(6), max_n=6) == 5 and asked == [1, 2, 3, 4, 5, 6]
    asked.clear()
    assert largest_accepted(fails_from(5), max_n=6) == 4 and asked == [1, 2, 3, 4, 5]


def test_the_language_starts_at_n_0_or_1_only():
    for min_n in (-1, 2):
        with pytest.raises(ParameterError, match="min_n"):
            next_symbol_sets(3, min_n=min_n)
