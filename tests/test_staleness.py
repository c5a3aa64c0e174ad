"""Staleness follows behaviour: a behaviour change fails its probe; the committed runs are all accounted
for."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from urnlib.results import CorruptRunError, RunStore

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "notebooks" / "results"
#: committed runs allowed to be stale, one folder (relative to notebooks/results) per line with the reason
#: after a tab; the list only shrinks: a stale run not on it, or a listed run that is no longer stale, fails
ALLOWED = REPO / "tests" / "stale_runs.txt"


def _allowed() -> dict[str, str]:
    if not ALLOWED.exists():
        return {}
    rows = [line.split("\t", 1) for line in ALLOWED.read_text().splitlines()
            if line and not line.startswith("#")]
    return {row[0]: row[1] if len(row) > 1 else "" for row in rows}


def test_committed_runs_are_intact_and_current():
    allowed, stale, corrupt = _allowed(), {}, []
    for folder, run in RunStore(COMMITTED).runs():
        where = str(folder.relative_to(COMMITTED))
        if isinstance(run, CorruptRunError):
            corrupt.append(f"{where}: {run}")
        elif run.stale_reasons():
            stale[where] = "; ".join(run.stale_reasons())
    assert not corrupt, "corrupt committed runs:\n" + "\n".join(corrupt)
    unlisted = sorted(set(stale) - set(allowed))
    assert not unlisted, ("stale committed runs (retrain them with make reproduce, or restamp them with "
                          "tools/restamp.py where their probe passes):\n"
                          + "\n".join(f"{w}: {stale[w]}" for w in unlisted))
    fresh = sorted(set(allowed) - set(stale))
    assert not fresh, f"no longer stale: remove them from {ALLOWED.name}:\n" + "\n".join(fresh)


def test_a_change_of_behaviour_fails_its_probe(tmp_path):
    """In a copy of the package, the LSTM's forget-gate bias starts at 0 instead of 1 (a default that changes
    the numbers and no version): the cross-serial probe, which trains an LSTM, fails."""
    copy = tmp_path / "urnlib"
    shutil.copytree(REPO / "urnlib", copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / "models" / "recurrent.py"
    text = source.read_text()
    assert "self.gates.bias[:n] = 1.0" in text
    source.write_text(text.replace("self.gates.bias[:n] = 1.0", "self.gates.bias[:n] = 0.0"))
    (tmp_path / "notebooks").symlink_to(REPO / "notebooks")  # the parameter files, beside the package
    env = {**os.environ, "URNLIB_QUIET": "1"}
    run = subprocess.run([sys.executable, "-m", "tests.probes", "--urnlib-root", str(tmp_path), "--check",
                          "cross_serial"], cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode != 0, run.stdout + run.stderr
    assert "cross_serial" in run.stdout and "FAILED" in run.stdout
    assert "init_logits.LSTM" in run.stdout or "LSTM" in run.stdout
