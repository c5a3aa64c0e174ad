"""Gated recurrent baselines.

:class:`PaperLSTM` is the LSTM of paper 001 sec. 2.1 (Keras-style: one bias per gate, so its
parameter count is ``4(n(n+e) + n) + V e + (n+1) V``, paper 001 Tables 1-2; ``torch.nn.LSTM`` has
two biases per gate and would not match).

Speed: the tanh-candidate cell runs through torch's fused LSTM kernel (``torch.lstm``, the function
behind ``nn.LSTM``; on the CPU in float32 oneDNN's), fed weights derived from the stored ones on every
call: rows reordered to torch's gate order, the second bias held at zero, and, in training with
dropout, the state mask folded in exactly (see :meth:`PaperLSTM.states`). The Python loop
(:meth:`PaperLSTM.states_reference`) stays the definition (``tests/test_fast_cells.py`` compares the
two); it also serves the sigmoid candidate, which torch's cell does not have.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.params import ParameterError, check_choice, check_int

__all__ = ["PaperLSTM", "lstm_parameter_count", "one_chunk", "AUTHORS_LSTM", "AUTHORS_CELL"]

#: the LSTM of the authors' code for papers 000 and 001 (GU-CLASP/unitary-recurrent-network ``XDep.hs``,
#: ``LSTMUtils.hs``: ``DropProb 0.10`` on the input, on h_{t-1} entering each step and on the output before
#: the dense layer; TypedFlow's LSTM initialiser: each gate's recurrent block orthogonal, its input block
#: Glorot), as options of a PaperLSTM's model spec
AUTHORS_LSTM = {"dropout": 0.10, "output_mask": True, "init": "typedflow"}
AUTHORS_CELL = "the authors' cell"  #: how a chapter's label names such a model: "LSTM 8, the authors' cell"

# o-gate pre-activation offset of a dropped unit: sigmoid(v - _CLOSED) is exactly 0 in float32 and
# float64 for any v < _CLOSED - 745 (a pre-activation of thousands never occurs)
_CLOSED = 1e4


def lstm_parameter_count(vocab_size: int, n: int, embedding_size: int, n_out: int | None = None) -> int:
    """``4(n(n+e) + n) + V e + (n + 1) V`` (paper 001 Tables 1-2); ``(n + 1) n_out`` for the readout
    when it has ``n_out`` classes."""
    n_, e, V = n, embedding_size, vocab_size
    return 4 * (n_ * (n_ + e) + n_) + V * e + (n_ + 1) * (V if n_out is None else n_out)


def one_chunk(weights: list[torch.Tensor]) -> list[torch.Tensor]:
    """``weights`` as consecutive contiguous views of one new buffer, in their order (for torch's fused RNN
    calls: ``[w_ih, w_hh, b_ih, b_hh]``, the layout ``nn.LSTM.flatten_parameters`` gives its own). cuDNN reads
    the weights of ``torch.lstm`` / ``torch.rnn_tanh`` as one flat buffer: a weight that is not contiguous
    (a column slice such as ``W[:, :n]``) stops it ("view size is not compatible"), and weights in separate
    blocks are copied with a warning on every call. The same values; the gradient flows back through the
    copy."""
    flat = torch.cat([w.reshape(-1) for w in weights])
    out, at = [], 0
    for w in weights:
        out.append(flat[at : at + w.numel()].view(w.shape))
        at += w.numel()
    return out


_FLAT_INDEX: dict = {}  # (n, e, device) -> the index of _flat_index there


def _flat_index(n: int, e: int) -> torch.Tensor:
    """Where each entry of torch's flat LSTM weights ``[w_ih | w_hh | b_ih | b_hh]`` comes from in
    ``[gates.weight (4n x (n + e)), row by row | gates.bias | 0]``: rows to torch's gate order, the input
    columns (the last e) for ``w_ih``, the state columns (the first n) for ``w_hh``, the zero for ``b_hh``."""
    W = torch.arange(4 * n * (n + e)).view(4 * n, n + e)
    bias = 4 * n * (n + e) + torch.arange(4 * n)
    zero = 4 * n * (n + e) + 4 * n
    W, bias = _torch_gate_order(W, n), _torch_gate_order(bias, n)
    return torch.cat([W[:, n:].reshape(-1), W[:, :n].reshape(-1), bias, torch.full((4 * n,), zero)])


def _torch_gate_order(t: torch.Tensor, n: int) -> torch.Tensor:
    """Row blocks f, i, o, c (ours) -> i, f, c, o (torch's i, f, g, o)."""
    return torch.cat([t[n : 2 * n], t[:n], t[3 * n :], t[2 * n : 3 * n]])


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
        output_mask: the authors' TypedFlow LSTM (``XDep.hs``, ``LSTMUtils.hs``): the state mask drops
            ``h_{t-1}`` on its way into the next step only, and the readout reads ``h_t`` through a mask
            of its own (one per sequence); default ``False``, one mask on ``h_t`` for both.
        init: ``"keras"`` (default: Glorot uniform over ``[W_h W_x]`` at once, Keras' defaults) or
            ``"typedflow"``, the authors' TypedFlow cell: each gate's recurrent block orthogonal and its
            input block Glorot uniform (``TypedFlow/Layers/RNN/Cells.hs``), the biases as Keras'.
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
        output_mask: bool = False,
        init: str = "keras",
    ):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("n", n), ("embedding_size", embedding_size)):
            check_int(name, value, minimum=1, message="must be a positive integer")
        if not 0.0 <= dropout < 1.0:
            raise ParameterError(f"dropout={dropout!r}: need 0 <= dropout < 1")
        check_choice("candidate", candidate, ["tanh", "sigmoid"])
        check_choice("init", init, ["keras", "typedflow"])
        n_out = vocab_size if n_out is None else n_out
        check_int("n_out", n_out, minimum=1, message="must be a positive number of output classes "
                  "(None: vocab_size)")
        self.vocab_size, self.n, self.embedding_size = vocab_size, n, embedding_size
        self.dropout, self.candidate, self.output_mask = float(dropout), candidate, bool(output_mask)
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)  # Keras Embedding default
        self.gates = nn.Linear(n + embedding_size, 4 * n)  # rows: f, i, o, c; one bias per gate
        nn.init.xavier_uniform_(self.gates.weight)
        if init == "typedflow":
            with torch.no_grad():
                for gate in range(4):
                    rows = slice(gate * n, (gate + 1) * n)
                    nn.init.orthogonal_(self.gates.weight[rows, :n])
                    nn.init.xavier_uniform_(self.gates.weight[rows, n:])
        with torch.no_grad():
            self.gates.bias.zero_()
            self.gates.bias[:n] = 1.0  # Keras unit_forget_bias
        self.readout = nn.Linear(n, n_out)
        nn.init.xavier_uniform_(self.readout.weight)
        nn.init.zeros_(self.readout.bias)

    def _inputs(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None, float]:
        """Embedded (and dropped) input, time-major ``(T, B, e)``, the 0/1 state mask ``(B, n)``
        (``None`` when not dropping) and its scale ``1 / keep`` (rounded as a mask of the default dtype
        holds it)."""
        B = tokens.shape[0]
        x = self.embedding(tokens.T)  # (T, B, e)
        if not (self.training and self.dropout > 0):
            return x, None, 1.0
        keep = 1 - self.dropout  # masks of the default dtype (not x's): float64 runs keep these draws
        x_mask = torch.empty(B, 1, self.embedding_size, device=x.device).bernoulli_(keep) / keep
        kept = torch.empty(B, self.n, device=x.device).bernoulli_(keep)
        return x * x_mask.transpose(0, 1), kept, float(torch.ones(()).div_(keep))

    def _fused(self, tokens: torch.Tensor) -> tuple[torch.Tensor, float, torch.Tensor]:
        """``(kept (.) h, s, x)``: the states ``(B, T, n)`` before the dropout scale ``s = 1 / keep``
        (``s = 1`` when not dropping) from torch's fused LSTM kernel (tanh candidate only; see
        :meth:`states`), and the input ``x`` it read ``(T, B, e)``."""
        B, T = tokens.shape
        n = self.n
        x_in, kept, scale = self._inputs(tokens)
        if kept is None:  # no dropout: torch's layout gathered from the stored weights in one kernel
            h0 = x_in.new_zeros(1, B, n)
            h = torch.lstm(x_in, (h0, h0), self._flat_weights(), True, 1, 0.0, self.training, False, False)[0]
            return h.transpose(0, 1), scale, x_in
        x = x_in
        W = _torch_gate_order(self.gates.weight, n)
        bias = _torch_gate_order(self.gates.bias, n)
        W_h, W_x = W[:, :n], W[:, n:]
        if kept is not None:
            shut = torch.zeros(4 * n, n, dtype=W.dtype, device=W.device)
            shut[3 * n :].diagonal().fill_(-_CLOSED)  # torch's o rows
            W_x = torch.cat([W_x, shut], 1)
            x = torch.cat([x, (1 - kept).to(x.dtype).expand(T, B, n)], 2)
            W_h = W_h * scale
        h0 = x.new_zeros(1, B, n)
        weights = one_chunk([W_x, W_h, bias, torch.zeros_like(bias)])
        h = torch.lstm(x, (h0, h0), weights, True, 1, 0.0, self.training, False, False)[0]
        return h.transpose(0, 1), scale, x_in

    def _flat_weights(self) -> list[torch.Tensor]:
        """``[w_ih, w_hh, b_ih, b_hh]`` of torch's fused LSTM, as views of one buffer (cuDNN's layout, see
        :func:`one_chunk`): the stored weights reordered to torch's gates, ``b_hh = 0``. One ``index_select``
        from the stored weights (and a zero) makes the buffer, so the gradient flows back through one
        ``index_add``: what a GPU, where each small kernel costs a launch, needs."""
        n, e = self.n, self.embedding_size
        W, b = self.gates.weight, self.gates.bias
        index = _FLAT_INDEX.get((n, e, W.device))
        if index is None:
            index = _FLAT_INDEX[(n, e, W.device)] = _flat_index(n, e).to(W.device)
        flat = torch.cat([W.reshape(-1), b, W.new_zeros(1)]).index_select(0, index)
        sizes = [4 * n * e, 4 * n * n, 4 * n, 4 * n]
        ih, hh, b_ih, b_hh = flat.split(sizes)
        return [ih.view(4 * n, e), hh.view(4 * n, n), b_ih, b_hh]

    def _cell_states(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The cell states ``(B, T, n)`` behind the (dropped) states ``h`` ``(B, T, n)`` read from ``x``
        ``(T, B, e)``: the gates from ``[h_{t-1}; x_t]`` in one product, then ``c_t = f c_{t-1} + i c~_t``."""
        n = self.n
        h_prev = torch.cat([h.new_zeros(1, h.shape[0], n), h.transpose(0, 1)[:-1]])  # (T, B, n)
        g = torch.cat([h_prev, x], 2) @ self.gates.weight.T + self.gates.bias  # (T, B, 4n): f, i, o, c
        f, i, cand = torch.sigmoid(g[..., :n]), torch.sigmoid(g[..., n : 2 * n]), torch.tanh(g[..., 3 * n :])
        c, cs = torch.zeros_like(f[0]), []
        for t in range(g.shape[0]):
            c = f[t] * c + i[t] * cand[t]
            cs.append(c)
        return torch.stack(cs, dim=1)

    def states(self, tokens: torch.Tensor, *, cells: bool = False
               ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Hidden states ``(B, T, n)`` after each input symbol (dropout applied when training).

        The tanh cell runs in torch's fused kernel with the stored weights rearranged (same function,
        rounding aside; ``tests/test_fast_cells.py``). The dropped state ``m (.) h_t`` with
        ``m = kept / keep`` (``kept`` 0/1 per sequence and unit) enters the next step as
        ``(W_h / keep) (kept (.) h_t)``, and ``kept (.) h_t`` is what the kernel computes when the
        o gate of a dropped unit is shut: ``1 - kept`` rides along as extra input columns whose weight,
        ``-1e4`` on the o row of its unit, makes that gate's ``sigmoid`` exactly 0 (value and gradient).

        Args:
            tokens: ``(B, T)`` symbols.
            cells: also return the cell states ``c_t`` ``(B, T, n)``: ``(h, c)`` (e.g. to plot how the cell
                state counts, lecture 004 "Hidden & cell state contents"; ``c_t`` is never dropped). The
                kernel returns only the last one: the cell states are recomputed from the states it made
                (``h`` as without ``cells``).
        """
        if self.candidate != "tanh":
            return self.states_reference(tokens, cells=cells)
        h, scale, x = self._fused(tokens)
        h = h if scale == 1.0 else h * scale
        return (h, self._cell_states(x, h)) if cells else h

    def states_reference(self, tokens: torch.Tensor, *, cells: bool = False
                         ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """:meth:`states` as the equations read: a Python loop over time (the definition the fused path
        is tested against; the sigmoid candidate uses it)."""
        B, T = tokens.shape
        n = self.n
        x, kept, scale = self._inputs(tokens)
        h_mask = None if kept is None else kept * scale
        h = x.new_zeros(B, n)
        c = x.new_zeros(B, n)
        W_h, W_x = self.gates.weight[:, :n], self.gates.weight[:, n:]
        gx = x @ W_x.T + self.gates.bias  # (T, B, 4n): the input half of W v_t, for all t at once
        act = torch.tanh if self.candidate == "tanh" else torch.sigmoid
        out, cs = [], []
        for t in range(T):
            g = gx[t] + h @ W_h.T  # (B, 4n)
            f, i, o = torch.sigmoid(g[:, : 3 * n]).split(n, dim=1)
            c = f * c + i * act(g[:, 3 * n :])
            h = o * torch.tanh(c)
            if h_mask is not None:
                h = h * h_mask
            out.append(h)
            if cells:
                cs.append(c)
        if cells:
            return torch.stack(out, dim=1), torch.stack(cs, dim=1)
        return torch.stack(out, dim=1)

    def _separate_masks(self, tokens: torch.Tensor) -> torch.Tensor:
        """The readout's input in training with ``output_mask`` (the authors' TypedFlow LSTM): the state
        mask on ``h_{t-1}`` entering each step only, then a mask of the readout's own on ``h_t`` (both one
        per sequence and scaled by ``1 / keep``); a Python loop over time."""
        B, T = tokens.shape
        n = self.n
        x, kept, scale = self._inputs(tokens)
        out_mask = torch.empty(B, 1, n, device=x.device).bernoulli_(1 - self.dropout) * scale
        h_mask = kept * scale
        h, c = x.new_zeros(B, n), x.new_zeros(B, n)
        W_h, W_x = self.gates.weight[:, :n], self.gates.weight[:, n:]
        gx = x @ W_x.T + self.gates.bias
        act = torch.tanh if self.candidate == "tanh" else torch.sigmoid
        out = []
        for t in range(T):
            g = gx[t] + (h * h_mask) @ W_h.T
            f, i, o = torch.sigmoid(g[:, : 3 * n]).split(n, dim=1)
            c = f * c + i * act(g[:, 3 * n :])
            h = o * torch.tanh(c)
            out.append(h)
        return torch.stack(out, dim=1) * out_mask

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-symbol logits ``(B, T, V)``: the readout of :meth:`states` (on the fused path the dropout
        scale ``1 / keep`` is applied to the readout's weight instead of the states, the same product)."""
        return F.linear(*self.readout_parts(tokens))

    def readout_parts(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(states, W, b)`` with the logits ``F.linear(states, W, b)`` (:mod:`urnlib.losses` applies the
        readout at the scored positions only)."""
        if self.output_mask and self.training and self.dropout > 0:
            return self._separate_masks(tokens), self.readout.weight, self.readout.bias
        if self.candidate != "tanh":
            return self.states_reference(tokens), self.readout.weight, self.readout.bias
        h, scale, _ = self._fused(tokens)
        W = self.readout.weight if scale == 1.0 else self.readout.weight * scale
        return h, W, self.readout.bias
