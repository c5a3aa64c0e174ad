"""Tests for urnlib.results and urnlib.runner: keys, integrity, staleness by version, modes, locking."""

import json
import subprocess
import sys
import textwrap

import pytest
import torch

import urnlib.components as components
from urnlib.components import Component
from urnlib.params import ParameterError
from urnlib.results import (
    CorruptRunError,
    MissingRunError,
    RunSpec,
    RunStore,
    Trained,
    params_key,
)
from urnlib.reports.common import provenance_table
from urnlib.runner import StaleRunWarning, obtain, run_plan

PARAMS = {"task": {"n_pairs": 10, "seed": 0}, "model": {"kind": "urn", "n": 6, "k": None},
          "train": {"lr": 0.01}}
COMPONENTS = ("data.dyck", "model.urn", "train.loop")


def spec(name="URN 6", params=PARAMS, comps=COMPONENTS):
    return RunSpec("dyck", name, params, comps)


class FakeTrain:
    """Stands in for a training run: counts its calls and returns tiny results."""

    def __init__(self):
        self.calls = []

    def __call__(self, spec, checkpoint):
        self.calls.append(checkpoint)
        k = len(self.calls)
        history = [{"epoch": 1, "train_loss": 1.0 / k, "seconds": 0.1}, {"epoch": 2, "train_loss": 0.5 / k}]
        weights = {"w": torch.arange(6, dtype=torch.float32).view(2, 3) * k, "b": torch.tensor([k])}
        return Trained(history, {"accuracy": 0.9, "calls": k}, weights, 12.345, 10.0)


# --------------------------------------------------------------------------- #
# keys
# --------------------------------------------------------------------------- #
def test_params_key_is_stable_across_dict_ordering():
    reordered = {"train": {"lr": 0.01}, "model": {"k": None, "n": 6, "kind": "urn"},
                 "task": {"seed": 0, "n_pairs": 10}}
    assert params_key(PARAMS) == params_key(reordered)
    assert spec().key == spec(params=reordered).key
    assert len(spec().key) == 12


@pytest.mark.parametrize("section, field, value", [("task", "n_pairs", 11), ("model", "kind", "lstm"),
                                                   ("train", "lr", 0.001), ("train", "extra", 0)])
def test_key_changes_with_any_value(section, field, value):
    changed = json.loads(json.dumps(PARAMS))
    changed[section][field] = value
    assert spec(params=changed).key != spec().key


def test_key_changes_with_a_component_version(monkeypatch):
    before = spec().key
    monkeypatch.setitem(components.COMPONENTS, "model.urn", Component(2, ("v1", "v2: changed")))
    assert spec().key != before
    assert spec(comps=("data.dyck", "train.loop")).key == spec(comps=("data.dyck", "train.loop")).key


# --------------------------------------------------------------------------- #
# runner modes
# --------------------------------------------------------------------------- #
def test_train_mode_trains_once_then_loads(tmp_path):
    store, train = RunStore(tmp_path / "runs"), FakeTrain()
    run = obtain(spec(), store, mode="train", train=train)
    assert len(train.calls) == 1 and train.calls[0] == store.checkpoint(spec())
    again = obtain(spec(), store, mode="load")
    assert len(train.calls) == 1
    assert again.path == run.path == tmp_path / "runs" / "dyck" / f"URN 6-{spec().key}"
    assert again.params == PARAMS and again.column("train_loss") == [1.0, 0.5]
    assert again.final == {"accuracy": 0.9, "calls": 1}
    assert again.record["components"] == {"data.dyck": 1, "model.urn": 1, "train.loop": 1}
    assert set(again.record["libraries"]) >= {"python", "torch", "numpy"}
    assert again.record["cpu_time_s"] == 10.0 and again.record["wall_time_s"] == 12.35
    assert torch.equal(again.weights["w"], torch.arange(6, dtype=torch.float32).view(2, 3))
    assert not again.stale_reasons()


def test_load_mode_never_trains_a_missing_run(tmp_path):
    train = FakeTrain()
    with pytest.raises(MissingRunError, match=r"URN 6.*never trains.*make reproduce"):
        obtain(spec(), RunStore(tmp_path), mode="load", train=train)
    assert not train.calls


