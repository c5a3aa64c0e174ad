"""Tests for urnlib.models: the URN / k-TURN (paper 000 sec. 2, paper 001 sec. 2.2), its unconstrained
baseline, and the paper LSTM (paper 001 sec. 2.1). Every test asserts a piece of the maths."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from urnlib.analysis import phrase_embedding
from urnlib.models import (
    URN,
    ArbitraryRNN,
    PaperLSTM,
    build_model,
    count_parameters,
    lstm_parameter_count,
    skew_indices,
    skew_size,
    urn_parameter_count,
)
from urnlib.params import ParameterError

# Tiny matrices: one thread is ~100x faster than two when the cores are busy (thread contention).
torch.set_num_threads(1)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def orthogonality_error(Q: torch.Tensor) -> float:
    """max |Q^T Q - I| over a (V, n, n) stack."""
    eye = torch.eye(Q.shape[-1], dtype=Q.dtype)
    return float((Q.transpose(-1, -2) @ Q - eye).abs().max())


def adam_steps(model, steps, lr, vocab_size, seed=0, B=8, T=6):
    """``steps`` Adam steps on a random next-symbol loss (train mode: dropout on)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(vocab_size, (B, T), generator=g)
    y = torch.randint(vocab_size, (B, T), generator=g)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = F.cross_entropy(model(x).reshape(-1, vocab_size), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


# --------------------------------------------------------------------------- #
# orthogonality and norm preservation
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("k", [None, 3])
def test_urn_matrices_orthogonal_with_det_one_before_and_after_adam(k):
    torch.manual_seed(0)
    V, n = 5, 8
    model = URN(V, n, k).eval()
    with torch.no_grad():
        Q0 = model.matrices()
    assert Q0.dtype == torch.float32 and Q0.shape == (V, n, n)
    assert orthogonality_error(Q0) < 1e-5
    assert torch.allclose(torch.linalg.det(Q0), torch.ones(V), atol=1e-5)

    adam_steps(model, steps=20, lr=0.05, vocab_size=V)
    with torch.no_grad():
        Q = model.matrices()
    assert (Q - Q0).abs().max() > 0.1  # the steps really moved the matrices
    assert orthogonality_error(Q) < 1e-5
    assert torch.allclose(torch.linalg.det(Q), torch.ones(V), atol=1e-5)  # SO(n), not just O(n)


@pytest.mark.parametrize("k", [None, 3])
def test_state_norm_preserved_over_10000_steps(k):
    torch.manual_seed(1)
    V, n, T = 6, 8, 10_000
    model = URN(V, n, k, dropout=0.0, init_scale=0.5).double().eval()
    tokens = torch.randint(V, (1, T), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        H = model.states(tokens)  # (1, T, n)
    assert H.shape == (1, T, n) and H.dtype == torch.float64
    norms = H.norm(dim=-1)
    assert float((norms - 1).abs().max()) < 1e-6
    # not trivially: the state moves around the sphere (far from e_0 at many steps)
    assert float((H[0] - model.h0).norm(dim=-1).max()) > 0.5


# --------------------------------------------------------------------------- #
# truncation structure (reference-facts "URN / k-TURN")
# --------------------------------------------------------------------------- #
def test_truncated_generators_are_skew_and_confined_to_first_k_rows_and_columns():
    torch.manual_seed(0)
    model = URN(4, 10, 3, init_scale=1.0)
    S = model.generators().detach()
    assert S.shape == (4, 10, 10)
    assert torch.equal(S, -S.transpose(1, 2))
    assert torch.count_nonzero(S[:, 3:, 3:]) == 0
    # the first 3 rows do carry entries: every strict-upper entry of those rows is non-zero here
    rows, cols = skew_indices(10, 3)
    assert torch.count_nonzero(S[:, rows, cols]) == 4 * 24


def test_truncated_parameter_count_is_9_plus_8_plus_7():
    assert skew_size(10, 3) == 9 + 8 + 7 == 24
    assert skew_size(10, None) == 45 == skew_size(10, 9)
    assert skew_size(50, 3) == 144  # reference-facts: agreement n=50, k=3 -> l=144
    model = URN(7, 10, 3)
    assert tuple(model.embedding.shape) == (7, 24)
    assert count_parameters(model) == urn_parameter_count(7, 10, 3) == 7 * 24 + 11 * 7


def test_parameters_fill_strict_upper_triangle_row_by_row():
    model = URN(2, 10, 3)
    with torch.no_grad():
        model.embedding.copy_(torch.arange(1, 25, dtype=torch.float32).expand(2, 24))
    S = model.generators().detach()[0]
    assert S[0, 1] == 1  # first parameter
    assert S[0, 9] == 9  # 9th: end of row 0
    assert S[1, 2] == 10  # 10th: row 1 starts right of the diagonal
    assert S[1, 9] == 17
    assert S[2, 3] == 18
    assert S[2, 9] == 24  # last
    expected = np.zeros((10, 10))
    p = 1
    for r in range(3):
        for c in range(r + 1, 10):
            expected[r, c] = p
            p += 1
    expected = expected - expected.T
    np.testing.assert_array_equal(S.numpy(), expected)


def test_k_none_equals_k_n_minus_1():
    n = 8
    r1, c1 = skew_indices(n, None)
    r2, c2 = skew_indices(n, n - 1)
    assert torch.equal(r1, r2) and torch.equal(c1, c2)
    torch.manual_seed(3)
    a = URN(3, n, None)
    torch.manual_seed(3)
    b = URN(3, n, n - 1)
    assert torch.equal(a.embedding, b.embedding)
    assert torch.equal(a.generators(), b.generators())
    # full: every strict-upper entry is a parameter
    assert skew_size(n, None) == n * (n - 1) // 2


@pytest.mark.parametrize("k", [1, 2, 3])
def test_k_truncated_generator_has_at_most_k_rotation_planes(k):
    n = 10
    torch.manual_seed(k)
    model = URN(3, n, k, init_scale=1.0).double()
    S = model.generators().detach()
    Q = torch.linalg.matrix_exp(S)
    for v in range(3):
        rank = int(torch.linalg.matrix_rank(S[v], atol=1e-9))
        assert rank <= 2 * k
        assert rank == 2 * k  # generic parameters reach the bound
        # eigenvalues of Q that are not 1 come in pairs e^{+-i theta}, one pair per plane
        ev = torch.linalg.eigvals(Q[v])
        assert int(((ev - 1).abs() > 1e-8).sum()) <= 2 * k
    # the full URN is not so limited
    full = URN(3, n, None, init_scale=1.0).double()
    assert int(torch.linalg.matrix_rank(full.generators().detach()[0], atol=1e-9)) == n


# --------------------------------------------------------------------------- #
# parameter counts: paper 001 Tables 1 and 2
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "V, e, n, lstm, urn",
    [
        (10, 20, 32, 7314, 5290),  # Table 1, cross-serial
        (10, 20, 16, 2738, 1370),
        (10, 20, 8, 1218, 370),
        (12, 12, 32, 6300, 6348),  # Table 2, Dyck
        (12, 12, 16, 2204, 1644),
        (12, 12, 8, 924, 444),
    ],
)
def test_parameter_counts_match_paper_001_tables(V, e, n, lstm, urn):
    assert count_parameters(build_model("lstm", V, n=n, embedding_size=e)) == lstm
    assert count_parameters(build_model("urn", V, n=n)) == urn
    assert lstm_parameter_count(V, n, e) == lstm
    assert urn_parameter_count(V, n) == urn


def test_arbitrary_parameter_count():
    assert count_parameters(build_model("arbitrary", 12, n=8)) == 12 * 64 + 9 * 12


# --------------------------------------------------------------------------- #
# phrase product order
# --------------------------------------------------------------------------- #
def test_phrase_embedding_product_order_matches_network():
    torch.manual_seed(5)
    V, n = 4, 6
    model = URN(V, n, dropout=0.0, init_scale=1.0).double().eval()
    ids = [0, 1, 2]
    with torch.no_grad():
        M = model.matrices()  # (V, n, n)
        last = model.states(torch.tensor([ids]))[0, -1].numpy()
    h0 = model.h0.numpy()
    P = phrase_embedding(M, ids)
    by_hand = h0 @ M[0].numpy() @ M[1].numpy() @ M[2].numpy()
    np.testing.assert_allclose(P, M[0].numpy() @ M[1].numpy() @ M[2].numpy(), atol=1e-12)
    np.testing.assert_allclose(h0 @ P, last, atol=1e-12)
    np.testing.assert_allclose(by_hand, last, atol=1e-12)
    reversed_ = h0 @ phrase_embedding(M, ids[::-1])
    assert np.abs(reversed_ - last).max() > 1e-2


# --------------------------------------------------------------------------- #
# gradcheck
# --------------------------------------------------------------------------- #
def test_gradcheck_urn_forward_wrt_embedding():
    torch.manual_seed(0)
    model = URN(3, 4, dropout=0.0, init_scale=0.5).double().eval()
    tokens = torch.tensor([[0, 2, 1], [1, 1, 0]])
    emb = model.embedding.detach().clone().requires_grad_(True)

    def f(e):
        return torch.func.functional_call(model, {"embedding": e}, (tokens,))

    assert torch.autograd.gradcheck(f, (emb,), eps=1e-6, atol=1e-6)


def test_gradcheck_truncated_urn_forward_wrt_embedding():
    torch.manual_seed(1)
    model = URN(3, 4, 1, dropout=0.0, init_scale=0.5).double().eval()
    tokens = torch.tensor([[2, 0, 1]])
    emb = model.embedding.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda e: torch.func.functional_call(model, {"embedding": e}, (tokens,)), (emb,), eps=1e-6, atol=1e-6
    )


