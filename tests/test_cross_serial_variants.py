"""The cross-serial chapter's variants (urnlib.chapters.cross_serial.variants, issue 50): the authors' sampler
(m + n uniformly, then m) beside ours (every string equally likely, unchanged), a model with more output
classes than the vocabulary (the authors' 10), and the entries of ``variants`` read into runs that keep the
chapter's own runs, keys and groups unchanged."""

import re
from collections import Counter
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch

from urnlib.chapters.cross_serial import experiment as cs
from urnlib.languages import cross_serial as lang
from urnlib.params import ParameterError
from urnlib.results import RunStore
from urnlib.runner import run_plan

AUTHORS = {"model": "urn", "units": 32, "sampler": "lengths", "classes": 10, "epochs": 10}
LABEL = "URN 32, m+n uniform, 10 classes, 10 epochs"


def test_the_default_sampler_draws_as_before():
    """Uniformly over the strings: one integer draws each pair of C_k (the stored runs' data)."""
    drawn = lang.generate(50, 8, rng=np.random.default_rng([3, 0]))
    pairs = lang.language(8, 1)
    assert drawn == [pairs[i] for i in np.random.default_rng([3, 0]).integers(0, len(pairs), size=50)]
    assert drawn == lang.generate(50, 8, rng=np.random.default_rng([3, 0]), sampler="strings")


def test_the_authors_sampler_draws_the_pattern_length_uniformly_then_m():
    """C_8 has 6 pattern lengths (2-7): each about 1/6 of the strings, where per string m + n = 7 would be 6
    of 21; given m + n = 7, m = 1..6 about equally often."""
    drawn = lang.generate(60_000, 8, rng=0, sampler="lengths")
    assert set(drawn) <= set(lang.language(8, 1))
    lengths = Counter(m + n for m, n in drawn)
    assert sorted(lengths) == [2, 3, 4, 5, 6, 7]
    assert all(abs(c / len(drawn) - 1 / 6) < 0.01 for c in lengths.values())
    sevens = Counter(m for m, n in drawn if m + n == 7)
    assert sorted(sevens) == [1, 2, 3, 4, 5, 6]
    assert all(abs(c / lengths[7] - 1 / 6) < 0.02 for c in sevens.values())
    degenerate = Counter(m + n for m, n in lang.generate(7_000, 4, rng=1, min_block=0, sampler="lengths"))
    assert sorted(degenerate) == [0, 1, 2, 3] and min(degenerate.values()) > 1_500
    with pytest.raises(ParameterError, match="sampler='words'"):
        lang.generate(3, 8, sampler="words")


def test_an_output_class_past_the_vocabulary_is_never_a_valid_prediction():
    vocab = lang.CrossSerialVocab()
    pairs = [(1, 1)]  # ^ a b c d: predictions a, b, c, d, $
    right = torch.tensor([[vocab.index[s] for s in "abcd$"]])
    assert lang.score_strings(right, pairs, vocab, 10).tolist() == [True]
    for position in range(5):
        wrong = right.clone()
        wrong[0, position] = 9  # the authors' model has 10 classes, our vocabulary 7
        assert lang.score_strings(wrong, pairs, vocab, 10).tolist() == [False]


PAPER = cs.Config.paper()


def test_without_variants_the_chapter_plans_its_own_runs_unchanged():
    plain = replace(PAPER, variants=[])
    main = {s.name: s.key for s in plain.plan()}
    assert len(main) == 48 and all(" seed " in n and "," not in n for n in main)
    assert {s.name: s.key for s in PAPER.plan() if s.name in main} == main
    for spec in plain.plan():
        assert set(spec.params) == {"task", "model", "train", "stop"} and "variant" not in spec.coords


def test_the_paper_presets_variant():
    plans = PAPER.variant_plan()
    assert list(plans) == list(PAPER.variant_specs()) == [LABEL, "URN 32, m+n uniform, 10 epochs",
                                                           "URN 32, 10 classes, 10 epochs",
                                                           "LSTM 16, the authors' cell",
                                                           "LSTM 32, the authors' cell", *WHOLE]
    for n in (16, 32):
        authors = plans[f"LSTM {n}, the authors' cell"][0]
        assert authors.params["model"] == {"kind": "lstm", "n": n, "embedding_size": 20, "dropout": 0.1,
                                           "output_mask": True, "init": "typedflow"}
        assert [s.params["train"]["seed"] for s in plans[f"LSTM {n}, the authors' cell"]] == [0, 1, 2]
    assert authors.params["train"]["epochs"] == 100 and "sampler" not in authors.params
    specs, main = plans[LABEL], {s.name: s for s in PAPER.plan()}
    assert plans["URN 32, m+n uniform, 10 epochs"][0].params["sampler"] == "lengths"
    assert "classes" not in plans["URN 32, m+n uniform, 10 epochs"][0].params
    assert plans["URN 32, 10 classes, 10 epochs"][0].params["classes"] == 10
    assert "sampler" not in plans["URN 32, 10 classes, 10 epochs"][0].params
    # 24 seeds of the authors' setting (8 left Fig. 2c undecided), the chapter's 8 among them
    assert [s.params["train"]["seed"] for s in specs] == list(range(24)) and PAPER.seeds == list(range(8))
    for spec in specs[:8]:
        usual = main[f"URN 32 seed {spec.params['train']['seed']}"]
        assert spec.params["sampler"] == "lengths" and spec.params["classes"] == 10
        assert spec.params["train"] == {**usual.params["train"], "epochs": 10}
        assert spec.params["stop"] == {**usual.params["stop"], "min_epochs": 10}
        assert spec.params["task"] == usual.params["task"] and spec.params["model"] == usual.params["model"]
        assert spec.coords["variant"] == LABEL and spec.key != usual.key
    assert f"variants: {LABEL} (seeds {list(range(24))})" in PAPER.summary()
    # Fig. 2a in the authors' whole setting: both models on their strings, 100 epochs, 3 seeds
    for label in WHOLE:
        first = plans[label][0]
        assert first.params["sampler"] == "lengths" and first.params["classes"] == 10
        assert first.params["train"]["epochs"] == 100 and len(plans[label]) == 3
        usual = main[f"{label.split(',')[0]} seed 0"]
        assert first.params["model"] == (plans[f"{label.split(',')[0]}, the authors' cell"][0].params["model"]
                                         if label.startswith("LSTM") else usual.params["model"])


