"""Tests for urnlib.metrics: Wilson intervals and accuracy by number of attractors."""

import math

import numpy as np
import pytest

from urnlib.metrics import accuracy_by_count, max_error_rate, wilson_interval

Z = 1.959964


def test_wilson_known_value():
    low, high = wilson_interval(np.array([8]), np.array([10]))
    assert low[0] == pytest.approx(0.4902, abs=1e-3)
    assert high[0] == pytest.approx(0.9433, abs=1e-3)


@pytest.mark.parametrize("k, n", [(8, 10), (1, 3), (50, 100), (0, 7), (7, 7), (123, 4567)])
def test_wilson_endpoints_solve_the_score_test(k, n):
    """The Wilson interval is {p0 : |k/n - p0| <= z sqrt(p0 (1 - p0) / n)}: its ends solve the equality."""
    low, high = (float(v[0]) for v in wilson_interval(np.array([k]), np.array([n])))
    p = k / n
    assert -1e-12 <= low <= p <= high <= 1 + 1e-12
    for p0 in (low, high):
        assert abs(p - p0) == pytest.approx(Z * math.sqrt(max(p0 * (1 - p0), 0) / n), abs=1e-9)


def test_wilson_edges():
    low, high = wilson_interval(np.array([0, 10, 0, 3]), np.array([10, 10, 0, 0]))
    assert low[0] == pytest.approx(0, abs=1e-12) and 0 < high[0] < 0.35
    assert high[1] == pytest.approx(1, abs=1e-12) and 0.65 < low[1] < 1
    assert np.isnan(low[2]) and np.isnan(high[2])  # no trials: no interval
    assert np.isnan(low[3]) and np.isnan(high[3])


def test_wilson_narrows_with_more_trials():
    low, high = wilson_interval(np.array([8, 80, 800]), np.array([10, 100, 1000]))
    widths = high - low
    assert widths[0] > widths[1] > widths[2]
    assert np.all((low < 0.8) & (0.8 < high))


def test_wilson_z_sets_the_level():
    low95, high95 = wilson_interval(np.array([8]), np.array([10]))
    low99, high99 = wilson_interval(np.array([8]), np.array([10]), z=2.575829)
    assert low99[0] < low95[0] and high99[0] > high95[0]


def test_wilson_accepts_scalars():
    low, high = wilson_interval(8, 10)
    assert float(low) == pytest.approx(0.4902, abs=1e-3)
    assert float(high) == pytest.approx(0.9433, abs=1e-3)


def test_accuracy_by_count_drops_small_buckets():
    correct = [9, 0, 30, 1, 40]
    total = [10, 0, 40, 2, 50]
    out = accuracy_by_count(correct, total, min_total=5)
    assert out["count"].tolist() == [0, 2, 4]  # bucket indices are kept, not renumbered
    np.testing.assert_allclose(out["accuracy"], [0.9, 0.75, 0.8])
    assert out["total"].tolist() == [10, 40, 50]
    low, high = wilson_interval(np.array([9, 30, 40]), np.array([10, 40, 50]))
    np.testing.assert_allclose(out["low"], low)
    np.testing.assert_allclose(out["high"], high)

    # min_total=1 still drops empty buckets (no division by zero)
    out1 = accuracy_by_count(correct, total)
    assert out1["count"].tolist() == [0, 2, 3, 4]
    assert out1["accuracy"][2] == 0.5


def test_max_error_rate():
    correct = [9, 0, 30, 1, 40]
    total = [10, 0, 40, 2, 50]
    assert max_error_rate(correct, total) == pytest.approx(1 - 0.5)  # bucket 3: 1 of 2
    assert max_error_rate(correct, total, min_total=5) == pytest.approx(1 - 0.75)
    assert math.isnan(max_error_rate(correct, total, min_total=1000))
