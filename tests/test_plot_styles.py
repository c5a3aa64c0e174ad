"""A figure draws each series in the style of its run's model spec, which the report gives it: never one
guessed from the series' label (DESIGN.md: a run's identity is data, its label is for display)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from urnlib.models import registry  # noqa: E402
from urnlib.models.palette import shades  # noqa: E402
from urnlib.params import ParameterError  # noqa: E402
from urnlib.plots.curves import BASELINE, curves_panel, panels_figure, shaded  # noqa: E402
from urnlib.plots.budgets import cells_figure  # noqa: E402
from urnlib.chapters.tpru import report as tpru_report  # noqa: E402
from urnlib.reports.common import look, looks  # noqa: E402
from urnlib.results import Run  # noqa: E402
from urnlib.seeds import Seeds  # noqa: E402

URN, LSTM = registry.style("urn 8"), registry.style("lstm 8 e4")


def seeds(label: str, params: dict) -> Seeds:
    """Two seeds' runs of ``label`` with ``params`` and a two-epoch history."""
    runs = [Run({"name": f"{label} seed {s}", "params": params, "final": {},
                 "history": [{"epoch": 1, "train_loss": 2.0 + s, "valid_ppl": 9.0 + s},
                             {"epoch": 2, "train_loss": 1.0 + s, "valid_ppl": 5.0 + s}]}, Path("."))
            for s in (0, 1)]
    return Seeds(label, runs, [0, 1])


def drawn(fig, label: str) -> list:
    return [line for ax in fig.axes for line in ax.get_lines() if line.get_label() == label]


def test_a_series_takes_its_model_specs_style_not_its_label():
    groups = {"LSTM-like URN": seeds("LSTM-like URN", {"model": {"kind": "urn", "n": 8, "k": None}}),
              "URN 3-TURN lookalike": seeds("URN 3-TURN lookalike", {"model": {"kind": "lstm", "n": 8}})}
    assert looks(groups) == {"LSTM-like URN": URN, "URN 3-TURN lookalike": LSTM}
    fig = tpru_report.lm_curves(groups)  # a report's figure: the styles come from the runs' specs
    for label, style in (("LSTM-like URN", URN), ("URN 3-TURN lookalike", LSTM)):
        lines = drawn(fig, label)
        assert len(lines) == 2  # one per panel
        for line in lines:
            assert mcolors.same_color(line.get_color(), style.colour)  # alone of its kind: the kind's colour
            assert line.get_marker() == style.marker
    assert drawn(fig, "URN 3-TURN lookalike")[0].get_linestyle() == "--"  # the LSTM's dashes
    plt.close(fig)
    # a k-TURN spec is drawn as the k-TURN whatever its label says
    assert look(seeds("Full URN", {"model": {"kind": "urn", "n": 8, "k": 3}})).word == "turn"


def test_references_and_stored_kinds():
    for spec in ({"kind": "kneser-ney", "order": 3}, {"kind": "word2vec", "size": 100, "epochs": 5}):
        assert look(seeds("URN 16", {"model": spec})) is BASELINE  # a reference line, whatever its label
    # the TPRU chapter's language models store their kind beside their setup
    lm = seeds("LSTM LM 64", {"kind": "tpru", "setup": {"d": 64, "n_roles": 64, "layers": 2}})
    assert look(lm) is registry.style("tpru 64 N64")
    with pytest.raises(ParameterError, match="'LSTM 8 seed 0' stores no model spec"):
        look(seeds("LSTM 8", {"train": {"epochs": 2}}))


def test_series_of_one_style_take_its_shades_in_turn():
    turn = registry.style("urn 8 k3")
    styles = {"URN 8": URN, "LSTM 8": LSTM, "URN 16": URN, "3-TURN": turn, "LSTM 16": LSTM, "URN 32": URN}
    got = shaded(list(styles), styles)
    assert [got[k]["color"] for k in ("URN 8", "URN 16", "URN 32")] == list(shades(URN.colour, 3))
    assert [got[k]["color"] for k in ("LSTM 8", "LSTM 16")] == list(shades(LSTM.colour, 2))
    assert got["3-TURN"]["color"] == turn.colour  # the k-TURN is a kind of URN with a look of its own
    fig, ax = plt.subplots()
    curves_panel(ax, {k: ([1, 2], [1.0, 0.5]) for k in styles}, styles, xlabel="epoch", ylabel="loss")
    assert [line.get_color() for line in ax.get_lines()] == [got[k]["color"] for k in styles]
    plt.close(fig)


def test_a_series_without_a_style_is_refused_by_name():
    series = {"URN 8": ([1, 2], [1.0, 0.5]), "mystery": ([1, 2], [0.9, 0.4])}
    with pytest.raises(ValueError, match="no style for the series 'mystery'"):
        panels_figure([{"series": series, "xlabel": "x", "ylabel": "y"}], {"URN 8": URN}, rows=1, cols=1)
    with pytest.raises(ValueError, match="no style for the series 'mystery'"):
        cells_figure([{"series": {"mystery": ([1], [0.5])}, "xlabel": "x", "ylabel": "y",
                       "title": "t"}], {})
    plt.close("all")