#: the variants of Fig. 2a in the authors' whole setting (claims_settle.authors_whole)
WHOLE = ["LSTM 16, m+n uniform, 10 classes, the authors' cell", "LSTM 32, m+n uniform, 10 classes, the "
         "authors' cell", "URN 16, m+n uniform, 10 classes", "URN 32, m+n uniform, 10 classes"]


@pytest.mark.parametrize("entry, label", [
    ({"model": "urn", "units": 32, "sampler": "lengths"}, "URN 32, m+n uniform"),
    ({"model": "lstm", "units": 8, "classes": 10}, "LSTM 8, 10 classes"),
    ({"model": "urn", "units": 16, "epochs": 10, "sampler": "strings", "classes": 7}, "URN 16, 10 epochs"),
    ({"model": "lstm", "units": 16, "cell": "authors"}, "LSTM 16, the authors' cell"),
])
def test_an_entry_names_only_what_it_changes(entry, label):
    (got, variant), = replace(PAPER, variants=[entry]).variant_specs().items()
    assert got == label and variant.seeds == PAPER.seeds


@pytest.mark.parametrize("entries, message", [
    ({"model": "urn"}, r"variants=.*must be of type list"),
    ([{"model": "urn"}], r"variants\[0\].*at least a model and units"),
    ([{**AUTHORS, "lr": 0.01}], r"variants\[0\] has \['lr'\]: an entry takes only"),
    ([{**AUTHORS, "model": "gru"}], r"variants\[0\]\.model='gru'"),
    ([{**AUTHORS, "units": 7}], r"variants\[0\]\.units=7: the URN needs an even number"),
    ([{**AUTHORS, "sampler": "words"}], r"variants\[0\]\.sampler='words'"),
    ([{**AUTHORS, "classes": 5}], r"variants\[0\]\.classes=5 must be >= 7"),
    ([{**AUTHORS, "epochs": 0}], r"variants\[0\]\.epochs=0 must be >= 1"),
    ([{**AUTHORS, "seeds": [1, 1]}], r"variants\[0\]\.seeds"),
    ([{"model": "urn", "units": 32, "sampler": "strings"}], r"variants\[0\].*changes nothing"),
    ([{**AUTHORS, "cell": "authors"}], r"variants\[0\]\.cell='authors': only the LSTM has the authors' cell"),
    ([{"model": "lstm", "units": 16, "cell": "keras"}], r"variants\[0\]\.cell='keras'"),
    ([AUTHORS, {**AUTHORS, "seeds": [9]}], r"variants\[1\] repeats " + re.escape(repr(LABEL))),
])
def test_bad_entries_are_named(entries, message):
    with pytest.raises(ParameterError, match=message):
        replace(PAPER, variants=entries)


def test_a_variant_trains_with_its_sampler_and_classes_and_is_grouped_apart(tmp_path):
    """One tiny run of the chapter and one of a variant: the variant's model has 10 output classes, its test
    strings are the authors' sampler's, and the chapter's view leaves it out."""
    tiny = replace(cs.Config.tiny(), seeds=[0], units=[4], models=["urn"], epochs=1, min_epochs=1,
                   train_size=64, test_size=32,
                   variants=[{"model": "urn", "units": 4, "sampler": "lengths", "classes": 10}])
    runs = run_plan(tiny.plan(), RunStore(tmp_path), mode="train")
    assert sorted(runs) == ["URN 4 seed 0", "URN 4, m+n uniform, 10 classes seed 0"]
    assert list(tiny.view(runs)) == ["URN 4"]
    assert list(tiny.variant_view(runs)) == ["URN 4, m+n uniform, 10 classes"]
    run = runs["URN 4, m+n uniform, 10 classes seed 0"]
    model = cs.rebuild_model(run)
    assert model(torch.zeros(1, 3, dtype=torch.long)).shape[-1] == 10
    assert cs.rebuild_model(runs["URN 4 seed 0"])(torch.zeros(1, 3, dtype=torch.long)).shape[-1] == 7
    task = cs.CrossSerialTask(**run.params["task"])
    assert cs.make_data(task, "lengths").test_pairs == lang.generate(
        32, task.test_k, rng=np.random.default_rng([0, 1]), sampler="lengths")
    assert sum(run.history[-1]["length_total"]) == 32
    assert asdict(task) == run.params["task"]
