"""urnlib.claims: numbers as the claims tables print them, and the table's HTML."""

import math
import re

import numpy as np
import pytest

from urnlib.claims import (VERDICTS, Claim, claim, claims_frame, claims_table, format_value, load_claims,
                           save_claims)


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
                    "error < 1%", False)]
    html = claims_table(claims).to_html()
    assert "&lt;unk&gt; token &amp; b_{t-1}" in html and "&lt; 1%" in html and "<unk>" not in html
    assert 'class="urnlib-claims"' in html and "table-layout: fixed" in html
    widths = [float(w) for w in re.findall(r"th\.col_heading\.col\d+ \{\s*width: ([\d.]+)%", html)]
    assert len(widths) == 6 and abs(sum(widths) - 100) < 0.5
    with_chapter = claims_table(claims, with_chapter=True).to_html()
    assert ">chapter</th>" in with_chapter and "th.col_heading.col6" in with_chapter


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
    from urnlib.claims import claim, misses_by_cause, seed_summary

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
    from urnlib.claims import VERDICTS, claim, verdict_counts

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
    summary = setting_summary(out, {"lr 0.01": "printed", "lr 0.001": "code"})
    assert ("- **lr 0.01** (printed): 7 claims, 1 reproduced, 1 partly reproduced, 3 not reproduced, "
            "2 inconclusive." in summary)
    assert "- **lr 0.001** (code): 7 claims, 6 reproduced, 1 not reproduced." in summary
    assert "largest share of claims is reproduced under **lr 0.001** (6 of 7); 2 claims missed" in summary
    tie = across_settings({"a": [made("a", "flat", True)], "b": [made("b", "flat", True)]})
    tie = setting_summary(tie, {"a": "one", "b": "two", "c": "none trained"})
    assert "reproduce the same share" in tie and "0 claims missed" in tie
    assert "**c** (none trained): no claims" in tie
