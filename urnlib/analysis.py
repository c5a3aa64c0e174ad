"""Analyses of orthogonal (unitary) matrix embeddings.

These functions implement the analysis tools of Bernardy & Lappin (2022),
"A Neural Model for Compositional Word Embeddings" (paper 000), sec. 3 and 5.1:
average effect, distance, phrase embeddings, signatures (rotation angles) and
the similarity of rotation planes.

Conventions
-----------
``urnlib`` networks step with *row* state vectors::

    h_t = h_{t-1} @ Q(x_t),        h_0 = e_0,

so the embedding of a phrase ``x_0 ... x_i`` is the product
``Q(x_0) @ Q(x_1) @ ... @ Q(x_i)`` (``h_0 @ phrase`` is the state after the
phrase). The paper writes column vectors, ``Q(x_i) ... Q(x_0)``, which is the
transpose; effects, distances and signatures are invariant under transposition.

All functions accept numpy arrays or torch tensors (converted with
``np.asarray(t.detach().cpu())``), compute in float64 and return numpy values.
"""

from __future__ import annotations

from collections.abc import Mapping
import operator
from typing import Any, Hashable, Iterable, List, Optional, Tuple

import numpy as np
import scipy.linalg

__all__ = [
    "UnknownSymbolError",
    "default_orthogonality_tol",
    "effect",
    "distance",
    "phrase_embedding",
    "rotation_decomposition",
    "signature",
    "plane_similarity",
    "plane_similarity_table",
]

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
# --------------------------------------------------------------------------- #
def effect(Q: Any) -> float:
    r"""Average effect of a matrix embedding: its squared distance to the identity.

    .. math::

        \operatorname{effect}(Q) = \|Q - I\|_F^2 = \sum_{ij} (Q - I)_{ij}^2 .

    For orthogonal ``Q`` this equals :math:`2(n - \operatorname{tr} Q)` and is
    ``n`` times the mean squared displacement :math:`\mathbb{E}_s\|sQ - s\|^2`
    of a random unit state ``s``; a rotation by angle :math:`a` in one plane
    contributes :math:`4(1 - \cos a)`. It is computed as the Frobenius norm, so
    it is also meaningful for unconstrained (non-orthogonal) embeddings such as
    the arbitrary-matrix baseline.

    Serves paper 000, sec. 3 ("Average Effect"), Table 1 and Table 4.

    Args:
        Q: square matrix of shape ``(n, n)`` (numpy array or torch tensor).

    Returns:
        float: :math:`\|Q - I\|_F^2`.
    """
    Q = _square(Q)
    D = Q - np.eye(Q.shape[0])
    return float(np.sum(D * D))


def distance(P: Any, Q: Any) -> float:
    r"""Squared Frobenius distance between two matrix embeddings.

    .. math::

        d(P, Q) = \|P - Q\|_F^2 ,

    which for orthogonal ``P, Q`` equals :math:`2(n - \langle P, Q\rangle_F)`, the
    matrix analogue of :math:`\|u - v\|^2 = 2(1 - \langle u, v\rangle)` for unit
    vectors.

    Serves paper 000, sec. 3 ("Distance and Similarity"), Table 2.

    Args:
        P: matrix of shape ``(n, n)``.
        Q: matrix of the same shape.

    Returns:
        float: :math:`\|P - Q\|_F^2`.
    """
    P = _square(P, "P")
    Q = _square(Q, "Q")
    if P.shape != Q.shape:
        raise ValueError(f"P and Q must have the same shape, got {P.shape} and {Q.shape}")
    D = P - Q
    return float(np.sum(D * D))


# --------------------------------------------------------------------------- #
# phrase embeddings
# --------------------------------------------------------------------------- #
def _format_known(symbols: List[Hashable], limit: int = 40) -> str:
    shown = ", ".join(repr(s) for s in symbols[:limit])
    if len(symbols) > limit:
        shown += f", ... ({len(symbols)} in total)"
    return "[" + shown + "]"


def phrase_embedding(embeddings: Any, phrase: Optional[Iterable[Hashable]] = None) -> np.ndarray:
    r"""Embedding of a phrase: the product of its symbols' matrices in network order.

    With row states :math:`h_t = h_{t-1} Q(x_t)`,

    .. math::

        Q(x_0 \dots x_i) = Q(x_0)\, Q(x_1) \cdots Q(x_i),
        \qquad h_0\, Q(x_0 \dots x_i) = h_{i+1},

    i.e. the leftmost factor is the first symbol read. (The paper, with column
    states, writes the transpose :math:`Q(x_i) \cdots Q(x_0)`.) The empty phrase
    is embedded as the identity.

    Serves paper 000, sec. 3 ("Composition of Embeddings"), Tables 1, 2 and the
    matching pairs of Table 4.

    Args:
        embeddings: either a mapping ``symbol -> (n, n) matrix``, or a sequence
            of ``(n, n)`` matrices / an array or tensor of shape ``(V, n, n)``
            indexed by integer symbol ids ``0 .. V-1``.
        phrase: iterable of symbols, read left to right. A ``str`` is a sequence
            of one-character symbols (pass a list for multi-character words).
            ``None`` means: multiply all matrices of the sequence ``embeddings``
            in order (not allowed for a mapping).

    Returns:
        np.ndarray: the ``(n, n)`` float64 phrase matrix.

    Raises:
        UnknownSymbolError: (a ``ValueError``) naming a symbol of ``phrase`` that
            has no embedding, and listing the known symbols.
        ValueError: if the matrices are not square or differ in size, or the size
            of an empty phrase's identity cannot be determined.
    """
    if isinstance(embeddings, Mapping):
        lookup = dict(embeddings)
        if phrase is None:
            raise ValueError("phrase=None is only allowed when embeddings is a sequence of matrices")
        known = list(lookup.keys())

        def get(sym: Hashable) -> Any:
            try:
                return lookup[sym]
            except (KeyError, TypeError):
                hint = ""
                if isinstance(phrase, str) and all(w in lookup for w in phrase.split()):
                    hint = " (a str phrase is split into characters; pass a list of words instead)"
                raise UnknownSymbolError(
                    f"unknown symbol {sym!r}{hint}; known symbols: {_format_known(known)}"
                ) from None

        sample = next(iter(lookup.values()), None)
    else:
        if hasattr(embeddings, "detach"):
            embeddings = _to_numpy(embeddings)
        seq = list(embeddings)
        if phrase is None:
            phrase = range(len(seq))

        def get(sym: Hashable) -> Any:
            try:
                i = operator.index(sym)
            except TypeError:
                i = None
            if i is None or isinstance(sym, bool) or not 0 <= i < len(seq):
                raise UnknownSymbolError(
                    f"unknown symbol {sym!r}; known symbols are the integers 0 .. {len(seq) - 1}"
                )
            return seq[i]

        sample = seq[0] if seq else None

    result: Optional[np.ndarray] = None
    for sym in phrase:
        M = _square(get(sym), f"embedding of {sym!r}")
        if result is None:
            result = M.copy()
        elif M.shape != result.shape:
            raise ValueError(
                f"embedding of {sym!r} has shape {M.shape}, expected {result.shape}"
            )
        else:
            result = result @ M
    if result is None:  # empty phrase
        if sample is None:
            raise ValueError("cannot build the identity for an empty phrase: no embeddings given")
        return np.eye(_square(sample, "embedding").shape[0])
    return result


# --------------------------------------------------------------------------- #
# rotation decomposition and signatures
# --------------------------------------------------------------------------- #
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
