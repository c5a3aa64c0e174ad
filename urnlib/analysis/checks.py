"""Shared input handling of the analyses: conversion to float64 numpy, square and orthogonality checks."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np


#: Largest accepted ``||Q^T Q - I||_F`` for a float64 matrix to count as orthogonal.
ORTHOGONALITY_TOL = 1e-4

_EPS64 = float(np.finfo(np.float64).eps)


def default_orthogonality_tol(n: int, eps: float = _EPS64) -> float:
    r"""Default tolerance on :math:`\|Q^T Q - I\|_F` for an ``n x n`` matrix stored
    with machine epsilon ``eps``.

    .. math::

        \mathrm{tol}(n, \varepsilon) = \max(10^{-4},\; 50\, n^{3/2} \varepsilon),

    i.e. ``1e-4`` for float64 (and for float32 up to ``n`` of about 6), loosened
    for lower precision so that rounding in, e.g., a float32 ``matrix_exp`` of a
    100 x 100 generator (deviation of order ``1e-4``) is not mistaken for a
    non-orthogonal embedding. An unconstrained matrix has a deviation of order 1.

    Args:
        n: matrix size.
        eps: machine epsilon of the storage precision.

    Returns:
        float: the tolerance.
    """
    return max(ORTHOGONALITY_TOL, 50.0 * n**1.5 * eps)


class UnknownSymbolError(ValueError, KeyError):
    """A phrase contains a symbol that has no embedding.

    Subclasses both :class:`ValueError` and :class:`KeyError`, so either can be
    caught.
    """

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def _to_numpy_eps(x: Any) -> Tuple[np.ndarray, float]:
    """Convert a numpy array, torch tensor or nested sequence to float64 numpy;
    also return the machine epsilon of the precision it was stored in."""
    if hasattr(x, "detach"):  # torch tensor (torch is imported only when one is given)
        import torch

        x = x.detach().cpu()
        eps = float(torch.finfo(x.dtype).eps) if x.is_floating_point() else _EPS64
        return np.asarray(x.to(torch.float64)), max(eps, _EPS64)  # also handles bfloat16
    a = np.asarray(x)
    eps = float(np.finfo(a.dtype).eps) if np.issubdtype(a.dtype, np.floating) else _EPS64
    return a.astype(np.float64, copy=False), max(eps, _EPS64)


def _to_numpy(x: Any) -> np.ndarray:
    """Convert a numpy array, torch tensor or nested sequence to float64 numpy."""
    return _to_numpy_eps(x)[0]


def _square_eps(x: Any, name: str = "Q") -> Tuple[np.ndarray, float]:
    a, eps = _to_numpy_eps(x)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {a.shape}")
    return a, eps


def _square(x: Any, name: str = "Q") -> np.ndarray:
    return _square_eps(x, name)[0]


def _orthogonality_deviation(Q: np.ndarray) -> float:
    return float(np.linalg.norm(Q.T @ Q - np.eye(Q.shape[0])))


def _check_orthogonal(Q: np.ndarray, orth_tol: float) -> None:
    dev = _orthogonality_deviation(Q)
    if not np.isfinite(dev) or dev > orth_tol:
        raise ValueError(
            f"Q is not orthogonal: ||Q^T Q - I||_F = {dev:.3g} exceeds {orth_tol:.3g}"
        )


# --------------------------------------------------------------------------- #
# effect and distance
