"""Tests for urnlib.experiments.dyck and urnlib.reports.dyck (paper 000 sec. 5, paper 001 sec. 4): the
config and its checks, the plan of runs (the committed runs' parameters), closing-bracket evaluation on stub
models, a tiny train-store-reload-report round trip, and loading the committed runs without training."""

import json
import math
import os
import subprocess
import sys
import warnings
from dataclasses import asdict, replace
from pathlib import Path

import matplotlib
import pytest
import torch
from torch import nn

matplotlib.use("Agg")

from urnlib.claims import VERDICTS, Claim  # noqa: E402
from urnlib.experiments import dyck as experiment  # noqa: E402
from urnlib.experiments.config import REPO  # noqa: E402
from urnlib.languages import dyck as lang  # noqa: E402
from urnlib.models import count_parameters  # noqa: E402
from urnlib.params import ParameterError  # noqa: E402
from urnlib.plots.curves import panels_figure  # noqa: E402
from urnlib.reports import dyck as report  # noqa: E402
from urnlib.results import RunStore  # noqa: E402
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
    assert "scale **paper**" in PAPER.summary() and "3-TURN, lr 0.001" in PAPER.summary()


def test_paper_plan_labels_and_specs():
    plan = {s.name: s for s in PAPER.plan()}
    assert list(plan) == ["3-TURN", "Full URN", "Arbitrary", "URN 8", "LSTM 8", "URN 16", "LSTM 16", "URN 32",
                          "LSTM 32", "3-TURN, lr 0.001", "3-TURN, no state dropout"]
    assert PAPER.paper000_labels() == ["3-TURN", "Full URN", "Arbitrary"]
    assert PAPER.comparison_labels() == ["URN 8", "URN 16", "URN 32", "LSTM 8", "LSTM 16", "LSTM 32"]
    assert PAPER.variant_labels() == ["3-TURN, lr 0.001", "3-TURN, no state dropout"]
    turn = plan["3-TURN"].params
    assert turn["model"] == {"kind": "urn", "n": 50, "k": 3, "dropout": 0.05}
    assert plan["Full URN"].params["model"] == {"kind": "urn", "n": 50, "k": None, "dropout": 0.05}
    assert plan["Arbitrary"].params["model"] == {"kind": "arbitrary", "n": 50, "dropout": 0.05}
    assert plan["LSTM 16"].params["model"] == {"kind": "lstm", "n": 16, "embedding_size": 12, "dropout": 0.05}
    assert turn["task"] == {"n_pairs": 10, "train_size": 102400, "test_size": 5120, "train_max_depth": 3,
                            "generator": "walk", "seed": 0}
    assert turn["train"]["lr"] == 0.01 and plan["3-TURN, lr 0.001"].params["train"]["lr"] == 0.001
    assert plan["3-TURN, lr 0.001"].params["model"] == turn["model"]
    assert plan["3-TURN, no state dropout"].params["model"] == {**turn["model"], "state_dropout": False}
    for spec in plan.values():
        assert spec.experiment == "dyck" and spec.train == "urnlib.experiments.dyck:train_run"
        assert {"train.loop", "data.dyck", "experiment.dyck"} < set(spec.components)
    assert "model.arbitrary" in plan["Arbitrary"].components and "model.lstm" in plan["LSTM 8"].components


def test_plan_has_the_committed_runs_parameters():
    """The stored runs were made with these parameters (the training settings added since keep their
    neutral values), so they can be restamped instead of retrained."""
    from tools.restamp import params_difference

    store = RunStore(PAPER.store_path())
    for spec in PAPER.plan():
        found = [store.read(f, weights=False) for f in (PAPER.store_path() / "dyck").glob("*")
                 if f.name.rsplit("-", 1)[0] == spec.name]
        assert found, f"no committed run {spec.name!r}"
        assert any(params_difference(run.params, spec.params) == [] for run in found), spec.name


def test_variants_off_and_other_choices():
    config = experiment.Config.load("paper", variants=False, units_001=[4], models_001=["lstm", "arbitrary"],
                                    truncation_k=2)
    assert [s.name for s in config.plan()] == ["2-TURN", "Full URN", "Arbitrary", "LSTM 4", "Arbitrary 4"]
    assert config.variant_labels() == []
    assert config.overrides["variants"] == (True, False)


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
    ({"lr": 0.0}, ["lr", "> 0"]),
    ({"batch_size": -1}, ["batch_size"]),
    ({"seed": -1}, ["seed", ">= 0"]),
    ({"generator": "zigzag"}, ["generator", "zigzag", "walk", "midpoint"]),
    ({"train_max_depth": 11}, ["train_max_depth", "<= 10"]),
    ({"train_size": 4_000_000_000}, ["train_size", "<= 10000000"]),
    ({"test_size": 0}, ["test_size", ">= 1"]),
    ({"dropout": 1.0}, ["dropout", "<= 0.99"]),
    ({"variants": "yes"}, ["variants", "bool"]),
    ({"variant_lr": 0.01}, ["variant_lr", "equals lr"]),
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


