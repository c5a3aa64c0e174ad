"""Every chapter page opens with its results: the layout of each chapter notebook
(notebooks/<chapter>.ipynb; the page of every claim apart), checked on its source, and the helpers of
urnlib.reports.opening that write the top of a page.

A chapter notebook
- opens with its title, then the parameters cell (first code cell, tagged ``parameters``, folded), then one
  code cell that checks the parameters, loads the runs, decides the claims and writes the opening
  (``chapter_opening``: the verdicts, the misses and their causes, the command that regenerates the page and
  what its runs cost), before any figure and any section;
- states no verdict and no count of claims in the Markdown above its first section (outside folded dropdowns):
  those are written from the claims;
- gives every ``{glue:figure}`` a name, an ``:alt:`` text that says what the figure shows, and a caption that
  starts with the paper's figure, ``({cite:alp}`KEY`, Fig. 3): ...``, or says that it is not the paper's
  (``(not in the papers ...``, ``(stand-in for ...``); each paper's figures come in the paper's order;
- names papers by citation, never by their file numbers ("paper 000"), and shows no local path;
- folds its bookkeeping (the parameters, the runs' provenance) and puts it after the claims table;
- refers (``{numref}``) only to figures and tables it names.

``layout_problems`` lists what a notebook breaks; a notebook made to break every rule shows that each check
can fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from urnlib.chapters import registry

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = registry.names(trains=True)  # every chapter but the page of every claim

GLUE_FIGURE = re.compile(r"^(`{3,})\{glue:figure\}[ \t]*(\S+)[ \t]*\n(.*?)^\1[ \t]*$", re.M | re.S)
DROPDOWN = re.compile(r"^(`{3,}|~{3,})\{dropdown\}.*?^\1[ \t]*$", re.M | re.S)
VERDICT_WORDS = re.compile(
    r"\b(?:reproduced|reproduces? in full|inconclusive|not run here)\b|\b\d+ claims?\b", re.I)
PAPER_NUMBER = re.compile(r"\b(?:paper|lecture)s? 00\d\b", re.I)
LOCAL_PATH = re.compile(r"file:/|(?<![\w.])~/|/(?:work|tmp|root|home|Users|mnt|scratch)/")
# "(" then the paper's figure: a citation and what of the paper ("Fig. 3", "Figs. 1 and 2", "Table 4",
# "sec. 5", "the clustering of ..."), or a figure the paper does not have
CAPTION = re.compile(r"^\((?:\{cite:alp\}`(?P<key>[\w-]+)`, \S|not in the (?:paper|papers|lecture)\b|"
                     r"stand-in for \{cite:alp\}`[\w-]+`)")
FIGURE_NUMBER = re.compile(r"^\(\{cite:alp\}`(?P<key>[\w-]+)`, Figs?\. (?P<n>\d+)")
NUMREF = re.compile(r"\{numref\}`([^`<]+)`")
BOOKKEEPING = re.compile(r"\bprovenance\(|config\.summary\(\)")
FOLDED_OUTPUT = {"hide-output", "remove-output", "remove-cell"}
FOLDED_INPUT = {"hide-input", "remove-input", "remove-cell"}


def _source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def figures(cells: list[dict]) -> list[tuple[int, str, dict[str, str], str]]:
    """Every ``{glue:figure}`` of the Markdown cells: (cell index, glued key, options, caption)."""
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for m in GLUE_FIGURE.finditer(_source(cell)):
            options, caption = {}, []
            for line in m.group(3).splitlines():
                option = re.match(r"^:([\w-]+):\s*(.*)$", line)
                if option and not caption:
                    options[option.group(1)] = option.group(2).strip()
                elif line.strip() or caption:
                    caption.append(line)
            out.append((i, m.group(2), options, "\n".join(caption).strip()))
    return out


def _alt_problem(alt: str) -> str | None:
    if len(alt.split()) < 8:
        return "fewer than 8 words"
    if re.search(r"[0-9a-f]{16,}|\.png\b|\.svg\b", alt):
        return "a file name or hash"
    if re.search(r"[`{}]", alt):
        return "markup (a reader's screen reader gets it as it is)"
    return None


def layout_problems(cells: list[dict]) -> list[str]:
    """What a chapter notebook's cells break of the layout in the module docstring (empty: nothing)."""
    problems = []
    kinds = [c["cell_type"] for c in cells]
    code = [i for i, k in enumerate(kinds) if k == "code"]
    if not cells or kinds[0] != "markdown" or not _source(cells[0]).startswith("# "):
        problems.append("the first cell is not the title (a Markdown cell starting with '# ')")
    if not code:
        return problems + ["no code cell"]
    params = cells[code[0]]
    if "parameters" not in _tags(params):
        problems.append("the first code cell is not tagged 'parameters'")
    elif not _tags(params) & FOLDED_INPUT:
        problems.append("the parameters cell is shown open (tag it remove-input)")
    figs = figures(cells)
    first_figure = figs[0][0] if figs else len(cells)
    headings = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and
                re.search(r"^##\s", _source(c), re.M)]
    first_section = headings[0] if headings else len(cells)
    opening = [i for i in code if "chapter_opening(" in _source(cells[i])]
    if not opening:
        problems.append("no cell writes the opening (urnlib.reports.opening.chapter_opening)")
    else:
        at = opening[0]
        if len(code) < 2 or at != code[1]:
            problems.append("the opening is not written by the first code cell after the parameters")
        if at > min(first_figure, first_section):
            problems.append("the opening comes after the first figure or section")
        if _tags(cells[at]) & FOLDED_OUTPUT:
            problems.append("the opening's output is folded or removed")
    for i in range(min(first_section, first_figure)):
        if kinds[i] == "markdown":
            text = DROPDOWN.sub("", _source(cells[i]))
            for m in VERDICT_WORDS.finditer(text):
                problems.append(f"cell {i}: a verdict or count typed above the first section: {m.group()!r} "
                                "(write it from the claims)")
    names = set()
    numbers: dict[str, list[int]] = {}
    for i, key, options, caption in figs:
        where = f"cell {i}, figure {key}"
        if not options.get("name"):
            problems.append(f"{where}: no :name:")
        names.add(options.get("name", ""))
        alt = options.get("alt")
        if not alt:
            problems.append(f"{where}: no :alt: text")
        elif _alt_problem(alt):
            problems.append(f"{where}: its :alt: text has {_alt_problem(alt)}")
        if not CAPTION.match(caption):
            problems.append(f"{where}: its caption does not start with the paper's figure, '({{cite:alp}}"
                            f"`KEY`, Fig. N): ...', or '(not in the papers...': {caption[:60]!r}")
        number = FIGURE_NUMBER.match(caption)
        if number:
            numbers.setdefault(number.group("key"), []).append(int(number.group("n")))
    for key, ns in numbers.items():
        if ns != sorted(ns):
            problems.append(f"the figures of {key} are not in the paper's order: Figs. {ns}")
    claims_cell = next((i for i in code if "claims_table(" in _source(cells[i])), None)
    for i, cell in enumerate(cells):
        text = _source(cell)
        if cell["cell_type"] == "markdown":
            problems += [f"cell {i}: a paper named by its file number, {m.group()!r} (cite it)"
                         for m in PAPER_NUMBER.finditer(text)]
        problems += [f"cell {i}: a local path {m.group()!r}" for m in LOCAL_PATH.finditer(text)]
        if cell["cell_type"] == "code" and BOOKKEEPING.search(text) and i != code[0]:
            if not _tags(cell) & FOLDED_OUTPUT:
                problems.append(f"cell {i}: bookkeeping (provenance, the parameters' summary) shown open")
            if claims_cell is None or i < claims_cell:
                problems.append(f"cell {i}: bookkeeping before the claims table")
    code_text = "\n".join(_source(cells[i]) for i in code)
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for target in NUMREF.findall(_source(cell)):
                if target not in names and not re.search(rf"[\"']{re.escape(target)}[\"']", code_text):
                    problems.append(f"cell {i}: {{numref}}`{target}` names no figure or table of the page")
    return problems


