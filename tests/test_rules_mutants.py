"""urnlib.rules against answers computed here from the statistics (scipy's tests, brute-force searches over
seed counts), at the edges that mutants of the module survived (benchmarks/mutation.py, issue 48): exact
boundaries, the no-spread sign rule, the one-seed side, the seed searches' first and last counts, and every
field of a Decision (direction text, size, seeds_needed, kind). Fast on purpose: the mutation run puts this
file first, and a mutant dies at the first failure."""

from __future__ import annotations

import math

import pytest
from scipy import optimize
from scipy import stats

from urnlib import rules
from urnlib.rules import (Decision, compare, every_seed, matches, not_beyond, paired, rates, seeds_to_decide,
                          threshold, within)
from urnlib.seeds import Stat


def _t(df):
    return stats.t.ppf(1 - rules.LEVEL / 2, df)


def _first_n(size, variance, sides):
    """The fewest n per side from 2 to MAX_SEEDS with |size| > t(sides (n - 1)) sqrt(sides variance / n)."""
    return next((n for n in range(2, rules.MAX_SEEDS + 1)
                 if abs(size) > _t(sides * (n - 1)) * math.sqrt(sides * variance / n)), None)


@pytest.mark.parametrize("size, variance, sides", [(3.0, 1.0, 1), (1.0, 0.01, 2), (-0.5, 1.0, 2),
                                                   (0.2, 0.04, 1), (0.37, 0.5, 2), (1.0, 0.3, 1)])
def test_seeds_to_decide_is_the_first_seed_count_of_the_t_test(size, variance, sides):
    assert seeds_to_decide(size, variance, sides=sides) == _first_n(size, variance, sides)


def test_seeds_to_decide_at_its_ends():
    assert seeds_to_decide(1.0, 0.01) == 2  # a size of exactly 1 is a size like any other
    assert seeds_to_decide(3.0, 1.0, sides=1) == 3  # t(2) sqrt(1/3) = 2.48 < 3 < t(1) sqrt(1/2) = 8.98
    assert seeds_to_decide(1.0, 1.0) == _first_n(1.0, 1.0, 2)  # sides defaults to two

    def crit(n):
        return _t(2 * (n - 1)) * math.sqrt(2 / n)

    assert seeds_to_decide((crit(1000) + crit(1001)) / 2, 1.0) is None  # 1,001 seeds would: past MAX_SEEDS
    assert seeds_to_decide(0.1, -1.0) is None


def _welch_p(a, b):
    return stats.ttest_ind(a, b, equal_var=False).pvalue


def _shift_at_level(a, b):
    """The shift s > 0 of A at which Welch's two-sided p-value of A + s against B is exactly LEVEL."""
    mean_gap = sum(b) / len(b) - sum(a) / len(a)
    return optimize.brentq(lambda s: _welch_p([v + s for v in a], b) - rules.LEVEL, mean_gap, mean_gap + 100,
                           xtol=1e-12)


@pytest.mark.parametrize("a, b", [([0.0, 1.0], [0.0, 0.5]), ([0.0, 1.0, 0.3, 0.7, 0.2], [0.1, 0.4]),
                                  ([0.0, 0.2, 0.9], [0.3, 0.5, 0.4, 0.8]), ([0.0, 1.0, 2.0], [5.0, 5.0])])
@pytest.mark.filterwarnings("ignore:Precision loss")  # scipy on a side without spread
def test_welch_decides_exactly_where_scipys_welch_test_does(a, b):
    s = _shift_at_level(a, b)
    for factor, holds in ((1.001, True), (0.999, None)):
        above = [v + s * factor for v in a]
        assert compare(Stat.of(above), Stat.of(b)).holds is holds
        assert compare(Stat.of(b), Stat.of(above)).holds is (False if holds else None)
        assert compare(Stat.of(b), Stat.of(above), higher=False).holds is holds


def test_one_seed_against_two_is_welchs_test_with_one_degree_of_freedom():
    # df = se^2^2 / ((0.02 / 2)^2 / 1) = 1: crit = t(1) * 0.1 = 1.27
    two, one = Stat.of([10.0, 10.2]), Stat.of([0.0])
    assert compare(two, one).holds is True and compare(one, two).holds is False
    assert compare(Stat.of([1.0, 1.2]), one).holds is None  # 1.1 < 1.27
    assert compare(one, Stat.of([1.0, 1.2, 1.4])).holds is False  # df 2: t(2) * 0.2 / sqrt(3) = 0.50 < 1.2
    assert compare(one, Stat.of([0.0, 0.5, 1.0])).holds is None  # t(2) * 0.5 / sqrt(3) = 1.24 > 0.5
    d = compare(Stat.of([2.0, 2.2]), one)
    assert d.holds is True and d.size == pytest.approx(2.1) and d.direction == "A above B by 2.1"


