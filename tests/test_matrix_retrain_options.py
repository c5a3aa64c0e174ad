"""The matrix-embedding chapter's validation sentences and options: ``valid_fraction`` (validation sentences
from the training side; every run selects its epoch on their loss, the test loss is only reported),
``optimizer`` (Adam or the authors' Adagrad) and ``train_fraction`` (a share of the training sentences). The
defaults of the options stay out of a run's key; bad values stop naming the parameter."""

import dataclasses
import json
import math

import numpy as np
import pytest

from urnlib.chapters.matrix_embeddings import experiment as ex
from urnlib.experiments.config import REPO
from urnlib.models import build_model
from urnlib.tasks.matrix_lm import LMTask, split_sentences
from urnlib.train import evaluate_loss

OPTIONS = ("valid_fraction", "train_fraction")


# --------------------------------------------------------------------------- #
# the presets: validation sentences, the options at their defaults, every run stored
# --------------------------------------------------------------------------- #
def test_every_stored_run_is_planned_and_selects_on_validation_sentences():
    folder = REPO / "notebooks" / "results" / ex.EXPERIMENT
    stored = {p.name for p in folder.iterdir() if (p / "record.json").is_file()}
    specs = ex.Config.load("paper").plan()
    assert {s.key for s in specs} == stored  # every planned run stored under its key, and nothing else
    for spec in specs:
        assert spec.params["task"]["valid_fraction"] == 0.05
        if "train" in spec.params:
            assert spec.params["train"]["monitor"] == "val_loss"  # never the test loss
            record = json.loads((folder / spec.key / "record.json").read_text())
            assert record["params"] == spec.params
            assert record["final"]["epoch"] == 1 + int(np.argmin([r["val_loss"] for r in record["history"]]))


@pytest.mark.parametrize("scale", ["paper", "tiny", "full"])
def test_every_preset_selects_on_validation_sentences_and_names_the_options(scale):
    config = ex.Config.load(scale)
    assert (config.valid_fraction, config.train_fraction, config.optimizer) == (0.05, 1, "adam")
    assert config.monitor == "val_loss" and set(ex.VALIDATION_MONITORS) == {"val_loss"}
    assert not config.overrides
    assert all(config.where_from(scale).get(k) for k in (*OPTIONS, "optimizer"))  # says where it comes from
    plan = config.plan()
    assert all("train_fraction" not in s.params["task"] for s in plan if "ablation" not in s.coords)


# --------------------------------------------------------------------------- #
# valid_fraction and train_fraction: the sentences
# --------------------------------------------------------------------------- #
def test_validation_sentences_come_from_the_training_side_and_leave_the_test_as_it_was():
    sentences = [[f"s{i}"] for i in range(1000)]  # one distinct word each: a sentence is its index
    task = LMTask("brown", True, 1, 50, 0, 0.1, 3)
    train0, valid0, test0 = split_sentences(sentences, task)
    train, valid, test = split_sentences(sentences, LMTask("brown", True, 1, 50, 0, 0.1, 3, 0.05))
    assert valid0 == [] and test == test0  # the same test sentences whatever valid_fraction
    ids = [{s[0] for s in part} for part in (train, valid, test)]
    assert [len(i) for i in ids] == [850, 50, 100]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    assert ids[0] | ids[1] == {s[0] for s in train0}  # valid + train = the training side
    assert [s for s in train0 if s[0] in ids[0]] == train  # the training side's order kept


def test_make_data_with_validation_and_half_the_training_sentences():
    base = ex.Config.load("tiny", max_sentences=150, max_length=20, valid_fraction=0.1)
    full, half = ex.make_data(base.task()), ex.make_data(ex.Config.load(
        "tiny", max_sentences=150, max_length=20, valid_fraction=0.1, train_fraction=0.5).task())
    assert full.valid is not None and len(full.valid) == len(full.valid_ids) == full.stats["valid_sentences"]
    assert half.vocab.tokens == full.vocab.tokens  # the same vocabulary ...
    assert half.valid_ids == full.valid_ids and half.test_ids == full.test_ids  # ... and held-out sentences
    assert half.train_ids == full.train_ids[:len(half.train_ids)]  # the first half
    assert len(half.train_ids) == round(0.5 * len(full.train_ids))
    assert half.stats["vocabulary_sentences"] == len(full.train_ids) and half.stats["train_fraction"] == 0.5
    # the task without validation sentences (the chapter's config refuses it: its runs select on them)
    plain = ex.make_data(dataclasses.replace(base.task(), valid_fraction=0.0))
    assert plain.valid is None and "valid_sentences" not in plain.stats
    assert len(plain.train_ids) == len(full.train_ids) + len(full.valid_ids)