# --------------------------------------------------------------------------- #
# the arbitrary (unconstrained) baseline
# --------------------------------------------------------------------------- #
def test_arbitrary_starts_at_the_urn_of_the_same_seed_then_leaves_orthogonality():
    V, n = 5, 6
    torch.manual_seed(11)
    urn = URN(V, n, None).eval()
    torch.manual_seed(11)
    arb = ArbitraryRNN(V, n).eval()
    with torch.no_grad():
        Qu, Qa = urn.matrices(), arb.matrices()
    # by construction (same draws in the same order): W = I + (expm(S_0) - I) = expm(S_0)
    assert torch.allclose(Qa, Qu, atol=1e-6)
    assert torch.equal(arb.readout.weight, urn.readout.weight)
    assert orthogonality_error(Qa) < 1e-5

    adam_steps(arb, steps=20, lr=0.05, vocab_size=V)
    with torch.no_grad():
        assert orthogonality_error(arb.matrices()) > 1e-2  # unconstrained: no longer orthogonal


# --------------------------------------------------------------------------- #
# the paper LSTM, one step by hand
# --------------------------------------------------------------------------- #
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("candidate", ["tanh", "sigmoid"])
def test_paper_lstm_steps_by_hand(candidate):
    V, n, e = 5, 3, 4
    torch.manual_seed(0)
    model = PaperLSTM(V, n, e, candidate=candidate).double().eval()
    with torch.no_grad():  # make the biases non-trivial so that every gate's bias is exercised
        model.gates.bias.uniform_(-1, 1)
        model.readout.bias.uniform_(-1, 1)
    W = model.gates.weight.detach().numpy()  # (4n, n+e), rows f, i, o, c; columns [h; x]
    b = model.gates.bias.detach().numpy()
    E = model.embedding.weight.detach().numpy()
    R, r = model.readout.weight.detach().numpy(), model.readout.bias.detach().numpy()
    act = np.tanh if candidate == "tanh" else _sigmoid

    def step(h, c, sym):
        z = W @ np.concatenate([h, E[sym]]) + b
        f, i, o = _sigmoid(z[:n]), _sigmoid(z[n : 2 * n]), _sigmoid(z[2 * n : 3 * n])
        c = f * c + i * act(z[3 * n :])
        return o * np.tanh(c), c

    h, c = np.zeros(n), np.zeros(n)
    h1, c1 = step(h, c, 3)
    with torch.no_grad():
        out1 = model(torch.tensor([[3]]))[0, 0].numpy()
    np.testing.assert_allclose(out1, R @ h1 + r, atol=1e-12)

    # a second step uses f (c_0 = 0 hides it at step 1) and the recurrent weights
    h2, _ = step(h1, c1, 1)
    with torch.no_grad():
        out2 = model(torch.tensor([[3, 1]]))[0].numpy()
    np.testing.assert_allclose(out2[0], R @ h1 + r, atol=1e-12)
    np.testing.assert_allclose(out2[1], R @ h2 + r, atol=1e-12)


