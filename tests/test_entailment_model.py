"""Tests for urnlib.models.entailment: the siamese entailment classifier of paper 002 (appendix C.1)
packed into urnlib's one training loop, and its variable-renaming augmentation."""

import itertools
import math
from collections import Counter

import pytest
import torch
import torch.nn.functional as F

from urnlib.languages.logic import permute_variables
from urnlib.models import count_parameters
from urnlib.models.entailment import (
    EntailmentModel,
    TorchRNN,
    entailment_accuracy,
    entailment_parameter_count,
    pack_pairs,
    pack_targets,
    predict_labels,
    torch_rnn_parameter_count,
)
from urnlib.params import ParameterError
from urnlib.train import IGNORE, TokenData, TrainConfig, fit

torch.set_num_threads(1)

# toy vocabulary: pad 0, separator 1, variables 2..9, connective "&" 10, negation "~" 11
PAD, SEP, AND, NOT = 0, 1, 10, 11
VARS = list(range(2, 10))
V = 12
SEEDS = [0, 1]


def make_model(kind="gru", e=5, d=6, hidden=7, layers=1, variable_ids=None, seed=0, **kw):
    torch.manual_seed(seed)
    permute = permute_variables if variable_ids is not None else None
    return EntailmentModel(V, e, TorchRNN(kind, e, d, layers), d, hidden, variable_ids=variable_ids,
                           permute=permute, **kw)


def rows():
    """Hand-made packed rows: different lengths, padding, an empty premise, an empty hypothesis."""
    return torch.tensor([
        [2, 10, 3, 1, 3, 0, 0],    # 2 & 3 |= 3
        [4, 1, 11, 5, 10, 6, 0],   # 4 |= ~5 & 6
        [1, 7, 0, 0, 0, 0, 0],     # (empty) |= 7
        [8, 10, 9, 10, 11, 2, 1],  # 8 & 9 & ~2 |= (empty)
    ])


# --------------------------------------------------------------------------- #
# packing and splitting
# --------------------------------------------------------------------------- #
def test_pack_pairs_and_targets_layout():
    x = pack_pairs([[2, 10, 3], [4], []], [[3], [11, 5, 10, 6], [7]], length=7)
    assert x.tolist() == [[2, 10, 3, 1, 3, 0, 0], [4, 1, 11, 5, 10, 6, 0], [1, 7, 0, 0, 0, 0, 0]]
    assert pack_pairs([[2, 3]], [[4]]).tolist() == [[2, 3, 1, 4]]  # length None: the longest row
    y = pack_targets(torch.tensor([1, 0, 1]), 7)
    assert y.shape == (3, 7) and y.dtype == torch.long
    assert y[:, 0].tolist() == [1, 0, 1] and (y[:, 1:] == IGNORE).all()


def test_split_at_the_separator_by_hand():
    model = make_model()
    premise, p_mask, hypothesis, h_mask = model.split(rows())
    # widths: the longest premise (6) and the longest hypothesis (4) of the batch
    assert premise.tolist() == [[2, 10, 3, 0, 0, 0], [4, 0, 0, 0, 0, 0], [0] * 6, [8, 10, 9, 10, 11, 2]]
    assert hypothesis.tolist() == [[3, 0, 0, 0], [11, 5, 10, 6], [7, 0, 0, 0], [0, 0, 0, 0]]
    assert p_mask.tolist() == [[1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0] * 6, [1] * 6]
    assert h_mask.tolist() == [[1, 0, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0], [0] * 4]
    # one row alone: its own widths, same content
    p1, m1, h1, n1 = model.split(rows()[1:2, :6])
    assert p1.tolist() == [[4]] and m1.all() and h1.tolist() == [[11, 5, 10, 6]] and n1.all()


