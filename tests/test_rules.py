"""The decision rules on seeds (urnlib.rules) and the seed grouping (urnlib.seeds), on hand-made values."""

import math

import numpy as np
import pytest

from urnlib.claims import claim
from urnlib.params import ParameterError
from urnlib.rules import (Decision, at_least, at_most, beats, combine, compare, every_seed, needed,
                          off_chance, on_every_seed, paired, positive, threshold)
from urnlib.seeds import Seeds, Stat, by_label, check_seeds, split_setting


class FakeRun:
    def __init__(self, final, history=(), **coords):
        self.final = final
        self.history = list(history)
        self.coords = coords

    def column(self, key):
        return [row[key] for row in self.history]


def test_stat_mean_and_sample_sd():
    s = Stat.of([1.0, 2.0, 3.0])
    assert s.mean == 2.0 and s.sd == 1.0 and s.n == 3
    assert (s.low, s.high) == (1.0, 3.0)
    assert s.text(2) == "2.00 ± 1.00 (3 seeds)"
    one = Stat.of([0.5])
    assert one.sd == 0.0 and one.text(1) == "0.5 (1 seed)"
    assert s.mean_sd(1) == "2.0 ± 1.0" and one.mean_sd(2) == "0.50"
    none = Stat.of([float("nan")])
    assert none.mean_sd() == "n/a" and none.mean_sd(empty="") == ""


def test_stat_leaves_nan_out_and_counts_it():
    s = Stat.of([1.0, float("nan"), 3.0])
    assert s.n == 2 and s.missing == 1 and s.mean == 2.0
    assert math.isnan(Stat.of([float("nan")]).mean)


def test_beats_decides_only_beyond_the_seed_spread():
    clear_a = Stat.of([0.90, 0.91, 0.92])
    clear_b = Stat.of([0.80, 0.81, 0.82])
    assert beats(clear_a, clear_b) is True
    assert beats(clear_b, clear_a) is False
    # the same means, but seeds that scatter: Welch's t = 0.1 / sqrt(2 * 0.01 / 3) = 1.22 < t(4) = 2.78
    noisy_a = Stat.of([0.81, 0.91, 1.01])
    noisy_b = Stat.of([0.71, 0.81, 0.91])
    assert noisy_a.mean - noisy_b.mean == pytest.approx(0.1)
    assert beats(noisy_a, noisy_b) is None and beats(noisy_b, noisy_a) is None


def test_an_undecided_difference_says_its_direction_size_and_the_seeds_that_would_decide_it():
    noisy_a, noisy_b = Stat.of([0.81, 0.91, 1.01]), Stat.of([0.71, 0.81, 0.91])
    d = compare(noisy_a, noisy_b, names=("URN", "LSTM"))
    assert d.holds is None and d.direction == "URN above LSTM by 0.1" and d.size == pytest.approx(0.1)
    # by hand: n seeds a side decide it when 0.1 > t(2n - 2) * sqrt(2 * 0.01 / n): n = 9 gives
    # 2.120 * 0.04714 = 0.09993 (decides), n = 8 gives 2.145 * 0.05 = 0.107 (does not)
    n = d.seeds_needed
    assert n is not None and "seeds per side" in d.undecided
    more = compare(Stat.of(_spread(0.91, 0.1, n)), Stat.of(_spread(0.81, 0.1, n)))
    fewer = compare(Stat.of(_spread(0.91, 0.1, n - 1)), Stat.of(_spread(0.81, 0.1, n - 1)))
    assert more.holds is True and fewer.holds is None
    assert n == 9


def _spread(mean, sd, n):
    """n values with exactly this mean and sample standard deviation."""
    base = np.linspace(-1, 1, n)
    base = base / np.std(base, ddof=1)
    return list(mean + sd * base)


def test_beats_for_losses_and_with_a_margin():
    low, high = Stat.of([1.0, 1.0, 1.0]), Stat.of([1.5, 1.5, 1.5])
    assert beats(low, high, higher=False) is True
    assert beats(high, low, higher=False) is False
    assert beats(low, high, higher=False, margin=0.6) is None  # the paper's claim needs more than 0.5
    assert beats(Stat.of([]), high) is None
    # one seed each (a deterministic measure): the sign decides
    assert compare(Stat.of([0.5]), Stat.of([0.4])).holds is True


