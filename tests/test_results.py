"""Tests for urnlib.results and urnlib.runner: keys, integrity, staleness by version, modes, locking."""

import json
import subprocess
import sys
import textwrap

import numpy as np
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
from urnlib.runner import StaleRunWarning, run_plan

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
    run = store.obtain(spec(), mode="train", train=train)
    assert len(train.calls) == 1 and train.calls[0] == store.checkpoint(spec())
    again = store.obtain(spec(), mode="load")
    assert len(train.calls) == 1
    assert again.path == run.path == tmp_path / "runs" / "dyck" / spec().key
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
        RunStore(tmp_path).obtain(spec(), mode="load", train=train)
    assert not train.calls


def test_retrain_mode_trains_again_and_replaces(tmp_path):
    store, train = RunStore(tmp_path), FakeTrain()
    store.obtain(spec(), mode="train", train=train)
    run = store.obtain(spec(), mode="retrain", train=train)
    assert len(train.calls) == 2 and run.final["calls"] == 2
    assert store.load(spec()).final["calls"] == 2


def test_bad_mode_and_on_stale_name_the_parameter(tmp_path):
    with pytest.raises(ParameterError, match="mode"):
        RunStore(tmp_path).obtain(spec(), mode="sometimes")
    with pytest.raises(ParameterError, match="on_stale"):
        RunStore(tmp_path).obtain(spec(), on_stale="ignore")


def test_plan_with_a_name_twice_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="twice"):
        run_plan([spec(), spec()], RunStore(tmp_path), mode="train", train=FakeTrain())


# --------------------------------------------------------------------------- #
# staleness by component and library version
# --------------------------------------------------------------------------- #
def test_component_bump_makes_the_stored_run_stale_with_a_reason(tmp_path, monkeypatch):
    store, train = RunStore(tmp_path), FakeTrain()
    store.obtain(spec(), mode="train", train=train)
    monkeypatch.setitem(components.COMPONENTS, "model.urn", Component(2, ("v1", "v2: changed")))
    with pytest.warns(StaleRunWarning, match=r"component model.urn v1 -> v2"):
        run = store.obtain(spec(), mode="load")
    assert run.stale_reasons() == ["component model.urn v1 -> v2"]
    with pytest.raises(MissingRunError, match="stale"):
        store.obtain(spec(), mode="load", on_stale="error")
    fresh = store.obtain(spec(), mode="train", train=train)  # train mode replaces the stale run
    assert len(train.calls) == 2 and not fresh.stale
    assert [p.name for p in (tmp_path / "dyck").iterdir()] == [fresh.path.name]
    table = provenance_table([fresh])
    assert table.loc[0, "status"] == "current"


def test_library_change_makes_the_run_stale(tmp_path, monkeypatch):
    store = RunStore(tmp_path)
    run = store.obtain(spec(), mode="train", train=FakeTrain())
    real = components.library_versions
    monkeypatch.setattr("urnlib.records.library_versions",
                        lambda names=None: dict(real(names), torch="9.9.9"))
    assert run.stale_reasons() == [f"library torch {torch.__version__} -> 9.9.9"]
    assert provenance_table([run]).loc[0, "status"].startswith("stale: library torch")


