"""The recurrent cells of the zoo chapter, and their sizes matched to a parameter budget.

A cell is a recurrent cell of the model registry (:func:`urnlib.models.registry.cells`: every kind
registered with ``cell=True``, in the order registered), or the k-TURN (``turn``: the URN truncated to the
chapter's ``truncation_k`` rotation planes, beside the URN). Each is written in the registry's grammar with
its size left free (units ``n``, or the TPRU's state size ``d``); the chapter's parameters fix the rest
(:data:`FIXED`). Its label, parameter count, smallest size and size step are the registry's, so that a newly
registered cell is in the zoo with nothing changed here. Today's cells and their counts
(:func:`urnlib.models.registry.count`):

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
the budget (tests check the counts against built modules). A budget a cell cannot meet within the tolerance
stops with a :class:`~urnlib.params.ParameterError` that says what it can meet.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from urnlib.models import registry
from urnlib.params import ParameterError, check_float, check_int

__all__ = ["CELLS", "VARIANTS", "FIXED", "Shapes", "Match", "cell_spec", "cell_model", "cell_label",
           "spec_text", "parameter_count", "smallest_size", "match_size"]

#: cells that are a registry kind with an option fixed by the chapter: the k-TURN, a URN (after it in CELLS)
VARIANTS = {"turn": "urn"}
#: the chapter's parameters (fields of :class:`Shapes`) that fix a cell's options besides its size
FIXED = {"turn": {"k": "truncation_k"}, "lstm": {"embedding_size": "lstm_embedding"},
         "tpru": {"n_roles": "tpru_roles"}}


class _Cells(Mapping):
    """cell -> its model kind: the registry's recurrent cells with :data:`VARIANTS` after their kind, read
    afresh at each use (a kind registered later is a cell too)."""

    def _now(self) -> dict[str, str]:
        out = {}
        for kind in registry.cells():
            out[kind] = kind
            out.update({cell: of for cell, of in VARIANTS.items() if of == kind})
        return out

    def __getitem__(self, cell: str) -> str:
        return self._now()[cell]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())

    def __repr__(self) -> str:
        return repr(self._now())


#: every cell the zoo can train, by name -> its registry kind (``srn``, ``gru``, ``lstm``, ``urn``, ``turn``,
#: ``arbitrary``, ``tpru``, and any cell registered since)
CELLS: Mapping[str, str] = _Cells()


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


def cell_spec(cell: str, shapes: Shapes) -> dict[str, Any]:
    """``cell`` as a registry spec without its size, its options fixed by the chapter's parameters:
    ``{"kind": "urn", "k": 3}`` (``turn``), ``{"kind": "lstm", "embedding_size": 12}``, ``{"kind": "srn"}``.
    """
    if cell not in CELLS:
        raise ParameterError(f"cell {cell!r} is not one of {list(CELLS)}")
    fixed = {option: getattr(shapes, name) for option, name in FIXED.get(cell, {}).items()}
    return {"kind": CELLS[cell], **fixed}


def cell_model(cell: str, size: int, shapes: Shapes) -> dict[str, Any]:
    """The parsed registry spec of ``cell`` at ``size``: ``{"kind": "urn", "n": 16, "k": 3}`` ..."""
    return registry.at_size(cell_spec(cell, shapes), size)


def cell_label(cell: str, shapes: Shapes) -> str:
    """``"LSTM"``, ``"3-TURN"`` ... (the registry's label, without the size)."""
    return registry.label(cell_spec(cell, shapes), sized=False)


def spec_text(cell: str, size: int, shapes: Shapes) -> str:
    """The registry spec of ``cell`` at ``size``: ``"lstm 16 e12"``, ``"urn 16 k3"``, ``"tpru 16 N8"``."""
    return registry.spec_string(cell_model(cell, size, shapes))


def parameter_count(cell: str, size: int, vocab_size: int, n_out: int | None, shapes: Shapes) -> int:
    """Trainable parameters of ``cell`` at ``size`` over ``vocab_size`` input symbols with ``n_out`` outputs
    (``None``: a language model, ``vocab_size`` outputs)."""
    return registry.count(cell_model(cell, size, shapes), vocab_size, n_out)


def smallest_size(cell: str, shapes: Shapes) -> int:
    """The smallest size ``cell`` can be built at (an even URN; a k-TURN needs k < n)."""
    return registry.sizes(cell_spec(cell, shapes), shapes.max_units).start


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
    label, base = cell_label(cell, shapes), cell_spec(cell, shapes)
    valid = registry.sizes(base, shapes.max_units)
    if not valid:
        raise ParameterError(f"max_units={shapes.max_units} is below the smallest {label} (n={valid.start})")
    below = above = None
    for size in valid:
        count = registry.count(registry.at_size(base, size), vocab_size, n_out)
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
