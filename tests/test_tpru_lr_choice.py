"""The TPRU chapter's learning-rate choice (``lr_choices``): every entailment encoder trained at each
candidate rate, the runs at the chapter's ``lr`` under their stored names and keys, a run at another rate the
same run as an ablation entry of that rate, and per encoder the rate of higher mean best validation accuracy
read."""

from __future__ import annotations

import dataclasses
import json
import math
from types import SimpleNamespace

import pytest

from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import lr as tpru_lr
from urnlib.experiments.config import REPO
from urnlib.lr_choice import Measure, choose, score
from urnlib.params import ParameterError
from urnlib.chapters.tpru import report_lr as report
from urnlib.seeds import Seeds

BOTH = [0.001, 0.0003]


@pytest.fixture(scope="module")
def paper():
    """The paper preset at its own rate alone (the preset names both rates: see the test below)."""
    return dataclasses.replace(tpru.Config.paper(), lr_choices=None, scaled=None, lm_sizes=[])


def test_the_paper_presets_make_the_choice():
    for scale in ("paper", "large", "full"):
        assert tpru.Config.load(scale).lr_choices == BOTH


@pytest.fixture(scope="module")
def two(paper):
    return dataclasses.replace(paper, lr_choices=BOTH)


def _ids(specs):
    return [(s.experiment, s.name, s.key, json.dumps(s.params, sort_keys=True)) for s in specs]


# ------------------------------------------------------------------------------------------- planning
def test_one_rate_plans_the_runs_as_before(paper):
    assert paper.lr_choices is None
    rates = paper.lr_plan()
    assert all(list(r) == [paper.lr] for r in rates.values())
    listed = dataclasses.replace(paper, lr_choices=[paper.lr])  # the chapter's lr named alone: the same plan
    assert _ids(listed.plan()) == _ids(paper.plan())
    assert {k: _ids(v) for k, v in paper.entailment_plan().items()} == {
        k: _ids(r[paper.lr]) for k, r in rates.items()}


def test_a_second_rate_adds_one_run_per_encoder_and_seed(paper, two):
    before, after = paper.plan(), two.plan()
    assert _ids(two.entailment_plan()["GRU 64"]) == _ids(paper.entailment_plan()["GRU 64"])
    added = [s for s in after if s.name not in {b.name for b in before}]
    # the ablation already plans TPRU 64 N=4 at lr 0.0003: those runs are shared, not planned twice
    assert len(added) == (len(two.encoders()) - 1) * len(two.seeds)
    assert {s.params["train"]["lr"] for s in added} == {0.0003}
    assert "GRU 64, lr 0.0003 seed 0" in {s.name for s in added}
    for label, rates in two.lr_plan().items():
        for old, new in zip(rates[0.001], rates[0.0003]):  # the same run but for its learning rate
            assert new.params == {**old.params, "train": {**old.params["train"], "lr": 0.0003}}
            assert new.name == old.name.replace(" seed ", ", lr 0.0003 seed ")


def test_a_run_at_another_rate_is_the_ablation_entrys_run(two):
    entry = two.ablation_plan()["TPRU 64 N=4, lr 0.0003"]  # ten seeds: the choice's three are its first
    chosen = two.lr_plan()["TPRU 64 N=4"][0.0003]
    assert _ids(entry[:len(chosen)]) == _ids(chosen)


# ------------------------------------------------------------------------------------------- the choice
def _fake_runs(config, valid):
    """Stand-ins for stored runs: ``valid(spec) -> the best validation accuracy`` (None: not stored); a test
    accuracy that contradicts it, which the choice must not read."""
    runs = {}
    for spec in config.plan():
        acc = valid(spec)
        if acc is not None:
            runs[spec.name] = SimpleNamespace(
                name=spec.name, column=lambda key, a=acc: [0.5, a] if key == "valid_acc" else [0.0],
                final={"accuracy": {"hard": 1 - acc}})
    return runs


def _choices(config, valid):
    return tpru_lr.choices(config.lr_plan(), _fake_runs(config, valid), config.lr, len(config.seeds))


def _lower_rate_helps(label):
    def valid(spec):
        if spec.name.startswith(f"{label}, lr 0.0003 "):
            return 0.7 + 0.01 * spec.params["train"]["seed"]
        return 0.6
    return valid


