"""Numerical checks of paper 002's sec. 4: the gradient analysis (eqs. 7-8, appendix A) and Table 1's
parameter counts, measured on modules (no training; seconds).

:func:`gradient_checks` draws random TPRU cells and random steps in float64 and compares the analytic
Jacobians of :mod:`urnlib.models.tpru_analysis`, as printed and as corrected, with autograd, and measures the
spectrum of ``J_t`` (appendix A: PSD, eigenvalues at most ``max_n (f)_n``). :func:`table1_check` builds the
encoders and counts their parameters against Table 1's formulas and the counts printed in Tables 2 and 4.
"""

from __future__ import annotations

from typing import Any

import torch

from urnlib.models.tpru import (
    TPRU,
    RecurrentStack,
    bias_count,
    table1_parameter_count,
    table1_time_complexity,
    weight_matrix_count,
)
from urnlib.models.tpru_analysis import autograd_jacobians, candidate_jacobian, state_jacobian, step_terms
from urnlib.params import ParameterError, check_float, check_int

__all__ = ["gradient_checks", "table1_check", "PAPER_PARAMS"]

#: parameter counts printed by paper 002 for two-layer encoders: (kind, d, d') -> count
#: Table 2 (plain architecture, dim 64; we take d' = 64) and Table 4 (dim 1024, tied embedding: d' = 1024)
PAPER_PARAMS = {
    ("gru", 64, 64): ("Table 2", 49_100),
    ("tpru", 64, 64): ("Table 2", 98_300),
    ("lstm", 64, 64): ("Table 2", 131_100),
    ("tpru", 1024, 1024): ("Table 4", 12_600_000),
    ("lstm", 1024, 1024): ("Table 4", 16_800_000),
}


def _eig_sym(J: torch.Tensor) -> torch.Tensor:
    return torch.linalg.eigvalsh((J + J.transpose(-1, -2)) / 2)


def gradient_checks(
    *,
    d: int = 12,
    input_size: int = 6,
    n_roles: int = 8,
    trials: int = 20,
    seed: int = 0,
    scale: float = 2.0,
    settings=(("tpru", 1), ("tpru", 4), ("mod3", 1)),
) -> list[dict[str, Any]]:
    """Eqs. 7-8 and appendix A on random steps, one row per (variant, slices).

    Each trial draws a fresh cell (``TPRU(input_size, d, n_roles, variant, slices)`` in float64, default
    initialisation, the scalars ``b_b, b_x`` drawn from N(0, 1) so that some ``max(0, .)`` of eq. 5 are off)
    and one step with ``x_t, b_{t-1} ~ N(0, scale^2 I)``.

    Row fields: the largest absolute difference from autograd of eq. 8 (``d b~_t / d b_{t-1}``) and eq. 7
    (``d b_t / d b_{t-1}``), printed and corrected (see :mod:`urnlib.models.tpru_analysis`); the smallest
    eigenvalue of ``J_t`` built from the normalised fillers ``f_t`` and the largest ratio of its largest
    eigenvalue to ``max_n (f_t)_n``; the same two for ``J_t`` as printed (from ``f_{b,t}``), and the largest
    ``max_n (f_{b,t})_n`` seen (appendix A says it is at most 1).
    """
    check_int("d", d, minimum=2)
    check_int("input_size", input_size, minimum=1)
    check_int("n_roles", n_roles, minimum=2)
    check_int("trials", trials, minimum=1)
    check_int("seed", seed, minimum=0)
    check_float("scale", scale, minimum=0.0, strict_min=True)
    gen = torch.Generator().manual_seed(seed)
    out = []
    for variant, slices in settings:
        if d % slices:
            raise ParameterError(f"slices={slices} must divide d={d}")
        row = {
            "variant": variant,
            "slices": slices,
            "trials": trials,
            "eq8_printed": 0.0,
            "eq8_corrected": 0.0,
            "eq7_printed": 0.0,
            "eq7_corrected": 0.0,
            "J_min_eig": float("inf"),
            "J_max_eig_over_max_f": 0.0,
            "J_printed_min_eig": float("inf"),
            "J_printed_max_eig_over_max_f": 0.0,
            "max_f_b": -float("inf"),
        }
        for _ in range(trials):
            _trial(row, gen, variant=variant, slices=slices, input_size=input_size, d=d, n_roles=n_roles,
                   scale=scale)
        out.append(row)
    return out


