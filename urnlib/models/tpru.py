"""The TPRU: a recurrent unit with reduced tensor product representations (paper 002), its stacks and
language model, and the complexity formulas of its Table 1.

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
``torch.nn.LSTM`` / ``torch.nn.GRU`` (the comparison partners of :class:`RecurrentStack`) have two bias
vectors per gate (``b_ih`` and ``b_hh``): ``8d`` and ``6d`` biases on top of their Table 1 counts
(:func:`bias_count`). Table 1 counts weight matrices only (:func:`weight_matrix_count` counts them in a
module).

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

from urnlib.params import ParameterError, check_choice, check_float, check_int

__all__ = [
    "VARIANTS",
    "STACK_KINDS",
    "TPRU",
    "TPRUStep",
    "RecurrentStack",
    "StackLM",
    "TPRULanguageModel",
    "relu_square_normalise",
    "table1_parameter_count",
    "table1_time_complexity",
    "bias_count",
    "weight_matrix_count",
]

#: TPRU variants (paper 002 sec. 4), with what they change.
VARIANTS = {
    "tpru": "the TPRU: separate W_u and W_r, learned V_b, relu-squared normalisation (eqs. 2-6)",
    "mod1": "Modification I: W_r = W_u, V_b = I_d, softmax in place of eq. 4",
    "mod2": "Modification II: W_r = W_u, softmax in place of eq. 4",
    "mod3": "Modification III: softmax in place of eq. 4",
}

#: recurrent layers a :class:`RecurrentStack` can be built from.
STACK_KINDS = {
    "tpru": "TPRU layers (paper 002), any variant and number of slices",
    "gru": "torch.nn.GRU(batch_first=True)",
    "lstm": "torch.nn.LSTM(batch_first=True)",
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
    """

    def __init__(self, input_size: int, d: int, n_roles: int, *, variant: str = "tpru", slices: int = 1,
                 seed: int | None = None, generator: torch.Generator | None = None):
        super().__init__()
        check_int("input_size", input_size, minimum=1)
        check_int("d", d, minimum=1)
        check_int("n_roles", n_roles, minimum=1)
        check_choice("variant", variant, list(VARIANTS))
        check_int("slices", slices, minimum=1)
        if d % slices:
            divisors = [k for k in range(1, d + 1) if d % k == 0]
            raise ParameterError(f"slices={slices} must divide d={d} (appendix E splits b_t into equal slices); "
                                 f"pass one of {divisors}")
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
        self.recurrent = nn.Linear(d, d if self.identity_Vb else 2 * d, bias=False)  # rows [V_b; W_b] (or W_b)
        self.input = nn.Linear(input_size, 2 * d, bias=False)  # rows [V_x; W_x]
        self.gate_bias = nn.Parameter(torch.zeros(d))  # c in g_t = sigmoid(W_b b + W_x x + c)
        self.b_b = nn.Parameter(torch.tensor(1.0))  # eq. 5
        self.b_x = nn.Parameter(torch.tensor(1.0))

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
        hx = x @ M_x + c  # (B, T, sN + d): [f_{x,t} | W_x x_t + c] for all t at once
        b = x.new_zeros(B, self.d) if b0 is None else b0
        states, fillers = [], []
        for hx_t in hx.unbind(1):  # unbind, not hx[:, t]: one backward for all t, not T full-size zeros
            out = self._step(hx_t, b, M_b, R_s)
            b = out.b
            states.append(b)
            if return_fillers:
                fillers.append(out.f)
        states = torch.stack(states, dim=1)  # (B, T, d)
        return (states, torch.stack(fillers, dim=1)) if return_fillers else states

    def fillers(self, x: torch.Tensor) -> torch.Tensor:
        """The fillers ``f_t`` ``(B, T, N)`` (or ``(B, T, s, N)``) alone; ``argmax`` over the last axis is the
        maximally selected role ``beta_t`` of sec. 6."""
        return self.forward(x, return_fillers=True)[1]

    def extra_repr(self) -> str:
        return (f"input_size={self.input_size}, d={self.d}, n_roles={self.n_roles}, variant={self.variant!r}, "
                f"slices={self.slices}")


