"""The counting language a^n b^n (Weiss, Goldberg & Yahav 2018; lecture 004, "Training recurrent
architectures on a^nb^n", D_train up to N = 20, strings written ``^ab$``, ``^aabb$``, ...).

A language model is trained on a^n b^n for n <= N and tested beyond. A string is *accepted* when
the model's probability of the actual next symbol exceeds a threshold (reference-facts: "accept a
string if every next-symbol probability exceeds a threshold; train on n <= N, test beyond").

The lecture slides are silent on which positions are checked. Positions are indexed by target:
position t holds the symbol after the prefix of length t (t = 0 .. 2n, the last being ``</s>``).
While reading a's the model cannot know n, so both ``a`` and ``b`` are possible and a correct model
gives neither probability 1; the test "bites" where the next symbol is forced: the b's after the
first b and ``</s>``. Hence :func:`accepts` defaults to ``positions="forced"`` (every position whose
allowed set is a single symbol, see :func:`deterministic_positions`); ``positions="all"`` checks
every position, the literal reading of "every next-symbol probability".
"""

from __future__ import annotations

import torch

from urnlib.params import ParameterError, check_choice, check_int
from urnlib.tokens import IGNORE

__all__ = ["AnbnVocab", "VOCAB_SIZE", "strings", "encode", "next_symbol_sets", "deterministic_positions",
           "accepts", "largest_accepted"]

POSITIONS = ("forced", "all")


class AnbnVocab:
    """Symbol <-> index map: padding, start ``<s>``, stop ``</s>``, ``a``, ``b`` (V = 5).

    Padding is never predicted (its targets are :data:`~urnlib.tokens.IGNORE`).
    """

    PAD, START, STOP = "<pad>", "<s>", "</s>"

    def __init__(self):
        self.symbols = [self.PAD, self.START, self.STOP, "a", "b"]
        self.index = {s: i for i, s in enumerate(self.symbols)}

    def __len__(self) -> int:
        return len(self.symbols)


#: input symbols of an a^n b^n model: padding, start, stop, a, b
VOCAB_SIZE = len(AnbnVocab())


def strings(ns) -> list[str]:
    """``["a" * n + "b" * n for n in ns]``.

    Args:
        ns: iterable of counts n >= 0.
    """
    return ["a" * check_int("n", n, minimum=0) + "b" * n for n in ns]


