"""Tests for urnlib.models.cells: the Elman SRN and the GRU of lecture 004 as language models.
Every test asserts a piece of the maths (the equations are written out here, not taken from the module)."""

import math

import pytest
import torch

from urnlib.models import count_parameters
from urnlib.models.cells import GRU, SRN, gru_parameter_count, srn_parameter_count
from urnlib.params import ParameterError
from urnlib.train import TokenData, TrainConfig, fit

torch.set_num_threads(1)

CELLS = [SRN, GRU]


def _inputs(model, tokens):
    """x_t as explicit column vectors (B, T, d): one-hot for localist input, else the embedding row."""
    if model.embedding_size is None:
        return torch.nn.functional.one_hot(tokens, model.vocab_size).double()
    return model.embedding.weight[tokens]


# --------------------------------------------------------------------------- #
# the equations, by hand, from the module's own weights (float64)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("e", [None, 3])
def test_srn_two_steps_by_hand(e):
    torch.manual_seed(0)
    V, n = 5, 4
    model = SRN(V, n, e).double().eval()
    with torch.no_grad():
        model.input.bias.uniform_(-0.5, 0.5)  # nonzero b so the bias is checked too
    tokens = torch.tensor([[1, 3], [4, 0]])
    W_x, W_h, b = model.input.weight, model.recurrent.weight, model.input.bias
    with torch.no_grad():
        x = _inputs(model, tokens)
        H = model.states(tokens)
        for i in range(2):
            h0 = torch.zeros(n, dtype=torch.float64)
            h1 = torch.tanh(W_x @ x[i, 0] + W_h @ h0 + b)  # h_t = tanh(W_x x_t + W_h h_{t-1} + b)
            h2 = torch.tanh(W_x @ x[i, 1] + W_h @ h1 + b)
            assert torch.allclose(H[i, 0], h1, atol=1e-12)
            assert torch.allclose(H[i, 1], h2, atol=1e-12)
            logits = model(tokens)
            assert torch.allclose(logits[i, 1], model.readout.weight @ h2 + model.readout.bias, atol=1e-12)


@pytest.mark.parametrize("e", [None, 3])
def test_gru_two_steps_by_hand(e):
    torch.manual_seed(1)
    V, n = 5, 4
    model = GRU(V, n, e).double().eval()
    with torch.no_grad():
        model.input.bias.uniform_(-0.5, 0.5)
    tokens = torch.tensor([[2, 2], [0, 4]])
    W_z, W_r, W = model.input.weight.split(n)
    U_z, U_r, U = model.recurrent.weight.split(n)
    b_z, b_r, b = model.input.bias.split(n)
    sigma = torch.sigmoid

    def step(x, h):
        r = sigma(W_r @ x + U_r @ h + b_r)  # reset gate
        h_tilde = torch.tanh(W @ x + U @ (r * h) + b)  # candidate, r applied before U
        z = sigma(W_z @ x + U_z @ h + b_z)  # update gate
        return (1 - z) * h + z * h_tilde  # lecture 004: (1 - z) on the old state

    with torch.no_grad():
        x = _inputs(model, tokens)
        H = model.states(tokens)
        for i in range(2):
            h1 = step(x[i, 0], torch.zeros(n, dtype=torch.float64))
            h2 = step(x[i, 1], h1)
            assert torch.allclose(H[i, 0], h1, atol=1e-12)
            assert torch.allclose(H[i, 1], h2, atol=1e-12)
            assert (h2 - h1).abs().max() > 1e-3  # the second step really used h_1


def test_gru_update_gate_convention():
    """z -> 1 takes the candidate, z -> 0 keeps the old state (here h_0 = 0)."""
    torch.manual_seed(2)
    V, n = 4, 3
    model = GRU(V, n).double().eval()
    tokens = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        model.input.bias[:n] = -60.0  # z = sigma(-60) ~ 0
        assert model.states(tokens).abs().max() < 1e-20
        model.input.bias[:n] = 60.0  # z ~ 1: h_t = h~_t
        H = model.states(tokens)
        W, U, b = model.input.weight[2 * n :], model.recurrent.weight[2 * n :], model.input.bias[2 * n :]
        r1 = torch.sigmoid(model.input.weight[n : 2 * n, 2] + model.input.bias[n : 2 * n]
                           + model.recurrent.weight[n : 2 * n] @ H[0, 0])
        assert torch.allclose(H[0, 0], torch.tanh(W[:, 1] + b), atol=1e-12)
        assert torch.allclose(H[0, 1], torch.tanh(W[:, 2] + U @ (r1 * H[0, 0]) + b), atol=1e-12)


