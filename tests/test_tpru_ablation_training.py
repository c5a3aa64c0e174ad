"""The TPRU ablation's training settings (optimiser, learning rate, gradient clipping): an entry reads them
into its runs' train parameters only where they differ from the chapter's (so that an entry at the chapter's
values names the main runs), labels and setting names say what they change in words, and the settle texts of
the claims on encoders at chance say what such settings found once they ran, else name them as the next
experiments with their cost. Hand-made runs, no training."""

from dataclasses import replace
from types import SimpleNamespace

import matplotlib
import pytest

from tests.test_tpru_claims import ROLES_BETTER, ent_runs_of, released_of
from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import entailment as ent
from urnlib.params import ParameterError
from urnlib.seeds import Seeds
from urnlib.chapters.tpru import report_ablation as ablation
from urnlib.chapters.tpru import claims as tpru_claims
from urnlib.train import TrainConfig

matplotlib.use("Agg")

MODEL = "tpru 8 N4 s2"
#: the paper preset with one small TPRU and two seeds; entries are swapped in per test
BASE = replace(tpru.Config.paper(), scaled=None, lm_sizes=[],
               models=["gru 8", MODEL], embedding_size=8, hidden=8,
               seeds=[0, 1], ablations=[])
AUTHORS = {"optimizer": "amsgrad", "clip_value": 10.0, "clip": None}  #: the optimisation of paper 002's code
AUTHORS_LABEL = "Adam with AMSGrad, gradient values clipped at 10, no norm clip"


def plan(*entries):
    return replace(BASE, ablations=list(entries)).ablation_plan()


# --------------------------------------------------------------------------- entries and labels
def test_an_entry_at_the_chapters_training_names_the_main_runs():
    main = [s.key for s in BASE.entailment_plan()["TPRU 8 N=4 s=2"]]
    assert [s.key for s in plan({"model": MODEL})["TPRU 8 N=4 s=2"]] == main
    explicit = plan({"model": MODEL, "optimizer": "adam", "lr": BASE.lr, "clip": BASE.clip,
                     "clip_value": None})
    assert list(explicit) == ["TPRU 8 N=4 s=2"]
    assert [s.key for s in explicit["TPRU 8 N=4 s=2"]] == main
    assert "clip_value" not in explicit["TPRU 8 N=4 s=2"][0].params["train"]


@pytest.mark.parametrize("change, label, train", [
    ({"optimizer": "amsgrad"}, "TPRU 8 N=4 s=2, Adam with AMSGrad", {"optimizer": "amsgrad"}),
    ({"lr": 0.003}, "TPRU 8 N=4 s=2, lr 0.003", {"lr": 0.003}),
    ({"lr": 3e-4}, "TPRU 8 N=4 s=2, lr 0.0003", {"lr": 0.0003}),
    ({"clip": None}, "TPRU 8 N=4 s=2, no norm clip", {"clip": None}),
    ({"clip": 5}, "TPRU 8 N=4 s=2, gradient norm clipped at 5", {"clip": 5.0}),
    ({"clip_value": 10}, "TPRU 8 N=4 s=2, gradient values clipped at 10", {"clip_value": 10.0}),
    (AUTHORS, f"TPRU 8 N=4 s=2, {AUTHORS_LABEL}", AUTHORS),
    ({"bias_init": 0.0, "lr": 0.003, "min_epochs": 3}, "TPRU 8 N=4 s=2, b=0, lr 0.003, 3+ epochs",
     {"lr": 0.003}),
])
def test_each_training_key_changes_the_runs_and_says_so_in_the_label(change, label, train):
    main = BASE.entailment_plan()["TPRU 8 N=4 s=2"]
    runs = plan({"model": MODEL, **change})
    assert list(runs) == [label]
    for spec, usual in zip(runs[label], main):
        assert spec.key != usual.key and spec.name == f"{label} seed {usual.params['train']['seed']}"
        expected = replace(BASE.train_config(usual.params["train"]["seed"]), **train).params()
        assert spec.params["train"] == expected  # built by TrainConfig.params()
        assert TrainConfig(**spec.params["train"]).params() == expected


