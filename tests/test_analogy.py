"""Analogy questions and the 3CosAdd evaluation of paper 003 (urnlib.corpora.analogy)."""

import importlib.util
import os
import subprocess
import sys
import warnings
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest

from urnlib.corpora import analogy as analogy_module
from urnlib.corpora.analogy import (
    Analogy,
    AnalogyFormatError,
    evaluate_3cosadd,
    google_analogy_path,
    read_analogies,
)
from urnlib.params import DataError, ParameterError

SAMPLE = Path(__file__).parent / "data" / "analogy_sample.txt"
HAVE_GENSIM = importlib.util.find_spec("gensim") is not None


# --- the reader -------------------------------------------------------------------------------------------

def test_reads_a_hand_written_file_with_two_sections():
    questions = read_analogies(SAMPLE)
    assert len(questions) == 5  # the blank line is ignored
    assert questions[0] == Analogy("capital-common-countries", "athens", "greece", "baghdad", "iraq")
    assert [q.section for q in questions] == ["capital-common-countries"] * 3 + ["family"] * 2
    assert questions[-1].words == ("king", "queen", "man", "woman")  # lower-cased by default


def test_lower_false_keeps_the_case():
    questions = read_analogies(SAMPLE, lower=False)
    assert questions[0].words == ("Athens", "Greece", "Baghdad", "Iraq")
    assert questions[-1].words == ("King", "Queen", "man", "woman")


def _broken(tmp_path, text):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    (": s\na b c d\na b c\n", r"broken\.txt, line 3: 3 words 'a b c'; expected 4 words"),
    (": s\n\na b c d e\n", r"line 3: 5 words 'a b c d e'; expected 4 words"),
    ("a b c d\n: s\n", r"line 1: a question before the first section header"),
    (":\na b c d\n", r"line 1: a section header without a name"),
    (": s\n\n", r"holds no analogy questions"),
])
def test_a_broken_file_names_the_line(tmp_path, text, message):
    with pytest.raises(AnalogyFormatError, match=message):
        read_analogies(_broken(tmp_path, text))


def test_a_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_analogies(tmp_path / "nope.txt")


def test_missing_gensim_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(analogy_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DataError, match="pip install gensim"):
        google_analogy_path()


@pytest.fixture
def gensim_file():
    if not HAVE_GENSIM:
        if os.environ.get("CI"):
            pytest.fail("gensim is not installed (a core dependency; CI must have it)")
        pytest.skip("gensim is not installed: pip install gensim")
    return google_analogy_path()


def test_the_google_analogy_set_has_19544_questions_in_14_sections(gensim_file):
    questions = read_analogies(gensim_file)
    sections = list(dict.fromkeys(q.section for q in questions))
    assert len(questions) == 19544 and len(sections) == 14
    assert sections[0] == "capital-common-countries" and sections[-1] == "gram9-plural-verbs"
    assert sum(q.section == "capital-common-countries" for q in questions) == 506
    assert questions[0].words == ("athens", "greece", "baghdad", "iraq")


