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
from urnlib.reports.claims_tables import anchor, group_claims, in_book_order
from urnlib.cli import NOTEBOOKS
from urnlib.chapters import registry

CHAPTERS = registry.names()

SCALES = ["tiny", "paper"]
# What urnlib.cli passes to every notebook. It also passes retrain=True with --retrain; a notebook that
# trains nothing (claims) need not declare it (papermill then only warns that it is unused).
INJECTED = {"scale", "claims_dir"}


def test_every_notebook_is_a_chapter():
    stray = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb") if p.stem not in CHAPTERS)
    assert stray == [], f"add {stray} to the chapter registry (urnlib.chapters.registry) and book/_toc.yml"


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
    config = registry.get(name).config
    assert declared == set(config.fields()) | {"claims_dir"}, \
        f"{name}.ipynb declares {sorted(declared ^ (set(config.fields()) | {'claims_dir'}))} " \
        "unlike its Config"
    for scale in SCALES:
        given = yaml.safe_load((NOTEBOOKS / "params" / f"{name}.{scale}.yaml").read_text())
        assert given["scale"] == scale and set(given) <= set(config.fields())


CLAIM_COLUMNS = ["claim", "paper", "found here", "verdict", "cause"]


class _ClaimRows(HTMLParser):
    """The claims tables of a page (urnlib.claims.claims_table), in page order: each group's id (its folded
    section, details.urnlib-group) and each claim's cells (its row of class urnlib-claim), and the tables'
    headers."""

    def __init__(self):
        super().__init__()
        self.items: list[tuple[str, object]] = []  # ("group", id) or ("claim", [cells])
        self.headers: list[list[str]] = []
        self._in_claims = self._in_head = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details" and a.get("class") == "urnlib-group":  # a folded group, its table inside
            self.items.append(("group", a.get("id")))
        elif tag == "table" and "urnlib-claims" in (a.get("class") or "").split():
            self._in_claims = True
            self.headers.append([])
        elif not self._in_claims:
            return
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and a.get("class") == "urnlib-claim":
            self.items.append(("claim", []))
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_claims = False
        elif tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._cell).split())
            self._cell = None
            if self._in_head:
                self.headers[-1].append(text)
            elif self.items and self.items[-1][0] == "claim":
                self.items[-1][1].append(text)

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def load_claims_of(claims_dir: Path, chapter: str) -> list[Claim]:
    """The claims one chapter saved (``<claims_dir>/<chapter>.json``); [] when it saved none."""
    path = claims_dir / f"{chapter}.json"
    return [Claim(**c) for c in json.loads(path.read_text())] if path.exists() else []


def _norm(text: str) -> str:
    return " ".join(text.split())


def shown_claims_problems(page: Path, claims: list[Claim]) -> list[str]:
    """What is wrong with how ``page`` shows ``claims``: its claims tables (one, or one per chapter on the
    summary page) must show every group of :func:`urnlib.claims.group_claims` in order with its anchor, and
    under it the group's claims in order, each with its statement and verdict, a verdict one of VERDICTS."""
    parser = _ClaimRows()
    parser.feed(page.read_text())
    if not parser.headers:
        return [f"{page.name}: no claims table"]
    problems = [f"{page.name}: a claims table with the header {h}, expected {CLAIM_COLUMNS}"
                for h in parser.headers if h != CLAIM_COLUMNS]
    groups = group_claims(claims)
    want = [item for g in groups for item in [("group", g.anchor)] + [("claim", c) for c in g.claims]]
    got = parser.items
    shown_groups, shown_claims = (sum(k == kind for k, _ in got) for kind in ("group", "claim"))
    if (shown_groups, shown_claims) != (len(groups), len(claims)):
        problems.append(f"{page.name}: {shown_groups} groups and {shown_claims} claims shown, {len(groups)} "
                        f"groups and {len(claims)} claims saved")
    elif [kind for kind, _ in got] != [kind for kind, _ in want]:
        problems.append(f"{page.name}: the groups do not hold the claims saved in them")
    for i, ((kind, shown), (wanted, saved)) in enumerate(zip(got, want)):
        if kind != wanted:
            break  # told above
        if kind == "group" and shown != saved:
            problems.append(f"{page.name}: group {i + 1} has the id {shown!r}, expected {saved!r}")
        elif kind == "claim":
            statement, verdict = shown[0], shown[CLAIM_COLUMNS.index("verdict")]
            if verdict not in VERDICTS:
                problems.append(f"{page.name}: verdict {verdict!r} is not one of {VERDICTS}")
            tag = " extension" if saved.extension else ""
            if (statement, verdict) != (_norm(saved.statement) + tag, saved.verdict):
                problems.append(f"{page.name}: row {i + 1} shows {(statement, verdict)}, the saved claim is "
                                f"{(saved.statement, saved.verdict)}")
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
    problems += shown_claims_problems(summary, in_book_order(load_claims(tiny_book.claims_dir)))
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
    assert anchor("dyck", "paper 000 Fig. 3") in claims, \
        "the summary page does not list the Dyck chapter's claims"
    assert anchor("agreement", "paper 000 sec. 4, Fig. 2") in claims, \
        "the summary page does not list the agreement chapter's claims"
    matrix = (html / "chapters" / "matrix_embeddings.html").read_text()
    assert matrix.count("<img") >= 1 and "correct (paper)" in matrix and "Kneser-Ney" in matrix
    assert anchor("matrix_embeddings", "paper 003 sec. 4.2") in claims, \
        "the summary page does not list the matrix-embedding chapter's claims"
    primer = (html / "chapters" / "primer.html").read_text()
    # Bengio et al.'s table with the lecture's numbers, the dendrogram, the a^n b^n plots, the claims
    assert primer.count("<img") >= 4 and "lecture row" in primer and "Kneser-Ney back-off" in primer
    assert anchor("primer", "lecture 004, Weiss et al. (2018) (the lecture's summary)") in claims, \
        "the summary page does not list the primer's claims"
    tpru = (html / "chapters" / "tpru.html").read_text()
    assert tpru.count("<img") >= 2 and anchor("tpru", "paper 002 Table 2") in tpru
    assert anchor("tpru", "paper 002 Table 2") in claims, \
        "the summary page does not list the TPRU chapter's claims"
    performance = (html / "performance.html").read_text()
    assert "ratio to nn.LSTM" in performance and "parallel prefix" in performance, "benchmark tables missing"
