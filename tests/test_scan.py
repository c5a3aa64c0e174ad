"""The fast paths of the matrix-embedding models against their straightforward definitions.

* ``matrix_scan``, both ways (the compiled kernel, and the grouped layout in each of its layouts) vs
  the plain loop ``h_t = (h_{t-1} * mask) @ M[x_t]`` with autograd: values and gradients in float64,
  ``gradcheck``, determinism;
* ``expm`` (scaling and squaring) vs ``torch.linalg.matrix_exp``, and ``expm_truncated`` (rank-2k
  form) vs the dense exponential, k = 1 and k = n/2: values and gradients;
* ``prefix_states`` (chunked parallel prefix product, words of several symbols) vs stepping the
  network, with and without the kernel;
* the models' parameters and stored state are those of the plain formulation.
"""

from __future__ import annotations

import os
import shutil

import pytest
import torch

import urnlib.models.scan as scan
import urnlib.models.scan_layout as scan_layout
import urnlib.models.unitary as unitary
from urnlib.models import URN, ArbitraryRNN
from urnlib.models.scan import matrix_scan, matrix_scan_reference, prefix_states
from urnlib.models.scan_kernel import kernel
from urnlib.models import expm as expm_module
from urnlib.models.unitary import expm, expm_truncated
from urnlib.params import ParameterError

HAVE_KERNEL = kernel() is not None
needs_kernel = pytest.mark.skipif(not HAVE_KERNEL, reason="the compiled scan kernel is unavailable")
METHODS = [pytest.param("kernel", marks=needs_kernel), "grouped", "dense"]


def _values_and_grads(fn, M, h0, tokens, mask):
    M = M.detach().clone().requires_grad_()
    H = fn(M, h0, tokens, mask)
    weights = torch.linspace(-1, 1, H.numel(), dtype=H.dtype).view_as(H)
    (H * weights).sum().backward()
    return H.detach(), M.grad


CASES = [  # V, n, B, T
    (5, 6, 7, 9),  # most symbols at most steps
    (40, 4, 6, 5),  # more symbols than sequences: only some present per step
    (2, 4, 30, 3),  # large groups
    (3, 4, 1, 1),  # one sequence, one step
    (7, 19, 23, 4),  # n not a whole number of vector registers, tiles of 6 rows and fewer
    (3, 37, 5, 3),  # n over 32 (float64: several column blocks)
]
LAYOUTS = ["kernel", "grouped: classes", "grouped: one class per count", "grouped: in place", "dense"]


def _scan_with(layout: str, monkeypatch):
    if layout == "dense":  # the GPU path (every step against all V matrices), run here on the CPU
        return lambda *a: matrix_scan(*a, method="dense")
    if layout == "kernel":
        if not HAVE_KERNEL:
            pytest.skip("the compiled scan kernel is unavailable")
        return lambda *a: matrix_scan(*a, method="kernel")
    # "one class per count": no class merged into a larger one (several products per step);
    # "in place": one class per step, every matrix in place, absent symbols as empty blocks
    monkeypatch.setattr(scan_layout, "_CALL_ROWS", -1 if layout.endswith("per count") else 64)
    monkeypatch.setattr(scan_layout, "IN_PLACE_ONLY", layout.endswith("in place"))
    return lambda *a: matrix_scan(*a, method="grouped")