def test_u_v_are_max_pooled_states_of_each_side_read_alone():
    """u = max_t enc(E p)_t over the premise alone, v the same over the hypothesis alone (from its own
    first symbol, not after the premise); an empty side gives 0."""
    model = make_model().double().eval()
    x = rows()
    with torch.no_grad():
        u, v = model.encode(x)
        for b, row in enumerate(x.tolist()):
            s = row.index(SEP)
            p = row[:s]
            h = [t for t in row[s + 1 :] if t != PAD]
            for side, pooled in ((p, u[b]), (h, v[b])):
                if not side:
                    assert (pooled == 0).all()
                    continue
                states = model.encoder(model.embedding(torch.tensor([side])))[0]  # (len, d)
                assert torch.allclose(pooled, states.max(dim=0).values, atol=1e-12)


def test_padding_changes_nothing():
    """Max-pool over real positions only: new pad embeddings, extra pad columns and the other rows of
    the batch do not change a row's logits."""
    model = make_model(e=4, d=5).double().eval()
    x = rows()
    with torch.no_grad():
        ref = model.classify(x)
        model.embedding.weight[PAD] = torch.randn(4, dtype=torch.float64) * 10
        assert torch.allclose(model.classify(x), ref, atol=1e-12)
        wider = F.pad(x, (0, 5), value=PAD)
        assert torch.allclose(model.classify(wider), ref, atol=1e-12)
        for b in range(len(x)):
            assert torch.allclose(model.classify(x[b : b + 1]), ref[b : b + 1], atol=1e-12)


def test_empty_side_is_finite_with_finite_gradients():
    model = make_model().train()
    x = torch.tensor([[1, 3, 0], [2, 1, 0], [1, 0, 0]])  # empty premise, empty hypothesis, both empty
    u, v = model.encode(x)
    assert (u[0] == 0).all() and (v[1] == 0).all() and (u[2] == 0).all() and (v[2] == 0).all()
    logits = model(x)
    assert torch.isfinite(logits).all()
    F.cross_entropy(logits[:, 0], torch.tensor([1, 0, 1])).backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_swapping_premise_and_hypothesis_swaps_only_u_and_v():
    model = make_model(d=6).double().eval()
    x = rows()
    swapped = []
    for row in x.tolist():
        s = row.index(SEP)
        swapped.append(([t for t in row[s + 1 :] if t != PAD], row[:s]))
    y = pack_pairs([h for h, _ in swapped], [p for _, p in swapped], length=x.shape[1])
    d = 6
    with torch.no_grad():
        f, g = model.features(x), model.features(y)
    assert f.shape == (4, 4 * d)
    assert torch.allclose(f[:, :d], g[:, d : 2 * d], atol=1e-12)  # u <-> v
    assert torch.allclose(f[:, d : 2 * d], g[:, :d], atol=1e-12)
    assert torch.allclose(f[:, 2 * d :], g[:, 2 * d :], atol=1e-12)  # |u - v| and u (.) v unchanged
    u, v = f[:, :d], f[:, d : 2 * d]
    assert torch.allclose(f[:, 2 * d : 3 * d], (u - v).abs()) and torch.allclose(f[:, 3 * d :], u * v)


# --------------------------------------------------------------------------- #
# variable renaming
# --------------------------------------------------------------------------- #
def test_renaming_is_a_bijection_on_variables_and_the_identity_elsewhere():
    ids = torch.tensor(VARS)
    # each row: every variable once in the premise, again (reversed) in the hypothesis, then pads
    row = VARS + [AND, NOT, SEP] + VARS[::-1] + [AND, PAD, PAD]
    x = torch.tensor([row] * 500)
    out = permute_variables(x, ids, generator=torch.Generator().manual_seed(0))
    assert out.shape == x.shape and out.dtype == torch.long
    is_var = torch.isin(x, ids)
    assert (out[~is_var] == x[~is_var]).all()  # &, ~, separator, pads untouched
    assert torch.isin(out[is_var], ids).all()
    n = len(VARS)
    for b in range(len(x)):
        image = out[b, :n].tolist()
        assert sorted(image) == VARS  # a bijection on the variables
        assert out[b, n + 3 : 2 * n + 3].tolist() == image[::-1]  # the same map on the hypothesis
    assert len({tuple(r) for r in out[:, :n].tolist()}) > 400  # different rows, different permutations