def test_labels_of_the_existing_settings_do_not_change():
    """The stored runs' names and the report's grouping rest on them."""
    assert list(tpru.Config.paper().ablation_plan()) == [
        "TPRU 64 N=4, b=0", "TPRU 64 N=4, mod3", "TPRU 64 N=4, 100+ epochs", "TPRU 64 N=4 s=8, b=0",
        "TPRU 64 N=4, Adam with AMSGrad, gradient values clipped at 10, no norm clip",
        "TPRU 64 N=4, lr 0.003", "TPRU 64 N=4, lr 0.0003", "TPRU 64 N=4",  # ten seeds of the original
        "TPRU 64 N=4 s=8, scores x2.83", "TPRU 64 N=4, 1 layer", "TPRU 64 N=64, 1 layer"]
    spec = {"kind": "tpru", "d": 64, "n_roles": 4, "slices": 8, "score_scale": 2.83}
    assert ent.ablation_label(spec) == ent.ablation_label(spec, {}) == "TPRU 64 N=4 s=8, scores x2.83"
    assert ent.ablation_label(spec, {"lr": 0.0003}) == "TPRU 64 N=4 s=8, scores x2.83, lr 0.0003"


@pytest.mark.parametrize("entry, message", [
    ({"optimizer": "rmsprop"}, r"ablations\[0\]\.optimizer='rmsprop' is not allowed; choose one of \['adam'"),
    ({"lr": 0}, r"ablations\[0\]\.lr=0 must be > 0"),
    ({"lr": "fast"}, r"ablations\[0\]\.lr='fast' must be a number"),
    ({"lr": None}, r"ablations\[0\]\.lr=None must be a number"),
    ({"clip": -1.0}, r"ablations\[0\]\.clip=-1.0 must be > 0.*or null for no gradient-norm clipping"),
    ({"clip": True}, r"ablations\[0\]\.clip=True must be a number.*or null"),
    ({"clip_value": 0}, r"ablations\[0\]\.clip_value=0 must be > 0.*or null for no gradient-value clipping"),
])
def test_bad_training_values_are_named(entry, message):
    with pytest.raises(ParameterError, match=message):
        plan({"model": MODEL, **entry})


def test_the_same_training_twice_is_one_setting():
    with pytest.raises(ParameterError, match="repeats 'TPRU 8 N=4 s=2, lr 0.003'"):
        plan({"model": MODEL, "lr": 0.003}, {"model": MODEL, "lr": 3e-3, "seeds": [5]})


# --------------------------------------------------------------------------- the report
def _ablated(runs, label, change, left):
    """Hand-made ablation runs of the N=4 TPRU: the main ones with ``change`` (training settings, else the
    model's) made, every seed leaving chance (``left``) or none."""
    _, seeds = ent_runs_of(("tpru", 4, 1, {"loss": (0.69, 0.6, 0.5)} if left else {})).popitem()
    seeds.label = label
    for run in seeds:
        for key, value in change.items():
            run.params["train" if key in ablation.TRAINING_KEYS else "model"][key] = value
    return seeds


def _settle(runs, *settings):
    """The settle text of the claim on more roles, with the ablation of ``settings`` ``(label, change,
    left)``."""
    ablations = {label: _ablated(runs, label, change, left) for label, change, left in settings}
    grouped = ablation.groups(runs, ablations)
    claims = tpru_claims.claims(runs, {}, [], [], released_of(runs), grouped)
    return {c.statement: c for c in claims}[ROLES_BETTER].settle


@pytest.fixture
def runs():
    """The GRU and the N=8 TPRU trained, the N=4 TPRU stayed at chance; each run took one CPU hour."""
    runs = ent_runs_of(("gru", None, None, {"acc": {"hard": 0.8, "big": 0.8}, "vacc": (0.6, 0.7, 0.8)}),
                       ("tpru", 4, 1, {"vacc": (0.5, 0.5, 0.51), "tacc": (0.5, 0.5, 0.51)}),
                       ("tpru", 8, 1, {"vacc": (0.5, 0.5, 0.7), "loss": (0.69, 0.6, 0.5),
                                       "tacc": (0.5, 0.6, 0.8)}))
    for seeds in runs.values():
        for run in seeds:
            run.record["cpu_time_s"] = 3600.0
    return runs