def test_thresholds():
    assert at_least(Stat.of([0.96, 0.97, 0.98]), 0.94) is True  # t = 0.03 / 0.00577 = 5.2 > t(2) = 4.30
    assert at_least(Stat.of([0.96, 0.97, 0.98]), 0.95) is None  # t = 3.46 < 4.30: three seeds do not decide
    assert at_least(Stat.of([0.90, 0.91, 0.92]), 0.95) is False
    assert at_least(Stat.of([0.93, 0.96, 0.99]), 0.95) is None
    assert at_most(Stat.of([0.01, 0.02, 0.03]), 0.1) is True
    assert at_most(Stat.of([7.0, 8.0, 9.0]), 0.1) is False
    assert at_most(Stat.of([0.0, 0.1, 0.2]), 0.1) is None
    d = threshold(Stat.of([0.96, 0.97, 0.98]), 0.95, name="accuracy")
    assert d.direction == "accuracy 0.97, above 0.95" and d.seeds_needed == 4


def test_on_every_seed_and_combine():
    assert on_every_seed([True, True, True]) is True
    assert on_every_seed([False, False]) is False
    assert on_every_seed([True, False, True]) is None
    assert combine([True, True]) == (True, False)
    assert combine([True, False]) == (False, True)
    assert combine([False, None]) == (False, False)
    assert combine([True, None]) == (None, False)
    assert combine([]) == (None, False)


def test_mixed_seeds_are_decided_by_a_sign_test_or_say_the_seeds_that_would():
    # 12 of 14 seeds: P(>= 12 or <= 2 of 14 | 1/2) = 2 * (1 + 14 + 91) / 2**14 = 0.0129 < 0.05: decided
    d = every_seed([True] * 12 + [False] * 2, what="overfits")
    assert d.holds is True and d.direction == "overfits on 12 of 14 seeds"
    assert every_seed([False] * 12 + [True] * 2).holds is False
    # 6 of 7: p = 2 * 8 / 128 = 0.125, undecided; at 9 seeds the same share (8 of 9): 2 * 10 / 512 = 0.039
    d = every_seed([True] * 6 + [False])
    assert d.holds is None and d.seeds_needed == 9 and abs(d.size - (6 / 7 - 0.5)) < 1e-12
    assert "about 9 seeds per side" in d.undecided
    # half and half: no number of seeds decides a share of exactly one half
    d = every_seed([True, False])
    assert d.holds is None and d.seeds_needed is None and "no number of seeds" in d.undecided
    # unanimous: no spread, the sign decides (as for a measure), at any number of seeds
    assert every_seed([True] * 3).holds is True and every_seed([False] * 3).holds is False


def test_an_undecided_difference_never_asks_for_the_seeds_already_run():
    # Welch's test leaves this undecided at 3 seeds a side; the pooled estimate alone would say 3
    a, b = Stat.of([0.060, 0.057, 0.063]), Stat.of([0.47, 0.25, 0.69])
    d = compare(a, b, higher=False)
    assert d.holds is None and d.seeds_needed is not None and d.seeds_needed >= 4


def test_combine_takes_decisions_and_needed_gives_the_seeds_for_every_open_part():
    decided = Decision(True, "A above B by 0.1", 0.1)
    a, b = Decision(None, "a", 0.01, 6), Decision(None, "b", 0.02, 11)
    assert combine([decided, a]) == (None, False)
    assert combine([decided, Decision(False, "c", -1)]) == (False, True)
    assert needed([decided, a, b]) == 11  # the part that needs most decides when all are decided
    assert needed([decided]) is None  # nothing open
    assert needed([a, Decision(None, "half", 0.0)]) is None  # one part no seeds can decide


def test_off_chance_needs_both_sides_clear():
    good, at_chance = Stat.of([0.8, 0.82, 0.84]), Stat.of([0.49, 0.5, 0.52])
    assert off_chance(0.5, good)
    assert not off_chance(0.5, good, at_chance)
    assert off_chance(0.69, Stat.of([0.3, 0.31]), higher=False)
    assert not off_chance(0.69, Stat.of([0.69, 0.693]), higher=False)


