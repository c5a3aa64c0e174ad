"""The fast paths of the matrix-embedding models against their straightforward definitions.

* ``matrix_scan`` (grouped by symbol per step, hand-written backward) vs the plain loop
  ``h_t = (h_{t-1} * mask) @ M[x_t]`` with autograd: values and gradients in float64;
* ``expm_truncated`` (rank-2k form) vs ``torch.linalg.matrix_exp`` of the dense generator, k = 1 and
  k = n/2, values and gradients;
* ``prefix_states`` (chunked parallel prefix product) vs stepping the network, to 1e-4 in float32.
"""

from __future__ import annotations

import pytest
import torch

import urnlib.models.scan as scan
from urnlib.models import URN, ArbitraryRNN
from urnlib.models.scan import matrix_scan, matrix_scan_reference, prefix_states
from urnlib.models.unitary import expm_truncated
from urnlib.params import ParameterError


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
]


@pytest.mark.parametrize("V,n,B,T", CASES)
@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize("ranking", ["one-hot", "sort"])
def test_matrix_scan_matches_the_plain_loop(V, n, B, T, with_mask, ranking, monkeypatch):
    if ranking == "sort":
        monkeypatch.setattr(scan, "_ONE_HOT_LIMIT", 0)
    g = torch.Generator().manual_seed(V * 100 + B)
    M = torch.randn(V, n, n, dtype=torch.float64, generator=g)
    h0 = torch.randn(n, dtype=torch.float64, generator=g)
    tokens = torch.randint(V, (B, T), generator=g)
    mask = torch.rand(B, n, dtype=torch.float64, generator=g) if with_mask else None
    H, dM = _values_and_grads(matrix_scan, M, h0, tokens, mask)
    H_ref, dM_ref = _values_and_grads(matrix_scan_reference, M, h0, tokens, mask)
    assert H.shape == (B, T, n)
    torch.testing.assert_close(H, H_ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(dM, dM_ref, rtol=0, atol=1e-10)
    absent = torch.ones(V, dtype=torch.bool)
    absent[tokens.unique()] = False
    assert torch.all(dM[absent] == 0)  # symbols never read get no gradient
    assert dM.abs().max() > 1e-3


def test_matrix_scan_gradcheck():
    g = torch.Generator().manual_seed(3)
    M = torch.randn(4, 3, 3, dtype=torch.float64, generator=g, requires_grad=True)
    h0 = torch.randn(3, dtype=torch.float64, generator=g)
    tokens = torch.randint(4, (5, 6), generator=g)
    mask = torch.rand(5, 3, dtype=torch.float64, generator=g)
    assert torch.autograd.gradcheck(lambda M: matrix_scan(M, h0, tokens, mask), (M,))


def test_matrix_scan_per_sequence_initial_states_and_empty_input():
    g = torch.Generator().manual_seed(4)
    M = torch.randn(3, 4, 4, dtype=torch.float64, generator=g)
    h0 = torch.randn(5, 4, dtype=torch.float64, generator=g)
    tokens = torch.randint(3, (5, 6), generator=g)
    torch.testing.assert_close(matrix_scan(M, h0, tokens), matrix_scan_reference(M, h0, tokens), rtol=0,
                               atol=1e-12)
    assert matrix_scan(M, h0[0], tokens[:, :0]).shape == (5, 0, 4)


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
    Q = torch.linalg.matrix_exp(model.generators())
    expected = matrix_scan_reference(Q, model.h0, tokens)
    torch.testing.assert_close(model.states(tokens), expected, rtol=0, atol=1e-12)


def test_urn_uses_low_rank_exponential_only_when_it_pays(monkeypatch):
    calls = []
    real = torch.linalg.matrix_exp
    monkeypatch.setattr(torch.linalg, "matrix_exp", lambda A: calls.append(A.shape[-1]) or real(A))
    URN(4, 12, 3).matrices()  # 4k <= n: a 4k x 4k exponential
    URN(4, 12, 4).matrices()  # 4k > n: dense
    URN(4, 12, None).matrices()
    assert calls == [12, 12, 12]


@pytest.mark.parametrize("T,chunk",
                         [(1, None), (9, None), (100, None), (100, 7), (37, 1), (37, 37), (37, 100)])
def test_prefix_states_match_stepping_float64(T, chunk):
    torch.manual_seed(T)
    model = URN(9, 16, None, init_scale=1.0).double().eval()
    tokens = torch.randint(9, (3, T))
    expected = matrix_scan_reference(model.matrices(), model.h0, tokens)
    torch.testing.assert_close(model.states_parallel(tokens, chunk=chunk), expected, rtol=0, atol=1e-10)


def test_prefix_states_match_stepping_float32_long():
    torch.manual_seed(0)
    model = URN(12, 50, 3).eval()
    tokens = torch.randint(12, (2, 5000))
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
