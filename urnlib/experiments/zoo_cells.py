"""The recurrent cells of the zoo chapter, their parameter counts, and sizes matched to a parameter budget.

Every cell is a model kind of the registry (:mod:`urnlib.models.registry`), written in its grammar with one
size free (units ``n``, or the TPRU's state size ``d``); everything else is fixed by the chapter's parameters:

========== ================================ =============================================================
cell       registry spec                    parameters (V input symbols, o outputs: V, or 2 classes)
========== ================================ =============================================================
srn        ``srn n`` (localist input)       ``n V + n^2 + n + (n + 1) o`` (lecture 004, Elman 1990)
gru        ``gru n`` (localist input)       ``3 (n V + n^2 + n) + (n + 1) o`` (lecture 004)
lstm       ``lstm n e<E>``                  ``4 (n (n + E) + n) + V E + (n + 1) o`` (paper 001 sec. 2.1)
urn        ``urn n``                        ``V n (n - 1) / 2 + (n + 1) o`` (paper 000 sec. 2, untruncated)
turn       ``urn n k<k>``                   ``V l + (n + 1) o``, ``l = (n-1) + ... + (n-k)`` (paper 000)
arbitrary  ``arbitrary n``                  ``V n^2 + (n + 1) o`` (paper 000 sec. 5)
tpru       ``tpru d N<roles>``              ``V d + 6 d^2 + d + 2 + (d + 1) o`` (paper 002, embedding d)
========== ================================ =============================================================

:func:`match_size` picks, for a cell, a task's ``V`` and ``o`` and a budget, the size whose count is nearest
the budget; the counts are these closed forms (tests check them against built modules). A budget a cell cannot
meet within the tolerance stops with a :class:`~urnlib.params.ParameterError` that says what it can meet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from urnlib.models.cells import gru_parameter_count, srn_parameter_count
from urnlib.models.recurrent import lstm_parameter_count
from urnlib.models.unitary import urn_parameter_count
from urnlib.params import ParameterError, check_float, check_int

__all__ = ["CELLS", "Shapes", "Match", "cell_label", "spec_text", "parameter_count", "smallest_size",
           "match_size"]

#: cell name -> its label in tables and figures ("{k}" is the k-TURN's truncation)
CELLS = {"srn": "SRN", "gru": "GRU", "lstm": "LSTM", "urn": "URN", "turn": "{k}-TURN",
         "arbitrary": "Arbitrary", "tpru": "TPRU"}
#: cells whose size must be even (a URN's rotations act on planes)
EVEN = ("urn", "turn")


@dataclass(frozen=True)
class Shapes:
    """What fixes every cell but its size (the chapter's parameters).

    Args:
        truncation_k: k of the k-TURN (paper 000: 3).
        lstm_embedding: E, the LSTM's embedding size.
        tpru_roles: N, the TPRU's role vectors (its fixed basis E has no trainable parameters).
        max_units: the largest size tried.
    """

    truncation_k: int
    lstm_embedding: int
    tpru_roles: int
    max_units: int

    def __post_init__(self):
        for name, low, high in (("truncation_k", 1, 64), ("lstm_embedding", 1, 4096), ("tpru_roles", 1, 4096),
                                ("max_units", 2, 4096)):
            check_int(name, getattr(self, name), minimum=low, maximum=high)


def cell_label(cell: str, shapes: Shapes) -> str:
    """``"LSTM"``, ``"3-TURN"`` ..."""
    return CELLS[cell].format(k=shapes.truncation_k)


def spec_text(cell: str, size: int, shapes: Shapes) -> str:
    """The registry spec of ``cell`` at ``size``: ``"lstm 16 e12"``, ``"urn 16 k3"``, ``"tpru 16 N8"``."""
    return {"srn": f"srn {size}", "gru": f"gru {size}", "lstm": f"lstm {size} e{shapes.lstm_embedding}",
            "urn": f"urn {size}", "turn": f"urn {size} k{shapes.truncation_k}",
            "arbitrary": f"arbitrary {size}", "tpru": f"tpru {size} N{shapes.tpru_roles}"}[cell]


def parameter_count(cell: str, size: int, vocab_size: int, n_out: int | None, shapes: Shapes) -> int:
    """Trainable parameters of ``cell`` at ``size`` over ``vocab_size`` input symbols with ``n_out`` outputs
    (``None``: a language model, ``vocab_size`` outputs)."""
    V, n = vocab_size, size
    o = V if n_out is None else n_out
    if cell == "srn":
        return srn_parameter_count(V, n, None, n_out)
    if cell == "gru":
        return gru_parameter_count(V, n, None, n_out)
    if cell == "lstm":
        return lstm_parameter_count(V, n, shapes.lstm_embedding, n_out)
    if cell == "urn":
        return urn_parameter_count(V, n, None, n_out)
    if cell == "turn":
        return urn_parameter_count(V, n, shapes.truncation_k, n_out)
    if cell == "arbitrary":
        return V * n * n + (n + 1) * o
    if cell == "tpru":  # embedding V d, TPRU layer 6 d^2 + d + 2 (paper 002 Table 1 with d' = d), readout
        return V * n + 6 * n * n + n + 2 + (n + 1) * o
    raise ParameterError(f"cell {cell!r} is not one of {list(CELLS)}")


def smallest_size(cell: str, shapes: Shapes) -> int:
    """The smallest size ``cell`` can be built at (an even URN; a k-TURN needs k < n)."""
    if cell == "urn":
        return 2
    if cell == "turn":
        k = shapes.truncation_k
        return k + 1 if (k + 1) % 2 == 0 else k + 2
    return 1


@dataclass(frozen=True)
class Match:
    """A cell's size at a budget: ``size``, its parameter ``count`` and the relative ``gap`` to the budget."""

    size: int
    count: int
    gap: float


def match_size(cell: str, budget: int, vocab_size: int, n_out: int | None, shapes: Shapes, tolerance: float,
               where: str = "") -> Match:
    """The size of ``cell`` whose parameter count is nearest ``budget`` (counts grow with the size).

    Args:
        cell: a key of :data:`CELLS`.
        budget: trainable parameters wanted.
        vocab_size, n_out: the task's input symbols and outputs (``None``: a language model).
        shapes: what fixes the cell but its size.
        tolerance: the largest relative gap ``|count - budget| / budget`` accepted.
        where: the task, for the messages (``"on dyck"``).

    Raises:
        ParameterError: the budget is too small (or too large, within ``max_units``) for the cell, or no size
            comes within the tolerance; the message names the nearest counts and sizes.
    """
    check_int("budget", budget, minimum=1)
    check_float("budget_tolerance", tolerance, minimum=0.0, maximum=1.0, strict_min=True)
    label = cell_label(cell, shapes)
    step = 2 if cell in EVEN else 1
    low = smallest_size(cell, shapes)
    if low > shapes.max_units:
        raise ParameterError(f"max_units={shapes.max_units} is below the smallest {label} (n={low})")
    below = above = None
    for size in range(low, shapes.max_units + 1, step):
        count = parameter_count(cell, size, vocab_size, n_out, shapes)
        if count <= budget:
            below = (size, count)
        else:
            above = (size, count)
            break
    best = min([c for c in (below, above) if c is not None], key=lambda c: abs(c[1] - budget))
    gap = abs(best[1] - budget) / budget
    if gap <= tolerance:
        return Match(best[0], best[1], gap)
    if below is None:
        size, count = above
        raise ParameterError(
            f"budgets={budget:,} is too small for the {label} {where}: its smallest size (n={size}) has "
            f"{count:,} parameters; with budget_tolerance={tolerance} the {label} needs a budget of at least "
            f"{math.ceil(count / (1 + tolerance)):,}")
    if above is None:
        size, count = below
        raise ParameterError(
            f"budgets={budget:,} is too large for the {label} {where} within max_units={shapes.max_units}: "
            f"n={size} has {count:,} parameters; raise max_units or lower the budget")
    raise ParameterError(
        f"budgets={budget:,}: no size of the {label} {where} comes within budget_tolerance={tolerance} of "
        f"it: n={below[0]} has {below[1]:,} parameters, n={above[0]} has {above[1]:,}; choose a budget near "
        "one of them or raise budget_tolerance")
