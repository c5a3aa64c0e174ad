"""A sweep of the Dyck chapter's small runs in this process and on a local Dask cluster, measured in one run.

    .venv/bin/python benchmarks/sweep_speed.py            # 6 runs x 3 epochs, each backend (about 5 minutes)
    .venv/bin/python benchmarks/sweep_speed.py --quick    # 1 run x 1 epoch, small data (a smoke test)

The plan: the paper 001 comparison of the Dyck chapter at 8 and 16 units (URN, LSTM and the unconstrained
RNN: 6 runs) on the paper preset's data, for a few epochs. Each backend trains the whole plan into a fresh
store (mode ``retrain``), each backend in a fresh process (so that each generates its data and imports its
modules once, as a user's run would):

* ``in-process, 1 thread`` and ``in-process, 2 threads``: one run after another in this process
  (``workers=None``), torch using 1 or 2 threads;
* ``LocalCluster, 2 workers``: a ``dask.distributed.LocalCluster`` of 2 single-threaded worker processes
  (``workers=2``; the cluster's start-up is included in the wall time).

Reported per backend: wall time, CPU time (this process's and its children's: the cluster's workers count
once they have ended), the part of it spent in the training loops (each run records its process CPU
time), the CPU utilisation ``CPU time / (wall time x cores)``, and the ratio of wall times. The numbers of
the runs are the same on every backend (tests/test_runner_dask.py checks it); their times are not.

Writes ``benchmarks/results/sweep_speed.json`` and ``book/performance/sweep_speed.md`` (the Performance page).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

from urnlib.chapters.dyck import experiment as dyck
from urnlib.results import RunStore
from urnlib.runner import run_plan

RESULTS = Path(__file__).resolve().parent / "results"
BOOK_TABLE = Path(__file__).resolve().parents[1] / "book" / "performance" / "sweep_speed.md"


def plan(quick: bool):
    config = replace(dyck.Config.paper(), units_001=[8] if quick else [8, 16],
                     models_001=["urn"] if quick else ["urn", "lstm", "arbitrary"], epochs=1 if quick else 3,
                     variants=False, seeds=[0], settings={"lr 0.01": {"lr": 0.01, "generator": "walk"}},
                     **({"train_size": 4096, "test_size": 512} if quick else {}))
    wanted = {f"{label}, lr 0.01 seed 0" for label in config.comparison_labels()}
    return [s for s in config.plan() if s.name in wanted]


#: backend -> (torch threads of this process, workers)
BACKENDS = {"in-process, 1 thread": (1, None), "in-process, 2 threads": (2, None),
            "LocalCluster, 2 workers of 1 thread": (1, 2)}


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the cluster's workers, once closed)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(name: str, specs, *, threads: int, workers) -> dict:
    torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory(prefix="sweep-") as root:
        t0, c0 = time.perf_counter(), _cpu_seconds()
        runs = run_plan(specs, RunStore(root), mode="retrain", workers=workers)
        wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    training = sum(r.record.get("cpu_time_s") or 0.0 for r in runs.values())
    cores = os.cpu_count() or 1
    return {"backend": name, "runs": len(runs), "wall_s": wall, "cpu_s": cpu, "training_cpu_s": training,
            "utilisation": cpu / (wall * cores)}


def table(rows: list[dict], specs, meta: dict) -> str:
    base = rows[0]["wall_s"]
    lines = [f"*Measured {meta['date']} on {meta['machine']} ({meta['cores']} cores), torch {meta['torch']}: "
             f"{len(specs)} runs ({', '.join(s.name for s in specs)}), "
             f"{specs[0].params['train']['epochs']} epochs each on {specs[0].params['task']['train_size']:,} "
             "strings.*", "",
             "| backend | wall time (s) | CPU time (s) | of which in the training loops | CPU utilisation "
             "| wall time vs in-process, 1 thread |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['backend']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['training_cpu_s']:.1f} | "
                     f"{100 * r['utilisation']:.0f}% | {r['wall_s'] / base:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test that writes nothing")
    parser.add_argument("--child", choices=list(BACKENDS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("URNLIB_QUIET", "1")
    specs = plan(args.quick)
    if args.child:  # one backend in a fresh process: each pays for its data and imports alike
        threads, workers = BACKENDS[args.child]
        print(json.dumps(measure(args.child, specs, threads=threads, workers=workers)))
        return 0
    rows = []
    for name in BACKENDS:
        command = [sys.executable, __file__, "--child", name, *(["--quick"] if args.quick else [])]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    meta = {"date": datetime.date.today().isoformat(), "machine": platform.machine(), "cores": os.cpu_count(),
            "torch": torch.__version__}
    text = table(rows, specs, meta)
    print(text)
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "sweep_speed.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
        BOOK_TABLE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
