"""Figures a reader can read at the book's column width (as a reviewer read the book: 1280 px): SVG, set once
by the plotting package; no figure wider than the column; three panels or more in rows of two at most; bands
that stay inside the measure's range; equal values kept apart; and curves of seeds that stopped at different
epochs drawn seed by seed instead of a mean that drops where a seed stops."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

from urnlib.models import registry  # noqa: E402
from urnlib.plots import style  # noqa: E402
from urnlib.plots.curves import (accuracy_by_count_figure, column_figure, curves_panel,  # noqa: E402
                                 panels_figure)
from urnlib.plots.dials import signature_table_figure  # noqa: E402
from urnlib.plots.states import acceptance_figure, state_panels_figure, word_tree_figure  # noqa: E402
from urnlib.plots.series import UNIT, SeedCurves, clip, draw_series  # noqa: E402
from urnlib.plots.budgets import DODGE, cells_figure  # noqa: E402

URN, LSTM, GRU = registry.style("urn 8"), registry.style("lstm 8 e4"), registry.style("gru 8")
STYLES = {"URN": URN, "LSTM": LSTM, "GRU": GRU}
LOOK = {"color": "C0", "marker": "o", "linestyle": "-"}


def _bands(ax) -> list[np.ndarray]:
    """The y values of every band (fill_between) of ``ax``."""
    return [c.get_paths()[0].vertices[:, 1] for c in ax.collections if isinstance(c, PolyCollection)]


def _labelled(ax, label: str):
    return next(line for line in ax.get_lines() if line.get_label() == label)


# ------------------------------------------------------------------------------------- style, set once
def test_importing_the_plots_sets_the_books_style():
    assert matplotlib.rcParams["savefig.dpi"] == style.RC["savefig.dpi"] >= 200
    assert matplotlib.rcParams["svg.hashsalt"] == "urnlib"
    assert tuple(matplotlib.rcParams["figure.figsize"]) == (style.COLUMN, 4.2)


def test_inside_ipython_figures_are_given_as_svg_the_same_every_time():
    InteractiveShell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell
    shell = InteractiveShell.instance()
    try:
        style.apply()
        formatters = shell.display_formatter.formatters
        fig, ax = plt.subplots()
        ax.plot([1, 2], [3, 4])
        svg = formatters["image/svg+xml"](fig)
        assert svg is not None and svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert formatters["image/png"](fig) is None  # one format: the page gets the SVG, not a 100 dpi PNG
        assert formatters["image/svg+xml"](fig) == svg  # no date, fixed ids: the same file in every build
        assert "dc:date" not in svg
        plt.close(fig)
    finally:
        InteractiveShell.clear_instance()


def test_grids_have_two_panels_to_a_row_at_most():
    assert [style.grid_shape(n) for n in (1, 2, 3, 4, 5)] == [(1, 1), (1, 2), (2, 2), (2, 2), (3, 2)]
    with pytest.raises(ValueError, match="at least one panel"):
        style.grid_shape(0)
    fig, axes, spare = column_figure(3)
    assert len(axes) == 3 and spare is not None and not spare.axison  # the fourth cell holds the legend
    assert fig.get_size_inches()[0] == style.COLUMN
    plt.close(fig)


def _series(n: int = 3) -> dict:
    return {"URN": ([1, 2, 3][:n], [1.0, 0.5, 0.2][:n]), "LSTM": ([1, 2, 3][:n], [0.9, 0.4, 0.3][:n])}


FIGURES = {
    "panels (4)": lambda: panels_figure([{"series": _series(), "xlabel": "x", "ylabel": "y"}] * 4, STYLES),
    "panels (3)": lambda: panels_figure([{"series": _series(), "xlabel": "x", "ylabel": "y"}] * 3, STYLES),
    "cells (2 budgets)": lambda: cells_figure(
        [{"series": {"URN": SeedCurves([[1.0, 0.9], [0.9, 0.8]], x=[[0, 1]] * 2)}, "xlabel": "x",
          "ylabel": "y", "title": "t"}] * 2, STYLES),
    "states (5)": lambda: state_panels_figure([(f"m{i}", np.zeros((9, 4))) for i in range(5)]),
    "acceptance": lambda: acceptance_figure({"URN seed 0": [True] * 30 + [False] * 10}, 8),
    "word tree": lambda: word_tree_figure(np.array([[0.0, 1.0, 0.5, 2.0]]), ["dog", "eat"], ["C0", "C3"],
                                          xlabel="distance", title="tree"),
    "dials": lambda: signature_table_figure([("(", 14.0, [3.0, 2.0, 1.0]), ("()", 0.06, [0.1])]),
}


@pytest.mark.parametrize("name", FIGURES)
def test_no_figure_is_wider_than_the_books_column(name):
    """Wider, the page would shrink it and its text with it (a three-panel row shrank 9 pt text to 6 px)."""
    fig = FIGURES[name]()
    fig.canvas.draw()
    assert fig.get_size_inches()[0] <= style.COLUMN + 1e-9
    assert max(ax.get_position().x1 for ax in fig.axes) <= 1.0
    grid = {ax.get_subplotspec().get_geometry()[:2] for ax in fig.axes if ax.get_subplotspec()}
    assert all(cols <= style.MAX_COLS for _, cols in grid), grid
    plt.close(fig)


def test_three_panels_share_one_legend_in_the_spare_cell():
    fig = panels_figure([{"series": _series(), "xlabel": "x", "ylabel": "y"}] * 3, STYLES)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert not fig.legends and len(legends) == 1
    assert [t.get_text() for t in legends[0].get_texts()] == ["URN", "LSTM"]
    assert len(fig.axes[3].texts) == 0  # no "(d)" over the legend
    plt.close(fig)


# ------------------------------------------------------------------------------ bands inside the range
def test_bands_stay_inside_the_measures_range():
    """seaborn's mean ± sd of the seeds, cut to the measure's range: accuracies near 1 or near 0."""
    fig, ax = plt.subplots()
    curves_panel(ax, {"URN": SeedCurves([[0.9, 0.95, 1.0], [1.0, 1.0, 1.0], [0.95, 1.0, 0.9]]),
                      "LSTM": SeedCurves([[0.1, 0.0, 0.0], [0.3, 0.1, 0.0], [0.0, 0.05, 0.2]])},
                 STYLES, xlabel="epoch", ylabel="accuracy", bounds=UNIT)
    assert len(_bands(ax)) == 2
    for band in _bands(ax):
        assert band.min() >= 0.0 and band.max() <= 1.0
    fig2, ax2 = plt.subplots()  # the default: a loss, a count, a perplexity are non-negative
    curves_panel(ax2, {"URN": SeedCurves([[0.0, 0.1], [0.5, 0.6]])}, STYLES, xlabel="e", ylabel="n")
    assert _bands(ax2)[0].min() == 0.0
    fig3 = cells_figure([{"series": {"URN": SeedCurves([[1.0, 0.9], [0.8, 1.0]])}, "xlabel": "x",
                          "ylabel": "accuracy", "title": "t", "bounds": UNIT}], STYLES)
    assert max(band.max() for band in _bands(fig3.axes[0])) <= 1.0
    with pytest.raises(ValueError, match="give \\(x, y\\) or SeedCurves"):
        draw_series(ax, "URN", ([1], [2], [3], [4]), LOOK)
    for f in (fig, fig2, fig3):
        plt.close(f)


def test_error_bars_of_accuracies_stop_at_one():
    series = {"URN": {"count": np.array([0, 1]), "accuracy": np.array([0.99, 0.5]),
                      "low": np.array([0.9, 0.3]), "high": np.array([1.08, 0.7])}}
    fig = accuracy_by_count_figure(series, STYLES)
    ax = fig.axes[0]
    bars = [c for c in ax.collections if c.get_segments()]
    assert max(seg[:, 1].max() for c in bars for seg in c.get_segments()) <= 1.0
    plt.close(fig)


def test_clip():
    assert clip([-1.0, 0.5, 2.0], (0.0, 1.0)).tolist() == [0.0, 0.5, 1.0]
    assert clip([-1.0, 2.0], (0.0, None)).tolist() == [0.0, 2.0]
    assert clip([-1.0], None).tolist() == [-1.0]


# ---------------------------------------------------------------------------- equal values kept apart
def test_cells_with_equal_values_are_shifted_apart():
    ones = {label: SeedCurves([[1.0, 1.0, 1.0]] * 2, x=[[0, 1, 2]] * 2) for label in STYLES}
    fig = cells_figure([{"series": ones, "xlabel": "attractors", "ylabel": "accuracy", "title": "t",
                         "markers": True, "bounds": UNIT}], STYLES)
    starts = [_labelled(fig.axes[0], label).get_xdata()[0] for label in STYLES]
    assert len(set(starts)) == 3 and min(starts) == -DODGE and max(starts) == DODGE
    plt.close(fig)


# ------------------------------------------------------------- seeds that stopped at different epochs
def test_seeds_that_stop_at_different_epochs_are_drawn_one_by_one():
    """Before: a mean over the seeds still running, which dropped where the best seed stopped."""
    curves = SeedCurves([[0.0, 10, 20, 30, 40], [0.0, 2, 4], [0.0, 3, 6, 9]])
    assert curves.ragged and curves.common == 3
    fig, ax = plt.subplots()
    curves_panel(ax, {"URN": curves}, STYLES, xlabel="epoch", ylabel="largest n", markers=True)
    mean = _labelled(ax, "URN")
    assert list(mean.get_xdata()) == [1, 2, 3]  # only the epochs every seed reached
    assert np.allclose(mean.get_ydata(), [0.0, 5.0, 10.0])
    seeds = [line for line in ax.get_lines() if line.get_label() == "_nolegend_"]
    assert sorted(len(line.get_xdata()) for line in seeds) == [3, 4, 5]  # each seed to its own last epoch
    assert all(line.get_linewidth() < mean.get_linewidth() for line in seeds)
    assert not _bands(ax)
    plt.close(fig)


def test_seeds_with_the_same_epochs_are_drawn_as_a_mean_with_a_band():
    """seaborn's estimate over the seeds: the mean, and a band of ± one sample standard deviation."""
    curves = SeedCurves([[1.0, 0.5], [3.0, 1.5]])
    assert not curves.ragged
    assert curves.frame().to_dict("list") == {"x": [1.0, 2.0, 1.0, 2.0], "y": [1.0, 0.5, 3.0, 1.5],
                                              "seed": [0, 0, 1, 1]}
    fig, ax = plt.subplots()
    curves_panel(ax, {"URN": curves}, STYLES, xlabel="epoch", ylabel="loss")
    assert len(ax.get_lines()) == 1 and len(_bands(ax)) == 1 and _bands(ax)[0].min() >= 0.0
    mean = _labelled(ax, "URN")
    assert mean.get_xdata().tolist() == [1, 2] and mean.get_ydata().tolist() == [2.0, 1.0]
    band = _bands(ax)[0]
    assert np.isclose(band.max(), 2 + np.sqrt(2)) and np.isclose(band.min(), 1 - np.sqrt(0.5))
    plt.close(fig)
    with pytest.raises(ValueError, match="one non-empty curve per seed"):
        SeedCurves([[1.0], []])
    with pytest.raises(ValueError, match="x has \\[1\\] values per seed"):
        SeedCurves([[1.0, 2.0]], x=[[1.0]])


