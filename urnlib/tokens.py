"""The data shape every model and the training loop share: symbol tensors with ignored positions, and
the batched evaluation-mode forward pass that reads them.

This module sits below the data generators, the models and the training loop, so that none of them
needs to import another to agree on what a dataset is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from torch import nn

from urnlib.params import ParameterError

__all__ = ["IGNORE", "TokenData", "predict", "device_of"]

IGNORE = -100  #: target value of positions that carry no loss (padding); torch's cross-entropy default


@dataclass
class TokenData:
    """Input and target symbol indices, both ``(N, T)`` long tensors; ignored targets hold :data:`IGNORE`."""

    inputs: torch.Tensor
    targets: torch.Tensor

    def __post_init__(self):
        if self.inputs.shape != self.targets.shape or self.inputs.dim() != 2:
            raise ParameterError(
                f"inputs {tuple(self.inputs.shape)} and targets {tuple(self.targets.shape)} "
                "must both be (N, T)"
            )

    def __len__(self) -> int:
        return self.inputs.shape[0]

    def batch(self, index: torch.Tensor | slice) -> tuple[torch.Tensor, torch.Tensor]:
        """``(inputs[index], targets[index])``."""
        return self.inputs[index], self.targets[index]


def device_of(model: nn.Module) -> torch.device:
    """The device of the model's first parameter (the CPU for a model without parameters)."""
    param = next(iter(model.parameters()), None)
    return param.device if param is not None else torch.device("cpu")


@torch.no_grad()
def predict(model: nn.Module, inputs: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Logits ``(N, T, V)`` in evaluation mode (no dropout), computed on the model's device and given on the
    CPU. Holds all N rows' logits: for small vocabularies only; use :func:`urnlib.train.evaluate_loss` or a
    batched callback for large ones."""
    was_training = model.training
    model.eval()
    device = device_of(model)
    try:
        return torch.cat([model(inputs[i : i + batch_size].to(device)).cpu()
                          for i in range(0, len(inputs), batch_size)])
    finally:
        model.train(was_training)
