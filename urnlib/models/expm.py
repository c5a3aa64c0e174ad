"""The matrix exponential of the URN's skew-symmetric generators (:mod:`urnlib.models.unitary`): a
scaled-and-squared Taylor polynomial (:func:`expm`, replayed from a CUDA graph on a GPU) and its rank-2k form
for k-truncated generators (:func:`expm_truncated`)."""

from __future__ import annotations

import functools
import math

import torch

from urnlib.models import graphs

__all__ = ["expm", "expm_truncated", "truncated_factors"]

_TAYLOR = [1.0 / math.factorial(j) for j in range(19)]  # degree 18: remainder below 1/19! ~ 8e-18


def expm(A: torch.Tensor) -> torch.Tensor:
    """Matrix exponential of ``(..., m, m)`` by scaling and squaring a degree-18 Taylor polynomial.

    The same function as ``torch.linalg.matrix_exp`` up to rounding (tests compare values and
    gradients in float64), at a fraction of its cost in training: ``A / 2^s`` has 1-norm at most 1, so
    the truncated series is exact to ``1/19! ~ 8e-18`` (relative), evaluated with 7 products
    (Paterson-Stockmeyer: the powers up to 4, then Horner in ``X^4``), then squared ``s`` times.
    Autograd differentiates through those products (``torch.linalg.matrix_exp``'s backward is the
    exponential of a ``2m x 2m`` block matrix, eight times the work of the forward pass).
    """
    shapes_only = A.numel() == 0 or A.device.type == "meta"
    norm = 0.0 if shapes_only else float(A.detach().abs().sum(-2).amax())  # largest 1-norm in the batch
    s = max(0, math.ceil(math.log2(norm))) if norm > 1 else 0
    return graphs.replayed(functools.partial(_taylor_squared, s=s), (A,), ("expm", s))


def _taylor_squared(A: torch.Tensor, s: int) -> torch.Tensor:
    """:func:`expm` once the number of squarings ``s`` is chosen (no host synchronisation: a CUDA graph can
    replay it)."""
    X = A / 2**s if s else A
    eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    X2 = X @ X
    pw = [eye, X, X2, X2 @ X]
    X4 = X2 @ X2
    c = _TAYLOR

    def block(j: int) -> torch.Tensor:  # sum_i c[4j + i] X^i
        terms = [c[4 * j + i] * pw[i] for i in range(4) if 4 * j + i < len(c)]
        out = terms[0]
        for t in terms[1:]:
            out = out + t
        return out

    E = block(4)
    for j in (3, 2, 1, 0):
        E = block(j) + X4 @ E
    for _ in range(s):
        E = E @ E
    return E


def expm_truncated(rows: torch.Tensor) -> torch.Tensor:
    """``expm(S)`` for k-truncated skew generators, through their rank-2k structure.

    With ``U`` zero outside its first ``k`` rows ``R_k`` (``(k, n)``) and ``E = I[:, :k]``,
    ``S = U - U^T = L R^T`` with ``L = [E, -R_k^T]`` and ``R^T = [R_k; E^T]`` (both ``n x 2k``). Then
    ``S^j = L (R^T L)^{j-1} R^T`` and

        ``expm(S) = I + L phi(R^T L) R^T``,   ``phi(K) = sum_j K^j / (j+1)!``,

    where ``phi(K)`` is the top-right block of ``expm([[K, I], [0, 0]])``, a ``4k x 4k`` exponential.
    Cost per symbol: one ``4k x 4k`` exponential and an ``n x 2k x n`` product, instead of an
    ``n x n`` exponential; the result is the same orthogonal matrix up to rounding.

    Args:
        rows: ``(V, k, n)``, the first ``k`` rows of each generator's upper part.

    Returns:
        ``(V, n, n)``.
    """
    L, phi, Rt = truncated_factors(rows)
    return torch.eye(rows.shape[-1], dtype=rows.dtype, device=rows.device) + L @ phi @ Rt


def truncated_factors(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(L, phi, R^T)`` of :func:`expm_truncated` (``expm(S) = I + L phi R^T``): ``(V, n, 2k)``,
    ``(V, 2k, 2k)`` and ``(V, 2k, n)`` for ``rows`` ``(V, k, n)``; a state times ``expm(S)`` is then
    ``h + ((h L) phi) R^T``, ``O(k n)`` work instead of ``O(n^2)``."""
    V, k, n = rows.shape
    E = torch.eye(n, k, dtype=rows.dtype, device=rows.device).expand(V, n, k)
    L = torch.cat([E, -rows.transpose(1, 2)], dim=2)  # (V, n, 2k)
    Rt = torch.cat([rows, E.transpose(1, 2)], dim=1)  # (V, 2k, n)
    K = Rt @ L  # (V, 2k, 2k)
    block = K.new_zeros(V, 4 * k, 4 * k)
    block[:, : 2 * k, : 2 * k] = K
    block[:, : 2 * k, 2 * k :] = torch.eye(2 * k, dtype=K.dtype, device=K.device)
    return L, expm(block)[:, : 2 * k, 2 * k :], Rt
