"""The matrix-embedding chapter's ablations (``ablations``: a model of ``models`` trained again with another
optimiser, learning rate or share of the training sentences) and their report
(urnlib.chapters.matrix_embeddings.report_analogy) on hand-made runs: the entries' defaults keep the chapter's
run keys, each key changes them, bad entries stop naming the key; the settings' labels; the analogy counts
over the epochs, the table against the chapter's runs and the sentence on the gap, with and without the runs
that would answer each question."""

import json
import math
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

from urnlib.chapters.matrix_embeddings import ablation as matrix_ablation
from urnlib.chapters.matrix_embeddings import experiment as ex
from urnlib.experiments.config import REPO
from urnlib.params import ParameterError
from urnlib.plots.curves import MARK_GID
from urnlib.chapters.matrix_embeddings import report_analogy as ma
from urnlib.chapters.matrix_embeddings import report as rep
from urnlib.seeds import Seeds

matplotlib.use("Agg")

PAPER = ex.Config.load("paper", ablations=[])  # the chapter's own runs (the preset adds the ablations')
DIAG, DENSE = "4.2 diagonal 100", "4.2 dense 10"
ADAGRAD = {"model": DIAG, "optimizer": "adagrad", "lr": 1.0}


def _config(*entries, scale="paper", **overrides):
    return ex.Config.load(scale, ablations=list(entries), **overrides)


# --------------------------------------------------------------------------- #
# entries -> runs
# --------------------------------------------------------------------------- #
def test_no_ablation_keeps_every_stored_run_s_key():
    folder = REPO / "notebooks" / "results" / ex.EXPERIMENT
    stored = {p.name for p in folder.iterdir() if (p / "record.json").is_file()}
    assert PAPER.ablations == [] and PAPER.ablation_plan() == {}
    specs = PAPER.plan()
    assert {s.key for s in specs} <= stored
    for spec in specs:
        assert "ablation" not in spec.coords
        record = json.loads((folder / spec.key / "record.json").read_text())
        assert record["params"] == spec.params


def test_an_entry_at_the_chapter_s_values_names_the_chapter_s_runs():
    main = {s.name: s.key for s in PAPER.plan()}
    for entry in ({"model": DIAG}, {"model": DIAG, "optimizer": "adam", "lr": 0.05, "train_fraction": 1,
                                    "seeds": [0, 1, 2]}):
        config = _config(entry)
        assert list(config.ablation_plan()) == [DIAG]
        assert {s.name: s.key for s in config.plan()} == main  # no new run
        assert [(s.name, s.key) for s in config.ablation_plan()[DIAG]] == \
            [(f"{DIAG} seed {i}", main[f"{DIAG} seed {i}"]) for i in (0, 1, 2)]
    # more seeds: the chapter's three, and two new runs outside the chapter's view
    config = _config({"model": DIAG, "seeds": [0, 1, 2, 3, 4]})
    new = [s for s in config.plan() if s.name not in main]
    assert [s.name for s in new] == [f"{DIAG} seed 3", f"{DIAG} seed 4"]
    assert all(s.coords["ablation"] == "" for s in new)
    runs = {s.name: s for s in config.plan()}
    assert len(config.view(runs)[DIAG]) == 3 and len(config.ablation_view(runs)[DIAG]) == 5


