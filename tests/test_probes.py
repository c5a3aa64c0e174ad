"""Behaviour probes (tests/probes): every experiment's micro run against its golden file (tests/golden).

A failure here means that what a stored run computes has changed. If that was the point, bump the version
of the component you changed in urnlib/components.py (with a note) and rewrite the golden with
``python -m tests.probes --write NAME``; if it was not (a refactor), the change has a bug.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `tests.probes` is a package of the repository root (pytest may not add it)
    sys.path.insert(0, str(REPO))

from tests.probes import (PROBES, compare, golden_path, read_golden, run_probe,  # noqa: E402
                          version_changes, write_command)

from urnlib.components import COMPONENTS  # noqa: E402

MAX_SHOWN = 25  # differences listed in a failure message


def _require_corpora(packages) -> None:
    """Skip when an npm corpus the probe reads is not installed (fail in CI, which runs `make data`)."""
    from urnlib.corpora.npm import npm_dir

    missing = [p for p in packages if not (npm_dir() / p).is_dir()]
    if missing:
        message = f"the npm corpora {missing} are not installed in {npm_dir()}; run `make data`"
        if os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}:
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize("name", list(PROBES))
def test_probe_matches_its_golden(name):
    probe = PROBES[name]
    golden = read_golden(name)
    if golden is None:
        pytest.fail(f"probe {name!r} has no golden file {golden_path(name)}: write it with "
                    f"`{write_command(name)}`", pytrace=False)
    changes = version_changes(name, golden)
    if changes:
        pytest.fail(f"the golden of probe {name!r} is out of date for component {'; '.join(changes)}: "
                    f"regenerate it with `{write_command(name)}` (after checking the new numbers are meant)",
                    pytrace=False)
    _require_corpora(probe.corpora)
    diffs = compare(golden["values"], run_probe(name), probe)
    if diffs:
        shown = "\n  ".join(diffs[:MAX_SHOWN]) + (f"\n  ... and {len(diffs) - MAX_SHOWN} more"
                                                   if len(diffs) > MAX_SHOWN else "")
        pytest.fail(
            f"probe {name!r}: {len(diffs)} value(s) differ from {golden_path(name).name} "
            f"(expected vs got):\n  "
            f"{shown}\nComponents that could be responsible: {', '.join(probe.components)}.\n"
            f"If you meant to change behaviour, bump the version of the component you changed in "
            f"urnlib/components.py with a note, then `{write_command(name)}`.",
            pytrace=False)


def test_every_component_is_pinned_by_a_probe():
    pinned = {c for probe in PROBES.values() for c in probe.components}
    unpinned, unknown = sorted(set(COMPONENTS) - pinned), sorted(pinned - set(COMPONENTS))
    assert not unpinned, f"no probe in tests/probes pins the components {unpinned}"
    assert not unknown, f"probes pin components that urnlib/components.py does not define: {unknown}"


def test_no_golden_without_a_probe():
    orphans = sorted(p.stem for p in golden_path("x").parent.glob("*.json") if p.stem not in PROBES)
    assert not orphans, f"golden files without a probe in tests/probes: {orphans}"
