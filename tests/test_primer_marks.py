"""The lecture's printed values marked on the primer chapter's figures (``marks`` of
:mod:`urnlib.plots.curves`): the validation perplexities of lecture 004's table (Bengio et al. 2003 on Brown)
drawn on panel (a) of :func:`urnlib.chapters.primer.report.brown_curves` for the neural n-gram models trained
at the table's sizes, each named in the panel's own legend and left out of the figure's, nothing for the
models without a row (the recurrent ones), and the figure unchanged without marks. Built from hand-made runs,
and from the stored runs where they are present."""

import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from urnlib.plots.curves import MARK_GID, is_mark  # noqa: E402
from urnlib.chapters.primer import report  # noqa: E402
from urnlib.results import Run  # noqa: E402
from urnlib.seeds import by_label  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: our three neural n-gram models of the paper preset: lecture 004's MLP1, MLP7 and MLP9 (n, h, m, direct)
NNLM = {"nnlm 5 50 60 direct": {"kind": "nnlm", "n": 5, "h": 50, "m": 60, "direct": True},
        "nnlm 3 50 30 direct": {"kind": "nnlm", "n": 3, "h": 50, "m": 30, "direct": True},
        "nnlm 5 100 30 nodirect": {"kind": "nnlm", "n": 5, "h": 100, "m": 30, "direct": False}}
RECURRENT = {"srn 100 30": {"kind": "srn", "n": 100, "e": 30},
             "lstm 100 30": {"kind": "lstm", "n": 100, "e": 30}}
#: the lecture's valid. column for them, highest first (lecture 004's table: MLP7, MLP1, MLP9)
LECTURE_VALID = [(309, "MLP7"), (284, "MLP1"), (280, "MLP9")]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def lm_runs(specs: dict, seeds=(0, 1), epochs: int = 5, ragged: bool = False) -> dict[str, Run]:
    """Two seeds per model: validation perplexity falling from about 560 to about 330 (the range of our stored
    runs), the last epoch a little above the best; with ``ragged`` the second seed stops an epoch earlier."""
    runs = {}
    for i, (label, spec) in enumerate(specs.items()):
        for seed in seeds:
            n = epochs - (ragged and seed == seeds[-1])
            ppl = 330 + 10 * i + 230 * np.exp(-np.arange(n)) + seed
            ppl[-1] = ppl[-2] + 4  # patience waited one epoch
            rows = [{"epoch": e + 1, "train_loss": 5.5, "valid_ppl": float(ppl[e])} for e in range(n)]
            name = f"{label} seed {seed}"
            record = {"name": name, "coords": {"label": label, "seed": seed},
                      "params": {"model": spec, "train": {"epochs": epochs, "patience": 1}},
                      "history": rows, "final": {"best_epoch": n - 1, "valid_ppl": float(ppl[-2])}}
            runs[name] = Run(record, Path("/nonexistent"))
    return runs


def marks_of(ax) -> list:
    return [line for line in ax.lines if is_mark(line)]


def legend_texts(legend) -> list[str]:
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


def horizontal(line, y: float) -> bool:
    xs, ys = line.get_xdata(), line.get_ydata()
    return len(ys) == 2 and np.allclose(ys, y) and list(xs) == [0, 1]  # axhline: axes x from 0 to 1


def curves_of(ax) -> list[tuple]:
    """The data lines of a panel (every line but the marks): label and points."""
    return [(line.get_label(), np.asarray(line.get_xdata(), float).tolist(),
             np.asarray(line.get_ydata(), float).tolist()) for line in ax.lines if not is_mark(line)]


# --------------------------------------------------------------------------------------------------- marks
def test_the_marks_are_the_lectures_valid_column_of_the_unmixed_rows_at_our_sizes():
    by_name = {row["name"]: row for row in report.LECTURE_ROWS}
    assert [(by_name[name]["valid"], name) for _, name in LECTURE_VALID] == LECTURE_VALID
    assert all(not by_name[name]["mix"] for _, name in LECTURE_VALID)
    groups = by_label(lm_runs({**NNLM, **RECURRENT}))
    assert report.brown_marks(groups) == [(value, f"Levy (2023), {name}: {value}")
                                          for value, name in LECTURE_VALID]
    # a network at no size of the table, and the recurrent models, get none
    other = {"nnlm 4 50 30 direct": {"kind": "nnlm", "n": 4, "h": 50, "m": 30, "direct": True}}
    assert report.brown_marks(by_label(lm_runs({**other, **RECURRENT}))) == []


