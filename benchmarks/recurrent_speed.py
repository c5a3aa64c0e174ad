"""Training speed of the recurrent baselines (paper LSTM, Elman SRN, the lecture's GRU), measured in one run.

    .venv/bin/python benchmarks/recurrent_speed.py            # everything (a few minutes on 2 cores)
    .venv/bin/python benchmarks/recurrent_speed.py --quick    # three configurations, 2 rounds, no files

One training step per batch (forward, cross-entropy, backward, Adam) at each chapter's paper configuration
where these cells are trained (``notebooks/params/<chapter>.paper.yaml``): Dyck (LSTM 8, 16, 32, and 50,
128 for the issue's range; embedding 12, V = 12, batch 512 x 20 symbols, dropout 0.05; also without
dropout, and evaluation: forward, no gradient), cross-serial (LSTM 8, 16, 32, embedding 20, V = 7, 512 x 15,
dropout 0.05), agreement (LSTM 50, embedding 50, V = 10,000, two classes, 512 x 25: the sentence length
depends on the data; dropout 0.05), primer a^n b^n (SRN, GRU localist, LSTM embedding 5; 10 units, V = 5,
32 x 41), primer Elman (SRN 150 localist, V = 21, 32 x 24), primer language models (SRN and LSTM 100,
embedding 30, V = 18,000, 32 x 80: the recurrent part only, with a fixed linear functional of the states as
the loss; the 18,000-way output layer is measured elsewhere).

Compared in each, interleaved over rounds (medians): ``urnlib`` (the model as the chapters train it),
``loop`` (the same model through ``states_reference``, the Python loop it had before) and ``torch``, the fused
module of the same size (``nn.LSTM`` / ``nn.RNN`` / ``nn.GRU`` after an ``nn.Embedding`` or one-hot rows,
same readout; it has no per-sequence state dropout, and ``nn.GRU`` resets after ``U``: the nearest fused
module, not the same function). Targets for ``urnlib / torch``: LSTM <= 1.1, SRN and GRU <= 1.3. Floors:
the step's matrix products (input projection, recurrence, readout; forward and both backward products)
(a) as flops at the measured GEMM peak, (b) timed as ``torch.mm`` at the step's shapes. Where a target is
missed the run profiles both steps (``torch.profiler``: the operations with the largest excess) and, for
the LSTM with dropout, times the kernel alone with ``e`` and ``e + n`` input columns. ``--compile`` (default
in a full run) times ``torch.compile`` of the GRU loop at a^n b^n in a fresh process with an empty cache.
The script runs itself again with glibc's mmap threshold fixed (``MALLOC``; ``--system-malloc``: not).

Writes ``book/performance/recurrent_speed.md`` and ``benchmarks/results/recurrent_speed.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models.cells import GRU, SRN
from urnlib.models.recurrent import PaperLSTM

JSON = Path(__file__).resolve().parent / "results" / "recurrent_speed.json"
BOOK_TABLE = Path(__file__).resolve().parents[1] / "book" / "performance" / "recurrent_speed.md"
TARGET = {"lstm": 1.1, "srn": 1.3, "gru": 1.3}
GATES = {"lstm": 4, "srn": 1, "gru": 3}
TORCH_CELL = {"lstm": nn.LSTM, "srn": nn.RNN, "gru": nn.GRU}
# glibc returns large freed blocks to the system and maps them afresh (page faults) at every step, by a
# threshold that adapts to the process's history: up to 1.8x on a kernel, differently for each model
MALLOC = ("MALLOC_MMAP_THRESHOLD_", "4000000000")


def config(chapter, kind, n, e, V, B, T, dropout=0.0, n_out=None, mode="train", readout=True) -> dict:
    """One measured setting; ``mode``: ``train`` (a training step) or ``eval`` (forward, no gradient)."""
    return {"chapter": chapter, "kind": kind, "n": n, "e": e, "V": V, "B": B, "T": T, "dropout": dropout,
            "n_out": V if n_out is None else n_out, "mode": mode, "readout": readout}


def configs() -> list[dict]:
    out = [config("dyck", "lstm", n, 12, 12, 512, 20, 0.05) for n in (8, 16, 32, 50, 128)]
    out += [config("dyck, dropout 0", "lstm", n, 12, 12, 512, 20) for n in (8, 16, 32, 50, 128)]
    out += [config("dyck, eval", "lstm", n, 12, 12, 512, 20, 0.05, mode="eval") for n in (8, 32, 128)]
    out += [config("cross-serial", "lstm", n, 20, 7, 512, 15, 0.05) for n in (8, 16, 32)]
    out += [config("agreement", "lstm", 50, 50, 10_000, 512, 25, 0.05, n_out=2)]
    out += [config("primer a^n b^n", k, 10, 5 if k == "lstm" else None, 5, 32, 41)
            for k in ("srn", "gru", "lstm")]
    out += [config("primer Elman", "srn", 150, None, 21, 32, 24)]
    out += [config("primer LM", k, 100, 30, 18_000, 32, 80, readout=False) for k in ("srn", "lstm")]
    return out


QUICK = [("dyck", 16), ("primer a^n b^n", 10), ("primer Elman", 150)]


# --- the models
class TorchModel(nn.Module):
    """torch's fused module of the same size: embedding (or one-hot rows), nn.LSTM/RNN/GRU, readout."""

    def __init__(self, c: dict):
        super().__init__()
        self.V, self.e = c["V"], c["e"]
        self.embedding = nn.Embedding(c["V"], c["e"]) if c["e"] else None
        self.rnn = TORCH_CELL[c["kind"]](c["e"] or c["V"], c["n"], batch_first=True)
        self.readout = nn.Linear(c["n"], c["n_out"])

    def states(self, tokens):
        x = self.embedding(tokens) if self.embedding is not None else F.one_hot(tokens, self.V).float()
        return self.rnn(x)[0]

    def forward(self, tokens):
        return self.readout(self.states(tokens))


