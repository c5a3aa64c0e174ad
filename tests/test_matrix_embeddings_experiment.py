"""The matrix-embedding experiment (urnlib.experiments.matrix_embeddings, urn_lm) and its report: the
chapter's Config (every bad parameter stops before any work), its plan, a tiny train-store-reload round trip,
and the committed runs loaded without training."""

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest
import torch

from urnlib.experiments import matrix_embeddings as ex
from urnlib.experiments import matrix_resources, urn_lm
from urnlib.experiments.config import REPO
from urnlib.models import build_model
from urnlib.params import ParameterError
from urnlib.reports import matrix_embeddings as rep
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
    ({"seed": -1}, ["seed=-1"]),
    ({"min_count": 0}, ["min_count=0"]),
    ({"max_length": 1}, ["max_length=1"]),
    ({"test_fraction": 0.9}, ["test_fraction=0.9"]),
    ({"lower": "yes"}, ["lower", "bool"]),
    ({"mode": "fast"}, ["mode", "fast", "load"]),
    ({"on_stale": "retrain"}, ["on_stale", "retrain", "warn", "error"]),
    # sizes: bounds, and what this machine's memory can hold
    ({"max_sentences": 4_000_000_000}, ["max_sentences=4000000000"]),
    ({"models": ["4.2 dense 200"]}, ["4.2 dense 200", "GiB", "batch_size or d"]),
    ({"models": ["4.1 dense 10"], "batch_size": 8192}, ["4.1 dense 10", "GiB", "batch_size"]),
    ({"urn_batch_size": 100_000}, ["URN", "GiB", "urn_batch_size"]),
    ({"word2vec_size": 90_000}, ["word2vec", "GiB", "word2vec_size"]),
])
def test_bad_parameters_stop_before_any_work(bad, words):
    with pytest.raises(ParameterError) as info:
        ex.Config.load("paper", **bad)
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"


def test_a_missing_corpus_stops_with_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("URNLIB_NPM_DIR", str(tmp_path))
    with pytest.raises(ParameterError, match="make data"):
        ex.Config.load("tiny", corpus="brown")


def test_the_memory_estimate_bounds_the_vocabulary_the_runs_have():
    paper = ex.Config.paper()
    assert 17_544 < matrix_resources.vocabulary_bound(paper) < 1.2 * 17_544  # the committed runs' V
    assert all(need < matrix_resources.MEMORY_BYTES for need, _, _ in matrix_resources.estimates(paper))
    small = replace(paper, max_sentences=10, max_length=5)
    assert matrix_resources.vocabulary_bound(small) == 2 * 10 * 5 // 5 + 1


def test_the_paper_plan_has_the_parameters_of_the_committed_runs():
    specs = ex.Config.paper().plan()
    assert [s.name for s in specs] == ["4.2 diagonal 100", "4.2 dense 10", "4.3 dense 10", "word2vec 100",
                                       "Kneser-Ney 3-gram", "URN 10"]
    folder = REPO / "notebooks" / "results" / ex.EXPERIMENT
    for spec in specs:
        stored = json.loads(next(folder.glob(f"{spec.name}-*/record.json")).read_text())["params"]
        assert stored.keys() == spec.params.keys()
        for key in stored:
            if key == "train":  # the loop's newer settings take their neutral values
                assert {k: spec.params[key][k] for k in stored[key]} == stored[key]
                assert spec.params[key]["optimizer"] == "adam" and spec.params[key]["monitor"] is None
            else:
                assert spec.params[key] == stored[key]


def test_a_baseline_set_to_zero_is_left_out():
    names = [s.name for s in ex.Config.load("paper", word2vec_size=0, ngram_order=0, urn_units=0).plan()]
    assert names == ["4.2 diagonal 100", "4.2 dense 10", "4.3 dense 10"]


# --------------------------------------------------------------------------- #
# pieces
# --------------------------------------------------------------------------- #
def test_neighbours_are_the_nearest_by_cosine_excluding_the_word():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])
    words = ["king", "queen", "war", "peace", "zero"]
    out = ex.neighbours(vectors, words, probes=("king", "absent"), k=2)
    assert out == {"king": ["queen", "war"]}  # the zero vector has cosine 0 and ties go by index