def test_paper_lstm_forget_bias_is_one():
    model = PaperLSTM(4, 3, 2)
    b = model.gates.bias.detach()
    assert torch.equal(b[:3], torch.ones(3)) and torch.equal(b[3:], torch.zeros(9))


# --------------------------------------------------------------------------- #
# bad parameters
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "build, names",
    [
        (lambda: URN(12, 7), ["n=7"]),
        (lambda: build_model("urn", 12, n=7), ["n=7"]),
        (lambda: URN(12, 8, 8), ["k=8"]),
        (lambda: URN(12, 8, 0), ["k=0"]),
        (lambda: build_model("hopfield", 12, n=8), ["kind", "hopfield", "urn N [k<k>]"]),
        (lambda: build_model("urn", 12, n=8, colour="red"), ["colour"]),
        (lambda: build_model("lstm", 12, n=8, embedding_size=4, k=3), ["'k'"]),
        (lambda: URN(12, 8, dropout=1.0), ["dropout"]),
        (lambda: PaperLSTM(12, 8, 4, dropout=1.0), ["dropout"]),
        (lambda: ArbitraryRNN(12, 8, dropout=1.0), ["dropout"]),
        (lambda: PaperLSTM(12, 8, 4, candidate="relu"), ["candidate"]),
    ],
)
def test_bad_parameters_raise_parameter_error_naming_them(build, names):
    with pytest.raises(ParameterError) as info:
        build()
    for name in names:
        assert name in str(info.value)


