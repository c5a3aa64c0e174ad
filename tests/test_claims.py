"""urnlib.claims: numbers as the claims tables print them, and the table's HTML."""

import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from urnlib.claims import VERDICTS, Claim, claim, format_value, load_claims, save_claims
from urnlib.reports.claims_tables import anchor, claims_frame, claims_table, group_claims
from urnlib.chapters import registry as chapters


@pytest.mark.parametrize("value, shown", [
    (848570.0, "848,570"),  # an integral float: no ".0"
    (848570, "848,570"),
    (np.int64(12000), "12,000"),
    (5, "5"),
    (-3.0, "-3"),
    (0.503000, "0.503"),  # 4 significant digits, no trailing zeros
    (1.529142, "1.529"),
    (2.16420, "2.164"),
    (184.4, "184.4"),
    (3310.8, "3,311"),  # integer digits are never dropped
    (-0.0735, "-0.0735"),
    (np.float32(0.5), "0.5"),
    (0.0, "0"),
    (1.25e-7, "1.25e-07"),
    (2.5e20, "2.5e+20"),
    (True, "yes"),
    (np.bool_(False), "no"),
    (math.nan, "n/a"),
    (math.inf, "inf"),
    ("34.62%", "34.62%"),  # text stays as it is
])
def test_format_value(value, shown):
    assert format_value(value) == shown


def test_format_value_digits():
    assert format_value(math.pi, digits=3) == "3.14"
    assert format_value(0.000123456, digits=3) == "0.000123"


def test_claim_formats_numbers_given_for_paper_and_ours():
    c = claim("dyck", "paper 000 Fig. 3", "s", 848570.0, 0.503000, "rule", True)
    assert (c.paper, c.ours, c.verdict) == ("848,570", "0.503", "reproduced")
    assert claim("dyck", "src", "s", "text", "more text", "rule", None).paper == "text"


def test_verdicts_follow_holds_and_partly():
    verdicts = [claim("c", "s", "x", "p", "o", "r", holds, partly).verdict
                for holds, partly in [(True, False), (False, True), (False, False), (None, False)]]
    verdicts.append(claim("c", "s", "x", "p", "o", "r", None, cause="data").verdict)
    assert verdicts == list(VERDICTS)


def test_claims_frame_formats_numbers_of_claims_made_directly():
    frame = claims_frame([Claim("dyck", "src", "s", 0.25, 1234.0, "r", "reproduced")])
    assert frame.loc[0, "paper"] == "0.25" and frame.loc[0, "ours"] == "1,234"


def test_claims_table_escapes_html_and_fits_its_column():
    claims = [claim("agreement", "paper 000 sec. 4", "the <unk> token & b_{t-1}", "< 1%", "34.6%",
                    "error < 1%", False, quote="It errs on <unk> < 1% of the time.")]
    html = claims_table(claims).to_html()
    assert "&lt;unk&gt; token &amp; b_{t-1}" in html and "&lt; 1%" in html and "<unk>" not in html
    assert "on &lt;unk&gt; &lt; 1%" in html  # the quote too
    coded = claims_table([claim("a", "s", "`ours` <b>", "p", "o", "r", True)]).to_html()
    assert "<code>ours</code> &lt;b&gt;" in coded  # Markdown's inline code as code
    # a quote's TeX becomes MathJax's inline math, also a command the paper typed outside dollars
    tex = claims_table([claim("a", "s", "x", "p", "o", "r", True,
                              quote=r"when $d' < d$, \mathbf{J}_t and $$M_* := \sum_w M_w$$ hold")]).to_html()
    math = re.findall(r'<span class="math notranslate nohighlight">\\\((.*?)\\\)</span>', tex)
    assert math == ["d&#x27; &lt; d", r"\mathbf{J}_t", r"M_* := \sum_w M_w"] and "$" not in tex
    assert 'class="urnlib-claims"' in html and "table-layout: fixed" in html
    widths = [float(w) for w in re.findall(r'<col style="width: ([\d.]+)%">', html)]
    assert len(widths) == 5 and abs(sum(widths) - 100) < 0.5
    assert claims_table(claims)._repr_html_() == html


