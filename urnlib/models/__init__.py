"""Models: every language model maps ``(B, T)`` symbol indices to ``(B, T, V)`` next-symbol logits.

:func:`build_model` is the one place a model name from a notebook parameter becomes a module.
"""

from __future__ import annotations

from torch import nn

from urnlib.models.recurrent import PaperLSTM, lstm_parameter_count
from urnlib.models.unitary import URN, ArbitraryRNN, skew_indices, skew_size, urn_parameter_count
from urnlib.params import ParameterError

__all__ = [
    "URN",
    "ArbitraryRNN",
    "PaperLSTM",
    "MODEL_KINDS",
    "build_model",
    "count_parameters",
    "skew_size",
    "skew_indices",
    "urn_parameter_count",
    "lstm_parameter_count",
]

#: model kinds a notebook may name, with what they are.
MODEL_KINDS = {
    "urn": "unitary RNN, Q = expm(S); k=None is the Full URN, k=3 the 3-TURN (paper 000 sec. 2)",
    "arbitrary": "same cell with unconstrained n x n matrices (paper 000 sec. 5 baseline)",
    "lstm": "LSTM with one bias per gate and an embedding layer (paper 001 sec. 2.1)",
}


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters (what paper 001 Tables 1 and 2 count)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build_model(kind: str, vocab_size: int, **options) -> nn.Module:
    """Build a language model from its kind and options.

    Args:
        kind: one of :data:`MODEL_KINDS`.
        vocab_size: V.
        **options: the model's keyword arguments, e.g. ``n=50, k=3, dropout=0.05`` for ``"urn"``,
            ``n=16, embedding_size=12`` for ``"lstm"``.
    """
    if kind not in MODEL_KINDS:
        raise ParameterError(f"model kind {kind!r} is unknown; choose one of {list(MODEL_KINDS)}")
    cls = {"urn": URN, "arbitrary": ArbitraryRNN, "lstm": PaperLSTM}[kind]
    try:
        return cls(vocab_size, **options)
    except TypeError as err:  # an option the model does not take
        raise ParameterError(f"model {kind!r}: {err}") from None