@pytest.mark.parametrize("entry, label, task, train", [
    ({"optimizer": "adagrad", "lr": 1.0}, "Adagrad lr 1.0", {}, {"optimizer": "adagrad", "lr": 1.0}),
    ({"optimizer": "adagrad"}, "Adagrad lr 0.05", {}, {"optimizer": "adagrad"}),
    ({"lr": 0.01}, "Adam lr 0.01", {}, {"lr": 0.01}),
    ({"train_fraction": 0.25}, "25% of the training sentences", {"train_fraction": 0.25}, {}),
    ({"train_fraction": 0.125, "optimizer": "adagrad", "lr": 1},
     "Adagrad lr 1.0, 12.5% of the training sentences", {"train_fraction": 0.125},
     {"optimizer": "adagrad", "lr": 1.0}),
    ({"batch_size": 10000}, "batch 10,000", {}, {"batch_size": 10000}),
    ({"epochs": 80}, "at most 80 epochs", {}, {"epochs": 80}),
    ({"optimizer": "adagrad", "lr": 1.0, "batch_size": 10000}, "Adagrad lr 1.0, batch 10,000", {},
     {"optimizer": "adagrad", "lr": 1.0, "batch_size": 10000}),
])
def test_each_key_changes_the_runs_of_its_model_only(entry, label, task, train):
    config = _config({"model": DIAG, **entry})
    (full, specs), = config.ablation_plan().items()
    assert full == f"{DIAG}, {label}"
    main = {s.name: s for s in PAPER.plan()}
    assert [s.name for s in specs] == [f"{full} seed {i}" for i in (0, 1, 2)]
    for seed, spec in enumerate(specs):
        base = main[f"{DIAG} seed {seed}"]
        assert spec.key != base.key and spec.coords == {"label": full, "seed": seed, "model": DIAG,
                                                        "ablation": label}
        assert spec.params["model"] == base.params["model"] and spec.train == base.train
        assert spec.params["task"] == {**base.params["task"], **task}
        assert spec.params["train"] == {**base.params["train"], **train}
    plan = config.plan()
    assert [s.name for s in plan[: len(main)]] == list(main) and len(plan) == len(main) + 3
    assert list(config.view({s.name: s for s in plan})) == list(PAPER.view(main))  # the chapter's, unchanged
    assert f"ablation {full}, seeds [0, 1, 2]" in config.summary()


def test_seeds_and_model_choose_the_runs():
    config = _config({"model": DENSE, "lr": 0.01, "seeds": [5]})
    assert [s.name for s in config.ablation_plan()[f"{DENSE}, Adam lr 0.01"]] == \
        [f"{DENSE}, Adam lr 0.01 seed 5"]
    spec = config.ablation_plan()[f"{DENSE}, Adam lr 0.01"][0]
    assert spec.params["model"] == {"kind": "4.2", "algebra": "dense", "d": 10}
    assert spec.params["train"]["seed"] == 5


def test_labels_name_what_a_setting_changes():
    chapter = {"optimizer": "adam", "lr": 0.05, "batch_size": 512, "epochs": 40, "train_fraction": 1.0}
    words = lambda *a: matrix_ablation.setting_words(*a, chapter=chapter,  # noqa: E731
                                                     optimizers=ex.MATRIX_OPTIMIZERS)
    assert words("adam", 0.05, 1.0) == ""
    assert words("adagrad", 1.0, 1.0) == "Adagrad lr 1.0"
    assert words("adam", 0.05, 0.5) == "50% of the training sentences"
    assert words("adagrad", 1.0, 0.25) == "Adagrad lr 1.0, 25% of the training sentences"
    full = matrix_ablation.setting_words("adagrad", 1.0, 0.5, chapter=chapter,
                                         optimizers=ex.MATRIX_OPTIMIZERS, batch_size=10000, epochs=80)
    assert full == "Adagrad lr 1.0, batch 10,000, at most 80 epochs, 50% of the training sentences"
    assert matrix_ablation.setting_words("adam", 0.05, 1.0, chapter=chapter, optimizers=ex.MATRIX_OPTIMIZERS,
                                         batch_size=512, epochs=40) == ""
    assert matrix_ablation.fraction_words(1.0) == "all the training sentences"
    # a chapter trained on a share: an entry back at all of them says so
    half = _config({"model": DIAG, "train_fraction": 1.0}, train_fraction=0.5)
    assert list(half.ablation_plan()) == [f"{DIAG}, all the training sentences"]