def test_off_chance_needs_every_seed_clear():
    # mean - sd = 0.537 clears 0.5, but seed 2 stayed at chance: that run did not train
    one_idle = Stat.of([0.9, 0.9, 0.5])
    assert one_idle.low > 0.5
    assert not off_chance(0.5, one_idle)
    assert not off_chance(0.69, Stat.of([0.2, 0.2, 0.69]), higher=False)
    assert off_chance(0.5, Stat.of([0.9, 0.9, 0.51]))
    assert off_chance(0.5, one_idle, each=False)  # the band alone
    assert not off_chance(0.5, Stat.of([0.49, 0.5, 0.52]), each=False)


def run_of(label, seed, final, **coords):
    return FakeRun(final, label=label, seed=seed, **coords)


def test_runs_are_grouped_by_their_coordinates_not_their_names():
    runs = {"x": run_of("A", 2, {"x": 3.0}), "y": run_of("A", 0, {"x": 1.0}),
            "z": run_of("B", 0, {"x": 5.0}), "w": run_of("A", 1, {"x": 2.0})}
    groups = by_label(runs)
    assert list(groups) == ["A", "B"]
    assert groups["A"].seeds == [0, 1, 2] and isinstance(groups["A"], Seeds)
    assert groups["A"].final("x").values == (1.0, 2.0, 3.0)
    assert len(groups["B"]) == 1
    # a label may contain anything, " seed " included: nothing is parsed
    odd = {"a": run_of("URN seed 3, lr 0.1", 0, {"x": 1.0}), "b": run_of("URN seed 3, lr 0.1", 1, {"x": 2.0})}
    assert list(by_label(odd)) == ["URN seed 3, lr 0.1"]
    assert by_label(odd)["URN seed 3, lr 0.1"].seeds == [0, 1]
    by_model = by_label([run_of("A", 0, {}, model="m"), run_of("B", 0, {}, model="m")], by="model")
    assert list(by_model) == ["m"] and len(by_model["m"]) == 2
    with pytest.raises(ParameterError, match="no coordinate 'task'"):
        by_label(runs, by="task")


def test_runs_of_one_setting_are_split_off_by_their_coordinates():
    coords = [("URN, lr 0.001", "URN", "lr 0.001"), ("URN", "URN", None),
              ("LSTM, lr 0.001", "LSTM", "lr 0.001"), ("URN, lr 0.01", "URN", "lr 0.01")]
    runs = {f"{label} {s}": run_of(label, s, {"x": float(s)}, model=model, setting=setting)
            for label, model, setting in coords for s in (0, 1)}
    mine, rest = split_setting(by_label(runs), "lr 0.001")
    assert list(mine) == ["URN", "LSTM"] and mine["URN"].final("x").values == (0.0, 1.0)
    assert list(rest) == ["URN", "URN, lr 0.01"]
    assert split_setting(by_label(runs), "lr 0.1")[0] == {}


def test_best_epoch_measure():
    runs = Seeds("m", [FakeRun({}, [{"loss": 3.0}, {"loss": 1.0}, {"loss": 2.0}]),
                       FakeRun({}, [{"loss": 2.0}, {"loss": 4.0}])], [0, 1])
    assert runs.best("loss").values == (1.0, 2.0)
    assert runs.best("loss", minimize=False).values == (3.0, 4.0)


def test_check_seeds():
    check_seeds([0, 1, 2])
    for bad in ([], [0, 0], [-1], "0,1", [1.5]):
        with pytest.raises(ParameterError, match="seeds"):
            check_seeds(bad)


def test_claim_records_seeds_and_the_cause_of_a_miss():
    kept = claim("c", "s", "st", 1, 1, "r", True, seeds=3, cause="setting")
    assert kept.seeds == 3 and kept.cause is None  # a reproduced claim has no cause
    missed = claim("c", "s", "st", 1, 2, "r", False, seeds=3, cause="setting")
    assert missed.cause == "setting"
    assert claim("c", "s", "st", 1, 2, "r", None, seeds=3).cause == "noise"  # undecided: the seeds' spread
    assert claim("c", "s", "st", 1, 2, "r", False, seeds=3).cause == "open"
    with pytest.raises(ValueError, match="cause"):
        claim("c", "s", "st", 1, 2, "r", False, cause="bad luck")


