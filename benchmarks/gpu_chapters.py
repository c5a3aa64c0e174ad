"""The cost of the book's paper preset on one GPU, per chapter: CPU-hours of the stored runs times the GPU's
share of a training epoch, measured on sampled runs of each chapter's plan.

Three steps (the stored runs are on the machine that built the book; the GPU may be elsewhere):

    .venv/bin/python benchmarks/gpu_chapters.py select  --out sample.json          # here: what to measure
    python3 benchmarks/gpu_chapters.py measure --sample sample.json --out gpu.json  # on the GPU machine
    .venv/bin/python benchmarks/gpu_chapters.py combine --sample sample.json --gpu gpu.json  # here: the table
        [--plan plan.json]   # and a check: a chapter's plan trained on the GPU (benchmarks/gpu_plan.py)

The committed inputs of the Performance page's table: ``benchmarks/results/gpu_chapters_sample.json``,
``gpu_chapters_measured.json`` and ``gpu_primer_plan.json``.

``select`` takes, in each chapter that trains, the labels (model and setting) holding the most CPU time in the
store, and the first run of each. ``measure`` trains each sampled run on the GPU through its chapter's own
training function for two epochs where they fit in ``--budget`` seconds (the second epoch's seconds,
evaluation
included, against the stored CPU run's median epoch), else for ``--batches`` batches after a warm-up (the
median seconds per batch times the batches of an epoch, against the CPU epoch: training only on the GPU side,
so that estimate leaves out the GPU's share of the per-epoch evaluation). Nothing is stored. ``combine``
multiplies each run's stored CPU time by its label's ratio (unsampled labels: the chapter's median ratio) and
writes ``benchmarks/results/gpu_chapters.json``: GPU-hours per chapter beside the CPU-hours. A chapter the GPU
machine could not run (its data needs a package that machine lacks) is listed with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import statistics
import sys
import time
import traceback
from pathlib import Path
from urnlib.chapters import registry

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RESULT = REPO / "benchmarks" / "results" / "gpu_chapters.json"
MARKDOWN = REPO / "book" / "performance" / "gpu_chapters.md"


def _records(chapter) -> dict[str, dict]:
    """``{key: record}`` of the chapter's paper plan, read from the store."""
    module = registry.get(chapter).experiment
    config = module.Config.load("paper")
    out = {}
    for spec in config.plan():
        record = Path(config.store_path()) / spec.experiment / spec.key / "record.json"
        if record.is_file():
            out[spec.key] = {"spec": spec, "record": json.loads(record.read_text())}
    return out


def _epoch_seconds(record: dict) -> float | None:
    seconds = [row["seconds"] for row in record.get("history", []) if "seconds" in row]
    return statistics.median(seconds) if seconds else None


def _cpu_seconds(record: dict) -> dict:
    """A stored run's CPU seconds (``cpu_s``: its training process's CPU time; its wall time for a run stored
    before CPU time was recorded, ``cpu_from`` says which) and an epoch's CPU seconds (``cpu_epoch_s``: the
    median epoch's wall seconds times the run's CPU time over its wall time, so that a run slowed by a busy
    machine or sped up by a second thread gives the CPU time its epochs took)."""
    wall = float(record.get("wall_time_s") or 0)
    cpu = record.get("cpu_time_s")
    epoch = _epoch_seconds(record)
    share = float(cpu) / wall if cpu is not None and wall > 0 else 1.0
    return {"cpu_s": float(cpu) if cpu is not None else wall, "wall_s": wall,
            "cpu_from": "cpu" if cpu is not None else "wall", "cpu_epoch_s": epoch * share if epoch else None}


def select(per_chapter: int) -> dict:
    from urnlib.chapters import registry as chapters

    sample = {"date": datetime.date.today().isoformat(), "chapters": {}}
    for chapter in chapters.names(trains=True):
        found = _records(chapter)
        by_label: dict[str, list] = {}
        for key, item in found.items():
            label = item["spec"].coords.get("label", item["spec"].name)
            by_label.setdefault(f"{item['spec'].experiment}: {label}", []).append((key, item))
        runs = []
        for group, items in by_label.items():
            for key, item in items:
                runs.append({"key": key, "group": group, "neural": "train" in item["spec"].params,
                             **_cpu_seconds(item["record"])})
        totals = {g: sum(r["cpu_s"] for r in runs if r["group"] == g) for g in by_label}
        neural = [g for g in sorted(totals, key=totals.get, reverse=True)
                  if any(r["neural"] and r["cpu_epoch_s"] for r in runs if r["group"] == g)]
        picks = []
        for g in neural[:per_chapter]:
            first = next(r for r in runs if r["group"] == g and r["cpu_epoch_s"])
            picks.append(first)
        sample["chapters"][chapter] = {"runs": runs, "measure": picks}
    return sample