def test_without_spread_the_sign_decides_and_the_margin_must_be_passed():
    one, half = Stat.of([1.0]), Stat.of([0.5])
    assert compare(one, half, margin=0.5).holds is None  # exactly the margin: not past it
    assert compare(one, half, margin=0.25).holds is True
    d = compare(Stat.of([1.0, 1.0]), Stat.of([0.0, 0.0]))
    assert (d.holds, d.cause, d.direction, d.size) == (True, None, "A above B by 1", 1.0)
    d = compare(Stat.of([0.0]), half)
    assert (d.holds, d.cause, d.direction, d.size) == (False, None, "A below B by 0.5", -0.5)
    for a, b in ((Stat.of([0.5]), Stat.of([0.5, 0.5])), (Stat.of([0.5, 0.5]), Stat.of([0.5]))):
        d = compare(a, b)
        assert (d.holds, d.cause, d.direction) == (None, None, "A equal to B")  # one side a single seed
    tie = compare(Stat.of([0.5, 0.5, 0.5]), Stat.of([0.5, 0.5]))
    assert (tie.holds, tie.cause, tie.direction) == (None, "tie", "A equal to B on every seed")


def test_an_undecided_difference_with_a_margin_asks_the_seeds_for_what_lies_past_it():
    a, b = Stat.of([1.0, 2.0, 3.0]), Stat.of([0.0, 1.0, 2.0])  # 1 apart, variance 1 a side
    assert compare(a, b).seeds_needed == seeds_to_decide(1.0, 1.0)
    assert compare(a, b, margin=0.25).seeds_needed == seeds_to_decide(0.75, 1.0)
    assert compare(a, b, margin=1.0).seeds_needed == seeds_to_decide(1.0, 1.0)  # nothing past: the difference
    assert compare(b, a).seeds_needed == seeds_to_decide(1.0, 1.0)


def _one_sample_p(values, value):
    return stats.ttest_1samp(values, value).pvalue


@pytest.mark.parametrize("values", [[0.0, 1.0], [0.0, 1.0, 0.4], [0.2, 0.3, 0.9, 0.5, 0.55]])
def test_threshold_decides_exactly_where_scipys_one_sample_test_does(values):
    mean = sum(values) / len(values)
    gap = optimize.brentq(lambda g: _one_sample_p(values, mean - g) - rules.LEVEL, 1e-9, 100, xtol=1e-12)
    for factor, holds in ((1.001, True), (0.999, None)):
        value = mean - gap * factor
        assert threshold(Stat.of(values), value).holds is holds  # above, by default
        assert threshold(Stat.of(values), value, above=False).holds is (False if holds else None)
        assert paired(Stat.of([v - value for v in values])).holds is holds
    d = threshold(Stat.of(values), mean - gap * 0.999)
    n, variance = len(values), Stat.of(values).sd ** 2
    assert d.seeds_needed == max(_first_n(d.size, variance, 1), n + 1)


def test_threshold_with_two_seeds_and_without_spread():
    assert threshold(Stat.of([10.0, 10.2]), 0.0).holds is True  # t(1) * 0.1 = 1.27 < 10.1
    assert threshold(Stat.of([1.0, 1.2]), 0.0).holds is None  # 1.1 < 1.27: two seeds with a spread
    d = threshold(Stat.of([1.0]), 0.5)
    assert (d.holds, d.size, d.direction) == (True, 0.5, "the measure 1, above 0.5")
    assert threshold(Stat.of([0.5, 0.5]), 0.0).holds is True
    assert threshold(Stat.of([0.25]), 0.5).holds is False
    at = threshold(Stat.of([0.5, 0.5]), 0.5, name="x")
    assert (at.holds, at.direction, at.size, at.kind) == (False, "x 0.5, at 0.5", 0.0, "vs-number")
    below = threshold(Stat.of([0.25, 0.25]), 0.5)
    assert below.direction == "the measure 0.25, below 0.5" and below.size == -0.25


def test_a_rule_without_values_returns_a_decision_that_says_so():
    empty = Stat.of([])
    for d, kind in ((paired(empty, name="gain"), "beats-paired"),
                    (threshold(empty, 1.0, name="gain"), "vs-number")):
        assert (d.holds, d.direction, d.seeds_needed, d.kind) == (None, "gain: no value", None, kind)
        assert math.isnan(d.size) and d.undecided == "no number of seeds would decide it at this spread"
    d = every_seed([], what="it")
    assert (d.holds, d.direction, d.seeds_needed, d.kind) == (None, "it on 0 of 0 seeds", None, "every-seed")
    assert math.isnan(d.size)


