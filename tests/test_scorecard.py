"""urnlib.reports.scorecard: one row per artefact of each paper with one rolled-up verdict, extensions
apart, every claim exported; the papers named from the bibliography; links to the chapters' claim groups and
figures, and the figures the chapter registry names exist in the chapters' notebooks."""

import csv
import dataclasses
import json
import re
from html import escape
from html.parser import HTMLParser

import pytest

from urnlib.claims import claim, load_claims, save_claims
from urnlib.reports.claims_tables import anchor
from urnlib.chapters import registry as chapters
from urnlib.reports.opening import PAPERS
from urnlib.reports.bibliography import named_source
from urnlib.reports.scorecard import (FIELDS, REFERENCES, Paper, export, paper_of, papers, rows, scorecard,
                                      summary)

NAMES = {"000": Paper("k0", "Smith and Jones (2022)", "Zero"), "001": Paper("k1", "Doe (n.d.)", "One")}


def made(chapter, source, statement, holds, **kw):
    return claim(chapter, source, statement, "p", "o", "r", holds, quote=f"{statement}.", epoch="final",
                 direction=kw.pop("direction", f"found {statement}"), **kw)


@pytest.fixture
def claims():
    return [made("dyck", "paper 001 Fig. 3a", "d1", True),
            made("dyck", "paper 000 Fig. 3", "d2", False, cause="open", settle="more seeds"),
            made("dyck", "paper 000 Fig. 3", "d3", None),  # inconclusive, noise
            made("dyck", "paper 000 Fig. 3 (our variant)", "d4", True, extension=True),
            made("agreement", "paper 000 sec. 4", "a1", True),
            made("zoo", "paper 000 Fig. 3", "z1", False, cause="open", settle="s", extension=True),
            made("zoo", "paper 000 Fig. 3", "z2", True, extension=True),
            made("dyck", "paper 000 Fig. 3", "d5", True, extension=True),  # an extension in a papers' group
            made("primer", "a talk, Fig. 1", "t1", True)]  # a source naming none of the papers


def test_one_row_per_artefact_of_each_paper_papers_first_extensions_apart(claims):
    got = rows(claims)
    assert [(r.paper, r.name, r.chapters, r.extension) for r in got] == [
        ("000", "Fig. 3", ["dyck"], False), ("000", "sec. 4", ["agreement"], False),
        ("001", "Fig. 3", ["dyck"], False), (None, "Fig. 1", ["primer"], False),
        ("000", "Fig. 3", ["dyck", "zoo"], True)]
    # every claim in exactly one row; one verdict per row, rolled up from its claims
    assert sorted(c.statement for r in got for c in r.claims) == sorted(c.statement for c in claims)
    assert [r.verdict for r in got] == ["not reproduced", "reproduced", "reproduced", "reproduced",
                                        "partly reproduced"]
    keys = [(r.extension, r.paper, r.name) for r in got]
    assert len(keys) == len(set(keys)), "an artefact appears twice"


def test_each_row_shows_one_verdict_its_reason_and_links_to_the_claims(claims):
    html = scorecard(claims, NAMES).to_html()
    tables = re.findall(r'<table class="urnlib-scorecard">.*?</table>', html, re.S)
    assert len(tables) == 2  # the papers' artefacts, then the extensions
    papers_rows, extension_rows = (_Rows(t).rows[1:] for t in tables)  # below the header
    places = [cells for cells in papers_rows if len(cells) == 4]
    assert [cells[1] for cells in places] == ["not reproduced", "reproduced", "reproduced", "reproduced"]
    assert [cells[0] for cells in places] == ["Fig. 3 (figure)", "sec. 4", "Fig. 3 (figure)", "Fig. 1"]
    # the reason: one sentence from the deciding claim (the miss), its cause in words, never cut
    assert places[0][2] == "D2: found d2 (not known yet)."
    assert places[0][3].startswith(chapters.get("dyck").title + "2 claims:")
    headings = [cells[0] for cells in papers_rows if len(cells) == 1]
    assert headings[0].startswith("Smith and Jones (2022), Zero: 2 artefacts 1 reproduced 1 not reproduced")
    ext = [cells for cells in extension_rows if len(cells) == 4]
    assert [(cells[0], cells[1]) for cells in ext] == [("Smith and Jones (2022), Fig. 3 (figure)",
                                                        "partly reproduced")]
    # the legend of verdicts and causes comes before the first row
    assert html.index("Causes of a miss") < html.index('<table class="urnlib-scorecard">')
    links = _Rows(html).links
    assert f"dyck.html#{anchor('dyck', 'paper 000 Fig. 3')}" in links
    assert f"dyck.html#{chapters.get('dyck').figure('paper 000 Fig. 3')}" in links
    assert summary(claims) == ("The papers' 5 claims: 3 reproduced, 1 not reproduced, 1 inconclusive. Apart "
                               "from them, 4 extensions (claims the papers never made).")
    assert escape(summary(claims)) in html