def encode(strings: list[str], vocab: AnbnVocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs ``[<s>, x_1 .. x_L]`` and targets ``[x_1 .. x_L, </s>]`` as ``(N, T)`` long tensors.

    Args:
        strings: a^n b^n strings over ``a``/``b`` (lengths may differ).
        vocab: the vocabulary.

    Returns:
        ``(inputs, targets)``, T = longest length + 1; inputs padded with the padding index, targets
        with :data:`~urnlib.tokens.IGNORE` (the convention of :func:`urnlib.train.fit`).
    """
    if not strings:
        raise ParameterError("strings must not be empty")
    for s in strings:
        n = len(s) // 2
        if s != "a" * n + "b" * n:
            raise ParameterError(f"{s!r} is not of the form a^n b^n")
    T = max(len(s) for s in strings) + 1
    idx = vocab.index
    inputs = torch.full((len(strings), T), idx[vocab.PAD], dtype=torch.long)
    targets = torch.full((len(strings), T), IGNORE, dtype=torch.long)
    for i, s in enumerate(strings):
        syms = [idx[c] for c in s]
        inputs[i, : len(s) + 1] = torch.tensor([idx[vocab.START]] + syms)
        targets[i, : len(s) + 1] = torch.tensor(syms + [idx[vocab.STOP]])
    return inputs, targets


def next_symbol_sets(n: int, min_n: int = 1) -> list[frozenset[str]]:
    """Allowed next symbols after each prefix of a^n b^n, in the language {a^m b^m : m >= min_n}.

    After a^k: ``a`` always (m is unbounded); ``b`` if k >= max(1, min_n); ``</s>`` only for k = 0 when
    min_n = 0. So after ``<s>`` only ``a`` (lecture strings start at ``^ab$``, min_n = 1) and after
    a^k, k >= 1, both ``a`` and ``b``. After a^n b^j, 1 <= j < n: only ``b``; after a^n b^n: only ``</s>``.

    Args:
        n: the string's count, n >= min_n.
        min_n: smallest count in the language (0 or 1).

    Returns:
        ``2n + 1`` frozensets; entry t follows the prefix of length t.
    """
    check_int("min_n", min_n, minimum=0, maximum=1)
    check_int("n", n, minimum=min_n)
    sets = []
    for k in range(n + 1):  # after a^k
        s = {"a"} | ({"b"} if k >= max(1, min_n) else set())
        sets.append(frozenset(s | ({AnbnVocab.STOP} if k == 0 == min_n else set())))
    sets += [frozenset({"b"})] * (n - 1) + ([frozenset({AnbnVocab.STOP})] if n >= 1 else [])
    return sets


def deterministic_positions(n: int, min_n: int = 1) -> list[int]:
    """Positions whose next symbol is forced (a single allowed symbol).

    For n >= 1 these are the b's after the first b and ``</s>`` (positions n+1 .. 2n), plus position 0
    (the first ``a``) when min_n = 1.

    Args:
        n: the string's count, n >= min_n.
        min_n: smallest count in the language (0 or 1).
    """
    return [t for t, s in enumerate(next_symbol_sets(n, min_n)) if len(s) == 1]


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
        raise ParameterError(f"threshold={threshold!r} must be a number in (0, 1)")
    return float(threshold)


def accepts(probs, target_ids, threshold: float = 0.5, positions: str = "forced", min_n: int = 1) -> bool:
    """Whether a model accepts one string: p(actual next symbol) > threshold at the checked positions.

    Args:
        probs: ``(T, V)`` next-symbol probabilities (rows at :data:`~urnlib.tokens.IGNORE` targets are
            dropped).
        target_ids: ``(T,)`` target ids of a^n b^n as made by :func:`encode` (n = (len - 1) // 2).
        threshold: in (0, 1); the check is strict (``>``).
        positions: ``"forced"`` (default; see :func:`deterministic_positions`) or ``"all"``.
        min_n: smallest count in the language, used for the forced positions.
    """
    threshold = _check_threshold(threshold)
    check_choice("positions", positions, POSITIONS)
    probs, target_ids = torch.as_tensor(probs), torch.as_tensor(target_ids, dtype=torch.long)
    if probs.dim() != 2 or target_ids.dim() != 1 or probs.shape[0] != target_ids.shape[0]:
        raise ParameterError(
            f"probs {tuple(probs.shape)} must be (T, V) and target_ids {tuple(target_ids.shape)} (T,)"
        )
    keep = target_ids != IGNORE
    probs, target_ids = probs[keep], target_ids[keep]
    if len(target_ids) % 2 != 1:
        raise ParameterError(f"{len(target_ids)} targets is not 2n + 1")
    p = probs.gather(1, target_ids[:, None])[:, 0]
    if positions == "forced":
        p = p[deterministic_positions((len(target_ids) - 1) // 2, min_n)]
    return bool((p > threshold).all())


def largest_accepted(
    prob_fn, max_n: int, threshold: float = 0.5, positions: str = "forced", min_n: int = 1
) -> int:
    """Largest n <= max_n such that every a^{n'} b^{n'} with min_n <= n' <= n is accepted.

    Args:
        prob_fn: ``prob_fn(n) -> (probs, target_ids)`` for a^n b^n, as taken by :func:`accepts`.
        max_n: largest n tried.
        threshold, positions, min_n: as in :func:`accepts`.

    Returns:
        That n; ``min_n - 1`` if a^{min_n} b^{min_n} is already rejected.
    """
    check_int("max_n", max_n, minimum=min_n)
    _check_threshold(threshold)
    for n in range(min_n, max_n + 1):
        if not accepts(*prob_fn(n), threshold=threshold, positions=positions, min_n=min_n):
            return n - 1
    return max_n
