"""Rotation decomposition, signatures and plane similarity of orthogonal matrices (paper 000 sec. 5.1)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np
import scipy.linalg

from urnlib.analysis.checks import (ORTHOGONALITY_TOL, _check_orthogonal, _square, _square_eps, _to_numpy,
                                   default_orthogonality_tol)


def _plane_rotation(Q: np.ndarray, plane: np.ndarray) -> Tuple[float, np.ndarray]:
    """Angle in [0, pi] of Q restricted to ``plane`` and the plane with its basis
    oriented so that ``plane[:, 0] @ Q`` turns towards ``+plane[:, 1]``."""
    M = plane.T @ Q @ plane  # M[j, k] = (p_j @ Q) . p_k
    cos = 0.5 * (M[0, 0] + M[1, 1])
    sin = 0.5 * (M[0, 1] - M[1, 0])
    angle = float(np.arctan2(abs(sin), cos))
    if sin < 0:
        plane = plane * np.array([1.0, -1.0])
    return angle, plane


def rotation_decomposition(
    Q: Any, tol: float = 1e-6, *, orth_tol: Optional[float] = None
) -> List[Tuple[float, np.ndarray]]:
    r"""Decompose a rotation into independent plane rotations (angles and planes).

    Every :math:`Q \in SO(n)` is, in an orthonormal basis, block diagonal with
    2x2 rotation blocks :math:`R(a_j)` (and 1x1 blocks :math:`+1`):

    .. math::

        Q = \sum_j P_j\, G(a_j)\, P_j^T + \Bigl(I - \sum_j P_j P_j^T\Bigr),
        \qquad G(a) = \begin{pmatrix} \cos a & \sin a \\ -\sin a & \cos a \end{pmatrix},

    where the :math:`P_j` are ``(n, 2)`` orthonormal bases of mutually
    orthogonal planes. With row states, :math:`G` says that the step
    ``u @ Q`` maps ``p1 = P_j[:, 0]`` to :math:`\cos a_j\, p_1 + \sin a_j\, p_2`.

    Computed from the real Schur form :math:`Q = Z T Z^T`
    (``scipy.linalg.schur(Q, output='real')``), which for a normal matrix is
    block diagonal: every 2x2 block (a conjugate pair :math:`e^{\pm i a}`) gives
    one plane; 1x1 blocks :math:`-1` are paired up, wherever they sit in ``T``,
    each pair being a rotation by :math:`\pi`; 1x1 blocks :math:`+1` (angle 0)
    are omitted. Angles are measured from the restriction
    :math:`P^T Q P`, so they are accurate also for slightly non-orthogonal
    (e.g. float32) input. When an angle is repeated, its planes are not unique
    (only the sum of their projectors is); any valid choice is returned.

    Serves paper 000, sec. 3 ("Signature of Embeddings"), Tables 3 and 4.

    Args:
        Q: orthogonal ``(n, n)`` matrix with determinant +1.
        tol: angles below ``tol`` (radians) are treated as 0 and omitted. For
            float32 embeddings something like ``1e-4`` avoids rounding noise.
        orth_tol: largest accepted :math:`\|Q^T Q - I\|_F`; default
            :func:`default_orthogonality_tol` (``1e-4`` for float64 input).

    Returns:
        list of ``(angle, plane)``, sorted by decreasing angle: ``angle`` a float
        in ``(0, pi]`` and ``plane`` an ``(n, 2)`` array with orthonormal columns,
        oriented as described above. At most ``n // 2`` entries.

    Raises:
        ValueError: if ``Q`` is not square, not orthogonal within ``orth_tol``
            (the message gives the measured deviation), or is a reflection
            (determinant -1: an unpaired eigenvalue -1).
    """
    Q, eps = _square_eps(Q)
    if orth_tol is None:
        orth_tol = default_orthogonality_tol(Q.shape[0], eps)
    _check_orthogonal(Q, orth_tol)
    n = Q.shape[0]
    T, Z = scipy.linalg.schur(Q, output="real")

    planes: List[np.ndarray] = []
    minus_ones: List[int] = []
    i = 0
    while i < n:
        if i + 1 < n and T[i + 1, i] != 0.0:  # LAPACK zeroes subdiagonals of 1x1 splits
            planes.append(Z[:, i : i + 2])
            i += 2
        else:
            if T[i, i] < 0.0:  # real eigenvalue of an orthogonal matrix: -1 (else +1)
                minus_ones.append(i)
            i += 1
    if len(minus_ones) % 2:
        raise ValueError(
            "Q is not a rotation (det -1): it has an odd number of eigenvalues -1, "
            "i.e. it contains a reflection"
        )
    for a, b in zip(minus_ones[0::2], minus_ones[1::2]):
        planes.append(Z[:, [a, b]])

    result: List[Tuple[float, np.ndarray]] = []
    for plane in planes:
        angle, plane = _plane_rotation(Q, np.ascontiguousarray(plane))
        if angle >= tol:
            result.append((angle, plane))
    result.sort(key=lambda ap: -ap[0])
    return result


def signature(Q: Any, tol: float = 1e-6, *, orth_tol: Optional[float] = None) -> np.ndarray:
    r"""Signature of a rotation: its nonzero rotation angles, largest first.

    .. math::

        \operatorname{sig}(Q) = (a_1 \ge a_2 \ge \dots), \qquad
        \operatorname{spec}(Q) = \{e^{\pm i a_j}\} \cup \{1, \dots\},
        \quad a_j \in (0, \pi].

    Zero angles (eigenvalues :math:`+1`) are omitted, so a k-truncated
    embedding (generator with only ``k`` nonzero rows, rank :math:`\le 2k`) has
    at most ``k`` angles. Note :math:`\operatorname{effect}(Q) = \sum_j 4(1 - \cos a_j)`.

    Serves paper 000, sec. 3 ("Signature of Embeddings") and Table 4 (the dials);
    see :func:`urnlib.plots.dials.signature_table_figure`.

    Args:
        Q: orthogonal ``(n, n)`` matrix with determinant +1.
        tol: angles below ``tol`` are omitted.
        orth_tol: largest accepted :math:`\|Q^T Q - I\|_F`; default
            :func:`default_orthogonality_tol` (``1e-4`` for float64 input).

    Returns:
        np.ndarray: 1-D float64 array of angles in radians, in ``(0, pi]``, descending.

    Raises:
        ValueError: as :func:`rotation_decomposition`.
    """
    return np.array(
        [a for a, _ in rotation_decomposition(Q, tol, orth_tol=orth_tol)], dtype=np.float64
    )


# --------------------------------------------------------------------------- #
# plane similarity
# --------------------------------------------------------------------------- #
def _orthonormal_basis(x: Any, name: str) -> np.ndarray:
    A = _to_numpy(x)
    if A.ndim != 2:
        raise ValueError(f"{name} must be an (n, k) basis matrix, got shape {A.shape}")
    dev = float(np.linalg.norm(A.T @ A - np.eye(A.shape[1])))
    if dev > ORTHOGONALITY_TOL:
        raise ValueError(f"{name} must have orthonormal columns: ||A^T A - I||_F = {dev:.3g}")
    return A


def plane_similarity(P_plane: Any, Q_plane: Any) -> float:
    r"""Similarity of two planes given by orthonormal bases.

    .. math::

        \operatorname{sim}(A, B) = \|A^T B\|_F^2 = \cos^2\theta_1 + \cos^2\theta_2,

    with :math:`\theta_{1,2}` the principal angles between the planes. It does
    not depend on the choice of bases: 2 means the same plane, 0 orthogonal
    planes, 1 e.g. planes sharing one direction and orthogonal otherwise.

    Serves paper 000, sec. 5.1, Table 3.

    Args:
        P_plane: ``(n, 2)`` array with orthonormal columns (e.g. a plane from
            :func:`rotation_decomposition`).
        Q_plane: ``(n, 2)`` array with orthonormal columns.

    Returns:
        float in ``[0, 2]``.

    Raises:
        ValueError: if the shapes do not match or the columns are not orthonormal.
    """
    A = _orthonormal_basis(P_plane, "P_plane")
    B = _orthonormal_basis(Q_plane, "Q_plane")
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"planes live in different dimensions: {A.shape} vs {B.shape}")
    C = A.T @ B
    return float(np.sum(C * C))


def plane_similarity_table(
    Q1: Any, Q2: Any, tol: float = 1e-6
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Similarities between every rotation plane of ``Q1`` and every one of ``Q2``.

    .. math::

        \mathrm{table}_{ij} = \|P_i^{(1)T} P_j^{(2)}\|_F^2 \in [0, 2],

    where :math:`P_i^{(1)}` is the plane of the i-th largest rotation angle of
    ``Q1`` (see :func:`rotation_decomposition`) and likewise for ``Q2``.

    Serves paper 000, sec. 5.1, Table 3 (the 3x3 table for the embeddings of
    ``(`` and ``[``; its headers are the dials of ``angles1`` / ``angles2``).

    Args:
        Q1: orthogonal ``(n, n)`` rotation.
        Q2: orthogonal ``(n, n)`` rotation, same ``n``.
        tol: angles below ``tol`` are omitted (their planes are not listed).

    Returns:
        ``(angles1, angles2, table)``: descending angle arrays of lengths ``k1``,
        ``k2`` and the ``(k1, k2)`` float64 similarity table.
    """
    s1, s2 = _square(Q1, "Q1").shape, _square(Q2, "Q2").shape
    if s1 != s2:
        raise ValueError(f"Q1 and Q2 must have the same shape, got {s1} and {s2}")
    d1 = rotation_decomposition(Q1, tol)
    d2 = rotation_decomposition(Q2, tol)
    table = np.zeros((len(d1), len(d2)))
    for i, (_, p) in enumerate(d1):
        for j, (_, q) in enumerate(d2):
            table[i, j] = plane_similarity(p, q)
    angles1 = np.array([a for a, _ in d1], dtype=np.float64)
    angles2 = np.array([a for a, _ in d2], dtype=np.float64)
    return angles1, angles2, table
