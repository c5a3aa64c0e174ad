"""Tests for urnlib.models.matrix_embedding: the matrix-embedding language models of paper 003 (Borbély), sec.
4.1 (neural), 4.2 (direct probabilistic) and 4.3 (continuous WFSA). Every test asserts a piece of the
maths."""

import itertools
import math

import pytest
import torch

from urnlib.models.matrix_embedding import (
    ALGEBRAS,
    NeuralMatrixLM,
    ProbabilisticMatrixLM,
    WFSAMatrixLM,
    algebra_mask,
    check_algebra,
    free_entry_count,
)
from urnlib.params import ParameterError

torch.set_num_threads(1)  # tiny tensors; the cores are shared with training jobs

ALL = list(ALGEBRAS)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def all_strings(V, n):
    """Every string of length n over range(V), as a (V**n, n) long tensor."""
    return torch.tensor(list(itertools.product(range(V), repeat=n)), dtype=torch.long).reshape(V**n, n)


def random_params_(model, scale, seed):
    """Move every parameter away from its initialisation (so tests do not pass by symmetry)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return model


def adam_on_nll(model, V, steps=20, lr=0.1, B=8, T=5, seed=0):
    """``steps`` Adam steps on the mean negative log-likelihood of random sentences of random lengths."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(V, (B, T), generator=g)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    before = [p.detach().clone() for p in model.parameters()]
    for _ in range(steps):
        loss = model.nll(tokens, lengths).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    moved = max(float((p.detach() - q).abs().max()) for p, q in zip(model.parameters(), before))
    assert moved > 0.5  # the steps really moved the parameters
    return tokens, lengths


def string_prob(M, seq):
    """(1/d) 1^T M_{w1} ... M_{wn} 1 by explicit matrix products."""
    d = M.shape[-1]
    P = torch.eye(d, dtype=M.dtype)
    for w in seq:
        P = P @ M[w]
    return float(P.sum() / d)


# --------------------------------------------------------------------------- #
# algebras
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("algebra", ALL)
def test_algebra_closed_under_product(algebra):
    d = 6
    mask = algebra_mask(algebra, d)
    assert mask.shape == (d, d) and mask.dtype == torch.bool
    assert mask.diagonal().all()  # the identity is in every algebra (the empty product)
    assert int(mask.sum()) == free_entry_count(algebra, d)
    g = torch.Generator().manual_seed(0)
    A, B, C = (torch.randn(d, d, generator=g, dtype=torch.float64) * mask for _ in range(3))
    for P in (A @ B, A @ B @ C, B @ A + 2 * C):
        assert (P[~mask] == 0).all()


def test_algebra_masks_are_what_they_say():
    assert algebra_mask("dense", 3).all()
    assert torch.equal(algebra_mask("diagonal", 3), torch.eye(3, dtype=torch.bool))
    assert torch.equal(algebra_mask("upper", 3), torch.ones(3, 3, dtype=torch.bool).triu())
    assert [free_entry_count(a, 10) for a in ALL] == [100, 10, 55]
    # diagonal matrices commute, upper-triangular ones in general do not
    g = torch.Generator().manual_seed(1)
    for algebra, commute in [("diagonal", True), ("upper", False), ("dense", False)]:
        mask = algebra_mask(algebra, 4)
        A, B = (torch.randn(4, 4, generator=g, dtype=torch.float64) * mask for _ in range(2))
        assert torch.allclose(A @ B, B @ A) == commute


@pytest.mark.parametrize("name", ["symmetric", "skew"])
def test_sets_not_closed_under_product_are_refused(name):
    # the product of two symmetric (skew) matrices is in general not symmetric (skew): check the claim itself
    g = torch.Generator().manual_seed(2)
    A, B = torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g)
    A, B = (A + A.T, B + B.T) if name == "symmetric" else (A - A.T, B - B.T)
    P = A @ B
    assert not torch.allclose(P, P.T if name == "symmetric" else -P.T)
    for call in (lambda: check_algebra(name), lambda: algebra_mask(name, 4),
                 lambda: ProbabilisticMatrixLM(5, 4, name)):
        with pytest.raises(ParameterError, match="not closed under matrix product.*would leave"):
            call()


