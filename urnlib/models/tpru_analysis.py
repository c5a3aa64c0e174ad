"""Gradient analysis of the TPRU (paper 002 sec. 4, eqs. 7-8, and appendix A), for one step of one example.

Eq. 7, the one-step Jacobian of the state, from ``b_t = g_t (.) b~_t + (1 - g_t) (.) b_{t-1}`` and
``g_t = sigmoid(W_b b_{t-1} + W_x x_t + c)``::

    d b_t / d b_{t-1} = Lambda_1 W_b + Lambda_2 d b~_t / d b_{t-1} + Lambda_3,
    Lambda_2 = diag(g_t),  Lambda_3 = diag(1 - g_t),
    Lambda_1 = diag((b~_t - b_{t-1}) (.) g_t (.) (1 - g_t))                              (correct)
    Lambda_1 = diag(b~_t (.) g_t (.) (1 - g_t))                                          (as printed)

The gate reaches ``b_t`` through both ``g_t (.) b~_t`` and ``(1 - g_t) (.) b_{t-1}``, so ``d b_t / d g_t =
diag(b~_t - b_{t-1})``. The printed ``Lambda_1`` keeps only the first; equivalently, its third term
``d((1 - g_t) (.) b_{t-1}) / d b_{t-1} = Lambda_3`` omits ``-diag(b_{t-1} (.) g_t (.) (1 - g_t)) W_b``. The
two agree only where ``b_{t-1} = 0`` (e.g. the first step).

Eq. 8, the Jacobian of the candidate ``b~_t = R f_t``. Differentiating eq. 4, ``f_n = f~_n^2 / S`` with
``S = sum_m f~_m^2``::

    d f_n / d f~_k = 2 f~_n delta_nk / S - 2 f~_n^2 f~_k / S^2 = f_n (delta_nk - f_k) (2 / f~_k)

so ``d f / d f~ = J_t N_t`` with ``(J_t)_{mn} = (f_t)_m (delta_mn - (f_t)_n)`` and
``(N_t)_{nn} = 2 / (f~_t)_n`` (``0`` where ``(f~_t)_n = 0``: that column of ``d f / d f~`` is 0, and so is
``J_t``'s). With eq. 5, ``d f~ / d f_b = S_{b,t} = diag(1[(f_{b,t})_n + b_b > 0])``, and eq. 3,
``d f_b / d b_{t-1} = U^T V_b``::

    d b~_t / d b_{t-1} = (W_r E) J_t N_t S_{b,t} (E^T W_u^T V_b)                          (8), correct

**Where the printed eq. 8 differs.** The paper defines ``(J_t)_{mn} = (f_{b,t})_m (delta_mn - (f_{b,t})_n)``,
built from the *unbinding fillers* ``f_{b,t}`` of eq. 3; the derivative of eq. 4 (and of a softmax) needs
the *normalised* fillers ``f_t`` of eq. 4 instead. Appendix A's proof that ``J_t`` is PSD with eigenvalues
at most ``max_n (.)_n <= 1`` uses ``sum_n (.)_n = 1`` and ``(.)_n >= 0`` (Jensen), which hold for ``f_t``
and not for ``f_{b,t}`` (whose entries can be negative and need not sum to 1); with ``f_{b,t}`` the matrix
need not be PSD. So ``f_{b,t}`` in the definition of ``J_t`` must read ``f_t``. Second, smaller: the printed
``(S_{b,t})_{nn} = 1[(f_{b,t})_n > 0]`` omits the bias ``b_b`` of eq. 5 (sec. 4 absorbs biases into the
weights); with the bias it is ``1[(f_{b,t})_n + b_b > 0]``. ``N_t`` (``2 / f~``) is as printed. With these two
corrections eq. 8 equals the autograd Jacobian (tests/test_tpru.py, float64).

Softmax variants (Modifications I-III): ``d softmax(f~) / d f~ = J_t`` built from ``f_t = softmax(f~_t)``
(again ``f_t``, not ``f_{b,t}``), i.e. ``N_t = I``; ``S_{b,t}`` stays (eq. 5 is kept), though eq. 9 also sets
``S_{b,t} = I``, true only while every ``(f_{b,t})_n + b_b > 0``. Mod I/II use ``U = R`` (``W_u = W_r``) and
Mod I ``V_b = I``.

Multi-slice fillers (appendix E): slice k of the candidate uses slice k of everything, so row block k of
``d b~_t / d b_{t-1}`` is ``R^{(k)} J_t^{(k)} N_t^{(k)} S_{b,t}^{(k)} (U^{(k)})^T V_b^{(k)}`` with
``V_b^{(k)}`` the rows of slice k of ``V_b``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from urnlib.models.tpru_cell import TPRU, relu_square_normalise
from urnlib.params import ParameterError

__all__ = [
    "StepTerms",
    "autograd_jacobians",
    "candidate_jacobian",
    "filler_jacobian",
    "normalisation_jacobian",
    "state_jacobian",
    "step_terms",
]


def filler_jacobian(f: torch.Tensor) -> torch.Tensor:
    """``J = diag(f) - f f^T``, i.e. ``J_{mn} = f_m (delta_mn - f_n)``, for ``f`` of shape (N,) (or (..., N),
    giving (..., N, N)). For ``f`` on the probability simplex it is symmetric PSD with eigenvalues in
    ``[0, max_n f_n]`` (appendix A)."""
    return torch.diag_embed(f) - f.unsqueeze(-1) * f.unsqueeze(-2)


def _inverse_scale(f_tilde: torch.Tensor) -> torch.Tensor:
    """``diag(2 / f~)``, with 0 where ``f~ = 0`` (the ``N_t`` of eq. 8)."""
    pos = f_tilde > 0
    return torch.diag_embed(torch.where(pos, 2 / torch.where(pos, f_tilde, torch.ones_like(f_tilde)), 0.0))


def normalisation_jacobian(f_tilde: torch.Tensor, softmax: bool = False) -> torch.Tensor:
    """Analytic ``d f / d f~`` of eq. 4 (``J_t N_t``, with ``J_t`` built from ``f_t``) or of a softmax
    (``J_t``) for ``f_tilde`` of shape (N,) (or (..., N))."""
    if softmax:
        return filler_jacobian(torch.softmax(f_tilde, dim=-1))
    return filler_jacobian(relu_square_normalise(f_tilde)) @ _inverse_scale(f_tilde)


@dataclass
class StepTerms:
    """Every quantity of eqs. 2-8 for one step of one example (``(.)`` shapes are for one slice; with
    s > 1 slices the N-sized ones get a leading slice axis: (s, N) and (s, N, N)).

    ``f_b, f_x, f_tilde, f`` (N,): eqs. 3, 5, 4; ``b_tilde, g, b`` (d,): eqs. 6, 2; ``J`` (N, N) from ``f_t``
    (correct) and ``J_printed`` from ``f_{b,t}`` (as printed); ``N`` (N, N) ``diag(2 / f~)`` (identity for the
    softmax variants); ``S_b`` (N, N) ``diag(1[f_b + b_b > 0])`` and ``S_b_printed`` ``diag(1[f_b > 0])``;
    ``Lambda1`` / ``Lambda1_printed``, ``Lambda2``, ``Lambda3`` (d, d) of eq. 7.
    """

    f_b: torch.Tensor
    f_x: torch.Tensor
    f_tilde: torch.Tensor
    f: torch.Tensor
    b_tilde: torch.Tensor
    g: torch.Tensor
    b: torch.Tensor
    J: torch.Tensor
    J_printed: torch.Tensor
    N: torch.Tensor
    S_b: torch.Tensor
    S_b_printed: torch.Tensor
    Lambda1: torch.Tensor
    Lambda1_printed: torch.Tensor
    Lambda2: torch.Tensor
    Lambda3: torch.Tensor


def _check(cell: TPRU, x_t: torch.Tensor, b_prev: torch.Tensor) -> None:
    if not isinstance(cell, TPRU):
        raise ParameterError(f"cell must be a TPRU (got {type(cell).__name__})")
    if x_t.shape != (cell.input_size,) or b_prev.shape != (cell.d,):
        raise ParameterError(f"pass one example: x_t of shape ({cell.input_size},) and b_prev of shape "
                             f"({cell.d},) (got {tuple(x_t.shape)} and {tuple(b_prev.shape)})")


def step_terms(cell: TPRU, x_t: torch.Tensor, b_prev: torch.Tensor) -> StepTerms:
    """Eqs. 2-8 for one example, computed from the named matrices ``W_u, W_r, E, V_b, V_x, W_b, W_x``
    (independently of the module's fused forward). Use float64 (``cell.double()``) for comparisons.

    Args:
        cell: a :class:`~urnlib.models.tpru.TPRU`.
        x_t: input (d',).
        b_prev: ``b_{t-1}`` (d,).
    """
    _check(cell, x_t, b_prev)
    s, d = cell.slices, cell.d
    ds = d // s
    U, R = cell.W_u @ cell.E, cell.W_r @ cell.E  # (d, N) each, sec. 3.3
    vb, vx = cell.V_b @ b_prev, cell.V_x @ x_t  # (d,)
    U_s, R_s = U.reshape(s, ds, -1), R.reshape(s, ds, -1)  # (s, ds, N)
    f_b = torch.einsum("skn,sk->sn", U_s, vb.reshape(s, ds))  # (s, N), eq. 3 slice by slice
    f_x = torch.einsum("skn,sk->sn", U_s, vx.reshape(s, ds))
    f_tilde = F.relu(f_b + cell.b_b) + F.relu(f_x + cell.b_x)  # eq. 5
    f = torch.softmax(f_tilde, dim=-1) if cell.softmax else relu_square_normalise(f_tilde)  # eq. 4
    b_tilde = torch.einsum("skn,sn->sk", R_s, f).reshape(d)  # eq. 6
    g = torch.sigmoid(cell.W_b @ b_prev + cell.W_x @ x_t + cell.gate_bias)  # eq. 2
    b = g * b_tilde + (1 - g) * b_prev
    if cell.softmax:
        N = torch.eye(f.shape[-1], dtype=f.dtype, device=f.device).expand(s, -1, -1)
    else:
        N = _inverse_scale(f_tilde)
    dg = g * (1 - g)
    squeeze = (lambda t: t[0]) if s == 1 else (lambda t: t)
    return StepTerms(
        f_b=squeeze(f_b), f_x=squeeze(f_x), f_tilde=squeeze(f_tilde), f=squeeze(f),
        b_tilde=b_tilde, g=g, b=b,
        J=squeeze(filler_jacobian(f)), J_printed=squeeze(filler_jacobian(f_b)), N=squeeze(N),
        S_b=squeeze(torch.diag_embed((f_b + cell.b_b > 0).to(f.dtype))),
        S_b_printed=squeeze(torch.diag_embed((f_b > 0).to(f.dtype))),
        Lambda1=torch.diag((b_tilde - b_prev) * dg), Lambda1_printed=torch.diag(b_tilde * dg),
        Lambda2=torch.diag(g), Lambda3=torch.diag(1 - g),
    )


def _per_slice(terms: StepTerms, s: int):
    if s == 1:
        return [(terms.J, terms.J_printed, terms.N, terms.S_b, terms.S_b_printed)]
    return list(zip(terms.J, terms.J_printed, terms.N, terms.S_b, terms.S_b_printed))


def candidate_jacobian(cell: TPRU, x_t: torch.Tensor, b_prev: torch.Tensor, *, printed: bool = False,
                       terms: StepTerms | None = None) -> torch.Tensor:
    """``d b~_t / d b_{t-1}`` (d, d), eq. 8: ``(W_r E) J_t N_t S_{b,t} (E^T W_u^T V_b)`` (row block by row
    block with slices).

    Args:
        cell, x_t, b_prev: as :func:`step_terms`.
        printed: ``False`` (default): the correct form (``J_t`` from ``f_t``, ``S_{b,t}`` with ``b_b``), equal
            to the autograd Jacobian; ``True``: eq. 8 as printed (``J_t`` from ``f_{b,t}``, ``S_{b,t} =
            diag(1[f_{b,t} > 0])``).
        terms: the :func:`step_terms` of this step, if already computed.
    """
    terms = step_terms(cell, x_t, b_prev) if terms is None else terms
    s, d = cell.slices, cell.d
    ds = d // s
    U, R, V_b = cell.W_u @ cell.E, cell.W_r @ cell.E, cell.V_b
    blocks = []
    for k, (J, J_p, N, S, S_p) in enumerate(_per_slice(terms, s)):
        rows = slice(k * ds, (k + 1) * ds)
        middle = J_p @ N @ S_p if printed else J @ N @ S
        blocks.append(R[rows] @ middle @ U[rows].T @ V_b[rows])  # (ds, d)
    return torch.cat(blocks, dim=0)


def state_jacobian(cell: TPRU, x_t: torch.Tensor, b_prev: torch.Tensor, *,
                   printed: bool = False) -> torch.Tensor:
    """``d b_t / d b_{t-1}`` (d, d), eq. 7: ``Lambda_1 W_b + Lambda_2 d b~_t / d b_{t-1} + Lambda_3``.

    ``printed=False`` (default): correct ``Lambda_1 = diag((b~_t - b_{t-1}) g (1 - g))`` and the correct eq. 8
    (equal to autograd); ``printed=True``: eq. 7 with the printed ``Lambda_1 = diag(b~_t g (1 - g))`` and the
    printed eq. 8.
    """
    terms = step_terms(cell, x_t, b_prev)
    L1 = terms.Lambda1_printed if printed else terms.Lambda1
    db_tilde = candidate_jacobian(cell, x_t, b_prev, printed=printed, terms=terms)
    return L1 @ cell.W_b + terms.Lambda2 @ db_tilde + terms.Lambda3


def autograd_jacobians(cell: TPRU, x_t: torch.Tensor,
                       b_prev: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(d b~_t / d b_{t-1}, d b_t / d b_{t-1})`` by ``torch.autograd.functional.jacobian`` through the
    module's own :meth:`~urnlib.models.tpru.TPRU.step` (the reference for the analytic forms)."""
    _check(cell, x_t, b_prev)
    x = x_t.detach()[None]

    def candidate(b):
        return cell.step(x, b[None]).b_tilde[0]

    def state(b):
        return cell.step(x, b[None]).b[0]

    b = b_prev.detach()
    jac = torch.autograd.functional.jacobian
    return jac(candidate, b), jac(state, b)
