"""The book's protocol (issue 33): selection - early stopping, kept weights, any "best epoch" - never reads
test data; test data are for reporting only.

Two scans, each with the list of what still breaks the protocol and what will remove it:

* every preset of every chapter that trains: the metric each planned run's loop watches (``train.monitor``,
  ``stop.key``) is one its chapter declares a validation measure (``VALIDATION_MONITORS`` of its experiment
  module, which says what data each one reads);
* every report module: no "best epoch" taken as the lowest value of a test measure (an ``argmin`` over a
  ``test_loss`` column), except those listed with the reason (a claim about the test curve itself is a
  measurement, not a selection).

A listed exception that no longer breaks the protocol fails too, so the lists shrink as retrains land.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from urnlib.chapters import registry as chapters

REPO = Path(__file__).resolve().parents[1]
PRESETS = sorted((REPO / "notebooks" / "params").glob("*.yaml"))

#: (chapter, preset) whose runs still select on test data, and what removes them
PRESETS_AWAITING_RETRAIN: dict[tuple[str, str], str] = {}
#: report modules that take the lowest value of a test measure, and why: a selection awaiting its retrain, or
#: not a selection at all (a claim about the test curve's own shape, or a loss that is a validation loss)
REPORT_EXCEPTIONS = {
    "dyck/claims_001.py": "not a selection: paper 001 says the 8-unit LSTM's test loss turns up after "
                          "epoch 30, so where its test curve is lowest is the measurement",
    "primer/report.py": "not a selection on test data: the Elman runs' 'test_loss' is the loss on held-out "
                 "sentences generated like the training ones (a validation loss)",
}
_ARGMIN_TEST = re.compile(r"argmin\([^\n]*test_loss")


def _selects_on_test(source: str) -> bool:
    """An ``argmin`` over a test-loss column: written inside the call, or through a name the same function
    assigned from a test-loss column first."""
    if _ARGMIN_TEST.search(source):
        return True
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        test_names = {t.id for a in ast.walk(node) if isinstance(a, ast.Assign)
                      and '"test_loss"' in (ast.get_source_segment(source, a.value) or "")
                      for t in a.targets if isinstance(t, ast.Name)}
        for call in ast.walk(node):
            name = ast.get_source_segment(source, call.func) if isinstance(call, ast.Call) else None
            if name and name.endswith("argmin"):
                used = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
                if used & test_names:
                    return True
    return False


def _monitors(spec) -> set[str]:
    train = spec.params.get("train") or {}
    stop = spec.params.get("stop") or {}
    keys = {train.get("monitor"), stop.get("key") if isinstance(stop, dict) else None}
    return {k for k in keys if k}


def _presets():
    for chapter in chapters.names(trains=True):
        for path in PRESETS:
            name, scale = path.stem.split(".", 1)
            if name == chapter:
                yield chapter, scale


@pytest.mark.parametrize("chapter,scale", list(_presets()))
def test_no_preset_selects_on_test_data(chapter, scale):
    module = chapters.get(chapter).experiment
    allowed = set(module.VALIDATION_MONITORS)
    watched = set().union(*(_monitors(s) for s in module.Config.load(scale).plan()))
    off = watched - allowed
    if (chapter, scale) in PRESETS_AWAITING_RETRAIN:
        assert off, (f"{chapter}.{scale} no longer selects on test data: remove it from "
                     "PRESETS_AWAITING_RETRAIN")
    else:
        assert not off, (f"{chapter}.{scale}: its runs select on {sorted(off)}, not one of the chapter's "
                         f"validation measures {sorted(allowed)}")


@pytest.mark.parametrize("chapter", chapters.names(trains=True))
def test_every_chapter_says_what_it_selects_on(chapter):
    """``VALIDATION_MONITORS``: distinct metric names, each one a run of the chapter's presets watches (an
    unused entry would widen what selection may read), declared with a ``#:`` comment that says what data
    they read, naming any that is called ``test_*`` (held-out data drawn like the training data)."""
    module = chapters.get(chapter).experiment
    monitors = getattr(module, "VALIDATION_MONITORS", None)
    assert isinstance(monitors, tuple) and all(isinstance(m, str) and m for m in monitors), monitors
    assert len(set(monitors)) == len(monitors), f"{chapter}: {monitors} repeats a name"
    watched = set().union(*(_monitors(s) for c, scale in _presets() if c == chapter
                            for s in chapters.get(c).experiment.Config.load(scale).plan()))
    assert set(monitors) == watched, f"{chapter}: declared {sorted(monitors)}, watched {sorted(watched)}"
    lines = Path(module.__file__).read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("VALIDATION_MONITORS"))
    said = " ".join(line for line in lines[max(0, at - 4):at + 1] if "#:" in line)
    assert said, f"{chapter}: VALIDATION_MONITORS has no #: comment saying what data its metrics read"
    for name in monitors:
        assert not name.startswith("test") or name in said, f"{chapter}: {name} is not explained"


def test_no_report_reads_a_run_at_its_lowest_test_loss():
    reports = [*(REPO / "urnlib" / "reports").glob("*.py"),
               *(p for p in (REPO / "urnlib" / "chapters").glob("*/*.py")
                 if p.stem.startswith(("report", "claims")))]
    found = {str(path.relative_to(REPO / "urnlib" / "chapters")) if "chapters" in path.parts else path.name
             for path in reports if _selects_on_test(path.read_text())}
    assert found - set(REPORT_EXCEPTIONS) == set(), "a report selects an epoch on test data"
    assert set(REPORT_EXCEPTIONS) - found == set(), "listed reports that no longer do: remove them"


def test_the_scan_finds_what_it_looks_for():
    assert _selects_on_test('best = int(np.argmin(run.column("test_loss")))')
    two_lines = 'def best(run):\n    losses = run.column("test_loss")\n    return np.argmin(losses)\n'
    assert _selects_on_test(two_lines)
    assert not _selects_on_test('best = int(np.argmin(run.column("val_loss")))')
    assert not _selects_on_test('def last(run):\n    return run.column("test_loss")[-1]\n')
    other = 'def table(run):\n    worst = np.argmin(acc)\n    loss = run.column("test_loss")\n'
    assert not _selects_on_test(other)