def test_unknown_algebra_and_bad_sizes_are_refused():
    with pytest.raises(ParameterError, match=r"choose one of \['dense', 'diagonal', 'upper'\]"):
        check_algebra("lower")
    for cls in (NeuralMatrixLM, ProbabilisticMatrixLM, WFSAMatrixLM):
        with pytest.raises(ParameterError, match="d=0"):
            cls(5, 0)
        with pytest.raises(ParameterError, match="vocab_size=0"):
            cls(0, 3)
        with pytest.raises(ParameterError, match="vocab_size"):
            cls(5.0, 3)
    with pytest.raises(ParameterError, match="window"):
        NeuralMatrixLM(5, 3, window=0)
    with pytest.raises(ParameterError, match="lengths_or_mask"):
        ProbabilisticMatrixLM(5, 3).log_prob(torch.zeros(2, 3, dtype=torch.long),
                                             torch.ones(3, 2, dtype=torch.bool))


def test_parameter_counts():
    V, d = 7, 4
    assert NeuralMatrixLM(V, d, "dense").parameter_count == V * d * d
    assert ProbabilisticMatrixLM(V, d, "diagonal").parameter_count == V * d
    assert ProbabilisticMatrixLM(V, d, "upper").parameter_count == V * d * (d + 1) // 2
    assert WFSAMatrixLM(V, d, "dense").parameter_count == V * d * d + d * V
    # the paper's two trained settings (V = 100,147): 100 x 100 diagonal and 10 x 10 dense, both 100 numbers
    # a word
    assert (ProbabilisticMatrixLM(11, 100, "diagonal").parameter_count
            == ProbabilisticMatrixLM(11, 10).parameter_count)


# --------------------------------------------------------------------------- #
# model 4.2: direct probabilistic model
# --------------------------------------------------------------------------- #
def check_42_constraints(model, tol=1e-6):
    M = model.matrices().detach()
    mask = model.mask
    assert (M >= 0).all()
    assert (M[:, ~mask] == 0).all()  # exactly zero outside the algebra
    Ms = model.m_star().detach()
    assert torch.allclose(Ms, M.sum(0), atol=tol)
    assert (Ms.sum(1) - 1).abs().max() < tol  # right-stochastic


@pytest.mark.parametrize("algebra", ALL)
def test_42_constraints_hold_at_init_and_after_adam(algebra):
    torch.manual_seed(0)
    V = 6
    model = ProbabilisticMatrixLM(V, 4, algebra)
    check_42_constraints(model)
    adam_on_nll(model, V)
    check_42_constraints(model)


