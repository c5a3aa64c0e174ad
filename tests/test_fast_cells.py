"""The fast paths of the recurrent baselines against their plain formulations (``states_reference``, the
Python loop over time with autograd through every step).

* :class:`PaperLSTM`: torch's fused LSTM kernel with rearranged weights; in training with dropout the state
  mask enters as extra input columns that shut the o gate of each dropped unit;
* :class:`SRN`: torch's fused tanh RNN (one-hot, looked-up or embedded input);
* :class:`GRU`: :class:`GRUScan`, the recurrence with a hand-written backward.

Each: values and gradients of every parameter in float64 to a tight tolerance, with and without dropout,
in training and eval mode; the same dropout masks (the same random draws) as the loop; the parameter
count and the state_dict unchanged; float32 (the kernels the chapters train with) to rounding.
"""

from __future__ import annotations

import pytest
import torch

from urnlib.models import count_parameters
from urnlib.models.cells import GRU, SRN, GRUScan, gru_parameter_count, srn_parameter_count
from urnlib.models.recurrent import PaperLSTM, lstm_parameter_count

torch.set_num_threads(1)


def _values_and_grads(model, fn, tokens, seed=11):
    """States and the gradient of a fixed weighted sum of them with respect to every parameter."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)  # the dropout masks: both formulations draw them in the same order
    H = fn(tokens)
    weights = torch.linspace(-1, 1, H.numel(), dtype=H.dtype).view_as(H)
    (H * weights).sum().backward()
    grads = {k: (p.grad.clone() if p.grad is not None else None) for k, p in model.named_parameters()}
    return H.detach(), grads


def _assert_same(model, tokens, atol_h, atol_g):
    H, g = _values_and_grads(model, model.states, tokens)
    H_ref, g_ref = _values_and_grads(model, model.states_reference, tokens)
    assert H.shape == H_ref.shape == (*tokens.shape, model.n)
    torch.testing.assert_close(H, H_ref, rtol=0, atol=atol_h)
    assert torch.equal(H == 0, H_ref == 0)  # dropped units: exactly zero in both
    for name in g_ref:
        if g_ref[name] is None:  # the readout: not reached by the states
            assert g[name] is None, name
            continue
        assert torch.isfinite(g[name]).all(), name
        torch.testing.assert_close(g[name], g_ref[name], rtol=0, atol=atol_g, msg=name)
    return H, g


def _tokens(V, B, T, seed=3):
    return torch.randint(V, (B, T), generator=torch.Generator().manual_seed(seed))


def _biases(model):
    with torch.no_grad():  # non-trivial biases, so that each gate's bias is exercised
        for p in model.parameters():
            if p.dim() == 1:
                p.uniform_(-1, 1)
    return model


# --------------------------------------------------------------------------- #
# PaperLSTM
# --------------------------------------------------------------------------- #
LSTM_CASES = [  # V, n, e, B, T
    (7, 6, 5, 9, 11),
    (12, 16, 12, 32, 20),
    (3, 1, 2, 4, 3),  # one unit
    (5, 4, 3, 1, 1),  # one sequence, one step
]


@pytest.mark.parametrize("V,n,e,B,T", LSTM_CASES)
@pytest.mark.parametrize("dropout,training", [(0.0, True), (0.05, True), (0.5, True), (0.5, False)])
def test_paper_lstm_fused_matches_the_loop(V, n, e, B, T, dropout, training):
    torch.manual_seed(V + n)
    model = _biases(PaperLSTM(V, n, e, dropout=dropout).double().train(training))
    H, g = _assert_same(model, _tokens(V, B, T), 1e-13, 1e-11)
    if dropout == 0.5 and training and n > 1:
        assert (H == 0).any() and (H != 0).any()
    assert g["gates.weight"].abs().max() > 1e-3


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_paper_lstm_forward_matches_the_loop(dropout):
    """forward() applies the dropout scale to the readout's weight: the same logits and gradients."""
    torch.manual_seed(0)
    model = _biases(PaperLSTM(9, 7, 4, dropout=dropout).double().train())
    tokens = _tokens(9, 6, 8)
    fast = _values_and_grads(model, model, tokens)
    ref = _values_and_grads(model, lambda x: model.readout(model.states_reference(x)), tokens)
    torch.testing.assert_close(fast[0], ref[0], rtol=0, atol=1e-13)
    for name in ref[1]:
        torch.testing.assert_close(fast[1][name], ref[1][name], rtol=0, atol=1e-11, msg=name)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_paper_lstm_o_gate_is_shut_exactly_for_large_pre_activations(dtype):
    """The shut gate's offset (-1e4) dominates pre-activations far beyond any a trained model reaches."""
    torch.manual_seed(1)
    model = PaperLSTM(5, 6, 3, dropout=0.5).to(dtype).train()
    with torch.no_grad():
        model.gates.weight.mul_(40)  # pre-activations in the hundreds
        model.gates.bias[2 * 6 : 3 * 6] = 300.0  # o gates wide open
    tokens = _tokens(5, 8, 9)
    if dtype == torch.float64:
        _assert_same(model, tokens, 1e-12, 1e-8)
        return
    H, g = _values_and_grads(model, model.states, tokens)  # float32: torch's (oneDNN) kernel
    H_ref, g_ref = _values_and_grads(model, model.states_reference, tokens)
    assert torch.equal(H == 0, H_ref == 0) and (H == 0).any()
    torch.testing.assert_close(H, H_ref, rtol=1e-4, atol=1e-4)
    assert all(torch.isfinite(v).all() for v in g.values() if v is not None)


