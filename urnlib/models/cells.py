"""The simple recurrent network (Elman 1990) and the gated recurrent unit as language models.

The two cells of the primer chapter (lecture 004, "Simple recurrent networks (SRNs)" and "Gated
recurrent units (GRUs)"), written in the house style of :class:`~urnlib.models.recurrent.PaperLSTM`:
an embedding (or a localist one-hot input), a Python loop over time, ``states(tokens) -> (B, T, n)``
and ``forward(tokens) -> (B, T, n_out)`` logits through a ``Linear(n, n_out)`` readout.

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
"""

from __future__ import annotations

import torch
from torch import nn

from urnlib.params import ParameterError

__all__ = ["SRN", "GRU", "srn_parameter_count", "gru_parameter_count"]


def _count(gates: int, vocab_size: int, n: int, embedding_size: int | None, n_out: int | None) -> int:
    V = vocab_size
    d = V if embedding_size is None else embedding_size
    embedding = 0 if embedding_size is None else V * embedding_size
    return gates * (n * d + n * n + n) + embedding + (n + 1) * (V if n_out is None else n_out)


def srn_parameter_count(vocab_size: int, n: int, embedding_size: int | None = None, n_out: int | None = None) -> int:
    """``n d + n^2 + n + [V e] + (n + 1) n_out`` with ``d = V`` for localist input (``e = None``) and
    ``d = e`` with an embedding; ``n_out`` defaults to V."""
    return _count(1, vocab_size, n, embedding_size, n_out)


def gru_parameter_count(vocab_size: int, n: int, embedding_size: int | None = None, n_out: int | None = None) -> int:
    """``3 (n d + n^2 + n) + [V e] + (n + 1) n_out`` (gates z, r and the candidate h~, one bias each),
    ``d = V`` for localist input (``e = None``), ``d = e`` with an embedding; ``n_out`` defaults to V."""
    return _count(3, vocab_size, n, embedding_size, n_out)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name}={value!r}: need a positive integer")
    return value


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
        if isinstance(n_out, bool) or not isinstance(n_out, int) or n_out < 1:
            raise ParameterError(f"n_out={n_out!r}: need a positive number of output classes (None: vocab_size)")
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

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """Hidden states ``(B, T, n)`` after each input symbol (dropout applied when training).

        Dropout: one mask per sequence on the embedded input ``x_t`` (embedding models only; a
        localist one-hot input is not dropped) and one on ``h_t``, reused at every step; the dropped
        ``h_t`` feeds both the next step and the readout.
        """
        B, T = tokens.shape
        n = self.n
        W = self.input.weight
        drop = self.training and self.dropout > 0
        keep = 1 - self.dropout
        if self.localist:
            # W_x x_t for one-hot x_t = column x_t of W_x: (B, T, kn). index_select, not W.T[tokens]: the
            # gradient of plain indexing sums repeated tokens with atomic adds in an order that varies between
            # runs on several threads; index_select's backward (index_add_) sums them in token order.
            gx = W.T.index_select(0, tokens.reshape(-1)).reshape(B, T, -1) + self.input.bias
        else:
            x = self.embedding(tokens)  # (B, T, e)
            if drop:
                x_mask = torch.empty(B, 1, self.embedding_size, device=x.device, dtype=x.dtype)
                x = x * (x_mask.bernoulli_(keep) / keep)
            gx = self.input(x)  # (B, T, kn): the input half for all t at once
        h = gx.new_zeros(B, n)
        if drop:
            h_mask = torch.empty(B, n, device=gx.device, dtype=gx.dtype).bernoulli_(keep) / keep
        out = []
        for t in range(T):
            h = self._step(gx[:, t], h)
            if drop:
                h = h * h_mask
            out.append(h)
        return torch.stack(out, dim=1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-symbol logits ``(B, T, n_out)``."""
        return self.readout(self.states(tokens))


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

    def _step(self, gx, h):
        n = self.n
        U = self.recurrent.weight
        U_zr, U_c = U[: 2 * n], U[2 * n :]
        z, r = torch.sigmoid(gx[:, : 2 * n] + h @ U_zr.T).split(n, dim=1)
        h_tilde = torch.tanh(gx[:, 2 * n :] + (r * h) @ U_c.T)
        return (1 - z) * h + z * h_tilde
