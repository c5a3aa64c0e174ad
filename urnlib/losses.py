"""Cross-entropy for language models with large vocabularies, at the cost of the output layer's products.

Two savings over ``F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1), ignore_index=IGNORE)``, the same
loss up to rounding (``tests/test_losses.py`` compares values and gradients in float64):

* :func:`cross_entropy` - one autograd node whose backward writes ``(softmax(z) - onehot(y)) / N`` in place
  (torch's pair ``log_softmax`` + ``nll_loss`` writes a zero matrix, scatters into it, and reads and writes
  ``N x V`` matrices twice more); it keeps only the logits and one log-sum-exp per row.
* :func:`lm_loss` - the output layer runs only at the positions that have a target: a model that exposes
  ``readout_parts(tokens) -> (features, weight, bias)`` (logits ``= F.linear(features, weight, bias)``) gets
  its ``(N, V)`` product at the scored rows alone (the warm-up positions of a language model's rows carry no
  loss). Other models go through ``forward``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from urnlib.tokens import IGNORE, device_of

__all__ = ["cross_entropy", "lm_loss", "scored_logits", "target_log_probs"]


class _CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, targets[:, None]).squeeze(1)
        ctx.save_for_backward(logits, targets)
        return (lse - picked).mean()

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        logits, targets = ctx.saved_tensors
        out = torch.softmax(logits, dim=1)
        out[torch.arange(len(targets), device=out.device), targets] -= 1.0
        out.mul_(grad / len(targets))
        return out, None


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats) of ``(N, V)`` logits against ``(N,)`` targets (none ignored; an empty batch
    gives 0)."""
    if targets.numel() == 0:
        return logits.sum() * 0.0
    return _CrossEntropy.apply(logits, targets)


def scored_logits(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """The logits ``(N, V)`` of the positions whose target is not :data:`~urnlib.tokens.IGNORE`, and those
    targets ``(N,)``; the output layer runs at those positions only when the model has ``readout_parts``."""
    keep = targets != IGNORE
    parts = getattr(model, "readout_parts", None)
    if parts is None:
        logits = model(inputs)
        return logits[keep], targets[keep]
    features, weight, bias = parts(inputs)
    return F.linear(features[keep], weight, bias), targets[keep]


def lm_loss(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, int]:
    """A :data:`urnlib.train.Loss`: the mean cross-entropy over the scored tokens and their number."""
    logits, kept = scored_logits(model, inputs, targets)
    return cross_entropy(logits, kept), int(kept.numel())


@torch.no_grad()
def target_log_probs(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> np.ndarray:
    """``log p(target)`` at every scored position of one batch, row by row (float64 numpy), computed on the
    model's device."""
    device = device_of(model)
    logits, kept = scored_logits(model, inputs.to(device), targets.to(device))
    logp = logits.gather(1, kept[:, None]).squeeze(1) - torch.logsumexp(logits, dim=1)
    return logp.double().cpu().numpy()
