"""The TPRU chapter's initialisation ablation report (urnlib.chapters.tpru.report_ablation) on hand-made runs:
how settings are named and grouped with the original initialisation, how often seeds left chance, and the rule
that compares those rates."""

import math

import matplotlib
import pytest

from urnlib.chapters.tpru import report_ablation as ablation
from urnlib.seeds import Seeds

matplotlib.use("Agg")

STUCK = [0.6935, 0.6931, 0.6930]  # a training loss at ln 2 = 0.693 on every epoch
LEFT = [0.6935, 0.6800, 0.6500]  # below ln 2 - 0.01 = 0.683 from epoch 2


class FakeRun:
    def __init__(self, model, losses, seed):
        self.params = {"model": model}
        self.history = [{"train_loss": v, "valid_acc": 0.5 if v > 0.683 else 0.6} for v in losses]
        self.final = {"accuracy": {"hard": 0.5 if losses[-1] > 0.683 else 0.55}}
        self.name = f"run {seed}"

    def column(self, key):
        return [row[key] for row in self.history]


def _seeds(label, model, curves):
    return Seeds(label, [FakeRun(model, c, i) for i, c in enumerate(curves)], list(range(len(curves))))


N4 = {"kind": "tpru", "d": 64, "n_roles": 4, "slices": 1}
S8 = {**N4, "slices": 8}


def test_setting_names():
    assert ablation.setting_name(N4) == ablation.ORIGINAL == "b = 1 (original)"
    assert ablation.setting_name({**N4, "bias_init": 0.0}) == "b = 0"
    assert ablation.setting_name({**S8, "score_scale": math.sqrt(8)}) == "b = 1, scores x 2.83"


def _grouped():
    entailment = {"TPRU 64 N=4": _seeds("TPRU 64 N=4", N4, [STUCK, STUCK, LEFT]),
                  "TPRU 64 N=4 s=8": _seeds("TPRU 64 N=4 s=8", S8, [STUCK] * 3)}
    ablations = {"TPRU 64 N=4, b=0": _seeds("TPRU 64 N=4, b=0", {**N4, "bias_init": 0.0}, [LEFT] * 3),
                 "TPRU 64 N=4 s=8, b=0": _seeds("TPRU 64 N=4 s=8, b=0", {**S8, "bias_init": 0.0}, [LEFT] * 3),
                 "TPRU 64 N=4 s=8, scores x2.83": _seeds("TPRU 64 N=4 s=8, scores x2.83",
                                                         {**S8, "score_scale": 2.83}, [STUCK, LEFT, STUCK])}
    return ablation.groups(entailment, ablations)


def test_settings_are_grouped_by_encoder_with_the_original_first():
    grouped = _grouped()
    assert list(grouped) == ["TPRU 64 N=4", "TPRU 64 N=4 s=8"]
    assert list(grouped["TPRU 64 N=4 s=8"]) == ["b = 1 (original)", "b = 0", "b = 1, scores x 2.83"]
    # an ablation entry at the original initialisation with more seeds replaces the main runs' three
    more = _seeds("TPRU 64 N=4", N4, [STUCK] * 9 + [LEFT])
    grouped = ablation.groups({"TPRU 64 N=4": _seeds("TPRU 64 N=4", N4, [STUCK] * 3)},
                              {"TPRU 64 N=4": more})
    assert grouped["TPRU 64 N=4"]["b = 1 (original)"] is more


def test_a_longer_training_is_a_setting_of_its_own():
    """An ablation group whose stop rule trains more epochs than the main runs' is named by them."""
    main = _seeds("TPRU 64 N=4", N4, [STUCK] * 3)
    for run in main:
        run.params["stop"] = {"min_epochs": 30}
    longer = _seeds("TPRU 64 N=4, 100+ epochs", N4, [LEFT] * 2)
    for run in longer:
        run.params["stop"] = {"min_epochs": 100}
    grouped = ablation.groups({"TPRU 64 N=4": main}, {"TPRU 64 N=4, 100+ epochs": longer})
    assert list(grouped["TPRU 64 N=4"]) == ["b = 1 (original)", "b = 1, 100+ epochs"]
    assert ablation.decisions(grouped)["TPRU 64 N=4"]["b = 1, 100+ epochs"].seeds_needed == 4


def test_rates_of_leaving_chance_per_encoder_and_pooled():
    """Per encoder, 3 of 3 against 1 of 3 (or 0 of 3) is not decided by three seeds and says how many would;
    pooled over both encoders, 6 of 6 against 1 of 6 is decided (Fisher's exact test, p = 0.015)."""
    found = ablation.decisions(_grouped())
    n4 = found["TPRU 64 N=4"]["b = 0"]
    assert n4.holds is None
    assert n4.direction == "left chance on 3 of 3 seeds of b = 0 and 1 of 3 of b = 1 (original)"
    assert n4.seeds_needed == 7
    assert found["TPRU 64 N=4 s=8"]["b = 0"].seeds_needed == 4
    assert found["all"]["b = 0"].holds is True
    assert "b = 1, scores x 2.83" not in found["all"]  # run on one encoder: nothing to pool
    line = ablation.ablation_line(_grouped())
    assert "* all encoders pooled, *b = 0*: left chance on 6 of 6 seeds" in line
    assert "more often than in the original setting." in line
    assert "not decided (about 7 seeds per side would decide it at this spread)" in line


def test_the_table_and_the_figure():
    grouped = _grouped()
    roles = [{"model": "TPRU 64 N=4, b=0", "init": [(0.5, 0.1)] * 3, "trained": [(0.4, 0.2)] * 3}]
    table = ablation.ablation_table(grouped, roles)
    assert list(table["left chance"]) == ["1 of 3", "3 of 3", "0 of 3", "3 of 3", "1 of 3"]
    row = table[table["setting"] == "b = 0"].iloc[0]
    assert row["top role, initial (%)"] == "50 ± 0" and row["input dependence, trained"] == "0.2 ± 0"
    assert table.iloc[0]["top role, initial (%)"] == "-"  # no measure given for that setting
    fig = ablation.ablation_figure(grouped)
    titles = [ax.get_title(loc="left") for ax in fig.axes]  # a panel's letter, then its title
    assert any("TPRU 64 N=4 s=8" in t for t in titles)
    assert ablation.ablation_line({}).startswith("No ablation was run")
    empty = ablation.ablation_figure({})
    assert "no ablation" in empty.axes[0].texts[0].get_text()
    assert ablation.ablation_table({}, []).empty


@pytest.mark.parametrize("bad", [(4, 3, 0, 3), (-1, 3, 0, 3)])
def test_counts_that_are_not_counts_stop(bad):
    from urnlib.rules import rates

    with pytest.raises(ValueError, match="not a count of seeds"):
        rates(*bad)


def test_the_summary_names_the_decided_settings_and_counts_the_others():
    """The page's short paragraph: pooled b = 0 (6 of 6 against 1 of 6) is decided, the three per-encoder
    comparisons are not."""
    summary = ablation.ablation_summary(_grouped())
    assert "decided by Fisher's exact test" in summary
    assert "all encoders pooled, *b = 0*: more often (left chance on 6 of 6 seeds" in summary
    assert summary.endswith("The other 3 comparisons are not decided at their seeds.")
    assert ablation.ablation_summary({}).startswith("No ablation was run")
