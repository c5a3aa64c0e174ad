"""The loop's extension points: optimisers, clipping, keep-best, early stopping (and their resume), callbacks,
batched evaluation."""

import math

import pytest
import torch

from urnlib.callbacks import Callback
from urnlib.languages import dyck
from urnlib.models import build_model
from urnlib.params import ParameterError
from urnlib.train import (TokenData, TrainConfig, evaluate_loss, fit, predict, seed_everything,
                          token_cross_entropy)

torch.set_num_threads(1)
VOCAB = dyck.DyckVocab()
V = len(VOCAB)


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    monkeypatch.setenv("URNLIB_QUIET", "1")


@pytest.fixture(scope="module")
def data():
    train = TokenData(*dyck.encode(dyck.generate(128, 6, max_depth=3, rng=0), VOCAB))
    test = TokenData(*dyck.encode(dyck.generate(48, 6, rng=1), VOCAB))
    return train, test


def model(seed=0):
    seed_everything(seed)
    return build_model("lstm 6 e4", V, dropout=0.1)


def rows(history):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in history.rows]


# an lr large enough that the test loss goes up and down: keep-best and patience have something to do
NOISY = dict(epochs=20, batch_size=32, lr=0.3, seed=3, monitor="test_loss", keep_best=True, patience=3)


def test_keep_best_ends_with_the_best_epochs_weights(data):
    train, test = data
    m = model()
    history, _ = fit(m, train, test, TrainConfig(**NOISY))
    losses = history.column("test_loss")
    assert history.best_epoch == 1 + losses.index(min(losses))
    assert history.best_row["test_loss"] == min(losses)
    assert evaluate_loss(m, test) == pytest.approx(min(losses), abs=1e-6)


def test_patience_stops_after_that_many_epochs_without_improvement(data):
    train, test = data
    history, _ = fit(model(), train, test, TrainConfig(**NOISY))
    losses = history.column("test_loss")
    best = losses.index(min(losses))
    assert history.stopped_early and len(losses) < NOISY["epochs"]  # this setting does stop early (epoch 7)
    assert len(losses) == best + 1 + NOISY["patience"]
    assert all(x >= losses[best] for x in losses[best + 1 :])


@pytest.mark.parametrize("stop_after", [2, 5, 6])
def test_interrupted_run_with_keep_best_and_patience_resumes_to_the_same_numbers(data, tmp_path, stop_after):
    train, test = data
    full_model = model()
    full, _ = fit(full_model, train, test, TrainConfig(**NOISY))
    ckpt = tmp_path / "run.pt"
    part_model = model()
    # "killed" here
    fit(part_model, train, test, TrainConfig(**{**NOISY, "epochs": stop_after}), checkpoint=ckpt)
    resumed_model = model(seed=99)  # a fresh process: other initial weights, overwritten by the checkpoint
    resumed, _ = fit(resumed_model, train, test, TrainConfig(**NOISY), checkpoint=ckpt)
    assert rows(resumed) == rows(full)
    assert (resumed.best_epoch, resumed.stopped_early) == (full.best_epoch, full.stopped_early)
    for a, b in zip(resumed_model.state_dict().values(), full_model.state_dict().values()):
        assert torch.equal(a, b)


@pytest.mark.parametrize("optimizer", ["adam", "adagrad", "sgd"])
def test_each_optimiser_trains(data, optimizer):
    train, test = data
    history, _ = fit(model(), train, test, TrainConfig(epochs=3, batch_size=32, lr=0.05, optimizer=optimizer))
    assert history.rows[-1]["train_loss"] < history.rows[0]["train_loss"] + 1e-9 or optimizer == "sgd"
    assert all(math.isfinite(r["test_loss"]) for r in history.rows)


def test_clipping_bounds_the_gradient_norm(data):
    train, _ = data
    norms = []

    class Norm(Callback):
        def on_batch_end(self, m, epoch, batch, loss):
            norms.append(math.sqrt(sum(float(p.grad.pow(2).sum()) for p in m.parameters()
                                       if p.grad is not None)))

    fit(model(), train, None, TrainConfig(epochs=1, batch_size=32, lr=0.01, clip=0.05), callbacks=[Norm()])
    assert norms and max(norms) <= 0.05 + 1e-6
    norms.clear()
    fit(model(), train, None, TrainConfig(epochs=1, batch_size=32, lr=0.01), callbacks=[Norm()])
    assert max(norms) > 0.05


