"""The papers' printed values marked on the figures (``marks`` of :mod:`urnlib.plots.curves`): drawn at the
paper's value with a label naming where it comes from, named in the panel's own legend and not in the
figure's, and nothing changed where a figure has no marks. The chapters' figures are built from hand-made
runs: paper 001 Fig. 2 (cross-serial) and Fig. 3 (Dyck)."""

from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from urnlib.models import registry  # noqa: E402
from urnlib.plots.curves import (MARK_GID, curves_panel, draw_marks, figure_legend, is_mark,  # noqa: E402
                                 panels_figure)
from urnlib.chapters.cross_serial import report as cross_serial
from urnlib.chapters.dyck import report as dyck  # noqa: E402
from urnlib.results import Run  # noqa: E402
from urnlib.seeds import Seeds  # noqa: E402

STYLES = {"URN 4": registry.style("urn 4"), "LSTM 4": registry.style("lstm 4 e2")}
SERIES = {"URN 4": ([1, 2, 3], [0.5, 0.4, 0.3]), "LSTM 4": ([1, 2, 3], [0.6, 0.3, 0.2])}


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def marks_of(ax) -> list[Line2D]:
    return [line for line in ax.lines if is_mark(line)]


def flat(text: str) -> str:
    """``text`` on one line (a legend breaks a long mark's name to fit its panel)."""
    return " ".join(text.split())


def legend_texts(legend) -> list[str]:
    return [] if legend is None else [flat(t.get_text()) for t in legend.get_texts()]


def horizontal(line: Line2D, y: float) -> bool:
    xs, ys = line.get_xdata(), line.get_ydata()
    return len(ys) == 2 and np.allclose(ys, y) and list(xs) == [0, 1]  # axhline: axes x from 0 to 1


def vertical(line: Line2D, x: float) -> bool:
    xs, ys = line.get_xdata(), line.get_ydata()
    return len(xs) == 2 and np.allclose(xs, x) and list(ys) == [0, 1]


def point(line: Line2D, x: float, y: float) -> bool:
    return list(line.get_xdata()) == [x] and list(line.get_ydata()) == [y]


# --------------------------------------------------------------------------- #
# the shared plotting code
# --------------------------------------------------------------------------- #
def test_a_panel_draws_each_kind_of_mark_with_its_label_in_its_own_legend():
    fig, ax = plt.subplots()
    curves_panel(ax, SERIES, STYLES, xlabel="x", ylabel="y",
                 marks=[(0.1, "paper X: a line"), (2.5, None, "paper X: an epoch"),
                        (2.0, 0.45, "paper X: a point")])
    line, epoch, dot = marks_of(ax)
    assert horizontal(line, 0.1) and line.get_label() == "paper X: a line"
    assert vertical(epoch, 2.5) and epoch.get_label() == "paper X: an epoch"
    assert point(dot, 2.0, 0.45) and dot.get_label() == "paper X: a point"
    assert all(m.get_gid() == MARK_GID and m.get_color() == "black" for m in (line, epoch, dot))
    assert line.get_zorder() < min(c.get_zorder() for c in ax.lines if not is_mark(c))  # under the data
    assert legend_texts(ax.get_legend()) == ["paper X: a line", "paper X: an epoch", "paper X: a point"]
    # the figure's legend names the models only
    figure_legend(fig, ax)
    assert legend_texts(fig.legends[0]) == ["URN 4", "LSTM 4"]


def test_a_panel_without_marks_is_drawn_as_before():
    for marks in (None, []):
        fig, ax = plt.subplots()
        curves_panel(ax, SERIES, STYLES, xlabel="x", ylabel="y", marks=marks)
        assert len(ax.lines) == 2 and ax.get_legend() is None and not marks_of(ax)
    fig = panels_figure([{"series": SERIES, "xlabel": "x", "ylabel": "y", "hline": 0.8},
                         {"series": SERIES, "xlabel": "x", "ylabel": "y"}], STYLES, rows=1, cols=2)
    a, b = fig.axes[:2]
    assert len(a.lines) == 3 and len(b.lines) == 2 and a.get_legend() is None and b.get_legend() is None
    assert legend_texts(fig.legends[0]) == ["URN 4", "LSTM 4"]


def test_panels_figure_passes_marks_to_their_panel_and_keeps_them_out_of_the_figure_legend():
    fig = panels_figure([{"series": SERIES, "xlabel": "x", "ylabel": "y", "marks": [(0.2, "paper X: 20%")]},
                         {"series": SERIES, "xlabel": "x", "ylabel": "y", "hline": 0.8}], STYLES,
                        rows=1, cols=2)
    a, b = fig.axes[:2]
    (mark,) = marks_of(a)
    assert horizontal(mark, 0.2) and legend_texts(a.get_legend()) == ["paper X: 20%"]
    assert not marks_of(b) and b.get_legend() is None
    assert legend_texts(fig.legends[0]) == ["URN 4", "LSTM 4"]


def test_a_mark_of_another_shape_is_refused():
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="a mark is"):
        draw_marks(ax, [(1.0, 2.0, 3.0, "four")])