def test_locating_the_file_does_not_import_gensim(gensim_file):
    code = ("import sys; from urnlib.corpora.analogy import google_analogy_path; "
            "google_analogy_path(); print('gensim' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- 3CosAdd ----------------------------------------------------------------------------------------------

# axes: royalty, male, female; king - man + woman = queen exactly
ROYAL = {"man": (0, 1, 0), "woman": (0, 0, 1), "king": (1, 1, 0), "queen": (1, 0, 1), "crown": (1, 0, 0),
         "boy": (0, 2, 0.2), "girl": (0, 0.2, 2)}


def _embedding(table):
    return np.array(list(table.values()), dtype=float), list(table)


def test_king_minus_man_plus_woman_is_queen():
    vectors, words = _embedding(ROYAL)
    questions = [Analogy("family", "man", "king", "woman", "queen"),
                 Analogy("family", "woman", "queen", "man", "king"),
                 Analogy("family", "man", "woman", "boy", "girl")]
    result = evaluate_3cosadd(vectors, words, questions)
    assert result.predictions == ("queen", "king", "girl")
    assert (result.correct, result.answered, result.skipped, result.accuracy) == (3, 3, 0, 1.0)


def test_the_question_words_are_excluded():
    # b and c nearly coincide, so b scores highest of all; d is the best word other than a, b, c
    table = {"a": (1, 0, 0), "b": (0, 1, 0), "c": (0.3, 1, 0), "d": (0, 1, 1), "e": (0, 0, 1)}
    vectors, words = _embedding(table)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit @ unit[1] - unit @ unit[0] + unit @ unit[2]
    assert words[int(scores.argmax())] == "b"  # what an evaluation without exclusion would answer
    result = evaluate_3cosadd(vectors, words, [Analogy("s", "a", "b", "c", "d")])
    assert result.predictions == ("d",) and result.correct == 1


def test_out_of_vocabulary_questions_are_skipped_and_counted_per_section():
    vectors, words = _embedding(ROYAL)
    questions = [Analogy("family", "man", "king", "woman", "queen"),
                 Analogy("family", "man", "king", "woman", "princess"),  # d unknown
                 Analogy("capitals", "athens", "greece", "baghdad", "iraq"),
                 Analogy("family", "woman", "queen", "man", "crown"),  # answered, wrong (king)
                 Analogy("capitals", "man", "woman", "boy", "girl")]
    result = evaluate_3cosadd(vectors, words, questions)
    assert result.predictions == ("queen", None, None, "king", "girl")
    assert (result.correct, result.answered, result.skipped) == (2, 3, 2)
    assert result.accuracy == pytest.approx(2 / 3)
    table = result.per_section()
    assert list(table.index) == ["family", "capitals", "total"]  # file order
    assert table.loc["family", ["correct", "answered", "skipped", "questions"]].tolist() == [1, 2, 1, 3]
    assert table.loc["capitals", ["correct", "answered", "skipped", "questions"]].tolist() == [1, 1, 1, 2]
    assert table.loc["total", ["correct", "answered", "skipped", "questions"]].tolist() == [2, 3, 2, 5]
    assert table.loc["family", "accuracy"] == 0.5
    assert list(result.per_section(total=False).index) == ["family", "capitals"]


def test_zero_vectors_give_no_nan_and_are_never_the_answer():
    vectors, words = _embedding(dict(ROYAL, blank=(0, 0, 0)))
    questions = [Analogy("s", "blank", "king", "woman", "queen"),  # a zero question word: cosine 0
                 Analogy("s", "man", "king", "woman", "blank")]  # d a zero vector: answered, wrong
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        result = evaluate_3cosadd(vectors, words, questions)
        frame = result.per_section()
    assert result.predictions == ("queen", "queen")  # the first: b + c, as a adds nothing
    assert (result.answered, result.correct) == (2, 1) and not frame.isna().any().any()
    # the only word left with a positive score would be the zero vector (score 0); it is never chosen
    vectors, words = _embedding({"x": (1, 0), "y": (0, 1), "w": (1, 1), "m": (-1, -1), "blank": (0, 0)})
    assert evaluate_3cosadd(vectors, words, [Analogy("s", "x", "y", "w", "m")]).predictions == ("m",)
    # every word other than a, b, c a zero vector: no candidate is left
    only_zero = evaluate_3cosadd(np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]), ["a", "b", "c", "d"],
                                 [Analogy("s", "a", "b", "c", "d")])
    assert only_zero.predictions == ("",) and only_zero.answered == 1 and only_zero.correct == 0


def test_batch_size_does_not_change_the_result():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(40, 6))
    vectors[7] = 0
    words = [f"w{i}" for i in range(40)]
    questions = [Analogy(f"s{i % 3}", *(words[j] for j in idx))
                 for i, idx in enumerate(permutations(range(0, 40, 5), 4))]
    questions.append(Analogy("s0", "w1", "w2", "w3", "oov"))
    results = [evaluate_3cosadd(vectors, words, questions, batch=b) for b in (1, 7, 10_000)]
    assert results[0].predictions == results[1].predictions == results[2].predictions
    assert results[0].per_section().equals(results[2].per_section())
    assert results[0].answered == len(questions) - 1 and results[0].skipped == 1


def test_ties_go_to_the_lowest_index():
    vectors = np.array([[1.0, 0], [0, 1], [1, 0], [0, 2], [0, 1], [0, 3]])  # words 3, 4, 5 tie
    result = evaluate_3cosadd(vectors, list("abcdef"), [Analogy("s", "a", "b", "c", "f")])
    assert result.predictions == ("d",)


@pytest.mark.parametrize("vectors, words, message", [
    (np.zeros((2, 2, 2)), ["a", "b"], r"shape \(2, 2, 2\); expected \(V, D\)"),
    (np.zeros((3, 2)), ["a", "b"], "2 words for 3 vectors"),
    (np.zeros((2, 2)), ["a", "a"], "'a' appears twice"),
    (np.full((2, 2), np.nan), ["a", "b"], "NaN or infinity"),
])
def test_bad_inputs_are_parameter_errors(vectors, words, message):
    with pytest.raises(ParameterError, match=message):
        evaluate_3cosadd(vectors, words, [])


def test_batch_must_be_positive():
    with pytest.raises(ParameterError, match="batch=0"):
        evaluate_3cosadd(np.eye(4), list("abcd"), [], batch=0)
