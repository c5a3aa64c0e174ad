"""Tests for urnlib.languages.cross_serial: C_k = { a^m b^n c^m d^n | m + n < k } of paper 001 sec. 3, its
uniform sampler, the continuation oracle used for scoring, encoding and full-string scoring; and the
parameter checks of the cross-serial experiment."""

import math
from collections import Counter

import numpy as np
import pytest
import torch

from urnlib.chapters.cross_serial.experiment import Config
from urnlib.languages.cross_serial import (
    CrossSerialVocab,
    check_language,
    encode,
    generate,
    is_member,
    language,
    score_strings,
    valid_next,
)
from urnlib.params import ParameterError

torch.set_num_threads(1)

STOP = CrossSerialVocab.STOP


def brute_force_language(k: int, min_block: int) -> set[str]:
    """C_k written out by hand-rolled enumeration (independent of the module)."""
    out = set()
    for m in range(0, k):
        for n in range(0, k):
            if m + n < k and m >= min_block and n >= min_block:
                out.add("a" * m + "b" * n + "c" * m + "d" * n)
    return out


def brute_force_next(prefix: str, k: int, min_block: int) -> set[str]:
    """Symbols that keep ``prefix`` a prefix of a string of C_k, and the stop symbol if it is one."""
    strings = brute_force_language(k, min_block)
    out = {s[len(prefix)] for s in strings if len(s) > len(prefix) and s.startswith(prefix)}
    if prefix in strings:
        out.add(STOP)
    return out


# --------------------------------------------------------------------------- #
# language: the (m, n) pairs
# --------------------------------------------------------------------------- #
def test_c8_and_c10_have_21_and_36_crossing_strings():
    # m + n = s for s = 2..k-1 has s - 1 pairs with m, n >= 1: 1 + 2 + ... + (k - 2)
    assert len(language(8)) == 21
    assert len(language(10)) == 36
    assert all(m >= 1 and n >= 1 and m + n < 8 for m, n in language(8))
    assert len(set(language(10))) == 36  # no duplicates
    assert set(language(8)) < set(language(10))  # paper: k < l implies C_k subset of C_l


def test_min_block_0_adds_the_degenerate_pairs():
    assert set(language(3, 0)) == {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)}
    assert set(language(3, 1)) == {(1, 1)}
    for k in (3, 8, 10):
        added = set(language(k, 0)) - set(language(k, 1))
        # the pairs with m = 0 or n = 0: (0, 0..k-1) and (1..k-1, 0)
        assert added == {(0, n) for n in range(k)} | {(m, 0) for m in range(k)}
        assert len(added) == 2 * k - 1
        assert len(language(k, 0)) == k * (k + 1) // 2
    assert language(1, 0) == ((0, 0),)  # C_1 with min_block 0 is {""}


@pytest.mark.parametrize("k", [3, 8, 10])
@pytest.mark.parametrize("min_block", [0, 1])
def test_generated_strings_are_members(k, min_block):
    pairs = generate(400, k, min_block=min_block, rng=1)
    assert len(pairs) == 400
    strings = {"a" * m + "b" * n + "c" * m + "d" * n for m, n in pairs}
    assert all(is_member(s, k, min_block) for s in strings)
    assert strings <= brute_force_language(k, min_block)


@pytest.mark.parametrize("k, min_block", [(8, 1), (10, 1), (10, 0)])
def test_sampler_covers_the_language(k, min_block):
    pairs = Counter(generate(5000, k, min_block=min_block, rng=2))
    assert set(pairs) == set(language(k, min_block))


@pytest.mark.parametrize("k", [8, 10])
def test_sampler_is_uniform_over_strings(k):
    """Each (m, n) pair, i.e. each string, has probability 1/K (K = |C_k|).

    Tolerance: with N draws a pair's count is Binomial(N, 1/K), sd = sqrt(N p (1 - p)); we allow 5 sd per
    pair (two-sided tail 5.7e-7, so < 3e-5 for any of <= 36 pairs with an arbitrary seed). With N = 1000 K
    that is about +-16% of the expected 1000. A sampler drawing the length m + n uniformly and then m (the
    authors' scheme) gives (1, 1) probability 1/6 in C_8, i.e. 3.5x the expected count; it fails by far.
    """
    K = len(language(k))
    N = 1000 * K
    counts = Counter(generate(N, k, rng=3))
    p = 1 / K
    sd = math.sqrt(N * p * (1 - p))
    for pair in language(k):
        assert abs(counts[pair] - N * p) < 5 * sd, (pair, counts[pair], N * p)
    # and lengths follow the number of strings of each length (m + n = s has s - 1 strings), not uniform
    by_len = Counter(m + n for m, n in generate(N, k, rng=4))
    assert by_len[k - 1] > 4 * by_len[2]


