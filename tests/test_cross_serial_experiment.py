"""Tests for urnlib.chapters.cross_serial.experiment and urnlib.chapters.cross_serial.report (paper 001 sec.
3): full-string evaluation on stub models, the plan of runs, Table 1, and a tiny train-store-reload-claims
round trip."""

import json
import math
import os
from pathlib import Path
from collections import Counter
from dataclasses import asdict, replace

import pytest
import torch
from torch import nn

import urnlib.chapters.cross_serial.experiment as cross_serial_module
from urnlib.claims import CAUSES, VERDICTS, Claim
from urnlib.chapters.cross_serial import experiment
from urnlib.languages import cross_serial as cs
from urnlib.models import count_parameters
from urnlib.chapters.cross_serial import report
from urnlib.chapters.cross_serial import claims as report_claims
from urnlib.results import Run
from urnlib.rules import beats
from urnlib.plots.series import SeedCurves
from urnlib.seeds import Stat, by_label
from urnlib.train import evaluate_loss

torch.set_num_threads(1)

PAPER = experiment.Config.paper()
SEEDS = list(range(8))  #: the paper preset's seeds


def task_with(**changes):
    """The paper's data settings (seed 0) with some changed."""
    return replace(PAPER.task(0), **changes)


def plan_of(**changes):
    """``{run name: model spec}`` of the paper's plan with some parameters changed."""
    changes.setdefault("variants", [])  # the chapter's own runs (the variants: test_cross_serial_variants)
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
    config = replace(experiment.Config.paper(), variants=[])  # variants: test_cross_serial_variants
    assert config.seeds == SEEDS
    labels = ["URN 8", "URN 16", "URN 32", "LSTM 8", "LSTM 16", "LSTM 32"]
    assert config.labels() == labels
    specs = config.plan()
    assert [s.name for s in specs] == [f"{lab} seed {seed}" for lab in labels for seed in SEEDS]
    assert [(s.coords["label"], s.coords["seed"]) for s in specs] == [(lab, seed) for lab in labels
                                                                       for seed in SEEDS]
    assert len({s.key for s in specs}) == len(specs)  # every run is its own
    for spec in specs:
        seed = spec.coords["seed"]
        # one seed for the data and the training
        assert spec.params["task"]["seed"] == spec.params["train"]["seed"] == seed
        assert spec.params["train"] == config.train_config(seed).params()
        train = spec.params["train"]
        # the paper's 100 epochs, the weights of the epoch of the lowest validation loss kept (the protocol)
        assert (train["epochs"], train["patience"], train["monitor"], train["keep_best"]) == \
            (100, None, "val_loss", True)
        assert spec.params["stop"] == {"key": "val_loss", "patience": 0, "min_epochs": 100}  # never early
        assert (train["batch_size"], train["lr"], train["minimize"]) == (512, 0.001, True)
    plan = {s.coords["label"]: s.params["model"] for s in specs}
    for n in (8, 16, 32):
        urn, lstm = plan[f"URN {n}"], plan[f"LSTM {n}"]
        assert urn["kind"] == "urn" and urn["n"] == n
        assert urn["k"] is None  # untruncated (reference-facts: cross-serial full)
        assert urn["state_dropout"] is False  # reference-facts: cross-serial URN has no state dropout
        assert urn["dropout"] == 0.05
        assert lstm == {"kind": "lstm", "n": n, "embedding_size": 20, "dropout": 0.05}
    only = plan_of(units=[4], models=["lstm"], lstm_embedding=7, dropout=0.0, seeds=[5])
    assert only == {"LSTM 4 seed 5": {"kind": "lstm", "n": 4, "embedding_size": 7, "dropout": 0.0}}
    # the grouping of a plan's runs by model
    grouped = config.view({s.name: s for s in specs})
    assert list(grouped) == labels and all(g.seeds == SEEDS for g in grouped.values())


