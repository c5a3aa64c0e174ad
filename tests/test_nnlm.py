"""Bengio et al. (2003) neural language model (lecture 004): maths, context window, counts, mixing."""

import numpy as np
import pytest
import torch

from urnlib.models.nnlm import ALPHA_GRID, BengioNNLM, best_alpha, mix, nnlm_parameter_count
from urnlib.params import ParameterError
from urnlib.train import TokenData, TrainConfig, fit


def _model(V=7, n=4, m=3, h=5, direct=True, start_id=0):
    torch.manual_seed(0)
    model = BengioNNLM(V, n, m, h, direct=direct, start_id=start_id).double()
    with torch.no_grad():  # non-zero biases so they are checked too
        model.bias.normal_()
        if model.hidden_layer is not None:
            model.hidden_layer.bias.normal_()
    return model


@pytest.mark.parametrize("direct,h", [(True, 5), (False, 5), (True, 0)])
def test_logits_by_hand(direct, h):
    V, n, m, start = 7, 4, 3, 6
    model = _model(V, n, m, h, direct, start)
    tokens = torch.tensor([[2, 5, 1, 3, 4]])
    logits = model(tokens)
    assert logits.shape == (1, 5, V) and logits.dtype == torch.float64
    C = model.embedding.weight.detach()
    for t in (0, 1, 4):  # padded twice, padded once, full window
        ctx = [int(tokens[0, t - j]) if t - j >= 0 else start for j in range(n - 1)]  # w_t, w_{t-1}, ...
        x = torch.cat([C[w] for w in ctx])
        y = model.bias.detach().clone()
        if direct:
            y = y + model.direct.weight.detach() @ x
        else:
            assert model.direct is None
        if h > 0:
            H, d = model.hidden_layer.weight.detach(), model.hidden_layer.bias.detach()
            y = y + model.readout.weight.detach() @ torch.tanh(d + H @ x)
        else:
            assert model.hidden_layer is None and model.readout is None
        torch.testing.assert_close(logits[0, t], y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_context_window_is_previous_n_minus_1_tokens(n):
    model = _model(V=9, n=n, m=2, h=4, start_id=8)
    tokens = torch.tensor([[1, 2, 3, 4, 5, 6, 7]])
    base = model(tokens)
    for k in range(tokens.shape[1]):
        changed = tokens.clone()
        changed[0, k] = 0
        out = model(changed)
        for t in range(tokens.shape[1]):
            inside = t - n + 2 <= k <= t
            assert torch.equal(out[0, t], base[0, t]) != inside, (k, t)
    # left padding: the first position equals a sequence that starts with n - 2 explicit start ids
    padded = torch.cat([torch.full((1, n - 2), 8), tokens], dim=1)
    torch.testing.assert_close(model(padded)[0, n - 2 :], base[0])


@pytest.mark.parametrize("V,n,m,h,direct", [
    (7, 4, 3, 5, True), (7, 4, 3, 5, False), (7, 4, 3, 0, True), (11, 2, 1, 1, False),
    (50, 5, 60, 50, True), (50, 3, 30, 0, True), (30, 5, 30, 100, False),
])
def test_parameter_count_closed_form(V, n, m, h, direct):
    model = BengioNNLM(V, n, m, h, direct=direct)
    counted = sum(p.numel() for p in model.parameters())
    assert counted == nnlm_parameter_count(V, n, m, h, direct)
    by_parts = V + h + (V * (n - 1) * m if direct else 0) + V * h + h * (n - 1) * m + V * m
    assert counted == by_parts
    if direct:  # Bengio et al. 2003's form
        assert counted == V * (1 + n * m + h) + h * (1 + (n - 1) * m)


def test_softmax_sums_to_one():
    model = _model()
    p = torch.softmax(model(torch.randint(0, 7, (3, 6))), dim=-1)
    torch.testing.assert_close(p.sum(-1), torch.ones(3, 6, dtype=torch.float64))


def test_mix_and_best_alpha():
    rng = np.random.default_rng(0)
    a, b = rng.dirichlet(np.ones(10), size=4), rng.dirichlet(np.ones(10), size=4)
    for alpha in (0.0, 0.3, 1.0):
        np.testing.assert_allclose(mix(a, b, alpha).sum(-1), 1.0)
    np.testing.assert_allclose(mix(a, b, 0.25), 0.25 * a + 0.75 * b)
    np.testing.assert_array_equal(mix(a, b, 1), a)
    low, high = np.full(20, 0.1), rng.uniform(0.2, 0.9, 20)
    assert best_alpha(high, low) == 1.0
    assert best_alpha(low, high) == 0.0
    assert 0.0 < best_alpha(np.array([0.9, 0.01]), np.array([0.01, 0.9])) < 1.0
    assert len(ALPHA_GRID) == 21 and ALPHA_GRID[1] == 0.05


@pytest.mark.parametrize("kwargs", [
    dict(order=1), dict(order=0), dict(hidden=-1), dict(hidden=0, direct=False), dict(embedding_size=0),
    dict(vocab_size=0), dict(start_id=7), dict(start_id=-1), dict(order=2.0),
])
def test_bad_model_arguments(kwargs):
    args = dict(vocab_size=7, order=3, embedding_size=2, hidden=4, direct=True, start_id=0) | kwargs
    V, n, m, h = args.pop("vocab_size"), args.pop("order"), args.pop("embedding_size"), args.pop("hidden")
    with pytest.raises(ParameterError):
        BengioNNLM(V, n, m, h, **args)
    if "start_id" not in kwargs:
        with pytest.raises(ParameterError):
            nnlm_parameter_count(V, n, m, h, args["direct"])


@pytest.mark.parametrize("alpha", [-0.1, 1.05, float("nan"), "0.5", True])
def test_bad_alpha(alpha):
    with pytest.raises(ParameterError):
        mix(np.array([0.5]), np.array([0.5]), alpha)


def test_bad_probabilities():
    with pytest.raises(ParameterError):
        mix(np.array([0.5, 0.5]), np.array([0.5]), 0.5)
    with pytest.raises(ParameterError):
        mix(np.array([1.5]), np.array([0.5]), 0.5)
    with pytest.raises(ParameterError):
        best_alpha(np.array([]), np.array([]))


def test_one_adam_step_through_fit():
    torch.manual_seed(0)
    model = BengioNNLM(6, 3, 4, 8, start_id=5)
    inputs = torch.randint(0, 5, (8, 5))
    targets = torch.roll(inputs, -1, dims=1)
    targets[:, -1] = -100
    data = TokenData(inputs, targets)
    before = [p.detach().clone() for p in model.parameters()]
    history, _ = fit(model, data, data, TrainConfig(epochs=1, batch_size=8, lr=0.01))
    assert len(history.rows) == 1 and np.isfinite(history.rows[0]["train_loss"])
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


# ---------------------------------------------------------------------------------------- the Brown stream
# urnlib.chapters.primer.lm: the rows the models train on, and the scoring of a stream
@pytest.mark.parametrize("length, window, warmup", [(10, 4, 2), (12, 4, 0), (7, 3, 5), (1, 5, 3)])
def test_rows_predict_every_token_once_from_the_token_before_it(length, window, warmup):
    from urnlib.tasks.brown_lm import rows
    from urnlib.train import IGNORE

    stream = list(range(10, 10 + length))
    start = 99
    data = rows(stream, window, warmup, start)
    assert data.inputs.shape[1] == warmup + window
    keep = data.targets != IGNORE
    assert sorted(data.targets[keep].tolist()) == stream  # every token exactly once
    assert (data.targets[:, :warmup] == IGNORE).all()
    for r, t in zip(*torch.nonzero(keep, as_tuple=True)):
        target = int(data.targets[r, t])
        i = stream.index(target)
        assert int(data.inputs[r, t]) == (stream[i - 1] if i > 0 else start)
        # the warm-up holds the tokens before, so an n-gram sees its whole context inside the row
        context = data.inputs[r, max(0, t - warmup + 1) : t + 1].tolist()
        expected = ([start] * warmup + stream)[i : i + warmup][-len(context):]
        assert context == expected


def test_kneser_ney_stream_scoring_matches_prob():
    from urnlib.chapters.primer.lm import kneser_ney_probs
    from urnlib.tasks.brown_lm import perplexity
    from urnlib.models.ngram import KneserNey

    words = "the cat sat on the mat and the dog sat on the cat".split()
    vocab = ["<unk>", "the", "cat", "sat", "on", "mat", "and", "dog"]
    lm = KneserNey(3).fit([words], vocab)
    test = "the dog sat on the mat".split()
    p = kneser_ney_probs(lm, test)
    context = ["<s>", "<s>"]
    for w, q in zip(test, p):
        assert q == pytest.approx(lm.prob(w, context))
        context = context[1:] + [w]
    assert perplexity(np.array([0.5, 0.5])) == pytest.approx(2.0)


@pytest.mark.parametrize("spec", ["nnlm 3 8 6 direct", "lstm 8 e6", "srn 8"])
def test_float32_scoring_in_batches_matches_float64(spec):
    """The chapter scores in the model's dtype, a batch of rows at a time, never all logits at once; in
    float32 the perplexity moves by ~1e-8 relative from float64 scoring (next_token_probs)."""
    from urnlib.chapters.primer import lm as primer_lm
    from urnlib.tasks import brown_lm

    V = 300
    stream = torch.randint(0, V - 1, (700,), generator=torch.Generator().manual_seed(0)).tolist()
    data = primer_lm.rows(stream, window=16, warmup=4, start_id=V - 1)
    torch.manual_seed(0)
    model = primer_lm.build(primer_lm.lm_spec(spec), V, V - 1)
    with torch.no_grad():  # a sharper distribution than at initialisation; the recurrence is left as it is:
        # an SRN whose recurrent weights are scaled 8x is chaotic, and float32 rounding then grows along the
        # row by orders of magnitude (1e-5 relative at 2x, 4e-3 at 8x on an AVX-512 machine), whatever
        # scores it
        for name, p in model.named_parameters():
            if "recurrent" not in name and "_hh" not in name:
                p.mul_(8.0)
    logp = primer_lm.target_log_probs(model, data, batch_size=7)
    assert model.training  # the mode is restored
    p64 = brown_lm.next_token_probs(model, data)
    assert logp.dtype == np.float64 and len(logp) == len(stream) == len(p64)
    np.testing.assert_allclose(np.exp(logp), p64, rtol=1e-4)
    ppl32, ppl64 = float(np.exp(-logp.mean())), brown_lm.perplexity(p64)
    assert ppl32 == pytest.approx(ppl64, rel=1e-6)
    # the same numbers whatever the batch size (no state carried between rows)
    np.testing.assert_allclose(primer_lm.target_log_probs(model, data, batch_size=64), logp, rtol=1e-5)