def test_retrain_mode_trains_again_and_replaces(tmp_path):
    store, train = RunStore(tmp_path), FakeTrain()
    obtain(spec(), store, mode="train", train=train)
    run = obtain(spec(), store, mode="retrain", train=train)
    assert len(train.calls) == 2 and run.final["calls"] == 2
    assert store.load(spec()).final["calls"] == 2


def test_bad_mode_and_on_stale_name_the_parameter(tmp_path):
    with pytest.raises(ParameterError, match="mode"):
        obtain(spec(), RunStore(tmp_path), mode="sometimes")
    with pytest.raises(ParameterError, match="on_stale"):
        obtain(spec(), RunStore(tmp_path), on_stale="ignore")


def test_plan_with_a_name_twice_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="twice"):
        run_plan([spec(), spec()], RunStore(tmp_path), mode="train", train=FakeTrain())


# --------------------------------------------------------------------------- #
# staleness by component and library version
# --------------------------------------------------------------------------- #
def test_component_bump_makes_the_stored_run_stale_with_a_reason(tmp_path, monkeypatch):
    store, train = RunStore(tmp_path), FakeTrain()
    obtain(spec(), store, mode="train", train=train)
    monkeypatch.setitem(components.COMPONENTS, "model.urn", Component(2, ("v1", "v2: changed")))
    with pytest.warns(StaleRunWarning, match=r"component model.urn v1 -> v2"):
        run = obtain(spec(), store, mode="load")
    assert run.stale_reasons() == ["component model.urn v1 -> v2"]
    with pytest.raises(MissingRunError, match="stale"):
        obtain(spec(), store, mode="load", on_stale="error")
    fresh = obtain(spec(), store, mode="train", train=train)  # train mode replaces the stale run
    assert len(train.calls) == 2 and not fresh.stale
    assert [p.name for p in (tmp_path / "dyck").iterdir()] == [fresh.path.name]
    table = provenance_table([fresh])
    assert table.loc[0, "status"] == "current"


def test_library_change_makes_the_run_stale(tmp_path, monkeypatch):
    store = RunStore(tmp_path)
    run = obtain(spec(), store, mode="train", train=FakeTrain())
    real = components.library_versions
    monkeypatch.setattr("urnlib.results.library_versions",
                        lambda names=None: dict(real(names), torch="9.9.9"))
    assert run.stale_reasons() == [f"library torch {torch.__version__} -> 9.9.9"]
    assert provenance_table([run]).loc[0, "status"].startswith("stale: library torch")


