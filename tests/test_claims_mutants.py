"""urnlib.claims at the edges mutants of the module probe (benchmarks/mutation.py, issue 48): every field a
claim gets from its arguments (compared whole, as a Claim), the verdict and cause policy for each kind of
``holds``, the training guard, the numbers' format at its switch points, both readings, the settings'
summary in the singular, anchors of empty names, and what save_claims refuses. Fast: the mutation run puts
this file first."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from urnlib import claims as C
from urnlib.claims import (Claim, across_settings, anchor, both_readings, claim, format_value, load_claims,
                           save_claims, setting_summary)
from urnlib.rules import THRESHOLD_RULE, Decision, threshold
from urnlib.seeds import Stat


@pytest.mark.parametrize("value, digits, shown", [
    (1e-4, 4, "0.0001"),  # magnitude -4: still decimals
    (9.99e-5, 4, "9.99e-05"),  # magnitude -5: an exponent
    (0.00012345, 4, "0.0001234"),
    (-0.000123, 4, "-0.000123"),
    (1e-5, 4, "1e-05"),  # the mantissa's zeros and point go
    (1.234e-5, 1, "1e-05"),  # one digit: no point to strip
    (2.5e-5, 3, "2.5e-05"),
    (999999999999999.0, 4, "999,999,999,999,999"),  # integral below 1e15: every digit
    (1e15, 4, "1e+15"),  # from 1e15 on: an exponent
    (-1e15, 4, "-1e+15"),
    (1.5e15, 4, "1.5e+15"),
    (-math.inf, 4, "-inf"),
    (123456.7, 4, "123,457"),
    (12.5, 2, "12"),
    (7.25, 2, "7.2"),
    (0.5, 1, "0.5"),
    (-0.4, 0, "0"),  # "-0" is shown as 0
    (Fraction(1, 3), 4, "0.3333"),  # a Real that is not a float
    (1 + 2j, 4, "(1+2j)"),  # not a real number: as Python writes it
    (None, 4, "None"),
])
def test_format_value_at_its_switch_points(value, digits, shown):
    assert format_value(value, digits) == shown


def test_format_value_digits_default_to_four():
    assert format_value(math.pi) == "3.142" and format_value(np.bool_(True)) == "yes"


def _claim(holds, partly=False, **kw):
    return claim("ch", "paper 000 sec. 4, Fig. 2", "s", 0.25, 1234.0, "r", holds, partly, **kw)


def _full(verdict, **fields):
    base = dict(chapter="ch", source="paper 000 sec. 4, Fig. 2", statement="s", paper="0.25", ours="1,234",
                rule="r", verdict=verdict, artefact="Fig. 2", kind="check")
    return Claim(**{**base, **fields})


def test_a_reproduced_claim_keeps_no_cause_settle_evidence_or_seeds_needed():
    made = _claim(True, seeds=3.0, cause="data", quote="q", epoch="e", seeds_needed=4, extension=True,
                  settle="run more", evidence="ran", headline=True)
    assert made == _full("reproduced", seeds=3, quote="q", epoch="e", direction="as the paper states",
                         extension=True, headline=True)
    assert type(made.seeds) is int and _claim(True, seeds=np.int64(2)).seeds == 2


def test_a_miss_keeps_its_cause_settle_and_evidence():
    made = _claim(False, seeds=2, cause="setting", settle="run lr 0.001", evidence="it held there")
    assert made == _full("not reproduced", seeds=2, cause="setting", direction="not as the paper states",
                         settle="run lr 0.001", evidence="it held there")
    partly = _claim(False, True, settle="x")
    assert partly == _full("partly reproduced", cause="open", direction="not as the paper states", settle="x")
    assert _claim(0).verdict == "not reproduced" and _claim(1).verdict == "reproduced"  # truthiness


def test_an_undecided_claim_is_inconclusive_or_not_run_here_by_its_cause():
    assert _claim(None, seeds_needed=6) == _full("inconclusive", cause="noise",
                                                 direction="the seeds disagree", seeds_needed=6)
    for cause in ("data", "scale"):
        assert _claim(None, cause=cause, seeds_needed=6, settle="s") == _full(
            "not run here", cause=cause, direction="not measured here", settle="s")
    assert _claim(None, cause="paper").verdict == "inconclusive"
    with pytest.raises(ValueError, match="'luck' is not one of"):
        _claim(None, cause="luck")


def test_a_decision_gives_its_direction_seeds_kind_and_tie_unless_given():
    d = Decision(None, "A above B by 0.1", 0.1, 7, "beats")
    assert _claim(d) == _full("inconclusive", cause="noise", direction="A above B by 0.1", seeds_needed=7,
                              kind="beats")
    given = _claim(d, direction="mine", seeds_needed=0, kind="within")
    assert (given.direction, given.seeds_needed, given.kind) == ("mine", 0, "within")
    tie = _claim(Decision(None, "A equal to B on every seed", 0.0, None, "beats", "tie"))
    assert (tie.verdict, tie.cause) == ("inconclusive", "tie")
    assert _claim(Decision(None, "x", 0.0, None, "beats", "tie"), cause="paper").cause == "paper"
    kept = _claim(Decision(True, "x", 1.0, None, "beats", "tie"))  # a decided claim takes no undecided cause
    assert (kept.verdict, kept.cause, kept.direction) == ("reproduced", None, "x")


def test_the_kind_and_artefact_follow_the_decision_the_rule_and_the_source():
    assert _claim(threshold(Stat.of([1.0]), 0.5)).kind == "vs-number"
    assert claim("c", "paper 000", "s", 1, 1, f"accuracy; {THRESHOLD_RULE}", True).kind == "vs-number"
    assert claim("c", "paper 000", "s", 1, 1, "a count", True).kind == "check"
    assert claim("c", "paper 001 Table 2", "s", 1, 1, "r", True).artefact == "Table 2"
    assert claim("c", "paper 001 Table 2", "s", 1, 1, "r", True, artefact="Fig. 9").artefact == "Fig. 9"


def test_an_idle_model_makes_the_claim_no_evidence():
    made = _claim(False, True, idle=["LSTM at chance", "GRU stopped"], cause="paper", settle="retrain")
    assert made == _full("inconclusive", cause="untrained", direction="the seeds disagree", settle="retrain",
                         ours="did not train (LSTM at chance; GRU stopped): 1,234",
                         evidence="the training guard: LSTM at chance; GRU stopped")
    assert _claim(False, True, idle=["m"], evidence="its loss curve").evidence == "its loss curve"
    text = claim("c", "s", "st", 1, "0.51 accuracy", "r", True, idle=["m"])
    assert (text.direction, text.ours, text.verdict) == ("0.51 accuracy", "did not train (m): 0.51 accuracy",
                                                         "inconclusive")
    decided = claim("c", "s", "st", 1, "o", "r", Decision(True, "A above B", 1.0, None, "beats"), idle=["m"])
    assert (decided.direction, decided.cause) == ("A above B", "untrained")


def test_both_readings_add_the_other_reading_only_where_its_verdict_differs():
    final = [claim("c", "s", "a", 1, 0.5, "r", True), claim("c", "s", "b", 1, 0.25, "r", None)]
    other = [claim("c", "s", "a", 1, 0.75, "r", True), claim("c", "s", "b", 1, 0.125, "r", False)]
    out = both_readings(final, other)
    assert out[0] is final[0]
    assert out[1].ours == "0.25 || at the lowest test loss (selected on test data): 0.125, not reproduced"
    assert both_readings(final, other, reading="best")[1].ours == "0.25 || best: 0.125, not reproduced"
    with pytest.raises(ValueError):
        both_readings(final, other[:1])


def test_the_settings_summary_in_the_singular_and_statements_without_a_setting():
    def made(setting, statement, holds, cause=None):
        return claim("c", "s", f"[{setting}] {statement}", "p", "o", "r", holds, cause=cause)

    out = across_settings({"a": [made("a", "x", False, "open"), made("a", "y", True)],
                           "b": [made("b", "x", True), made("b", "y", True)]})
    assert [c.cause for c in out] == ["setting", None, None, None]
    summary = setting_summary(out, {"a": "one", "b": "two"})
    assert summary.endswith("under **b** (2 of 2); 1 claim missed under one setting is put down to it "
                            "(cause *setting* in the claims table).")
    assert "- **a** (one): 2 claims, 1 reproduced, 1 not reproduced." in summary
    assert setting_summary(out, {"a": "one"}) == "- **a** (one): 2 claims, 1 reproduced, 1 not reproduced."
    plain = across_settings({"a": [claim("c", "s", "x", 1, 1, "r", False)],
                             "b": [claim("c", "s", "x", 1, 1, "r", True)]})
    assert plain[0].cause == "setting"  # a statement without "[setting] " is its own statement
    ev = claim("c", "s", "[a] x", 1, 1, "r", False, evidence="a variant's runs")
    three = across_settings({"a": [ev], "b": [made("b", "x", True)], "c": [made("c", "x", True)]})
    assert three[0].evidence == ("a variant's runs; reproduced under b, c (the same claim on that setting's "
                                 "runs)")


def test_escape_backslashes_every_markdown_character():
    assert C._escape("b_{t-1} <= 1 | x*y \\ `c` #~^[a]") == \
        "b\\_\\{t-1\\} \\<= 1 \\| x\\*y \\\\ \\`c\\` \\#\\~\\^\\[a\\]"
    assert C._escape("plain text, 0.5") == "plain text, 0.5"


def test_anchors_of_empty_or_padded_names():
    assert anchor("", "s") == "claims-chapter-s" and anchor("###", "") == "claims-chapter-unsourced"
    assert anchor(" dyck ", " Fig. 3 ") == "claims-dyck-fig-3"


def test_save_claims_names_every_missing_field_and_an_unknown_verdict(tmp_path):
    bare = Claim("ch", "s", "bare", "p", "o", "r", "reproduced")
    with pytest.raises(ValueError, match=r"^ch: claims without .*'bare' \(quote, epoch, direction\)"):
        save_claims([bare], tmp_path, "ch")
    odd = Claim("ch", "s", "odd", "p", "o", "r", "maybe", quote="q", epoch="e", direction="d")
    with pytest.raises(ValueError, match=r"'odd' \(verdict 'maybe'\)$"):
        save_claims([odd], tmp_path, "ch")
    no_epoch = Claim("ch", "s", "n", "p", "o", "r", "reproduced", quote="q", direction="d")
    with pytest.raises(ValueError, match=r"'n' \(epoch\)$"):
        save_claims([no_epoch], tmp_path, "ch")


def test_save_claims_writes_each_chapter_to_its_file_and_load_reads_them_in_name_order(tmp_path):
    def made(chapter):
        return claim(chapter, "s", f"{chapter} claim", 1, 2, "r", True, quote="q", epoch="e")

    where = tmp_path / "deep" / "er"
    path = save_claims([made("b")], where, "b")
    assert path == where / "b.json" and json.loads(path.read_text())[0]["statement"] == "b claim"
    assert path.read_text().startswith('[\n {\n  "chapter": "b"')  # one space an indent level
    save_claims([made("a")], where, "a")
    assert [c.chapter for c in load_claims(where)] == ["a", "b"]


def test_numbers_that_round_to_integers_and_a_frozen_claim():
    import dataclasses

    assert format_value(1.0) == "1" and format_value(2.00001) == "2" and format_value(-7.00004) == "-7"
    with pytest.raises(dataclasses.FrozenInstanceError):
        _claim(True).verdict = "inconclusive"


def test_a_setting_is_only_the_first_bracket_and_shares_rank_the_settings():
    def made(statement, holds):
        return claim("c", "s", statement, "p", "o", "r", holds, cause=None if holds else "open")

    out = across_settings({"a": [made("[a] x[1] y", False), made("[unclosed", False)],
                           "b": [made("[b] x[2] y", True), made("[unclosed", True)]})
    assert [c.cause for c in out] == ["open", "setting", None, None]  # x[1] y is not x[2] y
    ranked = [made("[a] p", True), made("[a] q", True), made("[a] r", False), made("[a] s", False),
              made("[b] p", True)]
    summary = setting_summary(ranked, {"a": "four", "b": "one"})
    assert "reproduced under **b** (1 of 1)" in summary  # the larger share, not the larger count


def test_authors_cause_from_the_claim_decided_again_on_the_authors_runs():
    assert C.authors_cause([True, True]) == "setting"  # holds at every size the authors' way: our setting
    assert C.authors_cause([True, False]) == "authors"  # fails at one: the miss stands there too
    assert C.authors_cause([None, False]) == "authors"
    assert C.authors_cause([True, None]) is None  # undecided at one size, failing at none: no cause
    assert C.authors_cause([]) is None
    assert C.authors_cause(h for h in (True,)) == "setting"  # any iterable, read once


def test_a_miss_stands_in_the_authors_setting_only_when_it_is_decided():
    missed = claim("c", "s", "x", 1, 0, "r", False, cause="authors")
    assert (missed.verdict, missed.cause) == ("not reproduced", "authors")
    partly = claim("c", "s", "x", 1, 0, "r", False, partly=True, cause="authors")
    assert (partly.verdict, partly.cause) == ("partly reproduced", "authors")
    undecided = claim("c", "s", "x", 1, 0, "r", None, cause="authors")
    assert (undecided.verdict, undecided.cause) == ("inconclusive", "noise")  # the seeds, not the authors
    assert claim("c", "s", "x", 1, 1, "r", True, cause="authors").cause is None


def test_an_open_miss_takes_the_authors_cause_from_another_setting_unless_one_reproduces_it():
    def made(setting, statement, holds, cause=None, evidence=""):
        return claim("c", "s", f"[{setting}] {statement}", "p", "o", "r", holds, cause=cause,
                     evidence=evidence)

    out = across_settings({"ours": [made("ours", "x", False, "open"), made("ours", "y", False, "open"),
                                    made("ours", "z", False, "data")],
                           "theirs": [made("theirs", "x", False, "authors", "their LSTM 1.9 vs URN 1.5"),
                                      made("theirs", "y", False, "authors", "e"),
                                      made("theirs", "z", False, "authors", "e")],
                           "other": [made("other", "y", True)]})
    assert [c.cause for c in out[:3]] == ["authors", "setting", "data"]  # reproduced anywhere wins; data kept
    assert out[0].evidence == "missed under theirs too, their LSTM 1.9 vs URN 1.5"
    assert out[1].evidence == "reproduced under other (the same claim on that setting's runs)"
    assert [c.cause for c in out[3:]] == ["authors", "authors", "authors", None]


def test_an_open_miss_is_the_setting_where_another_setting_reaches_the_paper_with_more_data():
    """Open under one rate, reached under the other by that rate's own size trend: the rate is why it is
    missed. A cause from evidence stays; reproduced elsewhere still wins; a trend that does not reach (open
    there too) gives nothing."""
    def made(setting, statement, holds, cause=None, evidence=""):
        return claim("c", "s", f"[{setting}] {statement}", "p", "o", "r", holds, cause=cause,
                     evidence=evidence)

    out = across_settings({"fast": [made("fast", "x", False, "open", "flat trend"),
                                    made("fast", "y", False, "open"), made("fast", "z", False, "noise"),
                                    made("fast", "w", False, "open"), made("fast", "v", False, "open")],
                           "slow": [made("slow", "x", False, "data", "0.08 -> 0.003 at 4x"),
                                    made("slow", "y", False, "scale", "s"), made("slow", "z", False, "data"),
                                    made("slow", "w", False, "open"), made("slow", "v", False, "data", "d")],
                           "other": [made("other", "v", True)]})
    assert [c.cause for c in out[:5]] == ["setting", "setting", "noise", "open", "setting"]
    assert out[0].evidence == ("flat trend; reached under slow within the paper's amount of training (that "
                               "setting's own trend): 0.08 -> 0.003 at 4x")
    assert out[4].evidence == "reproduced under other (the same claim on that setting's runs)"
    assert [c.cause for c in out[5:10]] == ["data", "scale", "data", "open", "data"]  # its own trend stays
