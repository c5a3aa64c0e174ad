"""The matrix-embedding experiment (urnlib.chapters.matrix_embeddings.experiment, urn_lm) and its report: the
chapter's Config (every bad parameter stops before any work), its plan, a tiny train-store-reload round trip,
and the committed runs loaded without training."""

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest
import torch

from urnlib.chapters.matrix_embeddings import experiment as ex
from urnlib.chapters.matrix_embeddings import resources as matrix_resources
from urnlib.chapters.matrix_embeddings import urn_lm
from urnlib.experiments.config import REPO
from urnlib.models import build_model
from urnlib.params import DataError, ParameterError
from urnlib.chapters.matrix_embeddings import report as rep
from urnlib.tasks.matrix_lm import neighbours
from urnlib.tokens import IGNORE, TokenData
from urnlib.train import evaluate_loss


# --------------------------------------------------------------------------- #
# Config: bad parameters stop, naming the parameter
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("bad, words", [
    # the cases of tests/test_notebook_params.py
    ({"models": ["4.4 dense 10"]}, ["4.4 dense 10", "4.1", "4.2", "4.3"]),
    ({"models": ["4.2 symmetric 10"]}, ["symmetric", "not closed under matrix product"]),
    ({"models": ["4.2 dense 0"]}, ["d of", "4.2 dense 0"]),
    ({"corpus": "wiki"}, ["corpus", "wiki", "brown+sotu"]),
    ({"ngram_order": 9}, ["ngram_order", "9"]),
    ({"urn_units": 7}, ["urn_units=7", "even"]),
    # lists
    ({"models": []}, ["models=[]", "non-empty list"]),
    ({"models": "4.2 dense 10"}, ["models", "list"]),
    ({"models": [42]}, ["42", "string"]),
    ({"models": ["4.2 dense 10", "4.2 dense 10"]}, ["4.2 dense 10", "twice"]),
    ({"models": ["4.2 dense"]}, ["4.2 dense", "d missing"]),
    ({"models": ["urn 10"]}, ["urn 10", "not a matrix model"]),
    # each training setting by the name the user passed
    ({"epochs": 0}, ["epochs=0"]),
    ({"urn_epochs": 0}, ["urn_epochs=0"]),
    ({"batch_size": 0}, ["batch_size=0"]),
    ({"urn_batch_size": -1}, ["urn_batch_size=-1"]),
    ({"lr": 0.0}, ["lr=0.0"]),
    ({"urn_lr": -0.1}, ["urn_lr=-0.1"]),
    ({"urn_dropout": 1.0}, ["urn_dropout=1.0"]),
    ({"word2vec_size": -1}, ["word2vec_size=-1"]),
    ({"word2vec_epochs": 0}, ["word2vec_epochs=0"]),
    ({"seeds": [-1]}, ["seeds[0]=-1"]),
    ({"seeds": []}, ["seeds=[]", "non-empty list"]),
    ({"seeds": [0, 0]}, ["seeds", "twice"]),
    ({"split_seed": -1}, ["split_seed=-1"]),
    ({"patience": 0}, ["patience=0"]),
    ({"min_count": 0}, ["min_count=0"]),
    ({"max_length": 1}, ["max_length=1"]),
    ({"test_fraction": 0.9}, ["test_fraction=0.9"]),
    ({"lower": "yes"}, ["lower", "bool"]),
    ({"mode": "fast"}, ["mode", "fast", "load"]),
    ({"on_stale": "retrain"}, ["on_stale", "retrain", "warn", "error"]),
    # sizes: bounds, and what this machine's memory can hold
    ({"max_sentences": 4_000_000_000}, ["max_sentences=4000000000"]),
    ({"models": ["4.2 dense 200"], "ablations": []}, ["4.2 dense 200", "GiB", "batch_size or d"]),
    ({"models": ["4.2 dense 200"]}, ["ablations[0].model", "ablations=[]"]),
    ({"models": ["4.1 dense 10"], "batch_size": 8192, "ablations": []},
     ["4.1 dense 10", "GiB", "batch_size"]),
    ({"urn_batch_size": 100_000}, ["URN", "GiB", "urn_batch_size"]),
    ({"word2vec_size": 90_000}, ["word2vec", "GiB", "word2vec_size"]),
    # the validation sentences and the options (tests/test_matrix_retrain_options.py)
    ({"valid_fraction": -0.1}, ["valid_fraction=-0.1", "valid_fraction: 0.05"]),
    ({"valid_fraction": 0.0}, ["valid_fraction=0.0", "> 0", "never selected on"]),
    ({"valid_fraction": 0.6}, ["valid_fraction=0.6", "[0, 0.5]"]),
    ({"valid_fraction": "some"}, ["valid_fraction", "float"]),
    ({"valid_fraction": 0.45, "test_fraction": 0.5}, ["valid_fraction=0.45", "test_fraction=0.5", "lower"]),
    ({"train_fraction": 0.0}, ["train_fraction=0.0", "(0, 1]", "train_fraction: 0.5"]),
    ({"train_fraction": 1.5}, ["train_fraction=1.5"]),
    ({"optimizer": "sgd"}, ["optimizer='sgd'", "adam", "adagrad"]),
    ({"optimizer": "rmsprop"}, ["optimizer='rmsprop'", "['adam', 'adagrad']"]),
])
def test_bad_parameters_stop_before_any_work(bad, words):
    with pytest.raises(ParameterError) as info:
        ex.Config.load("paper", **bad)
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"


