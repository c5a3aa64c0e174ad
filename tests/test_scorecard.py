"""urnlib.reports.scorecard: rows per chapter and place in a paper, counted from the claims, extensions
apart; the papers named from the bibliography; links to the chapters' claim groups and figures, and the
figures the chapter registry names exist in the chapters' notebooks."""

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
from urnlib.reports.scorecard import (REASON_CHARS, REFERENCES, Paper, named_source, paper_of, papers, reason,
                                      rows, scorecard, summary)

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


def test_rows_one_per_chapter_and_place_papers_first_in_the_papers_order_extensions_apart(claims):
    got = rows(claims)
    assert [(r.paper, r.place, r.chapter, r.extension) for r in got] == [
        ("000", "Fig. 3", "dyck", False), ("000", "sec. 4", "agreement", False),
        ("001", "Fig. 3a", "dyck", False), (None, "a talk, Fig. 1", "primer", False),
        ("000", "Fig. 3", "dyck", True), ("000", "Fig. 3 (our variant)", "dyck", True),
        ("000", "Fig. 3", "zoo", True)]
    # every claim in exactly one row, with its own verdict; a row's counts are its claims' verdicts
    assert sorted(c.statement for r in got for c in r.claims) == sorted(c.statement for c in claims)
    for r in got:
        assert all(c.extension == r.extension for c in r.claims)
        assert r.counts() == {v: n for v in ("reproduced", "partly reproduced", "not reproduced",
                                             "inconclusive", "not run here")
                              if (n := sum(c.verdict == v for c in r.claims))}
        assert r.anchor == anchor(r.chapter, r.claims[0].source)
    assert got[0].counts() == {"not reproduced": 1, "inconclusive": 1}
    assert got[4].counts() == {"reproduced": 1} and [c.statement for c in got[4].claims] == ["d5"]


def test_the_verdicts_shown_are_the_claims_and_the_links_lead_to_the_groups(claims):
    html = scorecard(claims, NAMES).to_html()
    tables = re.findall(r'<table class="urnlib-scorecard">.*?</table>', html, re.S)
    assert len(tables) == 2  # the papers' claims, then the extensions
    papers_rows, extension_rows = (_Rows(t).rows[1:] for t in tables)  # below the header
    papers_places = [cells for cells in papers_rows if len(cells) == 3]
    assert [cells[1] for cells in papers_places] == ["1 not reproduced 1 inconclusive", "reproduced",
                                                      "reproduced", "reproduced"]
    assert [cells[0] for cells in papers_places] == ["Fig. 3 (figure)", "sec. 4", "Fig. 3a (figure)",
                                                      "a talk, Fig. 1"]  # dyck registers figures
    # headings: each paper by its name and title with its claims' verdicts, each chapter within it
    headings = [cells[0] for cells in papers_rows if len(cells) == 1]
    assert headings[0].startswith("Smith and Jones (2022), Zero: 3 claims 1 reproduced 1 not reproduced")
    assert headings[1].startswith(f"in {chapters.get('dyck').title}: 2 claims")
    ext_places = [cells[0] for cells in extension_rows if len(cells) == 3]
    assert ext_places == ["Smith and Jones (2022), Fig. 3 (figure)",
                          "Smith and Jones (2022), Fig. 3 (our variant) (figure)",
                          "Smith and Jones (2022), Fig. 3"]
    for statement in ("d4", "d5", "z1", "z2"):  # extensions only in the extensions' table
        assert f"found {statement}" not in tables[0] and f"found {statement}" in tables[1]
    links = _Rows(html).links
    for r in rows(claims):
        assert f"{r.chapter}.html#{r.anchor}" in links
    assert f"dyck.html#{chapters.get('dyck').figure('paper 000 Fig. 3')}" in links
    assert f"dyck.html#{chapters.get('dyck').figure('paper 000 Fig. 3 (our variant)')}" in links
    assert summary(claims) == ("The papers' 5 claims: 3 reproduced, 1 not reproduced, 1 inconclusive. Apart "
                               "from them, 4 extensions (claims the papers never made).")
    assert escape(summary(claims)) in html


def test_the_scorecard_is_computed_from_the_saved_claims(tmp_path, claims):
    for chapter in dict.fromkeys(c.chapter for c in claims):
        save_claims([c for c in claims if c.chapter == chapter], tmp_path, chapter)
    loaded = load_claims(tmp_path)
    assert {(r.chapter, r.place, r.extension): r.counts() for r in rows(loaded)} == \
        {(r.chapter, r.place, r.extension): r.counts() for r in rows(claims)}
    assert summary(loaded) == summary(claims)


def test_the_reason_is_the_worst_miss_cause_and_direction_then_the_other_misses():
    ok = [made("c", "s", "a", True, direction="A above B by 0.3"), made("c", "s", "b", True)]
    assert reason(ok) == "A above B by 0.3"
    mixed = [made("c", "s", "a", None, direction="within the spread"),
             made("c", "s", "b", False, cause="paper", direction="the formula differs"),
             made("c", "s", "c", False, partly=True, cause="open", settle="x"),
             made("c", "s", "d", None, cause="data")]
    assert reason(mixed) == "paper: the formula differs (+3 more: 1 data, 1 noise, 1 open)"
    long = [made("c", "s", "a", False, cause="scale", direction="word " * 60)]
    assert len(reason(long)) <= REASON_CHARS and reason(long).startswith("scale: word word")
    assert reason(long).endswith("...")


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
    places = [cells[0] for cells in shown.rows[1:] if len(cells) == 3]  # below the header
    assert places[:3] == ["Fig. 3 (table)", "sec. 4", "Fig. 3a"]  # 3a: paper 001, not registered
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
