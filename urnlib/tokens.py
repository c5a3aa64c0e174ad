"""The data shape every model and the training loop share: symbol tensors with ignored positions.

This module sits below the data generators, the models and the training loop, so that none of them
needs to import another to agree on what a dataset is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from urnlib.params import ParameterError

__all__ = ["IGNORE", "TokenData"]

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
