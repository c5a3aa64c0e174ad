"""The majority answer of each attractor bucket (urnlib.chapters.agreement.report_majority), which the
agreement chapter's Fig. 2 draws instead of one pooled majority class: counted per bucket from hand-made
sentences and counts, read from a run's test sentences and checked against what the run stored, and drawn as
one step per bucket."""

import json
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402
import pytest  # noqa: E402

from tests.helpers import raises_with  # noqa: E402
from urnlib.chapters.agreement import report_majority as M  # noqa: E402
from urnlib.errors import DataError  # noqa: E402
from urnlib.models import registry  # noqa: E402
from urnlib.plots.attractors import BUCKET_MAJORITY, attractor_panels_figure, bucket_line  # noqa: E402
from urnlib.seeds import Seeds  # noqa: E402
from urnlib.tasks.agreement import SyntheticTask, _split  # noqa: E402


def _sentences(*buckets):
    """Hand-made test sentences: ``(attractors, plural)`` pairs."""
    return [SimpleNamespace(n_attractors=n, plural=plural) for n, plural in buckets]


def test_bucket_counts_count_plural_verbs_per_bucket():
    examples = _sentences((0, True), (0, False), (0, False), (2, True), (2, True), (2, False))
    assert M.bucket_counts(examples) == ([1, 0, 2], [3, 0, 3])
    assert M.bucket_counts([]) == ([], [])


def test_each_bucket_has_its_own_majority_not_the_pooled_one():
    # one seed: 2 of 10 plural without attractors, 6 of 10 with one, 9 of 10 with two; pooled 17 of 30
    # plural (majority 0.567), which is no bucket's majority
    seed0 = ([2, 6, 9], [10, 10, 10])
    out = M.bucket_majority([seed0])
    assert list(out["count"]) == [0, 1, 2]
    assert np.allclose(out["accuracy"], [0.8, 0.6, 0.9])
    pooled = max(sum(seed0[0]), sum(seed0[1]) - sum(seed0[0])) / sum(seed0[1])
    assert not np.any(np.isclose(out["accuracy"], pooled))
    # two seeds: each seed's majority per bucket, then the mean; a bucket one seed fills below min_total
    # is left out, as the models' buckets are
    seed1 = ([4, 3, 1, 1], [10, 10, 4, 2])
    out = M.bucket_majority([seed0, seed1], min_total=3)
    assert list(out["count"]) == [0, 1, 2]
    assert np.allclose(out["per_seed"], [[0.8, 0.6, 0.9], [0.6, 0.7, 0.75]])
    assert np.allclose(out["accuracy"], [0.7, 0.65, 0.825])


def _run(task, stats, root, key="k0", name="3-TURN seed 0"):
    """A stored run as the figure reads it: its task, its test data's statistics, its folder under ``root``
    (the chapter's folder of a store: ``<root>/synthetic/<key>``) and its key."""
    return SimpleNamespace(name=name, params={"task": asdict(task)}, final={"data": stats},
                           path=Path(root) / "synthetic" / key, record={"key": key})


def _tested():
    """A small grammar task, its test sentences' plural verbs and sentences per bucket, and the statistics a
    run tested on them stored: ``(task, plural, total, stored)``."""
    task = SyntheticTask(train_size=20, test_per_count=6, train_max_attractors=2, max_attractors=2, seed=0)
    _, test, _ = _split(task)
    plural, total = M.bucket_counts(test)
    stored = {"test_attractors": {str(a): t for a, t in enumerate(total)},
              "test_plural_share": float(np.mean([ex.plural for ex in test]))}
    return task, plural, total, stored


def test_the_majority_is_read_from_the_runs_test_sentences_and_checked_against_them(tmp_path):
    task, plural, total, stored = _tested()
    out = M.majority_by_attractors(Seeds("3-TURN", [_run(task, stored, tmp_path)], [0]))
    assert np.allclose(out["accuracy"], [max(p, t - p) / t for p, t in zip(plural, total)])
    # a test set that is not the one the run was tested on stops the figure
    changed = stored | {"test_plural_share": stored["test_plural_share"] + 0.01}
    with raises_with(DataError, "3-TURN seed 0", "not those it was tested on"):
        M.majority_by_attractors(Seeds("3-TURN", [_run(task, changed, tmp_path, key="k1")], [0]))
    fewer = stored | {"test_attractors": {"0": 6, "1": 6}}
    with pytest.raises(DataError):
        M.majority_by_attractors(Seeds("3-TURN", [_run(task, fewer, tmp_path, key="k2")], [0]))


def test_the_counts_are_kept_beside_the_runs_and_read_from_there(tmp_path):
    task, plural, total, stored = _tested()
    M.majority_by_attractors(Seeds("3-TURN", [_run(task, stored, tmp_path)], [0]))
    kept = json.loads((tmp_path / M.CACHE).read_text())
    assert kept == {"k0": {"name": "3-TURN seed 0", "plural": list(plural), "total": list(total)}}
    # kept counts are read without the data: a run whose task could not be read is answered from the file
    kept["k0"] = {"name": "3-TURN seed 0", "plural": [1, 3], "total": [4, 4]}
    (tmp_path / M.CACHE).write_text(json.dumps(kept))
    unreadable = SimpleNamespace(name="3-TURN seed 0", params={"task": None}, final={},
                                 path=tmp_path / "s" / "k0", record={"key": "k0"})
    out = M.majority_by_attractors(Seeds("3-TURN", [unreadable], [0]))
    assert np.allclose(out["accuracy"], [0.75, 0.75])


def test_the_figure_draws_one_step_per_bucket():
    fig = Figure()
    ax = fig.subplots()
    bucket_line(ax, {"count": np.array([0, 1, 3]), "accuracy": np.array([0.8, 0.6, 0.9])})
    (line,) = ax.get_lines()
    x, y = (np.asarray(v, dtype=float) for v in line.get_data())
    assert line.get_label() == BUCKET_MAJORITY and line.get_linestyle() == "-."
    # bucket 0 and 1 joined, a gap at the missing bucket 2, bucket 3 alone: each a bucket wide at its level
    assert np.allclose(x[:4], [-0.5, 0.5, 0.5, 1.5]) and np.allclose(y[:4], [0.8, 0.8, 0.6, 0.6])
    assert np.isnan(x[4]) and np.allclose(x[5:], [2.5, 3.5]) and np.allclose(y[5:], [0.9, 0.9])


def test_the_panels_name_the_per_bucket_majority_in_the_legend():
    series = {"3-TURN": {"count": np.arange(3), "accuracy": np.array([0.9, 0.8, 0.7]),
                         "low": np.array([0.85, 0.7, 0.6]), "high": np.array([0.95, 0.9, 0.8]),
                         "per_seed": np.array([[0.9, 0.8, 0.7], [0.92, 0.78, 0.72]])}}
    majority = {"count": np.arange(3), "accuracy": np.array([0.8, 0.6, 0.9])}
    fig = attractor_panels_figure({"linzen": (series, majority), "synthetic": (series, majority)},
                                  {"3-TURN": registry.style("urn 8 k3")})
    texts = [t.get_text() for t in fig.findobj(Text)]
    assert BUCKET_MAJORITY in texts
    assert not any("majority class" in t for t in texts)  # no pooled line, no pooled share in a title
    steps = [line for ax in fig.axes for line in ax.get_lines() if line.get_label() == BUCKET_MAJORITY]
    assert len(steps) == 2 and np.allclose(np.unique(steps[0].get_ydata()), [0.6, 0.8, 0.9])
