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

from urnlib.analysis.checks import ORTHOGONALITY_TOL, UnknownSymbolError, default_orthogonality_tol
from urnlib.analysis.effects import distance, effect, phrase_embedding
from urnlib.analysis.rotations import (plane_similarity, plane_similarity_table, rotation_decomposition,
                                       signature)

__all__ = [
    "ORTHOGONALITY_TOL",
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