def test_paper_lstm_float32_kernel_matches_the_loop():
    """float32: torch's (oneDNN) kernel against the loop, to float32 rounding."""
    torch.manual_seed(2)
    model = PaperLSTM(12, 32, 12, dropout=0.05).train()
    tokens = _tokens(12, 64, 20)
    H, g = _values_and_grads(model, model.states, tokens)
    H_ref, g_ref = _values_and_grads(model, model.states_reference, tokens)
    torch.testing.assert_close(H, H_ref, rtol=1e-5, atol=1e-6)
    assert torch.equal(H == 0, H_ref == 0)
    for name in ("embedding.weight", "gates.weight", "gates.bias"):
        torch.testing.assert_close(g[name], g_ref[name], rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("dropout,training", [(0.0, False), (0.3, True)])
def test_paper_lstm_cell_states_behind_the_fused_states(dropout, training):
    """cells=True: the states are those of cells=False, bit for bit; the cell states (recomputed from them,
    the kernel returns only the last) are the loop's, to rounding."""
    torch.manual_seed(4)
    model = _biases(PaperLSTM(6, 5, 3, dropout=dropout).double().train(training))
    tokens = _tokens(6, 4, 7)
    runs = {}
    for name, fn in (("fast", model.states), ("loop", model.states_reference)):
        torch.manual_seed(5)
        runs[name] = fn(tokens, cells=True)
    torch.manual_seed(5)
    assert torch.equal(runs["fast"][0], model.states(tokens))
    for fast, loop in zip(runs["fast"], runs["loop"]):
        torch.testing.assert_close(fast, loop, rtol=0, atol=1e-13)
    assert not torch.allclose(runs["fast"][1], runs["fast"][0])


def test_paper_lstm_sigmoid_candidate_uses_the_loop():
    """torch's cell has a tanh candidate: the printed sigmoid variant is the loop itself."""
    torch.manual_seed(4)
    model = PaperLSTM(6, 5, 3, candidate="sigmoid", dropout=0.2).double().train()
    tokens = _tokens(6, 4, 7)
    for cells in (False, True):
        out = []
        for fn in (model.states, model.states_reference):
            torch.manual_seed(5)
            out.append(fn(tokens, cells=cells))
        assert all(torch.equal(a, b) for a, b in zip(*out)) if cells else torch.equal(*out)
    torch.manual_seed(5)
    logits = model(tokens)
    torch.manual_seed(5)
    assert torch.equal(logits, model.readout(model.states_reference(tokens)))


def test_paper_lstm_parameters_and_state_dict_unchanged():
    model = PaperLSTM(12, 16, 12)
    assert count_parameters(model) == lstm_parameter_count(12, 16, 12)
    assert {k: tuple(v.shape) for k, v in model.state_dict().items()} == {
        "embedding.weight": (12, 12), "gates.weight": (64, 28), "gates.bias": (64,),
        "readout.weight": (12, 16), "readout.bias": (12,)}


# --------------------------------------------------------------------------- #
# SRN and GRU
# --------------------------------------------------------------------------- #
CELL_CASES = [  # V, n, e, B, T
    (5, 10, None, 8, 13),  # localist, V <= n: one-hot rows into the kernel
    (9, 4, None, 6, 7),  # localist, V > n: looked-up W_x x_t through an identity
    (11, 6, 3, 7, 9),  # embedding
    (4, 3, 2, 1, 1),  # one sequence, one step
]


@pytest.mark.parametrize("cls", [SRN, GRU])
@pytest.mark.parametrize("V,n,e,B,T", CELL_CASES)
@pytest.mark.parametrize("dropout,training", [(0.0, True), (0.0, False), (0.4, True), (0.4, False)])
def test_cell_fast_path_matches_the_loop(cls, V, n, e, B, T, dropout, training):
    torch.manual_seed(V * n)
    model = _biases(cls(V, n, e, dropout=dropout).double().train(training))
    H, g = _assert_same(model, _tokens(V, B, T), 1e-13, 1e-11)
    if dropout and training and B * n > 8:
        assert (H == 0).any()
    assert g["recurrent.weight"].abs().max() > 1e-4 or T == 1


@pytest.mark.parametrize("cls", [SRN, GRU])
def test_cell_float32_fast_path_matches_the_loop(cls):
    torch.manual_seed(6)
    model = cls(21, 150, None).train()
    tokens = _tokens(21, 32, 24)
    H, g = _values_and_grads(model, model.states, tokens)
    H_ref, g_ref = _values_and_grads(model, model.states_reference, tokens)
    torch.testing.assert_close(H, H_ref, rtol=1e-5, atol=1e-6)
    for name in ("input.weight", "input.bias", "recurrent.weight"):
        torch.testing.assert_close(g[name], g_ref[name], rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("with_mask", [False, True])
def test_gru_scan_gradcheck(with_mask):
    g = torch.Generator().manual_seed(7)
    T, B, n = 4, 3, 2
    gx = torch.randn(T, B, 3 * n, dtype=torch.float64, generator=g, requires_grad=True)
    U = torch.randn(3 * n, n, dtype=torch.float64, generator=g, requires_grad=True)
    mask = torch.rand(B, n, dtype=torch.float64, generator=g) + 0.5 if with_mask else None
    assert torch.autograd.gradcheck(lambda a, b: GRUScan.apply(a, b, mask), (gx, U))


@pytest.mark.parametrize("cls,count", [(SRN, srn_parameter_count), (GRU, gru_parameter_count)])
@pytest.mark.parametrize("e", [None, 4])
def test_cell_parameters_and_state_dict_unchanged(cls, count, e):
    model = cls(7, 5, e)
    assert count_parameters(model) == count(7, 5, e)
    keys = {"input.weight", "input.bias", "recurrent.weight", "readout.weight", "readout.bias"}
    assert set(model.state_dict()) == keys | ({"embedding.weight"} if e else set())


# --------------------------------------------------------------------------- #
# determinism: same seed, same numbers
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("make", [lambda: PaperLSTM(12, 16, 12), lambda: SRN(21, 30), lambda: GRU(5, 10),
                                  lambda: GRU(30, 8, 6, dropout=0.1)])
def test_fast_paths_are_deterministic(make):
    def run():
        torch.manual_seed(0)
        model = make().train()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        tokens = _tokens(model.vocab_size, 16, 12)
        for _ in range(2):
            loss = model(tokens).logsumexp(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return [p.detach().clone() for p in model.parameters()]

    assert all(torch.equal(a, b) for a, b in zip(run(), run()))
