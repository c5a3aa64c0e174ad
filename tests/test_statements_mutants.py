"""urnlib.statements against answers computed here (scipy's t quantiles for the equivalence test, the sign
rule without spread, every field of a Decision), at the edges mutants of the module probe
(benchmarks/mutation.py, issue 48). Fast: the mutation run puts this file first."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from urnlib import rules
from urnlib.rules import Decision
from urnlib.seeds import Stat
from urnlib.statements import KINDS, NO_DROP_RULE, TREND_RULE, check, in_range, kind_of, no_drop, trend


def s(*values):
    return Stat.of(values)


def _bounds(before, after, higher=True):
    """The drop, its one-sided upper 95% bound and its two-sided lower 95% bound (df n_a + n_b - 2)."""
    drop = (before.mean - after.mean) if higher else (after.mean - before.mean)
    se = math.sqrt(before.sd ** 2 / before.n + after.sd ** 2 / after.n)
    df = before.n + after.n - 2
    return drop, drop + stats.t.ppf(0.95, df) * se, drop - stats.t.ppf(0.975, df) * se


@pytest.mark.parametrize("before, after, higher", [((0.9, 0.8, 0.85), (0.7, 0.75, 0.8, 0.72), True),
                                                   ((1.0, 1.5), (1.2, 1.1, 1.4), False),
                                                   ((0.5, 0.6, 0.7), (0.6, 0.7, 0.8), True)])
def test_no_drop_decides_exactly_at_the_equivalence_tests_bounds(before, after, higher):
    b, a = s(*before), s(*after)
    drop, upper, lower = _bounds(b, a, higher)
    eps = 1e-9
    assert no_drop(b, a, margin=upper + eps, higher=higher).holds is True
    assert no_drop(b, a, margin=upper - eps, higher=higher).holds is not True
    assert no_drop(b, a, margin=lower - eps, higher=higher).holds is False
    assert no_drop(b, a, margin=lower + eps, higher=higher).holds is not False
    middle = (upper + lower) / 2
    d = no_drop(b, a, margin=middle, higher=higher)
    assert d.holds is None and d.size == pytest.approx(middle - drop)
    var = (b.sd ** 2 + a.sd ** 2) / 2
    assert d.seeds_needed == max(rules.seeds_to_decide(middle - drop, var), min(b.n, a.n) + 1)


def test_no_drop_of_a_per_seed_change_is_a_one_sample_test():
    change = s(-0.10, -0.05, -0.12, -0.02)  # after - before, seed by seed: a fall of 0.0725 on average
    drop, sd, n = 0.0725, change.sd, 4
    upper = drop + stats.t.ppf(0.95, n - 1) * sd / math.sqrt(n)
    lower = drop - stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    assert no_drop(change=change, margin=upper + 1e-9).holds is True
    assert no_drop(change=change, margin=lower - 1e-9).holds is False
    d = no_drop(change=change, margin=(upper + lower) / 2, names=("x", "acc"))
    assert d.holds is None and d.direction == f"acc falls by 0.0725 (margin {(upper + lower) / 2:.3g})"
    assert d.seeds_needed == max(rules.seeds_to_decide(d.size, sd ** 2, sides=1), n + 1)
    assert d.size == pytest.approx((upper + lower) / 2 - drop) and d.kind == "no-drop"
    rises = no_drop(change=change, higher=False)  # a loss that falls: no drop; margin one sd
    assert rises.direction == f"after rises by 0.0725 (margin {sd:.3g})" and rises.holds is True
    assert no_drop(change=s()).direction == "the change has no value" and no_drop(change=s()).holds is None


def test_no_drop_without_spread_is_decided_by_the_sign_and_says_what_it_saw():
    flat = no_drop(s(0.5, 0.5), s(0.5, 0.5))
    assert (flat.holds, flat.size, flat.direction) == (True, 0.0, "after stays from before (margin 0)")
    fell = no_drop(s(0.5, 0.5), s(0.25, 0.25), margin=0.25)  # exactly the margin: still no drop
    assert (fell.holds, fell.size) == (True, 0.0)
    assert fell.direction == "after falls by 0.25 from before (margin 0.25)"
    assert no_drop(s(0.5, 0.5), s(0.25, 0.25), margin=0.125).holds is False
    one = no_drop(change=s(-0.5), margin=0.25)  # one seed: no spread, the sign decides
    assert (one.holds, one.size) == (False, -0.25)
    assert no_drop(change=s(0.5), margin=0.0).holds is True
    up = no_drop(s(0.25), s(0.5), names=("small", "large"))
    assert (up.holds, up.direction) == (True, "large rises by 0.25 from small (margin 0)")
    assert no_drop(s(0.25), s(0.5), higher=False).holds is False


def test_no_drop_with_a_side_missing_decides_nothing():
    for before, after in ((None, s(1.0)), (s(1.0), None), (s(), s(1.0)), (s(1.0), s())):
        d = no_drop(before, after)
        assert (d.holds, d.direction, d.kind) == (None, "a side has no value", "no-drop")
        assert math.isnan(d.size)


def test_no_drop_default_margin_is_one_pooled_sd():
    b, a = s(1.0, 1.2, 1.1), s(0.9, 1.3, 1.1)
    d = no_drop(b, a)
    margin = math.sqrt((b.sd ** 2 + a.sd ** 2) / 2)
    assert d.direction.endswith(f"(margin {margin:.3g})")
    assert d.size == pytest.approx(margin - (b.mean - a.mean))


def test_in_range_counts_seeds_inside_the_closed_range_and_leaves_nan_out():
    d = in_range([1.0, 2.0, float("nan"), 1.5], 1, 2, name="n")
    assert (d.holds, d.direction, d.size, d.kind) == (True, "n in [1, 2] on 3 of 3 seeds (1, 2, 1.5)", 0.5,
                                                      "in-range")
    out = in_range([0.5, 2.5], 1, 2)
    assert (out.holds, out.direction) == (False, "the measure in [1, 2] on 0 of 2 seeds (0.5, 2.5)")
    mixed = in_range([1.0] * 9 + [5.0] * 2, 1, 2)
    assert mixed.holds is None
    assert mixed.seeds_needed == rules.every_seed([True] * 9 + [False] * 2).seeds_needed
    assert mixed.size == pytest.approx(9 / 11 - 0.5)


def test_a_trend_reads_its_steps_in_increasing_size_and_keeps_the_weakest():
    steps = [(32, s(0.9, 0.91, 0.92)), (8, s(0.5, 0.51, 0.52)), (16, s(0.7, 0.71, 0.72))]
    d = trend(steps, what="acc")
    first = rules.compare(s(0.7, 0.71, 0.72), s(0.5, 0.51, 0.52), names=("acc at 16", "at 8"))
    second = rules.compare(s(0.9, 0.91, 0.92), s(0.7, 0.71, 0.72), names=("acc at 32", "at 16"))
    assert d.holds is True and d.direction == f"{first.direction}; {second.direction}"
    assert d.size == pytest.approx(min(first.size, second.size)) and d.seeds_needed is None
    assert d.kind == "trend" and trend(steps, rising=False).holds is False
    one = trend([(8, s(1.0))], what="acc")
    assert (one.holds, one.direction) == (None, "acc: fewer than two sizes") and math.isnan(one.size)
    noisy = trend([(1, s(0.5, 0.7, 0.6)), (2, s(0.55, 0.8, 0.6)), (3, s(0.9, 0.91, 0.92))])
    parts = [rules.compare(s(0.55, 0.8, 0.6), s(0.5, 0.7, 0.6)), rules.compare(s(0.9, 0.91, 0.92),
                                                                             s(0.55, 0.8, 0.6))]
    assert noisy.holds is None and noisy.seeds_needed == rules.needed(parts)


def test_check_says_what_it_found_with_a_unit_size():
    assert check(1) == Decision(True, "as the paper states", 1.0, kind="check")
    assert check([]) == Decision(False, "not as the paper states", -1.0, kind="check")
    assert check(True, found="3 parameters").direction == "3 parameters"


def test_kind_of_takes_the_rule_the_claims_words_state_first():
    both = f"steps ({TREND_RULE}); then ({NO_DROP_RULE})"
    assert kind_of(True, both) == "trend"
    assert kind_of(None, f"({NO_DROP_RULE}) and ({TREND_RULE})") == "no-drop"
    assert kind_of(False, "a count") == "check" and kind_of(True) == "check"
    assert kind_of(Decision(True, "x", 1.0, kind="rates"), TREND_RULE) == "rates"
    assert kind_of(Decision(True, "x", 1.0), TREND_RULE) == "trend"  # a Decision without its kind
    assert {k: v.name for k, v in KINDS.items()} == {k: k for k in KINDS} and len(KINDS) == 11


@pytest.mark.parametrize("before, after, higher", [((0.9, 0.8, 0.85), (0.7, 0.75, 0.8, 0.72), True),
                                                   ((1.0, 1.5), (1.2, 1.1, 1.4), False)])
def test_no_drop_at_a_bound_exactly_decides_nothing(before, after, higher):
    """The bound must lie strictly below the margin (NO_DROP_RULE: 'below the margin'), and a drop whose
    two-sided p-value is 5% exactly is not significant (p < 5%, as every rule of urnlib.rules): a margin equal
    to either bound, computed as the rule computes it, leaves the claim undecided."""
    b, a = s(*before), s(*after)
    drop = (b.mean - a.mean) if higher else (a.mean - b.mean)
    se = math.sqrt(b.sd ** 2 / b.n + a.sd ** 2 / a.n)
    df = b.n + a.n - 2
    upper = drop + float(stats.t.ppf(1 - rules.LEVEL, df)) * se
    lower = drop - float(stats.t.ppf(1 - rules.LEVEL / 2, df)) * se
    assert stats.t.cdf((upper - drop) / se, df) == pytest.approx(0.95)  # at the one-sided 95% bound
    assert no_drop(b, a, margin=upper, higher=higher).holds is None
    assert no_drop(b, a, margin=lower, higher=higher).holds is None


def test_no_drop_of_a_change_decides_at_its_one_sample_bounds_with_the_margin_less_the_drop_as_size():
    """One sample of n = 4 changes: the t quantiles of n - 1 = 3 df and the standard error sd / sqrt(n); on
    either side of each bound the decision flips, and a decided claim's size is margin - drop."""
    change = s(-0.10, -0.05, -0.12, -0.02)
    drop, se = 0.0725, change.sd / 2
    upper, lower = drop + stats.t.ppf(0.95, 3) * se, drop - stats.t.ppf(0.975, 3) * se
    below_upper, above_upper = no_drop(change=change, margin=upper - 1e-9), no_drop(change=change,
                                                                                    margin=upper + 1e-9)
    assert below_upper.holds is None and above_upper.holds is True
    assert above_upper.size == pytest.approx(upper + 1e-9 - drop)
    above_lower, below_lower = no_drop(change=change, margin=lower + 1e-9), no_drop(change=change,
                                                                                    margin=lower - 1e-9)
    assert above_lower.holds is None and below_lower.holds is False
    assert below_lower.size == pytest.approx(lower - 1e-9 - drop) and below_lower.size < 0


