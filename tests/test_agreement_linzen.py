"""The agreement chapter's ``linzen`` source (urnlib.tasks.agreement_linzen): Linzen et al.'s released files
divided into training, held-out and test sentences; the nouns' tags from the Brown corpus; the 0 bucket; the
heuristics on hand-made sentences; a damaged shipped file stopping the chapter before any training."""

import shutil
from pathlib import Path

import pytest

from tests.helpers import raises_with
from urnlib.corpora import shipped
from urnlib.corpora.numpred import NumpredExample
from urnlib.chapters.agreement import experiment as ag
from urnlib.params import DataError
from urnlib.tasks import agreement_linzen as L
from urnlib.tasks.agreement import CorpusTask, heuristic_accuracy, make_data, source_kind, task_for

REPO = Path(__file__).resolve().parents[1]
LEXICON = {"dog": "NN", "dogs": "NNS", "cabinet": "NN", "keys": "NNS"}


def _example(label: str, text: str, n: int) -> L.AgreementExample:
    return L.to_example(NumpredExample(label, tuple(text.split()), None), n, LEXICON)


def test_tags_come_from_the_lexicon_and_placeholders_are_their_own_tags():
    assert L.tag_of("dogs", LEXICON) == "NNS"
    assert L.tag_of("dog", LEXICON) == "NN"
    assert L.tag_of("NNS", LEXICON) == "NNS"  # a rare word replaced by its tag in the files
    assert L.tag_of("VBG", LEXICON) == "VBG"
    assert L.tag_of("the", LEXICON) == L.OTHER


def test_an_example_ends_before_the_verb_with_the_files_label():
    ex = _example("VBP", "the keys to the cabinet", 1)
    assert ex.prefix == ("the", "keys", "to", "the", "cabinet")
    assert ex.plural and ex.verb_pos == "VBP" and ex.n_attractors == 1
    assert ex.pos == ("W", "NNS", "W", "W", "NN")


def test_the_zero_bucket_needs_no_noun_of_the_other_number():
    assert L.zero_attractor(_example("VBP", "the keys to the NNS", 0))  # plural verb, plural nouns only
    assert not L.zero_attractor(_example("VBP", "the keys to the cabinet", 0))  # a singular noun
    assert not L.zero_attractor(_example("VBZ", "the dog near the dogs", 0))
    assert L.zero_attractor(_example("VBZ", "it", 0))  # no noun at all


def test_lexicon_recall_counts_sentences_with_enough_other_number_nouns():
    tests = {1: [_example("VBP", "the keys to the cabinet", 1), _example("VBP", "the keys to it", 1)],
             2: [_example("VBZ", "the dog near the keys and dogs", 2)]}
    assert L.lexicon_recall(tests) == {"1": 0.5, "2": 1.0}


def test_the_heuristics_on_hand_made_sentences():
    examples = [_example("VBP", "the keys to the cabinet", 1),  # first noun right, nearest wrong
                _example("VBZ", "the dog near the dogs", 1),
                _example("VBZ", "the dog", 0)]  # both right
    scored = heuristic_accuracy(examples)
    assert scored["first noun"]["attr_correct"] == [1, 2]
    assert scored["nearest noun"]["attr_correct"] == [1, 0]
    assert scored["first noun"]["attr_total"] == [1, 2]


def test_the_brown_lexicon_knows_common_nouns_and_their_number():
    lexicon = L.noun_lexicon()
    assert lexicon["dog"] == "NN" and lexicon["dogs"] == "NNS"
    assert lexicon["people"] == "NNS" and lexicon["year"] == "NN"
    assert "the" not in lexicon and "are" not in lexicon