def test_the_undecided_text():
    assert Decision(True, "x", 1.0).undecided == "" and Decision(False, "x", -1.0).undecided == ""
    assert Decision(None, "x", 0.3).undecided == "more than 1,000 seeds per side would be needed"
    assert Decision(None, "x", 0.0).undecided == "no number of seeds would decide it at this spread"
    assert Decision(None, "x", 0.3, 7).undecided == "about 7 seeds per side would decide it at this spread"


def test_within_moves_b_by_the_tolerance_in_the_claims_favour():
    a, b = Stat.of([0.80, 0.81, 0.83]), Stat.of([0.82, 0.83, 0.86])
    for relative, higher, moved in ((False, True, [v - 0.05 for v in b.values]),
                                    (False, False, [v + 0.05 for v in b.values]),
                                    (True, True, [v * 0.95 for v in b.values]),
                                    (True, False, [v * 1.05 for v in b.values])):
        d = within(a, b, 0.05, relative=relative, higher=higher, names=("P", "Q"))
        ref = compare(a, Stat.of(moved), higher=higher)
        assert (d.holds, d.seeds_needed, d.kind) == (ref.holds, ref.seeds_needed, "within")
        assert d.size == pytest.approx(ref.size, abs=1e-12) and d.direction == "P below Q by 0.0233"
    assert within(a, b, 0.01).size == pytest.approx(a.mean - b.mean + 0.01)


def test_matches_is_within_for_the_side_behind_and_higher_is_better_by_default():
    low, high = Stat.of([0.80, 0.83, 0.81]), Stat.of([0.90, 0.84, 0.88])
    for higher, behind, ahead in ((True, low, high), (False, high, low)):
        w = within(behind, ahead, 0.02, higher=higher)
        for a, b in ((low, high), (high, low)):
            m = matches(a, b, 0.02, higher=higher, names=("P", "Q"))
            assert (m.holds, m.size, m.seeds_needed, m.kind) == (w.holds, w.size, w.seeds_needed, "matches")
            assert m.direction == compare(a, b, names=("P", "Q")).direction
    # an absolute tolerance mirrors (either side's view gives one size); a relative one tells them apart
    assert matches(low, high, 0.02, relative=True) == matches(low, high, 0.02, relative=True, higher=True)
    assert matches(low, high, 0.02, relative=True).size == pytest.approx(low.mean - 0.98 * high.mean)


def _sign_first(k, n):
    """The fewest seeds m > n at which round(k / n * m) of m passes the sign test (None past MAX_SEEDS)."""
    return next((m for m in range(n + 1, rules.MAX_SEEDS + 1)
                 if stats.binomtest(round(k / n * m), m).pvalue < rules.LEVEL), None)


def test_every_seed_sizes_are_the_share_minus_one_half():
    assert every_seed([True] * 4).size == 0.5 and every_seed([False] * 4).size == -0.5
    d = every_seed([True] * 12 + [False] * 2)
    assert (d.holds, d.size) == (True, 12 / 14 - 0.5)
    d = every_seed([True] * 2 + [False] * 12)
    assert (d.holds, d.size) == (False, 2 / 14 - 0.5)


@pytest.mark.parametrize("k, n", [(9, 11), (5, 6), (3, 7), (77, 145)])
def test_every_seed_names_the_first_seed_count_past_the_seeds_run_that_decides_it(k, n):
    """9 of 11 is decided at 12 (10 of 12), the count right after the seeds run; 77 of 145 first at 999."""
    d = every_seed([True] * k + [False] * (n - k))
    assert d.holds is None and d.seeds_needed == _sign_first(k, n)
    assert (_sign_first(9, 11), _sign_first(77, 145)) == (12, 999)


def test_a_share_first_decided_past_max_seeds_names_none():
    assert _sign_first(60, 113) is None and stats.binomtest(round(60 / 113 * 1001), 1001).pvalue < rules.LEVEL
    assert every_seed([True] * 60 + [False] * 53).seeds_needed is None


def _fisher_p(a, n_a, b, n_b):
    return stats.fisher_exact([[a, n_a - a], [b, n_b - b]])[1]


