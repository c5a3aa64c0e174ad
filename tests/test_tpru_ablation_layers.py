"""The TPRU ablation's ``layers`` (issue 50: does the one-layer encoder of the authors' code collapse onto one
role as the two-layer one of paper 002 appendix C.1 does?): an entry reads it into its runs' architecture only
where it differs from the chapter's (so that the existing runs keep their keys and labels), and the report
names the setting by it and sets its rate of leaving chance against the original setting's. Hand-made runs,
no training."""

from dataclasses import replace

import matplotlib
import pytest

from tests.test_tpru_ablation import LEFT, N4, STUCK, _seeds
from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import report_ablation as ablation
from urnlib.params import ParameterError

matplotlib.use("Agg")

MODEL = "tpru 8 N4 s2"
#: the paper preset with one small TPRU and two seeds; entries are swapped in per test
BASE = replace(tpru.Config.paper(), scaled=None, lm_sizes=[],
               models=["gru 8", MODEL], embedding_size=8, hidden=8,
               seeds=[0, 1], ablations=[])


def plan(*entries):
    return replace(BASE, ablations=list(entries)).ablation_plan()


def test_an_entry_at_the_chapters_layers_names_the_main_runs():
    main = [s.key for s in BASE.entailment_plan()["TPRU 8 N=4 s=2"]]
    same = plan({"model": MODEL, "layers": BASE.layers})
    assert list(same) == ["TPRU 8 N=4 s=2"] and [s.key for s in same["TPRU 8 N=4 s=2"]] == main


def test_one_layer_changes_only_the_architecture_and_says_so_in_the_label():
    main = BASE.entailment_plan()["TPRU 8 N=4 s=2"]
    runs = plan({"model": MODEL, "layers": 1}, {"model": MODEL, "layers": 3, "lr": 0.003, "min_epochs": 3})
    assert list(runs) == ["TPRU 8 N=4 s=2, 1 layer", "TPRU 8 N=4 s=2, lr 0.003, 3 layers, 3+ epochs"]
    for spec, usual in zip(runs["TPRU 8 N=4 s=2, 1 layer"], main):
        seed = usual.params["train"]["seed"]
        assert spec.key != usual.key and spec.name == f"TPRU 8 N=4 s=2, 1 layer seed {seed}"
        assert spec.params["architecture"] == {**usual.params["architecture"], "layers": 1}
        assert {k: v for k, v in spec.params.items() if k != "architecture"} == \
            {k: v for k, v in usual.params.items() if k != "architecture"}
    assert runs["TPRU 8 N=4 s=2, lr 0.003, 3 layers, 3+ epochs"][0].params["architecture"]["layers"] == 3


@pytest.mark.parametrize("layers, message", [
    (0, r"ablations\[0\]\.layers=0 must be >= 1"),
    (1.5, r"ablations\[0\]\.layers=1.5 must be"),
    ("one", r"ablations\[0\]\.layers='one' must be"),
])
def test_bad_layers_are_named(layers, message):
    with pytest.raises(ParameterError, match=message):
        plan({"model": MODEL, "layers": layers})


def test_the_paper_presets_one_layer_entry():
    """Ten seeds of TPRU 64 N=4 with one layer, beside the ten of the original setting's two; N=64 too."""
    plans = tpru.Config.paper().ablation_plan()
    one = plans["TPRU 64 N=4, 1 layer"]
    assert [s.params["train"]["seed"] for s in one] == list(range(10))
    assert {s.params["architecture"]["layers"] for s in one} == {1}
    assert {s.params["architecture"]["layers"] for s in plans["TPRU 64 N=4"]} == {2}
    n64 = plans["TPRU 64 N=64, 1 layer"]  # and the most roles, on the chapter's three seeds
    assert [s.params["train"]["seed"] for s in n64] == [0, 1, 2]
    assert {s.params["architecture"]["layers"] for s in n64} == {1}


def _layered(label, curves, layers):
    seeds = _seeds(label, N4, curves)
    for run in seeds:
        run.params["architecture"] = {"layers": layers}
    return seeds


def test_the_report_names_the_one_layer_setting_and_decides_its_rate():
    """Two layers: 2 of 10 seeds left chance; one layer: 9 of 10, a rate decided higher (Fisher's exact
    test, p = 0.005)."""
    two = _layered("TPRU 64 N=4", [STUCK] * 8 + [LEFT] * 2, 2)
    one = _layered("TPRU 64 N=4, 1 layer", [STUCK] + [LEFT] * 9, 1)
    grouped = ablation.groups({"TPRU 64 N=4": two}, {"TPRU 64 N=4": two, "TPRU 64 N=4, 1 layer": one})
    assert list(grouped["TPRU 64 N=4"]) == [ablation.ORIGINAL, "b = 1, 1 layer"]
    assert ablation.layers_change(one, two) == 1 and ablation.layers_change(two, two) is None
    assert ablation.layers_change(one, None) is None
    assert ablation.setting_name(N4, {"lr": 0.003}, 3) == "b = 1, 3 layers, lr 0.003"
    assert ablation.left_count(one) == 9 and ablation.left_count(two) == 2
    decided = ablation.decisions(grouped)["TPRU 64 N=4"]["b = 1, 1 layer"]
    assert decided.holds is True
    assert decided.direction == ("left chance on 9 of 10 seeds of b = 1, 1 layer and 2 of 10 of b = 1 "
                                 "(original)")
    assert ablation.rescue(grouped["TPRU 64 N=4"], "b = 1, 1 layer").startswith("9 of 10 seeds")
    table = ablation.ablation_table(grouped, [])
    assert list(table["left chance"]) == ["2 of 10", "9 of 10"]
    fig = ablation.ablation_figure(grouped)
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert any(t.get_text() == "b = 1, 1 layer" for legend in legends for t in legend.get_texts())