def test_the_scorecard_is_computed_from_the_saved_claims(tmp_path, claims):
    for chapter in dict.fromkeys(c.chapter for c in claims):
        save_claims([c for c in claims if c.chapter == chapter], tmp_path, chapter)
    loaded = load_claims(tmp_path)
    assert {(r.paper, r.name, r.extension): r.verdict for r in rows(loaded)} == \
        {(r.paper, r.name, r.extension): r.verdict for r in rows(claims)}
    assert summary(loaded) == summary(claims)


def test_every_claim_is_exported_as_json_and_csv_with_its_artefact_s_verdict(tmp_path, claims):
    as_json, as_csv = export(claims, tmp_path)
    records = json.loads(as_json.read_text())
    assert len(records) == len(claims) and list(records[0]) == list(FIELDS)
    first = records[1]  # d2: paper 000 Fig. 3, not reproduced, cause open
    found = [first[k] for k in ("paper", "artefact", "verdict", "cause", "artefact_verdict")]
    assert found == ["000", "Fig. 3", "not reproduced", "open", "not reproduced"]
    assert first["kind"] == "check" and first["quote"] == "d2."
    with as_csv.open() as f:
        rows_ = list(csv.DictReader(f))
    assert [r["statement"] for r in rows_] == [c.statement for c in claims]


def test_papers_are_named_by_authors_and_year_from_the_bibliography(tmp_path):
    bib = tmp_path / "refs.bib"
    entries = {"bernardy2022neural": "author = {Bernardy, Jean-Philippe and Lappin, Shalom},\n"
                                     "  year = {2022}",
               "bernardy_assessing": "author = {Bernardy, Jean-Philippe and Lappin, Shalom}",
               "tpru": "author = {{Anonymous}}",
               "borbely_matrix": "author = {Borbély, Gábor and Kornai, András and Nemeskey, Dávid},\n"
                                 "  year = {2020}",
               "levy2023neural": "author = {Roger Levy},\n  year = {2023}"}
    bib.write_text("\n\n".join(f"@misc{{{key},\n  title = {{The {{RNN}} of {key}}},\n  {fields}\n}}"
                               for key, fields in entries.items()))
    named = papers(bib)
    assert [named[p].name for p in PAPERS] == ["Bernardy and Lappin (2022)", "Bernardy and Lappin (n.d.)",
                                               "Anonymous (n.d.)", "Borbély et al. (2020)", "Levy (2023)"]
    assert named["002"].title == "The RNN of tpru"
    assert named_source("paper 002 Table 4 (left)", named) == "Anonymous (n.d.), Table 4 (left)"
    assert named_source("lecture 004, Elman (1990) Fig. 7", named) == "Levy (2023), Elman (1990) Fig. 7"
    assert named_source("a talk", named) == "a talk"
    other = tmp_path / "other.bib"
    other.write_text(bib.read_text().replace("@misc{tpru,", "@misc{other,"))
    with pytest.raises(KeyError, match="'tpru' \\(paper 002\\)"):
        papers(other)


def test_the_book_s_bibliography_names_every_paper():
    named = papers(REFERENCES)
    assert set(named) == set(PAPERS) and all(p.name and p.title for p in named.values())


