"""The TPRU cell: one layer of the recurrent unit with reduced tensor product representations (paper 002
sec. 3, eqs. 2-6), its ablations (sec. 4) and multi-slice fillers (appendix E).

The cell (paper 002 sec. 3, eqs. 2-6), with ``b_0 = 0``, input ``x_t`` of size d' and state ``b_t``
(the *binding complex*) of size d::

    f_{b,t} = U^T V_b b_{t-1},   f_{x,t} = U^T V_x x_t                      (3)  unbinding, in R^N
    f~_t = max(0, f_{b,t} + b_b) + max(0, f_{x,t} + b_x)                      (5)  b_b, b_x scalars
    (f_t)_n = (f~_t)_n^2 / sum_m (f~_t)_m^2                                   (4)  relu-squared normalisation
    b~_t = R f_t                                                              (6)  binding
    g_t = sigmoid(W_b b_{t-1} + W_x x_t + c)                                  (2)  input gate
    b_t = g_t (.) b~_t + (1 - g_t) (.) b_{t-1}                                (2)

with ``U = W_u E`` and ``R = W_r E`` (sec. 3.3): ``E`` is a fixed ``d x N`` matrix of N standard-normal
random vectors (a buffer, never trained), ``W_u, W_r`` are learned ``d x d`` matrices. So the parameter
count does not depend on the number of roles N.

Biases. Eq. 5 has the two scalar biases ``b_b, b_x`` (reference-facts: initialised to 1). Eq. 2 prints the
gate without a bias; reference-facts (the original implementation) builds it from ``nn.Linear`` layers,
and we add one bias vector ``c`` (d entries, initialised to 0) to the gate. ``V_b, V_x, W_u, W_r`` have no
bias. A TPRU layer therefore has ``4d^2 + 2dd'`` weight-matrix entries (Table 1) plus ``d + 2`` biases.
``torch.nn.LSTM`` / ``torch.nn.GRU`` (the comparison partners of
:class:`urnlib.models.tpru_stack.RecurrentStack`) have two bias
vectors per gate (``b_ih`` and ``b_hh``): ``8d`` and ``6d`` biases on top of their Table 1 counts
(:func:`urnlib.models.tpru_counts.bias_count`). Table 1 counts weight matrices only
(:func:`urnlib.models.tpru_counts.weight_matrix_count` counts them in a module).

The empty case of eq. 4. If every ``(f~_t)_n`` is 0 the quotient is 0/0; we define ``f_t = 0`` then
(the denominator is replaced by 1 where it is 0, which changes nothing else), so ``b~_t = 0`` and no NaN
appears, in the values or in the gradients.

Variants (sec. 4, "Modification I/II/III", the ablations of the three design choices):

* ``"tpru"``: the TPRU above (separate ``W_u, W_r``; learned ``V_b``; relu-squared eq. 4);
* ``"mod1"``: Modification I, ``W_r = W_u``, ``V_b = I_d`` and softmax in place of eq. 4;
* ``"mod2"``: Modification II, ``W_r = W_u`` and softmax in place of eq. 4 (``V_b`` learned);
* ``"mod3"``: Modification III, softmax in place of eq. 4 only.

"Softmax normalisation" replaces eq. 4 only: ``f_t = softmax(f~_t)`` with ``f~_t`` still from eq. 5 ("the
only modification here is to replace the normalisation step in Eq. 4").

Multi-slice fillers (appendix E, ``slices = s``, s must divide d). The binding complex and every unbinding
and binding role vector are split into s equal slices of ``d/s`` entries; unbinding takes the dot product
slice by slice, so each role gets a *filler vector* of s numbers instead of a filler number::

    (f_{b,t})_{k,n} = (u_n^{(k)})^T (V_b b_{t-1})^{(k)},  (f_{x,t})_{k,n} = (u_n^{(k)})^T (V_x x_t)^{(k)}
    eqs. 5 and 4 for each slice k separately: s distributions f_t^{(k)} over the N roles
    b~_t^{(k)} = sum_n (f_t^{(k)})_n r_n^{(k)} = R^{(k)} f_t^{(k)},    b~_t = [b~_t^{(1)}; ...; b~_t^{(s)}]

(``(.)^{(k)}`` is rows ``k d/s .. (k+1) d/s - 1``). The matrices ``E, W_u, W_r, V_b, V_x, W_b, W_x`` and the
scalars ``b_b, b_x`` are the same as with one slice, so the parameter count does not depend on s (the paper
likens this to multi-head attention, "without additional computational cost"). ``slices=1`` is eqs. 2-6.

The gradient analysis of sec. 4 and appendix A (eqs. 7-8, ``J_t``, ``N_t``, ``S_{b,t}``) is in
:mod:`urnlib.models.tpru_analysis`.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models import tpru_scan
from urnlib.params import ParameterError, check_choice, check_float, check_int

__all__ = ["TPRU", "VARIANTS", "TPRUStep", "relu_square_normalise"]

#: TPRU variants (paper 002 sec. 4), with what they change.
VARIANTS = {
    "tpru": "the TPRU: separate W_u and W_r, learned V_b, relu-squared normalisation (eqs. 2-6)",
    "mod1": "Modification I: W_r = W_u, V_b = I_d, softmax in place of eq. 4",
    "mod2": "Modification II: W_r = W_u, softmax in place of eq. 4",
    "mod3": "Modification III: softmax in place of eq. 4",
}


def relu_square_normalise(f_tilde: torch.Tensor) -> torch.Tensor:
    """Eq. 4 over the last dimension: ``f_n = f~_n^2 / sum_m f~_m^2``, and ``f = 0`` where every ``f~_n``
    is 0 (the denominator is replaced by 1 there; elsewhere it is the exact sum)."""
    sq = f_tilde.square()
    total = sq.sum(dim=-1, keepdim=True)
    return sq / torch.where(total > 0, total, torch.ones_like(total))


class TPRUStep(NamedTuple):
    """One step of a TPRU for a batch: ``b`` (B, d) the new binding complex ``b_t``; ``f`` the fillers
    ``f_t`` ((B, N), or (B, s, N) with s > 1 slices); ``b_tilde`` (B, d) the candidate ``b~_t = R f_t``;
    ``g`` (B, d) the gate ``g_t``."""

    b: torch.Tensor
    f: torch.Tensor
    b_tilde: torch.Tensor
    g: torch.Tensor


class TPRU(nn.Module):
    """One TPRU layer (paper 002 sec. 3, eqs. 2-6; module docstring), batch first:
    ``(B, T, d') -> (B, T, d)`` binding complexes ``b_1 .. b_T`` from ``b_0 = 0``.

    Weights, named as in the paper (properties; each a view of a stacked ``nn.Linear``):
    ``W_u, W_r`` (``self.roles``, ``Linear(d, 2d)`` applied to ``E``; ``Linear(d, d)`` with ``W_r = W_u``
    for mod1/mod2), ``V_b, W_b`` (``self.recurrent``; ``V_b = I`` for mod1, not a parameter), ``V_x, W_x``
    (``self.input``), the gate bias ``c`` (``self.gate_bias``), the scalars ``b_b, b_x`` and the fixed basis
    ``E`` (buffer, ``d x N``). Initialisation: ``nn.Linear``'s default for the matrices (the paper gives
    none), ``c = 0``, ``b_b = b_x = 1``, ``E`` standard normal.

    Args:
        input_size: d', the size of ``x_t``.
        d: size of the binding complex (and of the roles).
        n_roles: N, the number of role vectors.
        variant: ``"tpru"`` (default), ``"mod1"``, ``"mod2"`` or ``"mod3"`` (:data:`VARIANTS`).
        slices: s, the number of slices of appendix E (default 1); must divide d.
        seed: seed of the ``torch.Generator`` that draws ``E`` (same seed, same ``E``); ``None`` (default)
            draws ``E`` from torch's global generator (so ``torch.manual_seed`` fixes it).
        generator: a ``torch.Generator`` (CPU) to draw ``E`` from instead of ``seed``.
        bias_init: the initial value of both scalar biases ``b_b, b_x`` of eq. 5 (default 1, the original
            implementation's; an ablation of how they dominate the unbinding scores at initialisation).
        score_scale: a fixed factor on the unbinding scores ``f_{b,t}, f_{x,t}`` before eq. 5 (default 1, the
            paper's). With s slices each score sums ``d/s`` products, so its spread is about ``1/sqrt(s)`` of
            one slice's; ``score_scale = sqrt(s)`` gives every slice the spread of one (an ablation; the paper
            has no such factor).
    """

    def __init__(self, input_size: int, d: int, n_roles: int, *, variant: str = "tpru", slices: int = 1,
                 seed: int | None = None, generator: torch.Generator | None = None, bias_init: float = 1.0,
                 score_scale: float = 1.0):
        super().__init__()
        check_int("input_size", input_size, minimum=1)
        check_int("d", d, minimum=1)
        check_int("n_roles", n_roles, minimum=1)
        check_choice("variant", variant, list(VARIANTS))
        check_int("slices", slices, minimum=1)
        if d % slices:
            divisors = [k for k in range(1, d + 1) if d % k == 0]
            raise ParameterError(f"slices={slices} must divide d={d} (appendix E splits b_t into equal "
                                 f"slices); pass one of {divisors}")
        if seed is not None and generator is not None:
            raise ParameterError("pass either seed or generator (not both) to draw the basis E")
        if seed is not None:
            check_int("seed", seed, minimum=0)
            generator = torch.Generator().manual_seed(seed)
        self.input_size, self.d, self.n_roles = input_size, d, n_roles
        self.variant, self.slices = variant, slices
        self.tied = variant in ("mod1", "mod2")  # W_r = W_u
        self.identity_Vb = variant == "mod1"  # V_b = I_d
        self.softmax = variant != "tpru"
        self.register_buffer("E", torch.randn(d, n_roles, generator=generator))  # (d, N), fixed
        self.roles = nn.Linear(d, d if self.tied else 2 * d, bias=False)  # rows [W_u; W_r] (or W_u = W_r)
        # rows [V_b; W_b] (or W_b alone)
        self.recurrent = nn.Linear(d, d if self.identity_Vb else 2 * d, bias=False)
        self.input = nn.Linear(input_size, 2 * d, bias=False)  # rows [V_x; W_x]
        self.gate_bias = nn.Parameter(torch.zeros(d))  # c in g_t = sigmoid(W_b b + W_x x + c)
        check_float("bias_init", bias_init, minimum=-100.0, maximum=100.0)
        self.b_b = nn.Parameter(torch.tensor(float(bias_init)))  # eq. 5 (reference: 1)
        self.b_x = nn.Parameter(torch.tensor(float(bias_init)))
        check_float("score_scale", score_scale, minimum=0.0, maximum=100.0, strict_min=True)
        self.score_scale = float(score_scale)
        #: run the recurrence through :mod:`urnlib.models.tpru_scan` (False: autograd step by step)
        self.scan = True

    # -- the paper's matrices ------------------------------------------------------------------------
    @property
    def W_u(self) -> torch.Tensor:
        return self.roles.weight[: self.d]

    @property
    def W_r(self) -> torch.Tensor:
        return self.roles.weight[: self.d] if self.tied else self.roles.weight[self.d :]

    @property
    def V_b(self) -> torch.Tensor:
        if self.identity_Vb:
            return torch.eye(self.d, dtype=self.E.dtype, device=self.E.device)
        return self.recurrent.weight[: self.d]

    @property
    def W_b(self) -> torch.Tensor:
        return self.recurrent.weight if self.identity_Vb else self.recurrent.weight[self.d :]

    @property
    def V_x(self) -> torch.Tensor:
        return self.input.weight[: self.d]

    @property
    def W_x(self) -> torch.Tensor:
        return self.input.weight[self.d :]

    def role_matrices(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(U, R) = (W_u E, W_r E)``, each ``d x N`` (sec. 3.3), from one ``Linear`` applied to ``E``."""
        UR = self.roles(self.E.T).T  # (2d or d, N)
        return (UR, UR) if self.tied else (UR[: self.d], UR[self.d :])

    # -- computation ---------------------------------------------------------------------------------
    def _prepare(self):
        """Per-forward constants. ``f_{b,t}`` and ``W_b b_{t-1}`` come from one product ``b_{t-1} @ M_b``,
        ``f_{x,t}`` and ``W_x x_t`` from ``x_t @ M_x``: slice k of ``U^T V b`` is
        ``(U^{(k)})^T V^{(k)} b``, so ``M`` holds ``(V^{(k)})^T U^{(k)}`` for each slice, then ``W^T``."""
        s, N, d = self.slices, self.n_roles, self.d
        ds = d // s
        U, R = self.role_matrices()
        U_s, R_s = U.reshape(s, ds, N), R.reshape(s, ds, N)  # slice k: rows k ds .. (k+1) ds - 1

        if self.score_scale != 1.0:  # the scores' fixed factor, folded into U (R keeps the unscaled roles)
            U_s = U_s * self.score_scale

        def unbind(V):  # V (d, n_in) -> (n_in, s N): column block k is (V^{(k)})^T U^{(k)}
            return torch.einsum("ski,skn->isn", V.reshape(s, ds, -1), U_s).reshape(V.shape[1], s * N)

        M_b = torch.cat([unbind(self.V_b), self.W_b.T], dim=1)  # (d, sN + d)
        M_x = torch.cat([unbind(self.V_x), self.W_x.T], dim=1)  # (d', sN + d)
        c = torch.cat([self.gate_bias.new_zeros(s * N), self.gate_bias])  # (sN + d,): [0 | c]
        return M_b, M_x, c, R_s

    def _step(self, hx: torch.Tensor, b: torch.Tensor, M_b: torch.Tensor, R_s: torch.Tensor) -> TPRUStep:
        """One step from ``hx = [f_{x,t} | W_x x_t + c]`` (B, sN + d) and ``b = b_{t-1}`` (B, d)."""
        s, N = self.slices, self.n_roles
        B = b.shape[0]
        hb = b @ M_b  # (B, sN + d): [f_{b,t} | W_b b_{t-1}]
        f_b, f_x = hb[:, : s * N].reshape(B, s, N), hx[:, : s * N].reshape(B, s, N)
        f_tilde = F.relu(f_b + self.b_b) + F.relu(f_x + self.b_x)  # (B, s, N), eq. 5
        f = torch.softmax(f_tilde, dim=-1) if self.softmax else relu_square_normalise(f_tilde)  # eq. 4
        b_tilde = torch.einsum("bsn,skn->bsk", f, R_s).reshape(B, self.d)  # eq. 6, slice by slice
        g = torch.sigmoid(hb[:, s * N :] + hx[:, s * N :])  # (B, d), eq. 2 (c is in hx)
        b_new = g * b_tilde + (1 - g) * b
        return TPRUStep(b_new, f[:, 0] if s == 1 else f, b_tilde, g)

    def step(self, x_t: torch.Tensor, b_prev: torch.Tensor) -> TPRUStep:
        """One step for a batch: ``x_t`` (B, d'), ``b_prev = b_{t-1}`` (B, d) -> :class:`TPRUStep`."""
        M_b, M_x, c, R_s = self._prepare()
        return self._step(x_t @ M_x + c, b_prev, M_b, R_s)

    def forward(self, x: torch.Tensor, return_fillers: bool = False, b0: torch.Tensor | None = None):
        """Binding complexes ``(B, T, d)`` for inputs ``x`` (B, T, d').

        Args:
            x: inputs, float.
            return_fillers: also return the fillers ``f_t``: ``(B, T, N)``, or ``(B, T, s, N)`` with s > 1
                slices (each ``f_t`` sums to 1 over the roles, or is 0 when all ``f~_t`` are 0).
            b0: initial state (B, d); ``None`` (default) is ``b_0 = 0``.
        """
        if x.dim() != 3 or x.shape[-1] != self.input_size:
            raise ParameterError(f"x has shape {tuple(x.shape)}; pass (B, T, input_size={self.input_size})")
        B = x.shape[0]
        M_b, M_x, c, R_s = self._prepare()
        # (B, T, sN + d): [f_{x,t} | W_x x_t + c] for all t at once, one fused product-and-add
        T = x.shape[1]
        hx = torch.addmm(c, x.reshape(B * T, self.input_size), M_x).view(B, T, M_x.shape[1])
        b = x.new_zeros(B, self.d) if b0 is None else b0
        if x.shape[1] and self.scan:  # the recurrence as one node with a hand-written backward
            states, f = tpru_scan.scan(hx, M_b, R_s, self.b_b, self.b_x, b, self.softmax)
            if not return_fillers:
                return states
            return states, (f[:, :, 0] if self.slices == 1 else f)
        return self.forward_reference(hx, b, M_b, R_s, return_fillers)

    def forward_reference(self, hx, b, M_b, R_s, return_fillers: bool = False):
        """:meth:`forward` as the equations read, through autograd step by step (the definition the scan is
        tested against)."""
        states, fillers = [], []
        for hx_t in hx.unbind(1):  # unbind, not hx[:, t]: one backward for all t, not T full-size zeros
            out = self._step(hx_t, b, M_b, R_s)
            b = out.b
            states.append(b)
            if return_fillers:
                fillers.append(out.f)
        if not states:  # an empty sequence
            B = b.shape[0]
            states = b.new_zeros(B, 0, self.d)
            shape = (B, 0, self.n_roles) if self.slices == 1 else (B, 0, self.slices, self.n_roles)
            return (states, b.new_zeros(shape)) if return_fillers else states
        states = torch.stack(states, dim=1)  # (B, T, d)
        return (states, torch.stack(fillers, dim=1)) if return_fillers else states

    def fillers(self, x: torch.Tensor) -> torch.Tensor:
        """The fillers ``f_t`` ``(B, T, N)`` (or ``(B, T, s, N)``) alone; ``argmax`` over the last axis is the
        maximally selected role ``beta_t`` of sec. 6."""
        return self.forward(x, return_fillers=True)[1]

    def extra_repr(self) -> str:
        scale = f", score_scale={self.score_scale:g}" if self.score_scale != 1.0 else ""
        return (f"input_size={self.input_size}, d={self.d}, n_roles={self.n_roles}, "
                f"variant={self.variant!r}, slices={self.slices}{scale}")