def _dropout_rate(dropout) -> float:
    if isinstance(dropout, bool):
        raise ParameterError(f"dropout={dropout!r} must be a number in [0, 1)")
    check_float("dropout", dropout, minimum=0.0)
    if dropout >= 1.0:
        raise ParameterError(f"dropout={dropout} must be < 1")
    return float(dropout)


class RecurrentStack(nn.Module):
    """``layers`` recurrent layers of one kind, batch first: ``(B, T, input_size) -> (B, T, d)``, the
    states of the top layer (``b_0 = h_0 = c_0 = 0``).

    ``kind="tpru"`` stacks :class:`TPRU` layers (layer l > 0 reads the d-dimensional states of layer
    l - 1; each layer has its own basis ``E``, drawn with ``seed + l`` when a seed is given);
    ``"gru"`` / ``"lstm"`` are ``torch.nn.GRU`` / ``torch.nn.LSTM(batch_first=True)``, the standard
    comparison partners (two bias vectors per gate). Dropout (rate ``dropout``) acts on the output of every
    layer but the last, as ``torch.nn.LSTM``'s ``dropout`` does.

    Args:
        kind: ``"tpru"``, ``"gru"`` or ``"lstm"`` (:data:`STACK_KINDS`).
        input_size: d'.
        d: state size of every layer.
        layers: number of layers (paper 002 uses 1 and 2).
        n_roles: N, required for ``"tpru"``; ignored (as are ``variant`` and ``slices``) for gru/lstm.
        variant: TPRU variant (:data:`VARIANTS`).
        slices: TPRU slices (appendix E).
        dropout: rate between layers (default 0).
        seed: seed of the first TPRU layer's basis (``None``: torch's global generator).
    """

    def __init__(self, kind: str, input_size: int, d: int, layers: int = 1, *, n_roles: int | None = None,
                 variant: str = "tpru", slices: int = 1, dropout: float = 0.0, seed: int | None = None):
        super().__init__()
        check_choice("kind", kind, list(STACK_KINDS))
        check_int("input_size", input_size, minimum=1)
        check_int("d", d, minimum=1)
        check_int("layers", layers, minimum=1)
        self.dropout = _dropout_rate(dropout)
        self.kind, self.input_size, self.d, self.n_layers = kind, input_size, d, layers
        if kind == "tpru":
            if n_roles is None:
                raise ParameterError("kind='tpru' needs the number of role vectors: pass n_roles=N (e.g. 64)")
            self.cells = nn.ModuleList(
                TPRU(input_size if l == 0 else d, d, n_roles, variant=variant, slices=slices,
                     seed=None if seed is None else seed + l)
                for l in range(layers)
            )
            self.drop = nn.Dropout(self.dropout)
            self.rnn = None
        else:
            rnn = nn.GRU if kind == "gru" else nn.LSTM
            self.rnn = rnn(input_size, d, num_layers=layers, batch_first=True,
                           dropout=self.dropout if layers > 1 else 0.0)
            self.cells = None

    def forward(self, x: torch.Tensor, return_fillers: bool = False):
        """Top-layer states ``(B, T, d)``; with ``return_fillers`` (tpru only) also the top layer's fillers
        ``(B, T, N)`` (``(B, T, s, N)`` with s > 1 slices)."""
        if self.rnn is not None:
            if return_fillers:
                raise ParameterError(f"return_fillers=True needs kind='tpru' (this stack is {self.kind!r})")
            return self.rnn(x)[0]
        for l, cell in enumerate(self.cells):
            if l > 0:
                x = self.drop(x)
            if return_fillers and l == len(self.cells) - 1:
                return cell(x, return_fillers=True)
            x = cell(x)
        return x


