"""The kinds of statement (urnlib.statements), each decided by one rule, and the roll-up of claims into one
verdict per artefact (urnlib.artefacts): hand-made seeds with the verdict worked out by hand, and properties
that hold for any seeds (order of seeds, direction, monotone roll-up)."""

import ast
import inspect
import math
from pathlib import Path
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from urnlib import rules
from urnlib.artefacts import RANK, artefact_of, artefacts, rollup
from urnlib.claims import claim
from urnlib.seeds import Stat
from urnlib.statements import KINDS, check, in_range, kind_of, no_drop, trend


def s(*values):
    return Stat.of(values)


# ---------------------------------------------------------------------------------------- one rule per kind


def test_every_kind_is_decided_by_one_function_that_stamps_it():
    deciders = [k.decide for k in KINDS.values()]
    assert len(set(deciders)) == len(deciders), "two kinds share a function"
    for name, kind in KINDS.items():
        assert kind.decide.kind == name and kind.rule and kind.title
    # every function in urnlib that stamps a kind is the registry's function for that kind
    import urnlib.statements as statements
    stamped = {obj for module in (rules, statements) for _, obj in inspect.getmembers(module, callable)
               if getattr(obj, "kind", None) and hasattr(obj, "__wrapped__")}
    assert stamped == set(deciders)


def _urnlib_sources():
    root = Path(rules.__file__).parent
    return {path.relative_to(root.parent).as_posix(): ast.parse(path.read_text())
            for path in root.rglob("*.py")}


def test_no_two_chapters_decide_one_kind_by_different_functions():
    """Only the registry's functions stamp a kind, and no chapter makes a claim but through its declarations
    (urnlib.declare.evaluate checks each decision's kind against the declared one)."""
    stamping, direct = [], []
    for path, tree in _urnlib_sources().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stamping += [(path, node.name) for d in node.decorator_list
                             if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "decides"]
            if isinstance(node, ast.ImportFrom) and node.module == "urnlib.claims" and \
                    path.startswith("urnlib/chapters/"):
                direct += [path for alias in node.names if alias.name == "claim"]
    assert sorted(name for _, name in stamping) == sorted(k.decide.__name__ for k in KINDS.values())
    assert {path for path, _ in stamping} == {"urnlib/rules.py", "urnlib/statements.py"}
    assert not direct, f"chapters that make claims without declaring them: {direct}"


def test_a_claim_takes_its_kind_from_the_rule_that_decided_it():
    made = claim("c", "paper 000 Fig. 3", "A beats B", "A", "a", "r", rules.compare(s(3, 4, 5), s(0, 1, 2)),
                 quote="q", epoch="final")
    assert made.kind == "beats" and made.verdict == "reproduced" and made.artefact == "Fig. 3"
    counted = claim("c", "paper 001 Table 1", "counts", 1, 1, "equal", True, quote="q", epoch="-")
    assert counted.kind == "check" and counted.artefact == "Table 1"
    assert kind_of(rules.within(s(1, 2), s(1, 2), 0.1)) == "within"


# --------------------------------------------------------------------------------------------- does not fall


def test_no_drop_holds_only_when_the_drop_is_shown_smaller_than_the_margin():
    steady = no_drop(s(0.90, 0.91, 0.92, 0.90, 0.91), s(0.90, 0.91, 0.90, 0.91, 0.92), margin=0.05)
    assert steady.holds is True and steady.kind == "no-drop"
    falls = no_drop(s(0.90, 0.91, 0.92), s(0.60, 0.61, 0.62), margin=0.05)
    assert falls.holds is False and "falls by 0.3" in falls.direction
    # a drop that is merely not significant (noisy seeds) decides nothing: the agreement chapter's old reading
    noisy = no_drop(s(0.9, 0.5, 0.8), s(0.7, 0.9, 0.4), margin=0.02)
    assert noisy.holds is None and (noisy.seeds_needed or 4) > 3


