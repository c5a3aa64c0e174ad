"""Tests for urnlib.train: the one training loop (loss, history, seeding, checkpoint and resume)."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from urnlib.languages import dyck
from urnlib.models import build_model
from urnlib.params import ParameterError
from urnlib.train import (IGNORE, TokenData, TrainConfig, evaluate_loss, token_cross_entropy, fit,
                          seed_everything)

torch.set_num_threads(1)  # tiny models: one thread is much faster than two on busy cores

VOCAB = dyck.DyckVocab()
V = len(VOCAB)


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    monkeypatch.setenv("URNLIB_QUIET", "1")


@pytest.fixture(scope="module")
def data():
    train = TokenData(*dyck.encode(dyck.generate(256, 10, max_depth=3, rng=0), VOCAB))
    test = TokenData(*dyck.encode(dyck.generate(64, 10, rng=1), VOCAB))
    return train, test


SPECS = {
    "urn": dict(kind="urn", n=6, k=None),
    "lstm": dict(kind="lstm", n=8, embedding_size=4),
}


def built(name, seed=0):
    seed_everything(seed)  # as urnlib.chapters.dyck.experiment does before building
    spec = dict(SPECS[name])
    return build_model(spec.pop("kind"), V, **spec)


def without_seconds(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def probe(model):
    """An evaluate callback: runs in eval mode, its keys go into the History rows."""
    return {"in_eval_mode": not model.training, "probe": 1.5}


# --------------------------------------------------------------------------- #
# fit
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["urn", "lstm"])
def test_fit_decreases_loss_and_fills_history(name, data):
    train, test = data
    model = built(name)
    before = evaluate_loss(model, train)
    assert before == pytest.approx(math.log(V), rel=0.1)  # near-uniform predictions at init
    history, wall = fit(model, train, test, TrainConfig(epochs=3, batch_size=32, lr=0.01), evaluate=probe)
    assert len(history.rows) == 3
    for e, row in enumerate(history.rows, start=1):
        assert {"epoch", "train_loss", "test_loss", "seconds", "in_eval_mode", "probe"} <= set(row)
        assert row["epoch"] == e and row["in_eval_mode"] is True and row["probe"] == 1.5
        assert row["seconds"] > 0
    assert wall == pytest.approx(sum(history.column("seconds")))
    losses = history.column("train_loss")
    assert losses[-1] < losses[0]
    after = evaluate_loss(model, train)
    assert after < before - 0.1
    assert history.rows[-1]["test_loss"] == pytest.approx(evaluate_loss(model, test), abs=1e-12)
    assert not model.training  # fit leaves the model in eval mode


def test_same_seed_same_history(data):
    train, test = data
    cfg = TrainConfig(epochs=2, batch_size=64, lr=0.01, seed=3)
    runs = []
    for _ in range(2):
        model = built("urn", seed=3)
        history, _ = fit(model, train, test, cfg)
        runs.append((without_seconds(history.rows), model.state_dict()))
    (h1, s1), (h2, s2) = runs
    assert h1 == h2  # exactly equal floats
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    # and the seed matters: another data-order / dropout seed gives another history
    model = built("urn", seed=3)
    history, _ = fit(model, train, test, TrainConfig(epochs=2, batch_size=64, lr=0.01, seed=4))
    assert without_seconds(history.rows) != h1


@pytest.mark.parametrize("name", ["urn", "lstm"])
def test_resume_from_checkpoint_equals_uninterrupted_run(name, data, tmp_path):
    train, test = data

    def cfg(epochs):
        return TrainConfig(epochs=epochs, batch_size=64, lr=0.01, seed=1)

    straight = built(name, seed=5)
    h_straight, _ = fit(straight, train, test, cfg(3), checkpoint=tmp_path / "a.pt", evaluate=probe)

    first = built(name, seed=5)
    fit(first, train, test, cfg(2), checkpoint=tmp_path / "b.pt", evaluate=probe)
    torch.manual_seed(12345)  # whatever happens to the global generator in between must not matter
    resumed = built(name, seed=99)  # a fresh model: its weights come from the checkpoint
    h_resumed, _ = fit(resumed, train, test, cfg(3), checkpoint=tmp_path / "b.pt", evaluate=probe)

    assert [r["epoch"] for r in h_resumed.rows] == [1, 2, 3]
    assert without_seconds(h_resumed.rows) == without_seconds(h_straight.rows)
    a, b = straight.state_dict(), resumed.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_resume_of_a_finished_run_trains_no_more(data, tmp_path):
    train, test = data
    model = built("urn")
    cfg = TrainConfig(epochs=1, batch_size=128, lr=0.01)
    h1, _ = fit(model, train, test, cfg, checkpoint=tmp_path / "c.pt")
    again = built("urn", seed=7)
    h2, _ = fit(again, train, test, cfg, checkpoint=tmp_path / "c.pt")
    assert h2.rows == h1.rows
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in model.state_dict().items())


# --------------------------------------------------------------------------- #
# bad settings
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "kwargs, name",
    [(dict(epochs=0), "epochs"), (dict(lr=-0.1), "lr"), (dict(lr=0.0), "lr"),
     (dict(batch_size=0), "batch_size"), (dict(epochs=2.5), "epochs"), (dict(seed=-1), "seed"),
     (dict(clip_value=0.0), "clip_value"), (dict(optimizer="adamw"), "optimizer")],
)
def test_bad_train_config_raises_parameter_error(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        TrainConfig(**kwargs)


def test_token_data_shapes_must_agree():
    with pytest.raises(ParameterError):
        TokenData(torch.zeros(3, 4, dtype=torch.long), torch.zeros(3, 5, dtype=torch.long))


class NaNModel(nn.Module):
    """A 'model' whose logits are NaN."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(V))

    def forward(self, tokens):
        return (self.bias * float("nan")).expand(*tokens.shape, V)


