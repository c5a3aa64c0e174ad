"""Average effect, distance and phrase embeddings of orthogonal word matrices (paper 000 sec. 3)."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, Hashable, Iterable, List, Optional

import numpy as np

from urnlib.analysis.checks import UnknownSymbolError, _square, _to_numpy


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
    get, sample, phrase = _lookup(embeddings, phrase)
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


def _lookup(embeddings: Any, phrase: Optional[Iterable[Hashable]]):
    """``(get, sample, phrase)`` for :func:`phrase_embedding`: ``get(symbol)`` gives a symbol's matrix or
    raises :class:`UnknownSymbolError` naming the known symbols, ``sample`` is one matrix (``None``: none),
    and ``phrase`` every symbol of a sequence where it was ``None``."""
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

        return get, next(iter(lookup.values()), None), phrase
    if hasattr(embeddings, "detach"):
        embeddings = _to_numpy(embeddings)
    seq = list(embeddings)

    def get_index(sym: Hashable) -> Any:
        try:
            i = operator.index(sym)
        except TypeError:
            i = None
        if i is None or isinstance(sym, bool) or not 0 <= i < len(seq):
            raise UnknownSymbolError(
                f"unknown symbol {sym!r}; known symbols are the integers 0 .. {len(seq) - 1}"
            )
        return seq[i]

    return get_index, (seq[0] if seq else None), (range(len(seq)) if phrase is None else phrase)


# --------------------------------------------------------------------------- #
# rotation decomposition and signatures
# --------------------------------------------------------------------------- #