@pytest.mark.parametrize("entries, words", [
    ({"model": DIAG}, ["ablations", "list"]),
    (["4.2 diagonal 100"], ["ablations[0]", "mapping", "model"]),
    ([{"optimizer": "adagrad"}], ["ablations[0]", "not a mapping with a model", "write e.g."]),
    ([{"model": DIAG, "patience": 3}], ["ablations[0]", "['patience']", "optimizer", "batch_size"]),
    ([{"model": DIAG, "batch_size": 0}], ["ablations[0].batch_size", "batch_size: 10000"]),
    ([{"model": DIAG, "batch_size": 10.5}], ["ablations[0].batch_size", "integer"]),
    ([{"model": DIAG, "epochs": True}], ["ablations[0].epochs", "epochs: 80"]),
    ([{"model": "4.2 diagonal 7"}], ["ablations[0].model", "not one of the chapter's models", DIAG]),
    ([{"model": "lstm 10"}], ["ablations[0].model", "not one of the chapter's models"]),
    ([{"model": "matrix 4"}], ["ablations[0].model", "write one of the chapter's models"]),
    ([ADAGRAD, {"model": DIAG, "optimizer": "sgd"}], ["ablations[1].optimizer", "'sgd'", "adagrad"]),
    ([{"model": DIAG, "lr": 0}], ["ablations[0].lr", "write a learning rate > 0"]),
    ([{"model": DIAG, "lr": "fast"}], ["ablations[0].lr", "number", "lr: 1.0"]),
    ([{"model": DIAG, "train_fraction": 1.5}], ["ablations[0].train_fraction", "(0, 1]"]),
    ([{"model": DIAG, "train_fraction": 0}], ["ablations[0].train_fraction", "train_fraction: 0.25"]),
    ([{"model": DIAG, "seeds": []}], ["ablations[0].seeds"]),
    ([{"model": DIAG, "seeds": [1, 1]}], ["ablations[0].seeds", "twice"]),
    ([ADAGRAD, {**ADAGRAD, "seeds": [3]}], ["ablations[1]", "repeats", "Adagrad lr 1.0"]),
])
def test_a_bad_entry_stops_naming_its_key_and_what_to_write(entries, words):
    with pytest.raises(ParameterError) as err:
        ex.Config.load("paper", ablations=entries)
    assert all(w in str(err.value) for w in words), str(err.value)


# --------------------------------------------------------------------------- #
# the report on hand-made runs
# --------------------------------------------------------------------------- #
CPU_PER_EPOCH = 36.0  # CPU seconds per epoch of every hand-made run of all the training sentences


class FakeRun(SimpleNamespace):
    def column(self, key):
        return [row[key] for row in self.history]


def _run(label, model, seed, counts, *, kept, log=None, optimizer="adam", lr=0.05, fraction=1.0,
         setting=None):
    """A matrix run whose validation loss falls until epoch ``kept`` and rises after it, with the entries'
    count ``counts`` after every epoch (``log``: the log entries' at the kept epoch)."""
    kind, algebra, d = model.split()
    loss = [6.0 - 0.1 * min(e, kept) + 0.05 * max(e - kept, 0) for e in range(1, len(counts) + 1)]
    history = [{"epoch": e + 1, "test_loss": v, "val_loss": v, "analogies_correct": c}
               for e, (v, c) in enumerate(zip(loss, counts))]
    final = {"epoch": kept, "analogies_correct": counts[kept - 1], "perplexity": math.exp(loss[kept - 1]),
             "data": {"train_tokens": 2_000_000},
             **({"analogy_log_sections": {"total": {"correct": log}}} if log is not None else {})}
    task = {"corpus": "brown+sotu", **({"train_fraction": fraction} if fraction != 1 else {})}
    coords = {"label": label, "seed": seed, "model": model, **({"ablation": setting} if setting else {})}
    return FakeRun(name=f"{label} seed {seed}", coords=coords, history=history, final=final,
                   params={"task": task, "model": {"kind": kind, "algebra": algebra, "d": int(d)},
                           "train": {"optimizer": optimizer, "lr": lr, "epochs": 40}},
                   record={"cpu_time_s": CPU_PER_EPOCH * fraction * len(history)})


def _seeds(label, runs):
    return Seeds(label, runs, [r.coords["seed"] for r in runs])


#: the chapter's runs: each seed's entries count peaks at epoch 2, the held-out loss falls until epoch 4
PEAKED = [[20, 50, 30, 25, 22], [22, 55, 33, 28, 25], [18, 45, 31, 26, 20]]


