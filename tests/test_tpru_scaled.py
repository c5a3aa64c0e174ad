"""The TPRU chapter's scaled group (parameter ``scaled``, urnlib.chapters.tpru.scaled): absent, the
chapter's plan and its stored runs' keys are as before; present, one group of extra entailment runs trained
exactly like the main encoders but on a larger training set, labelled with it; bad values name
``scaled.<key>`` and what to write; the group's rows follow ours in both versions of Table 2 with a sentence
on how far its setting is from the paper's and what it cost; and the claims that set the TPRU against the GRU
and LSTM on Table 2 decide on it once it is complete. Hand-made runs, no training."""

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from tests.test_tpru_claims import GOOD, ent_runs_of, ent_seeds, released_of, verdicts
from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import released as tpru_released
from urnlib.chapters.tpru import entailment as ent
from urnlib.chapters.tpru import scaled as tpru_scaled
from urnlib.params import ParameterError
from urnlib.chapters.tpru import report
from urnlib.chapters.tpru import claims as tpru_claims
from urnlib.chapters.tpru import report_released as released_report
from urnlib.chapters.tpru import report_scaled as scaled_report
from urnlib.results import Run
from urnlib.seeds import Seeds

REPO = Path(__file__).resolve().parents[1]
PAPER = tpru.Config.paper()
GROUP = {"models": ["gru 64", "lstm 64", "tpru 64 N64"], "train_size": 100000, "split_profile": "released",
         "seeds": [0, 1, 2], "epochs": 30, "min_epochs": 10}
LABELS = ["GRU 64, 100,000 pairs (released ranges)", "LSTM 64, 100,000 pairs (released ranges)",
          "TPRU 64 N=64, 100,000 pairs (released ranges)"]
GRU_BEATEN = "the TPRU is more accurate than the GRU on the hard and big test splits"
LSTM_NEAR = "the TPRU is comparable to the LSTM"
VALID = "the accuracies themselves (e.g. LSTM valid 88.6%)"


# --------------------------------------------------------------------------- absent: the plan as before
@pytest.mark.parametrize("absent", [None, {}])
def test_without_a_group_the_plan_and_keys_are_the_stored_runs(absent):
    config = replace(PAPER, scaled=absent)
    assert config.scaled_group() is None and config.scaled_plan() == {}
    planned = [(s.name, s.key) for s in config.plan()]
    assert planned == [(s.name, s.key) for s in PAPER.plan()][:len(planned)]  # the paper's group comes last
    store = REPO / "notebooks" / "results"
    missing = [s.name for s in config.plan() if not (store / s.experiment / s.key).is_dir()]
    assert missing == [], f"the paper preset plans runs that are not stored: {missing}"


def test_the_paper_and_large_presets_read_the_group_and_the_others_have_none():
    for scale in ("tiny", "full"):
        assert tpru.Config.load(scale, mode="load").scaled_plan() == {}
    large = tpru.Config.load("large", mode="load")
    wide = "TPRU 64 N=512, 100,000 pairs (released ranges)"  # the paper preset's, on seed 0 alone
    assert list(large.scaled_plan()) == LABELS and list(PAPER.scaled_plan()) == [*LABELS, wide]
    # the large preset trained the paper preset's runs, all but its language models at lm_sizes and N=512
    group = {**PAPER.scaled, "models": PAPER.scaled["models"][:3]}
    assert [s.key for s in large.plan()] == [s.key for s in replace(PAPER, lm_sizes=[], scaled=group).plan()]
    store = REPO / "notebooks" / "results"
    missing = [s.name for s in PAPER.plan() if not (store / s.experiment / s.key).is_dir()]
    assert missing == [], f"the paper preset plans runs that are not stored: {missing}"


