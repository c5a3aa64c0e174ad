"""The sentence-vector diagnostic of the TPRU chapter (urnlib.chapters.tpru.features) and its report: the
participation ratio on hand-made features, the at-chance line on hand-made rows, and the escape line on
hand-made runs."""

import math
from pathlib import Path

import pytest
import torch

from urnlib.chapters.tpru.features import participation
from urnlib.chapters.tpru.report_checks import NEAR_CHANCE, escape_line, feature_line, feature_table
from urnlib.results import Run
from urnlib.seeds import Seeds


def test_one_direction_gives_one():
    g = torch.Generator().manual_seed(0)
    coeff, direction = torch.randn(200, 1, generator=g), torch.randn(1, 16, generator=g)
    ratio, first = participation(coeff * direction + 3.0)  # a constant offset changes nothing: centred
    assert ratio == pytest.approx(1.0, abs=1e-9) and first == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("k", [2, 5, 16])
def test_k_equal_orthogonal_directions_give_k(k):
    # rows +-e_i for i < k: k directions of equal variance
    eye = torch.eye(16)[:k]
    ratio, first = participation(torch.cat([eye, -eye]))
    assert ratio == pytest.approx(k, rel=1e-9) and first == pytest.approx(1 / k, rel=1e-9)


def test_unequal_directions_fall_between():
    x = torch.cat([torch.eye(4) * torch.tensor([[3.0], [1.0], [1.0], [1.0]]),
                   -torch.eye(4) * torch.tensor([[3.0], [1.0], [1.0], [1.0]])])
    ratio, first = participation(x)  # variances 9, 1, 1, 1 (up to a common factor)
    assert ratio == pytest.approx(12 ** 2 / (81 + 3)) and first == pytest.approx(9 / 12)


def test_features_that_do_not_vary():
    ratio, first = participation(torch.ones(10, 4))
    assert ratio == 0.0 and math.isnan(first)


def _row(model, losses, init_top, trained_top):
    return {"model": model, "d": 64, "seeds": list(range(len(losses))), "train_loss": losses,
            "init": [(5.0, t) for t in init_top], "trained": [(1.1, t) for t in trained_top]}


def test_the_line_separates_encoders_at_chance_from_the_others():
    ln2 = math.log(2)
    rows = [_row("TPRU 64 N=4", [ln2 - 0.001, ln2 - 0.002], [0.7, 0.6], [0.99, 0.97]),
            _row("GRU 64", [0.55, 0.54], [0.2, 0.2], [0.3, 0.3]),
            _row("edge", [ln2 - NEAR_CHANCE - 0.001] * 2, [0.5, 0.5], [0.5, 0.5])]
    line = feature_line(rows)
    at, below = line.split("Below it:")
    assert "TPRU 64 N=4: loss 0.692, first direction 98 ± 1% of the variance trained (65 ± 7% initial)" in at
    assert "GRU 64" in below and "edge" in below and "GRU 64" not in at
    assert "none" in feature_line(rows[1:]).split("Below it:")[0]
    table = feature_table(rows)
    assert list(table["encoder"]) == ["TPRU 64 N=4", "GRU 64", "edge"]
    assert table.loc[1, "first direction (% of variance): trained"] == "30 ± 0"
    assert table.loc[0, "participation ratio: trained"] == "1.1 ± 0"


def _seeds(label, curves):
    runs = [Run({"name": f"{label} seed {i}", "params": {}, "final": {},
                 "history": [{"epoch": e + 1, "train_loss": v} for e, v in enumerate(c)]}, Path("."))
            for i, c in enumerate(curves)]
    return Seeds(label, runs, list(range(len(runs))))


def test_the_escape_line_names_the_epoch_each_seed_left_chance():
    ln2 = math.log(2)
    stuck, escaped = [ln2 - 0.001] * 6, [ln2, ln2, ln2 - NEAR_CHANCE - 0.001, 0.6]
    groups = {"GRU 64": _seeds("GRU 64", [[0.69, 0.6, 0.5], [0.68, 0.6, 0.5]]),
              "TPRU 64 N=4": _seeds("TPRU 64 N=4", [stuck, escaped, stuck])}
    line = escape_line(groups)
    assert "GRU 64: 2 of 2 seeds, at epochs 2, 1;" in line
    assert "TPRU 64 N=4: 1 of 3 seeds, at epoch 3; 2 never did, in 6, 6 epochs." in line
    assert "latest escape came at epoch 3" in line and "2.0 times as long" in line
    late = {"TPRU": _seeds("TPRU", [[ln2] * 5 + [0.5], [ln2] * 4])}
    assert "a longer minimum might let more seeds escape" in escape_line(late)
    assert "latest escape" not in escape_line({"GRU 64": groups["GRU 64"]})


def test_an_encoder_with_seeds_on_both_sides_of_chance_is_reported_as_two_groups():
    ln2 = math.log(2)
    mixed = _row("TPRU 64 N=8", [ln2 - 0.001, 0.6, ln2 - 0.002], [0.4, 0.3, 0.5], [0.99, 0.5, 0.97])
    table = feature_table([mixed])
    assert list(table["encoder"]) == ["TPRU 64 N=8 (seeds 0, 2)", "TPRU 64 N=8 (seed 1)"]
    assert list(table["first direction (% of variance): trained"]) == ["98 ± 1", "50"]
    at, below = feature_line([mixed]).split("Below it:")
    assert "TPRU 64 N=8 (seeds 0, 2): loss 0.692" in at and "TPRU 64 N=8 (seed 1): loss 0.600" in below


def test_the_escape_summary_counts_the_seeds_and_names_those_that_never_left():
    from urnlib.chapters.tpru.report_checks import escape_summary

    ln2 = math.log(2)
    stuck, escaped = [ln2 - 0.001] * 6, [ln2, ln2, ln2 - NEAR_CHANCE - 0.001, 0.6]
    groups = {"GRU 64": _seeds("GRU 64", [[0.69, 0.6, 0.5], [0.68, 0.6, 0.5]]),
              "TPRU 64 N=4": _seeds("TPRU 64 N=4", [stuck, escaped, stuck])}
    assert escape_summary(groups) == ("3 of 5 seeds left chance (training loss below ln 2 - 0.01), the "
                                      "latest at epoch 3 (TPRU 64 N=4); never: TPRU 64 N=4 (2 of 3).")
    assert escape_summary({"GRU 64": groups["GRU 64"]}).endswith("the latest at epoch 2 (GRU 64).")