def _view(diag=PEAKED, dense=None, word2vec=(530, 540, 550)):
    view = {DIAG: _seeds(DIAG, [_run(DIAG, DIAG, s, c, kept=4, log=30 + s) for s, c in enumerate(diag)])}
    if dense is not None:
        view[DENSE] = _seeds(DENSE, [_run(DENSE, DENSE, s, c, kept=2, log=60 + s)
                                     for s, c in enumerate(dense)])
    view["word2vec 100"] = _seeds("word2vec 100", [
        FakeRun(name=f"word2vec 100 seed {s}", coords={"label": "word2vec 100", "seed": s}, history=[],
                params={"model": {"kind": "word2vec"}}, final={"analogies_correct": c})
        for s, c in enumerate(word2vec)])
    return view


def _setting(name, counts_by_seed, logs, **how):
    label = f"{DIAG}, {name}"
    return label, _seeds(label, [_run(label, DIAG, s, c, kept=len(c), log=lg, setting=name, **how)
                                 for s, (c, lg) in enumerate(zip(counts_by_seed, logs))])


def test_the_paper_s_counts_come_from_the_chapter_s_table():
    assert ma.paper_count(DIAG) == float(rep.PAPER_CORRECT[DIAG]) == 555
    assert ma.paper_count(DENSE) == 81 and ma.paper_count("4.3 dense 10") == 2  # "1-2": its top
    assert ma.paper_count("4.2 upper 3") is None


def test_settings_set_each_ablation_beside_the_chapter_s_runs_of_its_model():
    view = _view(dense=PEAKED)
    adagrad = _setting("Adagrad lr 1.0", [[40, 41, 42]] * 3, [40, 41, 42], optimizer="adagrad", lr=1.0)
    grouped = ma.settings(view, dict([adagrad]))
    assert list(grouped) == [DIAG, DENSE]  # matrix models only: word2vec is a reference
    assert list(grouped[DIAG]) == [ma.CHAPTER_RUNS, "Adagrad lr 1.0"]
    assert list(grouped[DENSE]) == [ma.CHAPTER_RUNS]
    # an entry at the chapter's values with more seeds stands for the chapter's runs; with as many it does not
    more = _seeds(DIAG, [*view[DIAG], _run(DIAG, DIAG, 3, PEAKED[0], kept=4, log=33, setting="")])
    assert ma.settings(view, {DIAG: more})[DIAG][ma.CHAPTER_RUNS] is more
    assert ma.settings(view, {DIAG: view[DIAG]})[DIAG][ma.CHAPTER_RUNS] is view[DIAG]


def test_the_table_gives_the_kept_and_best_counts_of_every_setting():
    adagrad = _setting("Adagrad lr 1.0", [[40, 41, 42]] * 3, [40, 41, 42], optimizer="adagrad", lr=1.0)
    table = ma.ablation_table(_view(), dict([adagrad]))
    assert list(table["setting"]) == [ma.CHAPTER_RUNS, "Adagrad lr 1.0"]
    ours = table.iloc[0]
    assert ours["kept epoch / epochs run"] == "4/5, 4/5, 4/5" and ours["seeds"] == 3
    assert ours["correct, kept epoch: log entries"] == "31.0 ± 1.0"
    assert ours["correct, kept epoch: entries"] == "26.3 ± 1.5"
    assert ours["best over the epochs: entries"] == "50.0 ± 5.0" and ours["the paper"] == "555"
    assert table.iloc[1]["kept epoch / epochs run"] == "3/3, 3/3, 3/3"


