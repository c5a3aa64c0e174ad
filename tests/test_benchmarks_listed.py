"""Every speed benchmark is run by `make benchmarks` and described in benchmarks/README.md (one command runs
all of them, issue 18), and every one the Makefile names exists."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _scripts() -> set[str]:
    return {p.stem for p in (REPO / "benchmarks").glob("*_speed.py")}


def test_make_benchmarks_runs_every_benchmark():
    line = re.search(r"^BENCHMARKS := (.*)$", (REPO / "Makefile").read_text(), re.M)
    assert line, "the Makefile has no BENCHMARKS list"
    assert set(line.group(1).split()) == _scripts()


def test_benchmarks_readme_describes_every_benchmark():
    rows = re.findall(r"^\| `(\w+)\.py` \|", (REPO / "benchmarks" / "README.md").read_text(), re.M)
    assert sorted(rows) == sorted(_scripts())