def test_brown_curves_marks_the_lectures_validation_perplexities_in_a():
    fig = report.brown_curves(lm_runs({**NNLM, **RECURRENT}))
    a, b = fig.axes[:2]
    drawn = marks_of(a)
    assert len(drawn) == 3
    for line, (value, name) in zip(drawn, LECTURE_VALID):
        assert horizontal(line, value) and line.get_label() == f"Levy (2023), {name}: {value}"
        assert line.get_gid() == MARK_GID and line.get_color() == "black" and line.get_linestyle() == ":"
    assert legend_texts(a.get_legend()) == [line.get_label() for line in drawn]
    # (b), the excess over each run's best, has no value of the lecture's
    assert not marks_of(b) and b.get_legend() is None
    assert legend_texts(fig.legends[0]) == [*NNLM, *RECURRENT]  # the models only
    # the marks lie just below our curves (log scale): the panel still spans them, not squashed
    low, high = a.get_ylim()
    assert low < 280 and low > 250 and high > 560


def test_only_the_models_with_a_lecture_row_are_marked():
    fig = report.brown_curves(lm_runs({"nnlm 3 50 30 direct": NNLM["nnlm 3 50 30 direct"], **RECURRENT}))
    (line,) = marks_of(fig.axes[0])
    assert horizontal(line, 309) and line.get_label() == "Levy (2023), MLP7: 309"
    fig = report.brown_curves(lm_runs(RECURRENT))
    assert not any(marks_of(ax) or ax.get_legend() for ax in fig.axes)


@pytest.mark.parametrize("ragged", [False, True])
def test_brown_curves_without_marks_is_the_figure_it_was(ragged):
    runs = lm_runs({**NNLM, **RECURRENT}, ragged=ragged)
    bare, marked = report.brown_curves(runs, marks=False), report.brown_curves(runs)
    assert not any(marks_of(ax) or ax.get_legend() for ax in bare.axes)
    for plain, with_marks in zip(bare.axes[:2], marked.axes[:2]):
        assert curves_of(plain) == curves_of(with_marks)  # the same curves, the marks only added
        assert plain.get_yscale() == with_marks.get_yscale() and plain.get_title() == with_marks.get_title()
    assert bare.axes[1].get_ylim() == marked.axes[1].get_ylim()
    assert legend_texts(bare.legends[0]) == legend_texts(marked.legends[0]) == [*NNLM, *RECURRENT]


# ------------------------------------------------------------------------------------------ the stored runs
def test_the_stored_runs_figure_marks_mlp1_mlp7_mlp9(monkeypatch):
    from urnlib.chapters.primer import experiment
    from urnlib.chapters.primer import lm as primer_lm

    stored = {p.parent.name for p in (REPO / "notebooks" / "results" / "primer_lm").glob("*/record.json")}
    if not stored:
        pytest.skip("no stored primer_lm runs")

    def no_training(*args, **kwargs):
        raise AssertionError("the figure trained a run")

    monkeypatch.setattr(primer_lm, "train_run", no_training)
    monkeypatch.setattr(primer_lm, "train_kneser_ney", no_training)
    monkeypatch.chdir(REPO)
    config = experiment.Config.paper()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # runs not yet restamped load as stale, flagged
        runs = experiment.run(config)  # a missing or corrupt run of the committed plan fails here (issue 48)
    fig = report.brown_curves(runs.lm)
    a = fig.axes[0]
    assert [(line.get_ydata()[0], line.get_label()) for line in marks_of(a)] == [
        (value, f"Levy (2023), {name}: {value}") for value, name in LECTURE_VALID]
    # every value marked lies within a tenth of our lowest validation perplexity: no squashed curves
    lowest = min(min(run.column("valid_ppl")) for run in runs.lm.values())
    assert all(value > 0.9 * lowest for value, _ in LECTURE_VALID)
    bare = report.brown_curves(runs.lm, marks=False).axes[0]
    assert np.log(a.get_ylim()[1] / a.get_ylim()[0]) < 1.2 * np.log(bare.get_ylim()[1] / bare.get_ylim()[0])