# --------------------------------------------------------------------------- the group's runs
def test_the_group_trains_like_the_main_encoders_on_its_task():
    config = replace(PAPER, scaled=GROUP)
    plan = config.scaled_plan()
    assert list(plan) == LABELS
    # the same run as the main encoder's of a chapter with the group's values, under the group's label
    alike = replace(PAPER, train_size=100000, split_profile="released", epochs=30, min_epochs=10,
                    ablations=[], models=GROUP["models"], scaled=None)
    for (label, specs), (main_label, mains) in zip(plan.items(), alike.entailment_plan().items()):
        assert label.startswith(main_label + ", ")
        assert [s.name for s in specs] == [f"{label} seed {s}" for s in (0, 1, 2)]
        for spec, main in zip(specs, mains):
            assert spec.params == main.params and spec.key == main.key and spec.coords["model"] == label
    task = plan[LABELS[0]][0].params["task"]
    assert task == {"train": 100000, "valid": PAPER.valid_size, **dict.fromkeys(
        ("easy", "hard", "big", "massive"), PAPER.test_size), "seed": PAPER.seed, "profile": "released"}
    first = plan[LABELS[2]][1].params
    assert first["train"]["epochs"] == 30 and first["train"]["seed"] == 1 and first["train"]["lr"] == PAPER.lr
    assert first["stop"] == {"key": "valid_acc", "patience": PAPER.patience, "min_epochs": 10,
                             "minimize": False}
    assert first["model"] == ent.encoder_spec("tpru 64 N64")
    names = [s.name for s in config.plan()]
    bare = replace(PAPER, scaled=None).plan()
    assert names[:len(bare)] == [s.name for s in bare] and len(names) == len(bare) + 9
    assert ("the scaled group: GRU 64, LSTM 64, TPRU 64 N=64 on 100,000 training pairs (released ranges; "
            "seeds [0, 1, 2], at most 30 epochs") in config.summary()


def test_every_key_but_models_and_train_size_defaults_to_the_chapters():
    group = replace(PAPER, scaled={"models": ["gru 64"], "train_size": 40000}).scaled_group()
    assert list(group.encoders) == ["GRU 64, 40,000 pairs (reconstructed ranges)"]
    assert (group.split_profile, group.seeds, group.epochs, group.min_epochs, group.patience) == (
        PAPER.split_profile, PAPER.seeds, PAPER.epochs, PAPER.min_epochs, PAPER.patience)
    spec = replace(PAPER, scaled={"models": ["gru 64"], "train_size": 40000}).scaled_plan()[
        "GRU 64, 40,000 pairs (reconstructed ranges)"][0]
    assert "profile" not in spec.params["task"]  # the default profile stays out of a run's parameters
    no_stop = replace(PAPER, scaled={"models": ["gru 64"], "train_size": 40000, "patience": None})
    assert all(s.params["stop"] is None for s in no_stop.scaled_plan()["GRU 64, 40,000 pairs (reconstructed "
                                                                         "ranges)"])


@pytest.mark.parametrize("value, words", [
    ([GROUP], ["scaled=", "dict | None"]),
    ({"models": ["gru 64"]}, ["scaled needs train_size", "train_size: 100000"]),
    ({"train_size": 100000}, ["scaled needs models"]),
    ({**GROUP, "lr": 0.01}, ["scaled has ['lr']", "'models', 'train_size'"]),
    ({**GROUP, "train_size": 100001}, ["scaled.train_size=100001 must be a multiple of 4", "e.g. 100000"]),
    ({**GROUP, "train_size": 0}, ["scaled.train_size=0 must be >= 4", "write a multiple of 4"]),
    ({**GROUP, "train_size": "100k"}, ["scaled.train_size='100k' must be an integer"]),
    ({**GROUP, "models": []}, ["scaled.models=[] must be a non-empty list", "'gru 64'"]),
    ({**GROUP, "models": ["rnn 64"]}, ["scaled.models contains 'rnn 64'", "tpru 64 N64"]),
    ({**GROUP, "models": ["gru 64", "GRU 64"]}, ["scaled.models lists 'GRU 64' twice"]),
    ({**GROUP, "split_profile": "evans"}, ["scaled.split_profile='evans' is not allowed", "'released'"]),
    ({**GROUP, "seeds": [0, 0]}, ["scaled.seeds contains 0 and 0", "drop one"]),
    ({**GROUP, "seeds": []}, ["scaled.seeds=[] must be a non-empty list"]),
    ({**GROUP, "epochs": 0}, ["scaled.epochs=0 must be >= 1", "e.g. 30"]),
    ({**GROUP, "min_epochs": 40}, ["scaled.min_epochs=40 must be an integer from 0 to scaled.epochs=30"]),
    ({**GROUP, "patience": 0}, ["scaled.patience=0 must be >= 1", "or null"]),
    ({"models": ["gru 64"], "train_size": 20000, "split_profile": "reconstruction", "epochs": 100},
     ["scaled: 'GRU 64, 20,000 pairs (reconstructed ranges) seed 0' is the chapter's run 'GRU 64 seed 0'",
      "change scaled.train_size"]),
])
def test_bad_values_name_the_key_and_what_to_write(value, words):
    with pytest.raises(ParameterError) as info:
        tpru.Config.load("paper", scaled=value)
    for word in words:
        assert word in str(info.value), f"{word!r} not in {str(info.value)!r}"


