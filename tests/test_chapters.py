"""The chapter registry (urnlib.chapters.registry): every list of chapters is the registry's, and every
registered chapter's modules, notebook, presets, runs and probes exist and agree with it.

Each list is checked through what its module does (the chapters the runner runs and trains, the rows of the
cost table, the chapters restamping accepts, the probes there are), not through its source text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from urnlib import cli
from urnlib.chapters import registry
from urnlib.experiments.config import PARAMS_DIR, ChapterConfig
from urnlib.params import ParameterError

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests.probes and tools are packages of the repository root
    sys.path.insert(0, str(REPO))

TRAINING = registry.names(trains=True)


def test_the_registry_names_each_chapter_once_and_claims_last():
    names = registry.names()
    assert len(set(names)) == len(names) == len(registry.CHAPTERS)
    assert names[-1] == "claims" and registry.names(trains=False) == ["claims"]
    assert TRAINING == names[:-1]
    stores = [s for c in registry.CHAPTERS for s in c.stores]
    assert len(set(stores)) == len(stores), "a store folder belongs to one chapter"
    with pytest.raises(ParameterError, match="chapter='nosuch'.*dyck"):
        registry.get("nosuch")


def test_the_chapter_type_imports_no_chapter_and_no_torch():
    """Shared layers read :mod:`urnlib.chapter` (the type and the paths); it imports no chapter."""
    code = ("import sys, urnlib.chapter; "
            "print(sorted(m for m in sys.modules if m.startswith(('urnlib', 'torch'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True, cwd=REPO).stdout.replace("'", '"'))
    assert "torch" not in loaded
    assert not [m for m in loaded if m.startswith("urnlib.chapters")]


@pytest.mark.parametrize("name", registry.names(trains=True))
def test_a_chapter_s_experiment_imports_no_other_chapter(name):
    """A chapter is a package: importing its experiment (what a worker process does to train a run) loads no
    other chapter, and not the registry."""
    code = (f"import sys, urnlib.chapters.{name}.experiment; "
            "print(sorted(m for m in sys.modules if m.startswith('urnlib.chapters')))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True, cwd=REPO).stdout.replace("'", '"'))
    assert [m for m in loaded if m != "urnlib.chapters" and not m.startswith(f"urnlib.chapters.{name}")] == []


# ------------------------------------------------------------------------ every list is the registry's


def test_the_runner_runs_the_registry_s_chapters_in_its_order():
    assert cli.CHAPTERS == registry.names()
    planned = [name for name, _, _ in cli.plan("tiny", None, registry.NOTEBOOKS)]
    assert planned == registry.names()


def test_train_trains_the_registry_s_chapters_that_have_runs(monkeypatch, capsys):
    from urnlib.experiments import orchestrate

    seen = []

    def fake(chapters, scale, **kwargs):
        seen.append(chapters)
        return {name: {} for name in chapters}

    monkeypatch.setattr(orchestrate, "run_chapters", fake)
    assert cli.main(["train", "--scale", "tiny"]) == 0
    assert seen == [TRAINING]
    assert cli.main(["train", "--scale", "tiny", "--only", "claims"]) == 2
    assert str(TRAINING) in capsys.readouterr().err


def test_the_cost_table_has_a_row_per_registered_chapter(tmp_path):
    """One run in every store folder of every chapter: the table's rows are the chapters (each counting its
    folders' runs), and a folder no chapter registers keeps its own name."""
    from urnlib.reports.cost import cost_table
    from urnlib.results import RunSpec, RunStore, Trained

    store = RunStore(tmp_path)
    for folder in [*registry.store_chapters(), "elsewhere"]:
        trained = Trained([{"epoch": 1}], {"loss": 1.0}, {}, 1.0, 1.0)
        store.save(RunSpec(folder, "a run", {"x": folder}), trained)
    table = cost_table(tmp_path, staleness=False).set_index("chapter")
    assert sorted(table.index) == sorted([*TRAINING, "elsewhere", "total"])
    for chapter in registry.CHAPTERS:
        if chapter.trains:
            assert table.loc[chapter.name, "runs"] == len(chapter.stores)