def test_callbacks_see_every_batch_and_epoch_and_can_stop(data):
    train, test = data
    seen = []

    class StopAtTwo(Callback):
        def on_batch_end(self, m, epoch, batch, loss):
            seen.append((epoch, batch))

        def on_epoch_end(self, m, row):
            return row["epoch"] == 2

    history, _ = fit(model(), train, test, TrainConfig(epochs=5, batch_size=32), callbacks=[StopAtTwo()])
    assert len(history.rows) == 2 and history.stopped_early
    assert seen == [(e, b) for e in range(2) for b in range(4)]


def test_a_custom_loss_is_used_for_training_and_evaluation(data):
    train, test = data
    calls = []

    def halved(m, x, y):
        calls.append(len(x))
        loss, n = token_cross_entropy(m, x, y)
        return loss / 2, n

    m = model()
    history, _ = fit(m, train, test, TrainConfig(epochs=1, batch_size=32), loss=halved)
    assert history.rows[0]["test_loss"] == pytest.approx(evaluate_loss(m, test) / 2, rel=1e-6)
    assert calls[:4] == [32] * 4


def test_evaluation_in_batches_equals_evaluation_at_once(data):
    _, test = data
    m = model().eval()
    logits = predict(m, test.inputs)
    once = float(torch.nn.functional.cross_entropy(logits.reshape(-1, V), test.targets.reshape(-1),
                                                   ignore_index=-100))
    for batch in (1, 7, 48, 1000):
        assert evaluate_loss(m, test, batch_size=batch) == pytest.approx(once, rel=1e-6)


def test_evaluation_holds_one_batch_of_logits_at_a_time():
    """A model whose logits are V = 20,000 wide: evaluate_loss asks it for at most batch_size rows at once."""
    widest = []

    class Wide(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(20_000))

        def forward(self, x):
            widest.append(x.shape[0])
            return self.w.expand(*x.shape, 20_000)

    data = TokenData(torch.zeros(300, 50, dtype=torch.long), torch.ones(300, 50, dtype=torch.long))
    loss = evaluate_loss(Wide(), data, batch_size=16)
    assert loss == pytest.approx(math.log(20_000), rel=1e-6) and max(widest) == 16


@pytest.mark.parametrize("kwargs, name", [({"optimizer": "rmsprop"}, "optimizer"), ({"clip": 0}, "clip"),
                                           ({"patience": 0, "monitor": "test_loss"}, "patience"),
                                           ({"keep_best": True}, "monitor")])
def test_bad_settings_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        TrainConfig(**kwargs)


def test_an_unknown_monitor_metric_names_the_known_ones(data):
    train, test = data
    with pytest.raises(ParameterError, match="valid_ppl.*test_loss"):
        fit(model(), train, test, TrainConfig(epochs=1, batch_size=64, monitor="valid_ppl", keep_best=True))


def test_early_stop_waits_for_the_minimum_epochs_then_for_patience():
    from urnlib.callbacks import EarlyStop

    stop = EarlyStop("loss", patience=2, min_epochs=5)
    values = [3.0, 2.0, 2.5, 2.6, 2.7, 2.8, 1.0, 1.5, 1.6]
    stops = [stop.on_epoch_end(None, {"epoch": e + 1, "loss": v}) for e, v in enumerate(values)]
    # no improvement since epoch 2, but not before epoch 5; then again after the new best at epoch 7
    assert stops == [False, False, False, False, True, True, False, False, True]
    again = EarlyStop("loss", patience=2, min_epochs=5)
    again.load_state_dict(stop.state_dict())
    assert again.state_dict() == stop.state_dict()
    with pytest.raises(ParameterError, match="patience"):
        EarlyStop("loss", patience=0)


def test_a_planned_stopping_rule_becomes_its_callback():
    from urnlib.callbacks import EarlyStop, stopping_callbacks

    assert stopping_callbacks(None) == [] and stopping_callbacks({"key": "loss", "patience": None}) == []
    (stop,) = stopping_callbacks({"key": "valid_acc", "patience": 5, "min_epochs": 30, "minimize": False})
    assert isinstance(stop, EarlyStop)
    assert (stop.key, stop.patience, stop.min_epochs, stop.minimize) == ("valid_acc", 5, 30, False)