def test_the_split_divides_the_validation_file_and_reads_the_test_files():
    train, test, info = L.linzen_split(seed=3, test_fraction=0.1, max_examples=300)
    assert len(train) + info["held_out"] == 300
    assert {ex.n_attractors for ex in train} == {L.UNKNOWN}  # the validation file mixes counts
    zero = [ex for ex in test if ex.n_attractors == 0]
    assert len(zero) == info["zero_bucket"] <= info["held_out"]
    assert all(L.zero_attractor(ex) for ex in zero)
    assert not {ex.words for ex in zero} & {ex.words for ex in train}  # held out: never trained on
    counts = [sum(ex.n_attractors == n for ex in test) for n in range(1, 6)]
    assert counts == [300, 300, 300, 300, 159]  # numpred.test.5 has 159 lines
    again, _, _ = L.linzen_split(seed=3, test_fraction=0.1, max_examples=300)
    other, _, _ = L.linzen_split(seed=4, test_fraction=0.1, max_examples=300)
    assert again == train and other != train


def test_make_data_holds_out_validation_sentences_and_stores_what_the_split_did():
    task = CorpusTask(source="linzen", vocab_size=500, test_fraction=0.1, max_examples=200,
                      offline_max_sentences=0, seed=0)
    assert source_kind(task) == "linzen"
    corpus = {k: v for k, v in vars(task).items() if k != "source"}
    assert task_for("linzen", synthetic={}, corpus=corpus) == task
    data = make_data(task, True)
    stats = data.stats
    assert stats["source"] == "linzen"
    assert stats["train_examples"] + stats["valid_examples"] + stats["linzen"]["held_out"] == 200
    assert stats["test_attractors"]["5"] == 159 and stats["test_attractors"]["1"] == 200
    assert set(stats["heuristics"]) == {"first noun", "nearest noun"}
    assert len(data.test) == sum(stats["test_attractors"].values())


@pytest.fixture
def damaged_numpred(tmp_path, monkeypatch):
    root = tmp_path / "data"
    shutil.copytree(REPO / "notebooks" / "data" / "linzen-agreement", root / "linzen-agreement")
    monkeypatch.setattr(shipped, "DATA_DIR", root)
    path = root / "linzen-agreement" / "numpred.test.3"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:1200]) + b"\n" + lines[1200][:7])  # cut mid-line
    return path


def test_a_damaged_file_stops_the_chapter_in_its_first_cell(damaged_numpred):
    with raises_with(DataError, str(damaged_numpred), "git checkout --"):
        ag.Config.load("tiny", sources=["linzen"], analysis_source="", mode="train")
    loaded = ag.Config.load("tiny", sources=["linzen"], analysis_source="", mode="load")  # reads no data
    assert loaded.sources == ["linzen"]


def test_the_training_guard_reads_validation_sentences_where_the_test_is_drawn_otherwise():
    """On Linzen et al.'s files the test sentences are mostly sentences with attractors, unlike the training
    ones: a model failing there (test accuracy at the majority class) is not thereby untrained. The guard
    compares the validation loss with the validation sentences' class entropy."""
    from urnlib.chapters.agreement import report as rep
    from urnlib.seeds import Seeds

    share = L.validation_share(0, 0.1)
    assert 0.2 < share < 0.5  # more singular verbs than plural ones in the validation file
    assert share == L.validation_share(0, 0.1)  # the same split every time

    def run(val_loss):
        row = {"train_loss": 0.05, "val_loss": val_loss, "test_loss": 2.0, "accuracy": 0.56, "seconds": 1.0,
               "attr_correct": [90, 56], "attr_total": [100, 100]}
        return type("Run", (), {
            "name": "hand-made", "history": [row] * 10,
            "params": {"task": {"source": "linzen", "seed": 0, "test_fraction": 0.1, "max_examples": 0},
                       "train": {"monitor": "val_loss"}},
            "final": {"data": {"test_plural_share": 0.56}},
            "column": lambda self, k: [r[k] for r in self.history]})()

    trained = Seeds("LSTM", [run(0.30), run(0.32)], [0, 0])
    assert rep.untrained(trained, "LSTM") == ""
    stuck = Seeds("LSTM", [run(0.66), run(0.64)], [0, 0])
    assert "at chance at epoch 10 on its validation sentences" in rep.untrained(stuck, "LSTM")
