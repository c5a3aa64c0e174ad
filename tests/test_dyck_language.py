"""Tests for urnlib.languages.dyck: the generalised Dyck language of paper 000 sec. 5 / paper 001 sec. 4."""

from collections import Counter

import numpy as np
import pytest
import torch

from urnlib.languages.dyck import (
    CLOSERS,
    OPENERS,
    PAIRS,
    DyckVocab,
    attractors,
    depth,
    encode,
    generate,
    is_dyck,
    score_closing,
)
from urnlib.params import ParameterError

METHODS = ["walk", "midpoint"]


# --------------------------------------------------------------------------- #
# generate
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("max_depth", [None, 3])
def test_generated_strings_are_balanced_and_of_exact_length(method, max_depth):
    strings = generate(500, 10, max_depth=max_depth, method=method, rng=1)
    assert len(strings) == 500
    assert all(len(s) == 20 for s in strings)
    assert all(is_dyck(s) for s in strings)
    assert set("".join(strings)) <= set(OPENERS + CLOSERS)


@pytest.mark.parametrize("n_pairs", [1, 4, 7])
def test_generated_length_follows_n_pairs(n_pairs):
    for method in METHODS:
        strings = generate(50, n_pairs, method=method, rng=2)
        assert all(len(s) == 2 * n_pairs and is_dyck(s) for s in strings)


def test_depth_cap_walk_at_most_midpoint_exactly():
    walk = generate(2000, 10, max_depth=3, method="walk", rng=3)
    mid = generate(2000, 10, max_depth=3, method="midpoint", rng=3)
    walk_depths = Counter(depth(s) for s in walk)
    assert max(walk_depths) <= 3
    assert walk_depths[3] > 0 and walk_depths[2] > 0  # the walk does not force the cap
    assert {depth(s) for s in mid} == {3}


@pytest.mark.parametrize("method", METHODS)
def test_without_cap_some_strings_are_deeper_than_3(method):
    strings = generate(2000, 10, method=method, rng=4)
    depths = [depth(s) for s in strings]
    assert max(depths) > 3
    assert sum(d > 3 for d in depths) >= 20
    assert max(depths) <= 10


@pytest.mark.parametrize("method", METHODS)
def test_bracket_types_are_uniform(method):
    strings = generate(2000, 10, method=method, rng=5)  # 20,000 pairs
    counts = Counter(ch for s in strings for ch in s if ch in OPENERS)
    assert sum(counts.values()) == 20_000
    for o in OPENERS:
        assert abs(counts[o] / 20_000 - 0.2) < 0.01
    # and each closer matches its opener (a type is drawn per pair, not per character)
    for o, c in PAIRS:
        assert sum(s.count(c) for s in strings) == counts[o]


@pytest.mark.parametrize("method", METHODS)
def test_seeded_determinism(method):
    a = generate(100, 10, max_depth=3, method=method, rng=7)
    b = generate(100, 10, max_depth=3, method=method, rng=7)
    c = generate(100, 10, max_depth=3, method=method, rng=8)
    assert a == b
    assert a != c
    # a Generator is accepted too and gives the same strings as its seed
    assert generate(100, 10, max_depth=3, method=method, rng=np.random.default_rng(7)) == a


def test_walk_takes_each_free_step_with_probability_one_half():
    """Paper 001 sec. 4: where both moves are allowed, open or close with equal probability."""
    for max_depth in (None, 3):
        strings = generate(5000, 10, max_depth=max_depth, method="walk", rng=9)
        cap = 10 if max_depth is None else max_depth
        free = opens = 0
        forced_ok = True
        for s in strings:
            opened = d = 0
            for ch in s:
                can_open = opened < 10 and d < cap
                can_close = d > 0
                is_open = ch in OPENERS
                if can_open and can_close:
                    free += 1
                    opens += is_open
                else:
                    forced_ok &= is_open == can_open  # forced steps go the only way allowed
                opened += is_open
                d += 1 if is_open else -1
        assert forced_ok
        assert free > 10_000
        assert abs(opens / free - 0.5) < 0.02


def test_generate_rejects_bad_arguments():
    with pytest.raises(ParameterError, match="method"):
        generate(3, method="zigzag")
    with pytest.raises(ParameterError, match="max_depth"):
        generate(3, 4, max_depth=5)
    with pytest.raises(ParameterError, match="n_pairs"):
        generate(3, 0)


