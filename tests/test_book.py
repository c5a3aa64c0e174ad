"""The chapter notebooks declare their configs' parameters, and the whole book builds at tiny scale (the
table of contents lists the registry's chapters: tests/test_chapters.py).

The slow tests use the ``tiny_book`` fixture of tests/conftest.py, what `make book SCALE=tiny` does in a
temporary copy of book/ (every chapter notebook runs with papermill, then Jupyter Book builds with warnings
as errors, -W -n --keep-going), built once and shared with tests/test_browser.py.
"""

import json
from html.parser import HTMLParser
from pathlib import Path

import papermill
import pytest
import yaml

from urnlib.claims import VERDICTS, Claim, load_claims
from urnlib.cli import NOTEBOOKS
from urnlib.experiments import chapters as registry

CHAPTERS = registry.names()

SCALES = ["tiny", "paper"]
# What urnlib.cli passes to every notebook. It also passes retrain=True with --retrain; a notebook that
# trains nothing (claims) need not declare it (papermill then only warns that it is unused).
INJECTED = {"scale", "claims_dir"}


def test_every_notebook_is_a_chapter():
    stray = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb") if p.stem not in CHAPTERS)
    assert stray == [], f"add {stray} to the chapter registry (urnlib.experiments.chapters) and book/_toc.yml"


def test_every_chapter_has_its_notebook():
    missing = [name for name in CHAPTERS if not (NOTEBOOKS / f"{name}.ipynb").exists()]
    assert missing == [], f"chapter notebooks missing from notebooks/: {missing}"


def test_every_notebook_cell_has_an_id():
    """nbformat warns at every read of a cell without an id, and says it will become an error."""
    missing = [f"{p.name} cell {i}" for p in sorted(NOTEBOOKS.glob("*.ipynb"))
               for i, cell in enumerate(json.loads(p.read_text())["cells"]) if "id" not in cell]
    assert missing == [], f"cells without an id (nbformat.validator.normalize adds them): {missing}"