def test_train_config_without_patience_or_keep_best_has_no_monitor():
    config = experiment.Config.load("paper", patience=0, keep_best=False, variants=[])
    cfg = config.train_config(1)
    assert (cfg.monitor, cfg.patience, cfg.keep_best, cfg.epochs, cfg.seed) == (None, None, False, 100, 1)
    assert "at most" not in config.summary() and "100 epochs" in config.summary()
    stop = experiment.Config.load("paper", keep_best=False, patience=20)  # early stopping, weights not kept
    assert (stop.train_config(0).monitor, stop.train_config(0).keep_best) == ("val_loss", False)
    assert stop.stop() == {"key": "val_loss", "patience": 20, "min_epochs": 100}
    config = experiment.Config.paper()
    summary = config.summary()  # the chapter's runs and its variants', counted
    assert f"({len(config.plan())} runs)" in summary
    assert "variants: URN 32, m+n uniform, 10 classes, 10 epochs" in summary
    assert f"seeds {SEEDS}" in summary and "lowest validation loss" in summary


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
TINY = experiment.Config.load("paper", seeds=[0, 1], train_size=512, test_size=128, epochs=2, batch_size=128,
                               lr=0.01, units=[4], models=["urn", "lstm"], mode="train", variants=[])
TINY_PLAN = {s.name: s for s in TINY.plan()}
TRAIN_K = TINY.train_k


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    runs = experiment.run(TINY, store=store)
    return store, runs


def test_run_all_trains_and_records_history(tiny):
    store, runs = tiny
    assert list(runs) == ["URN 4 seed 0", "URN 4 seed 1", "LSTM 4 seed 0", "LSTM 4 seed 1"]
    for name, run in runs.items():
        seed = run.seed
        assert run.path.parent == store / experiment.EXPERIMENT
        assert run.params == TINY_PLAN[name].params
        assert run.params["task"] == asdict(TINY.task(seed)) and run.params["train"]["seed"] == seed
        assert [row["epoch"] for row in run.history] == [1, 2]
        task = TINY.task(seed)
        for row in run.history:
            assert 0.0 <= row["error_rate"] <= 1.0
            assert math.isfinite(row["test_loss"]) and row["test_loss"] > 0
            assert math.isfinite(row["train_loss"])
            assert len(row["length_total"]) == len(row["length_wrong"]) == task.test_k
            assert sum(row["length_total"]) == task.test_size
            assert all(0 <= w <= t for w, t in zip(row["length_wrong"], row["length_total"]))
            assert row["error_rate"] == pytest.approx(sum(row["length_wrong"]) / task.test_size)
        # keep_best on the test loss: the final metrics are the best epoch's row
        best = report.best_row(run)
        assert best["test_loss"] == min(run.column("test_loss"))
        assert run.final == {**best, "n_params": run.final["n_params"], "best_epoch": run.final["best_epoch"],
                             "stopped_early": False}
        assert run.history[run.final["best_epoch"] - 1] == best
        assert run.history[0]["test_loss"] != run.history[1]["test_loss"]
        assert (run.path / "record.json").is_file() and (run.path / "weights.pt").is_file()
    # the seeds give different data and different runs
    assert runs["URN 4 seed 0"].history[0]["test_loss"] != runs["URN 4 seed 1"].history[0]["test_loss"]
    # V = 7, n = 4: URN 7*6 + 5*7 = 77; LSTM (e = 20) 4*(4*24 + 4) + 7*20 + 5*7 = 575
    assert {r.final["n_params"] for n, r in runs.items() if n.startswith("URN")} == {77}
    assert {r.final["n_params"] for n, r in runs.items() if n.startswith("LSTM")} == {575}


def test_stored_weights_reproduce_the_best_evaluation(tiny):
    _, runs = tiny
    for name, run in runs.items():
        task = TINY.task(run.seed)
        data = experiment.make_data(task)
        model = experiment.rebuild_model(run)
        assert not model.training and count_parameters(model) == run.final["n_params"]
        out = experiment.evaluate_strings(model, data, task)
        for key in ("error_rate", "length_wrong", "length_total"):
            assert out[key] == run.final[key]
        # error rates are all 1.0 at this scale; the test loss tells the epochs apart
        assert evaluate_loss(model, data.test) == pytest.approx(run.final["test_loss"], rel=1e-5)