def test_run_gives_the_groups_runs_scored_on_the_released_files(monkeypatch):
    """``run`` loads the group's runs beside the main ones, scores them on the released files with them and
    iterates over them (everything but the plan stubbed: nothing is trained or scored)."""
    config = replace(PAPER, models=["gru 8"], embedding_size=8, hidden=8, seeds=[0], ablations=[],
                     scaled={"models": ["gru 8"], "train_size": 400, "seeds": [0, 1]})
    monkeypatch.setattr(tpru, "run_config", lambda c, plan, **kw: {s.name: Run(
        {"name": s.name, "params": s.params, "history": [], "final": {}}, Path(".")) for s in plan})
    scored = {}
    monkeypatch.setattr(tpru_released, "released_results", lambda runs, *a: scored.update(runs) or "released")
    for name in ("gradient_checks", "table1_check"):
        monkeypatch.setattr(tpru.tpru_checks, name, lambda **kw: [])
    for name in ("feature_spread", "filler_use"):
        monkeypatch.setattr(tpru.tpru_features, name, lambda runs, **kw: [])
    results = tpru.run(config)
    label = "GRU 8, 400 pairs (reconstructed ranges)"
    assert list(results.scaled) == [label] and results.scaled[label].seeds == [0, 1]
    assert list(scored) == ["GRU 8", label] and results.released == "released"
    assert [r.name for r in results][-2:] == [f"{label} seed 0", f"{label} seed 1"]


# --------------------------------------------------------------------------- reports on hand-made runs
def scaled_seeds(label, seeds, train=100_000, profile="released", hours=None):
    """The hand-made runs ``seeds`` of ``label`` as the scaled group's: on ``train`` pairs of ``profile``,
    each having taken ``hours`` of wall-clock time (twice as much CPU time) where given."""
    name = f"{label}, {train:,} pairs ({profile} ranges)"
    runs = []
    for run in seeds:
        record = copy.deepcopy(run.record)
        record["params"]["task"] = {"train": train, "profile": profile}
        record["name"] = run.name.replace(label, name)
        if hours is not None:
            record.update(wall_time_s=3600 * hours, cpu_time_s=7200 * hours)
        runs.append(Run(record, Path(".")))
    return name, Seeds(name, runs, seeds.seeds)


def scaled_of(*specs, **kw):
    return dict(scaled_seeds(*ent_seeds(*spec[:3], **spec[3]), **kw) for spec in specs)


#: the scaled group: its TPRU better than its GRU on hard and big, close to its LSTM on the test mean
SCALED = [
    ("gru", None, None, {"acc": {"hard": 0.74, "big": 0.70}, "vacc": (0.6, 0.7, 0.80)}),
    ("lstm", None, None, {"acc": dict.fromkeys(report.TEST_SPLITS, 0.80), "vacc": (0.6, 0.7, 0.82)}),
    ("tpru", 64, 1, {"acc": {"easy": 0.8, "hard": 0.80, "big": 0.76, "massive": 0.8, "exam": 0.8},
                     "vacc": (0.6, 0.7, 0.81)}),
]


