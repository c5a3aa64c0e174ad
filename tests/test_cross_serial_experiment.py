"""Tests for urnlib.experiments.cross_serial and urnlib.reports.cross_serial (paper 001 sec. 3): full-string
evaluation on stub models, the plan of runs, Table 1, and a tiny train-store-reload-claims round trip."""

import json
import math
import os
from collections import Counter
from dataclasses import asdict, replace

import pytest
import torch
from torch import nn

import urnlib.experiments.cross_serial as cross_serial_module
from urnlib.claims import VERDICTS, Claim
from urnlib.experiments import cross_serial as experiment
from urnlib.languages import cross_serial as cs
from urnlib.models import count_parameters
from urnlib.reports import cross_serial as report
from urnlib.train import evaluate_loss

torch.set_num_threads(1)

PAPER = experiment.Config.paper()


def task_with(**changes):
    """The paper's data settings with some changed."""
    return replace(PAPER.task(), **changes)


def plan_of(**changes):
    """``{label: model spec}`` of the paper's plan with some parameters changed."""
    return {s.name: s.params["model"] for s in experiment.Config.load("paper", **changes).plan()}

VOCAB = cs.CrossSerialVocab()
PAD, START, STOP = (VOCAB.index[s] for s in (VOCAB.PAD, VOCAB.START, VOCAB.STOP))


class StubLM(nn.Module):
    """Logits favouring a next symbol computed from the inputs alone (no parameters):

    ``gold`` - the gold next symbol (the next input, or the stop symbol after the last letter);
    ``always_a`` - always "a";
    ``gold_short`` - gold on strings with m + n < ``cut``, padding predicted first on the others.
    Padded positions get the start symbol (garbage that must be ignored).
    """

    def __init__(self, mode: str, cut: int = 8):
        super().__init__()
        self.mode, self.cut = mode, cut

    def forward(self, x):
        B, T = x.shape
        nxt = torch.full_like(x, PAD)
        nxt[:, :-1] = x[:, 1:]
        real = x != PAD
        nxt[real & (nxt == PAD)] = STOP  # after the last letter
        nxt[~real] = START
        if self.mode == "always_a":
            nxt = torch.full_like(x, VOCAB.index["a"])
        elif self.mode == "gold_short":
            letters = real.sum(dim=1) - 1  # 2 (m + n)
            long = letters >= 2 * self.cut
            nxt[long, 0] = PAD
        logits = torch.randn(B, T, len(VOCAB), generator=torch.Generator().manual_seed(0))
        return logits + 20.0 * nn.functional.one_hot(nxt, len(VOCAB)).float()


@pytest.fixture(scope="module")
def task_and_data():
    task = task_with(train_size=1, test_size=1300, seed=3)  # > one predict() batch of 1024
    return task, experiment.make_data(task)


# --------------------------------------------------------------------------- #
# make_data, evaluate_strings
# --------------------------------------------------------------------------- #
def test_make_data_draws_from_the_right_languages():
    task = task_with(train_size=3000, test_size=2000, seed=1)
    data = experiment.make_data(task)
    assert len(data.train) == 3000 and len(data.test) == 2000 and len(data.test_pairs) == 2000
    assert data.train.inputs.shape[1] == 2 * 7 + 1  # longest C_8 string (m + n = 7) + start
    assert data.test.inputs.shape[1] == 2 * 9 + 1
    lengths = Counter(m + n for m, n in data.test_pairs)
    assert set(lengths) == set(range(2, 10))  # the test set holds unseen lengths 8 and 9
    assert set(data.test_pairs) == set(cs.language(10))
    # the test targets are the encoding of the test pairs
    _, targets = cs.encode(data.test_pairs, data.vocab)
    assert torch.equal(targets, data.test.targets)
    # seeded: same task, same data; another seed, other data
    again = experiment.make_data(task_with(train_size=3000, test_size=2000, seed=1))
    other = experiment.make_data(task_with(train_size=3000, test_size=2000, seed=2))
    assert again.test_pairs == data.test_pairs
    assert other.test_pairs != data.test_pairs
    # the test strings do not depend on the training language; train and test use different streams
    wider = experiment.make_data(task_with(train_k=10, train_size=2000, test_size=2000, seed=1))
    assert torch.equal(wider.test.targets, data.test.targets)
    assert not torch.equal(wider.train.targets, wider.test.targets)


def test_evaluate_strings_gold_stub_is_perfect(task_and_data):
    task, data = task_and_data
    out = experiment.evaluate_strings(StubLM("gold"), data, task)
    assert out["error_rate"] == 0.0
    hist = Counter(m + n for m, n in data.test_pairs)
    assert out["length_total"] == [hist.get(s, 0) for s in range(task.test_k)]
    assert out["length_total"][:2] == [0, 0] and sum(out["length_total"]) == task.test_size
    assert out["length_wrong"] == [0] * task.test_k