class _Enough(Exception):
    pass


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timing_fit(real_fit, budget: float, batches: int, warm: int, result: dict, device: str):
    """``fit`` with a callback that times batches and epochs and stops training when it has enough."""
    from urnlib.callbacks import Callback

    class Timer(Callback):
        def __init__(self, n_batches: int):
            self.n_batches, self.start, self.marks, self.epochs = n_batches, time.perf_counter(), [], []

        def on_batch_end(self, model, epoch, batch, loss):
            _sync(device)
            self.marks.append(time.perf_counter())
            if epoch == 0 and time.perf_counter() - self.start > budget and len(self.marks) > warm + batches:
                raise _Enough

        def on_epoch_end(self, model, row):
            self.epochs.append(float(row.get("seconds", math.nan)))
            if len(self.epochs) >= 2:
                raise _Enough
            return False

    def fit(model, train, test, config, **kwargs):
        timer = Timer(math.ceil(len(train) / config.batch_size))
        result["timer"] = timer
        kwargs["callbacks"] = [*kwargs.get("callbacks", ()), timer]
        return real_fit(model, train, test, config, **kwargs)

    return fit


def measure(sample: dict, budget: float, batches: int, warm: int, only: list[str] | None,
            device: str = "cuda", save=None) -> dict:
    import torch

    import urnlib.train as train_module
    from urnlib.train import default_device

    gpu = torch.cuda.get_device_name() if device.startswith("cuda") else "none (a smoke run on the CPU)"
    out = {"machine": {"gpu": gpu, "device": device, "torch": torch.__version__, "cuda": torch.version.cuda,
                       "date": datetime.date.today().isoformat()},
           "budget_s": budget, "batches": batches, "chapters": {}}
    real_fit = train_module.fit
    for chapter in only or list(sample["chapters"]):
        info = sample["chapters"][chapter]
        got = out["chapters"][chapter] = {"runs": []}
        try:
            module = registry.get(chapter).experiment
            plan = {s.key: s for s in module.Config.load("paper", device=device).plan()}
        except Exception as err:  # the chapter's data or packages are not on this machine
            got["error"] = f"{type(err).__name__}: {err}"
            print(f"{chapter}: not measured ({got['error'][:200]})", flush=True)
            continue
        for pick in info["measure"]:
            spec = plan[pick["key"]]
            result: dict = {}
            fit = _timing_fit(real_fit, budget, batches, warm, result, device)
            patched = [m for m in list(sys.modules.values())
                       if getattr(m, "__name__", "").startswith("urnlib")
                       and getattr(m, "fit", None) is real_fit]
            row = {"key": pick["key"], "group": pick["group"], "cpu_epoch_s": pick["cpu_epoch_s"]}
            start = time.perf_counter()
            try:
                for m in patched:
                    m.fit = fit
                with default_device(device), contextlib.suppress(_Enough):
                    spec.trainer()(spec, None)
            except Exception as err:
                row["error"] = f"{type(err).__name__}: {err}"
                traceback.print_exc(limit=-3)
            finally:
                for m in patched:
                    m.fit = real_fit
            timer = result.get("timer")
            row["wall_s"] = time.perf_counter() - start
            if timer is not None and "error" not in row:
                if len(timer.epochs) >= 2:
                    row |= {"mode": "second epoch", "gpu_epoch_s": timer.epochs[1]}
                else:
                    steps = [b - a for a, b in zip(timer.marks[warm:], timer.marks[warm + 1:])]
                    row |= {"mode": f"{len(steps)} batches", "gpu_batch_s": statistics.median(steps),
                            "batches_per_epoch": timer.n_batches,
                            "gpu_epoch_s": statistics.median(steps) * timer.n_batches}
                row["ratio"] = row["gpu_epoch_s"] / pick["cpu_epoch_s"]
            print(f"{chapter} / {pick['group']}: {row.get('mode', '-')}, GPU epoch "
                  f"{row.get('gpu_epoch_s', math.nan):.2f} s against CPU {pick['cpu_epoch_s']:.2f} s "
                  f"(ratio {row.get('ratio', math.nan):.3f}) {row.get('error', '')[:200]}", flush=True)
            got["runs"].append(row)
            if save:
                save(out)  # after every run: a time limit cuts the measurement short, not its record
    return out


