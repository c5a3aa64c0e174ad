"""urnlib.reports.landing: the landing page's verdicts per paper (from hand-made claims), what the build is,
its licence, repository and citation; and the book's bibliography names every paper by authors and year with a
DOI or URL, with no internal file number left in the claims' texts."""

import html
import re
import subprocess

import pytest

from urnlib.claims import claim
from urnlib.reports import landing
from urnlib.reports.bibliography import PAPERS, REFERENCES, Paper, named_text, papers
from urnlib.reports.scorecard import row_id, rows, scorecard

NAMES = {"000": Paper("k0", "Smith and Jones (2022)", "Zero", "https://doi.org/10.1/zero"),
         "001": Paper("k1", "Doe et al. (2019)", "One"),
         "004": Paper("k4", "Roe (2023)", "Four", "https://example.org/four")}
FACTS = landing.BuildFacts("0123456789abcdef0123", False, "2026-12-01", "paper",
                           {"Python": "3.11.7", "PyTorch": "2.13.0"})


def made(source, statement, holds, **kw):
    return claim("dyck", source, statement, "p", "o", "r", holds, quote=f"{statement}.", epoch="final",
                 direction=f"found {statement}", **kw)


@pytest.fixture
def claims():
    return [made("paper 000 sec. 4", "s1", True),
            made("paper 000 Table 2", "t1", False, cause="open", settle="x"),
            made("paper 000 Fig. 10", "f10", True),
            made("paper 000 Fig. 2", "f2", True), made("paper 000 Fig. 2", "f2b", False, partly=True,
                                                       cause="noise"),
            made("paper 000 appendix A", "a1", None, cause="data"),
            made("lecture 004, Elman (1990) Fig. 7", "e1", True),
            made("paper 000 Fig. 2", "x1", False, cause="open", settle="x", extension=True)]


def test_one_row_per_paper_its_artefacts_in_reading_order_extensions_apart(claims):
    found = landing.paper_artefacts(claims, NAMES)
    assert list(found) == ["000", "001", "004"]
    assert [a.name for a in found["000"]] == ["Fig. 2", "Fig. 10", "Table 2", "sec. 4", "appendix A"]
    assert [a.verdict for a in found["000"]] == ["partly reproduced", "reproduced", "not reproduced",
                                                 "reproduced", "not run here"]
    assert found["001"] == [] and [a.name for a in found["004"]] == ["Elman (1990)"]
    assert not any(a.extension for arts in found.values() for a in arts)


def test_the_verdict_lines_link_each_artefact_to_its_scorecard_row(claims):
    page = landing.verdicts_html(claims, NAMES)
    lines = re.findall(r'<tr class="urnlib-landing-paper" data-paper="(\d+)">(.*?)</tr>', page, re.S)
    assert [n for n, _ in lines] == ["000", "001", "004"]
    first = lines[0][1]
    assert '<a href="https://doi.org/10.1/zero">Smith and Jones (2022)</a>' in first and "Zero" in first
    chips = re.findall(r'href="chapters/claims\.html#([\w-]+)" title="([^"]+)"', first)
    assert chips == [("scorecard-000-fig-2", "Fig. 2: partly reproduced"),
                     ("scorecard-000-fig-10", "Fig. 10: reproduced"),
                     ("scorecard-000-table-2", "Table 2: not reproduced"),
                     ("scorecard-000-sec-4", "sec. 4: reproduced"),
                     ("scorecard-000-appendix-a", "appendix A: not run here")]
    # a mark beside each name: the verdict does not rest on colour alone
    assert "Fig. 2&nbsp;◐" in first and "Table 2&nbsp;✗" in first and "appendix A&nbsp;–" in first
    assert "Doe et al. (2019)" in lines[1][1] and "no claim of it was decided" in lines[1][1]
    assert "<a" not in lines[1][1].split("</th>")[0]  # no link where the bibliography gives none
    assert all(f"{mark} {verdict}" in page for verdict, mark in landing.MARKS.items())


def test_every_link_of_the_verdict_lines_is_a_row_of_the_scorecard(claims):
    page = scorecard(claims, NAMES).to_html()
    ids = set(re.findall(r'<tr id="([^"]+)"', page))
    assert ids == {row_id(a) for a in rows(claims)}
    linked = set(re.findall(r"#(scorecard-[\w-]+)", landing.verdicts_html(claims, NAMES)))
    assert linked and linked <= ids
    assert "scorecard-extension-000-fig-2" in ids  # the extension's row has an id of its own


def test_the_totals_count_artefacts_and_claims_with_the_extensions_apart(claims):
    text = landing.totals_sentence(claims, "paper")
    assert "(at the *paper* scale) decided 7 of the papers' claims, about 6 of their figures" in text
    assert "3 reproduced, 1 partly reproduced, 1 not reproduced and 1 not run here" in text
    assert "1 more claim the papers never made" in text
    assert "extensions" not in landing.totals_sentence(claims[:3])


