"""Models: every language model maps ``(B, T)`` symbol indices to ``(B, T, V)`` next-symbol logits.

:mod:`urnlib.models.registry` is the one place a model spec from a notebook parameter (``"urn 50 k3"``)
becomes a module; a model's own module is imported only when it is built, so a run depends only on the
model it uses. The classes below are importable from here too (lazily).
"""

from __future__ import annotations

import importlib

from torch import nn

from urnlib.models import kinds  # noqa: F401  (registers every model kind in the registry)
from urnlib.models.registry import KINDS, build_model, parse_spec

__all__ = ["URN", "ArbitraryRNN", "PaperLSTM", "MODEL_KINDS", "KINDS", "build_model", "parse_spec",
           "count_parameters", "skew_size", "skew_indices", "urn_parameter_count", "lstm_parameter_count"]

_LAZY = {"URN": "unitary", "ArbitraryRNN": "unitary", "skew_indices": "unitary", "skew_size": "unitary",
         "urn_parameter_count": "unitary", "PaperLSTM": "recurrent", "lstm_parameter_count": "recurrent"}

#: model kinds a notebook may name, with what they are (from the registry)
MODEL_KINDS = {name: kind.doc for name, kind in KINDS.items()}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"urnlib.models.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'urnlib.models' has no attribute {name!r}")


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters (what paper 001 Tables 1 and 2 count)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