class StackLM(nn.Module):
    """Language model ``nn.Embedding -> RecurrentStack -> Linear(d, V)``: ``forward(tokens (B, T) long)
    -> (B, T, V)`` next-token logits (the interface of :func:`urnlib.train.fit`).

    Dropout (rate ``dropout``): on the embeddings, between the layers, and on the top states before the
    readout. ``tie_weights=True`` shares the readout matrix with the embedding (paper 002 appendix C.3,
    Press & Wolf 2017; needs ``embedding_size == d``). Embedding initialised uniform in [-0.1, 0.1].

    Args:
        kind: ``"tpru"``, ``"gru"`` or ``"lstm"``.
        vocab_size: V.
        embedding_size: e, the input size of the first layer.
        d: state size.
        layers: number of recurrent layers (default 1).
        n_roles: N (tpru only).
        variant: TPRU variant.
        slices: TPRU slices.
        dropout: rate (default 0).
        tie_weights: tie the readout to the embedding (default False).
        seed: seed of the TPRU bases (``None``: torch's global generator).
    """

    def __init__(self, kind: str, vocab_size: int, embedding_size: int, d: int, layers: int = 1, *,
                 n_roles: int | None = None, variant: str = "tpru", slices: int = 1, dropout: float = 0.0,
                 tie_weights: bool = False, seed: int | None = None):
        super().__init__()
        check_int("vocab_size", vocab_size, minimum=1)
        check_int("embedding_size", embedding_size, minimum=1)
        self.vocab_size, self.embedding_size = vocab_size, embedding_size
        self.stack = RecurrentStack(kind, embedding_size, d, layers, n_roles=n_roles, variant=variant,
                                    slices=slices, dropout=dropout, seed=seed)
        self.kind, self.d = kind, d
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.drop = nn.Dropout(self.stack.dropout)
        self.readout = nn.Linear(d, vocab_size)
        nn.init.zeros_(self.readout.bias)
        if tie_weights:
            if embedding_size != d:
                raise ParameterError(f"tie_weights=True needs embedding_size == d (got {embedding_size} and {d}); "
                                     "pass embedding_size=d or tie_weights=False")
            self.readout.weight = self.embedding.weight

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """Top-layer states ``(B, T, d)`` (before the output dropout)."""
        return self.stack(self.drop(self.embedding(tokens)))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits ``(B, T, V)``."""
        return self.readout(self.drop(self.states(tokens)))

    def fillers(self, tokens: torch.Tensor) -> torch.Tensor:
        """Fillers ``f_t`` of the top TPRU layer per token, ``(B, T, N)`` (``(B, T, s, N)`` with s > 1
        slices); ``argmax(-1)`` is the maximally selected role ``beta_t`` of sec. 6."""
        return self.stack(self.drop(self.embedding(tokens)), return_fillers=True)[1]


class TPRULanguageModel(StackLM):
    """:class:`StackLM` with ``kind="tpru"``: ``TPRULanguageModel(V, e, d, n_roles, layers=1, ...)``."""

    def __init__(self, vocab_size: int, embedding_size: int, d: int, n_roles: int, layers: int = 1, **options):
        super().__init__("tpru", vocab_size, embedding_size, d, layers, n_roles=n_roles, **options)


# ----------------------------------------------------------------------------------------------------- #
# Table 1 (sec. 4): complexity and parameter counts
# ----------------------------------------------------------------------------------------------------- #
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
    square, rect = {"tpru": (4, 2), "mod1": (2, 2), "mod2": (3, 2), "mod3": (4, 2), "lstm": (4, 4), "gru": (3, 3)}[kind]
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
    is a tied matrix counted twice. Called on an :class:`StackLM` it includes the embedding and readout;
    call it on a :class:`TPRU` or :class:`RecurrentStack` to compare with :func:`table1_parameter_count`."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad and p.dim() >= 2)