class _Page(HTMLParser):
    """The rows of every table of a piece of HTML: (the row's class, its id, its cells' texts), and each
    ``<details>`` summary's text; a folded group of claims (``details.urnlib-group``) as a row of class
    urnlib-group whose one cell is its summary."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: list[tuple[str, str | None, list[str]]] = []
        self.summaries: list[str] = []
        self.links: list[str] = []
        self._cell: list[str] | None = None
        self._summary: list[str] | None = None
        self._group = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self.rows.append((a.get("class", ""), a.get("id"), []))
        elif tag == "details" and a.get("class") == "urnlib-group":  # a group: its summary is its one cell
            self.rows.append(("urnlib-group", a.get("id"), []))
            self._group = True
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "summary" and self._group:
            self._cell = []
        elif tag == "summary":
            self._summary = []
        elif tag == "a":
            self.links.append(a.get("href", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1][2].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "summary" and self._group:
            self.rows[-1][2].append(" ".join("".join(self._cell).split()))
            self._cell, self._group = None, False
        elif tag == "summary" and self._summary is not None:
            self.summaries.append(" ".join("".join(self._summary).split()))
            self._summary = None

    def handle_data(self, data):
        for part in (self._cell, self._summary):
            if part is not None:
                part.append(data)


def _made(chapter, source, statement, holds, **kw):
    return claim(chapter, source, statement, "p", "o", kw.pop("rule", "r"), holds, quote=f"{statement}.",
                 epoch="final", **kw)


def test_anchor_is_stable_readable_and_ignores_punctuation_case_and_spacing():
    assert anchor("dyck", "paper 000 Fig. 3") == "claims-dyck-paper-000-fig-3"
    assert anchor("cross_serial", "paper 001 Fig. 2a") == "claims-cross-serial-paper-001-fig-2a"
    assert anchor("dyck", "Paper 000,  Fig 3") == anchor("dyck", "paper 000 Fig. 3")
    assert anchor("dyck", "paper 000 Fig. 3") != anchor("agreement", "paper 000 Fig. 3")
    assert anchor("dyck", "paper 000 Fig. 3") != anchor("dyck", "paper 000 Fig. 3b")
    assert anchor("primer", "lecture 004, Elman (1990) Fig. 7") == \
        "claims-primer-lecture-004-elman-1990-fig-7"
    assert anchor("zoo", "Borbély sec. 5") == "claims-zoo-borbely-sec-5"  # ASCII only
    assert anchor("dyck", "") == "claims-dyck-unsourced"
    assert re.fullmatch(r"[a-z0-9-]+", anchor("a b", "<x> & \"y\"; z"))


def test_claims_are_grouped_by_chapter_and_source_in_the_order_of_their_first_claim():
    claims = [_made("b", "paper 000 Fig. 2", "one", True), _made("b", "paper 000 sec. 4", "two", False),
              _made("b", "paper 000 Fig. 2.", "three", None), _made("a", "paper 000 Fig. 2", "four", True),
              _made("b", "paper 000 sec. 4", "five", True)]
    groups = group_claims(claims)
    assert [(g.chapter, g.source) for g in groups] == [("b", "paper 000 Fig. 2"), ("b", "paper 000 sec. 4"),
                                                        ("a", "paper 000 Fig. 2")]
    assert [[c.statement for c in g.claims] for g in groups] == [["one", "three"], ["two", "five"], ["four"]]
    assert [g.anchor for g in groups] == [anchor(g.chapter, g.source) for g in groups]
    assert len({g.anchor for g in groups}) == len(groups)  # unique
    assert groups[0].counts() == {"reproduced": 1, "inconclusive": 1}
    assert sorted(c.statement for g in groups for c in g.claims) == sorted(c.statement for c in claims)


def test_the_table_shows_each_group_with_its_anchor_then_its_claims_with_verdict_cause_and_direction():
    claims = [_made("b", "paper 000 Fig. 2", "one", True, direction="A above B by 0.3"),
              _made("b", "paper 000 sec. 4", "two", False, cause="data", direction="A below B by 0.1"),
              _made("b", "paper 000 Fig. 2", "three", None, seeds_needed=8),
              _made("b", "paper 000 sec. 4", "four", False, partly=True, cause="noise")]
    page = _Page(claims_table(claims).to_html())
    groups = [(rid, cells[0]) for cls, rid, cells in page.rows if cls == "urnlib-group"]
    assert [rid for rid, _ in groups] == [anchor("b", "paper 000 Fig. 2"), anchor("b", "paper 000 sec. 4")]
    from urnlib.reports.bibliography import named_source

    assert groups[0][1].startswith(named_source("paper 000 Fig. 2")) and "paper 000" not in groups[0][1]
    assert "1 reproduced" in groups[0][1] and "1 inconclusive" in groups[0][1]
    assert f"#{groups[0][0]}" in page.links  # each group links to itself
    header = next(cells for cls, _, cells in page.rows if not cls)
    assert header == ["claim", "paper", "found here", "verdict", "cause"]
    shown = [cells for cls, _, cells in page.rows if cls == "urnlib-claim"]
    order = ["one", "three", "two", "four"]  # grouped: Fig. 2's claims, then sec. 4's
    by_name = {c.statement: c for c in claims}
    assert [cells[0] for cells in shown] == order
    assert [cells[3] for cells in shown] == [by_name[n].verdict for n in order]
    assert [cells[2] for cells in shown] == [by_name[n].direction for n in order]
    assert [cells[4] for cells in shown] == ["-", "noise (8 seeds)", "data", "noise"]
    assert page.summaries == [f"\u201c{n}.\u201d" for n in order]  # each claim's quote, opening its details


def test_the_rules_standard_phrases_are_stated_once_in_the_legend():
    from urnlib.reports.claims_tables import legend_html, rules_legend, short_rule
    from urnlib.rules import BEATS_RULE, THRESHOLD_RULE

    claims = [_made("b", "s", "one", True, rule=f"A above B ({BEATS_RULE})"),
              _made("b", "s", "two", True, rule=f"A above B ({BEATS_RULE})"),
              _made("b", "s", "three", False, cause="open", rule="a count")]
    assert short_rule(claims[0].rule) == "A above B (Welch's t-test)"
    assert rules_legend(claims) == [("Welch's t-test", BEATS_RULE)]  # only the phrases used
    html = claims_table(claims).to_html()
    assert html.count(BEATS_RULE.replace("'", "&#x27;")) == 1  # in the legend only
    assert THRESHOLD_RULE.replace("'", "&#x27;") not in html
    assert "A above B (Welch&#x27;s t-test)" in html  # each claim's own rule, shortened, in its details
    legend = legend_html(claims)
    assert "<code>open</code>" in legend and "<code>noise</code>" not in legend  # the causes present


def test_the_summary_page_folds_each_chapter_under_its_title_and_links_to_its_page():
    claims = [_made("dyck", "paper 000 Fig. 3", "one", True), _made("zoo", "paper 001 sec. 3.1", "two", True),
              _made("dyck", "paper 000 Table 4", "three", None)]
    html = claims_table(claims, with_chapter=True).to_html()
    page = _Page(html)
    assert html.count('<details class="urnlib-chapter">') == 2
    assert page.summaries[0].startswith(f"{chapters.get('dyck').title}: 2 claims")
    assert page.summaries[3].startswith(f"{chapters.get('zoo').title}: 1 claim ")
    assert "dyck.html" in page.links and "zoo.html" in page.links
    ids = [rid for cls, rid, _ in page.rows if cls == "urnlib-group"]
    assert ids == [anchor("dyck", "paper 000 Fig. 3"), anchor("dyck", "paper 000 Table 4"),
                   anchor("zoo", "paper 001 sec. 3.1")]
    # the figure a chapter registers for the paper's place: from the summary page, on the chapter's page
    label = chapters.get("dyck").figure("paper 000 Fig. 3")
    assert label and f"dyck.html#{label}" in page.links
    assert f"#{label}" in _Page(claims_table(claims[:1]).to_html()).links


def test_claims_in_book_order():
    from urnlib.reports.claims_tables import in_book_order

    claims = [_made("zoo", "s", "z", True), _made("x", "s", "unknown", True), _made("dyck", "s", "d1", True),
              _made("primer", "s", "p", True), _made("dyck", "s", "d2", True)]
    assert [c.statement for c in in_book_order(claims)] == ["p", "d1", "d2", "z", "unknown"]


def test_load_claims_reads_back_saved_claims_and_stops_on_none(tmp_path):
    with pytest.raises(FileNotFoundError, match="run the chapter notebooks first"):
        load_claims(tmp_path)
    claims = [claim("dyck", "src", "s", 1.0, 2.0, "r", True, quote="The URN learns.", epoch="final (100)")]
    save_claims(claims, tmp_path, "dyck")
    assert load_claims(tmp_path) == claims
    with pytest.raises(ValueError, match="'unquoted' \\(quote\\)"):  # every saved claim quotes its sentence
        save_claims([claim("dyck", "src", "unquoted", 1.0, 2.0, "r", True, epoch="final")], tmp_path, "dyck")
    with pytest.raises(ValueError, match="open without the experiment"):
        missed = claim("dyck", "src", "missed", 1.0, 2.0, "r", False, quote="q", epoch="e")
        save_claims([missed], tmp_path, "d")


def test_misses_grouped_by_cause_and_seed_summary():
    from urnlib.claims import claim
    from urnlib.reports.claims_tables import misses_by_cause, seed_summary

    claims = [claim("a", "s", "kept", 1, 1, "r", True, seeds=3),
              claim("a", "s", "noisy", 1, 2, "r", None, seeds=3, cause="noise"),
              claim("b", "s", "printed lr", 1, 2, "r", False, seeds=2, cause="setting"),
              claim("b", "s", "count", 1, 1, "r", True),
              Claim("c", "s", "old", "1", "2", "r", "not reproduced")]  # saved before causes existed
    frame = misses_by_cause(claims)
    assert list(frame["statement"]) == ["printed lr", "noisy", "old"]  # in the order of CAUSES
    assert list(frame["cause"]) == ["setting", "noise", "not recorded"]
    seeds = seed_summary(claims).set_index("chapter")
    assert seeds.loc["a", "claims on trained runs"] == 2 and seeds.loc["b", "on fewer than 3 seeds"] == 1
    assert seeds.loc["c", "fewest seeds"] == "-"


def test_verdict_counts_per_chapter_in_the_verdicts_order_with_a_total():
    from urnlib.claims import VERDICTS, claim
    from urnlib.reports.claims_tables import verdict_counts

    claims = [claim("b", "s", "one", 1, 1, "r", True, seeds=3),
              claim("b", "s", "two", 1, 2, "r", False, seeds=3, cause="open"),
              claim("a", "s", "three", 1, 2, "r", None, seeds=3, cause="noise"),
              claim("a", "s", "four", 1, 1, "r", False, partly=True, seeds=3)]
    claims.append(claim("zoo", "s", "five", 1, 1, "r", True, seeds=3, extension=True))
    table = verdict_counts(claims)
    assert list(table.columns) == ["chapter", "claims", *VERDICTS]
    assert list(table["chapter"]) == ["b", "a", "zoo", "the papers' claims", "extensions"]
    assert table.iloc[0][list(VERDICTS)].tolist() == [1, 0, 1, 0, 0]
    assert table.iloc[1][list(VERDICTS)].tolist() == [0, 1, 0, 1, 0]
    assert table.iloc[3].tolist() == ["the papers' claims", 4, 1, 1, 1, 1, 0]  # the extension apart
    assert table.iloc[4].tolist() == ["extensions", 1, 1, 0, 0, 0, 0]


def test_misses_counted_by_cause_papers_and_extensions_apart_and_chapters_by_title():
    from urnlib.reports.claims_tables import cause_counts, verdict_counts

    claims = [claim("dyck", "s", "a", 1, 2, "r", False, cause="paper"),
              claim("dyck", "s", "b", 1, 2, "r", None, cause="noise"),
              claim("zoo", "s", "c", 1, 2, "r", None, cause="noise", extension=True),
              claim("dyck", "s", "d", 1, 1, "r", True),
              Claim("x", "s", "old", "1", "2", "r", "not reproduced")]  # saved before causes existed
    table = cause_counts(claims)
    assert list(table["cause"]) == ["paper", "noise", "not recorded"]  # the order of CAUSES; none unused
    noise = table.iloc[1][["the papers' claims", "extensions", "chapters"]].tolist()
    assert noise == [1, 1, "dyck (1), zoo (1)"]
    titled = cause_counts(claims, titles=True)
    assert titled.iloc[1]["chapters"] == f"{chapters.get('dyck').title} (1), {chapters.get('zoo').title} (1)"
    assert verdict_counts(claims, titles=True)["chapter"].tolist()[:3] == [
        chapters.get("dyck").title, chapters.get("zoo").title, "x"]  # a chapter not in the registry: its name


def test_each_of_the_five_verdicts_from_hand_made_seeds():
    from urnlib.claims import claim
    from urnlib.rules import compare, threshold
    from urnlib.seeds import Stat

    urn, lstm = Stat.of([0.95, 0.96, 0.97]), Stat.of([0.80, 0.81, 0.82])
    quote = "The URN outperforms the LSTM."

    def made(decision, **kw):
        return claim("c", "paper 001", "URN above LSTM", "URN > LSTM", "x", "t-test", decision, seeds=3,
                     quote=quote, epoch="final (epoch 100)", **kw)

    assert made(compare(urn, lstm)).verdict == "reproduced"
    no = made(compare(lstm, urn), cause="open")
    assert no.verdict == "not reproduced" and no.direction.startswith("A below B")
    partly = claim("c", "s", "both sizes", "", "", "r", False, partly=True, seeds=3, quote=quote, epoch="-")
    assert partly.verdict == "partly reproduced" and partly.cause == "open"
    noisy = made(compare(Stat.of([0.81, 0.91, 1.01]), Stat.of([0.71, 0.81, 0.91])))
    assert noisy.verdict == "inconclusive" and noisy.cause == "noise" and noisy.seeds_needed == 9
    assert noisy.direction == "A above B by 0.1" and noisy.quote == quote and noisy.epoch
    untrained = made(None, cause="untrained")
    assert untrained.verdict == "inconclusive" and untrained.seeds_needed is None
    absent = made(threshold(Stat.of([]), 0.5), cause="data")
    assert absent.verdict == "not run here" and absent.cause == "data"


def test_a_claim_missed_under_one_setting_and_held_under_another_is_missed_for_the_setting():
    from urnlib.claims import across_settings, setting_summary

    def made(setting, statement, holds, cause=None, partly=False):
        return claim("c", "s", f"[{setting}] {statement}", "p", "o", "r", holds, partly, seeds=3, cause=cause)

    printed = [made("lr 0.01", "flat", False, "open"), made("lr 0.01", "low error", True),
               made("lr 0.01", "beats heuristics", None, "noise"), made("lr 0.01", "declines", False, "data"),
               made("lr 0.01", "at chance", None, "untrained"), made("lr 0.01", "both", False, "open"),
               made("lr 0.01", "partly", False, "open", partly=True)]
    code = [made("lr 0.001", "flat", True), made("lr 0.001", "low error", True),
            made("lr 0.001", "beats heuristics", True), made("lr 0.001", "declines", True),
            made("lr 0.001", "at chance", True), made("lr 0.001", "both", False, "open"),
            made("lr 0.001", "partly", True)]
    out = across_settings({"lr 0.01": printed, "lr 0.001": code})
    assert [c.statement for c in out] == [c.statement for c in printed + code]  # order kept
    # missed for an open cause under 0.01, held under 0.001: the setting (partly reproduced too); a cause
    # found from evidence (noise, data, untrained) stays; missed under both: open stays open
    assert [c.cause for c in out[:7]] == ["setting", None, "noise", "data", "untrained", "open", "setting"]
    assert [c.cause for c in out[7:]] == [None] * 5 + ["open", None]
    assert [c.verdict for c in out] == [c.verdict for c in printed + code]  # verdicts untouched
    assert out[0].evidence == "reproduced under lr 0.001 (the same claim on that setting's runs)"
    assert all(not c.evidence for c in out[1:5]) and out[6].evidence == out[0].evidence
    # missed under both, open: what the other setting found is its evidence, the cause stays open
    assert out[5].evidence == "not reproduced under lr 0.001: o"
    assert out[12].evidence == "not reproduced under lr 0.01: o"
    summary = setting_summary(out, {"lr 0.01": "printed", "lr 0.001": "code"})
    assert ("- **lr 0.01** (printed): 7 claims, 1 reproduced, 1 partly reproduced, 3 not reproduced, "
            "2 inconclusive." in summary)
    assert "- **lr 0.001** (code): 7 claims, 6 reproduced, 1 not reproduced." in summary
    assert "largest share of claims is reproduced under **lr 0.001** (6 of 7); 2 claims missed" in summary
    tie = across_settings({"a": [made("a", "flat", True)], "b": [made("b", "flat", True)]})
    tie = setting_summary(tie, {"a": "one", "b": "two", "c": "none trained"})
    assert "reproduce the same share" in tie and "0 claims missed" in tie
    assert "**c** (none trained): no claims" in tie
