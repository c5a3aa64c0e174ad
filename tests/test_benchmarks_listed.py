"""Every speed benchmark is run by `make benchmarks` and described in benchmarks/README.md (one command runs
all of them, issue 18), and every one the Makefile names exists; every other script there (the GPU estimates,
mutation testing) is named in the README too."""

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


def test_benchmarks_readme_names_every_script():
    readme = (REPO / "benchmarks" / "README.md").read_text()
    unnamed = sorted(p.name for p in (REPO / "benchmarks").glob("*.py") if f"`{p.name}`" not in readme)
    assert not unnamed, f"benchmarks/README.md does not name {unnamed}"