class Loop(nn.Module):
    """An urnlib model read through ``states_reference`` (the formulation before the fast paths)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model, self.states = model, model.states_reference

    def forward(self, tokens):
        return self.model.readout(self.states(tokens))


def make(label: str, c: dict) -> nn.Module:
    """``urnlib`` (the model as the chapters train it), ``loop`` (its previous loop) or ``torch``."""
    if label == "torch":
        return TorchModel(c)
    cls = {"lstm": PaperLSTM, "srn": SRN, "gru": GRU}[c["kind"]]
    model = cls(c["V"], c["n"], c["e"], dropout=c["dropout"], n_out=c["n_out"])
    return model if label == "urnlib" else Loop(model)


def step_of(model: nn.Module, c: dict):
    """One training step (or one evaluation forward) of ``model`` on a fixed batch."""
    g = torch.Generator().manual_seed(0)
    x, y = (torch.randint(size, (c["B"], c["T"]), generator=g) for size in (c["V"], c["n_out"]))
    if c["mode"] == "eval":
        model.eval()
        return torch.no_grad()(lambda: model(x))
    model.train()
    params = [p for name, p in model.named_parameters() if c["readout"] or "readout" not in name]
    opt = torch.optim.Adam(params, lr=0.01)
    probe = torch.randn(c["B"], c["T"], c["n"], generator=torch.Generator().manual_seed(1))

    def step():
        if c["readout"]:
            loss = F.cross_entropy(model(x).reshape(-1, c["n_out"]), y.reshape(-1))
        else:  # the recurrent part only: a fixed linear functional of the states
            loss = (model.states(x) * probe).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


# --- floors: the step's matrix products
def gemm_shapes(c: dict) -> list[tuple[int, int, int, int]]:
    """``(count, m, k, n)`` of every product of one step (forward and backward): input projection (none
    for a localist lookup), the recurrence (per step), the readout."""
    B, T, n, kn = c["B"], c["T"], c["n"], GATES[c["kind"]] * c["n"]
    d, V = c["e"] or 0, c["n_out"]
    backward = c["mode"] == "train"
    shapes = [(T, B, n, kn)] + ([(T, B, kn, n), (1, kn, B * T, n)] if backward else [])
    if d:
        shapes += [(1, B * T, d, kn)] + ([(1, B * T, kn, d), (1, kn, B * T, d)] if backward else [])
    if c["readout"]:
        shapes += [(1, B * T, n, V)] + ([(1, B * T, V, n), (1, V, B * T, n)] if backward else [])
    return shapes


def gemm_floor(c: dict):
    """All the step's products, as ``torch.mm`` into preallocated outputs."""
    mats = [(count, torch.randn(m, k), torch.randn(k, n_), torch.empty(m, n_))
            for count, m, k, n_ in gemm_shapes(c)]

    def run():
        for count, a, b, out in mats:
            for _ in range(count):
                torch.mm(a, b, out=out)

    return run