# --------------------------------------------------------------------------- #
# determinism
# --------------------------------------------------------------------------- #
def test_same_seed_same_model_and_same_dropout_masks():
    def built(seed):
        torch.manual_seed(seed)
        return URN(6, 8, 3)

    a, b, c = built(4), built(4), built(5)
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and torch.equal(va, vb)
    assert not torch.equal(a.embedding, c.embedding)

    x = torch.randint(6, (4, 5), generator=torch.Generator().manual_seed(0))
    a.train()
    torch.manual_seed(9)
    y1 = a(x)
    torch.manual_seed(9)
    y2 = a(x)
    torch.manual_seed(10)
    y3 = a(x)
    assert torch.equal(y1, y2)
    assert not torch.equal(y1, y3)  # dropout is really on, so the seed matters
    a.eval()
    assert torch.equal(a(x), a(x))


# --------------------------------------------------------------------------- #
# device agnosticism (DESIGN.md: no hard-coded device). The "meta" device stands in for a GPU:
# a tensor made without ``device=`` lands on the CPU and cannot be mixed with the model's.
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("cls", [URN, ArbitraryRNN])
def test_matrix_rnn_dropout_masks_follow_the_model_device(cls):
    model = cls(5, 4).to("meta").train()
    out = model(torch.zeros(2, 3, dtype=torch.long, device="meta"))
    assert out.device.type == "meta" and out.shape == (2, 3, 5)


def test_paper_lstm_dropout_masks_follow_the_model_device():
    model = PaperLSTM(5, 3, 2).to("meta").train()
    out = model(torch.zeros(2, 3, dtype=torch.long, device="meta"))
    assert out.device.type == "meta"


@pytest.mark.parametrize("kind, opts, count", [
    ("urn", {"n": 50, "k": 3}, lambda V: urn_parameter_count(V, 50, 3, n_out=2)),
    ("lstm", {"n": 50, "embedding_size": 50}, lambda V: lstm_parameter_count(V, 50, 50, n_out=2)),
])
def test_classifier_readout_has_n_out_classes_and_counts(kind, opts, count):
    """Paper 000 sec. 4: the agreement classifier reads a prefix and predicts one of 2 numbers; its
    readout is (n + 1) * 2 parameters, not (n + 1) * V."""
    V = 300
    model = build_model(kind, V, n_out=2, **opts)
    assert model(torch.randint(0, V, (4, 7))).shape == (4, 7, 2)
    assert count_parameters(model) == count(V)
    expected_urn = V * (49 + 48 + 47) + 51 * 2  # l = 144 at n = 50, k = 3 (reference-facts)
    if kind == "urn":
        assert count_parameters(model) == expected_urn


@pytest.mark.parametrize("cls, opts", [(URN, {"k": 2}), (URN, {"k": None}), (ArbitraryRNN, {})])
def test_states_of_a_batch_using_few_symbols_match_the_full_vocabulary_path(cls, opts):
    """A batch reading 5 of 400 symbols exponentiates only those 5; the states are the same as with
    every symbol's matrix (eval mode, float64)."""
    torch.manual_seed(0)
    model = cls(400, 8, **opts).double().eval()
    tokens = torch.tensor([[3, 77, 3, 399, 12], [12, 12, 200, 3, 77]])
    M = model.matrices()  # all 400
    h = model.h0.expand(2, -1)
    expected = []
    for t in range(tokens.shape[1]):
        h = torch.einsum("bi,bij->bj", h, M[tokens[:, t]])
        expected.append(h)
    torch.testing.assert_close(model.states(tokens), torch.stack(expected, 1), rtol=0, atol=1e-12)


def test_n_out_must_be_positive():
    with pytest.raises(ParameterError, match="n_out"):
        build_model("urn", 10, n=4, n_out=0)
    with pytest.raises(ParameterError, match="n_out"):
        build_model("lstm", 10, n=4, embedding_size=3, n_out=-1)