@pytest.mark.parametrize("cls", CELLS)
def test_localist_equals_identity_embedding(cls):
    torch.manual_seed(3)
    V, n = 6, 5
    localist = cls(V, n).double().eval()
    embedded = cls(V, n, V).double().eval()
    with torch.no_grad():
        embedded.embedding.weight.copy_(torch.eye(V, dtype=torch.float64))
        for name in ("input", "recurrent", "readout"):
            getattr(embedded, name).load_state_dict(getattr(localist, name).state_dict())
        tokens = torch.randint(V, (3, 7), generator=torch.Generator().manual_seed(4))
        assert torch.allclose(localist(tokens), embedded(tokens), atol=1e-12)
        assert torch.allclose(localist.states(tokens), embedded.states(tokens), atol=1e-12)


# --------------------------------------------------------------------------- #
# parameter counts
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("V,n,e,n_out",
                         [(5, 4, None, None), (7, 10, 3, None), (29, 16, None, 2), (9, 8, 12, 2)])
def test_parameter_counts_closed_form(V, n, e, n_out):
    d = V if e is None else e
    emb = 0 if e is None else V * e
    out = V if n_out is None else n_out
    assert count_parameters(SRN(V, n, e, n_out=n_out)) == srn_parameter_count(V, n, e, n_out) \
        == n * d + n * n + n + emb + (n + 1) * out
    assert count_parameters(GRU(V, n, e, n_out=n_out)) == gru_parameter_count(V, n, e, n_out) \
        == 3 * (n * d + n * n + n) + emb + (n + 1) * out


def test_parameter_counts_literal():
    assert srn_parameter_count(5, 4) == 20 + 16 + 4 + 25 == 65
    assert gru_parameter_count(5, 4) == 3 * (20 + 16 + 4) + 25 == 145
    assert srn_parameter_count(5, 4, 3, 2) == 12 + 16 + 4 + 15 + 10 == 57


# --------------------------------------------------------------------------- #
# shapes, dropout, arguments
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("cls", CELLS)
@pytest.mark.parametrize("e", [None, 4])
@pytest.mark.parametrize("n_out", [None, 2])
def test_forward_shapes(cls, e, n_out):
    V, n, B, T = 7, 6, 3, 5
    model = cls(V, n, e, n_out=n_out).eval()
    tokens = torch.randint(V, (B, T))
    assert model.states(tokens).shape == (B, T, n)
    assert model(tokens).shape == (B, T, V if n_out is None else n_out)


@pytest.mark.parametrize("cls", CELLS)
@pytest.mark.parametrize("e", [None, 4])
def test_dropout_only_in_training(cls, e):
    torch.manual_seed(5)
    V, n = 6, 8
    model = cls(V, n, e, dropout=0.5)
    tokens = torch.randint(V, (4, 6), generator=torch.Generator().manual_seed(6))
    model.eval()
    with torch.no_grad():
        a, b = model(tokens), model(tokens)
    assert torch.equal(a, b)
    model.train()
    with torch.no_grad():
        c, d = model(tokens), model(tokens)
    assert not torch.equal(c, d)
    assert not torch.equal(a, c)
    # h mask is one per sequence: a zeroed unit stays zero at every step
    with torch.no_grad():
        H = model.states(tokens)
    zero = H == 0
    assert torch.equal(zero, zero[:, :1].expand_as(zero)) and zero.any()


@pytest.mark.parametrize("cls", CELLS)
@pytest.mark.parametrize(
    "args,kwargs",
    [((0, 4), {}), ((5, 0), {}), ((5, 4, 0), {}), ((5, 4), {"dropout": 1.0}), ((5, 4), {"dropout": -0.1}),
     ((5, 4), {"n_out": 0}), ((5, "4"), {}), ((5.0, 4), {}), ((5, 4, 2.5), {}), ((5, True), {})],
)
def test_bad_arguments(cls, args, kwargs):
    with pytest.raises(ParameterError):
        cls(*args, **kwargs)


# --------------------------------------------------------------------------- #
# training through the house loop
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("cls", CELLS)
@pytest.mark.parametrize("e", [None, 3])
def test_one_adam_step_through_fit(cls, e):
    torch.manual_seed(7)
    V, n = 4, 5
    g = torch.Generator().manual_seed(8)
    inputs = torch.randint(V, (6, 5), generator=g)
    targets = torch.randint(V, (6, 5), generator=g)
    targets[:, -1] = -100  # an ignored position
    data = TokenData(inputs, targets)
    model = cls(V, n, e, dropout=0.1)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    history, wall = fit(model, data, data, TrainConfig(epochs=1, batch_size=6, lr=0.01, seed=0), desc="cells")
    assert len(history.rows) == 1 and math.isfinite(history.rows[0]["train_loss"])
    assert math.isfinite(history.rows[0]["test_loss"]) and wall >= 0
    after = model.state_dict()
    for name in ("input.weight", "input.bias", "recurrent.weight", "readout.weight"):
        assert not torch.equal(before[name], after[name]), name
    assert not model.training