@pytest.mark.parametrize("V,n,B,T", CASES)
@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_matrix_scan_matches_the_plain_loop(V, n, B, T, with_mask, layout, monkeypatch):
    fast = _scan_with(layout, monkeypatch)
    g = torch.Generator().manual_seed(V * 100 + B)
    M = torch.randn(V, n, n, dtype=torch.float64, generator=g)
    h0 = torch.randn(n, dtype=torch.float64, generator=g)
    tokens = torch.randint(V, (B, T), generator=g)
    mask = torch.rand(B, n, dtype=torch.float64, generator=g) if with_mask else None
    H, dM = _values_and_grads(fast, M, h0, tokens, mask)
    H_ref, dM_ref = _values_and_grads(matrix_scan_reference, M, h0, tokens, mask)
    assert H.shape == (B, T, n)
    torch.testing.assert_close(H, H_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(dM, dM_ref, rtol=1e-11, atol=1e-10)
    absent = torch.ones(V, dtype=torch.bool)
    absent[tokens.unique()] = False
    assert torch.all(dM[absent] == 0)  # symbols never read get no gradient
    assert dM.abs().max() > 1e-3


def test_grouped_layouts_are_what_the_tests_say(monkeypatch):
    tokens = torch.tensor([[0, 1], [0, 1], [0, 1], [0, 2], [1, 2]])  # step 1: counts 3, 2 (classes 4, 2)
    monkeypatch.setattr(scan_layout, "_CALL_ROWS", -1)
    assert len(scan_layout.Layout(tokens, 3).steps[1][2]) == 2
    monkeypatch.setattr(scan_layout, "_CALL_ROWS", 64)
    assert len(scan_layout.Layout(tokens, 3).steps[1][2]) == 1  # merged: 2 padding rows < 64
    monkeypatch.setattr(scan_layout, "IN_PLACE_ONLY", True)
    lay = scan_layout.Layout(tokens, 3)
    assert lay.blk_sym is None and all(k < 0 for _, _, cls in lay.steps for *_, k in cls)


@pytest.mark.parametrize("method", METHODS)
def test_matrix_scan_gradcheck(method):
    g = torch.Generator().manual_seed(3)
    M = torch.randn(4, 3, 3, dtype=torch.float64, generator=g, requires_grad=True)
    h0 = torch.randn(3, dtype=torch.float64, generator=g)
    tokens = torch.randint(4, (5, 6), generator=g)
    mask = torch.rand(5, 3, dtype=torch.float64, generator=g)
    assert torch.autograd.gradcheck(lambda M: matrix_scan(M, h0, tokens, mask, method=method), (M,))


@pytest.mark.parametrize("method", METHODS)
def test_matrix_scan_per_sequence_initial_states_and_empty_input(method):
    g = torch.Generator().manual_seed(4)
    M = torch.randn(3, 4, 4, dtype=torch.float64, generator=g)
    h0 = torch.randn(5, 4, dtype=torch.float64, generator=g)
    tokens = torch.randint(3, (5, 6), generator=g)
    expected = matrix_scan_reference(M, h0, tokens)
    torch.testing.assert_close(matrix_scan(M, h0, tokens, method=method), expected, rtol=1e-12, atol=1e-12)
    for empty in (tokens[:, :0], tokens[:0]):
        M_ = M.clone().requires_grad_()
        H = matrix_scan(M_, h0[0], empty, method=method)
        H.sum().backward()
        assert H.shape == (*empty.shape, 4) and torch.all(M_.grad == 0)


@pytest.mark.parametrize("method", METHODS)
def test_matrix_scan_is_deterministic_and_checks_its_input(method):
    torch.manual_seed(5)
    M = torch.randn(30, 50, 50, requires_grad=True)
    tokens = torch.randint(30, (300, 12))
    mask = torch.rand(300, 50)
    runs = []
    for _ in range(2):
        H = matrix_scan(M, torch.eye(50)[0], tokens, mask, method=method)
        (grad,) = torch.autograd.grad(H.square().sum(), M)
        runs.append((H, grad))
    assert torch.equal(runs[0][0], runs[1][0]) and torch.equal(runs[0][1], runs[1][1])
    with pytest.raises((RuntimeError, IndexError)):
        matrix_scan(M, torch.eye(50)[0], tokens + 30, method=method)
    with pytest.raises(ValueError, match="method"):
        matrix_scan(M, torch.eye(50)[0], tokens, method="fast")


def test_the_kernel_builds_here():
    """Where a C++ compiler and ninja are installed the kernel must build (``URNLIB_SCAN_KERNEL=0``
    turns it off)."""
    if os.environ.get("URNLIB_SCAN_KERNEL", "1") == "0":
        pytest.skip("URNLIB_SCAN_KERNEL=0")
    if not (shutil.which("ninja") and shutil.which("c++")):
        pytest.skip("no C++ compiler or no ninja")
    assert HAVE_KERNEL


@pytest.mark.parametrize("scale", [0.01, 0.5, 3.0, 40.0])
def test_expm_equals_torch_matrix_exp(scale):
    g = torch.Generator().manual_seed(7)
    A = torch.randn(4, 12, 12, dtype=torch.float64, generator=g) * scale
    for X in (A - A.transpose(1, 2), A / 12):  # skew-symmetric (the URN's generators), and any matrix
        X = X.detach().requires_grad_()
        w = torch.randn(X.shape, dtype=torch.float64, generator=g)
        E, R = expm(X), torch.linalg.matrix_exp(X)
        (gE,) = torch.autograd.grad((E * w).sum(), X)
        (gR,) = torch.autograd.grad((R * w).sum(), X)
        torch.testing.assert_close(E, R, rtol=1e-10, atol=1e-12)  # large norms: 2^s squarings
        torch.testing.assert_close(gE, gR, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n,k", [(8, 1), (8, 4), (10, 1), (10, 5), (50, 3)])
def test_expm_truncated_equals_dense_exponential(n, k):
    torch.manual_seed(n + k)
    model = URN(6, n, k, init_scale=2.0).double()  # large entries: far from the identity
    P = model.embedding.detach().clone().requires_grad_()
    Q_fast = expm_truncated(model.truncated_rows(P))
    w = torch.randn_like(Q_fast)
    (g_fast,) = torch.autograd.grad((Q_fast * w).sum(), P)
    Q_dense = torch.linalg.matrix_exp(model.generators(P))
    (g_dense,) = torch.autograd.grad((Q_dense * w).sum(), P)
    torch.testing.assert_close(Q_fast, Q_dense, rtol=0, atol=1e-12)
    torch.testing.assert_close(g_fast, g_dense, rtol=0, atol=1e-11)
    eye = torch.eye(n, dtype=torch.float64)
    torch.testing.assert_close(Q_fast @ Q_fast.transpose(1, 2), eye.expand(6, n, n), rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, None])  # 4k <= n uses the low-rank exponential, k=None the dense
def test_urn_states_match_definition(k):
    torch.manual_seed(11)
    n, V = 8, 5
    model = URN(V, n, k, dropout=0.0, init_scale=0.8).double()
    tokens = torch.randint(V, (6, 7))
    tokens[tokens == 3] = 2  # a symbol the batch never reads: the model's matrices are those it reads
    Q = torch.linalg.matrix_exp(model.generators())
    expected = matrix_scan_reference(Q, model.h0, tokens)
    torch.testing.assert_close(model.states(tokens), expected, rtol=0, atol=1e-12)


def test_urn_uses_low_rank_exponential_only_when_it_pays(monkeypatch):
    calls = []
    real = unitary.expm
    for module in (unitary, expm_module):  # the dense exponential, and the block one of the low-rank form
        monkeypatch.setattr(module, "expm", lambda A: calls.append(A.shape[-1]) or real(A))
    URN(4, 12, 3).matrices()  # 4k <= n: a 4k x 4k exponential
    URN(4, 12, 4).matrices()  # 4k > n: dense
    URN(4, 12, None).matrices()
    assert calls == [12, 12, 12]


def test_models_keep_their_parameters_and_stored_state():
    urn, arb = URN(7, 10, 3), ArbitraryRNN(7, 10)
    assert sorted(urn.state_dict()) == ["embedding", "h0", "readout.bias", "readout.weight"]
    assert sorted(arb.state_dict()) == ["delta", "h0", "readout.bias", "readout.weight"]
    assert urn.embedding.shape == (7, 9 + 8 + 7) and arb.delta.shape == (7, 10, 10)
    assert sum(p.numel() for p in urn.parameters()) == 7 * 24 + 11 * 7


@pytest.mark.parametrize("use_kernel", [pytest.param(True, marks=needs_kernel), False])
@pytest.mark.parametrize("T,chunk", [(1, None), (9, None), (100, None), (100, 7), (37, 1), (37, 37),
                                     (37, 100)])
def test_prefix_states_match_stepping_float64(T, chunk, use_kernel, monkeypatch):
    monkeypatch.setattr(scan, "_use_kernel", lambda *a: use_kernel)
    torch.manual_seed(T)
    model = URN(9, 16, None, init_scale=1.0).double().eval()
    tokens = torch.randint(9, (3, T))
    expected = matrix_scan_reference(model.matrices(), model.h0, tokens)
    torch.testing.assert_close(model.states_parallel(tokens, chunk=chunk), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("use_kernel", [pytest.param(True, marks=needs_kernel), False])
@pytest.mark.parametrize("L", [2, 3])
def test_prefix_states_with_words_of_several_symbols(L, use_kernel, monkeypatch):
    monkeypatch.setattr(scan, "_use_kernel", lambda *a: use_kernel)
    monkeypatch.setattr(scan, "_word_length", lambda *a: L)
    torch.manual_seed(L)
    model = URN(4, 10, None, init_scale=1.0).double().eval()
    tokens = torch.randint(4, (2, 61))
    expected = matrix_scan_reference(model.matrices(), model.h0, tokens)
    for chunk in (None, 1, 5, 61):
        torch.testing.assert_close(model.states_parallel(tokens, chunk=chunk), expected, rtol=0, atol=1e-10)


def test_prefix_states_match_stepping_float32_long():
    torch.manual_seed(0)
    model = URN(12, 50, 3).eval()
    tokens = torch.randint(12, (2, 5000))
    assert scan._word_length(12, 50, 2, 5000) > 1
    fast = model.states_parallel(tokens)
    with torch.no_grad():
        step = model.states(tokens)
    assert float((fast - step).abs().max()) < 1e-4
    with torch.no_grad():
        assert torch.allclose(model.readout(fast), model.readout(step), rtol=0, atol=1e-4)


def test_prefix_states_arbitrary_model_and_bad_chunk():
    torch.manual_seed(1)
    model = ArbitraryRNN(5, 6, init_scale=0.3).double().eval()
    tokens = torch.randint(5, (2, 50))
    torch.testing.assert_close(model.states_parallel(tokens), model.states(tokens), rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="chunk"):
        prefix_states(model.matrices(), model.h0, tokens, chunk=0)
    with pytest.raises(ParameterError, match="eval"):
        model.train().states_parallel(tokens)