def test_no_drop_decided_by_the_test_reports_the_margin_less_the_drop():
    b, a = s(0.9, 0.8, 0.85), s(0.7, 0.75, 0.8, 0.72)  # a drop of 0.1075
    held, failed = no_drop(b, a, margin=0.5), no_drop(b, a, margin=0.0)
    assert held.holds is True and held.size == pytest.approx(0.5 - 0.1075)
    assert failed.holds is False and failed.size == pytest.approx(-0.1075)


def test_two_seeds_of_a_change_are_a_t_test_of_one_df_not_the_sign():
    """Two seeds have a spread (df = 1): the drop of 0.2 lies inside the margin of 0.25, but the one-sided
    95% bound (0.2 + 6.31 * 0.1) does not: undecided, not the sign rule's 'holds'."""
    change = s(-0.1, -0.3)
    d = no_drop(change=change, margin=0.25)
    assert d.holds is None and d.size == pytest.approx(0.05)
    assert d.seeds_needed == rules.seeds_to_decide(0.05, change.sd ** 2, sides=1)
    assert no_drop(s(1.0), s(0.7, 0.9), margin=0.25).holds is None  # 1 + 2 seeds: df 1 as well


def test_no_drop_names_the_next_seed_count_when_it_would_decide():
    """A drop of 0.2 (two pooled sd) against a margin of 0 on 3 seeds a side: not significant at 3 seeds
    (df 4), significant at 4 (df 6): the claim names 4 seeds, one more than it has."""
    b, a = s(1.2, 1.3, 1.4), s(1.0, 1.1, 1.2)
    d = no_drop(b, a, margin=0.0)
    assert d.holds is None and d.size == pytest.approx(-0.2)
    assert rules.seeds_to_decide(d.size, 0.01) == 4 and d.seeds_needed == 4


def test_a_trend_of_two_sizes_is_one_step():
    d = trend([(8, s(0.5, 0.51, 0.52)), (16, s(0.7, 0.71, 0.72))], what="acc")
    assert d.holds is True and d.direction == rules.compare(s(0.7, 0.71, 0.72), s(0.5, 0.51, 0.52),
                                                           names=("acc at 16", "at 8")).direction


def test_the_kinds_are_frozen():
    """KINDS is shared by every chapter: none can change a rule's words or function in place."""
    with pytest.raises(AttributeError):
        KINDS["trend"].rule = "anything"
    assert len({KINDS["trend"], KINDS["trend"]}) == 1  # frozen, so hashable