# --------------------------------------------------------------------------- #
# cross-serial, paper 001 Fig. 2
# --------------------------------------------------------------------------- #
def cross_serial_seeds(epochs: int = 12) -> dict[str, Seeds]:
    """URN 8 and LSTM 8, two seeds each: training loss from 1.8 down to 0.3, error rate falling with it."""
    out = {}
    for kind in ("urn", "lstm"):
        label, runs = f"{kind.upper()} 8", []
        for seed in (0, 1):
            train = np.linspace(1.8, 0.3, epochs) + 0.01 * seed
            error = np.clip(train - 0.3, 0.0, 1.0)
            rows = [{"epoch": e + 1, "train_loss": float(train[e]), "test_loss": float(train[e]) + 0.1,
                     "val_loss": float(train[e]), "error_rate": float(error[e]),
                     "length_wrong": [0, 0] + [int(10 * error[e])] * 8, "length_total": [0, 0] + [10] * 8}
                    for e in range(epochs)]
            record = {"name": f"{label} seed {seed}", "coords": {"label": label, "seed": seed},
                      "params": {"model": {"kind": kind, "n": 8},
                                 "train": {"epochs": epochs, "monitor": "val_loss"}},
                      "history": rows, "final": rows[-1]}
            runs.append(Run(record, Path("/nonexistent")))
        out[label] = Seeds(label, runs, [0, 1])
    return out


def test_cross_serial_figure_marks_the_papers_values_in_b_and_c():
    fig = cross_serial.figure_paper001(cross_serial_seeds(), [8], 8)
    a, b, c, d = fig.axes[:4]
    (ten,) = marks_of(b)
    assert horizontal(ten, 0.10) and ten.get_label().startswith("Bernardy and Lappin (2022), Fig. 2b")
    assert "10% error" in ten.get_label()
    urn32, drop = marks_of(c)
    assert point(urn32, 1.0, 0.4) and urn32.get_label().startswith("Bernardy and Lappin (2022), Fig. 2c")
    assert "URN 32" in urn32.get_label() and "0.4" in urn32.get_label() and "loss 1" in urn32.get_label()
    assert vertical(drop, 0.7) and "LSTMs'" in drop.get_label() and "0.7" in drop.get_label()
    assert legend_texts(b.get_legend()) == [flat(ten.get_label())]
    assert legend_texts(c.get_legend()) == [flat(urn32.get_label()), flat(drop.get_label())]
    assert not marks_of(a) and not marks_of(d) and a.get_legend() is None
    assert legend_texts(fig.legends[0]) == ["URN 8", "LSTM 8"]  # the models only
    # the paper's numbers are the module's constants
    assert (cross_serial.PAPER_ERROR, cross_serial.PAPER_URN32_ERROR, cross_serial.PAPER_URN32_LOSS,
            cross_serial.PAPER_LSTM_DROP_LOSS) == (0.10, 0.4, 1.0, 0.7)


def test_cross_serial_figure_without_marks_has_none():
    fig = cross_serial.figure_paper001(cross_serial_seeds(), [8], 8, marks=False)
    assert not any(marks_of(ax) or ax.get_legend() for ax in fig.axes)
    assert [len(ax.lines) for ax in fig.axes[:3]] == [2, 2, 2]
    assert legend_texts(fig.legends[0]) == ["URN 8", "LSTM 8"]


# --------------------------------------------------------------------------- #
# Dyck, paper 001 Fig. 3
# --------------------------------------------------------------------------- #
def dyck_view(units=(8,), epochs: int = 100) -> dict[str, Seeds]:
    """URNs and LSTMs of ``units``, two seeds each, over the papers' 100 epochs."""
    view = {}
    for kind in ("urn", "lstm"):
        for n in units:
            label, runs = f"{kind.upper()} {n}", []
            for seed in (0, 1):
                loss = np.linspace(2.0, 1.6, epochs) + 0.01 * seed
                rows = [{"epoch": e + 1, "train_loss": float(loss[e]), "test_loss": float(loss[e]) + 0.05,
                         "closing_accuracy": 0.9, "attr_correct": [90, 80, 85], "attr_total": [100] * 3}
                        for e in range(epochs)]
                record = {"name": f"{label} seed {seed}", "coords": {"label": label, "seed": seed},
                          "params": {"model": {"kind": kind, "n": n}}, "history": rows, "final": rows[-1]}
                runs.append(Run(record, Path("/nonexistent")))
            view[label] = Seeds(label, runs, [0, 1])
    return view


def test_dyck_figure_marks_epoch_30_in_a_and_the_majority_class_in_c():
    fig = dyck.figure_paper001(dyck_view(), [8])
    a, b, c, d = fig.axes[:4]
    (turn,) = marks_of(a)
    assert vertical(turn, 30) and turn.get_label().startswith("Bernardy and Lappin (2022), Fig. 3a")
    assert "LSTM 8" in turn.get_label() and "epoch 30" in turn.get_label()
    assert legend_texts(a.get_legend()) == [flat(turn.get_label())]
    for ax in (b, c):  # the majority class's 80% error: the dash-dotted, unlabelled line of (b) and (c)
        (majority,) = [line for line in ax.lines if line.get_linestyle() == "-."]
        assert horizontal(majority, 0.8) and majority.get_label().startswith("_")
    assert not marks_of(b) and not marks_of(c) and not marks_of(d)
    assert legend_texts(fig.legends[0]) == ["URN 8", "LSTM 8"]  # the models only


def test_dyck_figure_marks_epoch_30_only_where_an_lstm_8_is_drawn():
    fig = dyck.figure_paper001(dyck_view(units=(16,)), [16])
    assert not any(marks_of(ax) for ax in fig.axes)


def test_dyck_figure_without_marks_is_the_figure_it_was():
    fig = dyck.figure_paper001(dyck_view(), [8], marks=False)
    a, b, c, _ = fig.axes[:4]
    assert not any(marks_of(ax) or ax.get_legend() for ax in fig.axes)
    assert [len(ax.lines) for ax in (a, b, c)] == [2, 3, 2]  # the 80% line in (b) only, as before