def test_the_build_says_commit_date_software_and_leaves_out_what_is_not_set():
    text = landing.build_markdown(FACTS, {"title": "A book", "author": "Us"})
    assert "Built on 2026-12-01 from commit `0123456789ab`, with Python 3.11.7, PyTorch 2.13.0." in text
    assert "Licence" not in text and "Repository" not in text and "url" not in text
    assert "```bibtex\n@misc{urnlib_companion," in text
    assert "author       = {{Us}}" in text and "title        = {A book}" in text and "{2026}" in text
    config = {"title": "A book", "repository": {"url": "https://git.example.org/us/book"}}
    changed = landing.BuildFacts(FACTS.commit, True, FACTS.date, None, FACTS.versions)
    text = landing.build_markdown(changed, config, "MIT", "0.1.0")
    assert "with changes not yet committed" in text
    assert "**Licence.** MIT." in text and "**Repository.** <https://git.example.org/us/book>" in text
    assert "url          = {https://git.example.org/us/book}" in text
    assert "version 0.1.0, commit 0123456789ab, built 2026-12-01" in text


def test_the_repository_comes_from_the_books_configuration_only_where_set():
    assert landing.repository_url({}) is None
    assert landing.repository_url({"repository": None}) is None
    assert landing.repository_url({"repository": {"url": "  "}}) is None
    assert landing.repository_url({"repository": {"url": "https://x.org/r"}}) == "https://x.org/r"


def test_the_licence_from_pyproject_else_a_licence_file(tmp_path):
    assert landing.licence(tmp_path) is None
    (tmp_path / "LICENSE").write_text("\nMIT License\n\nCopyright ...\n")
    assert landing.licence(tmp_path) == "MIT License"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nlicense = "Apache-2.0"\n')
    assert landing.licence(tmp_path) == "Apache-2.0"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nlicense = {text = "BSD-3-Clause"}\n')
    assert landing.licence(tmp_path) == "BSD-3-Clause"


def test_the_build_facts_of_a_checkout(tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "a.ipynb").write_text('{"metadata": {"papermill": {"parameters": {"scale": "tiny"}}}}')
    (chapters / "b.ipynb").write_text("not json")
    facts = landing.build_facts(tmp_path, chapters)
    assert facts.scale == "tiny" and facts.commit is None and re.fullmatch(r"\d{4}-\d\d-\d\d", facts.date)
    assert set(facts.versions) >= {"Python", "PyTorch"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m",
                    "x"], cwd=tmp_path, check=True)
    facts = landing.build_facts(tmp_path, chapters)
    assert re.fullmatch(r"[0-9a-f]{40}", facts.commit) and not facts.changed


def test_write_landing_from_saved_claims_or_none(tmp_path, claims):
    from urnlib.claims import save_claims

    (tmp_path / "_config.yml").write_text("title: T\nauthor: A\n")
    verdicts, build = landing.write_landing(tmp_path, tmp_path)
    assert "No chapter saved its claims" in verdicts.read_text() and "@misc{" in build.read_text()
    save_claims(claims, tmp_path / "chapters" / "_claims", "dyck")
    verdicts, _ = landing.write_landing(tmp_path, tmp_path)
    text = verdicts.read_text()
    assert text.count('class="urnlib-landing-paper"') == len(PAPERS) and "**What reproduces.**" in text


# ---------------------------------------------------------------- the book's bibliography names the papers
def test_every_paper_has_authors_a_year_and_a_doi_or_url_in_the_books_bibliography():
    named = papers(REFERENCES)
    assert list(named) == list(PAPERS)
    for number, paper in named.items():
        assert re.fullmatch(r"[^()]+ \(\d{4}\)", paper.name), (number, paper.name)
        assert "Anonymous" not in paper.name and paper.title
        assert paper.link.startswith("https://") or number == "004", (number, paper)
    assert len({p.name for p in named.values()}) == len(named), "two papers share a short name"
    assert named["000"].name == "Lappin and Bernardy (2022)"  # the ACL Anthology's order
    assert named["002"].name == "Tang et al. (2018)"


def test_named_text_replaces_every_file_number():
    assert named_text("which are not released (paper 000: 90%)", NAMES) == \
        "which are not released (Smith and Jones (2022): 90%)"
    assert named_text("not paper 001's; Paper 000 Fig. 3; lecture 004, Elman", NAMES) == \
        "not Doe et al.'s (2019); Smith and Jones (2022) Fig. 3; Roe (2023), Elman"
    assert named_text("paper 007 and paper000", NAMES) == "paper 007 and paper000"


def test_the_claims_tables_and_the_scorecard_show_no_file_number():
    from urnlib.reports.claims_tables import claims_table

    shown = [made("paper 000 sec. 4", "s1 as paper 001 says", False, cause="data",
                  settle="train on the sentences of paper 000's authors"),
             made("paper 002 Table 2", "t1", True)]
    page = html.unescape(claims_table(shown).to_html() + scorecard(shown).to_html())
    assert not re.search(r"\b[Pp]aper 00\d", page), re.findall(r".{40}[Pp]aper 00\d.{20}", page)
    assert "Lappin and Bernardy (2022), sec. 4" in page and "Lappin and Bernardy's (2022) authors" in page
    assert "as Bernardy and Lappin (2022) says" in page and "Tang et al. (2018)" in page