def test_setting_names_say_what_the_training_changes(runs):
    assert ablation.setting_name({"kind": "tpru", "bias_init": 1.0}, {"lr": 0.003}) == "b = 1, lr 0.003"
    assert ablation.setting_name({"kind": "tpru"}, AUTHORS) == f"b = 1, {AUTHORS_LABEL}"
    assert ablation.setting_name({"kind": "tpru", "bias_init": 0.0}, {}) == "b = 0"
    grouped = ablation.groups(runs, {
        "TPRU 64 N=4, lr 0.003": _ablated(runs, "TPRU 64 N=4, lr 0.003", {"lr": 0.003}, True),
        f"TPRU 64 N=4, {AUTHORS_LABEL}": _ablated(runs, f"TPRU 64 N=4, {AUTHORS_LABEL}", AUTHORS, False)})
    assert list(grouped["TPRU 64 N=4"]) == ["b = 1 (original)", "b = 1, lr 0.003", f"b = 1, {AUTHORS_LABEL}"]
    table = ablation.ablation_table(grouped, [])
    assert list(table["left chance"]) == ["0 of 3", "3 of 3", "0 of 3"]
    decided = ablation.decisions(grouped)["TPRU 64 N=4"]
    assert decided["b = 1, lr 0.003"].direction.startswith("left chance on 3 of 3 seeds of b = 1, lr 0.003")
    assert "*b = 1, lr 0.003*: left chance on 3 of 3" in ablation.ablation_line(grouped)
    fig = ablation.ablation_figure(grouped)
    assert fig.axes  # one panel, the training settings drawn in their own looks


def test_the_settle_text_names_the_untried_settings_as_next_experiments(runs):
    text = _settle(runs, ("TPRU 64 N=4, b=0", {"bias_init": 0.0}, False))
    # three settings, each three seeds of an hour
    assert "the next experiments, 3 seeds each: the optimisation of the authors' code (Adam with amsgrad, " \
           "gradients clipped by value at 10 where ours clips their norm at 1) and a learning-rate " \
           "ablation (0.003 and 0.0003): about 9.0 CPU hours" in text


def test_the_settle_text_says_what_the_optimisation_of_the_authors_code_found(runs):
    text = _settle(runs, ("TPRU 64 N=4, b=0", {"bias_init": 0.0}, False),
                   (f"TPRU 64 N=4, {AUTHORS_LABEL}", AUTHORS, False))
    assert "found no setting in which every seed left chance (TPRU 64 N=4: b = 1 (original) 0 of 3 seeds, " \
           "b = 0 0 of 3 seeds)" in text
    assert f"nor with another optimisation (TPRU 64 N=4: 'b = 1, {AUTHORS_LABEL}' 0 of 3 seeds)" in text
    assert "amsgrad" not in text  # no longer named as an experiment to run
    assert text.endswith("the next experiment, 3 seeds each: a learning-rate ablation (0.003 and 0.0003): "
                         "about 6.0 CPU hours")


def test_the_settle_text_says_what_the_learning_rates_found(runs):
    text = _settle(runs, ("TPRU 64 N=4, lr 0.003", {"lr": 0.003}, False))
    assert "nor with another learning rate (TPRU 64 N=4: 'b = 1, lr 0.003' 0 of 3 seeds)" in text
    assert "the optimisation of the authors' code (Adam with amsgrad" in text
    assert "and the learning rate 0.0003: about" in text
    assert text.endswith("about 6.0 CPU hours")  # the authors' optimisation and the rate not tried yet
    both = _settle(runs, ("TPRU 64 N=4, lr 0.003", {"lr": 0.003}, False),
                   ("TPRU 64 N=4, lr 0.0003", {"lr": 0.0003}, False),
                   (f"TPRU 64 N=4, {AUTHORS_LABEL}", AUTHORS, False))
    assert "'b = 1, lr 0.003' 0 of 3 seeds, 'b = 1, lr 0.0003' 0 of 3 seeds)" in both
    assert "learning-rate ablation" not in both and "amsgrad" not in both
    assert "100,000 generated training pairs" in both and "CPU hours" in both


def test_a_training_setting_that_left_chance_is_the_retrain(runs):
    text = _settle(runs, (f"TPRU 64 N=4, {AUTHORS_LABEL}", AUTHORS, True))
    assert text.startswith(f"retrain TPRU 64 N=4 in the ablation's setting 'b = 1, {AUTHORS_LABEL}'")
    # only the encoder the setting rescued is named as rescued; the claim's other TPRU (N=8, which trained)
    # is retrained with it, so the claim on roles compares TPRUs trained alike: 6 runs, one CPU hour each
    retrain = ("under which every seed of TPRU 64 N=4 left chance (the chapter's ablation section), and "
               "TPRU 64 N=8 with them, so that the claim compares TPRUs trained alike: about 6.0 CPU hours")
    assert retrain in text


def test_a_learning_rate_that_left_chance_is_the_chapters_rate_choice(runs):
    """A rate alone rescued the encoder: every encoder (the GRU too) trains at it as well and is read at the
    rate its validation accuracy picks, not the TPRUs alone at a rate picked by hand."""
    text = _settle(runs, ("TPRU 64 N=4, lr 0.0003", {"lr": 0.0003}, True))
    assert text.startswith("set `lr_choices: [0.001, 0.0003]`, so that every encoder of the chapter "
                           "also trains at lr 0.0003 and is read at the rate of its higher mean validation "
                           "accuracy")
    assert "every seed of TPRU 64 N=4 left chance" in text
    assert text.endswith("about 9.0 CPU hours, as the chapter's encoders took at their rate")  # 3 x 3 runs