def _cells(chapter: str) -> list[dict]:
    return json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text())["cells"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_opens_with_its_results_and_captions_its_figures(chapter):
    problems = layout_problems(_cells(chapter))
    assert not problems, f"{chapter}.ipynb:\n" + "\n".join(problems)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_shows_at_least_one_figure(chapter):
    assert figures(_cells(chapter)), f"{chapter}.ipynb has no {{glue:figure}}"


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text: str, *tags: str) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": text, "outputs": []}


def test_the_checks_catch_a_notebook_that_breaks_every_rule():
    """Each rule fails on a notebook made to break it: a test of the test."""
    broken = [
        _md("Dyck\n\nOf the 55 claims of paper 000, 29 are reproduced."),
        _code("scale = 'paper'\nclaims_dir = '/work/x'", "parameters"),
        _code("config = experiment.Config.from_namespace(globals())", "hide-input"),
        _code("display(*provenance(runs))", "hide-input"),
        _md("```{glue:figure} fig-b\n:name: fig-b\n\n(paper 000, Fig. 3): accuracy.\n```\n\n"
            "```{glue:figure} fig-c\n:alt: a chart of the loss per epoch in file 9f2c4e1a0b7d3e5f6a8c.png\n"
            ":name: fig-c\n\n({cite:alp}`bernardy2022neural`, Fig. 4): loss.\n```\n\n"
            "```{glue:figure} fig-d\n:name: fig-d\n:alt: a chart\n\n"
            "({cite:alp}`bernardy2022neural`, Fig. 2): x.\n```\n\nSee {numref}`fig-nowhere`."),
        _code("display(Markdown(chapter_opening(config, runs, chapter_claims)))", "remove-output"),
        _md("## Claims"),
        _code("claims_table(chapter_claims)"),
    ]
    problems = "\n".join(layout_problems(broken))
    for expected in ["the first cell is not the title", "the parameters cell is shown open",
                     "the opening is not written by the first code cell", "the opening comes after the first",
                     "the opening's output is folded", "'55 claims'", "'reproduced'", "no :alt: text",
                     "fig-c: its :alt: text has a file name or hash", "fig-d: its :alt: text has fewer",
                     "fig-b: its caption does not start", "not in the paper's order: Figs. [4, 2]",
                     "named by its file number, 'paper 000'", "a local path '/work/'",
                     "bookkeeping (provenance, the parameters' summary) shown open",
                     "bookkeeping before the claims table", "{numref}`fig-nowhere` names no figure"]:
        assert expected in problems, f"{expected!r} not reported:\n{problems}"


