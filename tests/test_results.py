"""Tests for urnlib.results: run keys, the run store, stale-code detection, provenance."""

import json
import shutil

import pytest
import torch

import urnlib.results as results
from urnlib.params import ParameterError
from urnlib.results import (
    RunStore,
    StaleRunWarning,
    code_fingerprint,
    params_key,
    provenance_table,
    training_modules,
)

MODULE = "urnlib.experiments.dyck"
PARAMS = {"task": {"n_pairs": 10, "seed": 0}, "model": {"kind": "urn", "n": 6, "k": None}, "train": {"lr": 0.01}}


# --------------------------------------------------------------------------- #
# params_key
# --------------------------------------------------------------------------- #
def test_params_key_is_stable_across_dict_ordering():
    reordered = {"train": {"lr": 0.01}, "model": {"k": None, "n": 6, "kind": "urn"}, "task": {"seed": 0, "n_pairs": 10}}
    assert params_key(PARAMS) == params_key(reordered)
    key = params_key(PARAMS)
    assert len(key) == 12 and int(key, 16) >= 0


@pytest.mark.parametrize(
    "section, field, value",
    [("task", "n_pairs", 11), ("task", "seed", 1), ("model", "kind", "lstm"), ("model", "n", 8),
     ("model", "k", 3), ("train", "lr", 0.001), ("train", "extra", 0)],
)
def test_params_key_changes_with_any_value(section, field, value):
    changed = json.loads(json.dumps(PARAMS))
    changed[section][field] = value
    assert params_key(changed) != params_key(PARAMS)


# --------------------------------------------------------------------------- #
# RunStore
# --------------------------------------------------------------------------- #
class FakeTrain:
    """Stands in for a training run: counts its calls and returns tiny results."""

    def __init__(self):
        self.calls = []

    def __call__(self, checkpoint):
        self.calls.append(checkpoint)
        k = len(self.calls)
        history = [{"epoch": 1, "train_loss": 1.0 / k, "seconds": 0.1}, {"epoch": 2, "train_loss": 0.5 / k, "seconds": 0.1}]
        weights = {"w": torch.arange(6, dtype=torch.float32).view(2, 3) * k, "b": torch.tensor([k], dtype=torch.long)}
        return history, {"accuracy": 0.9, "calls": k}, weights, 12.345


RECORD_FIELDS = {"params", "history", "final", "versions", "git", "code_module", "code_fingerprint",
                 "wall_time_s", "created", "machine"}


def test_get_or_train_trains_once_then_loads(tmp_path):
    store = RunStore(tmp_path / "runs", MODULE)
    train = FakeTrain()
    run = store.get_or_train("dyck", "URN 6", PARAMS, train)
    assert len(train.calls) == 1
    assert train.calls[0].parent == tmp_path / "runs" / ".checkpoints"
    assert RECORD_FIELDS <= set(run.record)
    assert not run.stale

    again = store.get_or_train("dyck", "URN 6", PARAMS, train)
    assert len(train.calls) == 1  # loaded, not trained
    assert again.path == run.path == tmp_path / "runs" / "dyck" / f"URN 6-{params_key(PARAMS)}"
    assert RECORD_FIELDS <= set(again.record)
    assert again.params == PARAMS
    assert again.history == run.history and again.column("train_loss") == [1.0, 0.5]
    assert again.final == {"accuracy": 0.9, "calls": 1}
    assert again.record["wall_time_s"] == 12.35
    assert again.record["code_module"] == MODULE
    assert again.record["code_fingerprint"] == code_fingerprint(MODULE)
    assert set(again.record["versions"]) >= {"python", "torch", "numpy", "urnlib"}
    assert {"commit", "dirty"} <= set(again.record["git"])
    assert again.weights.keys() == {"w", "b"}
    assert torch.equal(again.weights["w"], torch.arange(6, dtype=torch.float32).view(2, 3))
    assert again.weights["b"].dtype == torch.long and torch.equal(again.weights["b"], torch.tensor([1]))
    assert not again.stale

    # other parameters: another run
    other = dict(PARAMS, train={"lr": 0.1})
    store.get_or_train("dyck", "URN 6", other, train)
    assert len(train.calls) == 2


def test_retrain_trains_again(tmp_path):
    store = RunStore(tmp_path, MODULE)
    train = FakeTrain()
    store.get_or_train("dyck", "r", PARAMS, train)
    run = store.get_or_train("dyck", "r", PARAMS, train, retrain=True)
    assert len(train.calls) == 2
    assert run.final["calls"] == 2
    assert store.load("dyck", "r", PARAMS).final["calls"] == 2  # the new run replaced the old one
    assert torch.equal(store.load("dyck", "r", PARAMS).weights["b"], torch.tensor([2]))