def test_dropout_zero_without_variants_is_fine():
    config = experiment.Config.load("tiny", dropout=0.0, variants=False)
    assert all(s.params["model"]["dropout"] == 0.0 for s in config.plan())


# --------------------------------------------------------------------------- #
# data and evaluate_closing
# --------------------------------------------------------------------------- #
def task_with(**changes):
    return replace(PAPER.task(), **changes)


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
TINY = experiment.Config.load("tiny", train_size=96, test_size=64, epochs=2, batch_size=48, units_000=4,
                              truncation_k=1, units_001=[4], models_001=["urn", "lstm"], min_bucket=1)


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
    assert runs["URN 4"].final["n_params"] == 132
    assert runs["LSTM 4"].final["n_params"] == 4 * (4 * 16 + 4) + 12 * 12 + 5 * 12


def test_stored_weights_reproduce_the_last_evaluation(tiny):
    _, runs = tiny
    data = experiment.make_data(TINY.task())
    for run in runs.values():
        model = report.rebuild_model(run)
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
        experiment.run(replace(TINY, lr=0.02, mode="train"), store=store)


def test_report_on_tiny_runs(tiny):
    _, runs = tiny
    claims = report.claims(runs, turn=TINY.turn, units=TINY.units_001, lstm_embedding=TINY.lstm_embedding,
                           min_total=1, variants=TINY.variant_labels())
    assert all(isinstance(c, Claim) and c.verdict in VERDICTS and c.chapter == "dyck" for c in claims)
    variant_claims = [c for c in claims if c.source == "paper 000 Fig. 3 (our variant)"]
    assert [c.statement.split(":")[0] for c in variant_claims] == TINY.variant_labels()
    table2 = [c for c in claims if c.source == "paper 001 Table 2"]
    assert len(table2) == 1 and table2[0].verdict == "reproduced"
    ablation = report.ablation_table(runs, TINY.turn, TINY.variant_labels(), 1)
    assert list(ablation["model"]) == [f"{TINY.turn} (papers' setting)", *TINY.variant_labels()]
    assert len(report.ablation_table(runs, TINY.turn, [], 1)) == 1
    t4, rows = report.table4(runs[TINY.turn])
    assert len(t4) == len(rows) == 15
    assert report.table3(runs[TINY.turn]).shape[0] >= 1
    losses = report.validation_loss_table(runs, TINY.paper000_labels())
    assert list(losses["model"]) == TINY.paper000_labels()
    text = report.attractor_summary(runs, TINY.paper000_labels(), 1)
    assert all(label in text for label in TINY.paper000_labels())
    for fig in (report.figure_accuracy_by_attractors(runs, TINY.paper000_labels()),
                report.figure_ablations(runs, TINY.turn, TINY.variant_labels()),
                report.figure_ablations(runs, TINY.turn, []),
                report.figure_paper001(runs, TINY.units_001),
                report.figure_signatures(runs[TINY.turn], TINY.turn)):
        assert fig.axes
    summary = report.data_summary(experiment.make_data(TINY.task()))
    assert summary.loc["training strings"].sum() == TINY.train_size
    assert summary.loc["test strings"].sum() == TINY.test_size
    assert summary.loc["training strings"][4:].sum() == 0  # depth <= 3


def test_table2_matches_the_paper():
    t2 = report.table2(12)
    assert t2["LSTM (ours)"].tolist() == t2["LSTM (paper)"].tolist() == [6300, 2204, 924]
    assert t2["URN (ours)"].tolist() == t2["URN (paper)"].tolist() == [6348, 1644, 444]


def test_panels_figure_draws_one_legend_and_reference_lines():
    import matplotlib.pyplot as plt

    series = {"URN 4": ([1, 2], [0.5, 0.4]), "LSTM 4": ([1, 2], [0.6, 0.3])}
    fig = panels_figure([{"series": series, "xlabel": "x", "ylabel": "y", "hline": 0.8},
                         {"series": series, "xlabel": "x", "ylabel": "y", "invert_x": True}], rows=1, cols=2)
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
    code = ("import sys, urnlib.reports.dyck; "
            "print([m for m in sys.modules if m.startswith('urnlib.experiments')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO),
                         check=True)
    assert out.stdout.strip() == "[]"


def test_task_round_trips_through_stored_params():
    assert experiment.DyckTask(**asdict(PAPER.task())) == PAPER.task()
    assert str(Path(PAPER.store_path())).endswith("notebooks/results")