def test_comment_in_every_module_stales_nothing(tmp_path):
    """Staleness follows versions, not text: a comment added to every urnlib module (in a copy of the
    package, in a fresh interpreter) leaves a stored run current."""
    import shutil

    import urnlib

    copy = tmp_path / "pkg" / "urnlib"
    shutil.copytree(urnlib.__path__[0], copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module in copy.rglob("*.py"):
        module.write_text(module.read_text() + "\n# a comment that changes no behaviour\n")
    store = RunStore(tmp_path / "runs")
    obtain(spec(), store, mode="train", train=FakeTrain())
    script = textwrap.dedent(f"""
        import sys, urnlib
        assert urnlib.__file__.startswith({str(copy)!r}), urnlib.__file__
        from urnlib.results import RunSpec, RunStore
        from urnlib.runner import obtain
        run = obtain(RunSpec("dyck", "URN 6", {PARAMS!r}, {COMPONENTS!r}), RunStore({str(store.root)!r}))
        print(run.stale_reasons())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(copy.parent), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- #
# integrity: what the book path does with a damaged store
# --------------------------------------------------------------------------- #
@pytest.fixture
def stored(tmp_path):
    store = RunStore(tmp_path, rebuild="python -m urnlib.cli notebooks --scale paper --only dyck --train")
    run = obtain(spec(), store, mode="train", train=FakeTrain())
    return store, run.path


def _edit_record(folder, change):
    rec = folder / "record.json"
    record = json.loads(rec.read_text())
    change(record)
    rec.write_text(json.dumps(record))


@pytest.mark.parametrize("damage, message", [
    (lambda f: (f / "record.json").write_text((f / "record.json").read_text()[:700]), "not valid JSON"),
    (lambda f: _edit_record(f, lambda r: r.pop("final")), "lacks the field.*final"),
    (lambda f: _edit_record(f, lambda r: r["final"].update(accuracy=0.999)), "checksum.*edited by hand"),
    (lambda f: _edit_record(f, lambda r: r["params"]["train"].update(lr=0.5)), "hash to.*edited by hand"),
    (lambda f: (f / "weights.pt").write_bytes((f / "weights.pt").read_bytes()[:100]), "weights.pt.*checksum"),
    (lambda f: (f / "weights.pt").unlink(), "weights.pt is missing"),
])
def test_damaged_run_is_an_error_naming_it_and_the_rebuild_command(stored, damage, message):
    store, folder = stored
    damage(folder)
    with pytest.raises(CorruptRunError, match=message) as err:
        obtain(spec(), store, mode="load")
    assert str(folder) in str(err.value) and "--only dyck --train" in str(err.value)


def test_deleted_record_never_trains_on_the_book_path(stored):
    store, folder = stored
    (folder / "record.json").unlink()
    with pytest.raises(CorruptRunError, match="record.json is missing"):
        obtain(spec(), store, mode="load", train=FakeTrain())
    import shutil

    shutil.rmtree(folder)
    with pytest.raises(MissingRunError, match="--only dyck --train"):
        obtain(spec(), store, mode="load", train=FakeTrain())


def test_store_lists_every_run_and_its_damage(stored):
    store, folder = stored
    obtain(spec("other"), store, mode="train", train=FakeTrain())
    _edit_record(folder, lambda r: r["final"].update(accuracy=0.5))
    found = dict(store.runs())
    assert isinstance(found[folder], CorruptRunError)
    assert sum(not isinstance(v, Exception) for v in found.values()) == 1


def test_writes_leave_no_temporary_files(stored):
    store, folder = stored
    assert sorted(p.name for p in folder.iterdir()) == ["record.json", "weights.pt"]


# --------------------------------------------------------------------------- #
# two processes, one store
# --------------------------------------------------------------------------- #
TWO_PROCESSES = textwrap.dedent("""
    import json, os, sys, time
    import torch
    from urnlib.results import RunSpec, RunStore, Trained
    from urnlib.runner import obtain
    root, log = sys.argv[1], sys.argv[2]

    def train(spec, checkpoint):
        with open(log, "a") as f:
            f.write(f"train {os.getpid()}\\n")
        for epoch in range(4):  # checkpoints through the loop's own writer, like fit
            from urnlib.train import _save_checkpoint
            _save_checkpoint(checkpoint, {"epoch": epoch, "pid": os.getpid()})
            time.sleep(0.3)
        return Trained([{"epoch": 1, "train_loss": 0.1}], {"pid": os.getpid()}, {"w": torch.ones(2)}, 1.0)

    spec = RunSpec("cs", "URN 4", {"x": 1}, ("train.loop",))
    run = obtain(spec, RunStore(root), mode="train", train=train)
    print(json.dumps(run.final))
""")


def test_two_processes_on_one_store_train_a_run_once(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(TWO_PROCESSES)
    log = tmp_path / "log"
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "store"), str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert len(log.read_text().splitlines()) == 1  # one trained, the other waited and loaded
    finals = [json.loads(o[0].strip().splitlines()[-1]) for o in outs]
    assert finals[0] == finals[1]


def test_rename_moves_a_run_without_changing_its_numbers(stored):
    from dataclasses import replace

    from urnlib import migrate

    store, folder = stored
    run = store.read(folder)
    new = replace(spec(), name="URN 6 seed 0")
    assert store.load(new) is None and [r.name for r in migrate.with_key(store, new)] == [run.name]
    moved = migrate.rename(store, run, new)
    again = store.load(new)  # verified: key, content checksum, weights
    assert again.name == "URN 6 seed 0" and again.record["renamed_from"] == run.name
    assert again.history == run.history and again.final == run.final
    assert moved.path == store.folder(new) and not run.path.exists()
    with pytest.raises(ValueError, match="another run"):
        migrate.rename(store, again, replace(spec(), params={**PARAMS, "seed": 99}))
