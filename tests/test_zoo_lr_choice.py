"""The zoo's learning-rate choice (``lr_choices``): every (task, budget, cell) and seed trained once per
candidate rate, the runs at each task's own ``lr`` under their stored names and keys, and per (task, budget,
cell) the rate whose runs reach the lower mean validation loss kept in the chapter's views."""

from __future__ import annotations

import dataclasses
import json
import re
from types import SimpleNamespace

import pytest

from urnlib.chapters.zoo import experiment as zoo
from urnlib.experiments.config import REPO
from urnlib.params import ParameterError
from urnlib.chapters.zoo import report

BOTH = [0.01, 0.001]


@pytest.fixture(scope="module")
def one():
    """The tiny preset with each task's lr alone (the parameter's default)."""
    return dataclasses.replace(zoo.Config.tiny(), lr_choices=None)


@pytest.fixture(scope="module")
def two():
    return zoo.Config.load("tiny", lr_choices=BOTH)


def _ids(specs):
    return [(s.experiment, s.name, s.key, json.dumps(s.params, sort_keys=True)) for s in specs]


# ------------------------------------------------------------------------------------------- planning
def test_the_default_is_one_candidate_per_task(one):
    assert one.lr_choices is None
    assert all(one.lrs(task) == [settings["lr"]] for task, settings in one.tasks.items())
    listed = dataclasses.replace(one, lr_choices=[0.01])  # the task's lr named: the same plan
    assert _ids(listed.plan()) == _ids(one.plan())
    assert len(one.plan()) == len(one.planned()) * len(one.seeds)
    names = [s.name for s in one.plan()]
    assert "LSTM, dyck, budget 1500 seed 0" in names and not any(" lr " in n for n in names)


def test_the_paper_presets_plan_is_every_stored_run():
    """The runs of the book's preset keep their names and keys: each is found in the committed store."""
    paper = zoo.Config.paper()
    specs = paper.plan()
    assert len(specs) == 2 * 168 and paper.lrs("dyck") == [0.01, 0.001]  # 168 runs at each rate
    root = paper.store_path()
    if not (root / "zoo").is_dir():
        pytest.skip("no committed zoo runs in this checkout")
    for spec in specs:
        record = root / spec.experiment / spec.key / "record.json"
        assert record.is_file(), spec.name
        assert json.loads(record.read_text())["name"] == spec.name


def test_two_candidates_double_the_runs_and_keep_the_existing_ones(one, two):
    before, after = one.plan(), two.plan()
    assert len(after) == 2 * len(before)
    assert _ids(before) == _ids(after[: len(before)])  # the task's lr first, exactly as before
    added = after[len(before):]
    assert {s.params["train"]["lr"] for s in added} == {0.001}
    assert "LSTM, dyck, budget 1500, lr 0.001 seed 0" in {s.name for s in added}
    assert len({s.key for s in after}) == len(after) and len({s.name for s in after}) == len(after)
    assert all(s.coords["lr"] == s.params["train"]["lr"] for s in after)
    for old, new in zip(before, added):  # the same run but for its learning rate
        assert new.params == {**old.params, "train": {**old.params["train"], "lr": 0.001}}
        assert new.name == old.name.replace(" seed ", ", lr 0.001 seed ")
    assert "chosen" in two.summary() and "0.001" in two.summary()


# ------------------------------------------------------------------------------------------- the choice
def _fake_runs(config, losses):
    """Stand-ins for stored runs: ``losses(spec) -> validation loss`` (None: the run is not stored)."""
    runs = {}
    for spec in config.plan():
        loss = losses(spec)
        if loss is not None:
            # a test measure that contradicts the validation loss: the choice must not read it
            runs[spec.name] = SimpleNamespace(name=spec.name, coords=spec.coords,
                                              final={"test_loss": loss, "closing_accuracy": loss})
    return runs


def _lower_for(cell, task, lr):
    """Validation loss 1.0 everywhere except ``cell`` on ``task`` at ``lr``: 0.5 (seed 0), 0.7 (seed 1)."""
    def losses(spec):
        c = spec.coords
        if (c["cell"], c["task"], c["lr"]) == (cell, task, lr):
            return 0.5 + 0.2 * spec.params["train"]["seed"]
        return 1.0
    return losses


def _chosen(choices):
    return {(c.task, c.budget, c.cell): c.chosen for c in choices}


def test_the_lower_mean_validation_loss_wins_and_a_tie_keeps_the_tasks_lr(two):
    runs = _fake_runs(two, _lower_for("lstm", "dyck", 0.001))
    choices = two.lr_choice(runs)
    assert len(choices) == len(two.planned())
    chosen = _chosen(choices)
    assert chosen.pop(("dyck", 1500, "LSTM")) == 0.001
    assert set(chosen.values()) == {0.01}  # every other row: equal losses, the task's own rate
    lstm = next(c for c in choices if (c.task, c.cell) == ("dyck", "LSTM"))
    assert lstm.loss(0.001).mean == pytest.approx(0.6) and lstm.loss(0.01).mean == 1.0 and not lstm.notes
    views = two.views(runs)
    assert [r.name for r in views["dyck"][1500]["LSTM"]] == ["LSTM, dyck, budget 1500, lr 0.001 seed 0",
                                                             "LSTM, dyck, budget 1500, lr 0.001 seed 1"]
    assert [r.name for r in views["dyck"][1500]["GRU"]] == ["GRU, dyck, budget 1500 seed 0",
                                                            "GRU, dyck, budget 1500 seed 1"]
    assert list(views) == list(two.tasks) and list(views["dyck"][1500]) == two.labels()
    # every candidate's runs, for the cost: the other rate's under its own label
    every = two.views(runs, chosen=False)["dyck"][1500]
    assert len(every) == 2 * len(two.labels()) and "LSTM (lr 0.001)" in every and "LSTM" in every


