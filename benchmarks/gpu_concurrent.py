"""Training speed of runs that shared one GPU, read from their progress bars, beside the same models on one
CPU core: what running many runs at once on one GPU gives each run.

    python3 benchmarks/gpu_concurrent.py OUT.json --md TABLE.md --gpu LOG... --cpu LOG...

Each log is a training process's output (tqdm bars, ``<label> epoch E: ... N batch/s``). A run's speed is the
median over its epochs of the rate its bar showed at the epoch's last update (on the GPU the first epoch is
left out: it captures the CUDA graphs); runs of one model are pooled: its label without the seed and
without a ``, lr X`` part (the learning rate does not change a step's cost). Writes OUT.json and TABLE.md
(the table the Performance page includes). The logs of 2026-11-27 are in
``benchmarks/results/gpu_concurrent/`` (unpack them first).
"""

import argparse
import json
import re
import statistics
from pathlib import Path

BAR = re.compile(r"^(?P<label>.+?) seed (?P<seed>\d+) epoch (?P<epoch>\d+):.*?(?P<rate>[\d.]+)batch/s")
RATE = re.compile(r", lr [\d.e-]+")


def speeds(path: Path, first: int) -> dict[str, list[float]]:
    """``{model label: [batches per second of each epoch from ``first`` on, of every seed]}`` of one log."""
    last: dict[tuple[str, str, int], float] = {}
    for line in path.read_text(errors="replace").replace("\r", "\n").splitlines():
        m = BAR.search(line.strip())
        if m and int(m["epoch"]) >= first:
            last[(RATE.sub("", m["label"]), m["seed"], int(m["epoch"]))] = float(m["rate"])
    out: dict[str, list[float]] = {}
    for (label, _, _), rate in sorted(last.items()):
        out.setdefault(label, []).append(rate)
    return out


def pooled(paths: list[Path], first: int) -> dict[str, dict]:
    rates: dict[str, list[float]] = {}
    for path in paths:
        for label, values in speeds(path, first).items():
            rates.setdefault(label, []).extend(values)
    return {label: {"batches_per_s": round(statistics.median(v), 2), "epochs": len(v)}
            for label, v in sorted(rates.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--gpu", type=Path, nargs="+", required=True, help="logs of the runs that shared the GPU")
    ap.add_argument("--cpu", type=Path, nargs="*", default=[], help="logs of runs on one CPU core each")
    ap.add_argument("--md", type=Path, required=True, help="the table, as Markdown")
    ap.add_argument("--note", default="", help="where and how the runs ran")
    args = ap.parse_args()
    gpu, cpu = pooled(args.gpu, first=2), pooled(args.cpu, first=1)
    result = {"note": args.note, "processes_on_the_gpu": len(args.gpu), "gpu": gpu, "cpu": cpu}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    def epochs(n: int) -> str:
        return f"{n} epoch" + ("s" if n != 1 else "")

    rows = ["| model | batches/s, each of the runs sharing the GPU | batches/s, one CPU core | GPU / CPU |",
            "|---|---|---|---|"]
    for label, g in gpu.items():
        c = cpu.get(label)
        ratio = f"{g['batches_per_s'] / c['batches_per_s']:.2f}" if c else "-"
        rows.append(f"| {label} | {g['batches_per_s']:.1f} ({epochs(g['epochs'])}) | "
                    f"{c['batches_per_s']:.1f} ({epochs(c['epochs'])}) |" if c else
                    f"| {label} | {g['batches_per_s']:.1f} ({epochs(g['epochs'])}) | - |")
        rows[-1] += f" {ratio} |"
    args.md.write_text("\n".join(rows) + "\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
