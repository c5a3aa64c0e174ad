"""The pooled size trend's section of the agreement chapter (urnlib.chapters.agreement.report_pooled), on
hand-made runs: the accuracy per attractor count of both trends and of the chapter's runs scored on the pooled
test share, its figure, tables, extrapolation and the visible sentence."""

import matplotlib
import pytest

from urnlib.chapters.agreement import report_pooled as rp
from urnlib.chapters.agreement.sizes import size_words
from urnlib.seeds import Seeds

matplotlib.use("Agg")


class _Run:
    """A run with accuracy ``acc[n]`` on 100 test sentences per attractor count 0-5, ``examples`` training
    sentences, a size trend's coordinates (``size``, ``pool``)."""

    name = "hand-made"

    def __init__(self, acc, examples, seed, size=None, pool=0.0, model="3-TURN"):
        row = {"val_loss": 0.1, "accuracy": sum(acc) / len(acc), "attr_total": [100] * len(acc),
               "attr_correct": [round(a * 100) for a in acc]}
        self.history, self.params = [row], {"task": {"seed": seed}, "train": {"monitor": "val_loss"}}
        self.final = {**row, "data": {"train_examples": examples}}
        words = size_words(size, pool) if size else None
        self.coords = {"label": f"{model}, {words}" if words else model, "seed": seed, "model": model,
                       **({"size": size, "setting": words} if size else {}),
                       **({"pool": pool} if pool else {})}

    def column(self, key):
        return [row[key] for row in self.history]


def _seeds(acc, examples, size=None, pool=0.0, model="3-TURN"):
    runs = [_Run([a + 0.01 * s for a in acc], examples + s, s, size, pool, model) for s in range(3)]
    return Seeds(runs[0].coords["label"], runs, [0, 1, 2])


def _data(model="3-TURN"):
    full = _seeds([0.9, 0.6, 0.4, 0.35, 0.35, 0.3], 12800, model=model)
    plain = {model: [(0.25, _seeds([0.9, 0.55, 0.35, 0.3, 0.3, 0.3], 3200, 0.25, model=model)), (1.0, full)]}
    pooled = {model: [(0.25, _seeds([0.9, 0.8, 0.75, 0.75, 0.7, 0.7], 10400, 0.25, 0.5, model)),
                      (1.0, _seeds([0.95, 0.9, 0.85, 0.8, 0.8, 0.75], 41700, 1.0, 0.5, model))]}
    rows = [{**r.history[-1], "train_examples": r.final["data"]["train_examples"]} for r in full]
    again = {model: Seeds(rp.RESCORED, [rp._Scored(row, r) for row, r in zip(rows, full)], [0, 1, 2])}
    return rp.frame(plain, pooled, again)


def test_the_frame_holds_both_trends_and_the_rescored_runs_per_attractor_count():
    data = _data()
    assert set(data["trend"]) == {rp.PLAIN, rp.POOLED, rp.RESCORED}
    assert set(data["attractors"]) == {"1", "2", "3", "4", "5"}  # the 0 bucket is not a test file's
    assert len(data) == 5 * 3 * 5  # counts x seeds x (two plain, two pooled, one rescored point)
    pooled = data[(data["trend"] == rp.POOLED) & (data["attractors"] == "5") & (data["seed"] == 0)]
    assert sorted(pooled["accuracy"]) == pytest.approx([0.70, 0.75])
    assert sorted(set(pooled["size"])) == ["1/4 of the pooled sentences", "all pooled sentences"]


def test_the_tables_figure_and_text_are_written_from_the_runs():
    data = _data()
    table = rp.tables(data)["3-TURN"]
    assert list(table.columns) == [f"{rp.PLAIN}: 1/4 of the sentences (3,201)",
                                   f"{rp.PLAIN}: the chapter's runs (12,801)",
                                   f"{rp.POOLED}: 1/4 of the pooled sentences (10,401)",
                                   f"{rp.POOLED}: all pooled sentences (41,701)", f"{rp.RESCORED} (12,801)"]
    assert table.loc["5 attractors", f"{rp.POOLED}: all pooled sentences (41,701)"] == "0.760 ± 0.010"
    assert table.loc["1 attractor", f"{rp.RESCORED} (12,801)"] == "0.610 ± 0.010"
    text = rp.found_text(data)
    assert text == ("On the same held-out test sentences, the accuracy at 1 and at 5 attractors after the "
                    "validation file's 12,801 sentences, then after 10,401 and 41,701 pooled ones: "
                    "**3-TURN** 0.61 and 0.31, 0.81 and 0.71, 0.91 and 0.76 (means over seeds, each run at "
                    "its best epoch).")
    reach = rp.reach_text(data)
    assert "**3-TURN**, by attractor count: 1: validation file only +0.025 per doubling" in reach
    assert "test files pooled +0.050 per doubling" in reach
    fig = rp.figure(data)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_title() == "3-TURN"
    assert fig.legends and "attractors:" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert rp.found_text(None).startswith("*No pooled")