def test_the_figure_draws_every_seed_the_kept_epochs_and_the_reference_lines():
    fractions = [_setting(f"{f:.0%} of the training sentences", [[10, 12, 11]] * 2, [10, 11], fraction=f)
                 for f in (0.25, 0.5)]
    fig = ma.epochs_figure(_view(dense=PEAKED[:2]), dict(fractions))
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]  # "(a) <model>": the letter, then the title
    assert [ax.get_title(loc="left") for ax in panels] == [f"(a) {DIAG}", f"(b) {DENSE}"]
    diag, dense = panels
    seeds = [ln for ln in diag.get_lines() if ln.get_gid() != MARK_GID and ln.get_linestyle() == "-"]
    assert len(seeds) == 3 + 2 + 2  # one line per seed: no mean over seeds that stop at different epochs
    assert [list(ln.get_ydata()) for ln in seeds[:3]] == PEAKED
    kept = next(ln for ln in diag.get_lines() if ln.get_label().startswith("kept epoch"))
    assert list(kept.get_xdata()) == [3, 3, 3, 3, 4, 4, 4] and "validation" in kept.get_label()
    assert sorted(kept.get_ydata()) == sorted([11, 11, 11, 11, 25, 28, 26])
    paper = [ln for ln in diag.get_lines() if ln.get_gid() == MARK_GID]
    assert [ln.get_ydata()[0] for ln in paper] == [555]
    assert [ln.get_ydata()[0] for ln in dense.get_lines() if ln.get_gid() == MARK_GID] == [81]
    w2v = next(ln for ln in dense.get_lines() if ln.get_label().startswith("word2vec"))
    assert list(w2v.get_ydata()) == [540, 540]
    assert diag.get_yscale() == "log"
    (legend,) = fig.legends  # one legend for the figure, each setting once; the paper's value in its panel's
    assert [t.get_text() for t in legend.get_texts()] == [
        ma.CHAPTER_RUNS, "25% of the training sentences", "50% of the training sentences",
        "kept epoch (lowest validation loss)", "log entries, kept epoch",
        "word2vec, same sentences (3 seeds)"]
    assert [t.get_text() for t in diag.get_legend().get_texts()] == ["the paper: 555 (log entries)"]


def test_without_ablations_the_sentence_names_the_runs_that_would_answer_each_question():
    text = ma.gap_line(_view())
    assert f"**{DIAG}** answers 31.0 ± 1.0 questions (log entries, kept epoch) against the paper's 555" \
        in text
    assert "word2vec on the same sentences: 540 ± 10" in text
    assert ("- *The optimiser* (not run here): `{model: '4.2 diagonal 100', optimizer: adagrad, lr: 1.0}` "
            "in `ablations` would test the authors' Adagrad") in text
    # the cost from the runs' CPU time: 3 runs x 5 epochs x 36 s = 0.15 h; at most 40 epochs: 1.2 h
    assert "3 runs, about 0.1 CPU hours at the stored runs' 36 s an epoch" in text and "at most 1.2" in text
    assert "*The corpus size* (not run here): `{model: '4.2 diagonal 100', train_fraction: 0.25}`" in text
    assert "6 runs, about 0.1 CPU hours" in text and "at most 0.9" in text  # 3 x 40 x 36 x 0.75 s
    # the count peaks at epoch 2 while the validation loss falls until epoch 4, the kept one
    assert ("peaks before the kept epoch on 3 of 3 seeds and falls while the validation loss still falls "
            "(best 50.0 ± 5.0 after epochs 2, 2, 2; 26.3 ± 1.5 at the kept epoch, kept / run: 4/5, 4/5, 4/5)"
            ) in text
    assert "the kept epoch is not where the analogies are best" in text
    assert "even the best epoch answers under half of the paper's 555 and of word2vec's 540" in text