@pytest.mark.parametrize("name", [n for n in CHAPTERS if (NOTEBOOKS / f"{n}.ipynb").exists()])
def test_notebook_parameters_are_the_configs_fields(name):
    """A chapter's parameters cell declares exactly its Config's fields (plus claims_dir), and each preset
    file names only those fields and its own scale."""
    declared = set(papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb")))
    assert INJECTED <= declared, \
        f"the parameters cell of {name}.ipynb must declare {sorted(INJECTED - declared)}"
    for scale in SCALES:
        assert (NOTEBOOKS / "params" / f"{name}.{scale}.yaml").exists()
    if not registry.get(name).trains:
        return
    config = registry.get(name).load_config()
    assert declared == set(config.fields()) | {"claims_dir"}, \
        f"{name}.ipynb declares {sorted(declared ^ (set(config.fields()) | {'claims_dir'}))} " \
        "unlike its Config"
    for scale in SCALES:
        given = yaml.safe_load((NOTEBOOKS / "params" / f"{name}.{scale}.yaml").read_text())
        assert given["scale"] == scale and set(given) <= set(config.fields())


class _Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts (header rows included)."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._open: list[list[list[str]]] = []  # tables being read (nested ones too)
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._open.append([])
        elif tag == "tr" and self._open:
            self._open[-1].append([])
        elif tag in ("td", "th") and self._open and self._open[-1]:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._open[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._open:
            self.tables.append(self._open.pop())

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


CLAIM_COLUMNS = ["source", "statement", "paper", "ours", "rule", "verdict"]


def claims_tables(page: Path) -> list[list[dict[str, str]]]:
    """The claims tables of a built page (header: [chapter,] source, ..., verdict), each as a list of rows."""
    parser = _Tables()
    parser.feed(page.read_text())
    found = []
    for rows in parser.tables:
        if rows and [c for c in rows[0] if c != "chapter"] == CLAIM_COLUMNS:
            found.append([dict(zip(rows[0], row)) for row in rows[1:]])
    return found


def load_claims_of(claims_dir: Path, chapter: str) -> list[Claim]:
    """The claims one chapter saved (``<claims_dir>/<chapter>.json``); [] when it saved none."""
    path = claims_dir / f"{chapter}.json"
    return [Claim(**c) for c in json.loads(path.read_text())] if path.exists() else []


def _norm(text: str) -> str:
    return " ".join(text.split())


def shown_claims_problems(page: Path, claims: list[Claim], with_chapter: bool = False) -> list[str]:
    """What is wrong with how ``page`` shows ``claims``: it must hold one claims table with one row per claim,
    in order, each with the claim's source, statement and verdict, and a verdict one of VERDICTS."""
    tables = claims_tables(page)
    if len(tables) != 1:
        return [f"{page.name}: {len(tables)} claims tables (header {CLAIM_COLUMNS}), expected 1"]
    rows = tables[0]
    problems = []
    if len(rows) != len(claims):
        problems.append(f"{page.name}: {len(rows)} rows in the claims table, {len(claims)} claims saved")
    for i, row in enumerate(rows):
        if row.get("verdict") not in VERDICTS:
            problems.append(f"row {i + 1}: verdict {row.get('verdict')!r} is not one of {VERDICTS}")
    for i, (row, c) in enumerate(zip(rows, claims)):
        want = {"source": c.source, "statement": c.statement, "verdict": c.verdict}
        if with_chapter:
            want["chapter"] = c.chapter
        got = {k: row.get(k, "") for k in want}
        if got != {k: _norm(v) for k, v in want.items()}:
            problems.append(f"row {i + 1} shows {got}, the saved claim is {want}")
    return problems


@pytest.mark.slow
def test_every_chapter_shows_its_saved_claims(tiny_book):
    """Each chapter's claims table lists exactly the claims it saved for the summary page, and the summary
    page (chapters/claims) lists every saved claim of the book."""
    saved = sorted(tiny_book.claims_dir.glob("*.json"))
    assert saved, f"no chapter saved claims in {tiny_book.claims_dir}"
    problems = []
    for path in saved:
        page = tiny_book.html / "chapters" / f"{path.stem}.html"
        if not page.exists():
            problems.append(f"{path.name} has no chapter page {page.name}")
            continue
        problems += shown_claims_problems(page, load_claims_of(tiny_book.claims_dir, path.stem))
    summary = tiny_book.html / "chapters" / "claims.html"
    problems += shown_claims_problems(summary, load_claims(tiny_book.claims_dir), with_chapter=True)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_notebooks_run_at_tiny_scale_and_the_book_builds(tiny_book):
    failures = tiny_book.failures()
    assert not failures, "\n\n".join(failures)
    html = tiny_book.html
    for name in CHAPTERS:
        assert (tiny_book.root / "chapters" / f"{name}.ipynb").exists()
    assert (html / "index.html").exists()
    for name in CHAPTERS:
        assert (html / "chapters" / f"{name}.html").exists()
    dyck = (html / "chapters" / "dyck.html").read_text()
    # Three figures (attractor accuracy, signature dials, paper 001 Fig. 3) and the claims table: one row per
    # claim the chapter saved, each with its verdict.
    assert dyck.count("<img") >= 3, "a figure of the Dyck chapter did not render"
    dyck_claims = load_claims_of(tiny_book.claims_dir, "dyck")
    assert dyck_claims, f"the Dyck chapter saved no claims in {tiny_book.claims_dir}"
    problems = shown_claims_problems(html / "chapters" / "dyck.html", dyck_claims)
    assert not problems, "the Dyck chapter's claims table:\n" + "\n".join(problems)
    agreement = (html / "chapters" / "agreement.html").read_text()
    # Fig. 2 (one panel per source, synthetic and offline real text at tiny scale) and Table 1 next to the
    # paper's
    assert agreement.count("<img") >= 1 and "effect (paper)" in agreement and "offline" in agreement
    claims = (html / "chapters" / "claims.html").read_text()
    assert "paper 000 Fig. 3" in claims, "the summary page does not list the Dyck chapter's claims"
    assert "paper 000 sec. 4, Fig. 2" in claims, \
        "the summary page does not list the agreement chapter's claims"
    matrix = (html / "chapters" / "matrix_embeddings.html").read_text()
    assert matrix.count("<img") >= 1 and "correct (paper)" in matrix and "Kneser-Ney" in matrix
    assert "paper 003 sec. 4.2" in claims, \
        "the summary page does not list the matrix-embedding chapter's claims"
    primer = (html / "chapters" / "primer.html").read_text()
    # Bengio et al.'s table with the lecture's numbers, the dendrogram, the a^n b^n plots, the claims
    assert primer.count("<img") >= 4 and "lecture row" in primer and "Kneser-Ney back-off" in primer
    assert "lecture 004, Weiss et al. (2018)" in claims, "the summary page does not list the primer's claims"
    tpru = (html / "chapters" / "tpru.html").read_text()
    assert tpru.count("<img") >= 2 and "paper 002 Table 2" in tpru
    assert "paper 002 Table 2" in claims, "the summary page does not list the TPRU chapter's claims"
    performance = (html / "performance.html").read_text()
    assert "ratio to nn.LSTM" in performance and "parallel prefix" in performance, "benchmark tables missing"