def test_evaluate_strings_always_a_is_always_wrong(task_and_data):
    task, data = task_and_data
    out = experiment.evaluate_strings(StubLM("always_a"), data, task)
    assert out["error_rate"] == 1.0
    assert out["length_wrong"] == out["length_total"]


def test_evaluate_strings_breaks_errors_down_by_length(task_and_data):
    task, data = task_and_data
    out = experiment.evaluate_strings(StubLM("gold_short", cut=8), data, task)
    total = out["length_total"]
    assert out["length_wrong"] == [0] * 8 + total[8:]
    assert out["error_rate"] == pytest.approx((total[8] + total[9]) / task.test_size)
    assert 0 < out["error_rate"] < 1


def test_evaluate_strings_with_min_block_0():
    task = task_with(train_size=1, test_size=500, min_block=0, seed=4)
    data = experiment.make_data(task)
    assert (0, 0) in data.test_pairs  # the empty string: its only prediction is the stop symbol
    out = experiment.evaluate_strings(StubLM("gold"), data, task)
    assert out["error_rate"] == 0.0 and out["length_total"][0] == data.test_pairs.count((0, 0))


# --------------------------------------------------------------------------- #
# plan_runs, table1
# --------------------------------------------------------------------------- #
def test_plan_runs_paper_settings():
    plan = plan_of()
    assert list(plan) == ["URN 8", "URN 16", "URN 32", "LSTM 8", "LSTM 16", "LSTM 32"]
    for n in (8, 16, 32):
        urn, lstm = plan[f"URN {n}"], plan[f"LSTM {n}"]
        assert urn["kind"] == "urn" and urn["n"] == n
        assert urn["k"] is None  # untruncated (reference-facts: cross-serial full)
        assert urn["state_dropout"] is False  # reference-facts: cross-serial URN has no state dropout
        assert urn["dropout"] == 0.05
        assert lstm == {"kind": "lstm", "n": n, "embedding_size": 20, "dropout": 0.05}
    only = plan_of(units=[4], models=["lstm"], lstm_embedding=7, dropout=0.0)
    assert only == {"LSTM 4": {"kind": "lstm", "n": 4, "embedding_size": 7, "dropout": 0.0}}


def test_table1_matches_the_paper():
    t1 = report.table1()
    assert t1["units"].tolist() == [32, 16, 8]
    assert t1["LSTM (ours, V=10)"].tolist() == [7314, 2738, 1218]
    assert t1["URN (ours, V=10)"].tolist() == [5290, 1370, 370]
    assert t1["LSTM (paper)"].tolist() == [7314, 2738, 1218]
    assert t1["URN (paper)"].tolist() == [5290, 1370, 370]
    t7 = report.table1(trained_vocab=7)
    # reference-facts formulas at V = 7: URN V n(n-1)/2 + (n+1) V; LSTM 4(n(n+e)+n) + V e + (n+1) V
    for n, urn, lstm in zip(t7["units"], t7["URN (as trained, V=7)"], t7["LSTM (as trained, V=7)"]):
        assert urn == 7 * n * (n - 1) // 2 + (n + 1) * 7
        assert lstm == 4 * (n * (n + 20) + n) + 7 * 20 + (n + 1) * 7


def test_data_summary_counts_strings_per_length():
    df = report.data_summary(8, 10, 1)
    assert list(df.columns) == list(range(2, 10))
    assert df.iloc[0].tolist() == [1, 2, 3, 4, 5, 6, 0, 0]
    assert df.iloc[1].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert df.sum(axis=1).tolist() == [21, 36]


# --------------------------------------------------------------------------- #
# a tiny end-to-end round trip
# --------------------------------------------------------------------------- #
TINY = experiment.Config.load("paper", train_size=512, test_size=128, epochs=2, batch_size=128, lr=0.01,
                               units=[4], models=["urn", "lstm"], mode="train")
TINY_TASK, TINY_CFG = TINY.task(), TINY.train_config()
TINY_PLAN = {s.name: s.params["model"] for s in TINY.plan()}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    runs = experiment.run(TINY, store=store)
    return store, runs


def test_run_all_trains_and_records_history(tiny):
    store, runs = tiny
    assert list(runs) == ["URN 4", "LSTM 4"]
    for label, run in runs.items():
        assert run.path.parent == store / experiment.EXPERIMENT
        assert run.params == {"task": asdict(TINY_TASK), "model": TINY_PLAN[label], "train": asdict(TINY_CFG)}
        assert [row["epoch"] for row in run.history] == [1, 2]
        for row in run.history:
            assert 0.0 <= row["error_rate"] <= 1.0
            assert math.isfinite(row["test_loss"]) and row["test_loss"] > 0
            assert math.isfinite(row["train_loss"])
            assert len(row["length_total"]) == len(row["length_wrong"]) == TINY_TASK.test_k
            assert sum(row["length_total"]) == TINY_TASK.test_size
            assert all(0 <= w <= t for w, t in zip(row["length_wrong"], row["length_total"]))
            assert row["error_rate"] == pytest.approx(sum(row["length_wrong"]) / TINY_TASK.test_size)
        assert run.final == {**run.history[-1], "n_params": run.final["n_params"]}  # the last epoch
        assert run.history[0]["test_loss"] != run.history[1]["test_loss"]
        assert (run.path / "record.json").is_file() and (run.path / "weights.pt").is_file()
    # V = 7, n = 4: URN 7*6 + 5*7 = 77; LSTM (e = 20) 4*(4*24 + 4) + 7*20 + 5*7 = 575
    assert runs["URN 4"].final["n_params"] == 77
    assert runs["LSTM 4"].final["n_params"] == 575


