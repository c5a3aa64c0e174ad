"""urnlib.artefacts at the edges mutants of the module probe (benchmarks/mutation.py, issue 48): the roll-up
of each mix of verdicts, the deciding claim, the one-sentence reason, the order of the scorecard's rows and
sources without a paper number. Fast: the mutation run puts this file first."""

from __future__ import annotations

import pytest

from urnlib.artefacts import Artefact, artefact_key, artefact_of, artefacts, reason, rollup
from urnlib.claims import CAUSES, claim


class V:
    def __init__(self, verdict, headline=False, statement="s", direction="d", cause=None, chapter="c"):
        self.verdict, self.headline, self.statement = verdict, headline, statement
        self.direction, self.cause, self.chapter = direction, cause, chapter


@pytest.mark.parametrize("verdicts, expected", [
    ((), "not run here"),
    (("not run here", "not run here"), "not run here"),
    (("inconclusive",), "inconclusive"),
    (("inconclusive", "inconclusive", "not run here"), "inconclusive"),
    (("not reproduced",), "not reproduced"),
    (("not reproduced", "not run here"), "not reproduced"),
    (("inconclusive", "not reproduced"), "not reproduced"),
    (("reproduced", "inconclusive"), "partly reproduced"),
    (("partly reproduced", "not reproduced"), "partly reproduced"),
    (("partly reproduced", "inconclusive"), "partly reproduced"),
    (("reproduced",), "reproduced"),
])
def test_the_roll_up_of_each_mix(verdicts, expected):
    assert rollup([V(v) for v in verdicts]) == expected


def test_a_headline_miss_decides_only_when_it_is_not_reproduced():
    assert rollup([V("not reproduced", True), V("reproduced"), V("reproduced")]) == "not reproduced"
    assert rollup([V("partly reproduced", True), V("reproduced")]) == "partly reproduced"
    assert rollup([V("inconclusive", True), V("reproduced")]) == "partly reproduced"
    assert rollup([V("reproduced", True), V("not reproduced")]) == "partly reproduced"


def test_the_deciding_claim_is_the_first_headline_miss_else_the_first_worst():
    a, b, c = V("partly reproduced", statement="a"), V("not reproduced", statement="b"), \
        V("not reproduced", True, statement="c")
    assert Artefact("000", "Fig. 1", (a, b, c)).deciding is c
    assert Artefact("000", "Fig. 1", (a, b, V("not reproduced", statement="d"))).deciding is b
    skipped = V("not run here", statement="x")
    assert Artefact("000", "Fig. 1", (skipped, a)).deciding is a  # a claim not run decides nothing
    assert Artefact("000", "Fig. 1", (skipped, V("not run here"))).deciding is skipped
    assert Artefact("000", "Fig. 1", (V("reproduced", statement="r"), a)).verdict == "partly reproduced"


def test_the_reason_in_one_sentence():
    one = Artefact("000", "Fig. 1", (V("reproduced", statement="[lr] the URN wins", direction="A above B"),))
    assert one.reason() == "All 1 claim hold; e.g. the URN wins: A above B."
    two = Artefact("000", "Fig. 1", (V("reproduced", statement="x"), V("reproduced")))
    assert two.reason().startswith("All 2 claims hold; e.g. x: d")
    miss = Artefact("000", "Fig. 1", (V("not reproduced", statement="[lr] it falls", direction="rises",
                                        cause="noise"), V("reproduced")))
    assert miss.reason(CAUSES) == "It falls: rises (the difference is within the spread of the seeds)."
    assert reason(miss, {"noise": "seeds: few"}) == "It falls: rises (seeds)."
    assert miss.reason() == "It falls: rises."  # no causes given: none said
    open_ = Artefact("000", "Fig. 1", (V("inconclusive", statement="x", cause=None),))
    assert open_.reason({"": "nothing"}) == "X: d (nothing)."


def test_chapters_in_the_order_of_their_first_claim():
    made = Artefact("000", "Fig. 1", (V("reproduced", chapter="z"), V("reproduced", chapter="a"),
                                      V("reproduced", chapter="z")))
    assert made.chapters == ["z", "a"]


def _c(source, extension=False, artefact=""):
    return claim("ch", source, "x", "p", "o", "r", True, extension=extension, artefact=artefact)


def test_rows_papers_in_number_order_then_no_paper_then_the_extensions():
    claims = [_c("paper 002 Fig. 1"), _c("our own note"), _c("paper 000 Table 2"), _c("paper 002 sec. 3"),
              _c("paper 000 Fig. 9", extension=True), _c("paper 001 Fig. 4", extension=True),
              _c("paper 000 Table 2 (again)"), _c("paper 000 Fig. 5", artefact="Table 2")]
    got = [(a.extension, a.paper, a.name, len(a.claims)) for a in artefacts(claims)]
    assert got == [(False, "000", "Table 2", 3), (False, "002", "Fig. 1", 1), (False, "002", "sec. 3", 1),
                   (False, None, "the paper as a whole", 1), (True, "000", "Fig. 9", 1),
                   (True, "001", "Fig. 4", 1)]
    assert artefact_key(claims[-1]) == (False, "000", "Table 2")


@pytest.mark.parametrize("source, expected", [
    ("Elman (1990) Fig. 7", (None, "Fig. 7")),  # no paper number: its figure still
    ("lecture 004, Elman (1990) Fig. 7", ("004", "Elman (1990)")),  # the lecture: the work, not the figure
    ("lecture 004, Tables 3", ("004", "Table 3")),
    ("paper 003 Fig.4", ("003", "Fig. 4")),
    ("paper 003 sec.2.1", ("003", "sec. 2.1")),
    ("paper 003, Smith and Jones 2001", ("003", "Smith and Jones (2001)")),
    ("paper 0031 Fig. 1", (None, "Fig. 1")),  # a three-digit number only
])
def test_artefacts_of_more_sources(source, expected):
    assert artefact_of(source) == expected


def test_the_deciding_claim_follows_the_order_of_the_ranks():
    for worse, better in (("not reproduced", "inconclusive"), ("inconclusive", "partly reproduced"),
                          ("partly reproduced", "reproduced")):
        first, second = V(better, statement="first"), V(worse, statement="second")
        assert Artefact("000", "Fig. 1", (first, second)).deciding is second


def test_an_artefact_is_frozen_and_the_papers_unless_said():
    import dataclasses

    made = Artefact("000", "Fig. 1", ())
    assert made.extension is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "Fig. 2"


def test_claims_without_a_headline_field_are_not_headlines():
    from types import SimpleNamespace as NS

    assert rollup([NS(verdict="not reproduced"), NS(verdict="reproduced")]) == "partly reproduced"
    first = V("not reproduced", statement="first")
    assert Artefact("000", "Fig. 1", (first, NS(verdict="not reproduced"))).deciding is first


def test_the_reason_strips_only_the_first_bracket():
    made = Artefact("000", "Fig. 1", (V("not reproduced", statement="[lr] b[t] rises", direction="d"),))
    assert made.reason() == "B[t] rises: d."
    odd = Artefact("000", "Fig. 1", (V("reproduced", statement="[unclosed", direction="d"),))
    assert odd.reason() == "All 1 claim hold; e.g. [unclosed: d."
