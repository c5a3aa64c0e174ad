"""benchmarks/gpu_speed.py's statistics and table on hand-made rounds (issue 47): the median and quartiles of
a variant's rounds, a seeded shuffled order each round, the ratios against the fastest torch variant, the page
naming it and marking a target met or missed, and torch's counterpart given the urnlib model's dropout."""

import importlib.util
import random
from pathlib import Path

import pytest
import torch
from torch import nn

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_speed.py"
_spec = importlib.util.spec_from_file_location("gpu_speed", PATH)
gpu_speed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_speed)


def test_spread_is_the_median_and_the_quartiles_of_the_rounds():
    assert gpu_speed.spread([5.0, 1.0, 4.0, 2.0, 3.0]) == {"median": 3.0, "q1": 2.0, "q3": 4.0}
    assert gpu_speed.spread([1.0, 2.0, 3.0, 10.0]) == pytest.approx({"median": 2.5, "q1": 1.75, "q3": 4.75})
    assert gpu_speed.spread([7.0]) == {"median": 7.0, "q1": 7.0, "q3": 7.0}


def test_the_order_is_a_seeded_permutation_drawn_anew_each_round():
    labels = ["urnlib", "eager", "torch", "torch_graphed"]
    a, b = random.Random(3), random.Random(3)
    orders = [gpu_speed.shuffled(labels, a) for _ in range(20)]
    assert all(sorted(o) == sorted(labels) for o in orders)
    assert orders == [gpu_speed.shuffled(labels, b) for _ in range(20)]  # the same seed, the same orders
    assert len({tuple(o) for o in orders}) > 1  # not one order every round
    assert labels == ["urnlib", "eager", "torch", "torch_graphed"]  # the caller's list untouched


def test_interleaved_times_every_variant_once_a_round_in_the_shuffled_order():
    calls = []
    fns = {label: (lambda label=label: calls.append(label)) for label in "abcd"}
    times = gpu_speed.interleaved(fns, rounds=5, reps=2, device=torch.device("cpu"), rng=random.Random(0))
    assert {k: len(v) for k, v in times.items()} == {k: 5 for k in "abcd"}
    # after two warm-up calls of each, a round is 8 calls: 2 reps of each variant in turn
    rounds = [calls[8 + 8 * i: 16 + 8 * i: 2] for i in range(5)]
    assert all(sorted(r) == list("abcd") for r in rounds)
    rng = random.Random(0)
    assert rounds == [gpu_speed.shuffled("abcd", rng) for _ in range(5)]


def _rounds(ms):
    return [x / 1e3 for x in ms]


def test_the_ratios_are_against_the_fastest_torch_variant_round_by_round():
    out = gpu_speed.summarise({"urnlib": _rounds([2, 2, 2]), "eager": _rounds([9, 9, 9]),
                               "torch": _rounds([4, 4, 8]), "torch_graphed": _rounds([1, 2, 4])})
    assert out["best_torch"] == "torch_graphed"
    assert out["variants"]["torch"]["median"] == pytest.approx(4.0)
    assert out["variants"]["torch_graphed"]["rounds_ms"] == pytest.approx([1.0, 2.0, 4.0])
    assert out["ratio"]["median"] == pytest.approx(1.0)  # rounds' ratios 2, 1, 0.5
    assert out["ratio_eager"]["median"] == pytest.approx(0.5)  # 0.5, 0.5, 0.25
    eager_only = gpu_speed.summarise({"urnlib": _rounds([2, 3]), "torch": _rounds([4, 4])})
    assert eager_only["best_torch"] == "torch" and eager_only["ratio"] == eager_only["ratio_eager"]