def flops(c: dict) -> float:
    return sum(2.0 * count * m * k * n for count, m, k, n in gemm_shapes(c))


# --- measuring
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCK["wall"]


def timed(fn, reps: int) -> float:
    t0 = clock()
    for _ in range(reps):
        fn()
    return (clock() - t0) / reps


def interleaved(fns: dict, rounds: int, reps: int) -> dict[str, float]:
    """Median seconds per call of each function, timed in turn over ``rounds`` (after a warm-up call)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(rounds):
        for label, fn in fns.items():
            times[label].append(timed(fn, reps))
    return {label: statistics.median(v) for label, v in times.items()}


def measure(c: dict, rounds: int, reps: int) -> dict[str, float]:
    """urnlib, its loop, torch's module and floor (b)."""
    torch.manual_seed(0)
    fns = {label: step_of(make(label, c), c) for label in ("urnlib", "loop", "torch")}
    return interleaved({**fns, "floor (b)": gemm_floor(c)}, rounds, reps)


def op_times(step, steps: int = 10) -> dict[str, float]:
    """Self CPU milliseconds per call of ``step`` spent in each operation (``torch.profiler``, after one
    warm-up call)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    step()
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    return {e.key: e.self_cpu_time_total / steps / 1e3 for e in prof.key_averages()}


def excess(ours: dict[str, float], theirs: dict[str, float], top: int = 6,
           names: tuple[str, str] = ("ms", "against")) -> list[dict]:
    """The total, then the ``top`` operations where ``ours`` spends the most more than ``theirs`` (each row
    gives both times, under ``names``)."""
    ops = sorted(set(ours) | set(theirs), key=lambda k: theirs.get(k, 0.0) - ours.get(k, 0.0))
    a, b = names
    return ([{"op": "total", a: sum(ours.values()), b: sum(theirs.values())}]
            + [{"op": k, a: ours.get(k, 0.0), b: theirs.get(k, 0.0)} for k in ops[:top]])


def profile(c: dict, steps: int = 10, top: int = 6) -> list[dict]:
    """Where urnlib's step spends the time torch's does not: self CPU ms per step of each operation in
    both (``torch.profiler``), the operations with the largest excess first."""
    times = {}
    for label in ("urnlib", "torch"):
        torch.manual_seed(0)
        times[label] = op_times(step_of(make(label, c), c), steps)
    return excess(times["urnlib"], times["torch"], top, ("urnlib ms", "torch ms"))


def timing_arguments(doc: str, rounds: int, reps: int) -> argparse.ArgumentParser:
    """The options every timing benchmark takes: ``--threads``, ``--rounds``, ``--reps`` (steps per timing)
    and ``--quick`` (2 rounds, no files); the description is the first paragraph of ``doc``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--reps", type=int, default=reps, help="steps per timing")
    ap.add_argument("--quick", action="store_true", help="2 rounds; no files")
    return ap


def write_report(md: str, report: dict, json_path: Path, md_path: Path, quick: bool) -> None:
    """Print the page's table; unless ``quick``, write it for the book and the report as JSON."""
    print(md)
    if quick:
        return
    for path, text in ((json_path, json.dumps(report, indent=1) + "\n"), (md_path, md)):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    print(f"wrote {md_path} and {json_path}")


def kernel_widths(c: dict, rounds: int) -> dict[str, float]:
    """torch's LSTM kernel alone (forward and backward) fed ``e`` input columns (as ``nn.LSTM``) and
    ``e + n`` (the paper LSTM in training with dropout: the state mask rides along as ``n`` columns)."""
    B, T, n, e = c["B"], c["T"], c["n"], c["e"]

    def kernel(d):
        x = torch.randn(T, B, d, requires_grad=True)
        w = [torch.randn(4 * n, d, requires_grad=True), torch.randn(4 * n, n, requires_grad=True),
             torch.zeros(4 * n, requires_grad=True), torch.zeros(4 * n)]
        h0 = torch.zeros(1, B, n)
        return lambda: torch.lstm(x, (h0, h0), w, True, 1, 0.0, True, False, False)[0].sum().backward()

    med = interleaved({f"kernel, {e} inputs": kernel(e), f"kernel, {e + n} inputs": kernel(e + n)}, rounds, 2)
    return {f"{k} ms": v * 1e3 for k, v in med.items()}


