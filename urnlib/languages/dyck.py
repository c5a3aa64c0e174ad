"""Generalised Dyck language with 5 bracket types (paper 000 sec. 5, paper 001 sec. 4).

Strings are ``n_pairs`` matched pairs (20 characters for the papers' 10 pairs). Two generators:

* ``"walk"`` (paper 001 sec. 4): a random walk from one corner of an N x N grid to the opposite one
  that may not cross the diagonal; where both steps are allowed, open or close with probability 1/2.
  An optional ``max_depth`` forbids opening at that depth (training strings: depth <= 3).
* ``"midpoint"`` (the authors' code): a lattice path built by recursive random midpoints, first
  through a random point at depth exactly ``max_depth``, never deeper; so its strings reach
  ``max_depth`` exactly. Without ``max_depth`` it is the same recursion with no cap.

In both, each pair's type is drawn uniformly from the five pairs.
"""

from __future__ import annotations

import numpy as np
import torch

from urnlib.params import ParameterError, check_choice, check_int

__all__ = [
    "PAIRS",
    "OPENERS",
    "CLOSERS",
    "DyckVocab",
    "VOCAB_SIZE",
    "generate",
    "depth",
    "is_dyck",
    "attractors",
    "encode",
    "score_closing",
]

PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"), ("+", "-"))  # reference-facts: 5 pairs
OPENERS = tuple(o for o, _ in PAIRS)
CLOSERS = tuple(c for _, c in PAIRS)
_MATCH = {c: o for o, c in PAIRS}
GENERATORS = ("walk", "midpoint")


class DyckVocab:
    """Symbol <-> index map: padding, start symbol, then the 10 brackets (V = 12, paper 001 Table 2).

    The padding symbol is never predicted (its targets are masked); it is kept so that V = 12 as in
    the authors' models (their vocabulary: space, start ``s`` and the 10 brackets).
    """

    PAD, START = "_", "^"

    def __init__(self):
        self.symbols = [self.PAD, self.START] + [b for pair in PAIRS for b in pair]
        self.index = {s: i for i, s in enumerate(self.symbols)}
        self.closer_ids = torch.tensor([self.index[c] for c in CLOSERS])

    def __len__(self) -> int:
        return len(self.symbols)


#: input symbols of a Dyck model: 10 brackets, start, padding (paper 001 Table 2: V = 12)
VOCAB_SIZE = len(DyckVocab())


def _walk_skeletons(count: int, n_pairs: int, rng: np.random.Generator, max_depth: int | None) -> np.ndarray:
    """``(count, 2 n_pairs)`` bool array, True = open; paper 001's random walk, vectorised."""
    cap = n_pairs if max_depth is None else max_depth
    opened = np.zeros(count, dtype=np.int64)
    d = np.zeros(count, dtype=np.int64)
    out = np.zeros((count, 2 * n_pairs), dtype=bool)
    for t in range(2 * n_pairs):
        can_open = (opened < n_pairs) & (d < cap)
        can_close = d > 0
        coin = rng.random(count) < 0.5
        step_open = can_open & (~can_close | coin)
        out[:, t] = step_open
        opened += step_open
        d += np.where(step_open, 1, -1)
    return out


def _midpoint_path(p0, p1, cap, rng, out):
    """Append steps (True = open) of a path from p0 to p1 (points = (opens, closes)), depth <= cap."""
    (i0, j0), (i1, j1) = p0, p1
    if p0 == p1:
        return
    if i0 == i1:
        out.extend([False] * (j1 - j0))
    elif j0 == j1:
        out.extend([True] * (i1 - i0))
    else:
        j = int(rng.integers(j0, j1 + 1))
        i = int(rng.integers(max(i0, j), min(i1, cap + j) + 1))
        _midpoint_path(p0, (i, j), cap, rng, out)
        _midpoint_path((i, j), p1, cap, rng, out)


def _midpoint_skeleton(n_pairs: int, rng: np.random.Generator, max_depth: int | None) -> list[bool]:
    out: list[bool] = []
    if max_depth is None:
        _midpoint_path((0, 0), (n_pairs, n_pairs), n_pairs, rng, out)
    else:  # through a random point at depth exactly max_depth, never deeper
        i = int(rng.integers(max_depth, n_pairs + 1))
        mid = (i, i - max_depth)
        _midpoint_path((0, 0), mid, max_depth, rng, out)
        _midpoint_path(mid, (n_pairs, n_pairs), max_depth, rng, out)
    return out


