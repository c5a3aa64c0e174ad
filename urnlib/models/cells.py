"""The simple recurrent network (Elman 1990) and the gated recurrent unit as language models.

The two cells of the primer chapter (lecture 004, "Simple recurrent networks (SRNs)" and "Gated
recurrent units (GRUs)"), written in the house style of :class:`~urnlib.models.recurrent.PaperLSTM`:
an embedding (or a localist one-hot input), ``states(tokens) -> (B, T, n)`` (defined by the Python loop
over time ``states_reference``) and ``forward(tokens) -> (B, T, n_out)`` logits through a
``Linear(n, n_out)`` readout.

Input. ``embedding_size=None`` is the *localist* input of Elman (1990) (lecture 004: "Used *localist*
word representations"): ``x_t`` is the one-hot vector of symbol ``t`` (length V), so ``W_x`` is
``n x V`` (V x n in the row-vector convention) and ``W_x x_t`` is column ``x_t`` of ``W_x`` (computed
as that lookup, which equals the one-hot product exactly). An integer ``embedding_size = e`` puts a
learned ``nn.Embedding(V, e)`` in front, so ``W_x`` is ``n x e``.

Biases: one per gate (the lecture prints its GRU equations without bias terms; we add one bias vector
to each of ``z``, ``r`` and ``h~`` as Keras does, and to the SRN as Elman's bias node, "bias nodes not
shown" in the lecture's figures). Parameter counts, with ``d = V`` (localist) or ``d = e``::

    SRN: n d + n^2 + n               [+ V e]  + (n + 1) n_out
    GRU: 3 (n d + n^2 + n)           [+ V e]  + (n + 1) n_out

(:func:`srn_parameter_count`, :func:`gru_parameter_count`; ``n_out`` defaults to V).

Speed: ``states`` is a fast path computing the same function (rounding aside; ``tests/test_fast_cells.py``
compares values and gradients with ``states_reference``, the Python loop that defines the model). The
SRN runs in torch's fused tanh RNN (``torch.rnn_tanh``, the function behind ``nn.RNN``) with its second
bias held at zero, except in training with dropout (the mask between steps has no place in that kernel:
the loop). The lecture's GRU is not ``torch.nn.GRU``; it runs in :class:`GRUScan`, the recurrence with a
hand-written backward (no autograd graph inside the loop, weight gradients in one product after it).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models import graphs
from urnlib.models.recurrent import one_chunk
from urnlib.params import ParameterError, check_int

__all__ = ["SRN", "GRU", "GRUScan", "srn_parameter_count", "gru_parameter_count"]


def _count(gates: int, vocab_size: int, n: int, embedding_size: int | None, n_out: int | None) -> int:
    V = vocab_size
    d = V if embedding_size is None else embedding_size
    embedding = 0 if embedding_size is None else V * embedding_size
    return gates * (n * d + n * n + n) + embedding + (n + 1) * (V if n_out is None else n_out)


def srn_parameter_count(vocab_size: int, n: int, embedding_size: int | None = None,
                        n_out: int | None = None) -> int:
    """``n d + n^2 + n + [V e] + (n + 1) n_out`` with ``d = V`` for localist input (``e = None``) and
    ``d = e`` with an embedding; ``n_out`` defaults to V."""
    return _count(1, vocab_size, n, embedding_size, n_out)


def gru_parameter_count(vocab_size: int, n: int, embedding_size: int | None = None,
                        n_out: int | None = None) -> int:
    """``3 (n d + n^2 + n) + [V e] + (n + 1) n_out`` (gates z, r and the candidate h~, one bias each),
    ``d = V`` for localist input (``e = None``), ``d = e`` with an embedding; ``n_out`` defaults to V."""
    return _count(3, vocab_size, n, embedding_size, n_out)


def _positive_int(name: str, value) -> int:
    return check_int(name, value, minimum=1, message="must be a positive integer")


class _RecurrentLM(nn.Module):
    """Shared plumbing: input (localist or embedded), dropout masks, time loop, readout.

    The input weights of all ``gates`` blocks live in ``self.input`` (``Linear(d, gates * n)``, with
    the biases) and the recurrent weights in ``self.recurrent`` (``Linear(n, gates * n)``, no bias);
    row block ``k`` of each belongs to gate ``k`` (subclasses name the order).
    """

    gates = 1

    def __init__(self, vocab_size: int, n: int, embedding_size: int | None = None, *,
                 dropout: float = 0.0, n_out: int | None = None):
        super().__init__()
        _positive_int("vocab_size", vocab_size)
        _positive_int("n", n)
        if embedding_size is not None:
            _positive_int("embedding_size", embedding_size)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ParameterError(f"dropout={dropout!r}: need 0 <= dropout < 1")
        n_out = vocab_size if n_out is None else n_out
        check_int("n_out", n_out, minimum=1, message="must be a positive number of output classes "
                  "(None: vocab_size)")
        self.vocab_size, self.n, self.embedding_size = vocab_size, n, embedding_size
        self.dropout, self.n_out = float(dropout), n_out
        self.localist = embedding_size is None
        d = vocab_size if self.localist else embedding_size
        if self.localist:
            self.embedding = None
        else:
            self.embedding = nn.Embedding(vocab_size, embedding_size)
            nn.init.uniform_(self.embedding.weight, -0.05, 0.05)  # Keras Embedding default
        k = self.gates
        self.input = nn.Linear(d, k * n)  # W_x (SRN) or [W_z; W_r; W] (GRU), with the biases
        self.recurrent = nn.Linear(n, k * n, bias=False)  # W_h (SRN) or [U_z; U_r; U] (GRU)
        with torch.no_grad():  # Keras defaults: Glorot kernel, orthogonal recurrent kernel, zero bias
            for g in range(k):
                nn.init.xavier_uniform_(self.input.weight[g * n : (g + 1) * n])
                nn.init.orthogonal_(self.recurrent.weight[g * n : (g + 1) * n])
            self.input.bias.zero_()
        self.readout = nn.Linear(n, n_out)
        nn.init.xavier_uniform_(self.readout.weight)
        nn.init.zeros_(self.readout.bias)

    def _step(self, gx: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """New state from ``gx = W_x x_t + b`` (all gates) and ``h_{t-1}``."""
        raise NotImplementedError

    def _inputs(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``W_x x_t + b`` for all t, time-major ``(T, B, kn)``, and the state mask ``(B, n)`` (scaled by
        ``1 / keep``; ``None`` when not dropping). Dropout: one mask per sequence on the embedded input
        ``x_t`` (embedding models only; a localist one-hot input is not dropped) and one on ``h_t``."""
        B, T = tokens.shape
        W = self.input.weight
        drop = self.training and self.dropout > 0
        keep = 1 - self.dropout
        if self.localist:
            # W_x x_t for one-hot x_t = column x_t of W_x. index_select, not W.T[tokens]: the gradient of
            # plain indexing sums repeated tokens with atomic adds in an order that varies between runs on
            # several threads; index_select's backward (index_add_) sums them in token order.
            gx = W.T.index_select(0, tokens.T.reshape(-1)).reshape(T, B, -1) + self.input.bias
        else:
            x = self.embedding(tokens.T)  # (T, B, e)
            if drop:
                x_mask = torch.empty(B, 1, self.embedding_size, device=x.device, dtype=x.dtype)
                x = x * (x_mask.bernoulli_(keep) / keep).transpose(0, 1)
            gx = self.input(x)  # (T, B, kn): the input half for all t at once
        if not drop:
            return gx, None
        return gx, torch.empty(B, self.n, device=gx.device, dtype=gx.dtype).bernoulli_(keep) / keep

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """Hidden states ``(B, T, n)`` after each input symbol (dropout applied when training; the
        dropped ``h_t`` feeds both the next step and the readout). The fast path of each cell (see the
        module docstring); :meth:`states_reference` is the definition."""
        return self.states_reference(tokens)

    def states_reference(self, tokens: torch.Tensor) -> torch.Tensor:
        """:meth:`states` as the equations read: a Python loop over time, autograd through every step."""
        gx, h_mask = self._inputs(tokens)
        h = gx.new_zeros(gx.shape[1], self.n)
        out = []
        for t in range(gx.shape[0]):
            h = self._step(gx[t], h)
            if h_mask is not None:
                h = h * h_mask
            out.append(h)
        return torch.stack(out, dim=1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-symbol logits ``(B, T, n_out)``."""
        return self.readout(self.states(tokens))

    def readout_parts(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(states, W, b)``: the logits are ``F.linear(states, W, b)`` (:mod:`urnlib.losses` applies the
        readout at the scored positions only)."""
        return self.states(tokens), self.readout.weight, self.readout.bias


class SRN(_RecurrentLM):
    """Simple recurrent network (Jordan 1986; Elman 1990; lecture 004 "SRN 'rolled up' and unrolled")
    as a language model::

        h_t = tanh(W_x x_t + W_h h_{t-1} + b),    h_0 = 0,    y_t = softmax(W_y h_t + b_y)

    The lecture shows the SRN only as figures ("bias nodes not shown"); this is the standard form.
    ``W_x = self.input.weight`` (n x d), ``b = self.input.bias``, ``W_h = self.recurrent.weight``.

    Args:
        vocab_size: V.
        n: hidden units.
        embedding_size: e; ``None`` (default) for localist one-hot input as in Elman (1990).
        dropout: rate (default 0).
        n_out: readout size (``None``: V).
    """

    gates = 1

    def _step(self, gx, h):
        return torch.tanh(gx + h @ self.recurrent.weight.T)

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """Hidden states ``(B, T, n)``: torch's fused tanh RNN with ``b_ih = b``, ``b_hh = 0``. Localist
        input goes in as one-hot rows (``V <= n``; the product with a one-hot row is the lookup, exactly) or
        as the looked-up ``W_x x_t`` through an identity ``W_ih``. In training with dropout: the loop."""
        if self.training and self.dropout > 0:
            return self.states_reference(tokens)
        W, b = self.input.weight, self.input.bias
        if not self.localist:
            x, W_x = self.embedding(tokens), W
        elif self.vocab_size <= self.n:
            x, W_x = F.one_hot(tokens, self.vocab_size).to(W.dtype), W
        else:
            x = W.T.index_select(0, tokens.reshape(-1)).reshape(*tokens.shape, self.n)
            W_x = torch.eye(self.n, dtype=W.dtype, device=W.device)
        h0 = W.new_zeros(1, tokens.shape[0], self.n)
        weights = one_chunk([W_x, self.recurrent.weight, b, torch.zeros_like(b)])  # cuDNN's layout
        return torch.rnn_tanh(x, h0, weights, True, 1, 0.0, self.training, False, True)[0]


class GRU(_RecurrentLM):
    """Gated recurrent unit as a language model, in the lecture's equations (lecture 004, with
    ``sigma`` the logistic sigmoid and ``(.)`` the element-wise product), plus one bias per gate::

        r_t = sigma(W_r x_t + U_r h_{t-1} + b_r)               reset gate
        h~_t = tanh(W x_t + U (r_t (.) h_{t-1}) + b)          candidate
        z_t = sigma(W_z x_t + U_z h_{t-1} + b_z)               update gate
        h_t = (1 - z_t) (.) h_{t-1} + z_t (.) h~_t

    Convention for z: the lecture puts ``1 - z_t`` on the old state and ``z_t`` on the candidate
    (as Chung et al. 2014), and so do we: ``z_t -> 1`` replaces the state by the candidate, ``z_t -> 0``
    keeps it. (``torch.nn.GRU`` and Cho et al. 2014 use the opposite, ``z`` on the old state, and
    ``torch.nn.GRU`` also applies ``r`` after ``U``; so this is not ``torch.nn.GRU``.) The reset gate
    multiplies ``h_{t-1}`` before ``U``, as printed.

    Weights: row blocks of ``self.input.weight`` are ``W_z, W_r, W`` (each n x d, with biases
    ``b_z, b_r, b`` in ``self.input.bias``), of ``self.recurrent.weight`` ``U_z, U_r, U`` (each n x n).

    Args:
        vocab_size: V.
        n: hidden units.
        embedding_size: e; ``None`` (default) for localist one-hot input.
        dropout: rate (default 0).
        n_out: readout size (``None``: V).
    """

    gates = 3

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """Hidden states ``(B, T, n)`` by :class:`GRUScan` (a hand-written backward; same function as
        :meth:`states_reference`, rounding aside)."""
        gx, h_mask = self._inputs(tokens)
        return graphs.replayed(_gru_scan, (gx, self.recurrent.weight, h_mask), "gru-scan").transpose(0, 1)

    def _step(self, gx, h):
        n = self.n
        U = self.recurrent.weight
        U_zr, U_c = U[: 2 * n], U[2 * n :]
        z, r = torch.sigmoid(gx[:, : 2 * n] + h @ U_zr.T).split(n, dim=1)
        h_tilde = torch.tanh(gx[:, 2 * n :] + (r * h) @ U_c.T)
        return (1 - z) * h + z * h_tilde


class GRUScan(torch.autograd.Function):
    """The lecture's GRU over a whole sequence, forward and backward written by hand.

    ``GRUScan.apply(gx, U, mask) -> H``: ``gx`` ``(T, B, 3n)`` holds ``W x_t + b`` (blocks z, r, candidate),
    ``U`` ``(3n, n)`` the recurrent weights, ``mask`` ``(B, n)`` multiplies every new state (or ``None``);
    ``H`` ``(T, B, n)``, ``h_0 = 0``. Per step forward: ``s = sigmoid(gx_zr + h U_zr^T)``,
    ``h~ = tanh(gx_c + (r h) U_c^T)``, ``h' = lerp(h, h~, z) * mask``. The backward runs the step's
    derivatives in reverse with every factor that does not depend on the incoming gradient formed for all t
    at once beforehand, and forms ``dU`` in two products over all steps after the loop.
    """

    @staticmethod
    def forward(ctx, gx, U, mask):
        T, B, k = gx.shape
        n = k // 3
        U_zrT, U_cT = U[: 2 * n].T, U[2 * n :].T
        S = gx.new_empty(T, B, 2 * n)  # z, r
        RH = gx.new_empty(T, B, n)  # r * h_{t-1}
        HT = gx.new_empty(T, B, n)  # h~
        H = gx.new_empty(T + 1, B, n)
        H[0].zero_()
        for t in range(T):
            h = H[t]
            torch.sigmoid(torch.addmm(gx[t, :, : 2 * n], h, U_zrT), out=S[t])
            torch.mul(S[t, :, n:], h, out=RH[t])
            torch.tanh(torch.addmm(gx[t, :, 2 * n :], RH[t], U_cT), out=HT[t])
            torch.lerp(h, HT[t], S[t, :, :n], out=H[t + 1])
            if mask is not None:
                H[t + 1].mul_(mask)
        ctx.save_for_backward(U, mask, S, RH, HT, H)
        return H[1:]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dH):
        U, mask, S, RH, HT, H = ctx.saved_tensors
        T, B, n = HT.shape
        Hp, Z, R = H[:-1], S[..., :n], S[..., n:]
        ZTG = Z * (1 - HT * HT)  # d(candidate pre-activation) per d(new state): z (1 - h~^2)
        Q = torch.cat([HT - Hp, Hp], 2) * (S * (1 - S))  # [d/dz, d/dr] factors times sigmoid'
        OMZ = 1 - Z
        dA = dH.new_empty(T, B, 3 * n)  # pre-activation gradients (= d gx)
        buf = dH.new_empty(B, 2 * n)  # [d new state (before the mask), d (r h)]
        du, drh = buf[:, :n], buf[:, n:]
        carry = dH.new_zeros(B, n)  # gradient reaching h_{t-1} from step t
        U_zr, U_c = U[: 2 * n], U[2 * n :]
        for t in range(T - 1, -1, -1):
            torch.add(dH[t], carry, out=du)
            if mask is not None:
                du.mul_(mask)
            torch.mm(torch.mul(du, ZTG[t], out=dA[t, :, 2 * n :]), U_c, out=drh)
            torch.mul(buf, Q[t], out=dA[t, :, : 2 * n])
            torch.mul(du, OMZ[t], out=carry).addcmul_(drh, R[t]).addmm_(dA[t, :, : 2 * n], U_zr)
        flat = dA.view(T * B, 3 * n)
        dU = torch.cat([flat[:, : 2 * n].T @ Hp.reshape(T * B, n), flat[:, 2 * n :].T @ RH.view(T * B, n)])
        return dA, dU, None


def _gru_scan(gx, U, mask):
    """:class:`GRUScan` as a function of tensors (what :func:`urnlib.models.graphs.replayed` captures)."""
    return GRUScan.apply(gx, U, mask)