def compile_child(threads: int) -> None:
    """torch.compile of the GRU loop at the a^n b^n configuration (run in a fresh process)."""
    torch.set_num_threads(threads)
    c = next(x for x in configs() if x["chapter"] == "primer a^n b^n" and x["kind"] == "gru")
    torch.manual_seed(0)
    compiled = make("loop", c)
    compiled.states = torch.compile(compiled.states)
    step = step_of(compiled, c)
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    fns = {"compiled loop": step}
    fns.update({label: step_of(make(label, c), c) for label in ("urnlib", "loop", "torch")})
    med = interleaved(fns, 5, 5)
    print(json.dumps({"first step s": first, **{f"{k} s": v for k, v in med.items()}}))


def compile_row(threads: int, clock_name: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, __file__, "--compile-child", "--threads", str(threads),
                              "--clock", clock_name], capture_output=True, text=True, env=env)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    r = json.loads(out.stdout.strip().splitlines()[-1])
    saved = r["loop s"] - r["compiled loop s"]
    r["pays after batches"] = (r["first step s"] - r["compiled loop s"]) / saved if saved > 0 else None
    r["batches per a^n b^n run"] = 100 * -(-20 * 50 // 32)  # 100 epochs of 1,000 strings in batches of 32
    return r


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown") if Path("/proc/cpuinfo").exists() else "unknown"
    return {"cpu": cpu, "threads": torch.get_num_threads(), "torch": torch.__version__,
            "python": platform.python_version(), "date": datetime.date.today().isoformat()}


def gemm_peak_flops() -> float:
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    return 2 * 2048**3 / min(timed(lambda: a @ b, 5) for _ in range(3))


def main() -> None:
    if sys.argv[1:] == ["--markdown-only"]:  # rewrite the page's table from the last run's JSON
        BOOK_TABLE.write_text(to_markdown(json.loads(JSON.read_text())))
        return
    ap = timing_arguments(__doc__, rounds=7, reps=3)  # --reps: x4 for the small configurations
    ap.add_argument("--clock", choices=list(CLOCK), default="wall",
                    help="cpu: the process's CPU time (a busy machine, with --threads 1), not wall time")
    ap.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                    help="time torch.compile of the GRU loop (default: on, off with --quick)")
    ap.add_argument("--system-malloc", action="store_true", help="keep glibc's adaptive mmap threshold")
    ap.add_argument("--compile-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.system_malloc and MALLOC[0] not in os.environ:  # run again with the fixed threshold
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], {**os.environ, **dict([MALLOC])})
    global clock
    clock = CLOCK[args.clock]
    if args.compile_child:
        compile_child(args.threads)
        return
    torch.set_num_threads(args.threads)
    todo = configs()
    if args.quick:
        todo = [c for c in todo if (c["chapter"], c["n"]) in QUICK]
        args.rounds = 2
    info = {**machine(), "clock": args.clock, "malloc": os.environ.get(MALLOC[0], "glibc default")}
    print(f"{info['cpu']}, {args.threads} threads, torch {info['torch']}", flush=True)
    peak = gemm_peak_flops()
    rows = []
    for c in todo:
        reps = args.reps * (4 if c["B"] * c["T"] * c["n"] < 100_000 else 1)
        med = measure(c, args.rounds, reps)
        ratio = med["urnlib"] / med["torch"]
        row = {**c, "urnlib ms": med["urnlib"] * 1e3, "torch ms": med["torch"] * 1e3, "urnlib / torch": ratio,
               "loop / torch": med["loop"] / med["torch"], "loop / urnlib": med["loop"] / med["urnlib"],
               "target": TARGET[c["kind"]], "met": "yes" if ratio <= TARGET[c["kind"]] else "no",
               "floor (a) ms": flops(c) / peak * 1e3, "floor (b) ms": med["floor (b)"] * 1e3,
               "urnlib x floor (b)": med["urnlib"] / med["floor (b)"],
               "measured on": f"median of {args.rounds} x {reps} steps"}
        if row["met"] == "no":
            row["profile"] = profile(c)
            if c["kind"] == "lstm" and c["dropout"] and c["mode"] == "train":
                row["kernel"] = kernel_widths(c, args.rounds)
        rows.append(row)
        print(f"{c['chapter']:>16} {c['kind']} {c['n']:>3}: urnlib {row['urnlib ms']:.2f} ms, torch "
              f"{row['torch ms']:.2f} ms, ratio {ratio:.2f} (loop {row['loop / torch']:.2f})", flush=True)
    do_compile = (not args.quick) if args.compile is None else args.compile
    report = {"machine": info, "gemm_peak_gflops": peak / 1e9, "rows": rows,
              "compile": compile_row(args.threads, args.clock) if do_compile else None}
    write_report(to_markdown(report), report, JSON, BOOK_TABLE, args.quick)