def _trial(row: dict[str, Any], gen: torch.Generator, *, variant: str, slices: int, input_size: int, d: int,
           n_roles: int, scale: float) -> None:
    """One random cell and step of :func:`gradient_checks`, its errors and eigenvalues folded into ``row``."""
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    cell = TPRU(input_size, d, n_roles, variant=variant, slices=slices,
                seed=int(torch.randint(0, 2**31 - 1, (1,), generator=gen))).double()
    with torch.no_grad():
        cell.b_b.copy_(torch.randn((), generator=gen, dtype=torch.float64))
        cell.b_x.copy_(torch.randn((), generator=gen, dtype=torch.float64))
    x = scale * torch.randn(input_size, generator=gen, dtype=torch.float64)
    b = scale * torch.randn(d, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        auto_tilde, auto_b = autograd_jacobians(cell, x, b)
        terms = step_terms(cell, x, b)
        for name, fn, ref in (("eq8", candidate_jacobian, auto_tilde), ("eq7", state_jacobian, auto_b)):
            for printed in (True, False):
                err = float((fn(cell, x, b, printed=printed) - ref).abs().max())
                key = f"{name}_{'printed' if printed else 'corrected'}"
                row[key] = max(row[key], err)
        f = terms.f.reshape(-1, n_roles)  # (s, N)
        f_b = terms.f_b.reshape(-1, n_roles)
        J, J_p = terms.J.reshape(-1, n_roles, n_roles), terms.J_printed.reshape(-1, n_roles, n_roles)
        for k in range(f.shape[0]):
            ev, ev_p = _eig_sym(J[k]), _eig_sym(J_p[k])
            row["J_min_eig"] = min(row["J_min_eig"], float(ev.min()))
            if float(f[k].max()) > 0:
                row["J_max_eig_over_max_f"] = max(row["J_max_eig_over_max_f"], float(ev.max() / f[k].max()))
            row["J_printed_min_eig"] = min(row["J_printed_min_eig"], float(ev_p.min()))
            if float(f_b[k].max()) > 0:
                row["J_printed_max_eig_over_max_f"] = max(row["J_printed_max_eig_over_max_f"],
                                                          float(ev_p.max() / f_b[k].max()))
            row["max_f_b"] = max(row["max_f_b"], float(f_b[k].max()))


def table1_check(
    settings=((64, 64), (64, 32), (1024, 1024)), *, layers: int = 2, n_roles: int = 64
) -> list[dict[str, Any]]:
    """Table 1 against the modules, one row per (kind, d, d') of ``settings`` and kind in TPRU, GRU, LSTM.

    Row fields: ``formula`` (Table 1's "# Params", weight matrices only, summed over ``layers`` layers: the
    first reads d', the others d), ``weights`` (weight-matrix entries of the built :class:`RecurrentStack`),
    ``biases`` (its other trainable entries) and ``biases_expected`` (:func:`~urnlib.models.tpru.bias_count`
    per layer), ``total``, ``time`` (Table 1's per-step time complexity, one layer, N = ``n_roles``), and the
    paper's printed count where Table 2 or 4 has one (``paper``, ``paper_source``).
    """
    check_int("layers", layers, minimum=1)
    check_int("n_roles", n_roles, minimum=1)
    out = []
    for d, d_in in settings:
        check_int("d", d, minimum=1)
        check_int("d'", d_in, minimum=1)
        for kind in ("gru", "tpru", "lstm"):
            stack = RecurrentStack(kind, d_in, d, layers, n_roles=n_roles if kind == "tpru" else None, seed=0)
            weights = weight_matrix_count(stack)
            total = sum(p.numel() for p in stack.parameters() if p.requires_grad)
            formula = sum(
                table1_parameter_count(kind, d, d_in if layer == 0 else d) for layer in range(layers)
            )
            source, paper = PAPER_PARAMS.get((kind, d, d_in), ("", None))
            out.append(
                {
                    "kind": kind,
                    "d": d,
                    "d_in": d_in,
                    "layers": layers,
                    "formula": formula,
                    "weights": weights,
                    "biases": total - weights,
                    "biases_expected": layers * bias_count(kind, d),
                    "total": total,
                    "time": table1_time_complexity(kind, d, n_roles if kind == "tpru" else None),
                    "paper": paper,
                    "paper_source": source,
                }
            )
            del stack
    return out