@pytest.mark.parametrize("keep_best", [True, False])
def test_early_stopping_and_the_kept_epoch(tmp_path, keep_best):
    """Patience 1 on the error rate, which stays 1.0 at this scale: training stops after epoch 2; with
    keep_best the weights and final metrics are epoch 1's (the first of equal values), else epoch 2's."""
    config = replace(TINY, seeds=[3], units=[4], models=["urn"], epochs=5, monitor="error_rate", patience=1,
                     min_epochs=2, keep_best=keep_best)
    (run,) = experiment.run(config, store=tmp_path).values()
    assert [row["error_rate"] for row in run.history] == [1.0, 1.0]  # stopped after patience 1
    assert report.stopped_early(run) and report.best_index(run) == 0
    kept = run.history[0] if keep_best else run.history[-1]
    assert run.final == {**kept, "n_params": 77, "best_epoch": 1, "stopped_early": True}
    data = experiment.make_data(config.task(3))
    model = experiment.rebuild_model(run)
    assert evaluate_loss(model, data.test) == pytest.approx(kept["test_loss"], rel=1e-5)


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
    # so is a new seed; the old seeds' runs are kept
    with pytest.raises(AssertionError, match="trained again"):
        experiment.run(replace(TINY, seeds=[0, 1, 2]), store=store)


def test_claims_on_tiny_runs(tiny):
    _, runs = tiny
    seeds = TINY.view(runs)
    assert list(seeds) == ["URN 4", "LSTM 4"] and all(s.seeds == [0, 1] for s in seeds.values())
    claims = report_claims.claims(seeds, units=[4], train_k=TRAIN_K, lstm_embedding=20)
    assert all(isinstance(c, Claim) for c in claims)
    assert all(c.verdict in VERDICTS for c in claims)
    assert all(c.chapter == report.CHAPTER == "cross_serial" for c in claims)
    by_source = {}
    for c in claims:
        by_source.setdefault(c.source, []).append(c)
    table1 = by_source["paper 001 Table 1"][0]
    assert table1.verdict == "reproduced" and table1.seeds is None
    assert "7314/2738/1218" in table1.ours
    assert all(c.seeds == 2 for c in claims if c.source != "paper 001 Table 1")
    assert all(c.cause in CAUSES for c in claims if c.verdict != "reproduced")
    # runs of a few epochs, not the paper's 100: no evidence, whatever they measured
    fig2a = by_source["paper 001 Fig. 2a"][0]
    assert (fig2a.verdict, fig2a.cause) == ("inconclusive", "untrained")
    assert fig2a.ours.startswith("did not train (URN 4 trained fewer than 100 epochs; LSTM 4 trained "
                                 "fewer than 100 epochs): ")
    assert all(c.cause == "untrained" for c in claims if c.source != "paper 001 Table 1")
    assert all(c.quote and c.epoch for c in claims)
    assert not any("32-unit" in c.statement for c in claims)  # no 32-unit URN trained
    # without runs only Table 1 can be checked; a plan's runs are grouped by model on the way in
    assert [c.source for c in report_claims.claims({}, units=[4], train_k=8)] == ["paper 001 Table 1"]
    again = report_claims.claims(runs, units=[4], train_k=TRAIN_K)
    assert [c.verdict for c in again] == [c.verdict for c in claims]


def test_error_by_length_table(tiny):
    _, runs = tiny
    seeds = by_label(runs)
    df = report.error_by_length_table(seeds, [4])
    assert list(df.index) == ["URN 4", "LSTM 4"]
    rows = [report.final_row(run) for run in seeds["URN 4"]]  # epoch 100, or the last of a shorter run
    present = [s for s in range(TINY.test_k) if all(row["length_total"][s] > 0 for row in rows)]
    assert list(df.columns) == present
    for s in present:
        stat = Stat.of(row["length_wrong"][s] / row["length_total"][s] for row in rows)
        assert df.loc["URN 4", s] == f"{stat.mean:.3f} ± {stat.sd:.3f}"
    stats = report.error_by_length_stats(seeds["URN 4"])
    assert list(stats.columns) == ["mean", "sd", "low", "high", "seeds"] and (stats["seeds"] == 2).all()
    # the figure and the table of runs draw from the same seeds
    fig = report.figure_paper001(seeds, [4], TRAIN_K)
    assert len(fig.axes) == 4
    table = report.runs_table(seeds, [4])
    assert table["model"].tolist() == ["URN 4", "LSTM 4"] and table["seeds"].tolist() == [2, 2]


def test_unseen_length_claims_are_not_testable_without_unseen_lengths(tmp_path):
    config = replace(TINY, train_k=10, test_k=10, train_size=256, test_size=128, epochs=1)
    runs = experiment.run(config, store=tmp_path)
    claims = report_claims.claims(config.view(runs), units=[4], train_k=config.train_k)
    unseen = [c for c in claims if "unseen" in c.statement]
    assert [c.source for c in unseen] == ["paper 001 sec. 3.1"]  # the one claim that says it is not testable
    assert all(c.verdict in VERDICTS for c in claims)
    assert not any("nan" in c.ours for c in claims)
    assert all(c.verdict == "inconclusive" for c in unseen)
    assert all(c.cause != "noise" for c in unseen)  # not the seeds' spread