def test_the_plan_watches_the_validation_loss_and_names_the_options():
    config = ex.Config.load("tiny", valid_fraction=0.1, optimizer="adagrad", lr=1.0, train_fraction=0.5)
    for spec in config.plan():
        assert spec.params["task"]["valid_fraction"] == 0.1 and spec.params["task"]["train_fraction"] == 0.5
        if "train" in spec.params:
            assert spec.params["train"]["monitor"] == "val_loss"
            urn = spec.params["model"]["kind"] == "urn"
            assert spec.params["train"]["optimizer"] == ("adam" if urn else "adagrad")  # URN: paper 000's
    summary = config.summary()
    assert "10% for validation" in summary and "Adagrad lr 1.0" in summary and "first 50%" in summary
    assert "validation loss has not improved" in summary


# --------------------------------------------------------------------------- #
# a tiny training run
# --------------------------------------------------------------------------- #
def test_a_tiny_run_keeps_the_validation_best_epoch_and_records_both_losses(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")  # the run store asks git for the checkout's state
    config = ex.Config.load("tiny", max_sentences=300, max_length=20, models=["4.2 dense 3"], epochs=2,
                            patience=2, batch_size=64, word2vec_size=0, ngram_order=0, urn_units=0, seeds=[0],
                            valid_fraction=0.1, optimizer="adagrad", lr=1.0, train_fraction=0.5)
    run = ex.run(config, store=tmp_path, mode="train")["4.2 dense 3 seed 0"]
    assert run.params["train"]["optimizer"] == "adagrad" and run.params["train"]["lr"] == 1.0
    assert len(run.history) == 2
    for row in run.history:
        assert {"train_loss", "val_loss", "test_loss", "analogies_correct"} <= set(row)
    val, f = run.column("val_loss"), run.final
    assert f["epoch"] == int(np.argmin(val)) + 1 and f["val_loss"] == min(val)  # selected on validation
    assert f["test_loss"] == run.column("test_loss")[f["epoch"] - 1]  # the test loss only reported
    assert f["perplexity"] == pytest.approx(np.exp(f["test_loss"]))
    assert f["val_perplexity"] == pytest.approx(np.exp(f["val_loss"]))
    data = ex.make_data(config.task())
    assert f["data"]["train_sentences"] == len(data.train_ids) and f["data"]["train_fraction"] == 0.5
    model = build_model(run.params["model"], len(data.vocab.tokens))
    model.load_state_dict(run.weights)  # the kept weights are the validation-best epoch's
    assert evaluate_loss(model.eval(), data.valid, 64, ex.token_nll) == pytest.approx(f["val_loss"], rel=1e-6)


# --------------------------------------------------------------------------- #
# bad values stop, naming the parameter and what to write
# --------------------------------------------------------------------------- #
def test_the_urn_language_model_selects_on_the_validation_sentences_too(tmp_path, monkeypatch):
    """With validation sentences the URN baseline watches val_loss as the matrix models do (its loop is given
    them), and reports the test perplexity of the kept epoch."""
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")
    config = ex.Config.load("tiny", max_sentences=200, max_length=12, models=["4.2 dense 3"], epochs=1,
                            word2vec_size=0, ngram_order=0, urn_units=4, urn_epochs=2, seeds=[0],
                            valid_fraction=0.1)
    runs = ex.run(config, store=tmp_path, mode="train")
    urn = next(r for name, r in runs.items() if name.lower().startswith("urn"))
    assert urn.params["train"]["monitor"] == "val_loss"
    assert all("val_loss" in row and "test_loss" in row for row in urn.history)
    best = min(range(len(urn.history)), key=lambda i: urn.history[i]["val_loss"])
    assert urn.final["val_loss"] == urn.history[best]["val_loss"]
    assert urn.final["perplexity"] == pytest.approx(math.exp(urn.history[best]["test_loss"]))
    assert urn.final["val_perplexity"] == pytest.approx(math.exp(urn.history[best]["val_loss"]))
