"""urnlib.trends: a measure's least-squares line on log2 of the size, on hand-made values whose line is
known."""

import math

import pytest

from urnlib.trends import log2_trend


def test_an_exact_line_gives_its_slope_and_the_doublings_to_the_target():
    # 0.5, 0.6, 0.7 at 1,000, 2,000, 4,000: +0.1 per doubling, 0.7 at the largest size; 0.9 two doublings on
    t = log2_trend([1000, 2000, 4000, 1000, 2000, 4000], [0.5, 0.6, 0.7, 0.5, 0.6, 0.7], target=0.9,
                   higher=True, room=3.0)
    assert t.slope == pytest.approx(0.1) and t.pvalue < 1e-6
    assert t.improves and not t.worse and t.need == pytest.approx(2.0) and t.reaches
    assert not log2_trend([1000, 2000, 4000] * 2, [0.5, 0.6, 0.7] * 2, target=0.9, higher=True,
                          room=1.5).reaches  # 2 doublings needed, 1.5 at hand
    words = t.words("epochs", "0.9", 4000, what="epoch", theirs="the authors' 32,000 epochs are")
    assert words.startswith("+0.1 per doubling of the epochs (p = ")  # an exact line: p near 0
    assert words.split("): ", 1)[1] == (
        "the paper's 0.9 about 2.0 doublings beyond the largest epoch (16,000) on the fitted line, an "
        "extrapolation; the authors' 32,000 epochs are 3.0 doublings beyond ours")


def test_lower_is_better_and_a_reached_target_needs_no_doubling():
    t = log2_trend([1, 2, 4, 1, 2, 4], [0.4, 0.2, 0.0, 0.41, 0.21, 0.01], target=0.01, higher=False, room=1)
    assert t.improves and t.need == 0 and t.reaches
    assert t.words("sentences", "1%", 4).endswith(
        "the paper's value already reached; the paper's size is 1.0 doublings beyond ours")


def test_a_flat_or_wrong_way_trend_never_reaches():
    flat = log2_trend([1, 2, 4] * 2, [0.5, 0.52, 0.5, 0.52, 0.5, 0.52], target=0.9, higher=True, room=10)
    assert not flat.improves and not flat.reaches and flat.words("x", "0.9", 4).endswith(
        ": no significant improvement)")
    down = log2_trend([1, 2, 4] * 2, [0.7, 0.6, 0.5, 0.71, 0.61, 0.51], target=0.9, higher=True, room=10)
    assert down.worse and down.need == math.inf
    assert down.words("x", "0.9", 4).endswith(": significantly worse)")


def test_no_trend_from_one_size_and_nan_values_are_left_out():
    assert log2_trend([8, 8, 8], [0.1, 0.2, 0.3], target=1, higher=True, room=1) is None
    assert log2_trend([8, 16], [0.1, float("nan")], target=1, higher=True, room=1) is None
    with pytest.raises(ValueError):
        log2_trend([8, 16], [0.1], target=1, higher=True, room=1)


def test_the_gap_is_measured_at_the_size_asked_for():
    # the line 0.5 + 0.1 log2(n / 1000): at 2,000 it gives 0.6, so 0.9 lies 3 doublings on; at 4,000, 2
    t = log2_trend([1000, 2000, 4000] * 2, [0.5, 0.6, 0.7] * 2, target=0.9, higher=True, room=3.5, top=2000)
    assert t.need == pytest.approx(3.0) and t.reaches
