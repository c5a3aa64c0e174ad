"""benchmarks/gpu_chapters.py's arithmetic on hand-made records: a run's CPU hours are its recorded CPU time
(its wall time only where none was recorded), and a sampled run's ratio reads its CPU epoch in CPU seconds,
so that the GPU hours do not depend on how busy the machine that trained the run was (issue 47)."""

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_chapters.py"
_spec = importlib.util.spec_from_file_location("gpu_chapters", PATH)
gpu_chapters = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_chapters)


def _record(wall, cpu=None, epochs=10):
    record = {"wall_time_s": wall, "history": [{"seconds": wall / epochs} for _ in range(epochs)]}
    return record if cpu is None else {**record, "cpu_time_s": cpu}


def test_a_run_counts_its_cpu_time_and_its_epochs_in_cpu_seconds():
    busy = gpu_chapters._cpu_seconds(_record(wall=200.0, cpu=100.0))  # half the wall time on the CPU
    assert busy["cpu_s"] == 100.0 and busy["cpu_from"] == "cpu" and busy["wall_s"] == 200.0
    assert busy["cpu_epoch_s"] == pytest.approx(10.0)  # 20 s of wall per epoch, 10 s of CPU
    old = gpu_chapters._cpu_seconds(_record(wall=200.0))
    assert old["cpu_s"] == 200.0 and old["cpu_from"] == "wall" and old["cpu_epoch_s"] == pytest.approx(20.0)


def _sample(cpu_a, wall_a):
    runs = [{"key": "a", "group": "m", "neural": True, **gpu_chapters._cpu_seconds(_record(wall_a, cpu_a))},
            {"key": "b", "group": "m", "neural": True, **gpu_chapters._cpu_seconds(_record(300.0, 300.0))},
            {"key": "c", "group": "n-gram", "neural": False,
             **gpu_chapters._cpu_seconds(_record(50.0, 50.0))}]
    return {"date": "2026-12-07", "chapters": {"ch": {"runs": runs, "measure": runs[:1]}}}


def _gpu(sample):
    return {"machine": {"gpu": "G", "device": "cuda", "torch": "t", "cuda": "c", "date": "2026-11-27"},
            "chapters": {"ch": {"runs": [{"key": "a", "group": "m", "gpu_epoch_s": 1.0, "ratio": 123.0}]}}}


def test_the_gpu_hours_are_the_runs_epochs_at_the_gpus_speed_however_busy_the_cpu_was():
    quiet, busy = _sample(100.0, 100.0), _sample(100.0, 200.0)  # the same 10 epochs of 10 CPU seconds
    for sample in (quiet, busy):
        entry = gpu_chapters.combine(sample, _gpu(sample))["chapters"]["ch"]
        assert entry["measured"][0]["ratio"] == pytest.approx(0.1)  # 1 s on the GPU against 10 CPU seconds
        # run a: 100 CPU s x 0.1; run b: 300 x 0.1; the n-gram run stays on the CPU: 50 s
        assert entry["gpu_hours"] * 3600 == pytest.approx(10.0 + 30.0 + 50.0)
        assert entry["cpu_hours"] * 3600 == pytest.approx(450.0) and entry["wall_runs"] == 0


def test_a_measured_run_missing_from_the_sample_keeps_its_recorded_ratio_and_the_page_says_what_it_counts():
    sample = _sample(100.0, 100.0)
    sample["chapters"]["ch"]["runs"][1] |= {"cpu_from": "wall"}
    gpu = _gpu(sample)
    gpu["chapters"]["ch"]["runs"][0]["key"] = "gone"
    table = gpu_chapters.combine(sample, gpu)
    assert table["chapters"]["ch"]["measured"][0]["ratio"] == 123.0
    page = gpu_chapters.to_markdown(table)
    assert "runs stored on 2026-12-07" in page and "1 run stored before CPU time was recorded" in page
