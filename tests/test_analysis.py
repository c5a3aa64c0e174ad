"""Tests for urnlib.analysis (paper 000, sec. 3 and 5.1) and urnlib.plots.dials."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import scipy.linalg
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from urnlib.analysis import (
    default_orthogonality_tol,
    distance,
    effect,
    phrase_embedding,
    plane_similarity,
    plane_similarity_table,
    rotation_decomposition,
    signature,
)
from urnlib.plots.style import COLUMN
from urnlib.plots.dials import draw_dial, signature_table_figure


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def random_skew(rng, n, scale=1.0):
    A = rng.standard_normal((n, n)) * scale
    return A - A.T


def random_orthogonal(rng, n, scale=1.0):
    """Random rotation expm(S), S a random float64 skew-symmetric matrix."""
    return scipy.linalg.expm(random_skew(rng, n, scale))


def R(a):
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def reconstruct(decomposition, n):
    """Q = I + sum_j P_j (G(a_j) - I) P_j^T with the documented row-state orientation."""
    Q = np.eye(n)
    for a, P in decomposition:
        G = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
        Q += P @ (G - np.eye(2)) @ P.T
    return Q


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# The blocks of the brief: real eigenvalues (+1, -1, -1) sit between the rotation blocks.
MIXED_BLOCKS = scipy.linalg.block_diag(R(0.3), 1.0, R(2.0), -1.0, -1.0, R(1.1))
MIXED_ANGLES = np.array([np.pi, 2.0, 1.1, 0.3])


# --------------------------------------------------------------------------- #
# effect and distance
# --------------------------------------------------------------------------- #
def test_effect_of_identity_is_zero():
    assert effect(np.eye(7)) == 0.0


@pytest.mark.parametrize("a", [0.1, 1.0, 2.5, np.pi])
def test_effect_of_single_plane_rotation(a, rng):
    n = 6
    Q = np.eye(n)
    Q[:2, :2] = R(a)
    assert effect(Q) == pytest.approx(4 * (1 - np.cos(a)), abs=1e-12)
    # invariant under change of basis
    X = random_orthogonal(rng, n)
    assert effect(X @ Q @ X.T) == pytest.approx(4 * (1 - np.cos(a)), abs=1e-10)


def test_effect_equals_two_n_minus_trace(rng):
    for n in (3, 8, 13):
        Q = random_orthogonal(rng, n)
        assert effect(Q) == pytest.approx(2 * (n - np.trace(Q)), abs=1e-10)


def test_effect_works_for_non_orthogonal_matrix():
    M = np.array([[2.0, 1.0], [0.0, 1.0]])
    assert effect(M) == pytest.approx(1.0 + 1.0)


def test_effect_accepts_torch_tensors(rng):
    Q = random_orthogonal(rng, 5)
    t = torch.tensor(Q, dtype=torch.float32, requires_grad=True)
    assert isinstance(effect(t), float)
    assert effect(t) == pytest.approx(effect(Q), abs=1e-5)


def test_effect_is_sum_over_signature(rng):
    Q = random_orthogonal(rng, 9)
    angles = signature(Q)
    assert effect(Q) == pytest.approx(np.sum(4 * (1 - np.cos(angles))), abs=1e-9)


def test_distance_matches_frobenius_inner_product(rng):
    n = 6
    P, Q = random_orthogonal(rng, n), random_orthogonal(rng, n)
    assert distance(P, Q) == pytest.approx(2 * (n - np.sum(P * Q)), abs=1e-10)
    assert distance(P, Q) > 0.1
    assert distance(Q, Q) == 0.0
    assert distance(P, np.eye(n)) == pytest.approx(effect(P), abs=1e-12)


def test_distance_shape_mismatch():
    with pytest.raises(ValueError):
        distance(np.eye(3), np.eye(4))


# --------------------------------------------------------------------------- #
# signatures
# --------------------------------------------------------------------------- #
def test_signature_with_real_eigenvalues_between_blocks():
    # Schur keeps this order, so +1 and the -1 pair sit between the 2x2 blocks
    sig = signature(MIXED_BLOCKS)
    assert sig.shape == (4,)
    np.testing.assert_allclose(sig, MIXED_ANGLES, atol=1e-8)


def test_signature_pairs_minus_ones_separated_by_plus_one():
    # The real Schur form (and eigvals) of this matrix lists the real eigenvalues as
    # -1, +1, -1: taking every second eigenvalue angle would report pi twice.
    B = scipy.linalg.block_diag(-1.0, R(0.3), 1.0, -1.0, R(2.0))
    np.testing.assert_allclose(signature(B), [np.pi, 2.0, 0.3], atol=1e-8)
    dec = rotation_decomposition(B)
    P_pi = dec[0][1]
    assert plane_similarity(P_pi, np.eye(7)[:, [0, 4]]) == pytest.approx(2.0, abs=1e-10)
    np.testing.assert_allclose(reconstruct(dec, 7), B, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_signature_recovers_angles_after_change_of_basis(seed):
    rng = np.random.default_rng(seed)
    X = random_orthogonal(rng, MIXED_BLOCKS.shape[0])
    Q = X @ MIXED_BLOCKS @ X.T
    sig = signature(Q)
    assert sig.shape == (4,)  # each angle exactly once
    np.testing.assert_allclose(sig, MIXED_ANGLES, atol=1e-8)
    assert np.all(np.diff(sig) <= 0)


def test_signature_repeated_angles_and_several_minus_one_pairs(rng):
    B = scipy.linalg.block_diag(-np.eye(4), R(0.7), 1.0, R(0.7), 1.0)
    X = random_orthogonal(rng, B.shape[0])
    Q = X @ B @ X.T
    np.testing.assert_allclose(signature(Q), [np.pi, np.pi, 0.7, 0.7], atol=1e-8)
    np.testing.assert_allclose(reconstruct(rotation_decomposition(Q), Q.shape[0]), Q, atol=1e-8)


def test_signature_of_identity_is_empty():
    assert signature(np.eye(5)).shape == (0,)


def test_signature_omits_angles_below_tol():
    Q = scipy.linalg.block_diag(R(1e-8), R(0.5), 1.0)
    np.testing.assert_allclose(signature(Q), [0.5], atol=1e-12)
    np.testing.assert_allclose(signature(Q, tol=1e-10), [0.5, 1e-8], atol=1e-12)


def test_truncated_generator_has_at_most_k_angles(rng):
    n, k = 10, 3
    for _ in range(5):
        A = np.zeros((n, n))
        A[:k] = rng.standard_normal((k, n))
        sig = signature(scipy.linalg.expm(A - A.T))
        assert len(sig) == k  # generically exactly k
    # k = 1 with a generator inside the first k rows+columns: still at most k
    A = np.zeros((n, n))
    A[0, 1] = 0.4
    np.testing.assert_allclose(signature(scipy.linalg.expm(A - A.T)), [0.4], atol=1e-12)


def test_signature_of_float32_torch_embedding():
    torch.manual_seed(0)
    n, k = 100, 3
    A = torch.zeros(n, n)
    A[:k] = 0.3 * torch.randn(k, n)
    Q32 = torch.linalg.matrix_exp(A - A.T)
    Q64 = scipy.linalg.expm((A - A.T).double().numpy())
    sig = signature(Q32)  # float32 rounding must not be mistaken for non-orthogonality
    assert len(sig) == k
    np.testing.assert_allclose(sig, signature(Q64), atol=1e-3)


# --------------------------------------------------------------------------- #
# rotation planes
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed", range(3))
def test_planes_are_invariant_orthonormal_and_rotate_by_their_angle(seed):
    rng = np.random.default_rng(100 + seed)
    n = MIXED_BLOCKS.shape[0]
    X = random_orthogonal(rng, n)
    Q = X @ MIXED_BLOCKS @ X.T
    dec = rotation_decomposition(Q)
    planes = np.hstack([P for _, P in dec])
    # orthonormal within and across planes
    np.testing.assert_allclose(planes.T @ planes, np.eye(2 * len(dec)), atol=1e-10)
    for a, P in dec:
        assert P.shape == (n, 2)
        assert 0 < a <= np.pi
        # row-state step u -> u @ Q maps the plane into itself
        for u in P.T:
            v = u @ Q
            np.testing.assert_allclose(P @ (P.T @ v), v, atol=1e-10)
        # a random unit vector of the plane is turned by exactly the angle
        c = rng.standard_normal(2)
        u = P @ (c / np.linalg.norm(c))
        v = u @ Q
        assert np.arccos(np.clip(u @ v, -1, 1)) == pytest.approx(a, abs=1e-7)
        # documented orientation: plane[:, 0] @ Q = cos a plane[:, 0] + sin a plane[:, 1]
        expected = np.cos(a) * P[:, 0] + np.sin(a) * P[:, 1]
        np.testing.assert_allclose(P[:, 0] @ Q, expected, atol=1e-10)
    # the planes and angles rebuild Q (the +1 direction is the complement)
    np.testing.assert_allclose(reconstruct(dec, n), Q, atol=1e-10)


def test_planes_of_block_diagonal_rotation_are_the_coordinate_planes():
    dec = rotation_decomposition(MIXED_BLOCKS)
    coords = {2.0: [3, 4], 1.1: [7, 8], 0.3: [0, 1], np.pi: [5, 6]}
    for a, P in dec:
        key = min(coords, key=lambda k: abs(k - a))
        E = np.eye(9)[:, coords[key]]
        assert plane_similarity(P, E) == pytest.approx(2.0, abs=1e-10)


# --------------------------------------------------------------------------- #
# invalid inputs
# --------------------------------------------------------------------------- #
def test_non_orthogonal_input_raises(rng):
    M = random_orthogonal(rng, 5) + 0.01 * rng.standard_normal((5, 5))
    with pytest.raises(ValueError, match="not orthogonal"):
        signature(M)
    with pytest.raises(ValueError, match="square"):
        signature(np.ones((3, 4)))


def test_reflection_raises(rng):
    D = np.diag([-1.0, 1.0, 1.0, 1.0])
    X = random_orthogonal(rng, 4)
    with pytest.raises(ValueError, match="det -1"):
        signature(X @ D @ X.T)
    # three -1 eigenvalues next to a rotation block: still a reflection
    B = scipy.linalg.block_diag(-np.eye(3), R(0.4))
    with pytest.raises(ValueError, match="det -1"):
        rotation_decomposition(B)


def test_default_orthogonality_tol():
    assert default_orthogonality_tol(10) == 1e-4
    assert default_orthogonality_tol(100, float(np.finfo(np.float32).eps)) > 1e-4


# --------------------------------------------------------------------------- #
# plane similarity
# --------------------------------------------------------------------------- #
def _orthonormal_columns(rng, n, k):
    Qr, _ = np.linalg.qr(rng.standard_normal((n, k)))
    return Qr


def test_plane_similarity_same_plane_rotated_basis(rng):
    A = _orthonormal_columns(rng, 8, 2)
    B = A @ R(0.83)  # another orthonormal basis of the same plane
    assert not np.allclose(A, B)
    assert plane_similarity(A, B) == pytest.approx(2.0, abs=1e-12)


def test_plane_similarity_orthogonal_and_half_shared(rng):
    U = _orthonormal_columns(rng, 8, 4)
    assert plane_similarity(U[:, [0, 1]], U[:, [2, 3]]) == pytest.approx(0.0, abs=1e-12)
    assert plane_similarity(U[:, [0, 1]], U[:, [0, 2]]) == pytest.approx(1.0, abs=1e-12)
    # intermediate: second direction tilted by 60 degrees -> 1 + cos^2(60) = 1.25
    tilted = np.column_stack([U[:, 0], np.cos(np.pi / 3) * U[:, 1] + np.sin(np.pi / 3) * U[:, 2]])
    assert plane_similarity(U[:, [0, 1]], tilted) == pytest.approx(1.25, abs=1e-12)


def test_plane_similarity_rejects_non_orthonormal_basis():
    with pytest.raises(ValueError):
        plane_similarity(np.ones((4, 2)), np.eye(4)[:, :2])


def test_plane_similarity_table(rng):
    n = 10
    A1 = np.zeros((n, n))
    A1[:3] = rng.standard_normal((3, n))
    A2 = np.zeros((n, n))
    A2[:2] = rng.standard_normal((2, n))
    Q1, Q2 = scipy.linalg.expm(A1 - A1.T), scipy.linalg.expm(A2 - A2.T)
    a1, a2, table = plane_similarity_table(Q1, Q2)
    assert table.shape == (3, 2) == (len(a1), len(a2))
    np.testing.assert_allclose(a1, signature(Q1))
    np.testing.assert_allclose(a2, signature(Q2))
    assert np.all(table >= -1e-12) and np.all(table <= 2 + 1e-12)
    # the planes of a matrix against themselves: 2 on the diagonal, 0 elsewhere
    _, _, self_table = plane_similarity_table(Q1, Q1)
    np.testing.assert_allclose(self_table, 2 * np.eye(3), atol=1e-8)


def test_plane_similarity_table_shared_plane():
    # Q1, Q2 share the plane e0-e1 (different angles), other planes orthogonal
    Q1 = scipy.linalg.block_diag(R(1.0), R(0.2), np.eye(2))
    Q2 = scipy.linalg.block_diag(R(0.5), np.eye(2), R(2.5))
    a1, a2, table = plane_similarity_table(Q1, Q2)
    np.testing.assert_allclose(a1, [1.0, 0.2])
    np.testing.assert_allclose(a2, [2.5, 0.5])
    np.testing.assert_allclose(table, [[0.0, 2.0], [0.0, 0.0]], atol=1e-12)


# --------------------------------------------------------------------------- #
# phrase embeddings
# --------------------------------------------------------------------------- #
def test_phrase_embedding_matches_network_order(rng):
    n = 6
    Q = {s: random_orthogonal(rng, n) for s in "abc"}
    h = np.eye(n)[0]
    for x in "abc":
        h = h @ Q[x]
    P = phrase_embedding(Q, "abc")
    np.testing.assert_allclose(np.eye(n)[0] @ P, h, atol=1e-12)
    # the order matters: the reversed product (paper's column order) gives another state
    reversed_product = Q["c"] @ Q["b"] @ Q["a"]
    assert np.linalg.norm(np.eye(n)[0] @ reversed_product - h) > 1e-3
    # list phrases and the whole-state identity
    np.testing.assert_allclose(phrase_embedding(Q, ["a", "b", "c"]), P, atol=1e-15)
    np.testing.assert_allclose(
        phrase_embedding(Q, "ab") @ phrase_embedding(Q, "c"), P, atol=1e-12
    )


def test_phrase_embedding_sequence_of_matrices(rng):
    mats = [random_orthogonal(rng, 4) for _ in range(3)]
    np.testing.assert_allclose(phrase_embedding(mats, None), mats[0] @ mats[1] @ mats[2], atol=1e-14)
    np.testing.assert_allclose(phrase_embedding(mats, [2, 0]), mats[2] @ mats[0], atol=1e-14)
    stacked = torch.tensor(np.stack(mats))
    np.testing.assert_allclose(phrase_embedding(stacked, [1, 2]), mats[1] @ mats[2], atol=1e-14)
    with pytest.raises(ValueError, match="5"):
        phrase_embedding(mats, [0, 5])


def test_phrase_embedding_empty_is_identity(rng):
    Q = {s: random_orthogonal(rng, 5) for s in "ab"}
    np.testing.assert_array_equal(phrase_embedding(Q, ""), np.eye(5))
    np.testing.assert_array_equal(phrase_embedding(Q, []), np.eye(5))


def test_phrase_embedding_unknown_symbol(rng):
    Q = {s: random_orthogonal(rng, 3) for s in "ab"}
    with pytest.raises(ValueError, match="'z'") as info:
        phrase_embedding(Q, "abz")
    assert "'a'" in str(info.value) and "'b'" in str(info.value)  # lists the known symbols
    with pytest.raises(KeyError):  # also catchable as a KeyError
        phrase_embedding(Q, "q")


def test_matching_pair_composition_is_near_identity(rng):
    # a closing bracket that (almost) inverts the opening one: tiny effect, tiny angles
    n = 8
    Qo = random_orthogonal(rng, n)
    Qc = Qo.T @ scipy.linalg.expm(random_skew(rng, n, 1e-3))
    pair = phrase_embedding({"(": Qo, ")": Qc}, "()")
    assert effect(pair) < 1e-3 < effect(Qo)
    assert np.all(signature(pair) < 0.02)


# --------------------------------------------------------------------------- #
# dials
# --------------------------------------------------------------------------- #
def _needle_end(line):
    x, y = line.get_data()
    return np.array([x[1] - x[0], y[1] - y[0]])


def test_draw_dial_needle_direction():
    fig = Figure()
    ax = fig.add_subplot()
    up = _needle_end(draw_dial(ax, 0.0, size=2.0))
    down = _needle_end(draw_dial(ax, np.pi, size=2.0, center=(3.0, 0.0)))
    right = _needle_end(draw_dial(ax, np.pi / 2, size=2.0))
    np.testing.assert_allclose(up, [0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(down, [0.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(right, [1.0, 0.0], atol=1e-12)
    x, y = ax.lines[1].get_data()
    assert (x[0], y[0]) == (3.0, 0.0)  # needle starts at the centre
    assert sum(isinstance(p, Circle) for p in ax.patches) == 3


def test_signature_table_figure_structure(rng):
    rows = [
        ("(", 14.79, [2.9, 1.7, 0.6]),
        ("[", 14.25, np.array([2.8, 1.9])),
        ("()", 0.06, [0.05, 0.02, 0.01]),
        ("$x$", None, []),  # no dials; '$' must not trigger mathtext
    ]
    fig = signature_table_figure(rows, title="Table 4")
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 3 + 2 * len(rows)  # headers + (label, effect) per row
    assert texts[3:] == ["(", "14.79", "[", "14.25", "()", "0.06", "$x$", ""]
    assert sum(isinstance(p, Circle) for p in ax.patches) == 3 + 2 + 3 + 0
    # renders with Agg
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    assert fig.get_size_inches()[0] == pytest.approx(COLUMN)  # the book's column: legible unshrunk


def test_signature_table_figure_height_grows_with_rows():
    small = signature_table_figure([("a", 1.0, [1.0])])
    big = signature_table_figure([(str(i), 1.0, [1.0]) for i in range(15)])
    assert big.get_size_inches()[1] > small.get_size_inches()[1]
