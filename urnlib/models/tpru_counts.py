"""Table 1 of paper 002 (sec. 4): the per-layer parameter counts and time complexity of the TPRU, its
Modifications I-III, the LSTM and the GRU, and the counts of built modules to compare them with.
"""

from __future__ import annotations

from torch import nn

from urnlib.params import ParameterError, check_choice, check_int

__all__ = ["bias_count", "table1_parameter_count", "table1_time_complexity", "weight_matrix_count"]

_COUNT_KINDS = ["tpru", "mod1", "mod2", "mod3", "lstm", "gru"]


def table1_parameter_count(kind: str, d: int, d_in: int) -> int:
    """Weight-matrix entries of one layer, Table 1 "# Params" (biases not counted):

    TPRU ``4d^2 + 2dd'`` (``W_u, W_r, V_b, W_b`` and ``V_x, W_x``), LSTM ``4d^2 + 4dd'``, GRU ``3d^2 + 3dd'``.
    Not in Table 1, by the same count: mod1 ``2d^2 + 2dd'`` (``W_r = W_u``, ``V_b = I``), mod2
    ``3d^2 + 2dd'`` (``W_r = W_u``), mod3 ``4d^2 + 2dd'``.

    Args:
        kind: ``"tpru"``, ``"mod1"``, ``"mod2"``, ``"mod3"``, ``"lstm"`` or ``"gru"``.
        d: state size.
        d_in: d', input size.
    """
    check_choice("kind", kind, _COUNT_KINDS)
    check_int("d", d, minimum=1)
    check_int("d_in", d_in, minimum=1)
    square, rect = {"tpru": (4, 2), "mod1": (2, 2), "mod2": (3, 2), "mod3": (4, 2), "lstm": (4, 4),
                    "gru": (3, 3)}[kind]
    return square * d * d + rect * d * d_in


def table1_time_complexity(kind: str, d: int, n_roles: int | None = None) -> int:
    """Multiplications per time step to second order, Table 1 "Time Complexity": TPRU ``2Nd + 6d^2``,
    LSTM ``8d^2``, GRU ``6d^2`` (Table 1 takes ``d' = d``: e.g. the LSTM's ``8d^2 = 4(d^2 + dd')``). The
    TPRU variants and any number of slices share the TPRU's formula (slices split, not repeat, the dot
    products).

    Args:
        kind: ``"tpru"``, ``"mod1"``, ``"mod2"``, ``"mod3"``, ``"lstm"`` or ``"gru"``.
        d: state size.
        n_roles: N (needed for the TPRU kinds).
    """
    check_choice("kind", kind, _COUNT_KINDS)
    check_int("d", d, minimum=1)
    if kind in ("lstm", "gru"):
        return (8 if kind == "lstm" else 6) * d * d
    if n_roles is None:
        raise ParameterError(f"kind={kind!r} needs the number of role vectors: pass n_roles=N")
    check_int("n_roles", n_roles, minimum=1)
    return 2 * n_roles * d + 6 * d * d


def bias_count(kind: str, d: int) -> int:
    """Bias entries of one layer *as built here* (not in Table 1): TPRU (all variants) ``d + 2`` (gate bias
    ``c`` and the scalars ``b_b, b_x``); ``torch.nn.LSTM`` ``8d`` and ``torch.nn.GRU`` ``6d`` (``b_ih`` and
    ``b_hh`` for each of 4 resp. 3 gates)."""
    check_choice("kind", kind, _COUNT_KINDS)
    check_int("d", d, minimum=1)
    return {"lstm": 8 * d, "gru": 6 * d}.get(kind, d + 2)


def weight_matrix_count(module: nn.Module) -> int:
    """Trainable weight-matrix entries of ``module``: its parameters with two or more dimensions. Biases
    (the 0-d ``b_b, b_x`` and 1-d bias vectors) and buffers (the fixed basis ``E``) are not counted, nor
    is a tied matrix counted twice. Called on a :class:`~urnlib.models.tpru_stack.StackLM` it includes the
    embedding and readout; call it on a :class:`~urnlib.models.tpru_cell.TPRU` or
    :class:`~urnlib.models.tpru_stack.RecurrentStack` to compare with :func:`table1_parameter_count`."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad and p.dim() >= 2)
