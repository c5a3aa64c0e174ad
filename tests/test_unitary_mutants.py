"""urnlib.models.unitary at the edges that mutants of the module survived (benchmarks/mutation.py, issue 48):
inverted dropout (reference-facts, "URN / k-TURN": rate 0.05 on the parameters, the state and the output),
the state mask on the main path and its default. Fast: the mutation run puts this file first."""

from __future__ import annotations

import math

import torch

from urnlib.models.unitary import URN, ArbitraryRNN, _dropout_mask

torch.set_num_threads(1)


def test_a_dropout_mask_zeroes_a_share_p_and_scales_the_rest_by_one_over_one_minus_p():
    """Inverted dropout: each entry 0 with probability p, else 1 / (1 - p), so its mean is 1."""
    torch.manual_seed(0)
    n, p = 40_000, 0.2
    mask = _dropout_mask((n,), p, torch.zeros(1, dtype=torch.float64))
    assert mask.dtype == torch.float64 and mask.shape == (n,)
    assert set(mask.unique().tolist()) == {0.0, 1 / (1 - p)}
    dropped = float((mask == 0).double().mean())
    assert abs(dropped - p) < 5 * math.sqrt(p * (1 - p) / n)


def _norms(model, seed=0):
    tokens = torch.randint(0, 5, (16, 6), generator=torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)
    return model.train().states(tokens).detach().norm(dim=-1)


def test_the_state_is_dropped_by_default_and_only_then():
    """The matrices are orthogonal (parameter dropout keeps them so): without state dropout every state has
    norm 1; with it (the default; reference-facts: off only for cross-serial), one mask per sequence
    scales the state, and the norms leave 1."""
    torch.manual_seed(1)
    kept = _norms(URN(5, 8, dropout=0.3, state_dropout=False).double())
    assert float((kept - 1).abs().max()) < 1e-12
    torch.manual_seed(1)
    dropped = _norms(URN(5, 8, dropout=0.3).double())
    assert float((dropped - 1).abs().max()) > 0.1



def _training_states(cls, seed=0, **opts):
    torch.manual_seed(3)
    model = cls(5, 8, dropout=0.3, **opts).double().train()
    tokens = torch.randint(0, 5, (4, 6), generator=torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)
    return model.states(tokens).detach()


def test_both_models_drop_the_state_unless_told_not_to():
    for cls in (URN, ArbitraryRNN):
        default = _training_states(cls)
        assert torch.equal(default, _training_states(cls, state_dropout=True))
        assert not torch.equal(default, _training_states(cls, state_dropout=False))


def test_a_model_without_dropout_draws_no_random_numbers_in_training():
    """Dropout 0 means no mask at all: a training step leaves the global random stream (which orders the
    batches) where it was."""
    tokens = torch.randint(0, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    for model in (URN(5, 8, dropout=0.0), URN(5, 8, dropout=0.0, param_mask="sequence"),
                  ArbitraryRNN(5, 8, dropout=0.0)):
        model.train()
        torch.manual_seed(5)
        model(tokens)
        after = torch.rand(3)
        torch.manual_seed(5)
        assert torch.equal(after, torch.rand(3)), model


def test_parameter_dropout_changes_the_matrices_in_training():
    """Without state dropout the states of a URN in training differ from its states in evaluation only by the
    parameter mask of the batch (one per symbol by default)."""
    torch.manual_seed(2)
    model = URN(5, 8, dropout=0.3, state_dropout=False).double()
    tokens = torch.randint(0, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    trained, evaluated = model.train().states(tokens).detach(), model.eval().states(tokens).detach()
    assert not torch.allclose(trained, evaluated)


def test_the_low_rank_forms_are_used_from_4k_equal_to_n(monkeypatch):
    """Module docstring: a k-TURN with 4k <= n exponentiates through the rank-2k form; so does the training
    loop of the authors' per-sequence masks (4k = n = 8 here, the boundary)."""
    from urnlib.models import unitary

    calls = []
    for name in ("expm_truncated", "truncated_factors"):
        real = getattr(unitary, name)
        monkeypatch.setattr(unitary, name, lambda *a, _real=real, _name=name, **kw: calls.append(_name)
                            or _real(*a, **kw))
    tokens = torch.randint(0, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    URN(5, 8, 2).eval().states(tokens)
    assert calls == ["expm_truncated"]
    calls.clear()
    URN(5, 8, 2, dropout=0.3, param_mask="sequence").train().states(tokens)
    assert calls == ["truncated_factors"]
    calls.clear()
    URN(5, 8, 3, dropout=0.3, param_mask="sequence").train().states(tokens)  # 4k > n: dense
    assert calls == []


def test_the_baselines_matrices_are_dropped_in_training_and_one_unit_is_a_model():
    torch.manual_seed(2)
    model = ArbitraryRNN(5, 8, dropout=0.3, state_dropout=False).double()
    tokens = torch.randint(0, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    trained, evaluated = model.train().states(tokens).detach(), model.eval().states(tokens).detach()
    assert not torch.allclose(trained, evaluated)
    assert ArbitraryRNN(5, 1).eval().states(tokens).shape == (3, 4, 1)  # any n >= 1, unlike the URN's even n


def test_output_dropout_scales_the_states_read_out_in_training():
    torch.manual_seed(2)
    model = URN(5, 8, dropout=0.3, state_dropout=False).double().train()
    tokens = torch.randint(0, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    torch.manual_seed(4)
    H = model.readout_parts(tokens)[0].detach()
    torch.manual_seed(4)
    states = model.states(tokens).detach()  # the same parameter mask, drawn first
    assert not torch.allclose(H, states)
    ratio = H / states  # one output mask per sequence: 0 or 1 / (1 - p) per unit, the same at every step
    assert torch.allclose(ratio, ratio[:, :1].expand_as(ratio))


def test_edge_sizes_one_symbol_one_output_one_sequence():
    model = URN(1, 4, n_out=1).double().eval()
    Q = model.matrices()[0].detach()
    H = model.states(torch.zeros(2, 3, dtype=torch.long)).detach()
    assert H.shape == (2, 3, 4) and model(torch.zeros(2, 3, dtype=torch.long)).shape == (2, 3, 1)
    torch.testing.assert_close(H[0, 2], model.h0 @ Q @ Q @ Q)
    one = URN(5, 4).double().eval()  # a batch reading one symbol of five
    h = one.states(torch.full((1, 2), 3)).detach()[0, -1]
    torch.testing.assert_close(h, one.h0 @ one.matrices()[3].detach() @ one.matrices()[3].detach())
    torch.manual_seed(0)
    seq = URN(5, 8, dropout=0.3, param_mask="sequence").train()
    assert seq.states(torch.zeros(1, 3, dtype=torch.long)).shape == (1, 3, 8)  # one sequence
