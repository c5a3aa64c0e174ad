"""Siamese entailment classifier of paper 002 (appendix C.1, "plain architecture"), in the one
training loop of urnlib.

A shared recurrent encoder reads the premise and the hypothesis separately; a global max-pool over
time of its states gives ``u`` (premise) and ``v`` (hypothesis); the features
``[u; v; |u - v|; u (.) v]`` go into an MLP with one ReLU hidden layer and a two-class readout,
trained with cross-entropy (reference-facts, TPRU: Adam lr 1e-3, batch 64, d = 64). During training
the variables of each pair are renamed by a random permutation (Symbolic Vocabulary Permutation,
Evans et al. 2018; paper 002 C.1), a *true* permutation as reference-facts requires (the original
code sampled with replacement): :func:`urnlib.languages.logic.permute_variables`, the data side's one
implementation.

Packing for :func:`urnlib.train.fit`, which maps ``(B, T)`` inputs to ``(B, T, C)`` logits with a
token loss. One pair is one row::

    inputs  (N, T):  p_1 ... p_m  <sep>  h_1 ... h_k  <pad> ... <pad>
    targets (N, T):  label  IGNORE  IGNORE ...                     (pack_targets)

with exactly one separator per row and padding only at the end. The model returns ``(B, T, 2)``
logits whose position 0 holds the class logits and whose other positions are 0 (ignored by the
loss, as their targets are :data:`~urnlib.train.IGNORE`), so the token cross-entropy of ``fit`` is
the pair cross-entropy. :func:`pack_pairs` builds the rows, :func:`pack_targets` the targets,
:func:`predict_labels` and :func:`entailment_accuracy` read the predictions back.

Parameter count (:func:`entailment_parameter_count`), with V symbols, embedding size e, encoder
output size d and hidden size h::

    V e  +  (encoder)  +  (4 d + 1) h  +  (h + 1) 2
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch
from torch import nn

from urnlib.languages.logic import permute_variables
from urnlib.params import ParameterError, check_choice
from urnlib.train import IGNORE, predict

__all__ = [
    "EntailmentModel",
    "TorchRNN",
    "pack_pairs",
    "pack_targets",
    "predict_labels",
    "entailment_accuracy",
    "entailment_parameter_count",
    "torch_rnn_parameter_count",
]

N_CLASSES = 2  #: not entailed (0) / entailed (1)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name}={value!r}: need a positive integer")
    return value


def _describe(x) -> str:
    return str(tuple(x.shape)) if isinstance(x, torch.Tensor) else type(x).__name__


def _dropout(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ParameterError(f"{name}={value!r}: need 0 <= {name} < 1")
    return float(value)


# --------------------------------------------------------------------------- #
# packing
# --------------------------------------------------------------------------- #
def pack_pairs(
    premises: Sequence[Sequence[int]],
    hypotheses: Sequence[Sequence[int]],
    *,
    sep_id: int = 1,
    pad_id: int = 0,
    length: int | None = None,
) -> torch.Tensor:
    """Rows ``premise <sep> hypothesis <pad>...`` as an ``(N, T)`` long tensor.

    Args:
        premises: N token-id sequences (may be empty; must not contain ``sep_id`` or ``pad_id``).
        hypotheses: N token-id sequences (same rules).
        sep_id: separator id.
        pad_id: padding id.
        length: T; ``None``: the longest row, ``len(p) + 1 + len(h)``.
    """
    if len(premises) != len(hypotheses):
        raise ParameterError(
            f"{len(premises)} premises but {len(hypotheses)} hypotheses: pass one hypothesis per premise"
        )
    if sep_id == pad_id:
        raise ParameterError(f"sep_id={sep_id} equals pad_id={pad_id}: pass two different ids")
    rows = []
    for i, (p, h) in enumerate(zip(premises, hypotheses)):
        p, h = [int(t) for t in p], [int(t) for t in h]
        if sep_id in p or sep_id in h or pad_id in p or pad_id in h:
            raise ParameterError(f"pair {i} contains the separator {sep_id} or the padding {pad_id}: remove them")
        rows.append(p + [sep_id] + h)
    T = max((len(r) for r in rows), default=1) if length is None else length
    _positive_int("length", T)
    if any(len(r) > T for r in rows):
        longest = max(len(r) for r in rows)
        raise ParameterError(f"length={T} is shorter than the longest row ({longest}): pass None or more")
    out = torch.full((len(rows), T), pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out


def pack_targets(labels: torch.Tensor | Sequence[int], T: int) -> torch.Tensor:
    """Targets ``(N, T)`` for :func:`urnlib.train.fit`: the label (0 or 1) in column 0,
    :data:`~urnlib.train.IGNORE` elsewhere.

    Args:
        labels: ``(N,)`` integer labels, 1 = the premise entails the hypothesis.
        T: row length of the packed inputs.
    """
    labels = torch.as_tensor(labels)
    if labels.dim() != 1 or labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ParameterError(f"labels must be an (N,) integer tensor, got {tuple(labels.shape)} {labels.dtype}")
    if labels.numel() and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ParameterError(f"labels must be 0 or 1, got values in [{int(labels.min())}, {int(labels.max())}]")
    _positive_int("T", T)
    out = torch.full((labels.shape[0], T), IGNORE, dtype=torch.long)
    out[:, 0] = labels.long()
    return out


# --------------------------------------------------------------------------- #
# encoders
# --------------------------------------------------------------------------- #
def torch_rnn_parameter_count(kind: str, input_size: int, d: int, layers: int = 2) -> int:
    """``g (d (d_in + d) + 2 d)`` per layer (``torch.nn`` has two biases per gate), ``g = 3`` for
    the GRU, 4 for the LSTM, ``d_in = input_size`` for the first layer and d above it."""
    g = {"gru": 3, "lstm": 4}[kind]
    return sum(g * (d * ((input_size if i == 0 else d) + d) + 2 * d) for i in range(layers))


class TorchRNN(nn.Module):
    """Batch-first ``torch.nn.GRU`` / ``torch.nn.LSTM`` stack that returns the top layer's states,
    ``(B, T, e) -> (B, T, d)``: the GRU and LSTM encoders of paper 002 C.1 ("two-layer recurrent
    networks"), in the interface :class:`EntailmentModel` expects. Left to right, so the states of
    a row's real positions do not depend on the padding after them.

    Args:
        kind: ``"gru"`` or ``"lstm"``.
        input_size: e.
        d: hidden size (paper 002 logical entailment: 64).
        layers: stacked layers (paper 002 C.1: 2).
        dropout: between layers (``torch.nn`` semantics; only with ``layers > 1``).
    """

    def __init__(self, kind: str, input_size: int, d: int, layers: int = 2, *, dropout: float = 0.0):
        super().__init__()
        check_choice("kind", kind, ["gru", "lstm"])
        _positive_int("input_size", input_size)
        _positive_int("d", d)
        _positive_int("layers", layers)
        dropout = _dropout("dropout", dropout)
        if dropout > 0 and layers == 1:
            raise ParameterError(f"dropout={dropout} acts between layers: pass layers >= 2 or dropout=0")
        self.kind, self.input_size, self.d, self.layers = kind, input_size, d, layers
        rnn = nn.GRU if kind == "gru" else nn.LSTM
        self.rnn = rnn(input_size, d, num_layers=layers, batch_first=True, dropout=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """States ``(B, T, d)`` of the top layer."""
        return self.rnn(x)[0]


# --------------------------------------------------------------------------- #
# the model
# --------------------------------------------------------------------------- #
def entailment_parameter_count(vocab_size: int, embedding_size: int, encoder_parameters: int, encoder_dim: int,
                               hidden: int) -> int:
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
    TPRU are). In training mode, with ``variable_ids`` given, each row is first renamed by
    :func:`urnlib.languages.logic.permute_variables` (torch's global generator).

    Args:
        vocab_size: V (including the padding and separator ids).
        embedding_size: e.
        encoder: module ``(B, T, e) -> (B, T, encoder_dim)``, batch first, causal.
        encoder_dim: d, the encoder's output size.
        hidden: size of the ReLU hidden layer.
        sep_id: separator id (default 1).
        pad_id: padding id (default 0).
        variable_ids: ids of the variables renamed in training (``None``: no renaming).
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
        dropout: float = 0.0,
    ):
        super().__init__()
        _positive_int("vocab_size", vocab_size)
        _positive_int("embedding_size", embedding_size)
        _positive_int("encoder_dim", encoder_dim)
        _positive_int("hidden", hidden)
        if not isinstance(encoder, nn.Module):
            raise ParameterError(f"encoder={encoder!r}: pass an nn.Module mapping (B, T, e) to (B, T, encoder_dim)")
        for name, value in (("sep_id", sep_id), ("pad_id", pad_id)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < vocab_size:
                raise ParameterError(f"{name}={value!r}: need an id in [0, vocab_size={vocab_size})")
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
            variable_ids = torch.tensor([int(i) for i in ids], dtype=torch.long)
        self.register_buffer("variable_ids", variable_ids, persistent=False)  # (K,) or None
        self.embedding = nn.Embedding(vocab_size, embedding_size)  # torch's N(0, 1) init (paper 002 is PyTorch)
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
            raise ParameterError(f"inputs must be a (B, T) long tensor, got {tuple(inputs.shape)} {inputs.dtype}")
        if inputs.numel() == 0:
            raise ParameterError(f"inputs {tuple(inputs.shape)} is empty: pass at least one row with a separator")
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
            raise ParameterError(f"padding (id {self.pad_id}) must come only at the end of a row (pack_pairs)")

    def split(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Premise and hypothesis of each row, each left-aligned and padded with ``pad_id``.

        Returns ``premise (B, Tp)``, ``premise_mask (B, Tp)``, ``hypothesis (B, Th)``,
        ``hypothesis_mask (B, Th)`` (masks: True at real symbols); ``Tp, Th >= 1`` are the longest
        premise and hypothesis of the batch (1 when all are empty).
        """
        self._check(inputs)
        B, T = inputs.shape
        pos = torch.arange(T, device=inputs.device)  # (T,)
        sep = (inputs == self.sep_id).int().argmax(dim=1)  # (B,): the separator's position = premise length
        real = inputs != self.pad_id  # (B, T)
        hyp_len = real.sum(dim=1) - sep - 1  # (B,)
        Tp, Th = max(int(sep.max()), 1), max(int(hyp_len.max()), 1)  # both <= T (one separator per row)
        p_mask = pos[None, :Tp] < sep[:, None]  # (B, Tp)
        premise = inputs[:, :Tp].masked_fill(~p_mask, self.pad_id)  # (B, Tp)
        h_mask = pos[None, :Th] < hyp_len[:, None]  # (B, Th)
        idx = (sep[:, None] + 1 + pos[None, :Th]).clamp(max=T - 1)  # (B, Th): hypothesis symbol j at sep + 1 + j
        hypothesis = inputs.gather(1, idx).masked_fill(~h_mask, self.pad_id)  # (B, Th)
        return premise, p_mask, hypothesis, h_mask

    def _pool(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``max_t enc(E tokens)_t`` over the True positions of ``mask``; 0 for an empty row. (B, d)"""
        states = self.encoder(self.embedding(tokens))  # (B, T, d)
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
        B, W = premise.shape[0], max(premise.shape[1], hypothesis.shape[1])

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
        (:func:`urnlib.languages.logic.permute_variables`, keys drawn on the device of ``variable_ids``);
        unchanged without ``variable_ids``."""
        if self.variable_ids is None:
            return inputs
        return permute_variables(inputs, self.variable_ids)

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


# --------------------------------------------------------------------------- #
# reading predictions
# --------------------------------------------------------------------------- #
@torch.no_grad()
def predict_labels(model: EntailmentModel, inputs: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Predicted labels ``(N,)`` (1 = entailed), in eval mode (no renaming, no dropout)."""
    _positive_int("batch_size", batch_size)
    return predict(model, inputs, batch_size)[:, 0].argmax(dim=-1)


@torch.no_grad()
def entailment_accuracy(model: EntailmentModel, inputs: torch.Tensor, labels: torch.Tensor,
                        batch_size: int = 1024) -> float:
    """Fraction of rows whose predicted label equals ``labels`` (``(N,)``, or packed ``(N, T)``
    targets, whose column 0 is read)."""
    labels = torch.as_tensor(labels)
    if labels.dim() == 2:
        labels = labels[:, 0]
    if labels.shape != inputs.shape[:1]:
        raise ParameterError(
            f"labels {tuple(labels.shape)} do not match inputs {tuple(inputs.shape)}: pass (N,) labels"
        )
    return float((predict_labels(model, inputs, batch_size) == labels.to(inputs.device)).float().mean())