def test_seeded_determinism():
    a = generate(200, 10, rng=7)
    assert a == generate(200, 10, rng=7)
    assert a != generate(200, 10, rng=8)
    assert generate(200, 10, rng=np.random.default_rng(7)) == a
    assert generate(0, 10, rng=7) == []


# --------------------------------------------------------------------------- #
# is_member
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "s, k, min_block, ok",
    [
        ("abcd", 3, 1, True),
        ("aabcccd", 10, 1, False),  # 2 a's, 3 c's
        ("aabbccdd", 5, 1, True),  # m + n = 4 < 5
        ("aabbccdd", 4, 1, False),  # m + n = 4 is not < 4
        ("abdc", 10, 1, False),  # d before c
        ("abcdd", 10, 1, False),
        ("abcda", 10, 1, False),  # trailing letter
        ("abxcd", 10, 1, False),  # not a letter of the alphabet
        ("", 3, 1, False),
        ("", 3, 0, True),
        ("bd", 3, 1, False),  # m = 0
        ("bd", 3, 0, True),
        ("ac", 3, 0, True),  # n = 0
        ("abcd^", 10, 1, False),  # start/stop symbols are not letters of the string
        ("aaaaabbbbcccccdddd", 10, 1, True),  # (5, 4): the longest m + n of C_10
        ("aaaaabbbbcccccdddd", 9, 1, False),
    ],
)
def test_is_member(s, k, min_block, ok):
    assert is_member(s, k, min_block) is ok
    assert (s in brute_force_language(k, min_block)) is ok


# --------------------------------------------------------------------------- #
# valid_next
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "prefix, min_block, expected",
    [
        ("", 1, {"a"}),  # m >= 1: the string must start with a
        ("a", 1, {"a", "b"}),
        ("aab", 1, {"b", "c"}),
        ("aabc", 1, {"c"}),
        ("aabcc", 1, {"d"}),
        ("aabccd", 1, {STOP}),  # a complete string: only the stop symbol
        ("abcd", 1, {STOP}),
        ("aabbbcc", 1, {"d"}),  # the notebook's example
        ("aaaaabbbb", 1, {"c"}),  # m + n = 9: no more a or b within C_10
        ("aaaaaaaab", 1, {"c"}),  # (8, 1)
        ("aaaaaaaaa", 1, set()),  # m = 9 leaves no room for n >= 1
        ("ac", 1, set()),  # n >= 1 is required: no c before a b
        ("ba", 1, set()),
        ("abd", 1, set()),
        ("abcdd", 1, set()),
        ("", 0, {"a", "b", STOP}),  # the empty string is in C_10 with min_block 0
        ("aa", 0, {"a", "b", "c"}),
        ("ac", 0, {STOP}),  # (1, 0) is complete
        ("b", 0, {"b", "d"}),
        ("ba", 0, set()),
        ("aaaaaaaaa", 0, {"c"}),  # (9, 0)
    ],
)
def test_valid_next_hand_made(prefix, min_block, expected):
    assert valid_next(prefix, 10, min_block) == expected


def test_valid_next_uses_k():
    assert valid_next("aaaaabbbb", 11) == {"b", "c"}
    assert valid_next("aaaaabbbb", 9) == set()  # (5, 4) is not in C_9
    assert valid_next("abcd", 10, stop="<eos>") == {"<eos>"}


@pytest.mark.parametrize("min_block", [0, 1])
def test_valid_next_agrees_with_brute_force_on_every_prefix(min_block):
    strings = brute_force_language(10, min_block)
    prefixes = {s[:i] for s in strings for i in range(len(s) + 1)}
    # plus one-letter extensions of every prefix (most are not prefixes any more)
    prefixes |= {p + ch for p in list(prefixes) for ch in "abcd"}
    for p in prefixes:
        assert valid_next(p, 10, min_block) == brute_force_next(p, 10, min_block), p


