"""Siamese entailment classifier of paper 002 (appendix C.1, "plain architecture"), in the one
training loop of urnlib.

A shared recurrent encoder reads the premise and the hypothesis separately; a global max-pool over
time of its states gives ``u`` (premise) and ``v`` (hypothesis); the features
``[u; v; |u - v|; u (.) v]`` go into an MLP with one ReLU hidden layer and a two-class readout,
trained with cross-entropy (reference-facts, TPRU: Adam lr 1e-3, batch 64, d = 64). During training
the variables of each pair are renamed by a random permutation (Symbolic Vocabulary Permutation,
Evans et al. 2018; paper 002 C.1), a *true* permutation as reference-facts requires (the original
code sampled with replacement). The model knows no language: the caller passes the renaming function
(``permute``; the TPRU chapter passes :func:`urnlib.languages.logic.permute_variables`, the data side's one
implementation) together with the variable ids, the vocabulary size and the separator and padding ids.

The rows the loop trains on (``premise <sep> hypothesis <pad>...``, the label in column 0 of the targets)
and the predictions read back from them are in :mod:`urnlib.models.entailment_packing`; the stand-alone
GRU/LSTM encoders in :mod:`urnlib.models.entailment_encoders`. Both are importable from here.

Parameter count (:func:`entailment_parameter_count`), with V symbols, embedding size e, encoder
output size d and hidden size h::

    V e  +  (encoder)  +  (4 d + 1) h  +  (h + 1) 2
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import torch
from torch import nn

from urnlib.models.entailment_encoders import TorchRNN, torch_rnn_parameter_count
from urnlib.models.entailment_packing import (
    N_CLASSES,
    _dropout,
    _positive_int,
    entailment_accuracy,
    pack_pairs,
    pack_targets,
    predict_labels,
)
from urnlib.params import ParameterError, check_int

__all__ = [
    "EntailmentModel",
    "TorchRNN",
    "entailment_accuracy",
    "entailment_parameter_count",
    "pack_pairs",
    "pack_targets",
    "predict_labels",
    "torch_rnn_parameter_count",
    "GPU_WIDTH_STEP",
    "encoder_width",
]

#: on a GPU, an encoder batch's width is rounded up to a multiple of this: its recurrence is replayed from
#: CUDA graphs kept per shape (:mod:`urnlib.models.graphs`), and a width per batch would capture one graph,
#: with its own memory pool, for nearly every width the data has; padding at the end changes no real
#: position's state (the encoders read left to right) and the max-pool skips it
GPU_WIDTH_STEP = 8


def encoder_width(longest: int, device: torch.device | str) -> int:
    """The width an encoder batch is padded to: its longest side's, rounded up to a multiple of
    :data:`GPU_WIDTH_STEP` on a CUDA device (a few shapes per epoch), as it is elsewhere (the CPU's runs keep
    their numbers)."""
    if torch.device(device).type != "cuda":
        return longest
    return -(-longest // GPU_WIDTH_STEP) * GPU_WIDTH_STEP


def _describe(x) -> str:
    return str(tuple(x.shape)) if isinstance(x, torch.Tensor) else type(x).__name__



def entailment_parameter_count(vocab_size: int, embedding_size: int, encoder_parameters: int,
                               encoder_dim: int, hidden: int) -> int:
    """``V e + encoder + (4 d + 1) h + (h + 1) 2`` (embedding, encoder, ReLU layer, readout);
    ``encoder_parameters`` e.g. from :func:`torch_rnn_parameter_count`."""
    V, e, d, h = vocab_size, embedding_size, encoder_dim, hidden
    return V * e + encoder_parameters + (4 * d + 1) * h + (h + 1) * N_CLASSES


class EntailmentModel(nn.Module):
    """Siamese entailment classifier (paper 002 C.1) on packed rows ``premise <sep> hypothesis <pad>...``.

    With ``E`` the embedding and ``enc`` the shared encoder, for premise ``p_1..p_m`` and hypothesis
    ``h_1..h_k``::

        u = max_{t <= m} enc(E p)_t        v = max_{t <= k} enc(E h)_t        (element-wise; 0 if empty)
        f = [u; v; |u - v|; u (.) v]                                          (4 d)
        z = W_2 relu(W_1 f + b_1) + b_2                                       (2 class logits)

    The premise and the hypothesis are each read from their own first symbol (the hypothesis is
    shifted to the front of its own sequence), and the max runs over real positions only, so the
    padding changes nothing as long as the encoder is causal (left to right, as the GRU, LSTM and
    TPRU are), or takes each row's length (an encoder with ``reads_lengths``, e.g.
    :class:`urnlib.models.tpru_stack.BothWays`, is called ``encoder(x, lengths)``). In training mode, with
    ``variable_ids`` given, each row is first renamed by ``permute(inputs, variable_ids)`` (e.g.
    :func:`urnlib.languages.logic.permute_variables`, which draws from torch's global generator).

    Args:
        vocab_size: V (including the padding and separator ids).
        embedding_size: e.
        encoder: module ``(B, T, e) -> (B, T, encoder_dim)``, batch first, causal.
        encoder_dim: d, the encoder's output size.
        hidden: size of the ReLU hidden layer.
        sep_id: separator id (default 1).
        pad_id: padding id (default 0).
        variable_ids: ids of the variables renamed in training (``None``: no renaming).
        permute: the renaming, ``(inputs (B, T), variable_ids (K,)) -> (B, T)``, a random bijection on
            ``variable_ids`` per row and the identity on every other id; required with ``variable_ids``.
        dropout: rate on the features and on the hidden layer (default 0; paper 002 tunes it).
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        encoder: nn.Module,
        encoder_dim: int,
        hidden: int,
        *,
        sep_id: int = 1,
        pad_id: int = 0,
        variable_ids: Sequence[int] | None = None,
        permute: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
        dropout: float = 0.0,
    ):
        super().__init__()
        _positive_int("vocab_size", vocab_size)
        _positive_int("embedding_size", embedding_size)
        _positive_int("encoder_dim", encoder_dim)
        _positive_int("hidden", hidden)
        if not isinstance(encoder, nn.Module):
            raise ParameterError(f"encoder={encoder!r}: pass an nn.Module mapping (B, T, e) to "
                                 "(B, T, encoder_dim)")
        for name, value in (("sep_id", sep_id), ("pad_id", pad_id)):
            check_int(name, value, minimum=0, maximum=vocab_size - 1,
                      message=f"must be an id in [0, vocab_size={vocab_size})")
        if sep_id == pad_id:
            raise ParameterError(f"sep_id={sep_id} equals pad_id={pad_id}: pass two different ids")
        self.vocab_size, self.embedding_size = vocab_size, embedding_size
        self.encoder_dim, self.hidden = encoder_dim, hidden
        self.sep_id, self.pad_id = sep_id, pad_id
        self.dropout = _dropout("dropout", dropout)
        if variable_ids is not None:
            ids = list(variable_ids)
            if not ids:
                raise ParameterError("variable_ids is empty: pass the variable ids, or None for no renaming")
            if any(isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < vocab_size
                   for i in ids):
                raise ParameterError(f"variable_ids={ids}: need integer ids in [0, vocab_size={vocab_size})")
            if len(set(ids)) != len(ids):
                raise ParameterError(f"variable_ids={ids} has repeated ids: pass each variable once")
            if sep_id in ids or pad_id in ids:
                raise ParameterError(
                    f"variable_ids={ids} contains sep_id={sep_id} or pad_id={pad_id}: leave them out"
                )
            if not callable(permute):
                raise ParameterError(f"permute={permute!r}: with variable_ids, pass the renaming function "
                                     "(inputs, variable_ids) -> inputs, e.g. "
                                     "urnlib.languages.logic.permute_variables")
            variable_ids = torch.tensor([int(i) for i in ids], dtype=torch.long)
        elif permute is not None:
            raise ParameterError(f"permute={permute!r} without variable_ids: pass the ids it renames, or "
                                 "permute=None")
        self.permute = permute
        self.register_buffer("variable_ids", variable_ids, persistent=False)  # (K,) or None
        # torch's N(0, 1) initialisation (paper 002 is written in PyTorch)
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        self.encoder = encoder
        self.mlp = nn.Sequential(
            nn.Dropout(self.dropout),
            nn.Linear(4 * encoder_dim, hidden),  # W_1, b_1
            nn.ReLU(),
            nn.Dropout(self.dropout),
            nn.Linear(hidden, N_CLASSES),  # W_2, b_2
        )

    # ----------------------------------------------------------------------- #
    def _check(self, inputs: torch.Tensor) -> None:
        if inputs.dim() != 2 or inputs.dtype != torch.long:
            raise ParameterError(f"inputs must be a (B, T) long tensor, got {tuple(inputs.shape)} "
                                 f"{inputs.dtype}")
        if inputs.numel() == 0:
            raise ParameterError(f"inputs {tuple(inputs.shape)} is empty: pass at least one row with a "
                                 "separator")
        if int(inputs.min()) < 0 or int(inputs.max()) >= self.vocab_size:
            raise ParameterError(f"inputs hold ids outside [0, vocab_size={self.vocab_size})")
        seps = (inputs == self.sep_id).sum(dim=1)  # (B,)
        if not bool((seps == 1).all()):
            bad = int((seps != 1).nonzero()[0])
            raise ParameterError(
                f"row {bad} has {int(seps[bad])} separators (id {self.sep_id}): pack each row as "
                "premise <sep> hypothesis <pad>... (pack_pairs)"
            )
        is_pad = (inputs == self.pad_id).int()  # (B, T)
        if not bool((is_pad.cummax(dim=1).values == is_pad).all()):
            raise ParameterError(f"padding (id {self.pad_id}) must come only at the end of a row "
                                 "(pack_pairs)")

    def split(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Premise and hypothesis of each row, each left-aligned and padded with ``pad_id``.

        Returns ``premise (B, Tp)``, ``premise_mask (B, Tp)``, ``hypothesis (B, Th)``,
        ``hypothesis_mask (B, Th)`` (masks: True at real symbols); ``Tp, Th >= 1`` are the longest
        premise and hypothesis of the batch (1 when all are empty).
        """
        self._check(inputs)
        _, T = inputs.shape
        pos = torch.arange(T, device=inputs.device)  # (T,)
        sep = (inputs == self.sep_id).int().argmax(dim=1)  # (B,): the separator's position = premise length
        real = inputs != self.pad_id  # (B, T)
        hyp_len = real.sum(dim=1) - sep - 1  # (B,)
        Tp, Th = max(int(sep.max()), 1), max(int(hyp_len.max()), 1)  # both <= T (one separator per row)
        p_mask = pos[None, :Tp] < sep[:, None]  # (B, Tp)
        premise = inputs[:, :Tp].masked_fill(~p_mask, self.pad_id)  # (B, Tp)
        h_mask = pos[None, :Th] < hyp_len[:, None]  # (B, Th)
        # (B, Th): hypothesis symbol j sits at sep + 1 + j
        idx = (sep[:, None] + 1 + pos[None, :Th]).clamp(max=T - 1)
        hypothesis = inputs.gather(1, idx).masked_fill(~h_mask, self.pad_id)  # (B, Th)
        return premise, p_mask, hypothesis, h_mask

    def _pool(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``max_t enc(E tokens)_t`` over the True positions of ``mask``; 0 for an empty row. (B, d)"""
        embedded = self.embedding(tokens)
        # an encoder reading both ways (BothWays) takes each row's length: padding only at the end
        states = (self.encoder(embedded, mask.sum(dim=1)) if getattr(self.encoder, "reads_lengths", False)
                  else self.encoder(embedded))  # (B, T, d)
        expected = (*tokens.shape, self.encoder_dim)
        if not isinstance(states, torch.Tensor) or tuple(states.shape) != expected:
            raise ParameterError(
                f"encoder returned {_describe(states)} for input {tuple(tokens.shape)} + (e,): it must "
                f"return (B, T, encoder_dim={self.encoder_dim}), batch first"
            )
        lowest = torch.finfo(states.dtype).min
        pooled = states.masked_fill(~mask[..., None], lowest).amax(dim=1)  # (B, d)
        return torch.where(mask.any(dim=1, keepdim=True), pooled, torch.zeros_like(pooled))

    def encode(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``u`` and ``v``, each ``(B, d)``: the max-pooled encoder states of premise and hypothesis
        (no renaming; the two sides go through the encoder as one batch of 2B rows)."""
        premise, p_mask, hypothesis, h_mask = self.split(inputs)
        B, W = premise.shape[0], encoder_width(max(premise.shape[1], hypothesis.shape[1]), premise.device)

        def widen(x: torch.Tensor, value) -> torch.Tensor:  # (B, W): pad on the right
            return nn.functional.pad(x, (0, W - x.shape[1]), value=value)

        tokens = torch.cat([widen(premise, self.pad_id), widen(hypothesis, self.pad_id)])  # (2B, W)
        mask = torch.cat([widen(p_mask, False), widen(h_mask, False)])  # (2B, W)
        pooled = self._pool(tokens, mask)  # (2B, d)
        return pooled[:B], pooled[B:]

    @staticmethod
    def combine(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``[u; v; |u - v|; u (.) v]``, ``(B, 4d)``."""
        return torch.cat([u, v, (u - v).abs(), u * v], dim=-1)

    def features(self, inputs: torch.Tensor) -> torch.Tensor:
        """The MLP's input ``[u; v; |u - v|; u (.) v]``, ``(B, 4d)`` (no renaming)."""
        return self.combine(*self.encode(inputs))

    def rename(self, inputs: torch.Tensor) -> torch.Tensor:
        """``inputs`` with each row's variables renamed by a random permutation
        (``permute``, e.g. :func:`urnlib.languages.logic.permute_variables`, keys drawn on the device of
        ``variable_ids``); unchanged without ``variable_ids``."""
        if self.variable_ids is None:
            return inputs
        return self.permute(inputs, self.variable_ids)

    def classify(self, inputs: torch.Tensor) -> torch.Tensor:
        """Class logits ``(B, 2)`` (1 = entailed); renames the variables first in training mode."""
        if self.training:
            self._check(inputs)  # before renaming, so errors name the caller's ids
            inputs = self.rename(inputs)
        return self.mlp(self.features(inputs))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, 2)`` for :func:`urnlib.train.fit`: the class logits at position 0, zeros
        elsewhere (their targets are IGNORE, see :func:`pack_targets`)."""
        logits = self.classify(inputs)  # (B, 2)
        rest = logits.new_zeros(inputs.shape[0], inputs.shape[1] - 1, N_CLASSES)  # (B, T-1, 2)
        return torch.cat([logits[:, None], rest], dim=1)  # (B, T, 2)