def test_a_missing_corpus_stops_with_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("URNLIB_NPM_DIR", str(tmp_path))
    with pytest.raises(DataError, match="make data"):
        ex.Config.load("tiny", corpus="brown")


def test_the_memory_estimate_bounds_the_vocabulary_the_runs_have():
    paper = ex.Config.paper()
    assert 17_544 < matrix_resources.vocabulary_bound(paper) < 1.2 * 17_544  # the committed runs' V
    assert all(need < matrix_resources.MEMORY_BYTES for need, _, _ in matrix_resources.estimates(paper))
    small = replace(paper, max_sentences=10, max_length=5)
    assert matrix_resources.vocabulary_bound(small) == 2 * 10 * 5 // 5 + 1


def test_the_paper_plan_runs_every_trained_model_per_seed_and_kneser_ney_once():
    config = ex.Config.load("paper", ablations=[])  # the chapter's own runs (the ablations': elsewhere)
    specs = config.plan()
    labels = ["4.2 diagonal 100", "4.2 dense 10", "4.3 dense 10", "word2vec 100"]
    assert [s.name for s in specs] == ([f"{label} seed {s}" for label in labels for s in (0, 1, 2)]
                                       + ["Kneser-Ney 3-gram"] + [f"URN 10 seed {s}" for s in (0, 1, 2)])
    assert list(config.view({s.name: s for s in specs})) == [*labels, "Kneser-Ney 3-gram", "URN 10"]
    tasks = {json.dumps(s.params["task"], sort_keys=True) for s in specs}
    assert len(tasks) == 1  # one split, one vocabulary
    assert json.loads(tasks.pop())["seed"] == config.split_seed
    for spec in specs:
        train = spec.params.get("train")
        if train:  # trained to convergence: the validation loss watched, the best epoch kept
            assert (train["monitor"], train["minimize"], train["keep_best"]) == ("val_loss", True, True)
            assert train["patience"] == config.patience and train["seed"] == int(spec.name.split()[-1])
    assert {s.train.__module__ for s in specs} == {"urnlib.chapters.matrix_embeddings.experiment",
                                                    "urnlib.chapters.matrix_embeddings.urn_lm"}


def test_the_seed_0_word2vec_and_kneser_ney_runs_keep_the_committed_keys():
    """Their parameters did not change: the committed runs stay theirs (the matrix models and the URN language
    model now train to convergence: new parameters, new runs)."""
    folder = REPO / "notebooks" / "results" / ex.EXPERIMENT
    keys = {p.name for p in folder.iterdir() if (p / "record.json").is_file()}
    plan = {s.name: s.key for s in ex.Config.paper().plan()}
    assert plan["word2vec 100 seed 0"] in keys and plan["Kneser-Ney 3-gram"] in keys


def test_a_baseline_set_to_zero_is_left_out():
    config = ex.Config.load("paper", word2vec_size=0, ngram_order=0, urn_units=0, seeds=[4], ablations=[])
    assert [s.name for s in config.plan()] == ["4.2 diagonal 100 seed 4", "4.2 dense 10 seed 4",
                                               "4.3 dense 10 seed 4"]


