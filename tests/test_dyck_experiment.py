"""Tests for urnlib.chapters.dyck.experiment and urnlib.chapters.dyck.report (paper 000 sec. 5, paper 001 sec.
4): the config and its checks, the plan of runs (the committed runs' parameters), closing-bracket evaluation
on stub models, a tiny train-store-reload-report round trip, and loading the committed runs without
training."""

import json
import math
import os
import subprocess
import sys
import warnings
from dataclasses import asdict, replace
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch
from torch import nn

matplotlib.use("Agg")

from urnlib.claims import VERDICTS, Claim  # noqa: E402
from urnlib.chapters.dyck import experiment  # noqa: E402
from urnlib.experiments.config import REPO  # noqa: E402
from urnlib.languages import dyck as lang  # noqa: E402
from urnlib.models import count_parameters, registry  # noqa: E402
from urnlib.params import ParameterError  # noqa: E402
from urnlib.plots.curves import panels_figure  # noqa: E402
from urnlib.chapters.dyck import report  # noqa: E402
from urnlib.runner import StaleRunWarning  # noqa: E402
from urnlib.train import evaluate_loss  # noqa: E402

torch.set_num_threads(1)

PAPER = experiment.Config.paper()
VOCAB = lang.DyckVocab()


# --------------------------------------------------------------------------- #
# the config: presets, plan, bad parameters
# --------------------------------------------------------------------------- #
def test_presets_load_and_name_their_scale():
    tiny = experiment.Config.tiny()
    assert PAPER.scale == "paper" and PAPER.mode == "load"
    assert tiny.scale == "tiny" and tiny.mode == "train"
    assert "scale **paper**" in PAPER.summary() and "*lr 0.001* (Adam lr 0.001" in PAPER.summary()
    # 69, the 43 of more_seeds, the shared-mask 3-TURN at both rates, the per-sequence mask at lr 0.001 and
    # the authors' LSTMs at both rates
    assert "(139 runs)" in PAPER.summary()


