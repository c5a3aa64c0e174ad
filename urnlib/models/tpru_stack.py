"""Stacks of recurrent layers for paper 002: :class:`RecurrentStack` (TPRU, GRU or LSTM layers, the encoders
of the entailment classifier) and :class:`StackLM`, the language model around a stack (appendix C.3).

The TPRU layer itself is :class:`urnlib.models.tpru_cell.TPRU`; ``torch.nn.GRU`` and ``torch.nn.LSTM`` are the
comparison partners (two bias vectors per gate).
"""

from __future__ import annotations

import torch
from torch import nn

from urnlib.models.tpru_cell import TPRU
from urnlib.params import ParameterError, check_choice, check_float, check_int

__all__ = ["STACK_KINDS", "RecurrentStack", "BothWays", "reverse_rows", "StackLM", "TPRULanguageModel"]

#: recurrent layers a :class:`RecurrentStack` can be built from.
STACK_KINDS = {
    "tpru": "TPRU layers (paper 002), any variant and number of slices",
    "gru": "torch.nn.GRU(batch_first=True)",
    "lstm": "torch.nn.LSTM(batch_first=True)",
}


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
        bias_init: initial value of every TPRU layer's scalar biases ``b_b, b_x`` (default 1).
        score_scale: every TPRU layer's fixed factor on its unbinding scores (default 1; :class:`TPRU`).
    """

    def __init__(self, kind: str, input_size: int, d: int, layers: int = 1, *, n_roles: int | None = None,
                 variant: str = "tpru", slices: int = 1, dropout: float = 0.0, seed: int | None = None,
                 bias_init: float = 1.0, score_scale: float = 1.0):
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
                TPRU(input_size if i == 0 else d, d, n_roles, variant=variant, slices=slices,
                     seed=None if seed is None else seed + i, bias_init=bias_init,
                     score_scale=score_scale)
                for i in range(layers)
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
        for i, cell in enumerate(self.cells):
            if i > 0:
                x = self.drop(x)
            if return_fillers and i == len(self.cells) - 1:
                return cell(x, return_fillers=True)
            x = cell(x)
        return x


def reverse_rows(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row of ``x`` ``(B, T, ...)`` reversed within its first ``lengths[b]`` positions, the positions
    after them (the padding) left where they are: its own inverse."""
    steps = torch.arange(x.shape[1], device=x.device)[None, :]  # (1, T)
    ends = lengths.to(x.device)[:, None]  # (B, 1)
    index = torch.where(steps < ends, ends - 1 - steps, steps)  # (B, T)
    return x.gather(1, index.view(*index.shape, *([1] * (x.dim() - 2))).expand_as(x))


class BothWays(nn.Module):
    """Two stacks of the same build reading each row both ways, ``(B, T, e) -> (B, T, 2 d)``: at position t
    the left-to-right stack's state after ``x_1..x_t`` beside the right-to-left stack's after ``x_L..x_t``,
    where L is the row's length (``lengths``; the padding after it is read by neither: a row's states at
    its real positions are those of the row alone). The parameters are twice one stack's (paper 002
    Table 2 counts 4 x 32,768 weights for its two-layer LSTM of d = 64: two layers, two directions).

    Args:
        forward_stack, backward_stack: two :class:`RecurrentStack` of one kind and size (their own
            parameters), ``(B, T, e) -> (B, T, d)``.
    """

    #: :class:`urnlib.models.entailment.EntailmentModel` passes each row's length to an encoder with this
    reads_lengths = True

    def __init__(self, forward_stack: RecurrentStack, backward_stack: RecurrentStack):
        super().__init__()
        if (forward_stack.kind, forward_stack.input_size, forward_stack.d) != \
                (backward_stack.kind, backward_stack.input_size, backward_stack.d):
            raise ParameterError("BothWays needs two stacks of one kind, input size and d: build both alike")
        self.forward_stack, self.backward_stack = forward_stack, backward_stack
        self.kind, self.input_size, self.d = forward_stack.kind, forward_stack.input_size, 2 * forward_stack.d

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """States ``(B, T, 2 d)``; ``lengths`` ``(B,)`` (``None``: every row is ``T`` long)."""
        if lengths is None:
            lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long, device=x.device)
        back = reverse_rows(self.backward_stack(reverse_rows(x, lengths)), lengths)
        return torch.cat([self.forward_stack(x), back], dim=-1)


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
        n_out: outputs of the readout (``None``: V, next-token logits; e.g. 2 for a classifier reading each
            position's state).
    """

    def __init__(self, kind: str, vocab_size: int, embedding_size: int, d: int, layers: int = 1, *,
                 n_roles: int | None = None, variant: str = "tpru", slices: int = 1, dropout: float = 0.0,
                 tie_weights: bool = False, seed: int | None = None, n_out: int | None = None):
        super().__init__()
        check_int("vocab_size", vocab_size, minimum=1)
        if n_out is not None:
            check_int("n_out", n_out, minimum=1)
        check_int("embedding_size", embedding_size, minimum=1)
        self.vocab_size, self.embedding_size = vocab_size, embedding_size
        self.stack = RecurrentStack(kind, embedding_size, d, layers, n_roles=n_roles, variant=variant,
                                    slices=slices, dropout=dropout, seed=seed)
        self.kind, self.d = kind, d
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.drop = nn.Dropout(self.stack.dropout)
        self.readout = nn.Linear(d, n_out or vocab_size)
        nn.init.zeros_(self.readout.bias)
        if tie_weights:
            if n_out not in (None, vocab_size):
                raise ParameterError(f"tie_weights=True needs a readout over the vocabulary (n_out={n_out}, "
                                     f"V={vocab_size}); pass tie_weights=False")
            if embedding_size != d:
                raise ParameterError(f"tie_weights=True needs embedding_size == d (got {embedding_size} and "
                                     f"{d}); pass embedding_size=d or tie_weights=False")
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

    def __init__(self, vocab_size: int, embedding_size: int, d: int, n_roles: int, layers: int = 1,
                 **options):
        super().__init__("tpru", vocab_size, embedding_size, d, layers, n_roles=n_roles, **options)


def tpru_language_model(vocab_size: int, d: int, n_roles: int, slices: int = 1, *,
                        embedding_size: int | None = None, layers: int = 1,
                        **options) -> TPRULanguageModel:
    """The registry's builder of ``"tpru D N<roles> [s<slices>]"``: a TPRU language model whose embedding has
    the size of its state unless ``embedding_size`` says otherwise."""
    return TPRULanguageModel(vocab_size, embedding_size or d, d, n_roles, layers, slices=slices, **options)