# --------------------------------------------------------------------------- #
# pieces
# --------------------------------------------------------------------------- #
def test_neighbours_are_the_nearest_by_cosine_excluding_the_word():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])
    words = ["king", "queen", "war", "peace", "zero"]
    out = neighbours(vectors, words, probes=("king", "absent"), k=2)
    assert out == {"king": ["queen", "war"]}  # the zero vector has cosine 0 and ties go by index


def test_urn_language_model_data_shifts_by_one_word_behind_a_start_symbol():
    from urnlib.tasks.matrix_lm import PAD

    words = torch.tensor([[5, 6, 7], [8, PAD, PAD]])
    d = urn_lm.lm_data(TokenData(words, torch.zeros_like(words)), start=9)
    assert d.inputs.tolist() == [[9, 5, 6], [9, 8, 0]]  # <s> w1 w2; padding read as 0, never scored
    assert d.targets.tolist() == [[5, 6, 7], [8, IGNORE, IGNORE]]


# --------------------------------------------------------------------------- #
# a tiny round trip
# --------------------------------------------------------------------------- #
TINY = ex.Config.load("tiny", max_sentences=150, max_length=20,
                      models=["4.2 dense 3", "4.2 diagonal 4", "4.3 dense 3", "4.1 dense 2"], epochs=3,
                      patience=1, batch_size=64, word2vec_size=8, ngram_order=2, urn_units=4,
                      urn_batch_size=64, urn_epochs=2)
SEEDS = TINY.seeds  # [0, 1]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    return store, ex.run(TINY, store=store, mode="train")


def test_a_tiny_run_stores_numbers_and_weights(tiny):
    _, runs = tiny
    assert list(runs) == [f"{label} seed {s}" for label in [*TINY.models, "word2vec 8"] for s in SEEDS] \
        + ["Kneser-Ney 2-gram"] + [f"URN 4 seed {s}" for s in SEEDS]
    data = ex.make_data(TINY.task())
    V = len(data.vocab.tokens)
    for label in TINY.models:
        for seed in SEEDS:
            run = runs[f"{label} seed {seed}"]
            f = run.final
            losses = run.column("test_loss")
            assert f["epoch"] == int(np.argmin(losses)) + 1 and f["test_loss"] == min(losses)  # best epoch
            assert f["perplexity"] == pytest.approx(np.exp(f["test_loss"]))
            assert f["analogies_answered"] + f["analogies_skipped"] == 19544
            assert f["analogy_sections"]["total"]["correct"] == f["analogies_correct"]
            model = build_model(run.params["model"], V)
            model.load_state_dict(run.weights)  # the best epoch's weights: their test loss is the stored one
            test_loss = evaluate_loss(model.eval(), data.test, 64, ex.token_nll)
            assert test_loss == pytest.approx(f["test_loss"], rel=1e-6)
    props = runs["4.2 dense 3 seed 0"].final["properties"]
    assert abs(props["sum_length2"] - 1) < 1e-5 and props["row_sum_error"] < 1e-5
    assert "properties" not in runs["4.3 dense 3 seed 0"].final
    assert runs["word2vec 8 seed 1"].weights["vectors"].shape == (V, 8)
    vectors = [runs[f"word2vec 8 seed {s}"].weights["vectors"] for s in SEEDS]
    assert not torch.equal(*vectors)  # the run's seed is word2vec's
    assert runs["Kneser-Ney 2-gram"].final["perplexity"] > 1 and runs["Kneser-Ney 2-gram"].weights == {}
    urn = runs["URN 4 seed 0"]
    model = build_model(urn.params["model"], V + 1)
    model.load_state_dict(urn.weights)
    held_out = evaluate_loss(model.eval(), urn_lm.lm_data(data.test, V), 64)
    assert urn.final["test_loss"] == pytest.approx(held_out, rel=1e-6) == min(urn.column("test_loss"))
    assert len(urn.history) == 2  # measured after every epoch, the monitor of its early stopping


def test_both_representations_are_scored_on_the_stored_weights(tiny):
    _, runs = tiny
    scores = ex.analogy_scores(runs)
    assert set(scores) == {f"{label} seed {s}" for label in TINY.models for s in SEEDS}
    for name, score in scores.items():
        # the entries' score is what the run stored (the same best-epoch weights)
        assert score["exp"]["total"]["correct"] == runs[name].final["analogies_correct"]
        assert score["exp"]["total"]["answered"] == runs[name].final["analogies_answered"]
        if name.startswith("4.1"):
            assert score["log"] is None  # its entries are no probabilities
        else:
            assert score["log"]["total"]["answered"] == score["exp"]["total"]["answered"]