def test_the_retrain_names_only_the_encoders_the_setting_rescued(runs):
    """Two encoders at chance, the setting run and every seed rescued on one of them only: the text names that
    one as rescued (it used to name every encoder the ablation tried)."""
    runs = dict(runs)
    runs["TPRU 64 N=4 s=8"] = ent_runs_of(("tpru", 4, 8, {"vacc": (0.5, 0.5, 0.51)}))["TPRU 64 N=4 s=8"]
    for run in runs["TPRU 64 N=4 s=8"]:
        run.record["cpu_time_s"] = 3600.0
    label = f"TPRU 64 N=4, {AUTHORS_LABEL}"
    ablations = {label: _ablated(runs, label, AUTHORS, True)}
    grouped = ablation.groups(runs, ablations)
    grouped["TPRU 64 N=4 s=8"] = {ablation.ORIGINAL: runs["TPRU 64 N=4 s=8"]}
    text = ablation.settle_collapse(runs, grouped, ["TPRU 64 N=4", "TPRU 64 N=4 s=8"],
                                    ["TPRU 64 N=4", "TPRU 64 N=4 s=8", "GRU 64"])
    assert text.startswith(  # the GRU is no TPRU: not retrained with them
        f"retrain TPRU 64 N=4, TPRU 64 N=4 s=8 in the ablation's setting 'b = 1, {AUTHORS_LABEL}', under "
        "which every seed of TPRU 64 N=4 left chance (the chapter's ablation section): about 6.0 CPU "
        "hours"), text


def _loss_runs(label, left, total):
    """``total`` stand-in runs of ``label`` whose training loss left chance on the first ``left``."""
    return Seeds(label, [SimpleNamespace(column=lambda key, off=i < left: [0.693, 0.5 if off else 0.69])
                         for i in range(total)], list(range(total)))


def test_a_rate_of_leaving_chance_decided_higher_rescues_too():
    """With ten seeds a setting need not take every seed off chance: a rate decided higher than the original
    setting's by the chapter's rate test (Fisher's exact test) rescues the encoder, and the text says how."""
    base = _loss_runs("TPRU 64 N=4", 2, 10)
    settings = {ablation.ORIGINAL: base, "b = 1, lr 0.0003": _loss_runs("TPRU 64 N=4, lr 0.0003", 9, 10)}
    assert ablation.rescue(settings, "b = 1, lr 0.0003") == (
        "9 of 10 seeds (the original setting: 2 of 10, a rate decided lower by Fisher's exact test)")
    settings["b = 1, lr 0.0003"] = _loss_runs("TPRU 64 N=4, lr 0.0003", 5, 10)  # p = 0.35: not decided
    assert ablation.rescue(settings, "b = 1, lr 0.0003") is None
    settings["b = 1, lr 0.0003"] = _loss_runs("TPRU 64 N=4, lr 0.0003", 3, 3)  # every seed, undecided rate
    assert ablation.rescue(settings, "b = 1, lr 0.0003") == "every seed"
    assert ablation.rescue(settings, ablation.ORIGINAL) is None
    settings["b = 1, lr 0.0003"] = _loss_runs("TPRU 64 N=4, lr 0.0003", 1, 1)  # one seed is no rate
    assert ablation.rescue(settings, "b = 1, lr 0.0003") is None


def test_a_rate_that_rescued_one_encoder_settles_an_encoder_the_ablation_never_tried(runs):
    """The learning-rate choice trains every encoder at the rate, so an idle encoder the ablation did not try
    (here N=8) is settled by it too, not sent to an ablation of its own."""
    runs = dict(runs)
    runs["TPRU 64 N=8"] = ent_runs_of(("tpru", 8, 1, {"vacc": (0.5, 0.5, 0.51)}))["TPRU 64 N=8"]
    for run in runs["TPRU 64 N=8"]:
        run.record["cpu_time_s"] = 3600.0
    label = "TPRU 64 N=4, lr 0.0003"
    grouped = ablation.groups(runs, {label: _ablated(runs, label, {"lr": 0.0003}, True)})
    text = ablation.settle_collapse(runs, grouped, ["TPRU 64 N=8"])
    assert text.startswith("set `lr_choices: [0.001, 0.0003]`") and "every seed of TPRU 64 N=4" in text