# --------------------------------------------------------------------------- #
# claims on hand-made seeds
# --------------------------------------------------------------------------- #
LENGTHS = 10  # test_k: lengths m + n = 2 .. 9; 8 and 9 unseen in training (train_k = 8)
PER_LENGTH = 100


def fake_run(name, test_loss, error, train_loss=None, unseen=None, seen=None, cap=None, pad=0, val_loss=None):
    """A stored-run stand-in with one history row per epoch: ``test_loss``, ``error`` (error rate),
    ``train_loss`` and ``val_loss`` (default: the test loss) per epoch; the error by length is ``seen`` on
    lengths 2..7 and ``unseen`` on 8 and 9
    (default: the epoch's error rate). ``cap``: the epoch cap (default: the epochs given, no early stop).
    ``pad``: repeat each curve's last value up to that many epochs (the paper's 100)."""
    def padded(values):
        return None if values is None else list(values) + [values[-1]] * (pad - len(values))

    test_loss, error, unseen, seen, val_loss = map(padded, (test_loss, error, unseen, seen, val_loss))
    val_loss = val_loss or test_loss
    epochs = len(test_loss)
    train_loss = train_loss or [2.0 - 1.5 * e / epochs for e in range(epochs)]
    rows = []
    for e in range(epochs):
        s_err = error[e] if seen is None else seen[e]
        u_err = error[e] if unseen is None else unseen[e]
        total = [0, 0] + [PER_LENGTH] * (LENGTHS - 2)
        wrong = [0, 0] + [round(PER_LENGTH * (u_err if k >= 8 else s_err)) for k in range(2, LENGTHS)]
        rows.append({"epoch": e + 1, "train_loss": train_loss[e], "test_loss": test_loss[e],
                     "val_loss": val_loss[e], "error_rate": error[e], "length_wrong": wrong,
                     "length_total": total})
    label, _, seed = name.rpartition(" seed ")
    kind, _, units = label.partition(" ")  # "URN 8": the spec the figures take the model's style from
    record = {"name": name, "coords": {"label": label, "seed": int(seed)},
              "params": {"model": {"kind": kind.lower(), "n": int(units)},
                         "train": {"epochs": cap or epochs, "monitor": "test_loss"}},
              "history": rows, "final": dict(rows[int(min(range(epochs), key=lambda i: test_loss[i]))])}
    return Run(record, Path("/nonexistent"))


def fake_seeds(models, pad=0):
    """``{label: Seeds}`` from ``{label: [fake_run kwargs per seed]}`` (``pad``: see :func:`fake_run`)."""
    return by_label({f"{label} seed {i}": fake_run(f"{label} seed {i}", pad=pad, **kwargs)
                     for label, per_seed in models.items() for i, kwargs in enumerate(per_seed)})


def find(claims, words):
    (found,) = [c for c in claims if words in c.statement]
    return found


def a_clear_case(lstm_loss=(0.30, 0.31, 0.32), urn_loss=(0.40, 0.41, 0.42)):
    """Three seeds of URN 8 / LSTM 8 where the paper's claims on test loss, unseen lengths and smoothness hold
    clearly; the test loss is lowest at epoch 3 of 5 (later epochs are worse), the error rate low there."""
    def run(best, error_at_best, unseen, seen, errors):
        loss = [best + 0.5, best + 0.2, best, best + 0.05, best + 0.1]
        return {"test_loss": loss, "error": errors(error_at_best), "unseen": [unseen] * 5, "seen": [seen] * 5}

    urn = [run(b, 0.05, 0.60 + 0.01 * i, 0.0, lambda e: [0.9, 0.7, e, 0.5, 0.5])  # falls by 0.65 at most
           for i, b in enumerate(urn_loss)]
    lstm = [run(b, 0.04, 0.30 + 0.01 * i, 0.0, lambda e: [1.0, 1.0, e, 0.3, 0.3])  # falls by 0.96
            for i, b in enumerate(lstm_loss)]
    return {"URN 8": urn, "LSTM 8": lstm}