def test_paper_plan_labels_and_specs():
    plan = {s.name: s for s in PAPER.plan()}
    models = [
        "3-TURN",
        "Full URN",
        "Arbitrary",
        "URN 8",
        "LSTM 8",
        "URN 16",
        "LSTM 16",
        "URN 32",
        "LSTM 32",
        "3-TURN, no state dropout",
    ]
    more = {("lr 0.01", "3-TURN"): range(3, 14), ("lr 0.01", "3-TURN, no state dropout"): (3, 4),
            ("lr 0.01", "Full URN"): (3, 4, 5), ("lr 0.01", "Arbitrary"): (3, 4, 5),
            ("lr 0.01", "URN 8"): (3, 4, 5, 6), ("lr 0.01", "LSTM 8"): (3,),
            ("lr 0.01", "URN 16"): (3, 4, 5, 6), ("lr 0.01", "URN 32"): (3, 4, 5, 6),
            ("lr 0.001", "3-TURN"): range(3, 8), ("lr 0.001", "URN 8"): (3,), ("lr 0.001", "URN 16"): (3,),
            ("lr 0.001", "URN 32"): (3,), ("lr 0.001", "3-TURN, sequence parameter mask"): (3, 4, 5)}
    shared = [*models, "3-TURN, shared parameter mask"]  # the variant both full settings train
    theirs = [f"LSTM {n}, the authors' cell" for n in (8, 16, 32)]  # the authors' LSTMs, both full settings
    authors = [*shared, "3-TURN, sequence parameter mask", *theirs]  # the per-sequence mask: lr 0.001 alone
    assert list(plan) == [
        f"{m}, {setting} seed {seed}"
        for setting, ms in [("lr 0.01", [*shared, *theirs]), ("lr 0.001", authors),
                            ("midpoint, lr 0.001", models[:3])]
        for m in ms
        for seed in (0, 1, 2, *more.get((setting, m), ()))
    ]
    assert PAPER.paper000_labels() == ["3-TURN", "Full URN", "Arbitrary"]
    assert PAPER.comparison_labels() == ["URN 8", "URN 16", "URN 32", "LSTM 8", "LSTM 16", "LSTM 32"]
    assert PAPER.variant_labels() == ["3-TURN, no state dropout", "3-TURN, shared parameter mask",
                                      "3-TURN, sequence parameter mask"]
    assert PAPER.variant_labels(PAPER.settings_()["lr 0.01"]) == PAPER.variant_labels()[:2]
    assert plan["LSTM 8, the authors' cell, lr 0.001 seed 0"].params["model"]["init"] == "typedflow"
    assert plan["3-TURN, shared parameter mask, lr 0.001 seed 0"].params["model"]["param_mask"] == "shared"
    assert PAPER.full_settings() == ["lr 0.01", "lr 0.001"]
    assert PAPER.setting_texts() == {"lr 0.01": "Adam lr 0.01, the walk generator, every model",
                                     "lr 0.001": "Adam lr 0.001, the walk generator, every model",
                                     "midpoint, lr 0.001": "Adam lr 0.001, the midpoint generator, "
                                                           "paper 000's three models"}
    turn = plan["3-TURN, lr 0.01 seed 0"].params
    assert turn["model"] == {"kind": "urn", "n": 50, "k": 3, "dropout": 0.05}
    assert plan["Full URN, lr 0.01 seed 0"].params["model"] == {
        "kind": "urn",
        "n": 50,
        "k": None,
        "dropout": 0.05,
    }
    assert plan["Arbitrary, lr 0.01 seed 1"].params["model"] == {
        "kind": "arbitrary",
        "n": 50,
        "dropout": 0.05,
    }
    assert plan["LSTM 16, lr 0.001 seed 2"].params["model"] == {
        "kind": "lstm",
        "n": 16,
        "embedding_size": 12,
        "dropout": 0.05,
    }
    assert turn["task"] == {
        "n_pairs": 10,
        "train_size": 102400,
        "test_size": 5120,
        "train_max_depth": 3,
        "generator": "walk",
        "seed": 0,
    }
    # a seed is the data seed and the training seed; a setting sets the learning rate and the generator
    two = plan["3-TURN, lr 0.001 seed 2"].params
    assert two["task"]["seed"] == two["train"]["seed"] == 2 and two["train"]["lr"] == 0.001
    assert turn["train"]["lr"] == 0.01 and two["model"] == turn["model"]
    mid = plan["3-TURN, midpoint, lr 0.001 seed 1"].params
    assert mid["task"]["generator"] == "midpoint" and mid["train"]["lr"] == 0.001
    assert plan["3-TURN, no state dropout, lr 0.01 seed 0"].params["model"] == {
        **turn["model"],
        "state_dropout": False,
    }
    for spec in plan.values():
        assert spec.experiment == "dyck" and spec.train is experiment.train_run
        assert {"train.loop", "data.dyck", "experiment.dyck"} < set(spec.components)
    assert "model.arbitrary" in plan["Arbitrary, lr 0.01 seed 0"].components
    assert "model.lstm" in plan["LSTM 8, lr 0.01 seed 0"].components


def test_views_group_a_setting_by_model():
    runs = {s.name: s for s in PAPER.plan()}  # any objects stand in for runs
    views = PAPER.views(runs)
    assert list(views) == ["lr 0.01", "lr 0.001", "midpoint, lr 0.001"]
    assert list(views["midpoint, lr 0.001"]) == ["3-TURN", "Full URN", "Arbitrary"]
    assert "3-TURN, no state dropout" in views["lr 0.001"]
    assert views["lr 0.01"]["LSTM 16"].seeds == [0, 1, 2]
    assert views["lr 0.01"]["URN 8"].seeds == [0, 1, 2, 3, 4, 5, 6]  # the preset's more_seeds
    assert views["lr 0.01"]["URN 8"][2].name == "URN 8, lr 0.01 seed 2"
    assert set(PAPER.data_tasks()) == {"walk", "midpoint"}


def test_variants_off_and_other_choices():
    config = experiment.Config.load(
        "paper", variants=False, units_001=[4], models_001=["lstm", "arbitrary"], truncation_k=2
    )
    assert [s.name for s in config.plan() if s.name.endswith("lr 0.01 seed 0")] == [
        f"{m}, lr 0.01 seed 0" for m in ["2-TURN", "Full URN", "Arbitrary", "LSTM 4", "Arbitrary 4"]
    ]
    assert config.variant_labels() == []
    assert config.overrides["variants"] == (True, False)
    # the preset's more_seeds name the 3-TURN, which truncation_k=2 removed: left out, and the summary says so
    assert not any(s.name.startswith("2-TURN, lr 0.01 seed 3") for s in config.plan())
    assert ("the preset's more_seeds for `3-TURN`, `3-TURN, no state dropout`, `URN 8`, `LSTM 8`, `URN 16`, "
            "`URN 32` left out" in config.summary())