# ------------------------------------------------------------------------ the helpers that write the opening
from urnlib.claims import CAUSES, claim  # noqa: E402
from urnlib.reports import opening as common  # noqa: E402 - the top of a page


def _claim(statement, holds, source="paper 000 Fig. 3", cause=None, partly=False, extension=False):
    return claim("dyck", source, statement, 1, 2, "rule", holds, partly, seeds=3, cause=cause, quote="q",
                 epoch="final", extension=extension, settle="an experiment" if cause == "open" else "")


def test_the_opening_counts_the_verdicts_and_names_each_miss_with_its_cause():
    pairs = "pairs compose to *nearly* the identity <unk>"
    claims = [_claim("[lr 0.01] the URN stays accurate", True),
              _claim("[lr 0.001] the URN stays accurate", True),
              _claim(f"[lr 0.01] {pairs}", False, "paper 000 Table 4", "open"),
              _claim(f"[lr 0.001] {pairs}", False, "paper 000 Table 4", "open"),
              _claim("[lr 0.01] the LSTM overfits", False, "paper 001 Fig. 3a", "setting", partly=True),
              _claim("[lr 0.001] the LSTM is worse", None),
              _claim("[lr 0.01] our variant holds", True, "paper 000 Fig. 3 (our variant)", extension=True)]
    text = common.results_summary(claims)
    assert text.startswith("Of the 6 claims of {cite:t}`bernardy2022neural` and "
                           "{cite:t}`bernardy_assessing` decided here (each under every training setting: "
                           "*lr 0.01* and *lr 0.001*), 2 are reproduced, 1 partly reproduced, 2 not "
                           "reproduced and 1 inconclusive."), text
    # each miss once, linked to its group in the claims table, with its source cited, the settings it is
    # missed under, and its cause; markup escaped
    assert ('<a href="#claims-dyck-paper-000-table-4">'
            r"*pairs compose to \*nearly\* the identity \<unk\>*</a> "
            "({cite:alp}`bernardy2022neural`, Table 4; every training setting)") in text
    assert common.MISSED_BECAUSE["open"] in text and common.MISSED_BECAUSE["setting"] in text
    assert ('<a href="#claims-dyck-paper-001-fig-3a">*the LSTM overfits*</a> '
            "({cite:alp}`bernardy_assessing`, Fig. 3a; *lr 0.01*, partly)") in text
    assert f"Inconclusive: 1 {common.MISSED_BECAUSE['noise']}." in text
    assert "1 more claim is ours, not the papers' (extensions, counted apart): 1 is reproduced." in text
    assert "paper 00" not in text


