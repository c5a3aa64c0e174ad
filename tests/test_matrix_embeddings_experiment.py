"""The matrix-embedding experiment (urnlib.experiments.matrix_embeddings) and its report."""

import numpy as np
import pytest

from urnlib.experiments import matrix_embeddings as ex
from urnlib.params import ParameterError
from urnlib.reports import matrix_embeddings as rep
from urnlib.train import TrainConfig


def test_model_specs_are_parsed_or_refused_with_what_to_write():
    assert ex.parse_model("4.2 diagonal 100") == {"kind": "4.2", "algebra": "diagonal", "d": 100}
    for bad, words in [("4.4 dense 10", "MODEL ALGEBRA d"), ("4.2 dense", "MODEL ALGEBRA d"),
                       ("4.2 skew 10", "not closed under matrix product"), ("4.2 dense 0", "d of")]:
        with pytest.raises(ParameterError, match=words):
            ex.parse_model(bad)
    with pytest.raises(ParameterError, match="non-empty list"):
        ex.plan_runs([])


def test_neighbours_are_the_nearest_by_cosine_excluding_the_word():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])
    words = ["king", "queen", "war", "peace", "zero"]
    out = ex.neighbours(vectors, words, probes=("king", "absent"), k=2)
    assert out == {"king": ["queen", "war"]}  # the zero vector has cosine 0 and ties go by index


def test_a_tiny_run_end_to_end_stores_numbers_and_reloads(tmp_path):
    task = ex.LMTask(min_count=2, max_length=20, max_sentences=150, test_fraction=0.1)
    plan = ex.plan_runs(["4.2 dense 3", "4.2 diagonal 4", "4.3 dense 3"])
    runs = ex.run_all(plan, task, TrainConfig(1, 64, 0.05, 0), tmp_path)
    for label, run in runs.items():
        f = run.final
        assert f["perplexity"] == pytest.approx(np.exp(f["test_loss"]))
        assert f["analogies_answered"] + f["analogies_skipped"] == 19544
        assert f["analogy_sections"]["total"]["correct"] == f["analogies_correct"]
        assert run.weights == {}  # numbers, not matrices
    props = runs["4.2 dense 3"].final["properties"]
    assert abs(props["sum_length2"] - 1) < 1e-5 and props["row_sum_error"] < 1e-5
    assert "properties" not in runs["4.3 dense 3"].final
    again = ex.run_all(plan, task, TrainConfig(1, 64, 0.05, 0), tmp_path)
    assert again["4.2 dense 3"].final == runs["4.2 dense 3"].final  # loaded, not retrained
    base = ex.run_baselines(task, tmp_path, word2vec_size=8, word2vec_epochs=1, ngram_order=2, seed=0)
    assert base["Kneser-Ney 2-gram"].final["perplexity"] > 1
    table = rep.analogy_table(runs, base)
    assert list(table["model"]) == [*plan, "word2vec 8"]
    claims = rep.claims(runs)
    assert {c.statement for c in claims} >= {"P sums to 1 over all strings of each length", "(1/d) 1^T M_*^n 1 = 1"}


def _numbers(run) -> str:
    """The run's loss history and final metrics without its timings, as JSON (floats written exactly)."""
    import json

    timing = ("second", "wall", "time")
    strip = lambda row: {k: v for k, v in row.items() if not any(t in k for t in timing)}  # noqa: E731
    return json.dumps({"history": [strip(r) for r in run.history], "final": strip(run.final)}, sort_keys=True)


@pytest.mark.parametrize("model", ["4.1 dense 4", "4.2 dense 4", "4.3 dense 4"])
def test_the_same_seed_twice_gives_bit_identical_losses_and_metrics(model, tmp_path, monkeypatch):
    """Two threads, float32, batches whose gathered word matrices have more than 32768 entries: where the
    backward of ``table[ids]`` used to add repeated words' gradients in a thread-dependent order."""
    import torch

    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")  # the run store asks git for the checkout's state
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        task = ex.LMTask(min_count=2, max_length=30, max_sentences=300, test_fraction=0.1)
        plan = ex.plan_runs([model])
        config = TrainConfig(2, 128, 0.05, 0)
        first, second = (ex.run_all(plan, task, config, tmp_path / d, retrain=True)[model] for d in "ab")
    finally:
        torch.set_num_threads(threads)
    assert ex.make_data(task).train.inputs.shape[1] * 128 * 16 > 32768  # batch x length x free entries
    assert first.history and "test_loss" in first.final
    assert _numbers(first) == _numbers(second)

def test_urn_language_model_data_shifts_by_one_word_behind_a_start_symbol():
    import torch

    from urnlib.experiments.urn_lm import lm_data
    from urnlib.models.matrix_embedding import PAD
    from urnlib.train import IGNORE, TokenData

    words = torch.tensor([[5, 6, 7], [8, PAD, PAD]])
    d = lm_data(TokenData(words, torch.zeros_like(words)), start=9)
    assert d.inputs.tolist() == [[9, 5, 6], [9, 8, 0]]  # <s> w1 w2; padding read as 0, never scored
    assert d.targets.tolist() == [[5, 6, 7], [8, IGNORE, IGNORE]]