BAD = [
    ({"scale": "huge"}, ["scale", "huge", "tiny", "paper"]),
    ({"models_001": ["gru"]}, ["models_001", "gru", "urn", "lstm"]),
    ({"models_001": []}, ["models_001", "non-empty"]),
    ({"models_001": ["urn", "urn"]}, ["models_001", "twice"]),
    ({"units_001": []}, ["units_001", "non-empty"]),
    ({"units_001": [8, 8]}, ["units_001", "8", "twice"]),
    ({"units_001": [8, "16"]}, ["units_001", "'16'", "integer"]),
    ({"units_001": [9]}, ["units_001", "9", "even"]),
    ({"truncation_k": 12, "units_000": 12}, ["units_000=12", "truncation_k=12", "between 1 and n - 1"]),
    ({"truncation_k": 0}, ["truncation_k", ">= 1"]),
    ({"units_000": 13}, ["units_000=13", "even"]),
    ({"epochs": 0}, ["epochs", ">= 1"]),
    ({"settings": {"a": {"lr": 0.0, "generator": "walk"}}}, ["settings['a'].lr", "> 0"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "zigzag"}}}, ["generator", "zigzag", "walk", "midpoint"]),
    (
        {"settings": {"a": {"lr": 0.01, "generator": "walk", "models": "some"}}},
        ["models", "some", "all", "000"],
    ),
    ({"settings": {"a": {"lr": 0.01}}}, ["settings['a']", "lr, generator"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "walk", "epochs": 3}}}, ["settings['a']", "lr, generator"]),
    ({"settings": {}}, ["settings", "non-empty mapping"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "walk", "more_seeds": [3]}}}, ["more_seeds", "mapping"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "walk", "more_seeds": {"LSTM 99": [3]}}}},
     ["settings['a'].more_seeds['LSTM 99']", "no model", "3-TURN"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "walk", "more_seeds": {"3-TURN": [1, 5]}}}},
     ["more_seeds['3-TURN']", "repeats seeds of `seeds`", "[1]"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "walk", "more_seeds": {"3-TURN": [5, 5]}}}},
     ["more_seeds['3-TURN']", "twice"]),
    ({"settings": {"a": {"lr": 0.01, "generator": "walk", "models": "000", "more_seeds": {"LSTM 4": [5]}}}},
     ["no model 'LSTM 4'"]),
    ({"settings": {"": {"lr": 0.01, "generator": "walk"}}}, ["setting name", "non-empty"]),
    ({"seeds": []}, ["seeds", "non-empty"]),
    ({"seeds": [0, 0]}, ["seeds", "twice"]),
    ({"batch_size": -1}, ["batch_size"]),
    ({"seeds": [-1]}, ["seeds", ">= 0"]),
    ({"train_max_depth": 11}, ["train_max_depth", "<= 10"]),
    ({"train_size": 4_000_000_000}, ["train_size", "<= 10000000"]),
    ({"test_size": 0}, ["test_size", ">= 1"]),
    ({"dropout": 1.0}, ["dropout", "<= 0.99"]),
    ({"variants": "yes"}, ["variants", "bool"]),
    ({"dropout": 0.0}, ["dropout=0", "variants=False"]),
    ({"min_bucket": 0}, ["min_bucket", ">= 1"]),
    ({"units_000": 4096}, ["GiB", "lower units_000 or units_001"]),
    ({"train_size": 9_000_000, "n_pairs": 100, "train_max_depth": 3}, ["GiB", "train_size"]),
    ({"mode": "sometimes"}, ["mode", "load", "train", "retrain"]),
    ({"on_stale": "ignore"}, ["on_stale", "ignore", "warn", "error"]),
    ({"no_such_parameter": 1}, ["no_such_parameter", "unknown"]),
]


