"""Gated recurrent baselines.

:class:`PaperLSTM` is the LSTM of paper 001 sec. 2.1 (Keras-style: one bias per gate, so its
parameter count is ``4(n(n+e) + n) + V e + (n+1) V``, paper 001 Tables 1-2; ``torch.nn.LSTM`` has
two biases per gate and would not match).
"""

from __future__ import annotations

import torch
from torch import nn

from urnlib.params import ParameterError, check_choice

__all__ = ["PaperLSTM", "lstm_parameter_count"]


def lstm_parameter_count(vocab_size: int, n: int, embedding_size: int, n_out: int | None = None) -> int:
    """``4(n(n+e) + n) + V e + (n + 1) V`` (paper 001 Tables 1-2); ``(n + 1) n_out`` for the readout
    when it has ``n_out`` classes."""
    n_, e, V = n, embedding_size, vocab_size
    return 4 * (n_ * (n_ + e) + n_) + V * e + (n_ + 1) * (V if n_out is None else n_out)


class PaperLSTM(nn.Module):
    """LSTM language model of paper 001 sec. 2.1 with an embedding layer and a softmax readout.

    With ``v_t = [h_{t-1}; x_t]``::

        f_t = sigmoid(W_f v_t + b_f)        i_t = sigmoid(W_i v_t + b_i)
        o_t = sigmoid(W_o v_t + b_o)        c~_t = act(W_c v_t + b_c)
        c_t = f_t * c_{t-1} + i_t * c~_t    h_t = o_t * tanh(c_t)

    The paper prints ``sigma`` for the candidate ``c~_t``; the standard (and Keras) cell uses
    ``tanh``, which is our default (``candidate="sigmoid"`` gives the printed variant; the parameter
    count is the same). Dropout (paper 001 sec. 2.1: "on h_t and x_t for every timestep"): one mask
    per sequence on the embedded input ``x_t`` and one on ``h_t``, reused at every step; the dropped
    ``h_t`` feeds both the next step and the readout.

    Args:
        vocab_size: V.
        n: hidden units.
        embedding_size: e (paper 001: 12 for Dyck, 20 for cross-serial).
        dropout: rate (paper 001 sec. 4: 0.05).
        candidate: ``"tanh"`` (default) or ``"sigmoid"``.
        n_out: readout size (``None``: V; 2 for the agreement classifier, the LSTM of Linzen et al. 2016).
    """

    def __init__(
        self,
        vocab_size: int,
        n: int,
        embedding_size: int,
        *,
        dropout: float = 0.05,
        candidate: str = "tanh",
        n_out: int | None = None,
    ):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("n", n), ("embedding_size", embedding_size)):
            if not isinstance(value, int) or value < 1:
                raise ParameterError(f"{name}={value!r}: need a positive integer")
        if not 0.0 <= dropout < 1.0:
            raise ParameterError(f"dropout={dropout!r}: need 0 <= dropout < 1")
        check_choice("candidate", candidate, ["tanh", "sigmoid"])
        n_out = vocab_size if n_out is None else n_out
        if not isinstance(n_out, int) or n_out < 1:
            raise ParameterError(f"n_out={n_out!r}: need a positive number of output classes "
                                 "(None: vocab_size)")
        self.vocab_size, self.n, self.embedding_size = vocab_size, n, embedding_size
        self.dropout, self.candidate = float(dropout), candidate
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)  # Keras Embedding default
        self.gates = nn.Linear(n + embedding_size, 4 * n)  # rows: f, i, o, c; one bias per gate
        nn.init.xavier_uniform_(self.gates.weight)
        with torch.no_grad():
            self.gates.bias.zero_()
            self.gates.bias[:n] = 1.0  # Keras unit_forget_bias
        self.readout = nn.Linear(n, n_out)
        nn.init.xavier_uniform_(self.readout.weight)
        nn.init.zeros_(self.readout.bias)

    def states(self, tokens: torch.Tensor, *, cells: bool = False
               ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Hidden states ``(B, T, n)`` after each input symbol (dropout applied when training).

        Args:
            tokens: ``(B, T)`` symbols.
            cells: also return the cell states ``c_t`` ``(B, T, n)``: ``(h, c)`` (e.g. to plot how the cell
                state counts, lecture 004 "Hidden & cell state contents"; ``c_t`` is never dropped).
        """
        B, T = tokens.shape
        n = self.n
        x = self.embedding(tokens)  # (B, T, e)
        h = x.new_zeros(B, n)
        c = x.new_zeros(B, n)
        drop = self.training and self.dropout > 0
        if drop:
            keep = 1 - self.dropout
            x = x * (torch.empty(B, 1, self.embedding_size, device=x.device).bernoulli_(keep) / keep)
            h_mask = torch.empty(B, n, device=x.device).bernoulli_(keep) / keep
        W_h, W_x = self.gates.weight[:, :n], self.gates.weight[:, n:]
        gx = x @ W_x.T + self.gates.bias  # (B, T, 4n): the input half of W v_t, for all t at once
        act = torch.tanh if self.candidate == "tanh" else torch.sigmoid
        out, kept = [], []
        for t in range(T):
            g = gx[:, t] + h @ W_h.T  # (B, 4n)
            f, i, o = torch.sigmoid(g[:, : 3 * n]).split(n, dim=1)
            c = f * c + i * act(g[:, 3 * n :])
            h = o * torch.tanh(c)
            if drop:
                h = h * h_mask
            out.append(h)
            if cells:
                kept.append(c)
        if cells:
            return torch.stack(out, dim=1), torch.stack(kept, dim=1)
        return torch.stack(out, dim=1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-symbol logits ``(B, T, V)``."""
        return self.readout(self.states(tokens))
