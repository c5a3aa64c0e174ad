"""Cross-serial dependencies C_k = { a^m b^n c^m d^n | m + n < k } (paper 001 sec. 3).

The a's agree with the c's and the b's with the d's, crossing each other, as case-marked nouns and
their verbs in Swiss German subordinate clauses (Shieber 1985). Strings are framed by a start and a
stop symbol and modelled as a generative language model.

**How "uniformly" is read.** The paper draws its strings "uniformly from C_8". We sample uniformly over
the *strings* of the language (each string equally likely, so each ``(m, n)`` pair equally likely, since a
pair determines its string), with ``m, n >= 1`` by default: with ``m = 0`` or ``n = 0`` the pattern
degenerates into the nested ``b^n d^n`` or ``a^m c^m`` (and ``m = n = 0`` into the empty string), which has
no crossing dependency; the authors' code also draws ``m, n >= 1``. ``min_block=0`` admits the degenerate
strings. The authors' code (GU-CLASP/unitary-recurrent-network, ``xdep.py``) draws a string length uniformly,
then ``m``: it is not uniform over strings; ``sampler="lengths"`` draws that way (:data:`SAMPLERS`).

**Scoring (paper 001 sec. 3).** A prediction after a prefix is correct if prefix + prediction is a prefix
of some string of the *evaluation* language (C_10); the stop symbol is correct only after a complete
string. A string is correct when every prediction up to and including the one of the stop symbol is.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from urnlib.params import ParameterError, check_choice, check_int

__all__ = ["CrossSerialVocab", "SAMPLERS", "check_language", "language", "generate", "is_member",
           "valid_next", "encode", "score_strings"]

LETTERS = ("a", "b", "c", "d")
#: how :func:`generate` draws a string of C_k: ``"strings"``, every string (every ``(m, n)``) equally likely
#: (ours: paper 001's "uniformly from C_8" read per string); ``"lengths"``, as the authors' code draws: the
#: pattern length ``m + n`` uniformly among those of C_k, then ``m`` uniformly among those of that length
SAMPLERS = ("strings", "lengths")


class CrossSerialVocab:
    """Symbols: padding, start ``^``, stop ``$``, then a b c d (V = 7).

    Paper 001 Table 1 counts parameters with V = 10; the chapter builds models with V = 10 to compare
    the counts, and trains with this vocabulary.
    """

    PAD, START, STOP = "_", "^", "$"

    def __init__(self):
        self.symbols = [self.PAD, self.START, self.STOP, *LETTERS]
        self.index = {s: i for i, s in enumerate(self.symbols)}

    def __len__(self) -> int:
        return len(self.symbols)


def check_language(k: int, min_block: int = 1, name: str = "k") -> None:
    """Raise :class:`ParameterError` unless C_k (with m, n >= min_block) is a non-empty language."""
    check_int(name, k, minimum=1)
    check_int("min_block", min_block, minimum=0, maximum=1)
    if k <= 2 * min_block:
        raise ParameterError(
            f"{name}={k}: C_{k} = {{a^m b^n c^m d^n | m + n < {k}}} with m, n >= {min_block} is empty; "
            f"use {name} >= {2 * min_block + 1}"
        )


@lru_cache(maxsize=32)
def language(k: int, min_block: int = 1) -> tuple[tuple[int, int], ...]:
    """Every ``(m, n)`` of C_k, i.e. ``min_block <= m, n`` and ``m + n < k``, sorted."""
    check_language(k, min_block)
    return tuple((m, n) for m in range(min_block, k) for n in range(min_block, k) if m + n < k)


def string(m: int, n: int) -> str:
    """``a^m b^n c^m d^n``."""
    return "a" * m + "b" * n + "c" * m + "d" * n


def generate(count: int, k: int, *, min_block: int = 1, rng: np.random.Generator | int = 0,
             sampler: str = "strings") -> list[tuple[int, int]]:
    """Draw ``count`` strings of C_k; returns their ``(m, n)``.

    Args:
        count: number of strings.
        k: the language C_k (paper: 8 for training, 10 for testing).
        min_block: smallest m and n (1: cross-serial strings only; 0: degenerate ones too).
        rng: numpy Generator or seed.
        sampler: ``"strings"`` (uniformly over the strings of C_k) or ``"lengths"`` (``m + n`` uniformly over
            the pattern lengths of C_k, then ``m`` uniformly given it: the authors' code); :data:`SAMPLERS`.
    """
    check_int("count", count, minimum=0)
    check_choice("sampler", sampler, list(SAMPLERS))
    pairs = language(k, min_block)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    if sampler == "lengths":
        by_length: dict[int, list[tuple[int, int]]] = {}
        for m, n in pairs:
            by_length.setdefault(m + n, []).append((m, n))
        lengths = sorted(by_length)
        chosen = rng.integers(0, len(lengths), size=count)  # (count,) the pattern lengths
        within = rng.random(size=count)  # (count,) then m, uniformly among that length's strings
        return [by_length[lengths[i]][int(u * len(by_length[lengths[i]]))] for i, u in zip(chosen, within)]
    return [pairs[i] for i in rng.integers(0, len(pairs), size=count)]


def is_member(s: str, k: int, min_block: int = 1) -> bool:
    """True iff ``s`` (letters only, no start/stop) is in C_k."""
    m, rest = _run(s, "a")
    n, rest = _run(rest, "b")
    m2, rest = _run(rest, "c")
    n2, rest = _run(rest, "d")
    return not rest and m == m2 and n == n2 and (m, n) in language(k, min_block)


def _run(s: str, ch: str) -> tuple[int, str]:
    i = 0
    while i < len(s) and s[i] == ch:
        i += 1
    return i, s[i:]


@lru_cache(maxsize=32)
def _prefixes(k: int, min_block: int) -> frozenset[str]:
    return frozenset(string(m, n)[:i] for m, n in language(k, min_block) for i in range(2 * (m + n) + 1))


def valid_next(prefix: str, k: int, min_block: int = 1, stop: str = "$") -> set[str]:
    """Symbols that may follow ``prefix`` (letters only) within C_k: letters that keep it a prefix of a
    string of C_k, and ``stop`` if it is itself a string of C_k. Empty if ``prefix`` is not a prefix."""
    prefixes = _prefixes(k, min_block)
    out = {ch for ch in LETTERS if prefix + ch in prefixes}
    if is_member(prefix, k, min_block):
        out.add(stop)
    return out


def encode(pairs: list[tuple[int, int]], vocab: CrossSerialVocab,
           ignore: int = -100) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs ``^ w_1 .. w_L`` and targets ``w_1 .. w_L $``, padded to the longest string.

    Padded inputs hold the padding symbol and padded targets ``ignore`` (no loss, not scored).
    """
    strings = [string(m, n) for m, n in pairs]
    T = max(len(s) for s in strings) + 1
    inputs = torch.full((len(strings), T), vocab.index[vocab.PAD], dtype=torch.long)
    targets = torch.full((len(strings), T), ignore, dtype=torch.long)
    for row, s in enumerate(strings):
        ids = [vocab.index[c] for c in s]
        inputs[row, : len(s) + 1] = torch.tensor([vocab.index[vocab.START], *ids])
        targets[row, : len(s) + 1] = torch.tensor([*ids, vocab.index[vocab.STOP]])
    return inputs, targets


def score_strings(predicted: torch.Tensor, pairs: list[tuple[int, int]], vocab: CrossSerialVocab, k_eval: int,
                  min_block: int = 1) -> torch.Tensor:
    """Which strings are predicted correctly (paper 001 sec. 3).

    Args:
        predicted: ``(N, T)`` predicted next-symbol indices (argmax over the model's classes) after the
            inputs of :func:`encode`; an index past the vocabulary (a model with more classes) is never valid.
        pairs: the strings' ``(m, n)``.
        vocab: the vocabulary.
        k_eval: the language whose continuations count as correct (paper: C_10).
        min_block: as :func:`generate`.

    Returns:
        ``(N,)`` bool tensor: True when every prediction up to and including the stop symbol's is valid.
    """
    # a model may have more output classes than the vocabulary (the authors' 10): those are never valid
    symbols = vocab.symbols
    out = torch.zeros(len(pairs), dtype=torch.bool)
    pred = predicted.tolist()
    for row, (m, n) in enumerate(pairs):
        s = string(m, n)
        out[row] = all(pred[row][i] < len(symbols)
                       and symbols[pred[row][i]] in valid_next(s[:i], k_eval, min_block, vocab.STOP)
                       for i in range(len(s) + 1))
    return out
