"""urnlib.languages.cross_serial at the edges that mutants of the module survived (benchmarks/mutation.py,
issue 48): the authors' "lengths" sampler against the probabilities its definition gives (each pattern
length equally likely, then each string of that length), the defaults (seed 0, crossing strings only), and a
prediction past the vocabulary (a model with the authors' V = 10). Fast: the mutation run puts this file
first."""

from __future__ import annotations

import math
from collections import Counter

import torch

from urnlib.languages.cross_serial import (CrossSerialVocab, encode, generate, is_member, language,
                                           score_strings)


def test_the_lengths_sampler_draws_each_length_then_each_string_of_it_equally_likely():
    """C_8 has the pattern lengths m + n = 2 .. 7, each drawn with probability 1/6; length s has s - 1 strings
    (m = 1 .. s - 1), each drawn with probability 1 / (6 (s - 1)): (1, 1) with 1/6 (module docstring)."""
    n = 12_000
    counts = Counter(generate(n, 8, sampler="lengths", rng=5))
    assert set(counts) == set(language(8))
    by_length = Counter()
    for (m, k), c in counts.items():
        by_length[m + k] += c
    p = 1 / 6
    for length in range(2, 8):
        assert abs(by_length[length] - n * p) < 5 * math.sqrt(n * p * (1 - p)), (length, by_length)
    for (m, k), c in counts.items():
        q = 1 / (6 * (m + k - 1))
        assert abs(c - n * q) < 5 * math.sqrt(n * q * (1 - q)), ((m, k), c, n * q)


def test_generate_defaults_to_seed_0_and_crossing_strings():
    assert generate(50, 8) == generate(50, 8, rng=0, min_block=1, sampler="strings")


def test_is_member_defaults_to_crossing_strings_only():
    assert is_member("abcd", 3) and is_member("aabccd", 8)  # m, n >= 1
    assert not is_member("ac", 3) and not is_member("", 3)  # n = 0, m = n = 0: degenerate, left out


def test_a_prediction_past_the_vocabulary_is_wrong_not_an_error():
    """The authors' models have 10 output classes, the vocabulary 7 symbols: classes 7 .. 9 are never
    valid."""
    vocab = CrossSerialVocab()
    pairs = [(1, 1), (2, 1)]
    _, targets = encode(pairs, vocab)
    gold = torch.where(targets == -100, torch.tensor(vocab.index[vocab.PAD]), targets)
    assert score_strings(gold, pairs, vocab, 10).tolist() == [True, True]
    for past in (len(vocab), 9):
        pred = gold.clone()
        pred[0, 1] = past
        assert score_strings(pred, pairs, vocab, 10).tolist() == [False, True]
