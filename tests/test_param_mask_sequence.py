"""The URN's parameter dropout as the authors' code draws it (``param_mask="sequence"``, reference-facts:
"one mask per sequence reused at every step, on the l skew parameters"): each sequence its own mask, shared by
the symbols it reads, so that each sequence reads its own orthogonal matrices and a matched pair of generators
that are exact negatives stays an exact inverse pair in every sequence."""

import pytest
import torch

from urnlib.models.registry import build_model
from urnlib.models.unitary import URN, _dropout_mask

torch.set_num_threads(1)
V, N = 5, 8


def _model(k=None, p=0.3, state_dropout=True, seed=0):
    torch.manual_seed(seed)
    return URN(V, N, k, dropout=p, state_dropout=state_dropout, param_mask="sequence").double()


@pytest.mark.parametrize("k", [None, 1])  # the full exponential and the low-rank one (4k <= n)
def test_each_sequence_reads_orthogonal_matrices_of_its_own_masked_parameters(k):
    model = _model(k)
    masks = _dropout_mask((3, model.embedding.shape[1]), 0.3, model.embedding)
    Q = model.sequence_matrices(masks).detach()
    assert Q.shape == (3, V, N, N)
    eye = torch.eye(N, dtype=torch.float64)
    assert float((Q.transpose(-1, -2) @ Q - eye).abs().max()) < 1e-12  # orthogonal
    for b in range(3):  # row b: expm(S(U * mask_b)), by torch's own exponential
        masked = model.generators(model.embedding.detach() * masks[b])
        torch.testing.assert_close(Q[b], torch.linalg.matrix_exp(masked), rtol=0, atol=1e-12)
    assert not torch.allclose(Q[0], Q[1])  # two sequences, two masks


@pytest.mark.parametrize("k", [None, 1])
def test_an_inverse_pair_stays_inverse_in_every_sequence(k):
    model = _model(k)
    with torch.no_grad():
        model.embedding[1] = -model.embedding[0]  # Q(1) = Q(0)^T: a pair composing to the identity
    masks = _dropout_mask((4, model.embedding.shape[1]), 0.3, model.embedding)
    Q = model.sequence_matrices(masks).detach()
    residual = (Q[:, 0] @ Q[:, 1] - torch.eye(N, dtype=torch.float64)).abs().max()
    assert float(residual) < 1e-12


@pytest.mark.parametrize("k", [None, 1])  # each sequence's n x n matrices, and the low-rank steps (4k <= n)
def test_training_states_follow_each_sequence_with_its_own_masks(k):
    """The states of a batch in training equal the loop written out by hand, drawing the same masks in the
    same order (parameters, then state), and keep unit norm without state dropout."""
    model = _model(k).train()
    tokens = torch.randint(0, V, (3, 6), generator=torch.Generator().manual_seed(1))
    torch.manual_seed(7)
    H = model.states(tokens)
    torch.manual_seed(7)
    masks = _dropout_mask((3, model.embedding.shape[1]), 0.3, model.embedding)
    state = _dropout_mask((3, N), 0.3, model.embedding)
    for b in range(3):
        Qb = torch.linalg.matrix_exp(model.generators(model.embedding.detach() * masks[b]))
        h = model.h0.double()
        for t in range(6):
            h = (h * state[b]) @ Qb[tokens[b, t]]
            torch.testing.assert_close(H[b, t].detach(), h, rtol=0, atol=1e-12)
    plain = _model(k, state_dropout=False).train()
    norms = plain.states(tokens).detach().norm(dim=-1)
    torch.testing.assert_close(norms, torch.ones_like(norms), rtol=0, atol=1e-12)


def test_gradients_reach_every_symbol_read_and_evaluation_has_no_mask():
    model = _model(k=1).train()
    tokens = torch.tensor([[0, 1, 2, 3], [3, 2, 1, 0]])
    model(tokens).square().sum().backward()
    assert torch.isfinite(model.embedding.grad).all() and (model.embedding.grad[:4].abs().sum(1) > 0).all()
    assert float(model.embedding.grad[4].abs().sum()) == 0.0  # symbol 4 is never read
    model.eval()
    symbol = URN(V, N, 1, dropout=0.3, param_mask="symbol").double().eval()
    symbol.load_state_dict(model.state_dict())
    torch.testing.assert_close(model.states(tokens), symbol.states(tokens), rtol=0, atol=0)


def test_the_registry_builds_it_from_a_spec():
    model = build_model({"kind": "urn", "n": 8, "k": 1, "dropout": 0.05, "param_mask": "sequence"}, V)
    assert model.param_mask == "sequence"
