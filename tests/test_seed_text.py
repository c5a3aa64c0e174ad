"""How a statistic over seeds is written (urnlib.seeds.Stat.mean_sd): to the digits asked, except where every
seed gave the same value, which is exact and written without padded zeros."""

from urnlib.seeds import Stat


def test_every_seed_alike_is_written_exactly_with_an_sd_of_zero():
    assert Stat.of([0.0, 0.0, 0.0]).mean_sd() == "0 ± 0"  # not "0.000 ± 0.000"
    assert Stat.of([0.2, 0.2]).mean_sd() == "0.2 ± 0"
    assert Stat.of([10.0, 10.0, 10.0]).mean_sd(1) == "10 ± 0"
    assert Stat.of([0.1, 0.1, 0.1]).mean_sd() == "0.1 ± 0"  # a mean off by the last bit is still every seed's
    assert Stat.of([-0.0, -0.0]).mean_sd() == "0 ± 0" and Stat.of([1e-9, 1e-9]).mean_sd() == "0 ± 0"
    assert Stat.of([0.0, 0.0]).text() == "0 ± 0 (2 seeds)"


def test_seeds_that_differ_keep_the_digits_asked_and_one_seed_has_no_sd():
    assert Stat.of([0.0, 0.001]).mean_sd() == "0.001 ± 0.001"
    assert Stat.of([0.2, 0.2, 0.2000001]).mean_sd() == "0.200 ± 0.000"  # a spread below the last digit
    assert Stat.of([0.0]).mean_sd() == "0.000" and Stat.of([0.0]).text(1) == "0.0 (1 seed)"