def test_a_run_made_in_an_accepted_environment_stays_current(tmp_path, monkeypatch):
    """A run whose core libraries are exactly those of an environment of OTHER_ENVIRONMENTS (the lent GPU
    machine) is current although they differ from the running one's; one library off that environment, or an
    environment no longer listed, and it is stale."""
    store = RunStore(tmp_path)
    run = store.obtain(spec(), mode="train", train=FakeTrain())
    gpu = {"python": "3.12.3", "torch": "2.11.0+cu130", "numpy": "2.5.2"}
    monkeypatch.setattr(components, "OTHER_ENVIRONMENTS", {"a GPU box": gpu})
    record = dict(run.record, libraries={**run.record["libraries"], **gpu})
    there = store.read(store.rewrite(run, record).path)
    assert there.stale_reasons() == [] and components.accepted_environment(there.record["libraries"]) == gpu
    assert components.accepted_environment(run.record["libraries"]) == {}
    numpy_off = dict(record, libraries={**record["libraries"], "numpy": "2.5.3"})
    off = store.read(store.rewrite(there, numpy_off).path)
    assert f"library numpy 2.5.3 -> {np.__version__}" in off.stale_reasons()  # one library off: stale
    assert components.accepted_environment(off.record["libraries"]) == {}
    monkeypatch.setattr(components, "OTHER_ENVIRONMENTS", {})
    assert store.read(there.path).stale  # the environment no longer accepted


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
    store.obtain(spec(), mode="train", train=FakeTrain())
    script = textwrap.dedent(f"""
        import sys, urnlib
        assert urnlib.__file__.startswith({str(copy)!r}), urnlib.__file__
        from urnlib.results import RunSpec, RunStore
        run = RunStore({str(store.root)!r}).obtain(RunSpec("dyck", "URN 6", {PARAMS!r}, {COMPONENTS!r}))
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
    run = store.obtain(spec(), mode="train", train=FakeTrain())
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
        store.obtain(spec(), mode="load")
    assert str(folder) in str(err.value) and "--only dyck --train" in str(err.value)


def test_deleted_record_never_trains_on_the_book_path(stored):
    store, folder = stored
    (folder / "record.json").unlink()
    with pytest.raises(CorruptRunError, match="record.json is missing"):
        store.obtain(spec(), mode="load", train=FakeTrain())
    import shutil

    shutil.rmtree(folder)
    with pytest.raises(MissingRunError, match="--only dyck --train"):
        store.obtain(spec(), mode="load", train=FakeTrain())


def test_store_lists_every_run_and_its_damage(stored):
    store, folder = stored
    store.obtain(spec("other", params={**PARAMS, "seed": 5}), mode="train", train=FakeTrain())
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
    run = RunStore(root).obtain(spec, mode="train", train=train)
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


def test_a_relabelled_run_is_found_by_its_key(stored):
    from dataclasses import replace

    store, folder = stored
    run = store.read(folder)
    new = replace(spec(), name="URN 6 seed 0")  # a new label, the same parameters and components
    again = store.load(new)
    assert again is not None and again.path == run.path == store.root / "dyck" / new.key
    assert again.history == run.history and again.final == run.final


def test_key_folders_moves_the_old_layout_without_touching_records(stored):
    from urnlib import migrate

    store, folder = stored
    record = (folder / "record.json").read_bytes()
    old = folder.with_name(f"URN 6, lr 0.01 seed 0-{folder.name}")  # the layout before: <label>-<key>
    folder.rename(old)
    assert store.load(spec()) is None
    assert migrate.key_folders(store.root) == [(old, folder)]
    assert (folder / "record.json").read_bytes() == record
    assert store.load(spec()).final == store.read(folder).final  # verified: key, checksums, weights
    assert migrate.key_folders(store.root) == []  # nothing left to move


# provenance: the device and a dirty tree's difference
# --------------------------------------------------------------------------- #
def test_the_store_records_where_the_run_trained(tmp_path):
    store = RunStore(tmp_path)
    run = store.obtain(spec(), mode="train", train=FakeTrain(), device="auto")
    on_disk = json.loads((run.path / "record.json").read_text())
    assert on_disk["machine"]["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert run.device == on_disk["machine"]["device"]
    assert on_disk["execution"] == {"backend": "in-process"}
    assert store.read(run.path).record["machine"] == on_disk["machine"]  # verified: outside the checksum


def test_a_resumed_run_says_after_which_epoch(tmp_path):
    from urnlib.train import checkpoint_bytes

    store = RunStore(tmp_path)
    store.checkpoint(spec()).parent.mkdir(parents=True)
    store.checkpoint(spec()).write_bytes(checkpoint_bytes({"epoch": 4, "history": []}))
    run = store.obtain(spec(), mode="train", train=FakeTrain())
    assert run.record["execution"] == {"backend": "in-process", "resumed_after_epoch": [5]}
    assert not store.checkpoint(spec()).exists()  # the finished run drops it


def test_the_record_keeps_the_code_state_when_the_process_first_trained(tmp_path, monkeypatch):
    """The tree committed while a process trains: each of its runs names the code the process loaded, not
    the tree's state when that run began or was stored."""
    import urnlib.results as results

    tree = {"commit": "a" * 40, "dirty": False}
    monkeypatch.setattr(results, "git_state", lambda: dict(tree))
    monkeypatch.setattr(results, "_CODE_STATE", None)  # a fresh process

    def train(spec, checkpoint):
        tree["commit"] = "b" * 40  # a commit made while the run trains
        return FakeTrain()(spec, checkpoint)

    store = RunStore(tmp_path)
    first = store.obtain(spec(), mode="train", train=train)
    second = store.obtain(spec("other"), mode="train", train=train)  # begun after the commit
    assert first.record["git"] == second.record["git"] == {"commit": "a" * 40, "dirty": False}
    assert store.save(spec("saved"), FakeTrain()(spec("saved"), None)).record["git"]["commit"] == "b" * 40


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)