def test_no_drop_margin_defaults_to_one_pooled_sd_and_works_for_losses():
    d = no_drop(s(1.0, 1.2), s(1.0, 1.2), higher=False)
    assert "margin 0.141" in d.direction
    assert no_drop(s(0.30, 0.31, 0.32), s(0.50, 0.51, 0.52), higher=False, margin=0.01).holds is False


# -------------------------------------------------------------------------------------------- printed range


def test_a_range_is_decided_seed_by_seed_not_by_a_t_test_on_the_mean():
    """paper 003's "answers 1 or 2 analogy questions" against three seeds that answer 27-58: every seed
    outside the range, so not reproduced (a t-test on the mean of 3 seeds said inconclusive)."""
    d = in_range([27, 41, 58], 1, 2, name="questions answered")
    assert d.holds is False and d.kind == "in-range" and "(27, 41, 58)" in d.direction
    assert in_range([1, 2, 2], 1, 2).holds is True
    assert in_range([1, 5, 2, 9], 1, 2).holds is None  # mixed: a sign test decides nothing at 4 seeds


# ----------------------------------------------------------------------------------------- trend over sizes


def test_a_trend_is_tested_at_every_step_so_a_middle_reversal_is_seen():
    ends_only = [(8, s(0.50, 0.51, 0.52)), (16, s(0.20, 0.21, 0.22)), (32, s(0.40, 0.41, 0.42))]
    d = trend(ends_only, rising=False, what="confusion")  # falls 8 -> 16, rises 16 -> 32
    assert d.holds is False and d.kind == "trend"
    assert rules.compare(ends_only[2][1], ends_only[0][1], higher=False).holds is True  # the ends alone pass
    falls = [(8, s(0.5, 0.51)), (16, s(0.3, 0.31)), (32, s(0.1, 0.11))]
    assert trend(falls, rising=False).holds is True
    assert trend([(8, s(1, 2))]).holds is None


# ----------------------------------------------------------------------------------------- a tie at a ceiling


def test_a_tie_where_every_seed_scores_the_same_is_named_not_noise():
    d = rules.compare(s(1.0, 1.0, 1.0), s(1.0, 1.0, 1.0))
    assert d.holds is None and d.cause == "tie"
    made = claim("zoo", "paper 000 Fig. 3", "URN beats LSTM", "URN", "1 vs 1", "r", d, quote="q", epoch="e")
    assert made.verdict == "inconclusive" and made.cause == "tie"


def test_check_is_exact():
    assert check(True).holds is True and check(False).holds is False and check(True).kind == "check"


# ------------------------------------------------------------------------------------ properties, any seeds

values = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=2, max_size=6)


def _fixed(xs):  # the t-tests are undefined on identical sides; keep spread
    return [x + 1e-3 * i for i, x in enumerate(xs)]


@settings(max_examples=60, deadline=None)
@given(values, values, st.randoms(use_true_random=False))
def test_every_two_sided_rule_ignores_the_order_of_seeds_and_flips_with_the_direction(a, b, rnd):
    a, b = _fixed(a), _fixed(b)
    shuffled_a, shuffled_b = rnd.sample(a, len(a)), rnd.sample(b, len(b))
    for decide in (lambda x, y, h: rules.compare(Stat.of(x), Stat.of(y), higher=h),
                   lambda x, y, h: rules.threshold(Stat.of(x), sum(y) / len(y), above=h),
                   lambda x, y, h: rules.every_seed([v > 0.5 for v in x] if h else [v <= 0.5 for v in x])):
        up, again = decide(a, b, True), decide(shuffled_a, shuffled_b, True)
        assert up.holds == again.holds
        down = decide(a, b, False)
        if up.holds is not None and not math.isclose(sum(a) / len(a), sum(b) / len(b)):
            assert down.holds == (not up.holds)


