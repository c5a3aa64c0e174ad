"""Tests for the Elman (1990) sentence generator (lecture 004, Tables 3 and 4)."""

from collections import Counter

import numpy as np
import pytest

from urnlib.languages.elman import (
    CATEGORIES, TEMPLATES, generate, is_template_sentence, stream, word_classes,
)
from urnlib.params import ParameterError


def test_table_sizes_match_lecture():
    # Lecture 004 Table 3: 12 categories, 23 entries (11 with two words, VERB-EAT with one),
    # 21 distinct words (see, break repeated). Table 4: 16 templates, 12 of length 3, 4 of length 2.
    assert len(CATEGORIES) == 12
    assert sum(len(w) for w in CATEGORIES.values()) == 23
    assert len(word_classes()) == 21
    assert len(TEMPLATES) == 16
    assert Counter(len(t) for t in TEMPLATES) == {3: 12, 2: 4}
    assert len(set(TEMPLATES)) == 16
    assert all(c in CATEGORIES for t in TEMPLATES for c in t)


def test_word_classes():
    wc = word_classes()
    assert wc["see"] == ("VERB-TRAN", "VERB-PERCEPT")
    assert wc["break"] == ("VERB-AGPAT", "VERB-DESTROY")
    assert wc["dragon"] == ("NOUN-AGRESS",)
    assert wc["eat"] == ("VERB-EAT",)
    assert wc["bread"] == ("NOUN-FOOD",)


@pytest.mark.parametrize("seed", range(20))
def test_generated_sentences_match_templates(seed):
    for s in generate(500, np.random.default_rng(seed)):
        assert is_template_sentence(s), s


@pytest.mark.parametrize("words", [
    ["man", "eat"],               # VERB-EAT after NOUN-HUM needs an object
    ["cookie", "eat", "man"],     # food cannot eat
    ["man", "eat", "unicorn"],    # unknown word
    ["man", "sleep", "cookie"],   # intransitive with an object
    ["dragon", "eat", "glass"],   # not a template
    ["man"], [],
])
def test_negatives_rejected(words):
    assert not is_template_sentence(words)


def test_positives_accepted():
    assert is_template_sentence(["man", "eat", "cookie"])
    assert is_template_sentence(("woman", "see", "woman"))    # see as VERB-TRAN
    assert is_template_sentence(["man", "see", "rock"])       # see as VERB-PERCEPT
    assert is_template_sentence(["rock", "break"])            # break as VERB-AGPAT
    assert is_template_sentence(["monster", "break", "plate"])  # break as VERB-DESTROY


def test_coverage_over_10000_sentences():
    sents = generate(10_000, np.random.default_rng(0))
    wc = word_classes()
    seen_templates = set()
    for s in sents:
        seen_templates |= {t for t in TEMPLATES
                           if len(t) == len(s) and all(c in wc[w] for c, w in zip(t, s))}
    assert seen_templates == set(TEMPLATES)
    assert set(stream(sents)) == set(wc)


def test_deterministic_for_seed():
    a = generate(200, np.random.default_rng(7))
    assert a == generate(200, np.random.default_rng(7))
    assert a != generate(200, np.random.default_rng(8))
    assert generate(0, np.random.default_rng(0)) == []


def test_stream_concatenates():
    sents = [["man", "sleep"], ["cat", "eat", "cookie"]]
    assert stream(sents) == ["man", "sleep", "cat", "eat", "cookie"]
    sents = generate(100, np.random.default_rng(1))
    assert len(stream(sents)) == sum(map(len, sents))


@pytest.mark.parametrize("call", [
    lambda: generate(-1, np.random.default_rng(0)),
    lambda: generate(2.5, np.random.default_rng(0)),
    lambda: generate(True, np.random.default_rng(0)),
    lambda: generate(3, 0),
    lambda: generate(3, np.random.RandomState(0)),
    lambda: is_template_sentence("man sleep"),
    lambda: is_template_sentence(["man", 3]),
    lambda: stream("man sleep"),
    lambda: stream([["man"], "sleep"]),
    lambda: stream(None),
])
def test_bad_arguments(call):
    with pytest.raises(ParameterError):
        call()


# ------------------------------------------------------------------------------------------ the experiment
# urnlib.chapters.primer.elman: rows of the stream, training settings, mean states; the report's clustering
def test_elman_rows_and_settings():
    from urnlib.chapters.primer import elman as primer_elman

    task = primer_elman.ElmanTask(n_sentences=40, hidden=4, row_length=5, seed=0)
    stream, data, held_out = primer_elman.make_data(task)
    words = primer_elman.vocabulary()
    assert len(words) == 21
    flat = [words[i] for i in data.inputs.flatten().tolist()]
    assert flat == stream[: len(flat)]
    assert (data.targets[:, :-1] == data.inputs[:, 1:]).all()
    assert len(held_out) > 0
    assert primer_elman.parse_setting("20 8 0.01") == (20, 8, 0.01)
    for bad in ["20 8", "x 8 0.1", "20 8 0.01 3", "0 8 0.01", "20 0 0.01", "20 8 0", "20 8 nan", 20]:
        with pytest.raises(ParameterError, match="elman_settings"):
            primer_elman.parse_setting(bad)
    with pytest.raises(ParameterError):
        primer_elman.ElmanTask(n_sentences=40, hidden=0, row_length=5, seed=0)


def test_mean_states_average_the_state_after_each_word():
    import torch

    from urnlib.chapters.primer import elman as primer_elman

    torch.manual_seed(0)
    model = primer_elman.build(primer_elman.ElmanTask(n_sentences=10, hidden=3, row_length=2, seed=0))
    assert model.localist and model.n == 3
    stream = ["man", "eat", "cookie", "man", "sleep"] * 40
    means = primer_elman.mean_states(model, stream)
    index = {w: i for i, w in enumerate(primer_elman.vocabulary())}
    with torch.no_grad():
        h = model.states(torch.tensor([[index[w] for w in stream]]))[0].double()
    for word in set(stream):
        rows = [t for t, w in enumerate(stream) if w == word]
        assert np.allclose(means[word], h[rows].mean(0).numpy(), atol=1e-5)


def test_elman_partitions_on_hand_made_states():
    from pathlib import Path

    from urnlib.chapters.primer import elman as primer_elman
    from urnlib.chapters.primer import report
    from urnlib.results import Run

    classes = word_classes()
    states = {}
    for w in primer_elman.vocabulary():
        noun = all(c.startswith("NOUN") for c in classes[w])
        animate = any(c in report.ANIMATE for c in classes[w])
        states[w] = [0.0 if noun else 10.0, 1.0 if animate else 0.0, 0.01 * len(w)]

    def run(mean_states):
        record = {"name": "x", "params": {}, "final": {"mean_states": mean_states}, "history": []}
        return Run(record, Path("."))

    parts = report.elman_partitions(run(states))
    assert parts["noun_verb"] == 1.0 and parts["animate_inanimate"] == 1.0
    swapped = dict(states, man=states["eat"])  # one noun among the verbs
    assert report.elman_partitions(run(swapped))["noun_verb"] == pytest.approx(20 / 21)