def test_each_seeds_line_without_a_mean():
    """``each=True``: one line per seed (seaborn's units=), the first named in legends, no band."""
    fig, ax = plt.subplots()
    curves_panel(ax, {"URN": SeedCurves([[1.0, 2.0, 3.0], [2.0, 1.0]], each=True)}, STYLES, xlabel="epoch",
                 ylabel="count")
    assert [line.get_label() for line in ax.get_lines()] == ["URN", "_nolegend_"] and not _bands(ax)
    assert [list(line.get_ydata()) for line in ax.get_lines()] == [[1.0, 2.0, 3.0], [2.0, 1.0]]
    plt.close(fig)


def test_seeds_over_their_own_x_are_averaged_where_they_have_one():
    """Buckets or lengths only some seeds have: the mean at each x over the seeds there, no seed lines."""
    curves = SeedCurves([[0.2, 0.4], [0.4]], x=[[1, 2], [1]])
    assert not curves.ragged
    fig, ax = plt.subplots()
    curves_panel(ax, {"URN": curves}, STYLES, xlabel="length", ylabel="error", bounds=UNIT, markers=True)
    mean = _labelled(ax, "URN")
    assert np.allclose(mean.get_ydata(), [0.3, 0.4]) and len(ax.get_lines()) == 1
    plt.close(fig)