def test_restamping_accepts_every_chapter_that_has_runs(capsys):
    from tools import restamp

    assert list(restamp.CHAPTERS) == TRAINING
    for chapter in registry.CHAPTERS[:-1]:
        assert restamp.CHAPTERS[chapter.name] == ([chapter.experiment], list(chapter.probes))
    with pytest.raises(SystemExit):
        restamp.main(["claims", "--dry-run"])
    assert "invalid choice: 'claims'" in capsys.readouterr().err


def test_the_probes_are_the_registry_s():
    """Every probe pins one registered chapter, and every probe a chapter names exists, with its golden."""
    from tests.probes import PROBES, golden_path

    named = [p for c in registry.CHAPTERS for p in c.probes]
    assert sorted(named) == sorted(PROBES), "each probe belongs to exactly one chapter"
    assert all(golden_path(p).is_file() for p in named)


def test_the_table_of_contents_lists_the_registry_s_chapters_in_order():
    toc = yaml.safe_load((REPO / "book" / "_toc.yml").read_text())
    assert toc["root"] == registry.ROOT
    assert [entry["file"] for entry in toc["chapters"]] == registry.toc_files()


# ------------------------------------------------------------------------ what each chapter registers


def test_every_notebook_parameter_file_and_store_folder_is_a_registered_chapter_s():
    assert sorted(p.stem for p in registry.NOTEBOOKS.glob("*.ipynb")) == sorted(registry.names())
    prefixes = {p.name.split(".")[0] for p in PARAMS_DIR.glob("*.yaml")} - {"cluster"}  # cluster.example
    assert prefixes == set(registry.names())
    # the store's own folders start with a dot (.diffs, committed; .checkpoints and .locks, ignored)
    stored = sorted(p.name for p in registry.RESULTS.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert stored == sorted(registry.store_chapters())


@pytest.mark.parametrize("chapter", registry.CHAPTERS, ids=lambda c: c.name)
def test_a_chapter_s_title_is_its_notebook_s_heading(chapter):
    cells = json.loads(chapter.notebook.read_text())["cells"]
    first = next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert first.splitlines()[0] == f"# {chapter.title}"


@pytest.mark.parametrize("chapter", registry.CHAPTERS, ids=lambda c: c.name)
def test_a_chapter_s_config_experiment_and_report_import(chapter):
    """The config reads the chapter's presets, the experiment runs it, its plan stores runs only in the
    chapter's store folders; the report imports. A chapter without runs has no experiment."""
    assert chapter.report.__name__.startswith("urnlib.")
    if not chapter.trains:
        assert chapter.experiment is None and not chapter.stores
        with pytest.raises(LookupError, match=chapter.name):
            chapter.config
        return
    config = chapter.config
    assert issubclass(config, ChapterConfig) and config.CHAPTER == chapter.name
    assert chapter.config is chapter.experiment.Config and callable(chapter.experiment.run)
    assert chapter.experiment.__name__ == f"urnlib.chapters.{chapter.name}.experiment"
    plan = config.load("paper").plan()
    assert {spec.experiment.split("/")[0] for spec in plan} == set(chapter.stores)


def test_every_committed_run_trained_from_uncommitted_edits_keeps_their_patch():
    """A run whose record says it was trained from a dirty tree names the patch of those edits; the store
    keeps it in .diffs (committed with the run). Without it the code that made the run is lost: retrain it
    from a clean tree (``python -m urnlib.cli runs --check`` names such runs)."""
    lost = []
    for rec in sorted(registry.RESULTS.glob("*/**/record.json")):
        if ".checkpoints" in rec.parts:
            continue
        git = json.loads(rec.read_text()).get("git") or {}
        # runs stored before patches were kept name no diff (their records say dirty, no more)
        if git.get("diff") and not (registry.RESULTS / ".diffs" / f"{git['diff']}.patch").is_file():
            lost.append(str(rec.parent.relative_to(registry.RESULTS)))
    assert not lost, f"runs without the patch they were trained with: {lost}"