def _ratio(row: dict, runs: dict[str, dict]) -> float:
    """A measured run's GPU epoch over its CPU epoch in CPU seconds (the sample's, where the sample holds that
    run: a measurement made against an older sample's wall-time epoch is read against the CPU time)."""
    cpu_epoch = (runs.get(row["key"]) or {}).get("cpu_epoch_s")
    return row["gpu_epoch_s"] / cpu_epoch if cpu_epoch and "gpu_epoch_s" in row else row["ratio"]


def combine(sample: dict, gpu: dict) -> dict:
    table = {"gpu": gpu["machine"], "sample_date": sample.get("date"), "chapters": {}}
    for chapter, info in sample["chapters"].items():
        runs = info["runs"]
        cpu_h = sum(r["cpu_s"] for r in runs) / 3600
        measured = gpu["chapters"].get(chapter, {})
        by_key = {r["key"]: r for r in runs}
        measured = {**measured, "runs": [{**r, "ratio": _ratio(r, by_key)} if "ratio" in r else r
                                         for r in measured.get("runs", [])]}
        ratios = {r["group"]: r["ratio"] for r in measured["runs"] if "ratio" in r}
        entry = {"cpu_hours": cpu_h, "runs": len(runs), "measured": measured["runs"],
                 "wall_runs": sum(r.get("cpu_from") == "wall" for r in runs)}
        if not ratios:
            entry["gpu_hours"] = None
            entry["why"] = measured.get("error") or "no sampled run was measured"
        else:
            fallback = statistics.median(ratios.values())
            entry["gpu_hours"] = sum(r["cpu_s"] * (ratios.get(r["group"], fallback) if r["neural"] else 1.0)
                                     for r in runs) / 3600
            entry["cpu_only_hours"] = sum(r["cpu_s"] for r in runs if not r["neural"]) / 3600
        table["chapters"][chapter] = entry
    return table


def check_plan(table: dict, sample: dict, plan: dict) -> dict:
    """A chapter's plan trained on the GPU (``benchmarks/gpu_plan.py``'s record, complete or cut short): each
    finished run's
    training seconds there, against what the estimate predicts for it (its stored CPU seconds times its
    label's
    ratio)."""
    chapter = plan["chapter"]
    runs = {r["key"]: r for r in sample["chapters"][chapter]["runs"]}
    entry = table["chapters"][chapter]
    ratios = {r["group"]: r["ratio"] for r in entry["measured"] if "ratio" in r}
    fallback = statistics.median(ratios.values())
    measured = predicted = 0.0
    for r in plan["runs"]:
        stored = runs[r["key"]]
        measured += r["wall_s"] or 0.0
        predicted += stored["cpu_s"] * (ratios.get(stored["group"], fallback) if stored["neural"] else 1.0)
    return {"chapter": chapter, "runs_done": len(plan["runs"]), "runs_planned": plan["planned"],
            "elapsed_s": plan["elapsed_s"], "complete": plan["done"], "training_s": measured,
            "predicted_training_s": predicted}