# --------------------------------------------------------------------------- #
# depth, is_dyck
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "s, d",
    [("[{}]", 2), ("{([()]<>)}", 4), ("()", 1), ("()[]{}", 1), ("(((())))", 4), ("+-<>", 1), ("", 0)],
)
def test_depth(s, d):
    assert depth(s) == d


@pytest.mark.parametrize(
    "s, ok",
    [("{([()]<>)}", True), ("+-", True), ("({)}", False), ("(()", False), (")(", False), ("(]", False),
     ("(a)", False)],
)
def test_is_dyck(s, ok):
    assert is_dyck(s) is ok


# --------------------------------------------------------------------------- #
# attractors
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "s, expected",
    [
        ("{()}", [None, None, 0, 1]),  # paper 001 sec. 4: ( is an attractor of {}
        ("([])", [None, None, 0, 1]),
        ("(())", [None, None, 0, 0]),  # same type is not an attractor
        ("([]{})", [None, None, 0, None, 0, 2]),  # closed before the closer: still counted
        ("([(<>)])", [None, None, None, None, 0, 1, 2, 2]),  # [ has ( and <; the outer ( only [ and <
        ("()[]", [None, 0, None, 0]),
    ],
)
def test_attractors(s, expected):
    assert attractors(s) == expected


# --------------------------------------------------------------------------- #
# encode
# --------------------------------------------------------------------------- #
def test_encode_shifts_targets_right_after_the_start_symbol():
    vocab = DyckVocab()
    assert len(vocab) == 12  # paper 001 Table 2: V = 12
    strings = ["([])", "{}<>"]
    inputs, targets = encode(strings, vocab)
    assert inputs.shape == targets.shape == (2, 4) and inputs.dtype == torch.long
    assert torch.all(inputs[:, 0] == vocab.index[vocab.START])
    assert torch.equal(inputs[:, 1:], targets[:, :-1])
    for row, s in zip(targets, strings):
        assert "".join(vocab.symbols[i] for i in row) == s


def test_encode_rejects_unequal_lengths():
    with pytest.raises(ParameterError, match="length"):
        encode(["()", "([])"], DyckVocab())


# --------------------------------------------------------------------------- #
# score_closing
# --------------------------------------------------------------------------- #
def test_score_closing_compares_only_closers_and_scores_only_closing_positions():
    vocab = DyckVocab()
    idx = vocab.index
    s = "([])"
    _, targets = encode([s], vocab)  # targets: ( [ ] )
    L, V = len(s), len(vocab)
    logits = torch.zeros(1, L, V)
    # every position: an opening bracket has by far the largest logit (must be ignored)
    logits[0, :, idx["{"]] = 100.0
    logits[0, :, idx["+"]] = 50.0
    # position 2 (gold "]"): closers ">" < "]" -> correct
    logits[0, 2, idx[">"]] = 2.0
    logits[0, 2, idx["]"]] = 3.0
    # position 3 (gold ")"): "}" beats ")" -> wrong
    logits[0, 3, idx[")"]] = 4.0
    logits[0, 3, idx["}"]] = 5.0
    # positions 0, 1 have opening targets: whatever the logits, they are not scored
    logits[0, 0, idx[")"]] = 9.0
    scored, correct = score_closing(logits, targets, vocab)
    assert scored.tolist() == [[False, False, True, True]]
    assert correct.tolist() == [[False, False, True, False]]


def test_score_closing_is_argmax_over_the_five_closers():
    vocab = DyckVocab()
    rng = torch.Generator().manual_seed(0)
    strings = generate(64, 5, rng=11)
    _, targets = encode(strings, vocab)
    logits = torch.randn(64, 10, 12, generator=rng)
    scored, correct = score_closing(logits, targets, vocab)
    closer_ids = [vocab.index[c] for c in CLOSERS]
    for b in range(64):
        for t in range(10):
            gold = vocab.symbols[targets[b, t]]
            assert bool(scored[b, t]) == (gold in CLOSERS)
            if gold in CLOSERS:
                best = max(closer_ids, key=lambda i: float(logits[b, t, i]))
                assert bool(correct[b, t]) == (best == int(targets[b, t]))
            else:
                assert not correct[b, t]