@pytest.mark.parametrize("bad, words", BAD, ids=[",".join(b) for b, _ in BAD])
def test_bad_parameters_stop_before_any_work(bad, words):
    scale = bad.pop("scale", "tiny") if "scale" in bad else "tiny"
    with pytest.raises(ParameterError) as info:
        experiment.Config.load(scale, **bad)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_more_seeds_add_runs_of_one_model_and_change_no_other_run():
    turn = TINY.turn  # the tiny run's k-TURN
    settings = {**TINY.settings, "a": {**TINY.settings["a"], "more_seeds": {turn: [5, 6]}}}
    more = replace(TINY, settings=settings)
    more.validate()
    before = {s.name: s.key for s in TINY.plan()}
    after = {s.name: s.key for s in more.plan()}
    added = sorted(set(after) - set(before))
    assert added == [f"{turn}, a seed 5", f"{turn}, a seed 6"]
    assert all(after[name] == key for name, key in before.items())  # the stored runs stay current
    setting = more.settings_()["a"]
    assert more.seeds_of(setting, turn) == [*TINY.seeds, 5, 6]
    assert more.seeds_of(setting, "Full URN") == list(TINY.seeds)
    assert f"{turn} also seeds [5, 6]" in more.summary()


def test_dropout_zero_without_variants_is_fine():
    config = experiment.Config.load("tiny", dropout=0.0, variants=False)
    assert all(s.params["model"]["dropout"] == 0.0 for s in config.plan())


# --------------------------------------------------------------------------- #
# data and evaluate_closing
# --------------------------------------------------------------------------- #
def task_with(**changes):
    return replace(PAPER.task(PAPER.settings_()["lr 0.01"], 0), **changes)


def test_make_data_depths_and_attractors():
    task = task_with(train_size=400, test_size=300, n_pairs=6, seed=2)
    data = experiment.make_data(task)
    assert data.train.inputs.shape == (400, 12) and data.test.targets.shape == (300, 12)
    strings = ["".join(VOCAB.symbols[i] for i in row) for row in data.train.targets.tolist()]
    assert max(lang.depth(s) for s in strings) <= 3 and all(lang.is_dyck(s) for s in strings)
    assert max(lang.depth(s) for s in data.test_strings) > 3  # the test set goes deeper
    closing = torch.isin(data.test.targets, VOCAB.closer_ids)
    assert torch.equal(data.test_attractors >= 0, closing)
    again = experiment.make_data(task_with(train_size=400, test_size=300, n_pairs=6, seed=2))
    assert again.test_strings == data.test_strings


class NextSymbol(nn.Module):
    """Logits favouring the gold next symbol, but a wrong closing bracket at closing positions with at least
    ``wrong_from`` attractors (when given)."""

    def __init__(self, data, wrong_from: int | None = None):
        super().__init__()
        self.data, self.wrong_from = data, wrong_from

    def forward(self, x):
        rows = torch.cat([torch.nonzero((self.data.test.inputs == r).all(dim=1))[:1] for r in x]).flatten()
        want = self.data.test.targets[rows].clone()
        if self.wrong_from is not None:
            attr = self.data.test_attractors[rows]
            wrong = attr >= self.wrong_from
            closers = VOCAB.closer_ids
            pos = torch.searchsorted(closers, want[wrong].contiguous())
            want[wrong] = closers[(pos + 1) % len(closers)]
        return 10.0 * nn.functional.one_hot(want, len(VOCAB)).float()


@pytest.fixture(scope="module")
def small_data():
    return experiment.make_data(task_with(train_size=1, test_size=300, seed=5))


def test_evaluate_closing_gold_is_perfect(small_data):
    out = experiment.evaluate_closing(NextSymbol(small_data), small_data)
    assert out["closing_accuracy"] == 1.0
    assert out["attr_correct"] == out["attr_total"]
    assert sum(out["attr_total"]) == 300 * 10  # every string closes 10 brackets
    assert len(out["attr_total"]) == int(small_data.test_attractors.max()) + 1


def test_evaluate_closing_by_attractors_and_in_batches(small_data):
    model = NextSymbol(small_data, wrong_from=2)
    out = experiment.evaluate_closing(model, small_data)
    total = out["attr_total"]
    assert out["attr_correct"] == total[:2] + [0] * (len(total) - 2)
    assert out["closing_accuracy"] == pytest.approx(sum(total[:2]) / sum(total))
    assert experiment.evaluate_closing(model, small_data, batch_size=7) == out