def _assign_types(skeleton, rng: np.random.Generator) -> str:
    types = rng.integers(0, len(PAIRS), size=len(skeleton))
    stack, chars = [], []
    for step, ty in zip(skeleton, types):
        if step:
            stack.append(ty)
            chars.append(PAIRS[ty][0])
        else:
            chars.append(PAIRS[stack.pop()][1])
    return "".join(chars)


def generate(
    count: int,
    n_pairs: int = 10,
    *,
    max_depth: int | None = None,
    method: str = "walk",
    rng: np.random.Generator | int = 0,
) -> list[str]:
    """Draw ``count`` Dyck strings of exactly ``n_pairs`` pairs.

    Args:
        count: number of strings.
        n_pairs: pairs per string (paper: 10, i.e. 20 characters).
        max_depth: nesting cap (paper: 3 for training; ``None`` = unconstrained, for testing).
            With ``method="midpoint"`` every string reaches the cap exactly.
        method: ``"walk"`` (paper 001 sec. 4) or ``"midpoint"`` (the authors' code).
        rng: a numpy Generator or a seed.

    Returns:
        A list of strings over the 10 bracket characters.
    """
    check_int("count", count, minimum=0)
    check_int("n_pairs", n_pairs, minimum=1)
    check_choice("method", method, GENERATORS)
    if max_depth is not None:
        check_int("max_depth", max_depth, minimum=1, maximum=n_pairs)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    if method == "walk":
        skeletons = _walk_skeletons(count, n_pairs, rng, max_depth)
    else:
        skeletons = [_midpoint_skeleton(n_pairs, rng, max_depth) for _ in range(count)]
    return [_assign_types(s, rng) for s in skeletons]


def depth(s: str) -> int:
    """Maximum nesting level: ``depth("[{}]") == 2`` (paper 000 sec. 5)."""
    d = best = 0
    for ch in s:
        d += 1 if ch in OPENERS else -1
        best = max(best, d)
    return best


def is_dyck(s: str) -> bool:
    """True iff every bracket is closed by its own type, in nested order."""
    stack = []
    for ch in s:
        if ch in OPENERS:
            stack.append(ch)
        elif ch in _MATCH:
            if not stack or stack.pop() != _MATCH[ch]:
                return False
        else:
            return False
    return not stack


def attractors(s: str) -> list[int | None]:
    """Attractors of the pair closed at each position (``None`` at opening brackets).

    An attractor of a pair is an opening bracket of a different type opened between the pair's
    opener and its closer, counted even if it is closed again before (reference-facts, "Dyck task";
    paper 001 sec. 4: in ``{()}``, ``(`` is an attractor of ``{}``).
    """
    stack: list[list] = []  # [opener, attractors so far]
    out: list[int | None] = []
    for ch in s:
        if ch in OPENERS:
            for entry in stack:
                if entry[0] != ch:
                    entry[1] += 1
            stack.append([ch, 0])
            out.append(None)
        else:
            out.append(stack.pop()[1])
    return out


def encode(strings: list[str], vocab: DyckVocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs ``[^, x_1 .. x_{L-1}]`` and targets ``[x_1 .. x_L]`` as ``(N, L)`` long tensors.

    All strings must have the same length L (the papers: 20).
    """
    lengths = {len(s) for s in strings}
    if len(lengths) != 1:
        raise ParameterError(f"Dyck strings must all have one length, got lengths {sorted(lengths)}")
    idx = vocab.index
    targets = torch.tensor([[idx[c] for c in s] for s in strings], dtype=torch.long)
    inputs = torch.cat([torch.full((len(strings), 1), idx[vocab.START]), targets[:, :-1]], dim=1)
    return inputs, targets


def score_closing(logits: torch.Tensor, targets: torch.Tensor,
                  vocab: DyckVocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Closing-bracket scorer (paper 000 sec. 5; paper 001 sec. 4).

    Only positions whose gold next symbol is a closing bracket are scored; the prediction is the
    argmax over the 5 closing brackets (opening brackets are always acceptable, so they are ignored).

    Args:
        logits: ``(N, L, V)`` next-symbol scores.
        targets: ``(N, L)`` gold next symbols.
        vocab: the vocabulary.

    Returns:
        ``(scored, correct)``: two ``(N, L)`` bool tensors.
    """
    closer_ids = vocab.closer_ids.to(targets.device)
    scored = torch.isin(targets, closer_ids)
    predicted = closer_ids[logits[..., closer_ids].argmax(dim=-1)]
    return scored, scored & (predicted == targets)
