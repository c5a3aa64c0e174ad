"""The rows of the entailment classifier (paper 002 appendix C.1) in urnlib's one training loop, and the
predictions read back from them.

:func:`urnlib.train.fit` maps ``(B, T)`` inputs to ``(B, T, C)`` logits with a token loss. One pair is one
row::

    inputs  (N, T):  p_1 ... p_m  <sep>  h_1 ... h_k  <pad> ... <pad>
    targets (N, T):  label  IGNORE  IGNORE ...                     (pack_targets)

with exactly one separator per row and padding only at the end. The model
(:class:`urnlib.models.entailment.EntailmentModel`) returns ``(B, T, 2)`` logits whose position 0 holds the
class logits and whose other positions are 0 (ignored by the loss, as their targets are
:data:`~urnlib.tokens.IGNORE`), so the token cross-entropy of ``fit`` is the pair cross-entropy.
:func:`pack_pairs` builds the rows, :func:`pack_targets` the targets, :func:`predict_labels` and
:func:`entailment_accuracy` read the predictions back. The argument checks shared by the entailment
modules are here too.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from urnlib.params import ParameterError, check_int
from urnlib.tokens import IGNORE, predict

__all__ = ["N_CLASSES", "entailment_accuracy", "pack_pairs", "pack_targets", "predict_labels"]

N_CLASSES = 2  #: not entailed (0) / entailed (1)


def _positive_int(name: str, value) -> int:
    return check_int(name, value, minimum=1, message="must be a positive integer")



def _dropout(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ParameterError(f"{name}={value!r}: need 0 <= {name} < 1")
    return float(value)



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
            raise ParameterError(f"pair {i} contains the separator {sep_id} or the padding {pad_id}: "
                                 "remove them")
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
    :data:`~urnlib.tokens.IGNORE` elsewhere.

    Args:
        labels: ``(N,)`` integer labels, 1 = the premise entails the hypothesis.
        T: row length of the packed inputs.
    """
    labels = torch.as_tensor(labels)
    if labels.dim() != 1 or labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ParameterError(f"labels must be an (N,) integer tensor, got {tuple(labels.shape)} "
                             f"{labels.dtype}")
    if labels.numel() and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ParameterError(f"labels must be 0 or 1, got values in [{int(labels.min())}, "
                             f"{int(labels.max())}]")
    _positive_int("T", T)
    out = torch.full((labels.shape[0], T), IGNORE, dtype=torch.long)
    out[:, 0] = labels.long()
    return out



@torch.no_grad()
def predict_labels(model: nn.Module, inputs: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Predicted labels ``(N,)`` (1 = entailed), in eval mode (no renaming, no dropout)."""
    _positive_int("batch_size", batch_size)
    return predict(model, inputs, batch_size)[:, 0].argmax(dim=-1)


@torch.no_grad()
def entailment_accuracy(model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor,
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
    return float((predict_labels(model, inputs, batch_size) == labels.cpu()).float().mean())  # predict: CPU
