"""A size trend at the agreement chapter's second learning rate (``sizes`` entries with ``lr: code_lr``):
its runs train at that rate under their own labels and coordinate ``rate``, every other run as before; its
trend starts at the chapter's runs at that rate and decides that setting's misses without the words that say
the trend is another rate's. Hand-made runs (tests/test_agreement_sizes.py's builders), no training."""

import pytest

from tests.test_agreement_sizes import ERROR, _group
from urnlib.chapters.agreement import claims_sizes as cs
from urnlib.chapters.agreement import experiment as ex
from urnlib.chapters.agreement import report as rep
from urnlib.params import ParameterError

#: the paper preset without its entries at code_lr
PAPER = ex.Config.load("paper", sizes=[e for e in ex.Config.paper().sizes if "lr" not in e])
AT_CODE = {"source": "synthetic", "factor": 2, "models": ["urn"], "seeds": [0, 1, 2], "lr": PAPER.code_lr}


def test_the_paper_preset_trains_the_3_turn_at_code_lr_on_two_and_four_times_the_grammar():
    sized = [s for s in ex.Config.paper().plan() if s.coords.get("rate")]
    assert sorted({(s.coords["size"], s.coords["model"], s.coords["seed"]) for s in sized}) == [
        (f, "3-TURN", seed) for f in (2.0, 4.0) for seed in (0, 1, 2)]


def test_an_entry_at_code_lr_trains_there_under_its_own_label_and_nothing_else_moves():
    before = {(s.experiment, s.name): s.key for s in PAPER.plan()}
    config = ex.Config.load("paper", sizes=[*PAPER.sizes, AT_CODE])
    plan = {(s.experiment, s.name): s for s in config.plan()}
    added = sorted(name for (_, name) in set(plan) - set(before))
    assert added == [f"3-TURN, 2x sentences, lr {PAPER.code_lr:g} seed {s}" for s in (0, 1, 2)]
    assert {k: plan[k].key for k in before} == before
    spec = plan[("agreement/synthetic", f"3-TURN, 2x sentences, lr {PAPER.code_lr:g} seed 1")]
    plain = plan[("agreement/synthetic", "3-TURN, 2x sentences seed 1")]
    assert spec.params["train"]["lr"] == PAPER.code_lr and spec.coords["rate"] == PAPER.code_lr
    assert {k: v for k, v in spec.params.items() if k != "train"} == \
        {k: v for k, v in plain.params.items() if k != "train"}
    assert spec.coords["setting"] == f"2x sentences, lr {PAPER.code_lr:g}" and "rate" not in plain.coords
    same = ex.Config.load("paper", sizes=[*PAPER.sizes[1:], {**PAPER.sizes[0], "lr": PAPER.lr}])
    assert {(s.experiment, s.name): s.key for s in same.plan()} == before  # lr at the chapter's: the same


def test_another_rate_is_refused_naming_the_two_allowed():
    with pytest.raises(ParameterError) as info:
        ex.Config.load("paper", sizes=[{**AT_CODE, "lr": 0.1}])
    assert "sizes[0].lr=0.1" in str(info.value) and "lr=0.01 or its code_lr=0.001" in str(info.value)


def _rated(group, rate):
    for run in group.runs:
        run.coords = {**run.coords, "rate": rate, "label": f"{run.coords['label']}, lr {rate:g}"}
    return group


def test_each_rate_reads_its_own_trend_and_its_own_chapter_runs():
    full, code_full = _group([0.80, 0.79, 0.81], 1000), _group([0.60, 0.59, 0.61], 1000)
    plain = _group([0.86, 0.85, 0.87], 2000, 2.0)
    rated = _rated(_group([0.92, 0.91, 0.93], 2000, 2.0), 0.001)
    sizes = {"synthetic": {plain.label: plain, "3-TURN, 2x sentences, lr 0.001": rated}}
    main = cs.trends_of(sizes, {"synthetic": {"3-TURN": full}})["synthetic"]["3-TURN"]
    code = cs.trends_of(sizes, {"synthetic": {"3-TURN": code_full}}, 0.001)["synthetic"]["3-TURN"]
    assert [(share, seeds) for share, seeds in main] == [(1.0, main[0][1]), (2.0, plain)]
    assert [share for share, _ in code] == [1.0, 2.0] and code[1][1] is rated
    assert code[0][1].runs == code_full.runs
    assert cs.pooled_trends_of(sizes) == {}


def test_a_setting_with_its_own_trend_drops_the_words_of_borrowing_the_main_ones():
    full = _group([0.80, 0.79, 0.81], 1000)
    sizes = [_group([0.86, 0.85, 0.87], 2000, 2.0), _group([0.92, 0.91, 0.93], 4000, 4.0)]
    trends = cs.trends_of({"synthetic": {s.label: s for s in sizes}}, {"synthetic": {"3-TURN": full}})
    other = ", at lr 0.01: the sizes train at the chapter's learning rate only"

    def error(own):
        out = rep.claims({"synthetic": {"3-TURN": full}}, turn="3-TURN", analysis_source=None, min_total=1,
                         epochs=1, trends=trends, trend_note=other, own=own)
        return {c.statement.split(" (")[0]: c for c in out}[ERROR]
    assert error({}).evidence.startswith("size trend (3 seeds, read at epoch 1, at lr 0.01: the sizes train")
    mine = error({"synthetic": {"3-TURN"}})
    assert mine.evidence.startswith("size trend (3 seeds, read at epoch 1): ") and mine.cause == "data"
