"""Truth values and entailment: evaluation under an assignment and exact truth tables.

Truth tables are Python ints: bit r of a table is the formula's value in row r, and variable i of n is
bit i of r. Tables over more than 2^16 rows are evaluated in chunks of 2^16 rows (the higher variables
held constant), so :func:`entails` is exact for any number of variables.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from urnlib.languages.logic.formulas import Not, Var, as_formula, collect_variables

__all__ = ["evaluate", "entails", "satisfiable", "truth_columns", "truth_table"]

_CHUNK = 16  # rows per chunk: 2^_CHUNK


def evaluate(f, assignment: dict) -> bool:
    """Truth value of ``f`` under ``assignment`` (variable name -> bool)."""
    f = as_formula(f)
    t = type(f)
    if t is Var:
        return bool(assignment[f.name])
    if t is Not:
        return not evaluate(f.arg, assignment)
    a = evaluate(f.left, assignment)
    b = evaluate(f.right, assignment)
    return (a and b) if f.op == "&" else (a or b) if f.op == "|" else ((not a) or b)


@lru_cache(maxsize=32)
def truth_columns(n: int) -> tuple[int, ...]:
    """Truth-table columns of variables 0..n-1 over 2^n rows (bit r of column i is bit i of r)."""
    size = 1 << n
    cols = []
    for i in range(n):
        half = 1 << i
        block = ((1 << half) - 1) << half  # 2^(i+1) bits: lower half 0, upper half 1
        reps = size // (2 * half)
        # replicate the block reps times: multiply by sum_k 2^(k * 2^(i+1))
        cols.append(block * (((1 << (2 * half * reps)) - 1) // ((1 << (2 * half)) - 1)))
    return tuple(cols)


def truth_table(f, cols: dict, full: int) -> int:
    """The table of the tree ``f`` given each variable's column ``cols[name]``; ``full`` has every row's
    bit set (the table of a tautology)."""
    t = type(f)
    if t is Var:
        return cols[f.name]
    if t is Not:
        return full ^ truth_table(f.arg, cols, full)
    a = truth_table(f.left, cols, full)
    b = truth_table(f.right, cols, full)
    op = f.op
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    return (full ^ a) | b


def _chunks(names: list[str]):
    """Yield ``(cols, full)`` covering all rows over ``names``, 2^_CHUNK rows at a time."""
    low, high = names[:_CHUNK], names[_CHUNK:]
    base = truth_columns(len(low))
    full = (1 << (1 << len(low))) - 1
    cols = dict(zip(low, base))
    for bits in itertools.product((0, full), repeat=len(high)):
        cols.update(zip(high, bits))
        yield cols, full


def entails(premise, hypothesis) -> bool:
    """Whether ``premise |= hypothesis``: every row of the truth table over the union of their
    variables that makes the premise true makes the hypothesis true (brute force, exact).

    Args:
        premise, hypothesis: formulas or strings.
    """
    a, b = as_formula(premise), as_formula(hypothesis)
    names = sorted(collect_variables(b, collect_variables(a, set())))
    for cols, full in _chunks(names):
        if truth_table(a, cols, full) & (full ^ truth_table(b, cols, full)):
            return False
    return True


def satisfiable(f) -> bool:
    """Whether some row of the truth table of ``f`` (a formula or a string) makes it true (exact)."""
    f = as_formula(f)
    return any(truth_table(f, cols, full) for cols, full in _chunks(sorted(collect_variables(f, set()))))