def test_the_opening_gives_one_verdict_per_figure_and_table_by_the_books_roll_up():
    claims = [_claim("[lr 0.01] the URN stays accurate", True),
              _claim("[lr 0.001] the URN stays accurate", True),
              _claim("[lr 0.01] pairs compose", False, "paper 000 Table 4", "open"),
              _claim("[lr 0.01] the LSTM overfits", True, "paper 001 Fig. 3a"),
              _claim("[lr 0.001] the LSTM overfits", None, "paper 001 Fig. 3a"),
              _claim("our variant holds", False, "paper 000 Table 3 (our variant)", extension=True)]
    line = common.artefacts_line(claims)
    first, second = line.split("\n\n")
    assert first == ("{cite:t}`bernardy2022neural`, by figure and table: "
                     '<a href="#claims-dyck-paper-000-fig-3">Fig. 3</a> *reproduced*; '
                     '<a href="#claims-dyck-paper-000-table-4">Table 4</a> *not reproduced*.')
    # Fig. 3a is a panel of Fig. 3: one claim reproduced and one undecided there, none failing, make it
    # partly reproduced (the roll-up's rule)
    assert second == ("{cite:t}`bernardy_assessing`, by figure and table: "
                      '<a href="#claims-dyck-paper-001-fig-3a">Fig. 3</a> *partly reproduced*.')
    assert "Table 3" not in line  # an extension's artefact is not the paper's
    assert common.artefacts_line([claims[-1]]) == ""


def test_the_opening_of_a_chapter_of_extensions_counts_them_and_shortens_long_statements():
    long = "the URN's maximum error over attractor counts is lower than the LSTM's at every budget " * 2
    claims = [_claim(f"[dyck] {long}", False, "paper 001 Fig. 3c", "open", extension=True),
              _claim("[anbn] counts", True, "lecture 004, the figure", extension=True)]
    text = common.results_summary(claims, setting="task")
    assert text.startswith("This chapter's 2 claims carry sentences of {cite:t}`bernardy_assessing` and "
                           "{cite:t}`levy2023neural` to other cells"), text
    assert "(each under every task: *dyck* and *anbn*)" in text
    assert " …*</a> ({cite:alp}`bernardy_assessing`, Fig. 3c; *dyck*)" in text and long not in text


def test_every_cause_has_its_words_in_the_opening():
    assert set(common.MISSED_BECAUSE) == set(CAUSES)


def test_papers_are_cited_not_numbered():
    assert common.cite_papers("paper 000 Fig. 3") == "{cite:alp}`bernardy2022neural`, Fig. 3"
    assert common.cite_papers("lecture 004, Bengio's table") == "{cite:alp}`levy2023neural`, Bengio's table"
    assert common.cite_papers("Paper 001 Table 2", role="t") == "{cite:t}`bernardy_assessing` Table 2"
    assert common.cite_papers("(paper 002)") == "({cite:alp}`tpru`)"
    assert common.cite_papers("paper 009 Fig. 1") == "paper 009 Fig. 1"  # not a paper of the book


