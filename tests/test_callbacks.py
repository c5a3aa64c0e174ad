"""The one patience rule of the training loop (:class:`urnlib.callbacks.Monitor`): the planned stopping
rule (:class:`~urnlib.callbacks.EarlyStop`, ``min_epochs`` included) stops at the same epoch as the rule it
replaced, on hand-made sequences of epoch rows (ties, NaN, a metric to maximise), and resumes from a
checkpoint the old class wrote."""

import itertools
import math

import pytest
import torch

from urnlib.callbacks import EarlyStop, Monitor
from urnlib.params import ParameterError
from urnlib.train import TrainConfig


def reference_stops(values, patience, min_epochs=0, minimize=True, state=None):
    """The rule of the former ``EarlyStop`` class, written out (its state: ``best_value``, ``epochs_since``):
    an epoch improves when its value is finite and strictly better than the best so far (the first finite
    value always improves); stop once ``epochs_since >= patience`` at an epoch ``>= min_epochs``. ``values``
    are the epochs after ``state`` (a dict of those two, epochs counted from ``state["epoch"] + 1``)."""
    state = state or {"best_value": math.nan, "epochs_since": 0, "epoch": 0}
    best, since, out = state["best_value"], state["epochs_since"], []
    for epoch, v in enumerate(values, state["epoch"] + 1):
        if math.isfinite(v) and (math.isnan(best) or (v < best if minimize else v > best)):
            best, since = v, 0
        else:
            since += 1
        out.append(epoch >= min_epochs and since >= patience)
    return out, {"best_value": best, "epochs_since": since}


SEQUENCES = [
    [3.0, 2.0, 2.5, 2.6, 2.7, 2.8, 1.0, 1.5, 1.6],
    [1.0, 1.0, 1.0, 1.0, 1.0],                      # ties never improve
    [math.nan, math.nan, 2.0, 2.0, 1.0, math.inf],  # NaN and inf never improve, nor set the first best
    [5.0, 4.0, 3.0, 2.0, 1.0, 0.5],
    [0.1, 0.5, 0.4, 0.6, 0.6, 0.7, 0.2, 0.2, 0.2, 0.9, -math.inf],
    [math.nan] * 4,
]


def run_rule(rule, values, first_epoch=1):
    return [rule.on_epoch_end(None, {"epoch": e, "loss": v}) for e, v in enumerate(values, first_epoch)]


@pytest.mark.parametrize("values", SEQUENCES)
@pytest.mark.parametrize("patience,min_epochs,minimize",
                         list(itertools.product([1, 2, 3], [0, 1, 4, 7], [True, False])))
def test_the_stopping_rule_stops_where_the_former_one_did(values, patience, min_epochs, minimize):
    expected, end = reference_stops(values, patience, min_epochs, minimize)
    for rule in (EarlyStop("loss", patience, min_epochs, minimize),
                 Monitor("loss", patience=patience, min_epochs=min_epochs, minimize=minimize)):
        assert run_rule(rule, values) == expected
        state = rule.state_dict()
        assert (state["epochs_since"], math.isnan(state["best_value"])) == (end["epochs_since"],
                                                                          math.isnan(end["best_value"]))
        assert math.isnan(end["best_value"]) or state["best_value"] == end["best_value"]


@pytest.mark.parametrize("values", SEQUENCES)
@pytest.mark.parametrize("cut", [0, 1, 2, 4])
@pytest.mark.parametrize("minimize", [True, False])
def test_a_checkpoint_of_the_former_class_resumes_to_the_same_stop(values, cut, minimize):
    """The old class saved ``{"best_value", "epochs_since"}`` only: the rule resumes from it (without a
    ``best_epoch``) as from its own state."""
    patience, min_epochs = 2, 3
    head, tail = values[:cut], values[cut:]
    _, old_state = reference_stops(head, patience, min_epochs, minimize)
    expected, _ = reference_stops(tail, patience, min_epochs, minimize, state={**old_state, "epoch": cut})
    resumed = EarlyStop("loss", patience, min_epochs, minimize)
    resumed.load_state_dict(old_state)
    assert run_rule(resumed, tail, cut + 1) == expected
    own = EarlyStop("loss", patience, min_epochs, minimize)
    run_rule(own, head)
    again = EarlyStop("loss", patience, min_epochs, minimize)
    again.load_state_dict(own.state_dict())
    assert run_rule(again, tail, cut + 1) == expected


def test_the_loop_monitor_keeps_the_first_best_epoch_and_its_weights():
    config = TrainConfig(epochs=9, batch_size=1, monitor="loss", minimize=True, keep_best=True, patience=2)
    monitor = Monitor.from_config(config)
    model = torch.nn.Linear(1, 1, bias=False)
    stops = []
    for epoch, value in enumerate([3.0, 2.0, 2.0, 1.0, math.nan, 4.0], 1):
        with torch.no_grad():
            model.weight.fill_(epoch)
        stops.append(monitor.on_epoch_end(model, {"epoch": epoch, "loss": value}))
    assert stops == [False, False, False, False, False, True] and monitor.best_epoch == 4
    again = Monitor.from_config(config)
    again.load_state_dict(monitor.state_dict())
    again.on_train_end(model)
    assert model.weight.item() == 4.0


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ParameterError, match="patience=0"):
        EarlyStop("loss", patience=0)
    with pytest.raises(ParameterError, match="patience=None"):
        EarlyStop("loss", patience=None)
    with pytest.raises(ParameterError, match="min_epochs=-1"):
        Monitor("loss", min_epochs=-1)
    with pytest.raises(ParameterError, match="EarlyStop key='acc'.*loss"):
        EarlyStop("acc", patience=1).on_epoch_end(None, {"epoch": 1, "loss": 1.0})
    with pytest.raises(ParameterError, match="monitor='acc'.*loss"):
        Monitor("acc").on_epoch_end(None, {"epoch": 1, "loss": 1.0})
