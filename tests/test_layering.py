"""The one-way flow of DESIGN.md, checked on the source: data and models below the loop, reports above
experiments' data but never importing them, drawing only in urnlib.plots, small modules, thin notebooks."""

import ast
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "urnlib"
#: generated data, not code
NOT_CODE: set[str] = set()
MAX_LINES = 400


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if str(p.relative_to(REPO)) not in NOT_CODE)


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def under(path: Path, *folders: str) -> bool:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] in folders


def uses(found: set[str], prefix: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for name in found)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layering(path):
    found = imports(path)
    if under(path, "languages", "corpora", "models"):
        for above in ("urnlib.train", "urnlib.experiments", "urnlib.reports", "urnlib.results",
                      "urnlib.runner", "urnlib.plots"):
            assert not uses(found, above), f"{path.name}: data and model modules must not import {above}"
    if under(path, "reports"):
        assert not uses(found, "urnlib.experiments"), \
            f"{path.name}: reports read stored runs, not experiments"
    if not under(path, "plots"):
        assert not uses(found, "matplotlib"), f"{path.name}: drawing belongs in urnlib.plots"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, \
        f"{path.relative_to(REPO)} has {lines} lines: split it into modules of one idea each"


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_hold_no_validation_code(path):
    cells = json.loads(path.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    for text in code:
        for forbidden in ("check_int(", "check_choice(", "check_float(", "check_bool(", "ParameterError",
                          "raise ", "torch.", "fit("):
            assert forbidden not in text, f"{path.name}: {forbidden!r} in a code cell; that belongs in urnlib"