class _Run:
    def __init__(self, cpu, wall):
        self.record = {"cpu_time_s": cpu, "wall_time_s": wall}


class _Config:
    scale = "paper"

    def rebuild_command(self):
        return "python -m urnlib.cli notebooks --scale paper --only dyck --train"


def test_the_regenerate_line_gives_the_command_and_the_runs_cost_from_their_records():
    runs = {"a": _Run(5400.0, 6000.0), "b": _Run(1800.0, 2000.0), "c": _Run(None, 720.0)}
    cost = common.runs_cost(runs)
    assert cost == {"runs": 3, "cpu_hours": 2.0, "longest": 1.5, "without_cpu": 1, "wall_hours": 0.2}
    text = common.regenerate_line(_Config(), runs)
    assert "`python -m urnlib.cli notebooks --scale paper --only dyck --train`" in text
    assert "its 3 runs took 2.0 CPU hours to train" in text and "the longest 1.5 CPU hours" in text
    assert "1 of them recorded only their wall time, 0.2 hours" in text
    assert "`make reproduce SCALE=paper`" in text
    assert "30 CPU minutes" in common.regenerate_line(_Config(), [_Run(1800.0, 1.0)])
    assert "took 1 CPU minute to train" in common.regenerate_line(_Config(), [_Run(70.0, 1.0)])
    assert "took under a CPU minute" in common.regenerate_line(_Config(), [_Run(20.0, 1.0)])
    assert "trains no model" in common.regenerate_line(_Config(), [])


def test_a_table_of_results_is_numbered_with_its_caption():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({("", "model"): ["URN <unk>", "LSTM|x"], ("paper 000", "loss"): [1.47213, 2.5],
                          ("ours", "loss"): ["1.6583 ± 0.0361 (3 seeds)", "1.6 ± 0.1 (3 seeds)"]})
    text = common.numbered_table(frame, "Losses ({cite:alp}`bernardy2022neural`, Table 4).", "tbl-x")
    lines = text.splitlines()
    assert lines[0] == ("~~~{table} Losses ({cite:alp}`bernardy2022neural`, Table 4). Every mean ± sd is "
                        "over 3 seeds.")
    assert lines[1] == ":name: tbl-x" and lines[-1] == "~~~"
    assert lines[3] == "| model | {cite:alp}`bernardy2022neural`, loss | ours loss |"
    assert lines[5] == r"| URN \<unk> | 1.47213 | 1.6583 ± 0.0361 |"
    assert lines[6] == r"| LSTM\|x | 2.5 | 1.6 ± 0.1 |"
    indexed = pd.DataFrame({"acc": [0.5, 0.25]}, index=pd.Index([0, 1], name="attractors"))
    assert "| attractors | acc |" in common.numbered_table(indexed, "c", "n")
    styled = common.numbered_table(indexed.style, "c", "n")  # a Styler's default 6 decimals lose their zeros
    assert "| 0 | 0.5 |" in styled and "0.500000" not in styled
    mixed = pd.DataFrame({"a": ["1 (3 seeds)", "2 (2 seeds)"]})  # different seeds: each cell keeps its own
    assert "(2 seeds)" in common.numbered_table(mixed, "c", "n")


def test_a_section_is_shown_with_papers_cited_and_its_tables_numbered():
    pd = pytest.importorskip("pandas")
    from IPython.display import Markdown

    table, other = pd.DataFrame({"a": [1]}), pd.DataFrame({"b": [2]})
    shown = common.displayed([Markdown("**Paper 000 Table 2**:"), table, other], [("Caption.", "tbl-a")])
    assert shown[0].data == "**{cite:t}`bernardy2022neural` Table 2**:"
    assert shown[1].data.startswith("~~~{table} Caption.\n:name: tbl-a")
    assert shown[2] is other  # no caption: shown as it is