def to_markdown(table: dict) -> str:
    gpu = table["gpu"]
    wall = sum(e.get("wall_runs", 0) for e in table["chapters"].values())
    lines = [f"*Measured {gpu['date']} on one {gpu['gpu']}, torch {gpu['torch']}, CUDA {gpu['cuda']}; "
             f"CPU hours from the records of the runs stored on {table.get('sample_date') or gpu['date']}: "
             "their training process's CPU time"
             + (f" ({wall} run{'s' * (wall != 1)} stored before CPU time was recorded count their wall time)"
                if wall else "")
             + "; a sampled run's ratio is its GPU epoch over its CPU epoch in CPU seconds.*", "",
             "| chapter | runs | CPU hours (stored) | GPU hours (estimated) | GPU / CPU, sampled runs |",
             "|---|---|---|---|---|"]
    for chapter, e in table["chapters"].items():
        ratios = [r["ratio"] for r in e["measured"] if "ratio" in r]
        why = e.get("why", "")
        why = "its corpus was not on the GPU machine" if why.startswith("DataError") else why[:90]
        spread = (f"{min(ratios):.3f} to {max(ratios):.3f} ({len(ratios)} runs)" if ratios
                  else f"not measured: {why}")
        gpu_h = "-" if e["gpu_hours"] is None else f"{e['gpu_hours']:.2f}"
        lines.append(f"| {chapter} | {e['runs']} | {e['cpu_hours']:.2f} | {gpu_h} | {spread} |")
    known = [e for e in table["chapters"].values() if e["gpu_hours"] is not None]
    lines.append(f"| all measured chapters | {sum(e['runs'] for e in known)} | "
                 f"{sum(e['cpu_hours'] for e in known):.2f} | {sum(e['gpu_hours'] for e in known):.2f} | |")
    for c in table.get("checks", []):
        done = "(all)" if c["complete"] else "(the call ended there)"
        lines += ["", f"**Check against a whole plan.** The {c['chapter']} chapter's paper plan, trained on "
                  f"a GPU of the same kind in one process: {c['runs_done']} of its {c['runs_planned']} runs "
                  f"{done} in {c['elapsed_s']:.0f} s, of which {c['training_s']:.0f} s training, where the "
                  f"estimate above predicts {c['predicted_training_s']:.0f} s for the same runs "
                  f"({c['training_s'] / c['predicted_training_s']:.1f} times less than measured: the sampled "
                  "epochs leave out part of the per-epoch evaluation, so read the GPU hours above as a "
                  f"lower bound), and the remaining {c['elapsed_s'] - c['training_s']:.0f} s went to what no "
                  "training time counts (building each run's data, scoring each model after training)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    s = sub.add_parser("select")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--per-chapter", type=int, default=2)
    m = sub.add_parser("measure")
    m.add_argument("--sample", type=Path, required=True)
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--budget", type=float, default=15.0, help="seconds per run before it stops at a batch")
    m.add_argument("--batches", type=int, default=20)
    m.add_argument("--warm", type=int, default=5)
    m.add_argument("--only", help="comma-separated chapters, measured in this order (default: all)")
    m.add_argument("--device", default="cuda", help="cpu: a smoke run of this script where there is no GPU")
    c = sub.add_parser("combine")
    c.add_argument("--sample", type=Path, required=True)
    c.add_argument("--gpu", type=Path, required=True)
    c.add_argument("--out", type=Path, default=RESULT)
    c.add_argument("--plan", type=Path, action="append", default=[],
                   help="a chapter's plan trained on the GPU (benchmarks/gpu_plan.py's output), to check the "
                        "estimate against")
    c.add_argument("--markdown", type=Path, default=MARKDOWN)
    args = ap.parse_args()
    if args.step == "select":
        args.out.write_text(json.dumps(select(args.per_chapter), indent=1) + "\n")
        print(f"wrote {args.out}")
    elif args.step == "measure":
        import torch

        if args.device.startswith("cuda") and not torch.cuda.is_available():
            print("gpu_chapters measure: no CUDA GPU here: nothing measured (--device cpu: a smoke run).")
            return
        only = args.only.split(",") if args.only else None
        def save(result):
            args.out.write_text(json.dumps(result, indent=1) + "\n")

        result = measure(json.loads(args.sample.read_text()), args.budget, args.batches, args.warm, only,
                         args.device, save)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
    else:
        sample = json.loads(args.sample.read_text())
        table = combine(sample, json.loads(args.gpu.read_text()))
        table["checks"] = [check_plan(table, sample, json.loads(p.read_text())) for p in args.plan]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(table, indent=1) + "\n")
        args.markdown.write_text(to_markdown(table))
        for chapter, e in table["chapters"].items():
            gpu_h = "-" if e["gpu_hours"] is None else f"{e['gpu_hours']:.2f}"
            print(f"{chapter:<18} CPU {e['cpu_hours']:6.2f} h   GPU {gpu_h:>6} h   {e.get('why', '')[:80]}")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