def test_accuracy_by_count_over_seeds_keeps_buckets_every_seed_fills():
    from urnlib.metrics import accuracy_by_count_seeds

    rows = [([9, 8, 1], [10, 10, 1]), ([10, 6], [10, 10])]  # seed 2 never saw bucket 2
    s = accuracy_by_count_seeds(rows, min_total=5)
    assert list(s["count"]) == [0, 1]
    assert np.allclose(s["accuracy"], [0.95, 0.7])
    assert np.allclose(s["high"] - s["accuracy"], [np.std([0.9, 1.0], ddof=1), np.std([0.8, 0.6], ddof=1)])
    assert list(s["total"]) == [20, 20] and s["per_seed"].shape == (2, 2)


def test_positive_paired_difference():
    assert positive(Stat.of([0.05, 0.06, 0.07])) is True
    assert positive(Stat.of([-0.05, -0.06, -0.07])) is False
    assert positive(Stat.of([-0.05, 0.02, 0.09])) is None  # noise: the band crosses 0


def test_within_a_tolerance_the_paper_gives():
    from urnlib.rules import matches, within

    tpru, lstm = Stat.of([0.80, 0.81, 0.82]), Stat.of([0.82, 0.83, 0.84])
    # 2 points behind: no worse than the LSTM by 5 points (decided); by 0.5 points the three seeds do not
    # decide it, and 10 points behind is decided against
    assert within(tpru, lstm, 0.05, names=("TPRU", "LSTM")).holds is True
    assert within(tpru, lstm, 0.005).holds is None and within(tpru, lstm, 0.005).seeds_needed == 5
    assert within(tpru, Stat.of([0.90, 0.91, 0.92]), 0.005).holds is False
    d = matches(lstm, tpru, 0.05, names=("LSTM", "TPRU"))  # whichever side is behind
    assert d.holds is True and d.direction == "LSTM above TPRU by 0.02"
    # relative: perplexities (lower is better) within 10% of each other
    assert within(Stat.of([104.0, 105.0, 106.0]), Stat.of([100.0, 101.0, 99.0]), 0.10, relative=True,
                  higher=False).holds is True


def test_seeds_exactly_at_the_bound_without_spread_are_not_past_it():
    """Every seed exactly at the value (a perfectly flat curve's change of 0): not above it, not below it;
    a decisive no, not noise (there is no spread for more seeds to shrink)."""
    flat = Stat.of([0.0, 0.0, 0.0])
    assert threshold(flat, 0.0, above=False).holds is False
    assert threshold(flat, 0.0, above=True).holds is False
    assert paired(flat).holds is False
    assert threshold(Stat.of([-0.1, -0.1, -0.1]), 0.0, above=False).holds is True


def test_rates_compares_how_often_a_property_holds_by_fishers_exact_test():
    """Hand-made counts: 10 of 10 against 0 of 10 is decided (p = 1e-5); 3 of 3 against 0 of 3 is not
    (p = 0.1) and 4 seeds per side at those rates would decide it (4 of 4 against 0 of 4: p = 0.029); equal
    rates are never decided by more seeds; a count that is not one stops with a message."""
    from urnlib.rules import rates

    assert rates(10, 10, 0, 10).holds is True and rates(0, 10, 10, 10).holds is False
    undecided = rates(3, 3, 0, 3, what="left chance", names=("b = 0", "b = 1"))
    assert undecided.holds is None and undecided.seeds_needed == 4 and undecided.size == 1.0
    assert undecided.direction == "left chance on 3 of 3 seeds of b = 0 and 0 of 3 of b = 1"
    assert "4 seeds per side" in undecided.undecided
    same = rates(2, 3, 2, 3)
    assert same.holds is None and same.seeds_needed is None and same.size == 0
    assert rates(6, 6, 1, 6).holds is True  # p = 0.015
    with pytest.raises(ValueError, match="4 of 3"):
        rates(4, 3, 0, 3)