def test_the_higher_mean_validation_accuracy_wins_and_a_tie_keeps_lr(two):
    choices = _choices(two, _lower_rate_helps("TPRU 64 N=4"))
    chosen = {c.label: c.chosen for c in choices}
    assert chosen.pop("TPRU 64 N=4") == 0.0003
    assert set(chosen.values()) == {0.001}  # equal accuracies: the chapter's own rate
    n4 = next(c for c in choices if c.label == "TPRU 64 N=4")
    assert [r.name for r in n4.picked] == [f"TPRU 64 N=4, lr 0.0003 seed {s}" for s in two.seeds]
    assert n4.picked.label == "TPRU 64 N=4" and n4.stat(0.0003).mean == pytest.approx(0.71)
    assert not n4.notes


def test_a_rate_not_stored_is_left_out_and_said(two):
    def valid(spec):
        if spec.name.startswith("GRU 64, lr 0.0003"):
            return None
        if spec.name == "LSTM 64, lr 0.0003 seed 2":
            return None
        return 0.9 if ", lr 0.0003" in spec.name else 0.6
    by = {c.label: c for c in _choices(two, valid)}
    assert by["GRU 64"].chosen == 0.001 and by["GRU 64"].notes == ["lr 0.0003 not stored"]
    assert by["LSTM 64"].chosen == 0.0003 and by["LSTM 64"].notes == ["lr 0.0003: 2 of 3 seeds stored"]
    text, frame = report.lr_choice(list(by.values()))
    assert "lr 0.0003 not stored" in set(frame["note"]) and "fewer runs than planned" in text


def test_a_measure_that_is_not_finite_counts_as_the_worst():
    higher = Measure(lambda run: run, "accuracy", minimize=False)
    runs = {0.001: Seeds("x", [0.9, math.nan], [0, 1]), 0.0003: Seeds("x", [0.6, 0.6], [0, 1])}
    assert score(runs[0.001], higher) == -math.inf and choose(runs, 0.001, higher) == 0.0003
    lower = Measure(lambda run: run, "loss", minimize=True)
    assert choose({0.001: Seeds("x", [1.0], [0]), 0.0003: Seeds("x", [1.0], [0])}, 0.0003, lower) == 0.0003
    assert choose({0.001: None}, 0.001, lower) is None


def test_the_table_and_text_name_the_choice(two, paper):
    text, frame = report.lr_choice(_choices(two, _lower_rate_helps("TPRU 64 N=8")))
    assert list(frame.columns) == ["encoder", "validation accuracy (%), lr 0.001",
                                   "validation accuracy (%), lr 0.0003", "chosen lr"]
    row = frame[frame["encoder"] == "TPRU 64 N=8"].iloc[0]
    assert row["chosen lr"] == "0.0003" and row["validation accuracy (%), lr 0.0003"] == "71.0 ± 1.0"
    assert "1 of the 7 encoders (TPRU 64 N=8: 0.0003)" in text and "validation" in text
    text, frame = report.lr_choice(_choices(paper, lambda spec: 0.6))
    assert "one learning rate" in text and list(frame.columns) == ["encoder", "validation accuracy (%), lr "
                                                                   "0.001", "chosen lr"]


# ------------------------------------------------------------------------------------------- bad values
@pytest.mark.parametrize("bad, words", [
    ([], ["lr_choices", "non-empty"]),
    ([0.0003], ["lr_choices", "lr=0.001"]),
    ([0.001, 0.0], ["lr_choices[1]"]),
    ([0.001, 0.0003, 0.0003], ["lr_choices", "twice"]),
    ([0.001, "slow"], ["lr_choices[1]"]),
    ("0.001", ["lr_choices"]),
])
def test_bad_lr_choices_are_named(bad, words):
    with pytest.raises(ParameterError) as err:
        tpru.Config.load("tiny", lr_choices=bad)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_the_notebook_shows_the_choice():
    nb = json.loads((REPO / "notebooks" / "tpru.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    code = [i for i, s in enumerate(sources) if "lr_report.lr_choice(" in s]
    assert len(code) == 1 and nb["cells"][code[0]]["cell_type"] == "code"
    assert "not in the papers" in sources[code[0] - 1]
    assert "lr_choices: list = None" in sources[1]
    assert "groups(results.own," in sources[2]  # the ablation compares with the runs at the chapter's lr