def to_markdown(report: dict) -> str:
    m = report["machine"]
    head = (f"Measured {m['date']} on {m['cpu']}, {m['threads']} threads, torch {m['torch']}, "
            f"Python {m['python']}; GEMM peak {report['gemm_peak_gflops']:.0f} GFLOP/s; {m['clock']} time; "
            f"{MALLOC[0]} {m['malloc']}. "
            "Milliseconds per training step (forward, cross-entropy, backward, Adam; *eval*: forward only); "
            "*torch*: the fused torch module of the same size; *loop*: the Python loop urnlib used before.\n")
    rows = [{**r, "model": f"{r['kind'].upper()} {r['n']}" + (f" e{r['e']}" if r["e"] else " localist"),
             "batch x T": f"{r['B']} x {r['T']}", "dropout": r["dropout"] if r["mode"] == "train" else "eval"}
            for r in report["rows"]]
    # two tables of at most nine columns: the page's text column is 688 px wide
    cols = ["chapter", "model", "batch x T", "dropout", "urnlib ms", "torch ms", "urnlib / torch", "target",
            "met"]
    floors = ["chapter", "model", "dropout", "loop / torch", "floor (a) ms", "floor (b) ms",
              "urnlib x floor (b)"]
    md = (head + "\n### Training step\n\n" + _table(rows, cols) + "\n"
          + "\n### Against the floors, and the loop urnlib used before\n\n" + _table(rows, floors) + "\n")
    prof = [r for r in report["rows"] if r.get("profile")]
    if prof:
        md += ("\n### Where a target is missed: the operations with the largest excess over torch's step "
               "(self CPU ms per step, torch.profiler)\n\n")
        for r in prof:
            ops = "; ".join(f"`{p['op']}` {p['urnlib ms']:.2f} vs {p['torch ms']:.2f}" for p in r["profile"])
            md += f"- {r['chapter']}, {r['kind'].upper()} {r['n']}: {ops}"
            if r.get("kernel"):
                md += "; the kernel alone (forward and backward): " + ", ".join(
                    f"{k.removesuffix(' ms')} {v:.2f} ms" for k, v in r["kernel"].items())
            md += "\n"
    c = report.get("compile")
    if c and "error" not in c:
        pays = f"{c['pays after batches']:.0f}" if c["pays after batches"] is not None else "never"
        md += ("\n### torch.compile of the GRU loop (a^n b^n, GRU 10, batch 32 x 41)\n\n"
               f"First step (compiling, empty cache) {c['first step s']:.1f} s; then per step: compiled "
               f"loop {c['compiled loop s'] * 1e3:.2f} ms, urnlib (hand-written backward) "
               f"{c['urnlib s'] * 1e3:.2f} ms, loop {c['loop s'] * 1e3:.2f} ms, "
               f"nn.GRU {c['torch s'] * 1e3:.2f} ms. "
               f"Against the loop, compiling pays after {pays} batches (one a^n b^n run trains "
               f"{c['batches per a^n b^n run']}).\n")
    return md + (f"\n### torch.compile of the GRU loop\n\nFailed: {c['error']}\n" if c and "error" in c
                 else "")


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-2 else f"{v:.2f}"
    return "" if v is None else str(v)


def _table(rows: list[dict], cols: list[str]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    return "\n".join(lines + ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows])


if __name__ == "__main__":
    main()