def test_claims_read_epoch_100_show_the_selected_reading_and_decide_on_seeds():
    seeds = fake_seeds(a_clear_case(), pad=100)  # 100 epochs; the test loss lowest at epoch 3
    claims = report_claims.claims(seeds, units=[8], train_k=8)
    assert all(c.seeds == 3 for c in claims if c.source != "paper 001 Table 1")
    assert all(c.quote and c.epoch and c.direction for c in claims)
    fig2a = find(claims, "lower test loss")  # at epoch 100: best + 0.1 on both sides
    assert fig2a.verdict == "reproduced" and fig2a.cause is None
    assert "LSTM 0.410 ± 0.010 vs URN 0.510 ± 0.010" in fig2a.ours and "selected" not in fig2a.ours
    # epoch 100 (error 0.5 / 0.3): not below 10%; the lowest test loss (epoch 3, 0.04) would be: both shown
    fig2b = find(claims, "less than 10%")
    assert fig2b.verdict == "not reproduced" and fig2b.epoch.startswith("final (epoch 100")
    assert ("|| at the epoch of the lowest validation loss (selected on validation data): "
            "best LSTM 8: 0.04 ± 0" in fig2b.ours)
    assert fig2b.ours.endswith(", reproduced")
    assert find(claims, "err on longer, unseen strings").verdict == "reproduced"
    assert find(claims, "LSTMs do better than URNs on lengths unseen").verdict == "reproduced"
    smooth = find(claims, "falls smoothly")
    assert smooth.verdict == "reproduced"  # URN's largest fall 0.65 < LSTM's 0.96 on every seed
    # the LSTM's error after its lowest (0.04) ends at 0.3 on every seed: it overfits
    assert find(claims, "LSTMs overfit").verdict == "reproduced"
    # but the URN's error rises more (0.45 against 0.26) and the test losses rise alike: not less prone
    less = find(claims, "less prone to overfitting")
    assert less.verdict == "not reproduced" and less.quote.startswith("Additionally, the URN appears")
    assert not any("more units" in c.statement for c in claims)  # one size: no trend with size


def test_claims_on_runs_short_of_100_epochs_are_untrained():
    claims = report_claims.claims(fake_seeds(a_clear_case()), units=[8], train_k=8)  # 5 epochs
    assert {(c.verdict, c.cause) for c in claims[1:]} == {("inconclusive", "untrained")}


def test_claims_on_a_model_at_chance_are_untrained():
    """One URN seed whose validation loss stays at a uniform guess's ln 7 (the other two trained): the URN is
    no evidence, whatever the means say; the LSTM-only claims still decide."""
    case = a_clear_case()
    case["URN 8"][2]["val_loss"] = [1.95] * 5
    claims = report_claims.claims(fake_seeds(case, pad=100), units=[8], train_k=8)
    fig2a = find(claims, "lower test loss")
    assert (fig2a.verdict, fig2a.cause) == ("inconclusive", "untrained")
    assert fig2a.ours.startswith("did not train (URN 8 is at chance: validation loss ")
    assert "ln 7 = 1.946" in fig2a.ours
    assert all(c.cause == "untrained" for c in claims
               if "URN" in c.statement and c.source != "paper 001 Table 1")
    assert report.CHANCE_LOSS == pytest.approx(math.log(7))


def test_a_difference_within_the_seed_spread_is_inconclusive():
    """The LSTM's mean test loss is lower, but its seeds spread over the URN's: within noise."""
    seeds = fake_seeds(a_clear_case(lstm_loss=(0.30, 0.42, 0.36), urn_loss=(0.41, 0.35, 0.38)), pad=100)
    fig2a = find(report_claims.claims(seeds, units=[8], train_k=8), "lower test loss")
    lstm, urn = Stat.of([0.30, 0.42, 0.36]), Stat.of([0.41, 0.35, 0.38])
    assert lstm.mean < urn.mean and beats(lstm, urn, higher=False) is None
    assert fig2a.verdict == "inconclusive" and fig2a.cause == "noise" and fig2a.seeds == 3
    # the other way round beyond the spread: not reproduced, cause unknown, with what would settle it
    seeds = fake_seeds(a_clear_case(lstm_loss=(0.50, 0.51, 0.52)), pad=100)
    fig2a = find(report_claims.claims(seeds, units=[8], train_k=8), "lower test loss")
    assert fig2a.verdict == "not reproduced" and fig2a.cause == "open"
    # decided: not more seeds but the experiment that could explain it (one size: no trend)
    assert fig2a.settle.startswith("decided against the paper at these seeds, so more seeds are not the next "
                                   "experiment: the URN is lower at 8 units;")
    assert "Keras LSTM" in fig2a.settle and "grown with its size" not in fig2a.settle