@settings(max_examples=60, deadline=None)
@given(values, values, st.floats(0.001, 0.5))
def test_no_drop_ignores_the_order_of_seeds_and_a_clear_rise_never_fails(a, b, margin):
    a, b = _fixed(a), _fixed(b)
    d = no_drop(Stat.of(a), Stat.of(b), margin=margin)
    assert d.holds == no_drop(Stat.of(a[::-1]), Stat.of(b[::-1]), margin=margin).holds
    risen = no_drop(Stat.of(a), Stat.of([v + 10 for v in b]), margin=margin)
    assert risen.holds is True


VERDICTS = list(RANK)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(VERDICTS), min_size=1, max_size=6), st.data())
def test_the_roll_up_is_monotone(verdicts, data):
    """A claim going from not reproduced to reproduced never worsens its artefact."""
    made = [_verdict(v) for v in verdicts]
    before = rollup(made)
    misses = [i for i, v in enumerate(verdicts) if v == "not reproduced"]
    if not misses:
        return
    i = data.draw(st.sampled_from(misses))
    after = rollup([_verdict("reproduced") if j == i else c for j, c in enumerate(made)])
    assert RANK[after] >= RANK[before]


class _verdict:
    def __init__(self, verdict, headline=False):
        self.verdict, self.headline = verdict, headline


def test_the_roll_up_rule_by_hand():
    v = lambda *xs: rollup([_verdict(x) for x in xs])  # noqa: E731
    assert v("reproduced", "reproduced") == "reproduced"
    assert v("reproduced", "not run here") == "reproduced"  # not run: counts only where nothing else was
    assert v("not run here") == "not run here"
    assert v("inconclusive", "not run here") == "inconclusive"
    assert v("not reproduced", "inconclusive") == "not reproduced"
    assert v("reproduced", "not reproduced") == "partly reproduced"
    assert v("partly reproduced") == "partly reproduced"
    assert rollup([_verdict("not reproduced", headline=True), _verdict("reproduced")]) == "not reproduced"


# ------------------------------------------------------------------------------------------------ artefacts


@pytest.mark.parametrize("source, expected", [
    ("paper 000 Fig. 3 (our variant)", ("000", "Fig. 3")),
    ("paper 000 sec. 4, Fig. 2", ("000", "Fig. 2")),
    ("paper 000 sec. 4.1, Table 1", ("000", "Table 1")),
    ("paper 000 sec. 4: 3-TURN error well under 1%", ("000", "sec. 4")),
    ("paper 001 Fig. 2c", ("001", "Fig. 2")),
    ("paper 001 Figs. 2a, 3a", ("001", "Fig. 2")),
    ("paper 002 Table 4 (right), sec. 6", ("002", "Table 4")),
    ("paper 002 appendix E, Fig. 2", ("002", "Fig. 2")),
    ("paper 002 sec. 4, appendix A", ("002", "appendix A")),
    ("lecture 004, Elman (1990) Fig. 7", ("004", "Elman (1990)")),
    ("lecture 004 (Weiss et al. 2018)", ("004", "Weiss et al. (2018)")),
    ("paper 000's three models", ("000", "the paper as a whole")),
])
def test_the_artefact_of_a_source(source, expected):
    assert artefact_of(source) == expected


def test_artefacts_gather_every_chapter_s_claims_about_one_figure():
    def made(chapter, source, holds, extension=False):
        return claim(chapter, source, "x", "p", "o", "r", holds, quote="q", epoch="e", extension=extension,
                     cause=None if holds is not False else "paper")
    claims = [made("dyck", "paper 000 Fig. 3", True), made("zoo", "paper 000 Fig. 3", False),
              made("dyck", "paper 000 Fig. 3 (our variant)", True, extension=True)]
    got = artefacts(claims)
    assert [(a.name, a.chapters, a.verdict, a.extension) for a in got] == [
        ("Fig. 3", ["dyck", "zoo"], "partly reproduced", False), ("Fig. 3", ["dyck"], "reproduced", True)]
    random.shuffle(claims)
    assert sorted(a.verdict for a in artefacts(claims)) == ["partly reproduced", "reproduced"]