def test_renaming_is_uniform_over_permutations():
    ids = torch.tensor([2, 3, 4])
    x = torch.tensor([[2, 3, 4, 1, 4]] * 6000)
    out = permute_variables(x, ids, generator=torch.Generator().manual_seed(1))
    counts = Counter(tuple(r) for r in out[:, :3].tolist())
    assert set(counts) == set(itertools.permutations([2, 3, 4]))  # all 3! = 6, nothing else
    assert all(abs(c - 1000) < 4 * math.sqrt(1000) for c in counts.values())  # about 1000 each


def test_training_mode_renames_with_the_global_generator_and_eval_does_not():
    model = make_model(variable_ids=VARS).double()
    x = rows()
    model.train()  # no dropout here: the renaming is the only randomness
    torch.manual_seed(5)
    trained = model(x)
    torch.manual_seed(5)
    renamed = permute_variables(x, model.variable_ids)
    model.eval()
    with torch.no_grad():
        assert torch.allclose(trained.detach(), model(renamed), atol=1e-12)
        assert not torch.allclose(model(x), model(renamed))  # the renaming did change the row
        first = model(x)
        torch.manual_seed(123)
        assert torch.equal(model(x), first)  # eval: deterministic, no renaming
    model.train()
    torch.manual_seed(5)
    assert torch.allclose(model(x).detach(), trained)  # the project's seeding governs it


def test_training_mode_renames_with_the_callers_permute():
    """The model knows no language: it renames with the function the caller passes, on its ids."""
    seen = []

    def swap(inputs, ids):  # a fixed bijection: the two variables trade places
        seen.append(ids.tolist())
        return torch.where(inputs == 2, 3, torch.where(inputs == 3, 2, inputs))

    torch.manual_seed(0)
    model = EntailmentModel(V, 5, TorchRNN("gru", 5, 6, 1), 6, 7, variable_ids=[2, 3], permute=swap).double()
    x = rows()
    trained = model.train()(x)
    assert seen == [[2, 3]]
    with torch.no_grad():
        assert torch.allclose(trained.detach(), model.eval()(swap(x, model.variable_ids)), atol=1e-12)
        assert not torch.allclose(trained.detach(), model(x))
    assert len(seen) == 2  # eval mode does not rename


# --------------------------------------------------------------------------- #
# the training loop
# --------------------------------------------------------------------------- #
def test_forward_puts_the_class_logits_at_position_0():
    model = make_model().eval()
    x = rows()
    with torch.no_grad():
        out = model(x)
        assert out.shape == (4, 7, 2)
        assert torch.equal(out[:, 0], model.classify(x))
        assert (out[:, 1:] == 0).all()
        labels = torch.tensor([1, 0, 1, 1])
        token_loss = F.cross_entropy(out.reshape(-1, 2), pack_targets(labels, 7).reshape(-1),
                                     ignore_index=IGNORE)
        assert torch.allclose(token_loss, F.cross_entropy(out[:, 0], labels))  # fit's loss = the pair loss
    assert torch.equal(predict_labels(model, x), out[:, 0].argmax(-1))


def conjunction_task(n, seed, variables):
    """p_1 & ... & p_k |= h (k = 1..3, distinct p_i) holds iff h is one of the p_i: a true
    entailment, invariant under renaming; balanced labels."""
    g = torch.Generator().manual_seed(seed)
    premises, hypotheses, labels = [], [], []
    for i in range(n):
        k = int(torch.randint(1, 4, (1,), generator=g))
        chosen = [variables[int(j)] for j in torch.randperm(len(variables), generator=g)[:k]]
        premise = [t for j, var in enumerate(chosen) for t in ([AND, var] if j else [var])]
        pool = chosen if i % 2 else [var for var in variables if var not in chosen]
        premises.append(premise)
        hypotheses.append([pool[int(torch.randint(len(pool), (1,), generator=g))]])
        labels.append(i % 2)
    return pack_pairs(premises, hypotheses, length=8), torch.tensor(labels)