def _report():
    machine = {"device": "cuda", "gpu": "G", "torch": "t", "cuda": "c", "cudnn": 1, "date": "2026-12-07",
               "cpu": "Some CPU", "cores": 16, "load_before": [0.5, 0.4, 0.3], "load_after": [1.0, 0.6, 0.4]}
    met = {"model": "URN 50", "dropout": 0.05, "batch": [512, 21], "torch": "nn.LSTM 50 (embedding 50)",
           "errors": {}, **gpu_speed.summarise({"urnlib": _rounds([2, 2, 2]), "eager": _rounds([9, 9, 9]),
                                               "torch": _rounds([4, 4, 4]),
                                               "torch_graphed": _rounds([3, 3, 3])})}
    missed = {"model": "lecture GRU 64", "dropout": 0.0, "batch": [64, 40],
              "torch": "nn.GRU 64 (embedding 64)",
              "errors": {"torch_graphed": "RuntimeError: capture failed"},
              **gpu_speed.summarise({"urnlib": _rounds([5, 5, 5]), "eager": _rounds([9, 9, 9]),
                                     "torch": _rounds([4, 4, 4])})}
    return {"machine": machine, "rounds": 3, "reps": 10, "seed": 0, "rows": [met, missed]}


def test_the_table_names_the_best_torch_and_marks_the_targets():
    page = gpu_speed.to_markdown(_report())
    rows = {line.split(" | ")[0].strip("| "): line for line in page.splitlines() if line.startswith("| ")}
    assert "0.67 [0.67-0.67] (graphed)" in rows["URN 50"] and "0.50 [0.50-0.50]" in rows["URN 50"]
    assert "<= 1.0 (met)" in rows["URN 50"]
    gru = rows["lecture GRU 64"]
    assert "1.25 [1.25-1.25] (eager)" in gru and "<= 1.0 (missed)" in gru
    assert "| failed |" in gru
    assert "lecture GRU 64, torch_graphed: RuntimeError: capture failed" in page
    assert "Some CPU, 16 cores" in page and "0.5/0.4/0.3 before, 1.0/0.6/0.4 after" in page
    assert "median [q1-q3] of 3 rounds of 10 steps" in page


def test_results_of_the_old_format_are_refused():
    with pytest.raises(SystemExit, match="predate"):
        gpu_speed.to_markdown({"machine": {}, "rows": [{"model": "URN 50", "torch_ms": 3.2}]})


def test_the_torch_counterpart_gets_the_dropout_asked_for(monkeypatch):
    lm = gpu_speed.TorchLM("gru", 5, 4, 3, dropout=0.05)
    assert [m.p for m in (lm.drop_in, lm.drop_out)] == [0.05, 0.05]
    assert all(isinstance(m, nn.Identity) for m in (gpu_speed.TorchLM("lstm", 5, 4, 3).drop_in,
                                                    gpu_speed.TorchLM("lstm", 5, 4, 3, 0.0).drop_out))
    asked = []
    monkeypatch.setattr(gpu_speed, "build_model", lambda spec, v, dropout: asked.append(("ours", dropout))
                        or nn.Sequential(nn.Embedding(v, 4), nn.Linear(4, v)))
    real = gpu_speed.TorchLM
    monkeypatch.setattr(gpu_speed, "TorchLM", lambda *a: asked.append(("torch", a[-1])) or real(*a))
    c = gpu_speed.Comparison("x", "gru 4 e4", "gru", 4, 4, 0.05, 2, 3)
    tokens = torch.zeros(2, 3, dtype=torch.long)
    steps, missing = gpu_speed._variants(c, tokens, tokens, torch.device("cpu"))
    assert sorted(steps) == ["eager", "torch", "urnlib"] and missing["torch_graphed"].startswith("skipped")
    assert sorted(asked) == [("ours", 0.05), ("ours", 0.05), ("torch", 0.05)]


def test_the_chapters_dropout_and_shapes():
    by = {c.label: c for c in gpu_speed.COMPARISONS}
    assert [by[k].dropout for k in ("URN 50", "URN 128", "paper LSTM 50")] == [0.05] * 3
    assert by["TPRU d=64 N=64 s=8"].spec == "tpru 64 N64 s8" and by["TPRU d=64 N=64 s=8"].dropout == 0.0
    assert set(gpu_speed.TARGETS) == set(by)