def test_a_property_on_some_seeds_only_is_inconclusive():
    """The LSTM's error goes back up on two seeds of three; an LSTM that never errs on unseen lengths."""
    case = a_clear_case()
    case["LSTM 8"][0]["error"] = [1.0, 1.0, 0.04, 0.04, 0.04]
    case["LSTM 8"][1]["unseen"] = [0.0] * 5
    claims = report_claims.claims(fake_seeds(case, pad=100), units=[8], train_k=8)
    overfit = find(claims, "LSTMs overfit")
    assert overfit.verdict == "inconclusive" and overfit.cause == "noise"
    assert "on 2 of 3 seeds" in overfit.ours
    unseen = find(claims, "err on longer, unseen strings")  # the LSTM errs on 2 of its 3 runs only
    assert unseen.verdict == "inconclusive" and "LSTM: errs on unseen lengths on 2 of 3 runs" in unseen.ours


def test_size_trend_and_overall_on_two_sizes():
    case = a_clear_case()
    big = a_clear_case()
    for kwargs in big["URN 8"]:  # the larger URN errs less on unseen lengths, the larger LSTM more
        kwargs["unseen"] = [0.40] * 5
    for kwargs in big["LSTM 8"]:
        kwargs["unseen"] = [0.55] * 5
    models = {**case, "URN 32": big["URN 8"], "LSTM 32": big["LSTM 8"]}
    claims = report_claims.claims(fake_seeds(models, pad=100), units=[8, 32], train_k=8)
    trend = find(claims, "more units")
    assert trend.verdict == "reproduced", trend
    # "overall": LSTM 0.31 vs URN 0.61 at 8, 0.55 vs 0.40 at 32; over both sizes' runs 0.43 vs 0.51: within
    # the spread of the six runs a side
    overall = find(claims, "LSTMs do better than URNs on lengths unseen")
    assert overall.verdict == "inconclusive" and overall.seeds_needed is not None
    # the URN 32's training loss is >= 1 until epoch 67, its error 0.05 at epoch 3: the 0.4 claim holds
    assert find(claims, "32-unit URN").verdict == "reproduced"
    # the larger LSTM (32) overfits on every seed
    overfit = find(claims, "LSTMs overfit")
    assert overfit.ours.startswith("LSTM 32: error at epoch 100 above its lowest on 3 of 3")


def test_curves_of_different_lengths_are_drawn_seed_by_seed():
    """Seeds that stopped at different epochs: each seed's line and the mean over the epochs all reached (the
    book's rule, urnlib.plots.series); the error against the training loss: the mean at each level over the
    seeds whose range covers it."""
    case = a_clear_case()
    case["URN 8"][0] = {"test_loss": [1.0, 0.9, 0.8], "error": [1.0, 0.8, 0.6]}  # stopped at epoch 3 of 5
    seeds = fake_seeds(case)
    curves = SeedCurves(seeds["URN 8"].each(lambda run: run.column("error_rate")))
    assert curves.ragged and curves.common == 3 and len(curves.curves) == 3
    by_loss = report.error_against_train_loss(seeds["URN 8"])
    frame = by_loss.frame()
    assert not by_loss.ragged and frame["y"].between(0, 1).all()
    assert frame.groupby("x")["seed"].nunique().max() == 3 and frame.groupby("x")["seed"].nunique().min() >= 1
    fig = report.figure_paper001(seeds, [8], 8)
    assert len(fig.axes) == 4
    (a, b) = fig.axes[:2]
    for ax in (a, b):  # one thin line per seed of URN 8, and its mean over epochs 1-3
        assert sum(line.get_label() == "_nolegend_" for line in ax.get_lines()) >= 3
        mean = next(line for line in ax.get_lines() if line.get_label() == "URN 8")
        assert list(mean.get_xdata()) == [1, 2, 3]


def test_no_early_stop_before_min_epochs(tmp_path):
    """The same run with min_epochs 4: the error rate never improves, but training goes on to epoch 4."""
    config = replace(TINY, seeds=[3], units=[4], models=["urn"], epochs=6, monitor="error_rate", patience=1,
                     min_epochs=4, keep_best=True)
    (run,) = experiment.run(config, store=tmp_path).values()
    assert len(run.history) == 4 and run.final["stopped_early"] is True