# --------------------------------------------------------------------------- #
# a tiny round trip: train, store, reload, report
# --------------------------------------------------------------------------- #
TINY = experiment.Config.load(
    "tiny",
    train_size=96,
    test_size=64,
    epochs=2,
    batch_size=48,
    units_000=4,
    truncation_k=1,
    units_001=[4],
    models_001=["urn", "lstm"],
    min_bucket=1,
    seeds=[0, 1],
    settings={
        "a": {"lr": 0.01, "generator": "walk", "models": "all"},
        "b": {"lr": 0.001, "generator": "midpoint", "models": "000"},
    },
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    return store, experiment.run(TINY, store=store)


def test_run_trains_and_records_history(tiny):
    store, runs = tiny
    assert list(runs) == [s.name for s in TINY.plan()]
    plan = {s.name: s for s in TINY.plan()}
    for label, run in runs.items():
        assert run.path.parent == store / "dyck" and run.path.name == plan[label].folder_name
        assert run.params == plan[label].params
        assert [row["epoch"] for row in run.history] == [1, 2]
        for row in run.history:
            assert 0.0 <= row["closing_accuracy"] <= 1.0 and math.isfinite(row["test_loss"])
            assert sum(row["attr_total"]) == 64 * 10
        assert run.final == {**run.history[-1], "n_params": run.final["n_params"]}
        assert (run.path / "weights.pt").is_file() and not run.stale
    # V = 12, n = 4: URN V n(n-1)/2 + (n+1) V = 72 + 60; LSTM (e = 12) 4 (n (n + e) + n) + V e + (n+1) V
    assert runs["URN 4, a seed 0"].final["n_params"] == 132
    assert runs["LSTM 4, a seed 1"].final["n_params"] == 4 * (4 * 16 + 4) + 12 * 12 + 5 * 12


def test_stored_weights_reproduce_the_last_evaluation(tiny):
    _, runs = tiny
    for run in runs.values():
        data = experiment.make_data(experiment.DyckTask(**run.params["task"]))
        model = experiment.rebuild_model(run)
        assert not model.training and count_parameters(model) == run.final["n_params"]
        out = experiment.evaluate_closing(model, data)
        assert {k: run.history[-1][k] for k in out} == out
        assert evaluate_loss(model, data.test) == pytest.approx(run.history[-1]["test_loss"], rel=1e-5)


def test_second_call_loads_and_a_changed_parameter_trains(tiny, monkeypatch):
    store, runs = tiny
    before = {lab: os.stat(r.path / "record.json").st_mtime_ns for lab, r in runs.items()}

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(experiment, "train_run", no_training)
    again = experiment.run(TINY, store=store, mode="load")
    assert {lab: os.stat(r.path / "record.json").st_mtime_ns for lab, r in again.items()} == before
    assert all(again[lab].history == json.loads(json.dumps(runs[lab].history)) for lab in runs)
    with pytest.raises(AssertionError, match="trained again"):
        experiment.run(
            replace(TINY, settings={"a": {"lr": 0.02, "generator": "walk"}}, mode="train"), store=store
        )


def test_report_on_tiny_runs(tiny):
    from urnlib.chapters.dyck import claims as dyck_claims

    _, runs = tiny
    views = TINY.views(runs)
    full = {name: views[name] for name in TINY.full_settings()}
    claims = dyck_claims.chapter_claims(
        views,
        turn=TINY.turn,
        units=TINY.units_001,
        min_total=1,
        variants=TINY.variant_labels(),
        lstm_embedding=TINY.lstm_embedding,
    )
    assert all(isinstance(c, Claim) and c.verdict in VERDICTS and c.chapter == "dyck" for c in claims)
    assert all(c.seeds == 2 for c in claims if c.source != "paper 001 Table 2")
    assert {c.statement.split("]")[0] for c in claims[:-1]} == {"[a", "[b"}
    variant_claims = [c for c in claims if c.source == "paper 000 Fig. 3 (our variant)"]
    assert [c.statement.split("] ")[1].split(":")[0] for c in variant_claims] == TINY.variant_labels()
    table2 = [c for c in claims if c.source == "paper 001 Table 2"]
    assert len(table2) == 1 and table2[0].verdict == "reproduced"
    ablation = report.ablation_table(full, TINY.turn, TINY.variant_labels(), 1)
    assert list(ablation["model"]) == [TINY.turn, *TINY.variant_labels()]
    assert len(report.ablation_table(full, TINY.turn, [], 1)) == 1
    found = report.ablation_finding(ablation, TINY.turn)  # the page's visible paragraph, from the same table
    for _, row in ablation[ablation["model"] != TINY.turn].iterrows():
        assert f"* *{row['setting']}*, {row['model']} (2 and 2 seeds): accuracy " in found
        assert row["closing accuracy"].split(" (")[0] in found and row["worst bucket accuracy"] in found
    alone = report.ablation_table(full, TINY.turn, [], 1)
    assert "variants=False" in report.ablation_finding(alone, TINY.turn)
    t4, rows = report.table4(views["a"][TINY.turn][0])
    assert len(t4) == len(rows) == 15
    t4s = report.table4_seeds(full, TINY.turn)
    assert list(t4s.columns) == ["symbol", "effect (paper)", "a"] and t4s["a"].str.contains("2 seeds").all()
    assert report.table3(views["b"][TINY.turn][1]).shape[0] >= 1
    losses = report.validation_loss_table(views, TINY.paper000_labels())
    assert list(losses["model"]) == TINY.paper000_labels() * 2
    text = report.attractor_summary(views["a"], TINY.paper000_labels(), 1)
    assert all(label in text for label in TINY.paper000_labels())
    for fig in (
        report.figure_accuracy_by_attractors(views, TINY.paper000_labels()),
        report.figure_ablations(full, TINY.turn, TINY.variant_labels()),
        report.figure_ablations(full, TINY.turn, []),
        report.figure_paper001(views["a"], TINY.units_001),
        report.figure_signatures(views["a"][TINY.turn][0], TINY.turn),
    ):
        assert fig.axes
    summary = report.data_summary(experiment.make_data(TINY.data_tasks()["walk"]))
    assert summary.loc["training strings"].sum() == TINY.train_size
    assert summary.loc["test strings"].sum() == TINY.test_size
    assert summary.loc["training strings"][4:].sum() == 0  # depth <= 3


class FakeRun:
    """A stored-run stand-in: its history rows, ``column`` and a record of what it took to train."""

    def __init__(self, rows, cpu_time_s: float = 600.0):
        self.history = rows
        self.record = {"cpu_time_s": cpu_time_s}

    def column(self, key):
        return [r[key] for r in self.history]


def test_attractor_accuracy_is_read_at_the_final_epoch_or_the_selected_one():
    from urnlib.seeds import Seeds

    def rows(good):
        return [
            {"test_loss": 2.0, "attr_correct": [1, 0], "attr_total": [2, 2]},
            {"test_loss": 1.0, "attr_correct": [2, good], "attr_total": [2, 2]},
            {"test_loss": 1.5, "attr_correct": [0, 1], "attr_total": [2, 2]},
        ]
    seeds = Seeds("m", [FakeRun(rows(2)), FakeRun(rows(0))], [0, 1])
    assert list(report.attractor_accuracy(seeds)["accuracy"]) == [0.0, 0.5]  # the last epoch (a short run)
    s = report.attractor_accuracy(seeds, read=lambda run: run.history[1])  # another reading: epoch 2
    assert list(s["accuracy"]) == [1.0, 0.5]
    assert s["high"][1] - 0.5 == pytest.approx(2**0.5 / 2)  # sd of (1.0, 0.0)


def _dyck_rows(test_loss, acc, train_loss):
    """100 history rows: per epoch a test loss, accuracies by attractor count 0..9 (100 predictions each)."""
    return [{"test_loss": test_loss[e], "train_loss": train_loss[e], "closing_accuracy": float(np.mean(acc)),
             "attr_correct": [round(100 * a) for a in acc], "attr_total": [100] * len(acc)}
            for e in range(100)]


def _paper001_view(seeds=3):
    """URN 8 / URN 32 / LSTM 8 / LSTM 32 as the paper describes them: URNs weakest at 0-1 attractors (less so
    with more units) with a monotonous test loss; LSTMs worst at 3 attractors, their test loss lowest at epoch
    10, then rising (at epoch 100 above the URN's)."""
    from urnlib.seeds import Seeds

    epochs = np.arange(100)
    view = {}
    for n, few in ((8, 0.85), (32, 0.9)):
        urn = [FakeRun(_dyck_rows(2.0 - 0.4 * epochs / 99 + 0.001 * i, [few, few] + [1.0] * 8,
                                  2.0 - 0.5 * epochs / 99)) for i in range(seeds)]
        lstm_loss = np.where(epochs < 10, 2.0 - 0.05 * epochs, 1.55 + 0.2 * (epochs - 9) / 90)
        lstm = [FakeRun(_dyck_rows(lstm_loss + 0.001 * i, [0.95] * 3 + [0.6] + [0.9] * 6,
                                   2.0 - 0.8 * epochs / 99)) for i in range(seeds)]
        view[f"URN {n}"], view[f"LSTM {n}"] = Seeds(f"URN {n}", urn, list(range(seeds))), Seeds(
            f"LSTM {n}", lstm, list(range(seeds)))
    return view


def test_paper001_claims_read_epoch_100_in_the_papers_words():
    from urnlib.chapters.dyck import claims_001 as dyck_claims_001

    view = _paper001_view()

    # epoch 100 only: nothing is read at an epoch chosen on test data
    claims = dyck_claims_001.paper001(view, "s", [8, 32], 30, read=report.final_row)
    by = {c.statement.split("] ", 1)[1]: c for c in claims}
    assert all(c.quote and c.epoch and c.direction and c.seeds == 3 for c in claims)
    loss = by["LSTMs reach a lower test loss than URNs of the same size"]  # epoch 100: the LSTM has overfit
    assert loss.verdict == "not reproduced" and "CPU hours" in loss.settle
    assert "selected" not in loss.ours
    monotonous = by["the URN's test loss falls monotonously; the LSTM's can get worse for a few epochs"]
    assert monotonous.verdict == "reproduced"
    overfit = by["the 8-unit LSTM overfits: its test loss rises slowly after epoch 30"]
    assert overfit.verdict == "partly reproduced"  # it overfits, but from epoch 10, not 30
    assert "epoch of its lowest test loss 10" in overfit.ours
    for statement in ("URN 8: weakest at few attractors, better at many",
                      "the URN's confusion at few attractors decreases as the number of units grows",
                      "LSTMs do worst at 3 to 4 attractors",
                      "a URN has a lower maximum error rate than the LSTM of the same size throughout "
                      "training",
                      "URNs beat the majority baseline (80% error) within the first epoch",
                      "at equal training loss, URNs have a lower maximum error rate than LSTMs"):
        assert by[statement].verdict == "reproduced", by[statement]
    # the test loss rises less for the URN; the max error rate rises for neither: not decided
    assert by["URNs are less prone to overfitting than LSTMs"].verdict == "inconclusive"


def test_a_model_short_of_100_epochs_or_at_chance_is_no_evidence():
    from urnlib.chapters.dyck import claims_001 as dyck_claims_001

    view = _paper001_view()
    for run in view["LSTM 8"]:
        run.history = run.history[:50]
    out = dyck_claims_001.paper001(view, "s", [8, 32], 30)
    on_lstm8 = [c for c in out if "LSTM" in c.statement or "8-unit" in c.statement]
    assert on_lstm8 and all((c.verdict, c.cause) == ("inconclusive", "untrained") for c in on_lstm8)
    assert all(c.ours.startswith("did not train (LSTM 8 trained fewer than 100 epochs)") for c in on_lstm8)
    weakest = [c for c in out if "URN 32: weakest" in c.statement][0]
    assert weakest.verdict == "reproduced"  # rests on the URN 32 alone
    for run in view["URN 32"]:  # closing-bracket accuracy at the majority class's 20%
        run.history = [{**row, "closing_accuracy": 0.2} for row in run.history]
    out = dyck_claims_001.paper001(view, "s", [8, 32], 30)
    weakest = [c for c in out if "URN 32: weakest" in c.statement][0]
    assert (weakest.verdict, weakest.cause) == ("inconclusive", "untrained")
    assert weakest.ours.startswith("did not train (URN 32 is at chance: closing-bracket accuracy 0.2")


def test_table2_matches_the_paper():
    t2 = report.table2(12)
    assert t2["LSTM (ours)"].tolist() == t2["LSTM (paper)"].tolist() == [6300, 2204, 924]
    assert t2["URN (ours)"].tolist() == t2["URN (paper)"].tolist() == [6348, 1644, 444]


def test_panels_figure_draws_one_legend_and_reference_lines():
    import matplotlib.pyplot as plt

    series = {"URN 4": ([1, 2], [0.5, 0.4]), "LSTM 4": ([1, 2], [0.6, 0.3])}
    fig = panels_figure(
        [
            {"series": series, "xlabel": "x", "ylabel": "y", "hline": 0.8},
            {"series": series, "xlabel": "x", "ylabel": "y", "invert_x": True},
        ],
        {"URN 4": registry.style("urn 4"), "LSTM 4": registry.style("lstm 4 e2")},
        rows=1,
        cols=2,
    )
    a, b = fig.axes[:2]
    assert len(a.lines) == 3 and len(b.lines) == 2  # two curves and the reference line
    assert b.xaxis_inverted()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["URN 4", "LSTM 4"]
    plt.close(fig)


# --------------------------------------------------------------------------- #
# the committed runs load without training, from any working directory
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("cwd", ["repo", "elsewhere"])
def test_paper_config_loads_the_committed_runs_without_training(cwd, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO if cwd == "repo" else tmp_path)

    def no_training(*args, **kwargs):
        raise AssertionError("the book path trained a run")

    monkeypatch.setattr(experiment, "train_run", no_training)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleRunWarning)  # until the committed runs are restamped
        runs = experiment.run(experiment.Config.paper())
    assert list(runs) == [s.name for s in PAPER.plan()]
    assert all(run.path.parent == REPO / "notebooks" / "results" / "dyck" for run in runs.values())
    assert all(len(run.history) == 100 for run in runs.values())