def test_a_dirty_tree_keeps_its_difference_once_beside_the_runs(tmp_path, monkeypatch):
    import urnlib.records as records

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "1")
    monkeypatch.setattr(records, "PACKAGE_ROOT", repo / "pkg")
    assert records.git_state() == {"commit": _git(repo, "rev-parse", "HEAD").stdout.strip(), "dirty": False}

    (repo / "pkg" / "a.py").write_text("x = 2\n")
    (repo / "pkg" / "b.py").write_text("y = 3\n")  # untracked: part of the difference too
    state = records.git_state()
    assert state["dirty"] and state["diff"] == records.sha(state["patch"])

    store = RunStore(tmp_path / "runs")
    first = store.save(spec(), FakeTrain()(spec(), None), git=dict(state))
    second = store.save(spec("other"), FakeTrain()(spec("other"), None), git=dict(state))
    assert "patch" not in first.record["git"] and first.record["git"]["diff"] == state["diff"]
    assert second.record["git"]["diff"] == state["diff"]
    assert [p.name for p in store.diffs.iterdir()] == [f"{state['diff']}.patch"]  # once per difference

    # the patch rebuilds the tree that trained the run from its commit
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    _git(clone, "apply", str(store.diffs / f"{state['diff']}.patch"))
    assert (clone / "pkg" / "a.py").read_text() == "x = 2\n"
    assert (clone / "pkg" / "b.py").read_text() == "y = 3\n"


def test_a_spec_s_name_is_derived_from_its_coordinates():
    spec = RunSpec.of("dyck", "URN 16, lr 0.01", PARAMS, COMPONENTS, seed=2, model="URN 16",
                      setting="lr 0.01")
    assert spec.name == "URN 16, lr 0.01 seed 2"
    assert spec.coords == {"label": "URN 16, lr 0.01", "seed": 2, "model": "URN 16", "setting": "lr 0.01"}
    once = RunSpec.of("ngram", "Kneser-Ney 3-gram", PARAMS, COMPONENTS)
    assert once.name == "Kneser-Ney 3-gram" and once.coords == {"label": "Kneser-Ney 3-gram", "seed": None}
    assert spec.key == RunSpec("dyck", "another label", PARAMS, COMPONENTS).key  # coordinates: not identity


def test_the_record_keeps_the_coordinates_under_its_checksum(tmp_path):
    spec = RunSpec.of("dyck", "URN 6", PARAMS, COMPONENTS, seed=0, model="URN 6")
    store = RunStore(tmp_path)
    run = store.obtain(spec, mode="train", train=FakeTrain())
    assert json.loads((run.path / "record.json").read_text())["coords"] == spec.coords
    assert store.read(run.path).coords == spec.coords and run.label == "URN 6" and run.seed == 0
    _edit_record(run.path, lambda r: r["coords"].update(seed=1))
    with pytest.raises(CorruptRunError, match="content checksum"):
        store.read(run.path)
