"""urnlib.reports.cost: CPU hours per chapter from the stored runs' records."""

import pytest

from urnlib.reports.cost import cost_markdown, cost_table
from urnlib.results import RunSpec, RunStore, Trained


def _store(tmp_path):
    store = RunStore(tmp_path)
    runs = [("dyck", "a seed 0", 1800.0, 900.0), ("dyck", "a seed 1", 3600.0, 2000.0),
            ("primer_lm", "lm", None, 7200.0), ("tpru_lm", "t", 360.0, 400.0)]
    for experiment, name, cpu, wall in runs:
        spec = RunSpec(experiment, name, {"x": name})
        store.save(spec, Trained([{"epoch": 1}], {"loss": 1.0}, {}, wall, cpu))
    return tmp_path


def test_cost_per_chapter_and_total(tmp_path):
    table = cost_table(_store(tmp_path)).set_index("chapter")
    assert list(table.index) == ["dyck", "primer", "tpru", "total"]
    assert table.loc["dyck", "CPU hours"] == pytest.approx(1.5) and table.loc["dyck", "runs"] == 2
    assert table.loc["primer", "with CPU time"] == 0
    assert table.loc["primer", "wall hours (runs without CPU time)"] == pytest.approx(2.0)
    assert table.loc["total", "CPU hours"] == pytest.approx(1.6)
    assert table.loc["dyck", "longest run (CPU hours)"] == pytest.approx(1.0)
    assert table.loc["total", "longest run (CPU hours)"] == pytest.approx(1.0)
    assert table.loc["total", "hours on 2 workers"] == pytest.approx(1.0)  # not 0.8: one run takes 1 h
    assert table.loc["tpru", "hours on 8 workers"] == pytest.approx(0.1)
    text = cost_markdown(tmp_path)
    assert text.startswith("| chapter | runs |") and "| total | 4 | 3 | 1.60 |" in text


def test_the_cost_figure_shows_cpu_hours_and_the_gpu_estimate_per_chapter(tmp_path):
    import json

    import matplotlib

    matplotlib.use("Agg")
    from urnlib.reports.cost import cost_frame, write_cost_figure

    store = _store(tmp_path / "runs")
    results = tmp_path / "gpu.json"  # the primer sampled at a tenth of its CPU hours; Dyck not sampled
    results.write_text(json.dumps({"gpu": {"gpu": "GPU X"},
                                   "chapters": {"primer": {"cpu_hours": 4.0, "gpu_hours": 0.4}}}))
    frame, gpu = cost_frame(store, results)
    assert gpu == "GPU X"
    hours = {(c.split()[0], w.split()[0]): h for c, w, h in frame.itertuples(index=False)}
    assert hours[("Dyck", "CPU")] == pytest.approx(1.5) and ("Dyck", "one") not in hours
    assert hours[("A", "CPU")] == pytest.approx(2.0)  # the primer: wall hours where no CPU time was recorded
    assert hours[("A", "one")] == pytest.approx(0.2)  # its CPU hours scaled by the sampled GPU / CPU ratio
    svg = write_cost_figure(store, results, tmp_path / "cost.svg").read_text()
    assert svg.lstrip().startswith(("<?xml", "<svg"))
    assert cost_frame(store, tmp_path / "absent.json")[1] is None  # no GPU results: CPU bars only