def test_paper_of_splits_the_paper_from_the_place():
    assert paper_of("paper 000 Fig. 3") == ("000", "Fig. 3")
    assert paper_of("paper 002 sec. 4, eq. 8") == ("002", "sec. 4, eq. 8")
    assert paper_of("lecture 004, Elman (1990) Fig. 7") == ("004", "Elman (1990) Fig. 7")
    assert paper_of("lecture 004") == ("004", "as a whole")
    assert paper_of("paper 0001 Fig. 1") == (None, "paper 0001 Fig. 1")
    assert paper_of("paper 999 Fig. 1") == (None, "paper 999 Fig. 1")  # not one of the papers
    assert paper_of("Smith (2020) Fig. 1") == (None, "Smith (2020) Fig. 1")


def test_a_chapter_s_figure_of_a_place_in_the_paper():
    dyck = chapters.Chapter("dyck", "t", None, "m", figures=(("paper 000 Fig. 3", "fig-a"),
                                                              ("paper 000 Fig. 3 (our variant)", "fig-b"),
                                                              ("paper 000 sec. 4", "fig-c")))
    assert dyck.figure("paper 000 Fig. 3") == "fig-a"
    assert dyck.figure("paper 000 Fig. 3b") == "fig-a"  # a panel
    assert dyck.figure("paper 000 Fig. 3 (our variant)") == "fig-b"  # the longest place
    assert dyck.figure("paper 000 Fig. 30") is None and dyck.figure("paper 000 Fig. 3ab") is None
    assert dyck.figure("paper 000 sec. 4, Fig. 2") == "fig-c" and dyck.figure("paper 000 sec. 4.1") is None
    assert dyck.figure("paper 001 Fig. 3") is None


def test_a_registered_table_is_linked_as_a_table(claims, monkeypatch):
    """A chapter may register a numbered table (``tbl-...``) for a place in a paper, e.g. paper 002 Table 2 on
    the released files: the row links to it and says "table"."""
    dyck = chapters.get("dyck")
    table = dataclasses.replace(dyck, figures=(("paper 000 Fig. 3", "tbl-dyck-made-up"),))
    monkeypatch.setattr(chapters, "CHAPTERS", tuple(table if c is dyck else c for c in chapters.CHAPTERS))
    shown = _Rows(scorecard(claims, NAMES).to_html())
    places = [cells[0] for cells in shown.rows[1:] if len(cells) == 4]  # below the header
    assert places[:3] == ["Fig. 3 (table)", "sec. 4", "Fig. 3"]  # paper 001's Fig. 3: not registered
    assert "dyck.html#tbl-dyck-made-up" in shown.links


@pytest.mark.parametrize("chapter", [c for c in chapters.CHAPTERS if c.figures], ids=lambda c: c.name)
def test_the_figures_a_chapter_registers_are_named_in_its_notebook(chapter):
    """Each label is a ``:name:`` of a figure in the chapter's notebook, or the label a code cell gives a
    numbered table (``numbered_table(..., "tbl-...")``); a renamed figure or table fails here."""
    cells = json.loads(chapter.notebook.read_text())["cells"]
    text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    names = set(re.findall(r"^:name:\s*(\S+)", text, re.M)) | set(re.findall(r'"(tbl-[\w-]+)"\)', code))
    missing = sorted({label for _, label in chapter.figures} - names)
    assert not missing, \
        f"{chapter.name}: no figure named {missing} in {chapter.notebook.name} (it names {sorted(names)})"


class _Rows(HTMLParser):
    """The rows of a piece of HTML as cell texts, and its links."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a":
            self.links.append(dict(attrs).get("href", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_the_kinds_table_names_every_kind_with_its_rule_and_counts_the_claims(claims):
    from urnlib.reports.scorecard import kinds_table
    from urnlib.statements import KINDS

    lines = kinds_table(claims).splitlines()[2:]
    assert [line.split("|")[1].strip(" `") for line in lines] == list(KINDS)
    counts = {line.split("|")[1].strip(" `"): int(line.split("|")[4]) for line in lines}
    assert counts["check"] == len(claims) and sum(counts.values()) == len(claims)