def test_stored_weights_reproduce_the_last_evaluation(tiny):
    _, runs = tiny
    data = experiment.make_data(TINY_TASK)
    for run in runs.values():
        model = experiment.rebuild_model(run)
        assert not model.training and count_parameters(model) == run.final["n_params"]
        out = experiment.evaluate_strings(model, data, TINY_TASK)
        for key in ("error_rate", "length_wrong", "length_total"):
            assert out[key] == run.history[-1][key]
        # error rates are all 1.0 at this scale; the test loss tells the epochs apart
        assert evaluate_loss(model, data.test) == pytest.approx(run.history[-1]["test_loss"], rel=1e-5)


def test_second_call_loads_from_the_store(tiny, monkeypatch):
    store, runs = tiny
    before = {lab: (os.stat(r.path / "record.json").st_mtime_ns, r.record["wall_time_s"])
              for lab, r in runs.items()}

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(cross_serial_module, "train_token_model", no_training)
    again = experiment.run(TINY, store=store, mode="load")
    assert list(again) == list(runs)
    for lab, run in again.items():
        assert run.path == runs[lab].path
        assert (os.stat(run.path / "record.json").st_mtime_ns, run.record["wall_time_s"]) == before[lab]
        assert run.history == json.loads(json.dumps(runs[lab].history))
    # a changed parameter is a different run: it trains (here: hits the patched fit)
    with pytest.raises(AssertionError, match="trained again"):
        experiment.run(replace(TINY, lr=0.02), store=store)


def test_claims_on_tiny_runs(tiny):
    _, runs = tiny
    claims = report.claims(runs, units=[4], train_k=TINY_TASK.train_k, lstm_embedding=20)
    assert all(isinstance(c, Claim) for c in claims)
    assert all(c.verdict in VERDICTS for c in claims)
    assert all(c.chapter == report.CHAPTER == "cross_serial" for c in claims)
    by_source = {}
    for c in claims:
        by_source.setdefault(c.source, []).append(c)
    assert by_source["paper 001 Table 1"][0].verdict == "reproduced"
    assert "7314/2738/1218" in by_source["paper 001 Table 1"][0].ours
    # verdicts follow from the runs
    lstm_lower = runs["LSTM 4"].final["test_loss"] < runs["URN 4"].final["test_loss"]
    fig2a = by_source["paper 001 Fig. 2a"][0]
    assert fig2a.verdict == ("reproduced" if lstm_lower else "not reproduced")
    best = min(min(r.column("error_rate")) for r in runs.values())
    fig2b = [c for c in by_source["paper 001 Fig. 2b"] if "10%" in c.statement][0]
    assert fig2b.verdict == ("reproduced" if best < 0.10 else "not reproduced")
    assert not any("32-unit" in c.statement for c in claims)  # no 32-unit URN trained
    # without runs only Table 1 can be checked
    assert [c.source for c in report.claims({}, units=[4], train_k=8)] == ["paper 001 Table 1"]


def test_error_by_length_table(tiny):
    _, runs = tiny
    df = report.error_by_length_table(runs, [4])
    assert list(df.index) == ["URN 4", "LSTM 4"]
    row = runs["URN 4"].history[-1]
    present = [s for s, t in enumerate(row["length_total"]) if t > 0]
    assert list(df.columns) == present
    for s in present:
        assert df.loc["URN 4", s] == pytest.approx(row["length_wrong"][s] / row["length_total"][s])


def test_unseen_length_claims_are_not_testable_without_unseen_lengths(tmp_path):
    config = replace(TINY, train_k=10, test_k=10, train_size=256, test_size=128, epochs=1)
    task = config.task()
    runs = experiment.run(config, store=tmp_path)
    claims = report.claims(runs, units=[4], train_k=task.train_k)
    unseen = [c for c in claims if "unseen" in c.statement]
    assert [c.source for c in unseen] == ["paper 001 sec. 3.1, Fig. 2d"]
    assert all(c.verdict in VERDICTS for c in claims)
    assert not any("nan" in c.ours for c in claims)
    assert all(c.verdict == "not testable here" for c in unseen)