def test_nan_loss_raises_floating_point_error(data):
    train, _ = data
    with pytest.raises(FloatingPointError, match="epoch 1:"):
        fit(NaNModel(), train, None, TrainConfig(epochs=2, batch_size=128))


# --------------------------------------------------------------------------- #
# ignored targets
# --------------------------------------------------------------------------- #
def test_ignored_targets_carry_no_loss():
    g = torch.Generator().manual_seed(0)
    inputs = torch.randint(V, (16, 7), generator=g)
    targets = torch.randint(V, (16, 7), generator=g)
    mask = torch.rand(16, 7, generator=g) < 0.4
    targets[mask] = IGNORE
    assert 0 < int(mask.sum()) < mask.numel()
    seed_everything(0)
    model = build_model("urn", V, n=6, dropout=0.0).double()
    data = TokenData(inputs, targets)

    with torch.no_grad():
        logits = model.eval()(inputs)
    keep = ~mask
    by_hand = float(F.cross_entropy(logits[keep], targets[keep]))  # mean over kept tokens only
    assert evaluate_loss(model, data) == pytest.approx(by_hand, abs=1e-12)

    # in fit: one batch of everything, dropout off -> the recorded train loss is the loss at the start
    history, _ = fit(model, data, None, TrainConfig(epochs=1, batch_size=16, lr=1e-3))
    assert history.rows[0]["train_loss"] == pytest.approx(by_hand, abs=1e-12)

    # and the ignored positions get no gradient: changing their logits changes nothing
    seed_everything(0)
    m2 = build_model("urn", V, n=6, dropout=0.0).double()
    captured = {}

    def capture(model, x):  # keep the logits the loop's own loss differentiates
        captured["logits"] = model(x)
        captured["logits"].retain_grad()
        return captured["logits"]

    loss, count = token_cross_entropy(lambda x: capture(m2, x), inputs, targets)  # the loop's own loss
    assert count == int(keep.sum())
    loss.backward()
    g_logits = captured["logits"].grad
    assert torch.count_nonzero(g_logits[mask]) == 0
    assert torch.count_nonzero(g_logits[keep]) > 0


def test_validation_data_gives_each_epoch_a_val_loss_to_select_on(data):
    """``fit(valid=...)``: every row gains ``val_loss`` (the loss on the validation data, as ``evaluate_loss``
    computes it), the monitor can watch it, and the kept weights are those of its lowest epoch."""
    train, test = data
    valid = TokenData(*dyck.encode(dyck.generate(64, 10, max_depth=3, rng=2), VOCAB))
    model = built("lstm")
    cfg = TrainConfig(epochs=3, batch_size=64, lr=0.05, seed=0, monitor="val_loss", keep_best=True)
    history, _ = fit(model, train, test, cfg, valid=valid)
    losses = [row["val_loss"] for row in history.rows]
    assert all(math.isfinite(v) for v in losses) and all("test_loss" in row for row in history.rows)
    assert history.best_epoch == 1 + losses.index(min(losses))
    assert evaluate_loss(model, valid) == pytest.approx(min(losses), rel=1e-6)  # the kept weights' loss