def test_a_second_call_loads_and_the_report_reads_the_runs(tiny, monkeypatch):
    store, runs = tiny

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(ex, "train_run", no_training)
    monkeypatch.setattr(urn_lm, "train_run", no_training)
    again = ex.run(TINY, store=store)  # the tiny preset's mode is train: nothing is missing
    assert {k: r.path for k, r in again.items()} == {k: r.path for k, r in runs.items()}
    view, scores = TINY.view(again), ex.analogy_scores(again)
    table = rep.analogy_table(view, scores)
    assert list(table["model"]) == [*TINY.models, "word2vec 8", "URN 4"]
    assert list(table["seeds"]) == [2] * 6
    assert all("±" in cell for cell in table["correct: entries (exp) / vectors"])
    assert list(table["correct: log entries"])[3:] == ["n/a", "-", "-"]  # 4.1: no log entries; baselines
    assert list(rep.perplexity_table(view)["model"]) == [*TINY.models, "Kneser-Ney 2-gram", "URN 4"]
    assert list(rep.properties_table(view)["model"]) == ["4.2 dense 3", "4.2 diagonal 4"]
    assert list(rep.section_table(view, scores, "log").columns)[2:] == TINY.models[:3]  # 4.1: no log
    assert list(rep.section_table(view, scores, "exp").columns)[2:] == TINY.models
    claims = rep.claims(view, scores)
    assert {c.statement for c in claims} >= {"P sums to 1 over all strings of each length",
                                             "(1/d) 1^T M_*^n 1 = 1"}
    assert all(c.seeds == 2 for c in claims)
    assert all(c.quote and "lowest validation loss" in c.epoch for c in claims)  # the paper quoted, the epoch
    assert all(c.settle for c in claims if c.cause == "open")  # with its CPU cost from the runs' cpu_time_s
    assert all("CPU hours" in c.settle for c in claims if c.cause == "open")
    assert rep.curves(view) is not None and "4.3 dense 3" in rep.peaks(view)
    assert "times larger" in rep.data_line(view) and "random guess" in rep.analogy_line(view)
    with pytest.raises(AssertionError, match="trained again"):  # another parameter is another run
        ex.run(replace(TINY, lr=0.07), store=store)


@pytest.mark.parametrize("where", ["repository root", "elsewhere"])
def test_the_committed_runs_load_without_training(where, tmp_path, monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("the book trained a run")

    monkeypatch.setattr(ex, "train_run", no_training)
    monkeypatch.setattr(urn_lm, "train_run", no_training)
    monkeypatch.chdir(REPO if where == "repository root" else tmp_path)
    config = ex.Config.paper()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stale until restamped
        runs = ex.run(config)
    assert list(runs) == [s.name for s in config.plan()]
    assert all(r.path.parent == REPO / "notebooks" / "results" / ex.EXPERIMENT for r in runs.values())


def _numbers(run) -> str:
    """The run's loss history and final metrics without its timings, as JSON (floats written exactly)."""
    timing = ("second", "wall", "time")
    strip = lambda row: {k: v for k, v in row.items() if not any(t in k for t in timing)}  # noqa: E731
    return json.dumps({"history": [strip(r) for r in run.history], "final": strip(run.final)}, sort_keys=True)


@pytest.mark.parametrize("model", ["4.1 dense 4", "4.2 dense 4", "4.3 dense 4"])
def test_the_same_seed_twice_gives_bit_identical_losses_and_metrics(model, tmp_path, monkeypatch):
    """Two threads, float32, batches whose gathered word matrices have more than 32768 entries: where the
    backward of ``table[ids]`` used to add repeated words' gradients in a thread-dependent order."""
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")  # the run store asks git for the checkout's state
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    config = ex.Config.load("tiny", max_sentences=300, models=[model], epochs=2, batch_size=128,
                            word2vec_size=0, ngram_order=0, urn_units=0, seeds=[0])
    try:
        first, second = (ex.run(config, store=tmp_path / d, mode="retrain")[f"{model} seed 0"] for d in "ab")
    finally:
        torch.set_num_threads(threads)
    assert ex.make_data(config.task()).train.inputs.shape[1] * 128 * 16 > 32768  # batch x length x entries
    assert first.history and "test_loss" in first.final
    assert _numbers(first) == _numbers(second)