@pytest.mark.parametrize("counts", [(5, 6, 1, 6), (6, 6, 2, 8), (5, 5, 1, 6), (4, 4, 0, 4), (7, 8, 2, 9),
                                    (1, 6, 5, 6), (2, 2, 2, 10), (3, 6, 5, 6), (0, 4, 4, 4)])
def test_rates_decide_exactly_where_fishers_test_does(counts):
    a, n_a, b, n_b = counts
    d = rates(a, n_a, b, n_b)
    decided = _fisher_p(*counts) < rules.LEVEL
    assert d.holds is ((a / n_a > b / n_b) if decided else None)
    assert d.size == a / n_a - b / n_b and d.kind == "rates"


@pytest.mark.parametrize("counts", [(2, 2, 2, 10), (3, 6, 5, 6), (5, 6, 1, 6), (1, 3, 3, 4)])
def test_undecided_rates_search_from_one_seed_past_the_larger_side(counts):
    """2 of 2 against 2 of 10 would be decided at 10 (or 9) seeds a side: the search starts at 11."""
    a, n_a, b, n_b = counts
    start = max(n_a, n_b) + 1
    first = next(n for n in range(start, 200)
                 if _fisher_p(round(a / n_a * n), n, round(b / n_b * n), n) < rules.LEVEL)
    assert rates(a, n_a, b, n_b).seeds_needed == first
    assert rates(2, 2, 2, 10).seeds_needed == 11


def test_not_beyond_carries_the_name_size_seeds_and_kind_of_beyond():
    above, spread = Stat.of([25, 30, 28]), Stat.of([19, 23, 30])
    d, b = not_beyond(above, 20, "m"), rules.beyond(above, 20, "m")
    assert (d.holds, d.direction, d.size, d.kind) == (False, "m 27.7, above 20", -b.size, "vs-number")
    d, b = not_beyond(spread, 20, "m"), rules.beyond(spread, 20, "m")
    assert b.holds is None and b.seeds_needed is not None
    assert (d.holds, d.direction, d.size, d.seeds_needed, d.kind) == (None, b.direction, -b.size,
                                                                      b.seeds_needed, "vs-number")
    d = not_beyond(Stat.of([15, 18]), 20, "m")
    assert (d.holds, d.direction, d.size, d.kind) == (True, "m 16.5, below 20", 3.5, "vs-number")
    assert not_beyond(Stat.of([]), 20).holds is None
    assert not_beyond(Stat.of([10, 20, 30]), 20).holds is None  # a seed past 20, the t-test undecided


def test_each_rule_stamps_its_kind():
    one, two = Stat.of([1.0, 1.1]), Stat.of([0.0, 0.1])
    made = {"beats": compare(one, two), "vs-number": threshold(one, 0.0), "beats-paired": paired(one),
            "within": within(one, two, 0.1), "matches": matches(one, two, 0.1),
            "every-seed": every_seed([True]), "rates": rates(1, 1, 0, 1)}
    for kind, d in made.items():
        assert d.kind == kind


def test_edges_the_first_screen_left():
    """Survivors of a first screen against this file alone (others in the targeted files killed them too)."""
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        compare(Stat.of([1.0]), Stat.of([0.0])).holds = None
    assert seeds_to_decide(0.1, 0.0) is None  # no spread: nothing for seeds to decide

    def crit(n):
        return _t(2 * (n - 1)) * math.sqrt(2 / n)

    assert seeds_to_decide((crit(999) + crit(1000)) / 2, 1.0) == 1000  # MAX_SEEDS itself is searched
    a, b = Stat.of([2.0, 2.1, 1.9]), Stat.of([1.0, 1.1, 0.9])
    assert compare(a, b, margin=0.5).holds is True and compare(a, b, margin=1.0).holds is None
    for one, other in (([0.5, 0.5], [0.5, 0.5, 0.5]), ([0.5, 0.5, 0.5], [0.5, 0.5])):
        assert compare(Stat.of(one), Stat.of(other)).cause == "tie"  # two seeds a side are every seed
    assert not_beyond(Stat.of([19, 20]), 20).holds is True  # no seed past 20, the t-test undecided
    d = threshold(Stat.of([0.52, 0.58, 0.49]), 0.5)  # one-sample: variance sd^2, one side
    variance = Stat.of([0.52, 0.58, 0.49]).sd ** 2
    assert d.holds is None and d.seeds_needed == _first_n(d.size, variance, 1) == 12
    with pytest.raises(ValueError, match="^A: 5 of 3 seeds"):
        rates(5, 3, 1, 2)
    with pytest.raises(ValueError, match="^B: 1 of 0 seeds"):
        rates(1, 2, 1, 0)