# --------------------------------------------------------------------------- #
# encode
# --------------------------------------------------------------------------- #
def test_encode_frames_with_start_and_stop_and_pads():
    vocab = CrossSerialVocab()
    assert len(vocab) == 7
    assert vocab.symbols[:3] == [vocab.PAD, vocab.START, vocab.STOP]
    inputs, targets = encode([(1, 1), (2, 1), (0, 0)], vocab)
    assert inputs.shape == targets.shape == (3, 7) and inputs.dtype == targets.dtype == torch.long

    def dec(row):
        return "".join(vocab.symbols[i] if i >= 0 else "#" for i in row.tolist())

    assert dec(inputs[0]) == "^abcd__" and dec(targets[0]) == "abcd$##"
    assert dec(inputs[1]) == "^aabccd" and dec(targets[1]) == "aabccd$"
    assert dec(inputs[2]) == "^______" and dec(targets[2]) == "$######"
    assert int((targets == -100).sum()) == 2 + 0 + 6
    # targets are inputs shifted left by one wherever the input is not padding
    real = inputs[:, 1:] != vocab.index[vocab.PAD]
    assert torch.equal(inputs[:, 1:][real], targets[:, :-1][real])


def test_encode_ignore_value_and_width():
    vocab = CrossSerialVocab()
    inputs, targets = encode([(1, 2)], vocab, ignore=-1)
    assert inputs.shape == (1, 7)  # "abbcdd" + start
    assert (targets == -1).sum() == 0
    inputs, targets = encode([(1, 2), (1, 1)], vocab, ignore=-1)
    assert targets[1, -2:].tolist() == [-1, -1]


# --------------------------------------------------------------------------- #
# score_strings
# --------------------------------------------------------------------------- #
def gold_predictions(pairs, vocab, garbage: int):
    """The gold next symbols, with ``garbage`` where the targets are padding."""
    _, targets = encode(pairs, vocab)
    pred = targets.clone()
    pred[targets == -100] = garbage
    return pred


def test_score_gold_continuation_is_correct_and_padding_is_ignored():
    vocab = CrossSerialVocab()
    pairs = [(1, 1), (3, 1), (5, 4), (2, 2)]
    for garbage in (vocab.index[vocab.PAD], vocab.index[vocab.START], vocab.index["c"]):
        pred = gold_predictions(pairs, vocab, garbage)
        assert score_strings(pred, pairs, vocab, 10).tolist() == [True] * 4


def test_score_accepts_any_possible_continuation_and_rejects_others():
    vocab = CrossSerialVocab()
    idx = vocab.index
    pairs = [(3, 1)]  # aaabcccd$
    gold = gold_predictions(pairs, vocab, idx[vocab.PAD])

    def score(pos, sym, k_eval=10):
        pred = gold.clone()
        pred[0, pos] = idx[sym]
        return bool(score_strings(pred, pairs, vocab, k_eval)[0])

    assert score(2, "b")  # after "aa", gold "a": "b" is a possible continuation
    assert score(3, "a")  # after "aaa", gold "b": another "a" is possible
    assert score(4, "b")  # after "aaab", gold "c": another "b" is possible
    assert not score(0, "c")  # the first symbol must be "a"
    assert not score(0, "b")  # m >= 1
    assert not score(0, STOP)
    assert not score(7, STOP)  # after "aaabccc", gold "d": stop one step too early
    assert not score(8, "d")  # after the complete string only the stop symbol is right
    assert not score(8, "a")
    for pos in range(9):  # padding or start predicted anywhere
        assert not score(pos, vocab.PAD)
        assert not score(pos, vocab.START)


def test_score_uses_the_evaluation_language():
    vocab = CrossSerialVocab()
    idx = vocab.index
    pairs = [(5, 3)]  # aaaaabbbcccccddd, m + n = 8
    pred = gold_predictions(pairs, vocab, idx[vocab.PAD])
    pred[0, 8] = idx["b"]  # after "aaaaabbb": a fourth b gives m + n = 9, fine in C_10, not in C_9
    assert score_strings(pred, pairs, vocab, 10).tolist() == [True]
    assert score_strings(pred, pairs, vocab, 9).tolist() == [False]


def test_score_min_block_0():
    vocab = CrossSerialVocab()
    idx = vocab.index
    pairs = [(2, 1)]  # aabccd
    pred = gold_predictions(pairs, vocab, idx[vocab.PAD])
    pred[0, 2] = idx["c"]  # "aac" is a prefix of a^2 c^2 only with n = 0
    assert score_strings(pred, pairs, vocab, 10, min_block=1).tolist() == [False]
    assert score_strings(pred, pairs, vocab, 10, min_block=0).tolist() == [True]