@pytest.mark.parametrize("seed", SEEDS)
def test_fit_learns_a_toy_entailment_and_renaming_generalises_to_unseen_variables(seed):
    """Trained on variables 2..5 only; tested on 2..5 and on pairs made of the unseen 6..9. With the
    renaming the model has met every variable and gets both right; without it, the unseen ones fail."""
    x, y = conjunction_task(1024, 1, VARS[:4])
    x_seen, y_seen = conjunction_task(512, 2, VARS[:4])
    x_new, y_new = conjunction_task(512, 3, VARS[4:])
    config = TrainConfig(epochs=8, batch_size=64, lr=1e-2, seed=seed)
    acc = {}
    for aug in (VARS, None):
        model = make_model(e=8, d=16, hidden=16, variable_ids=aug, seed=seed)
        history, _ = fit(model, TokenData(x, pack_targets(y, 8)), None, config)
        assert history.column("train_loss")[-1] < history.column("train_loss")[0]
        acc[aug is not None] = (entailment_accuracy(model, x_seen, y_seen),
                                entailment_accuracy(model, x_new, y_new))
    assert acc[True][0] > 0.95 and acc[True][1] > 0.9
    assert acc[False][0] > 0.95 and acc[False][1] < 0.85
    assert entailment_accuracy(model, x_seen, pack_targets(y_seen, 8)) == acc[False][0]  # packed targets too


def test_lstm_encoder_with_two_layers_trains():
    x, y = conjunction_task(1024, 4, VARS)
    model = make_model("lstm", e=8, d=16, hidden=16, layers=2, variable_ids=VARS)
    fit(model, TokenData(x, pack_targets(y, 8)), None, TrainConfig(epochs=10, batch_size=64, lr=1e-2))
    assert entailment_accuracy(model, x, y) > 0.93


# --------------------------------------------------------------------------- #
# parameters and argument checks
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("kind,layers", [("gru", 1), ("gru", 2), ("lstm", 1), ("lstm", 2)])
def test_parameter_count(kind, layers):
    e, d, h = 5, 6, 7
    model = make_model(kind, e=e, d=d, hidden=h, layers=layers)
    enc = torch_rnn_parameter_count(kind, e, d, layers)
    assert count_parameters(model.encoder) == enc
    assert count_parameters(model) == entailment_parameter_count(V, e, enc, d, h)
    assert entailment_parameter_count(V, e, 0, d, h) == V * e + (4 * d + 1) * h + (h + 1) * 2


@pytest.mark.parametrize("kwargs", [
    {"vocab_size": 0}, {"embedding_size": 2.0}, {"encoder_dim": 0}, {"hidden": True},
    {"encoder": "gru"}, {"sep_id": 0}, {"sep_id": V}, {"pad_id": -1},
    {"variable_ids": []}, {"variable_ids": [2, 2]}, {"variable_ids": [1, 2]}, {"variable_ids": [0, 2]},
    {"variable_ids": [2, V]}, {"variable_ids": [2.0]}, {"dropout": 1.0},
    {"variable_ids": [2, 3]}, {"variable_ids": [2, 3], "permute": "shuffle"}, {"permute": permute_variables},
])
def test_bad_arguments_raise(kwargs):
    args = {"vocab_size": V, "embedding_size": 4, "encoder": TorchRNN("gru", 4, 3, 1), "encoder_dim": 3,
            "hidden": 5}
    args.update(kwargs)
    with pytest.raises(ParameterError):
        EntailmentModel(args.pop("vocab_size"), args.pop("embedding_size"), args.pop("encoder"),
                        args.pop("encoder_dim"), args.pop("hidden"), **args)