def test_bad_on_stale_is_a_parameter_error(tmp_path):
    with pytest.raises(ParameterError, match="on_stale"):
        RunStore(tmp_path, MODULE).get_or_train("dyck", "r", PARAMS, FakeTrain(), on_stale="ignore")


# --------------------------------------------------------------------------- #
# stale runs
# --------------------------------------------------------------------------- #
@pytest.fixture
def stale_store(tmp_path):
    """A store holding one run whose recorded training-code fingerprint is not the current one."""
    store = RunStore(tmp_path, MODULE)
    train = FakeTrain()
    run = store.get_or_train("dyck", "old", PARAMS, train)
    record_file = run.path / "record.json"
    record = json.loads(record_file.read_text())
    record["code_fingerprint"] = "000000000000"
    record_file.write_text(json.dumps(record))
    return store, train


def test_stale_run_warn(stale_store):
    store, train = stale_store
    with pytest.warns(StaleRunWarning, match="different training code"):
        run = store.get_or_train("dyck", "old", PARAMS, train, on_stale="warn")
    assert len(train.calls) == 1
    assert run.stale
    table = provenance_table([run])
    assert table.loc[0, "training code"] == "changed since (stale)"


def test_stale_run_error(stale_store):
    store, train = stale_store
    with pytest.raises(ParameterError, match="retrain"):
        store.get_or_train("dyck", "old", PARAMS, train, on_stale="error")
    assert len(train.calls) == 1


def test_stale_run_retrain(stale_store):
    store, train = stale_store
    run = store.get_or_train("dyck", "old", PARAMS, train, on_stale="retrain")
    assert len(train.calls) == 2
    assert not run.stale and run.final["calls"] == 2
    assert not store.load("dyck", "old", PARAMS).stale


def test_fingerprint_change_makes_run_stale(tmp_path, monkeypatch):
    store = RunStore(tmp_path, MODULE)
    run = store.get_or_train("dyck", "r", PARAMS, FakeTrain())
    assert not run.stale
    monkeypatch.setattr(results, "code_fingerprint", lambda module: "ffffffffffff")
    assert run.stale
    with pytest.warns(StaleRunWarning):
        loaded = store.get_or_train("dyck", "r", PARAMS, FakeTrain())
    assert loaded.stale


def test_provenance_table_columns(tmp_path):
    store = RunStore(tmp_path, MODULE)
    a = store.get_or_train("dyck", "a", PARAMS, FakeTrain())
    b = store.get_or_train("dyck", "b", dict(PARAMS, x=1), FakeTrain())
    table = provenance_table([a, b])
    assert list(table["run"]) == ["a", "b"]
    assert list(table["key"]) == [params_key(PARAMS), params_key(dict(PARAMS, x=1))]
    assert list(table["training code"]) == ["current", "current"]
    assert list(table["wall time (min)"]) == [0.2, 0.2]
    assert list(table["torch"]) == [torch.__version__] * 2


# --------------------------------------------------------------------------- #
# what is fingerprinted
# --------------------------------------------------------------------------- #
def test_training_modules_of_the_dyck_experiment():
    mods = training_modules(MODULE)
    for needed in ("urnlib.experiments.dyck", "urnlib.models.unitary", "urnlib.models.recurrent", "urnlib.train",
                   "urnlib.languages.dyck", "urnlib.params"):
        assert needed in mods
    for excluded in ("urnlib.results", "urnlib.analysis", "urnlib.progress", "urnlib.metrics", "urnlib"):
        assert excluded not in mods
    assert not any(m == "urnlib.plots" or m.startswith("urnlib.plots.") for m in mods)
    assert not any(m.startswith("urnlib.reports") for m in mods)


def test_fingerprint_follows_training_code_only(tmp_path, monkeypatch):
    """On a copy of the package: editing a training module changes the fingerprint, editing storage does not."""
    copy = tmp_path / "urnlib"
    shutil.copytree(results.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(results, "PACKAGE_ROOT", copy)
    base = code_fingerprint(MODULE)
    assert base == code_fingerprint(MODULE)

    with open(copy / "results.py", "a") as f:
        f.write("\n# not training code\n")
    assert code_fingerprint(MODULE) == base

    with open(copy / "models" / "unitary.py", "a") as f:
        f.write("\n# training code\n")
    changed = code_fingerprint(MODULE)
    assert changed != base

    with open(copy / "languages" / "dyck.py", "a") as f:
        f.write("\n# training code\n")
    assert code_fingerprint(MODULE) not in (base, changed)