def test_table2_rows_follow_ours_labelled_with_their_training_set():
    main, scaled = ent_runs_of(*GOOD), scaled_of(*SCALED, hours=1.0)
    released = released_of({**main, **scaled})
    for table, plain in ((report.table2(main, scaled), report.table2(main)),
                         (released_report.released_table2(main, released, scaled),
                          released_report.released_table2(main, released))):
        assert list(table.columns) == list(plain.columns)
        assert table.iloc[:len(plain)].equals(plain)  # the rows without the group, unchanged
        extra = table.iloc[len(plain):]
        assert list(extra["source"]) == ["ours, 100,000 pairs"] * 3 and list(extra["model"]) == LABELS
    assert report.table2(main, {}).equals(report.table2(main))
    row = report.table2(main, scaled).iloc[-1]
    assert row["hard"].startswith("80.0 ± ") and row["best epoch"].startswith("3 ± 0")


def test_the_sentence_says_how_far_the_setting_is_from_the_papers_and_what_it_cost():
    main, scaled = ent_runs_of(*GOOD), scaled_of(*SCALED, hours=1.0)
    line = scaled_report.scaled_line(scaled, main, released_of({**main, **scaled}))
    for words in ("(GRU 64, LSTM 64, TPRU 64 N=64) are the book's setting nearest the paper's",
                  "100,000 generated training pairs (Evans et al.'s file: about 100,000; our main runs: "
                  "16,000)", "the ranges measured on Evans et al.'s released files (so their generated "
                  "validation and test splits are not the main runs'",
                  "the TPRU has 64 roles (Table 2: 512 at dimension 64)",
                  "at most 30 epochs, trained 3 and best at epoch 3 (the authors' code trains 90)",
                  "batch 64 (the authors' code: 64)", "3 initialisation seeds per model (the paper: 3)",
                  "On the released validation file: GRU 64 4.3 points below the paper's GRU",
                  "TPRU 64 N=64 7.6 points below the paper's TPRU - 512",
                  "9.0 hours of run time added up (18.0 CPU hours), the longest run, *GRU 64, 100,000 pairs "
                  "(released ranges) seed 0*, 1.0 hours."):
        assert words in line, f"{words!r} not in {line!r}"
    for internal in ("issue", "helper", "reference-facts", "urnlib."):
        assert internal not in line
    bare = scaled_report.scaled_line(scaled_of(*SCALED), main)
    assert "not recorded" in bare and "released validation file" not in bare
    assert scaled_report.scaled_line({}, main) == ""


# --------------------------------------------------------------------------- claims
def test_the_table2_claims_decide_on_the_complete_group_and_say_so():
    main, scaled = ent_runs_of(*GOOD), scaled_of(*SCALED, hours=1.0)
    released = released_of({**main, **scaled})
    before = tpru_claims.claims(main, {}, [], [], released)
    after = tpru_claims.claims(main, {}, [], [], released, None, scaled)
    assert [c.statement for c in after] == [c.statement for c in before]  # the same claims, in order
    old, new = verdicts(before), verdicts(after)
    assert old[GRU_BEATEN][0] == "partly reproduced" and new[GRU_BEATEN] == ("reproduced", None, 3)
    by = {c.statement: c for c in after}
    basis = "decided on the runs at 100,000 training pairs, the size of Evans et al.'s training file: "
    assert by[GRU_BEATEN].ours.startswith(basis + f"{LABELS[2]} vs {LABELS[0]}, released files: hard: ")
    assert by[LSTM_NEAR].ours.startswith(basis + "mean over the five released test files: ")
    assert by[VALID].ours.startswith(basis + "released validate.txt: " + LABELS[2])
    assert "100,000 training pairs (Evans et al.'s: about 100,000), but generated" in by[VALID].ours
    assert by[VALID].settle.startswith(
        f"retrain {LABELS[2]}, {LABELS[0]}, {LABELS[1]} at the same size with the TPRU with Table 2's 512 "
        "roles (ours: 64) and up to the 90 epochs of the authors' code (ours: 3), every seed: about ")
    # the claims on the training curves still read the main runs
    others = [c for c in before if c.statement not in (GRU_BEATEN, LSTM_NEAR, VALID)]
    assert others == [c for c in after if c.statement not in (GRU_BEATEN, LSTM_NEAR, VALID)]


