"""The GRU and LSTM encoders of the entailment classifier (paper 002 appendix C.1, "two-layer recurrent
networks"), as ``torch.nn`` stacks in the interface :class:`urnlib.models.entailment.EntailmentModel` expects.

(The chapter's experiment builds its encoders as :class:`urnlib.models.tpru_stack.RecurrentStack`, whose GRU
and LSTM are the same ``torch.nn`` layers; :class:`TorchRNN` is the stand-alone form.)
"""

from __future__ import annotations

import torch
from torch import nn

from urnlib.models.entailment_packing import _dropout, _positive_int
from urnlib.params import ParameterError, check_choice

__all__ = ["TorchRNN", "torch_rnn_parameter_count"]


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