@pytest.mark.parametrize("algebra", ALL)
def test_42_probabilities_of_all_strings_of_length_n_sum_to_one(algebra):
    torch.manual_seed(1)
    V, d = 4, 3
    model = random_params_(ProbabilisticMatrixLM(V, d, algebra).double(), 1.5, seed=3)
    M = model.matrices().detach()
    for n in (1, 2, 3):
        seqs = all_strings(V, n)
        logp = model.log_prob(seqs).detach()
        assert abs(float(logp.exp().sum()) - 1) < 1e-10
        for k in (0, len(seqs) // 2, len(seqs) - 1):  # agrees with the explicit matrix product
            assert math.isclose(float(logp[k].exp()), string_prob(M, seqs[k].tolist()), rel_tol=1e-12)
    Ms = model.m_star().detach()
    for n in range(6):  # (1/d) 1^T M_*^n 1 = 1
        assert abs(float(torch.linalg.matrix_power(Ms, n).sum()) / d - 1) < 1e-12


@pytest.mark.parametrize("algebra", ALL)
def test_42_placeholder_m_star(algebra):
    """Paper 003 sec. 4.2: M_* = sum_w M_w "does not change the probability of any sequence, no matter where
    it is inserted". What holds: inserted in any slot, M_* gives the probability of the skip-gram with
    *anything* there (linearity), and appended at the end it changes nothing (M_* 1 = 1). Elsewhere
    "unchanged" would need 1^T M_* = 1^T (prepended) or M_* = I; it holds in the diagonal algebra, where M_* =
    I, and fails in general."""
    V, d = 4, 3
    model = random_params_(ProbabilisticMatrixLM(V, d, algebra).double(), 1.5, seed=4)
    M, Ms = model.matrices().detach(), model.m_star().detach()
    Mx = torch.cat([M, Ms[None]])  # index V is the placeholder "*anything*"
    changed = []
    for seq in ([0, 2], [3, 1, 1], [2]):
        p = string_prob(M, seq)
        assert math.isclose(string_prob(Mx, seq + [V]), p, rel_tol=1e-12)  # P(w1..wn) = sum_w P(w1..wn w)
        for pos in range(len(seq) + 1):
            q = string_prob(Mx, seq[:pos] + [V] + seq[pos:])
            filled = torch.tensor([seq[:pos] + [w] + seq[pos:] for w in range(V)])
            assert math.isclose(float(model.log_prob(filled).detach().exp().sum()), q, rel_tol=1e-12)
            changed.append(not math.isclose(q, p, rel_tol=1e-9))
    assert any(changed) == (algebra != "diagonal")
    assert torch.allclose(Ms, torch.eye(d, dtype=torch.float64)) == (algebra == "diagonal")


@pytest.mark.parametrize("algebra", ["dense", "upper"])
def test_42_long_sentence_large_vocabulary_no_underflow(algebra):
    torch.manual_seed(5)
    V, d, T = 20_000, 10, 60
    model = random_params_(ProbabilisticMatrixLM(V, d, algebra), 2.0, seed=5)
    sent = torch.randint(V, (1, T), generator=torch.Generator().manual_seed(6))
    logp = model.log_prob(sent)
    assert torch.isfinite(logp).all() and logp.dtype == torch.float32
    # independent reference: float64 matrices, product carried in log space by logsumexp
    with torch.no_grad():
        M64 = ProbabilisticMatrixLM(V, d, algebra).double()
        M64.load_state_dict(model.state_dict())
        logM = M64.matrices()[sent[0]].log()  # (T, d, d), -inf outside the algebra
    L = torch.full((d,), -math.log(d), dtype=torch.float64)
    for t in range(T):
        L = torch.logsumexp(L[:, None] + logM[t], dim=0)
    ref = float(torch.logsumexp(L, 0))
    assert ref < -400  # far below float32's smallest positive number (~1.4e-45, log ~ -103):
    assert float(torch.tensor(ref, dtype=torch.float32).exp()) == 0.0  # a direct float32 product underflows
    assert abs(float(logp.detach()) - ref) < 1e-5 * abs(ref)


@pytest.mark.parametrize("algebra", ["dense", "diagonal"])
def test_42_batched_lengths_and_mask_equal_one_sentence_at_a_time(algebra):
    V = 5
    model = random_params_(ProbabilisticMatrixLM(V, 3, algebra).double(), 1.0, seed=7)
    tokens = torch.randint(V, (4, 6), generator=torch.Generator().manual_seed(8))
    lengths = torch.tensor([6, 1, 3, 0])
    batched = model.log_prob(tokens, lengths)
    single = torch.stack([model.log_prob(tokens[b : b + 1, :n])[0] for b, n in enumerate(lengths.tolist())])
    assert torch.allclose(batched, single, rtol=1e-12)
    assert float(batched[3].detach()) == 0.0  # the empty sentence: (1/d) 1^T I 1 = 1
    mask = torch.arange(6) < lengths[:, None]
    assert torch.allclose(model.log_prob(tokens, mask), batched, rtol=1e-12)
    assert torch.allclose(model.nll(tokens, lengths), -batched)
    assert torch.allclose(model(tokens, lengths), batched)


@pytest.mark.parametrize("cls", [ProbabilisticMatrixLM, WFSAMatrixLM])
@pytest.mark.parametrize("algebra", ["dense", "upper"])
def test_gradients_match_a_naive_softmax_implementation(cls, algebra):
    """The max-shifted, renormalised computations differentiate like the plain formulas."""
    V, d = 4, 3
    model = random_params_(cls(V, d, algebra).double(), 1.0, seed=21)
    seqs = torch.tensor([[0, 3, 1], [2, 2, 0]])
    model.log_prob(seqs).sum().backward()
    fast = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    full = torch.full((V, d, d), -math.inf, dtype=torch.float64)
    full[:, model.mask] = model.theta
    if cls is ProbabilisticMatrixLM:  # softmax over (word, column) per row
        M = full.permute(1, 0, 2).reshape(d, V * d).softmax(-1).reshape(d, V, d).permute(1, 0, 2)
    else:  # softmax over the columns of each word's row
        M = full.softmax(-1)
    total = 0
    for seq in seqs.tolist():
        if cls is ProbabilisticMatrixLM:
            P = torch.eye(d, dtype=torch.float64)
            for w in seq:
                P = P @ M[w]
            total = total + (P.sum() / d).log()
        else:
            R, v = model.emission.softmax(-1), torch.full((d,), 1 / d, dtype=torch.float64)
            for w in seq:
                total = total + (v @ R[:, w]).log()
                v = v @ M[w]
    total.backward()
    for g, p in zip(fast, model.parameters()):
        assert torch.allclose(g, p.grad, rtol=1e-10, atol=1e-12)


def test_42_diagonal_equals_dense_restricted_to_the_diagonal():
    V, d = 4, 3
    diag = random_params_(ProbabilisticMatrixLM(V, d, "diagonal").double(), 1.5, seed=9)
    dense = ProbabilisticMatrixLM(V, d, "dense").double()
    with torch.no_grad():  # dense parameters restricted to the diagonal mask: exp(-inf) = 0 off the diagonal
        theta = torch.full((V, d, d), -math.inf, dtype=torch.float64)
        theta[:, range(d), range(d)] = diag.theta
        dense.theta.copy_(theta.reshape(V, d * d))
    assert torch.allclose(dense.matrices(), diag.matrices(), rtol=1e-12)
    for n in (1, 2, 3):
        seqs = all_strings(V, n)
        assert torch.allclose(dense.log_prob(seqs), diag.log_prob(seqs), rtol=1e-12)


# --------------------------------------------------------------------------- #
# model 4.3: continuous WFSA
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("algebra", ALL)
def test_43_constraints_hold_at_init_and_after_adam(algebra):
    torch.manual_seed(10)
    V = 6
    model = WFSAMatrixLM(V, 4, algebra)
    for _ in range(2):
        M, R = model.matrices().detach(), model.emission_matrix().detach()
        assert (M >= 0).all() and (M[:, ~model.mask] == 0).all()
        assert (M.sum(-1) - 1).abs().max() < 1e-6  # every M_w right-stochastic
        assert R.shape == (4, V) and (R >= 0).all() and (R.sum(1) - 1).abs().max() < 1e-6
        adam_on_nll(model, V)


@pytest.mark.parametrize("algebra", ALL)
def test_43_probabilities_of_all_strings_sum_to_one_and_match_the_paper_product(algebra):
    V, d = 4, 3
    model = random_params_(WFSAMatrixLM(V, d, algebra).double(), 1.5, seed=11)
    M, R = model.matrices().detach(), model.emission_matrix().detach()
    for n in (1, 2, 3):
        seqs = all_strings(V, n)
        logp = model.log_prob(seqs).detach()
        assert abs(float(logp.exp().sum()) - 1) < 1e-10
    # P(w1..wn) = prod_t v_{t-1} . R[:, w_t], v_0 = (1/d) 1^T, v_t = v_{t-1} M_{w_t}
    for seq in ([1, 3, 0], [2, 2]):
        v, p = torch.full((d,), 1 / d, dtype=torch.float64), 1.0
        for w in seq:
            p *= float(v @ R[:, w])
            v = v @ M[w]
        assert math.isclose(float(model.log_prob(torch.tensor([seq])).detach().exp()), p, rel_tol=1e-12)


def test_43_next_word_distribution_is_a_distribution_and_the_conditional():
    V, d = 5, 3
    model = random_params_(WFSAMatrixLM(V, d, "upper").double(), 1.5, seed=12)
    prefix = torch.tensor([[3, 0, 4], [1, 1, 2]])
    dist = model.next_word_distribution(prefix)
    assert dist.shape == (2, V) and (dist >= 0).all()
    assert torch.allclose(dist.sum(-1), torch.ones(2, dtype=torch.float64))
    for w in range(V):  # P(w | prefix) = P(prefix w) / P(prefix)
        ext = torch.cat([prefix, torch.full((2, 1), w)], 1)
        assert torch.allclose(dist[:, w].log(), model.log_prob(ext) - model.log_prob(prefix))
    assert torch.allclose(model.next_word_distribution(prefix[0]), dist[0])  # one unbatched prefix
    empty = model.next_word_distribution(torch.zeros(1, 0, dtype=torch.long))  # P(w_1) = (1/d) 1^T R
    assert torch.allclose(empty[0], model.emission_matrix().mean(0))


def test_43_diagonal_algebra_is_a_unigram_mixture():
    # a row-stochastic diagonal matrix is the identity: the state never moves
    model = random_params_(WFSAMatrixLM(4, 3, "diagonal"), 2.0, seed=13)
    assert torch.equal(model.matrices(), torch.eye(3).expand(4, 3, 3))


# --------------------------------------------------------------------------- #
# model 4.1: neural model
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("algebra", ALL)
def test_41_scores_equal_the_explicit_products(algebra):
    V, d = 5, 3
    model = random_params_(NeuralMatrixLM(V, d, algebra).double(), 0.8, seed=14)
    M = model.matrices().detach()
    before = torch.tensor([[1, 4], [0, 0], [2, 3]])
    after = torch.tensor([[3, 2], [4, 1], [0, 2]])
    scores = model.scores(before, after).detach()
    assert scores.shape == (3, V)
    for b in range(3):
        Pb = M[before[b, 0]] @ M[before[b, 1]]
        Pa = M[after[b, 0]] @ M[after[b, 1]]
        for v in range(V):
            explicit = float((Pb @ M[v] @ Pa).sum())  # 1^T (prod M_before) M_v (prod M_after) 1
            assert math.isclose(float(scores[b, v]), explicit, rel_tol=1e-12, abs_tol=1e-12)
    logp = model(before, after)
    assert torch.allclose(logp.exp().sum(-1), torch.ones(3, dtype=torch.float64))
    centre = torch.tensor([0, 3, 1])
    assert torch.allclose(model.context_nll(before, centre, after), -logp[torch.arange(3), centre])


def test_41_pad_id_acts_as_the_identity():
    V, d = 5, 3
    model = random_params_(NeuralMatrixLM(V, d, pad_id=-1).double(), 0.8, seed=15)
    M = model.matrices().detach()
    P = model.pad_id
    empty = model.scores(torch.full((2, 3), P), torch.full((2, 0), P)).detach()
    assert torch.allclose(empty, M.sum((1, 2)).expand(2, V))  # 1^T M_v 1
    padded = model.scores(torch.tensor([[P, 1, P, 2]]), torch.tensor([[P, 3]]))
    plain = model.scores(torch.tensor([[1, 2]]), torch.tensor([[3]]))
    assert torch.allclose(padded, plain)


def test_41_sentence_nll_is_the_sum_of_windowed_centre_nlls():
    V, d, w = 6, 3, 2
    model = random_params_(NeuralMatrixLM(V, d, window=w).double(), 0.5, seed=16)
    tokens = torch.tensor([[1, 2, 3, 4, 5], [0, 5, 2, 0, 0]])
    lengths = torch.tensor([5, 3])
    P = model.pad_id
    expected = []
    for b, n in enumerate(lengths.tolist()):
        s = tokens[b, :n].tolist()
        total = 0.0
        for t in range(n):
            before = [P] * w + s[:t]
            after = s[t + 1 :] + [P] * w
            total += float(model.context_nll(torch.tensor([before[-w:]]), torch.tensor([s[t]]),
                                             torch.tensor([after[:w]])).detach())
        expected.append(total)
    assert torch.allclose(model.nll(tokens, lengths), torch.tensor(expected, dtype=torch.float64))


def test_41_initialisation_near_identity_keeps_long_products_finite_and_predictions_uniform():
    torch.manual_seed(17)
    V, d = 50, 10
    model = NeuralMatrixLM(V, d)
    M = model.matrices().detach()
    assert (M - torch.eye(d)).abs().max() < 0.1
    ctx = torch.randint(V, (16, 50), generator=torch.Generator().manual_seed(18))
    prod = torch.eye(d, dtype=torch.float64).expand(16, d, d)
    for t in range(50):  # products of 50 word matrices: singular values neither explode nor vanish
        prod = prod @ M[ctx[:, t]].double()
    sv = torch.linalg.svdvals(prod)
    assert sv.max() < 3 and sv.min() > 0.3
    scores = model.scores(ctx, ctx.flip(1)).detach()  # products of 100 matrices around the centre word
    assert torch.isfinite(scores).all()
    p = model(ctx, ctx.flip(1)).detach().exp()
    assert (p * V).min() > 0.3 and (p * V).max() < 3  # close to uniform


def test_41_trains():
    torch.manual_seed(19)
    V = 6
    model = NeuralMatrixLM(V, 3, "upper")
    fresh = NeuralMatrixLM(V, 3, "upper")
    fresh.load_state_dict(model.state_dict())
    tokens, lengths = adam_on_nll(model, V, steps=40, lr=0.1)
    with torch.no_grad():
        assert float(model.nll(tokens, lengths).mean()) < float(fresh.nll(tokens, lengths).mean()) - 1
    assert (model.matrices().detach()[:, ~model.mask] == 0).all()


@pytest.mark.parametrize("make", [
    lambda: ProbabilisticMatrixLM(7, d=3, algebra="dense"),
    lambda: WFSAMatrixLM(7, d=3, algebra="upper"),
    lambda: NeuralMatrixLM(7, d=3, algebra="dense", window=1),
])
def test_the_training_loss_is_the_negative_log_likelihood_per_word(make):
    """The loss the chapter passes to urnlib.train.fit is the model's own NLL per scored word, with their
    count; the loop's batched test loss gives the same mean."""
    from urnlib.chapters.matrix_embeddings.experiment import token_nll
    from urnlib.tasks.matrix_lm import PAD
    from urnlib.tokens import IGNORE, TokenData
    from urnlib.train import evaluate_loss

    torch.manual_seed(0)
    model = make().double()
    tokens = torch.tensor([[1, 2, 3, 4], [5, 6, PAD, PAD], [0, 3, 3, PAD]])
    targets = torch.where(tokens == PAD, IGNORE, 0)
    lengths = torch.tensor([4, 2, 3])
    loss, count = token_nll(model, tokens, targets)
    nll = model.nll(tokens.clamp(min=0), lengths).sum()
    assert count == 9
    torch.testing.assert_close(loss, nll / 9, rtol=1e-12, atol=1e-12)
    per_token = model.token_log_probs(tokens.clamp(min=0), lengths)
    torch.testing.assert_close(per_token.sum(1), -model.nll(tokens.clamp(min=0), lengths))
    data = TokenData(tokens, targets)
    for batch in (1, 2, 3):  # sentences of different lengths in different batches: the same mean per word
        assert evaluate_loss(model, data, batch, token_nll) == pytest.approx(float(nll.detach()) / 9,
                                                                             rel=1e-12)


# --------------------------------------------------------------------------- #
# determinism: the same seed gives the same bits, whatever the thread count
# --------------------------------------------------------------------------- #
@pytest.fixture
def threads():
    """``threads(n)`` sets torch's intra-op threads; the module's setting is restored afterwards."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


def test_lookup_gradient_sums_repeated_ids_in_their_order_with_two_threads(threads):
    """``table[ids]`` added the gradients of repeated ids with atomic float adds from several threads once the
    gradient had >= 32768 elements (an order that changes from run to run); ``_lookup`` sums them in order."""
    from urnlib.models.matrix_embedding import _lookup

    threads(2)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 20, (128, 16), generator=g)  # every id about 100 times
    upstream = torch.randn(128, 16, 32, generator=g)  # 65536 gradient elements
    table = torch.randn(20, 32, generator=g, requires_grad=True)
    out = _lookup(table, ids)
    assert torch.equal(out, table.detach()[ids])
    out.backward(upstream)
    expected = torch.zeros(20, 32)
    for i, w in enumerate(ids.reshape(-1).tolist()):  # float32, one addition at a time, in the order of ids
        expected[w] += upstream.reshape(-1, 32)[i]
    assert torch.equal(table.grad, expected)


#: On an AVX-512 machine torch's float32 matrix product sums a long reduction (here the batch, 2,560 rows, in
#: the weight gradient of model 4.1's final product) in another order at two threads than at one, so the
#: last bits differ (measured on this project's machine, Nov 2026). Whether it splits is decided at run time:
#: the same machine gave equal gradients on 27 Nov 2026 (twice, under load and on a fresh clone), so the
#: mark is not strict. The committed runs trained on one thread.
GEMM_SPLITS_REDUCTION = torch.backends.cpu.get_cpu_capability() == "AVX512"


@pytest.mark.parametrize("make, shape", [
    pytest.param(lambda: NeuralMatrixLM(60, d=4, algebra="dense"), (64, 40), marks=pytest.mark.xfail(
        GEMM_SPLITS_REDUCTION, strict=False, reason="AVX-512 GEMM: thread-dependent reduction order")),
    (lambda: ProbabilisticMatrixLM(60, d=4, algebra="dense"), (64, 40)),
    (lambda: ProbabilisticMatrixLM(300, d=200, algebra="diagonal"), (32, 20)),
    (lambda: ProbabilisticMatrixLM(20, d=200, algebra="dense"), (6, 4)),  # 40000 free entries a word
    (lambda: WFSAMatrixLM(60, d=8, algebra="upper"), (128, 40)),
], ids=["4.1", "4.2", "4.2-diagonal", "4.2-dense-200", "4.3"])
def test_training_gradients_are_bit_identical_for_one_and_two_threads(make, shape, threads):
    """The gradient of the training loss (float32, more than 32768 gathered entries, frequent words repeated)
    has the same bits at one and at two threads, and on every repetition."""
    from urnlib.chapters.matrix_embeddings.experiment import token_nll
    from urnlib.tasks.matrix_lm import PAD
    from urnlib.tokens import IGNORE

    torch.manual_seed(0)
    model = make()
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 12, shape, generator=g)
    tokens[::3, shape[1] // 2:] = PAD
    targets = torch.where(tokens == PAD, IGNORE, 0)

    def gradients(n_threads):
        threads(n_threads)
        model.zero_grad(set_to_none=True)
        token_nll(model, tokens, targets)[0].backward()
        return [p.grad.clone() for p in model.parameters()]

    reference = gradients(1)
    for n_threads in (2, 2, 2):
        assert all(torch.equal(a, b) for a, b in zip(reference, gradients(n_threads)))
