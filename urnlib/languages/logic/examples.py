"""One entailment example (a line ``A,B,E,H1,H2,H3`` of Evans et al.'s files) and its heuristic columns.

``E`` = 1 iff A |= B; ``H1`` = length(A) >= length(B), ``H2`` = vars(B) subset of vars(A), ``H3`` = literals
of the negation normal form of B subset of those of A (the three heuristic baselines of the released README).
"""

from __future__ import annotations

from typing import NamedTuple

from urnlib.languages.logic.formulas import Var, Not, as_formula, collect_variables, length, to_string
from urnlib.languages.logic.semantics import entails

__all__ = ["Entailment", "heuristics", "make_example"]


class Entailment(NamedTuple):
    """One line ``A,B,E,H1,H2,H3`` of an entailment file; formulas as strings."""

    premise: str
    hypothesis: str
    label: int
    h1: int
    h2: int
    h3: int


def _nnf(f, positive: bool = True):
    """Negation normal form with ``a > b`` rewritten as ``~a | b``; literals are ``(name, sign)``."""
    t = type(f)
    if t is Var:
        return ("lit", f.name, positive)
    if t is Not:
        return _nnf(f.arg, not positive)
    if f.op == ">":
        left, right = _nnf(f.left, not positive), _nnf(f.right, positive)
        return ("|" if positive else "&", left, right)
    op = f.op if positive else ("|" if f.op == "&" else "&")
    return (op, _nnf(f.left, positive), _nnf(f.right, positive))


def _literals(f) -> set:
    acc, stack = set(), [_nnf(f)]
    while stack:
        g = stack.pop()
        if g[0] == "lit":
            acc.add((g[1], g[2]))
        else:
            stack.append(g[1])
            stack.append(g[2])
    return acc


def heuristics(premise, hypothesis) -> tuple[int, int, int]:
    """The released files' heuristic columns (README of Evans et al.'s repository).

    Returns:
        ``(H1, H2, H3)``: length(A) >= length(B); vars(B) subset of vars(A); literals(NNF(B)) subset of
        literals(NNF(A)), each 0/1.
    """
    a, b = as_formula(premise), as_formula(hypothesis)
    h1 = int(length(a) >= length(b))
    h2 = int(collect_variables(b, set()) <= collect_variables(a, set()))
    h3 = int(_literals(b) <= _literals(a))
    return h1, h2, h3


def make_example(premise, hypothesis, label: int | None = None) -> Entailment:
    """An :class:`Entailment` with the label (computed by truth table if not given) and heuristics;
    formulas printed in the files' format."""
    a, b = as_formula(premise), as_formula(hypothesis)
    if label is None:
        label = int(entails(a, b))
    return Entailment(to_string(a), to_string(b), int(label), *heuristics(a, b))