def test_score_matches_brute_force_on_noisy_predictions():
    vocab = CrossSerialVocab()
    pairs = generate(300, 10, rng=12)
    gold = gold_predictions(pairs, vocab, vocab.index[vocab.PAD])
    g = torch.Generator().manual_seed(0)
    noise = torch.randint(len(vocab), gold.shape, generator=g)
    flip = torch.rand(gold.shape, generator=g) < 0.04
    pred = torch.where(flip, noise, gold)
    got = score_strings(pred, pairs, vocab, 10).tolist()
    expected = []
    for row, (m, n) in enumerate(pairs):
        s = "a" * m + "b" * n + "c" * m + "d" * n
        syms = [vocab.symbols[i] for i in pred[row].tolist()]
        expected.append(all(syms[i] in brute_force_next(s[:i], 10, 1) for i in range(len(s) + 1)))
    assert got == expected
    assert 0 < sum(expected) < len(expected)  # both outcomes occur


# --------------------------------------------------------------------------- #
# parameter checks
# --------------------------------------------------------------------------- #
def test_check_language_rejects_empty_languages():
    with pytest.raises(ParameterError, match=r"k=2: C_2 .* empty"):
        check_language(2)
    with pytest.raises(ParameterError, match="k=1"):
        check_language(1)
    with pytest.raises(ParameterError, match="k=0"):
        check_language(0, 0)
    with pytest.raises(ParameterError, match="min_block"):
        check_language(5, 2)
    with pytest.raises(ParameterError, match="test_k=2"):
        check_language(2, name="test_k")
    with pytest.raises(ParameterError, match="k"):
        check_language(3.0)
    check_language(3)  # C_3 = {abcd}
    check_language(2, 0)


def test_check_language_accepts_c1_with_min_block_0():
    """Documented: it raises *unless* the language is non-empty; C_1 with min_block 0 is {""}, non-empty."""
    check_language(1, 0)
    assert is_member("", 1, 0)
    assert generate(3, 1, min_block=0, rng=0) == [(0, 0)] * 3
    assert valid_next("", 1, 0) == {STOP}


def test_language_and_generate_check_their_arguments():
    with pytest.raises(ParameterError, match="k=2"):
        language(2)
    with pytest.raises(ParameterError, match="k=2"):
        generate(5, 2)
    with pytest.raises(ParameterError, match="count"):
        generate(-1, 8)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"train_k": 1}, ["train_k=1", ">= 2"]),
        ({"train_k": 12, "test_k": 10}, ["train_k=12", "test_k=10"]),
        ({"test_k": 2}, ["test_k=2", "empty"]),
        ({"train_k": 2}, ["train_k=2", "empty"]),
        ({"min_block": 2}, ["min_block=2"]),
        ({"train_size": 0}, ["train_size"]),
        ({"test_size": 0}, ["test_size"]),
        ({"seeds": [-1]}, ["seeds", "-1"]),
        ({"seeds": []}, ["seeds"]),
        ({"seeds": [0, 0]}, ["seeds", "twice"]),
        ({"seeds": [0, 1.5]}, ["seeds", "1.5"]),
        ({"seeds": 3}, ["seeds"]),
    ],
)
def test_task_rejects_bad_parameters(kwargs, words):
    with pytest.raises(ParameterError) as info:
        Config.load("paper", **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_task_accepts_paper_values_and_equal_k():
    t = Config.paper().task(2)
    assert (t.train_k, t.test_k, t.train_size, t.test_size, t.min_block) == (8, 10, 51_200, 5_120, 1)
    assert t.seed == 2
    Config.load("paper", train_k=10, test_k=10)
    Config.load("paper", train_k=2, test_k=3, min_block=0)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"models": ["gru"]}, ["models", "gru", "urn", "lstm"]),
        ({"units": [7]}, ["units", "7", "even"]),
        ({"units": []}, ["units"]),
        ({"models": []}, ["models"]),
        ({"dropout": 1.5}, ["dropout"]),
        ({"units": [8, 8]}, ["units", "twice"]),
        ({"models": ["urn", "urn"]}, ["models", "twice"]),
        ({"epochs": 0}, ["epochs"]),
        ({"patience": -1}, ["patience"]),
        ({"patience": 2.5}, ["patience"]),
        ({"min_epochs": -1}, ["min_epochs", ">= 0"]),
        ({"min_epochs": 1.5}, ["min_epochs"]),
        ({"monitor": "accuracy"}, ["monitor", "accuracy", "test_loss", "error_rate"]),
        ({"keep_best": "yes"}, ["keep_best"]),
    ],
)
def test_plan_rejects_bad_parameters(kwargs, words):
    with pytest.raises(ParameterError) as info:
        Config.load("paper", **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