def test_report_does_not_import_the_experiments():
    code = (
        "import sys, urnlib.chapters.dyck.report; "
        "print([m for m in sys.modules if m.startswith('urnlib.experiments')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), check=True
    )
    assert out.stdout.strip() == "[]"


def test_task_round_trips_through_stored_params():
    task = PAPER.task(PAPER.settings_()["midpoint, lr 0.001"], 2)
    assert experiment.DyckTask(**asdict(task)) == task
    assert str(Path(PAPER.store_path())).endswith("notebooks/results")


def test_retrain_costs_come_from_what_the_stored_runs_took():
    """A settle text's cost is the stored runs' CPU time (scaled to the seeds it asks for), never a typed
    number; a run stored before CPU time was recorded counts its wall time."""
    from urnlib.chapters.dyck.claims_shared import retrain
    from urnlib.seeds import Seeds

    three = Seeds("URN 8", [FakeRun([], 600.0) for _ in range(3)], [0, 1, 2])  # 3 x 10 CPU minutes
    two = Seeds("LSTM 8", [FakeRun([], 1800.0) for _ in range(2)], [0, 1])
    assert retrain(three) == "about 0.5 CPU hours, as these runs took"
    assert retrain(three, two) == "about 1.5 CPU hours, as these runs took"
    longer = retrain(two, seeds=3, per="per 100 epochs")
    assert longer == "about 1.5 CPU hours per 100 epochs, as these runs took"
    old = FakeRun([])
    old.record = {"wall_time_s": 3600.0}
    assert retrain(Seeds("old", [old], [0])) == "about 1.0 CPU hours, as these runs took"


def test_a_claim_decided_against_the_paper_asks_for_another_experiment_than_more_seeds():
    """Undecided: more seeds, with their cost; decided against the paper: more seeds are not the next
    experiment, the authors' Keras models are (at the same cost)."""
    from urnlib.chapters.dyck.claims_shared import settle
    from urnlib.seeds import Seeds

    urn = {8: Seeds("URN 8", [FakeRun([], 600.0) for _ in range(3)], [0, 1, 2])}
    lstm = {8: Seeds("LSTM 8", [FakeRun([], 600.0) for _ in range(3)], [0, 1, 2])}
    cost = "about 1.0 CPU hours per setting, as these runs took"
    assert settle(None, urn, lstm) == f"3 more seeds of each model under each setting ({cost})"
    failed = settle(False, urn, lstm)
    assert failed.startswith("decided against the paper at these seeds, so more seeds are not the next")
    assert "Keras URN and LSTM" in failed and failed.endswith(f"({cost})")
