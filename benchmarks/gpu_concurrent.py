"""Training speed of runs that shared one GPU, read from their progress bars, beside the same models on one
CPU core: what running many runs at once on one GPU gives each run.

    python3 benchmarks/gpu_concurrent.py OUT.json --md TABLE.md --gpu N LOG... [--gpu N LOG...] --cpu LOG...

Each log is a training process's output (tqdm bars, ``<label> epoch E: ... N batch/s``). A run's speed is the
median over its epochs of the rate its bar showed at the epoch's last update (on the GPU each run's first
epoch in the log is left out: it captures the CUDA graphs); ``--gpu N LOG...`` once per call, N the runs that
shared the GPU in it; runs of one model are pooled: its label without the seed and
without a ``, lr X`` part (the learning rate does not change a step's cost). Writes OUT.json and TABLE.md
(the table the Performance page includes). The logs are in ``benchmarks/results/gpu_concurrent/`` (unpack them
first): 2026-11-27, 15 and 3 runs at once, and later that day 6 (beside 9 CPU-only runs on the same
machine)::

    python3 benchmarks/gpu_concurrent.py benchmarks/results/gpu_concurrent/speeds.json \
        --md book/performance/gpu_concurrent.md --gpu 15 15/logs/*.log --gpu 3 3/logs/*.log \
        --gpu 6 6/logs/large*.log --cpu benchmarks/results/gpu_concurrent/cpu/*.log
"""

import argparse
import json
import re
import statistics
from pathlib import Path

BAR = re.compile(r"^(?P<label>.+?) seed (?P<seed>\d+) epoch (?P<epoch>\d+):.*?(?P<rate>[\d.]+)batch/s")
RATE = re.compile(r", lr [\d.e-]+")


def speeds(path: Path, skip_first: bool) -> dict[str, list[float]]:
    """``{model label: [batches per second of each epoch, of every seed]}`` of one log; with ``skip_first``,
    without each run's first epoch in the log (on a GPU it captures the CUDA graphs; a resumed run's first
    epoch in the log is not its epoch 1)."""
    last: dict[tuple[str, str, int], float] = {}
    for line in path.read_text(errors="replace").replace("\r", "\n").splitlines():
        m = BAR.search(line.strip())
        if m:
            last[(RATE.sub("", m["label"]), m["seed"], int(m["epoch"]))] = float(m["rate"])
    first = {}
    for label, seed, epoch in last:
        first[(label, seed)] = min(epoch, first.get((label, seed), epoch))
    out: dict[str, list[float]] = {}
    for (label, seed, epoch), rate in sorted(last.items()):
        if not (skip_first and epoch == first[(label, seed)]):
            out.setdefault(label, []).append(rate)
    return out


def pooled(paths: list[Path], skip_first: bool) -> dict[str, dict]:
    rates: dict[str, list[float]] = {}
    for path in paths:
        for label, values in speeds(path, skip_first).items():
            rates.setdefault(label, []).extend(values)
    return {label: {"batches_per_s": round(statistics.median(v), 2), "epochs": len(v)}
            for label, v in sorted(rates.items())}


def _epochs(n: int) -> str:
    return f"{n} epoch" + ("s" if n != 1 else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--gpu", nargs="+", action="append", required=True, metavar="N LOG",
                    help="how many runs shared the GPU, then their logs (once per call)")
    ap.add_argument("--cpu", type=Path, nargs="*", default=[], help="logs of runs on one CPU core each")
    ap.add_argument("--md", type=Path, required=True, help="the table, as Markdown")
    ap.add_argument("--note", default="", help="where and how the runs ran")
    args = ap.parse_args()
    calls = {int(group[0]): pooled([Path(g) for g in group[1:]], skip_first=True) for group in args.gpu}
    cpu = pooled(args.cpu, skip_first=False)
    result = {"note": args.note, "gpu": {f"{n} runs at once": v for n, v in calls.items()}, "cpu": cpu}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    shared = sorted(calls, reverse=True)
    rows = ["| model | " + " | ".join(f"batches/s, each of {n} runs sharing the GPU" for n in shared)
            + " | batches/s, one CPU core |", "|---" * (len(shared) + 2) + "|"]
    labels = sorted({label for v in calls.values() for label in v})
    for label in labels:
        cells = [f"{calls[n][label]['batches_per_s']:.1f} ({_epochs(calls[n][label]['epochs'])})"
                 if label in calls[n] else "-" for n in shared]
        c = cpu.get(label)
        cells.append(f"{c['batches_per_s']:.1f} ({_epochs(c['epochs'])})" if c else "-")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    args.md.write_text("\n".join(rows) + "\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