@pytest.mark.parametrize("bad", [
    torch.tensor([[2, 3, 0]]),            # no separator
    torch.tensor([[2, 1, 3, 1]]),         # two separators
    torch.tensor([[2, 0, 1, 3]]),         # padding before the end
    torch.tensor([[2, 1, V]]),            # id out of range
    torch.tensor([[2.0, 1.0, 3.0]]),      # not long
    torch.tensor([2, 1, 3]),              # not (B, T)
])
def test_bad_inputs_raise(bad):
    model = make_model()
    for mode in (model.train, model.eval):
        mode()
        with pytest.raises(ParameterError):
            model(bad)


def test_bad_helper_arguments_raise():
    with pytest.raises(ParameterError):
        TorchRNN("rnn", 4, 3)
    with pytest.raises(ParameterError):
        TorchRNN("gru", 4, 3, 1, dropout=0.1)  # dropout acts between layers
    with pytest.raises(ParameterError):
        pack_targets(torch.tensor([0, 2]), 4)
    with pytest.raises(ParameterError):
        pack_targets(torch.tensor([0.0, 1.0]), 4)
    with pytest.raises(ParameterError):
        pack_pairs([[2, 1]], [[3]])  # separator inside a side
    with pytest.raises(ParameterError):
        pack_pairs([[2, 3]], [[4]], length=3)
    with pytest.raises(ParameterError):
        pack_pairs([[2]], [])
    wrong = EntailmentModel(V, 4, TorchRNN("gru", 4, 3, 1), 5, 6)  # encoder_dim does not match the encoder
    with pytest.raises(ParameterError, match="encoder_dim"):
        wrong(rows())


def test_an_encoder_returning_a_tuple_is_reported():
    class RawGRU(torch.nn.Module):  # forgets to drop nn.GRU's final state
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.GRU(4, 3, batch_first=True)

        def forward(self, x):
            return self.rnn(x)

    model = EntailmentModel(V, 4, RawGRU(), 3, 5)
    with pytest.raises(ParameterError, match="tuple"):
        model(rows())


def test_gpu_widths_come_in_steps_of_eight_and_the_cpu_keeps_its_own():
    from urnlib.models.entailment import GPU_WIDTH_STEP, encoder_width

    assert [encoder_width(w, "cpu") for w in (1, 7, 9, 64)] == [1, 7, 9, 64]
    on_gpu = {encoder_width(w, "cuda") for w in range(1, 65)}
    assert GPU_WIDTH_STEP == 8 and on_gpu == {8, 16, 24, 32, 40, 48, 56, 64}  # 8 shapes for 64 widths
    assert all(encoder_width(w, "cuda") >= w for w in range(1, 65))


@pytest.mark.parametrize("kind", ["gru", "lstm", "tpru"])
def test_a_bucketed_width_gives_the_same_logits_and_gradients(kind, monkeypatch):
    """The GPU's padding to a multiple of 8 (forced here on the CPU) changes no logit and no gradient: the
    encoders read left to right and the pool skips padding (float64, the TPRU's own stack included)."""
    import urnlib.models.entailment as entailment
    from urnlib.models.tpru_stack import RecurrentStack

    def build():
        torch.manual_seed(0)
        encoder = (RecurrentStack("tpru", 5, 6, 2, n_roles=4, slices=2) if kind == "tpru"
                   else TorchRNN(kind, 5, 6, 2))
        return EntailmentModel(V, 5, encoder, 6, 7).double().train()

    def step(model):
        logits = model.classify(rows())
        (logits.square().sum() + logits[:, 1].sin().sum()).backward()
        return logits.detach(), [p.grad.clone() for p in model.parameters()]

    plain = step(build())
    monkeypatch.setattr(entailment, "encoder_width", lambda longest, device: -(-longest // 8) * 8)
    bucketed = step(build())
    torch.testing.assert_close(bucketed[0], plain[0], rtol=0, atol=1e-12)
    for a, b in zip(bucketed[1], plain[1]):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