def test_urn_language_model_data_shifts_by_one_word_behind_a_start_symbol():
    from urnlib.models.matrix_embedding import PAD

    words = torch.tensor([[5, 6, 7], [8, PAD, PAD]])
    d = urn_lm.lm_data(TokenData(words, torch.zeros_like(words)), start=9)
    assert d.inputs.tolist() == [[9, 5, 6], [9, 8, 0]]  # <s> w1 w2; padding read as 0, never scored
    assert d.targets.tolist() == [[5, 6, 7], [8, IGNORE, IGNORE]]


# --------------------------------------------------------------------------- #
# a tiny round trip
# --------------------------------------------------------------------------- #
TINY = ex.Config.load("tiny", max_sentences=150, max_length=20,
                      models=["4.2 dense 3", "4.2 diagonal 4", "4.3 dense 3"], epochs=1, batch_size=64,
                      word2vec_size=8, ngram_order=2, urn_units=4, urn_batch_size=64)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs")
    return store, ex.run(TINY, store=store, mode="train")


def test_a_tiny_run_stores_numbers_and_weights(tiny):
    _, runs = tiny
    assert list(runs) == [*TINY.models, "word2vec 8", "Kneser-Ney 2-gram", "URN 4"]
    data = ex.make_data(TINY.task())
    V = len(data.vocab.tokens)
    for label in TINY.models:
        run = runs[label]
        f = run.final
        assert f["perplexity"] == pytest.approx(np.exp(f["test_loss"]))
        assert f["analogies_answered"] + f["analogies_skipped"] == 19544
        assert f["analogy_sections"]["total"]["correct"] == f["analogies_correct"]
        model = build_model(run.params["model"], V)
        model.load_state_dict(run.weights)  # the weights rebuild the model: its test loss is the stored one
        test_loss = evaluate_loss(model.eval(), data.test, 64, ex.token_nll)
        assert test_loss == pytest.approx(f["test_loss"], rel=1e-6)
    props = runs["4.2 dense 3"].final["properties"]
    assert abs(props["sum_length2"] - 1) < 1e-5 and props["row_sum_error"] < 1e-5
    assert "properties" not in runs["4.3 dense 3"].final
    assert runs["word2vec 8"].weights["vectors"].shape == (V, 8)
    assert runs["Kneser-Ney 2-gram"].final["perplexity"] > 1 and runs["Kneser-Ney 2-gram"].weights == {}
    urn = runs["URN 4"]
    model = build_model(urn.params["model"], V + 1)
    model.load_state_dict(urn.weights)
    held_out = evaluate_loss(model.eval(), urn_lm.lm_data(data.test, V), 64)
    assert urn.final["test_loss"] == pytest.approx(held_out, rel=1e-6)
    assert "test_loss" not in urn.history[-1]  # measured once, after training


def test_a_second_call_loads_and_the_report_reads_the_runs(tiny, monkeypatch):
    store, runs = tiny

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(ex, "train_run", no_training)
    monkeypatch.setattr(urn_lm, "train_run", no_training)
    again = ex.run(TINY, store=store)  # the tiny preset's mode is train: nothing is missing
    assert {k: r.path for k, r in again.items()} == {k: r.path for k, r in runs.items()}
    table = rep.analogy_table(again)
    assert list(table["model"]) == [*TINY.models, "word2vec 8", "URN 4"]
    assert list(rep.perplexity_table(again)["model"]) == [*TINY.models, "Kneser-Ney 2-gram", "URN 4"]
    assert list(rep.properties_table(again)["model"]) == ["4.2 dense 3", "4.2 diagonal 4"]
    claims = rep.claims(again)
    assert {c.statement for c in claims} >= {"P sums to 1 over all strings of each length",
                                             "(1/d) 1^T M_*^n 1 = 1"}
    assert rep.curves(again) is not None and "4.3 dense 3" in rep.peaks(again)
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
                            word2vec_size=0, ngram_order=0, urn_units=0)
    try:
        first, second = (ex.run(config, store=tmp_path / d, mode="retrain")[model] for d in "ab")
    finally:
        torch.set_num_threads(threads)
    assert ex.make_data(config.task()).train.inputs.shape[1] * 128 * 16 > 32768  # batch x length x entries
    assert first.history and "test_loss" in first.final
    assert _numbers(first) == _numbers(second)