@pytest.mark.parametrize("change", ["no lstm", "other seeds", "smaller"])
def test_an_incomplete_group_leaves_the_claims_as_they_were(change):
    main = ent_runs_of(*GOOD)
    scaled = scaled_of(*SCALED, train=8000 if change == "smaller" else 100_000)
    if change == "no lstm":
        scaled = {k: v for k, v in scaled.items() if not k.startswith("LSTM")}
    if change == "other seeds":
        label = next(iter(scaled))
        scaled[label] = Seeds(label, scaled[label].runs[:2], [0, 1])
    released = released_of({**main, **scaled})
    assert not scaled_report.complete(main, scaled)
    assert scaled_report.table2_basis(main, scaled) == (main, "")
    assert tpru_claims.claims(main, {}, [], [], released, None, scaled) == tpru_claims.claims(
        main, {}, [], [], released)


def test_the_labels_say_the_training_set_and_its_ranges():
    spec = ent.encoder_spec("tpru 64 N4 s8")
    assert tpru_scaled.scaled_label(spec, 100000, "released") == \
        "TPRU 64 N=4 s=8, 100,000 pairs (released ranges)"
    assert tpru_scaled.scaled_label(ent.encoder_spec("lstm 64"), 40000, "reconstruction") == \
        "LSTM 64, 40,000 pairs (reconstructed ranges)"


# --------------------------------------------------------------------------- an encoder on its own seeds
def test_an_encoder_on_its_own_seeds_trains_them_alone_and_shows_in_the_tables_but_decides_no_claim():
    """``{model: "tpru 64 N512", seeds: [0]}`` in ``scaled.models``: that encoder on seed 0 only, under the
    key it would have with the group's seeds (its run of a larger plan is the same run); the summary says
    so; Table 2's rows show it, the sentence gives its seeds, and the claims still decide on the encoders
    trained on all the group's seeds."""
    config = replace(PAPER, scaled={**GROUP, "models": [*GROUP["models"], {"model": "tpru 64 N512",
                                                                            "seeds": [0]}]})
    plan = config.scaled_plan()
    wide = "TPRU 64 N=512, 100,000 pairs (released ranges)"
    assert list(plan) == [*LABELS, wide] and [s.name for s in plan[wide]] == [f"{wide} seed 0"]
    every = replace(PAPER, scaled={**GROUP, "models": [*GROUP["models"], "tpru 64 N512"]}).scaled_plan()
    assert plan[wide][0].key == every[wide][0].key and plan[LABELS[0]] == every[LABELS[0]]
    assert "TPRU 64 N=64, TPRU 64 N=512 (seeds [0]) on 100,000 training pairs" in config.summary()
    main, scaled = ent_runs_of(*GOOD), scaled_of(*SCALED, hours=1.0)
    name, seeds = scaled_seeds(*ent_seeds("tpru", 512, 1, {"vacc": (0.6, 0.7, 0.9)}))
    one = {**scaled, name: Seeds(name, seeds.runs[:1], [0])}
    assert scaled_report.table2_basis(main, one) == scaled_report.table2_basis(main, scaled)
    released = released_of({**main, **one})
    assert list(report.table2(main, one)["model"])[-1] == name
    line = scaled_report.scaled_line(one, main)
    assert "3 initialisation seeds per model (TPRU 64 N=512: 1; the paper: 3)" in line
    assert "the TPRU has 64 and 512 roles (Table 2: 512 at dimension 64)" in line
    assert tpru_claims.claims(main, {}, [], [], released, None, one) == tpru_claims.claims(
        main, {}, [], [], released, None, scaled)


@pytest.mark.parametrize("entry, words", [
    ({"seeds": [0]}, "scaled.models[3]="),
    ({"model": "tpru 64 N512", "seeds": [0], "epochs": 3}, "on its own seeds"),
    ({"model": "lstm 64", "directions": 3}, "scaled.models[3].directions=3"),
    ({"model": "tpru 64 N512", "seeds": []}, "scaled.models[3].seeds=[] must be a non-empty list")])
def test_a_bad_entry_with_its_own_seeds_names_it(entry, words):
    with pytest.raises(ParameterError) as info:
        tpru.Config.load("paper", scaled={**GROUP, "models": [*GROUP["models"], entry]})
    assert words in str(info.value)