def test_a_candidate_not_stored_is_left_out_and_said(two):
    lower = _lower_for("gru", "anbn", 0.01)

    def losses(spec):
        c, seed = spec.coords, spec.params["train"]["seed"]
        if (c["cell"], c["lr"]) == ("srn", 0.001):
            return None  # the SRN at 0.001: not stored on any task
        if (c["cell"], c["task"], c["lr"]) == ("urn", "dyck", 0.01):
            return None  # the URN on Dyck at its task's rate: not stored, 0.001 is
        if (c["cell"], c["task"], c["lr"], seed) == ("gru", "anbn", 0.001, 1):
            return None  # one seed of the GRU at 0.001 on a^n b^n
        return lower(spec)

    runs = _fake_runs(two, losses)
    by_row = {(c.task, c.cell): c for c in two.lr_choice(runs)}
    srn = by_row[("dyck", "SRN")]
    assert srn.chosen == 0.01 and srn.loss(0.001) is None and srn.notes == ["lr 0.001 not stored"]
    urn = by_row[("dyck", "URN")]
    assert urn.chosen == 0.001 and urn.notes == ["lr 0.01 not stored"]
    assert [r.name for r in two.views(runs)["dyck"][1500]["URN"]][0].endswith(", lr 0.001 seed 0")
    gru = by_row[("anbn", "GRU")]
    assert gru.chosen == 0.01 and gru.notes == ["lr 0.001: 1 of 2 seeds stored"]
    frame = report.lr_choice(two.lr_choice(runs), two.task_titles())[1]
    assert "lr 0.001 not stored" in set(frame["note"])
    nothing = {k: v for k, v in runs.items() if not k.startswith("LSTM, agreement")}
    assert "LSTM" not in two.views(nothing)["agreement"][1500]


def test_a_loss_that_is_not_finite_loses(two):
    def losses(spec):
        c = spec.coords
        if (c["cell"], c["task"], c["lr"]) == ("tpru", "dyck", 0.01) and spec.params["train"]["seed"] == 1:
            return float("nan")  # a diverged seed at the task's rate: its finite seed alone would win
        return 0.5 if c["lr"] == 0.01 else 0.6

    chosen = _chosen(two.lr_choice(_fake_runs(two, losses)))
    assert chosen[("dyck", 1500, "TPRU")] == 0.001 and chosen[("dyck", 1500, "GRU")] == 0.01


def test_the_choice_table_has_one_row_per_task_budget_and_cell(two):
    choices = two.lr_choice(_fake_runs(two, _lower_for("lstm", "dyck", 0.001)))
    text, frame = report.lr_choice(choices, two.task_titles())
    assert len(frame) == len(two.planned())
    assert list(frame.columns)[:3] == ["task", "budget", "cell"]
    assert {"validation loss, lr 0.01", "validation loss, lr 0.001", "chosen lr"} <= set(frame.columns)
    row = frame[(frame["task"] == two.task_titles()["dyck"]) & (frame["cell"] == "LSTM")].iloc[0]
    assert row["chosen lr"] == "0.001" and row["validation loss, lr 0.001"] == "0.600 ± 0.141"
    assert "1 of 28" in text and "validation" in text
    single = dataclasses.replace(two, lr_choices=None)
    text, frame = report.lr_choice(single.lr_choice(_fake_runs(single, lambda s: 1.0)), {})
    assert "one learning rate" in text and "chosen lr" in frame.columns


# ------------------------------------------------------------------------------------------- bad values
@pytest.mark.parametrize("bad, words", [
    ([], ["lr_choices", "non-empty"]),
    ([0.001], ["lr_choices", "tasks['dyck'].lr=0.01"]),
    ([0.01, 0.0], ["lr_choices[1]"]),
    ([0.01, 0.001, 0.001], ["lr_choices", "twice"]),
    ([0.01, "fast"], ["lr_choices[1]"]),
    ("0.01", ["lr_choices"]),
])
def test_bad_lr_choices_are_named(bad, words):
    with pytest.raises(ParameterError) as err:
        zoo.Config.load("tiny", lr_choices=bad)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_the_notebook_shows_the_choice():
    nb = json.loads((REPO / "notebooks" / "zoo.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    code = [i for i, s in enumerate(sources) if "report.lr_choice(" in s]
    assert len(code) == 1 and nb["cells"][code[0]]["cell_type"] == "code"
    # said where it is shown: in the Markdown before it, or in the title of the fold that holds it
    assert "not in the papers" in sources[code[0] - 1] or re.search(
        r"fold\([^)]*not in the papers", sources[code[0]]), sources[code[0]]
    assert all(c.get("id") for c in nb["cells"])