# --------------------------------------------------------------------------- #
# later settings: gradient value clipping, AMSGrad; a run's parameters without them at their defaults
# --------------------------------------------------------------------------- #
def test_params_leave_later_settings_out_at_their_defaults():
    cfg = TrainConfig(epochs=3, lr=0.003, clip=1.0)
    assert "clip_value" not in cfg.params()  # stored runs keep their keys
    assert TrainConfig(**cfg.params()) == cfg
    valued = TrainConfig(epochs=3, clip_value=10.0, optimizer="amsgrad")
    assert valued.params()["clip_value"] == 10.0 and TrainConfig(**valued.params()) == valued


class _Steep(nn.Module):
    """One weight whose loss has gradient 100 per scored token: clipping decides the step."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(V))

    def forward(self, x):
        return self.w.expand(*x.shape, V)


def _steep_loss(model, x, y):
    return 100.0 * model(x)[..., 0].mean(), 1


@pytest.mark.parametrize("clip_value, clip, step", [(None, None, 0.1), (10.0, None, 0.01), (None, 1.0, 0.001),
                                                    (10.0, 1.0, 0.001)])
def test_clipping_by_value_and_by_norm_bound_the_sgd_step(clip_value, clip, step):
    # SGD lr 0.001: the raw step is 0.1; a value clip at 10 makes it 0.01, a norm clip at 1: 0.001
    train = TokenData(torch.zeros(4, 3, dtype=torch.long), torch.zeros(4, 3, dtype=torch.long))
    model = _Steep()
    cfg = TrainConfig(epochs=1, batch_size=4, lr=0.001, optimizer="sgd", clip_value=clip_value, clip=clip)
    fit(model, train, None, cfg, loss=_steep_loss)
    weights = model.w.detach()
    assert float(-weights[0]) == pytest.approx(step)
    assert float(weights[1:].abs().max()) == 0.0


def _adam_reference(grads, lr, amsgrad, betas=(0.9, 0.999), eps=1e-8) -> float:
    """One weight's value after Adam's steps on ``grads`` (Kingma & Ba 2015, Algorithm 1), with AMSGrad's
    correction (Reddi et al. 2018: the largest second moment so far in the denominator) if ``amsgrad``."""
    w = m = v = v_max = 0.0
    for t, g in enumerate(grads, start=1):
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        v_max = max(v_max, v)
        w -= lr / (1 - betas[0] ** t) * m / (math.sqrt(v_max if amsgrad else v) / math.sqrt(1 - betas[1] ** t)
                                             + eps)
    return w


#: one large gradient, then small ones: Adam's second moment decays, AMSGrad keeps its largest
GRADIENTS = [100.0] + [1.0] * 29


@pytest.mark.parametrize("name", ["adam", "amsgrad"])
def test_amsgrad_keeps_the_largest_second_moment_and_adam_does_not(name):
    """After a gradient of 100 and 29 of 1, the weight's trajectory through ``fit`` is the reference's for
    its optimiser and not the other's (the two end 2.6e-4 apart, the check is to 1e-6; SGD would end at -1.29,
    Adagrad at -0.013)."""
    lr, calls = 0.01, []

    def schedule_loss(model, x, y):
        if torch.is_grad_enabled():
            calls.append(len(calls))
        return GRADIENTS[len(calls) - 1] * model.w.sum(), 1

    model = _Steep()
    model.w = nn.Parameter(torch.zeros(1, dtype=torch.float64))
    train = TokenData(torch.zeros(len(GRADIENTS), 3, dtype=torch.long),
                      torch.zeros(len(GRADIENTS), 3, dtype=torch.long))
    fit(model, train, None, TrainConfig(epochs=1, batch_size=1, lr=lr, optimizer=name), loss=schedule_loss)
    assert len(calls) == len(GRADIENTS)
    ours, other = _adam_reference(GRADIENTS, lr, name == "amsgrad"), _adam_reference(GRADIENTS, lr,
                                                                                     name != "amsgrad")
    assert abs(ours - other) > 2e-4
    assert float(model.w.detach()) == pytest.approx(ours, abs=1e-6)