def test_the_sentence_reads_the_optimiser_and_the_corpus_size_where_they_ran():
    closes = _setting("Adagrad lr 1.0", [[500, 560, 570]] * 3, [560, 570, 580], optimizer="adagrad", lr=1.0)
    text = ma.gap_line(_view(), dict([closes]))
    assert "*The optimiser*: Adagrad lr 1.0: 570.0 ± 10.0 (log entries" in text and "closes the gap" in text
    more = _setting("Adagrad lr 1.0", [[60, 70, 80]] * 3, [70, 72, 74], optimizer="adagrad", lr=1.0)
    assert "answers more than the chapter's runs but stays far below" in ma.gap_line(_view(), dict([more]))
    same = _setting("Adagrad lr 1.0", [[30, 31, 32]] * 3, [25, 31, 37], optimizer="adagrad", lr=1.0)
    assert "no clearly different number" in ma.gap_line(_view(), dict([same]))
    # the count grows by about 10 per doubling of the sentences: 11, 21 at a quarter and a half, 31 at all
    grows = [_setting(f"{f:.0%} of the training sentences", [[5, 6, 7]] * 3, [v - 1, v, v + 1], fraction=f)
             for f, v in ((0.25, 11), (0.5, 21))]
    text = ma.gap_line(_view(), dict(grows))
    assert "*The corpus size* (kept epoch, log entries): 25%: 11.0 ± 1.0, 50%: 21.0 ± 1.0, 100%: 31.0 ± 1.0" \
        in text
    # 555 - 31 = 524 more at 10 a doubling: 52 doublings; the paper's corpus: 1,669 times ours (11 doublings)
    assert "grows by 10.0 per doubling" in text and "would take 52 doublings of our corpus, the paper's " \
        "being 1,669 times ours (11 doublings)" in text
    assert "*The optimiser* (not run here)" in text
    flat = [_setting(f"{f:.0%} of the training sentences", [[5, 6, 7]] * 3, [30, 31, 32], fraction=f)
            for f in (0.25, 0.5)]
    assert "no growth with the share of the sentences" in ma.gap_line(_view(), dict(flat))


def test_a_seed_whose_count_peaks_at_or_after_its_kept_epoch_is_no_evidence_of_the_epoch_read():
    late = [[10, 20, 30, 40, 50]] * 3  # still rising at the kept epoch 4, highest at 5
    text = ma.gap_line(_view(diag=late))
    assert "*The epoch*: with the entries no seed's count peaks before its kept epoch" in text
    assert "not where the analogies are best" not in text


def test_a_model_at_or_above_the_paper_s_count_has_no_gap():
    high = [[600, 610, 620, 630, 640]] * 3
    view = _view(diag=high)
    for run in view[DIAG]:
        run.final["analogy_log_sections"]["total"]["correct"] = 600
    assert ma.gap_line(view) == ("No matrix model answers fewer analogy questions than the paper's: there is "
                                 "no gap to explain.")


def test_models_the_paper_does_not_count_have_no_gap_to_read():
    """The tiny preset's small models: no paper count, no reference line, and the sentence says why."""
    small = "4.2 diagonal 8"
    view = {small: _seeds(small, [_run(small, small, s, [0, 0, 1], kept=3, log=0) for s in (0, 1)])}
    assert ma.gap_line(view).startswith("The paper counts the analogies of none of these models")
    fig = ma.epochs_figure(view)
    (panel,) = [ax for ax in fig.axes if ax.get_title()]
    assert not [ln for ln in panel.get_lines() if ln.get_gid() == MARK_GID] and panel.get_yscale() == "linear"
    assert ma.ablation_table(view).iloc[0]["the paper"] == ""


def test_the_report_reads_the_experiment_s_ablation_view():
    """Runs named as the plan names them, grouped by Config.view and Config.ablation_view, reach the report
    with the setting the plan gave them."""
    config = _config(ADAGRAD, {"model": DIAG, "train_fraction": 0.5})
    runs = {}
    for spec in config.plan():
        if spec.params["model"]["kind"] != "4.2" or spec.coords["model"] != DIAG:
            continue
        train, task = spec.params["train"], spec.params["task"]
        run = _run(spec.coords["label"], DIAG, spec.coords["seed"], [10, 20, 30], kept=3, log=20,
                   optimizer=train["optimizer"], lr=train["lr"], fraction=task.get("train_fraction", 1.0),
                   setting=spec.coords.get("ablation"))
        runs[spec.name] = run
    view, ablations = config.view(runs), config.ablation_view(runs)
    assert list(view) == [DIAG] and list(ablations) == [f"{DIAG}, Adagrad lr 1.0",
                                                        f"{DIAG}, 50% of the training sentences"]
    grouped = ma.settings(view, ablations)
    assert list(grouped[DIAG]) == [ma.CHAPTER_RUNS, "Adagrad lr 1.0", "50% of the training sentences"]
    assert np.isclose(ma.kept_count(grouped[DIAG]["Adagrad lr 1.0"][0]), 20)
