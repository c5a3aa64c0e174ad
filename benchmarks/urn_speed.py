"""URN training speed and memory, and compositional (parallel prefix) evaluation, measured in one run.

    .venv/bin/python benchmarks/urn_speed.py            # everything (about 10 minutes on 2 cores)
    .venv/bin/python benchmarks/urn_speed.py --quick    # n = 16, 50 only, fewer rounds (a smoke test)

Training step = what ``urnlib.train.fit`` does per minibatch (forward, cross-entropy, backward, Adam)
on the Dyck chapter's paper configuration: batches of 512 strings of 20 symbols, V = 12, 200 batches per
epoch (102,400 strings). Seconds per epoch are the median per-batch time over several interleaved rounds
times 200 (said so in the table). Compared, at each n:

* ``URN (urnlib)``: 3-TURN and Full URN as the chapters train them (Q once per symbol per batch, by
  scaling and squaring; the recurrence by the compiled kernel of ``urnlib/models/scan_kernel.py``);
* ``URN, grouped layout``: the same with the recurrence grouped by symbol in padded blocks of batched
  products (``urnlib/models/scan.py``, the path without a C++ compiler);
* ``URN, Q per token``: the authors' design, a ``(B, n, n)`` exponential at every time step (one
  batch only, after no warm-up: it is slow; extrapolated to the epoch, and said so);
* ``URN, autograd loop``: the previous urnlib formulation (Q once per symbol, one GEMM against all V
  matrices side by side per step, autograd through the loop), kept here for the record;
* ``nn.LSTM``: ``torch.nn.LSTM`` with the same hidden size, embedding 12, linear readout;
* the *floor*: the matrix-vector products the recurrence needs (forward ``h W``, backward ``g W^T`` and
  ``h^T g``: ``6 n^2`` flops per token), (a) at this machine's measured GEMM peak and (b) timed as
  the same recurrence with one shared matrix (three ``(B, n) x (n, n)`` GEMMs per step, no symbol
  selection at all).

Rows "recurrence only" time the states alone (forward and backward, matrices given, state dropout), by
the kernel, by the grouped layout, and (n = 50) by ``torch.compile`` of the plain loop (its compile
time said in the row). The kernel's one-time build is timed in a subprocess with an empty cache.

Peak memory: each (model, n) runs two training steps in a fresh subprocess; reported is the rise of
the process's peak resident memory over its resident memory before the first step.

Compositional evaluation: states of a URN (n = 50, k = 3) on 4 random sequences of length 10^2 .. 10^5,
by the plain loop (a gather and a bmm per step), by the scan (``states``: the kernel), and by the
chunked parallel prefix product (``states_parallel``), three interleaved runs each (every run's ratio
is reported), with their largest disagreement.

Writes ``book/performance/urn_speed.md`` (included by the book's Performance page) and
``benchmarks/results/urn_speed.json``. ``--march x86-64-v3`` builds the kernel for that target instead of
this CPU (``URNLIB_SCAN_KERNEL_MARCH``: on an AVX-512 machine, the AVX2 code an AVX2 machine runs) and
writes ``urn_speed_avx2.md`` / ``.json``; ``--speed-only`` times training alone (no memory, no Q per token,
no compositional evaluation) and names its files after the kernel's code the same way. Every report
records the CPU's instruction sets and the kernel's target and vector width.
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

from urn_baselines import AutogradLoopURN, GroupedURN, PerTokenURN, TorchLSTM

from urnlib.languages import dyck
from urnlib.models import URN, build_model
from urnlib.models.scan import matrix_scan, matrix_scan_reference
from urnlib.models.scan_kernel import instruction_sets, kernel, march
from urnlib.models.unitary import _dropout_mask

RESULTS = Path(__file__).resolve().parent / "results"  # the full report (JSON)
BOOK_TABLE = Path(__file__).resolve().parents[1] / "book" / "performance" / "urn_speed.md"  # in the book
BATCHES_PER_EPOCH = 200  # 102,400 strings / 512
V = len(dyck.DyckVocab())


# --------------------------------------------------------------------------- #
# the formulations compared
# --------------------------------------------------------------------------- #
def make(label: str, n: int) -> nn.Module:
    k = 3
    return {
        "3-TURN (urnlib)": lambda: URN(V, n, k),
        "Full URN (urnlib)": lambda: URN(V, n, None),
        "Full URN, grouped layout": lambda: GroupedURN(V, n, None),
        "3-TURN, Q per token": lambda: PerTokenURN(V, n, k),
        "Full URN, autograd loop": lambda: AutogradLoopURN(V, n, None),
        "nn.LSTM": lambda: TorchLSTM(n),
        "LSTM (paper cell)": lambda: build_model("lstm", V, n=n, embedding_size=12),
    }[label]()


FAST = ["3-TURN (urnlib)", "Full URN (urnlib)", "Full URN, grouped layout", "Full URN, autograd loop",
        "nn.LSTM", "LSTM (paper cell)"]
SLOW = ["3-TURN, Q per token"]


def dyck_batch():
    x, y = dyck.encode(dyck.generate(512, 10, max_depth=3, rng=0), dyck.DyckVocab())
    return x, y


def training_step(model: nn.Module, x, y):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step():
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def timed(fn, reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


# --------------------------------------------------------------------------- #
# floors
# --------------------------------------------------------------------------- #
def gemm_peak_flops() -> float:
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    return 2 * 2048**3 / min(timed(lambda: a @ b, 5) for _ in range(3))


def shared_matrix_recurrence(n: int, B: int, T: int):
    """T steps of h W forward, g W^T and h^T g backward, one shared matrix: (B, n) x (n, n) GEMMs."""
    W, h, dW = torch.randn(n, n), torch.randn(B, n), torch.zeros(n, n)
    o, g = torch.empty(B, n), torch.empty(B, n)

    def run():
        for _ in range(T):
            torch.mm(h, W, out=o)
        for _ in range(T):
            torch.mm(o, W.t(), out=g)
            dW.addmm_(h.t(), g)

    return run


def recurrence_only(n: int, x, method: str = "auto"):
    """Forward + backward of the URN's states alone (matrices of the symbols read given, state
    dropout), as urnlib computes them (``method``: see ``matrix_scan``; ``"compiled loop"``:
    ``torch.compile`` of the plain loop)."""
    model = URN(V, n, None)
    present = torch.bincount(x.reshape(-1), minlength=V) > 0
    M = model.matrices(present.nonzero().squeeze(1)).detach().requires_grad_()
    x = (torch.cumsum(present, 0) - 1)[x]
    mask = _dropout_mask((x.shape[0], n), 0.05, M)
    scan = (torch.compile(matrix_scan_reference, dynamic=False) if method == "compiled loop"
            else lambda *a: matrix_scan(*a, method=method))

    def run():
        H = scan(M, model.h0, x, mask)
        H.backward(torch.ones_like(H))

    return run


def kernel_build_seconds() -> float | None:
    """The kernel's build from an empty cache, in a subprocess (``None`` if it cannot be built)."""
    code = ("import time; t = time.perf_counter(); from urnlib.models.scan_kernel import kernel; "
            "assert kernel() is not None; print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, "TORCH_EXTENSIONS_DIR": tmp})
    return float(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else None


# --------------------------------------------------------------------------- #
# memory, in a subprocess
# --------------------------------------------------------------------------- #
def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(label: str, n: int, threads: int) -> None:
    """Peak resident memory of two training steps, above what the process held before them.

    ``VmHWM`` (the peak resident set) is reset through ``/proc/self/clear_refs`` just before the steps;
    ``getrusage``'s ``ru_maxrss`` would not do: it survives ``exec`` and starts at the parent's size.
    """
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x, y = dyck_batch()
    step = training_step(make(label, n), x, y)
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current resident set
    before = _status_kb("VmHWM")
    step()
    step()
    print(json.dumps({"peak_rise_mb": (_status_kb("VmHWM") - before) / 1024}))


def peak_memory_mb(label: str, n: int, threads: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--memory-of", label, str(n), "--threads", str(threads)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_rise_mb"]


# --------------------------------------------------------------------------- #
# compositional evaluation
# --------------------------------------------------------------------------- #
def prefix_rows(lengths: list[int], batch: int = 4, runs: int = 3) -> list[dict]:
    """Plain loop, scan and parallel prefix on the same sequences, interleaved, ``runs`` times."""
    torch.manual_seed(0)
    model = URN(V, 50, 3).eval()
    M = model.matrices().detach()
    rows = []
    for T in lengths:
        tokens = torch.randint(V, (batch, T))
        t = {"plain": [], "scan": [], "parallel": []}
        with torch.no_grad():
            for _ in range(runs):
                t0 = time.perf_counter()
                plain = matrix_scan_reference(M, model.h0, tokens)
                t["plain"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                scanned = model.states(tokens)
                t["scan"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                parallel = model.states_parallel(tokens)
                t["parallel"].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in t.items()}
        ratios = [p / q for p, q in zip(t["plain"], t["parallel"])]
        rows.append({
            "length": T, "plain loop s": med["plain"], "scan s": med["scan"],
            "parallel prefix s": med["parallel"],
            "plain / parallel": med["plain"] / med["parallel"],
            "plain / parallel, each run": " ".join(f"{r:.2f}" for r in ratios),
            "plain / scan": med["plain"] / med["scan"],
            "max |parallel - plain|": float((parallel - plain).abs().max()),
            "max |scan - plain|": float((scanned - plain).abs().max()),
        })
        print(f"  prefix T={T}: plain {med['plain']:.3f}s scan {med['scan']:.4f}s "
              f"parallel {med['parallel']:.4f}s "
              f"(plain / parallel per run: {rows[-1]['plain / parallel, each run']})", flush=True)
    return rows


# --------------------------------------------------------------------------- #
def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    built = kernel()
    return {"cpu": cpu, "threads": torch.get_num_threads(), "torch": torch.__version__,
            "python": platform.python_version(), "date": datetime.date.today().isoformat(),
            "instruction sets": instruction_sets(), "kernel target": march(),
            "kernel vector bytes": built.vector_bytes() if built is not None else None}


def kernel_code(m: dict) -> str:
    """The instruction set the kernel's code uses, in words (from its vector width)."""
    width = m.get("kernel vector bytes")
    return {64: "AVX-512", 32: "AVX2"}.get(width, "no kernel") if width else "no kernel"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 50, 128])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lengths", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    ap.add_argument("--quick", action="store_true", help="n = 16, 50; 2 rounds; lengths up to 10^4; no files")
    ap.add_argument("--march", default="", help="build the scan kernel for this -march target (e.g. "
                    "x86-64-v3: AVX2) instead of this CPU; the files written are named after its code")
    ap.add_argument("--speed-only", action="store_true", help="training speed only: no peak memory, no Q per "
                    "token, no torch.compile, no compositional evaluation (a quick comparison)")
    ap.add_argument("--memory-of", nargs=2, metavar=("LABEL", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.march:  # before the kernel is built; the memory subprocesses inherit it
        os.environ["URNLIB_SCAN_KERNEL_MARCH"] = args.march
    if args.memory_of:
        memory_child(args.memory_of[0], int(args.memory_of[1]), args.threads)
        return
    if args.quick:
        args.sizes, args.rounds, args.lengths = [16, 50], 2, [100, 1_000, 10_000]
    torch.set_num_threads(args.threads)
    info = machine()
    print(f"{info['cpu']} ({' '.join(info['instruction sets'])}), {args.threads} threads, "
          f"torch {info['torch']}; kernel built for {info['kernel target']}: {kernel_code(info)} code",
          flush=True)
    peak = gemm_peak_flops()
    x, y = dyck_batch()
    B, T = x.shape
    speed = []
    for n in args.sizes:
        torch.manual_seed(0)
        steps = {label: training_step(make(label, n), x, y) for label in FAST}
        extra = {"floor: shared-matrix recurrence": shared_matrix_recurrence(n, B, T)}
        if kernel() is not None:  # no compiler: the kernel rows are left out
            extra["recurrence only (kernel)"] = recurrence_only(n, x, "kernel")
        extra["recurrence only (grouped layout)"] = recurrence_only(n, x, "grouped")
        compiled_s = None
        if n == 50 and not args.quick and not args.speed_only:
            compiled = extra["recurrence only (torch.compile of the plain loop)"] = recurrence_only(
                n, x, "compiled loop")
            with tempfile.TemporaryDirectory() as cache:  # inductor's on-disk cache: empty, as a first use
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
                t0 = time.perf_counter()
                compiled()  # compiles forward and backward
                compiled_s = time.perf_counter() - t0
                del os.environ["TORCHINDUCTOR_CACHE_DIR"]
        for fn in [*steps.values(), *extra.values()]:
            fn()  # warm-up
        times: dict[str, list[float]] = {label: [] for label in [*steps, *extra]}
        for _ in range(args.rounds):  # interleaved, so drifts of a shared machine hit all alike
            for label, fn in [*steps.items(), *extra.items()]:
                times[label].append(timed(fn, 3))
        med = {label: statistics.median(v) for label, v in times.items()}
        slow = [] if args.speed_only else SLOW
        if slow:
            torch.manual_seed(0)
            med[SLOW[0]] = timed(training_step(make(SLOW[0], n), x, y), 1)
        floor_peak = 6 * n * n * B * T / peak
        floor_b = med["floor: shared-matrix recurrence"]
        lstm = med["nn.LSTM"]
        rounds = f"median of {args.rounds} x 3 batches"
        for label in [*FAST, *slow]:
            speed.append({
                "n": n, "model": label, "s/epoch": med[label] * BATCHES_PER_EPOCH,
                "measured on": "1 batch" if label in SLOW else rounds,
                "ratio to nn.LSTM": med[label] / lstm,
                "peak memory MB": (peak_memory_mb(label, n, args.threads)
                                   if not (args.quick or args.speed_only) else None),
            })
            if label in FAST:
                speed[-1]["x floor (a)"] = med[label] / floor_peak
                speed[-1]["x floor (b)"] = med[label] / floor_b
        for label in [k for k in extra if k.startswith("recurrence only")]:
            note = rounds if "compile" not in label else f"{rounds}; compiling took {compiled_s:.0f} s"
            speed.append({"n": n, "model": label, "s/epoch": med[label] * BATCHES_PER_EPOCH,
                          "measured on": note,
                          "x floor (a)": med[label] / floor_peak, "x floor (b)": med[label] / floor_b})
        speed.append({"n": n, "model": "floor (a): 6n^2 flops/token at GEMM peak",
                      "s/epoch": floor_peak * BATCHES_PER_EPOCH,
                      "measured on": f"peak {peak / 1e9:.0f} GFLOP/s"})
        speed.append({"n": n, "model": "floor (b): shared-matrix recurrence",
                      "s/epoch": floor_b * BATCHES_PER_EPOCH,
                      "measured on": rounds})
        print(f"n={n}: " + ", ".join(f"{k} {v * BATCHES_PER_EPOCH:.2f}s" for k, v in med.items()), flush=True)
    prefix = prefix_rows(args.lengths) if not args.speed_only else []
    info["kernel build s"] = kernel_build_seconds() if not (args.quick or args.speed_only) else None
    report = {"machine": info, "gemm_peak_gflops": peak / 1e9, "batch": B, "length": T,
              "batches_per_epoch": BATCHES_PER_EPOCH, "speed": speed, "prefix": prefix}
    md = to_markdown(report)
    print(md)
    if not args.quick:
        # the default report is the book's full table; one for another target or of speed alone is named
        # after the kernel's code (urn_speed_avx2.md, urn_speed_avx512.md)
        code = kernel_code(info).lower().replace("-", "").replace(" ", "_")
        suffix = f"_{code}" if (args.march or args.speed_only) else ""
        results, table = RESULTS / f"urn_speed{suffix}.json", BOOK_TABLE.with_stem(BOOK_TABLE.stem + suffix)
        RESULTS.mkdir(exist_ok=True)
        results.write_text(json.dumps(report, indent=1))
        table.parent.mkdir(exist_ok=True)
        table.write_text(md)
        print(f"wrote {table} and {results}")


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-2 else f"{v:.2f}"
    return str(v)


def _table(rows: list[dict], cols: list[str]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def to_markdown(report: dict) -> str:
    m = report["machine"]
    head = (f"Measured {m['date']} on {m['cpu']}, {m['threads']} threads, torch {m['torch']}, "
            f"Python {m['python']}; "
            f"instruction sets {', '.join(m.get('instruction sets', [])) or 'unknown'}; "
            f"the scan kernel built for `-march={m.get('kernel target', 'native')}`: {kernel_code(m)} code; "
            f"GEMM peak {report['gemm_peak_gflops']:.0f} GFLOP/s"
            + (f"; the scan kernel built in {m['kernel build s']:.0f} s (once, then cached)"
               if m.get("kernel build s") else "")
            + f". Training step: batch {report['batch']}, "
            f"{report['length']} symbols, V = {V}; seconds per epoch = time per batch x "
            f"{report['batches_per_epoch']}.\n")
    cols = ["n", "model", "s/epoch", "ratio to nn.LSTM", "x floor (a)", "x floor (b)", "peak memory MB",
            "measured on"]
    pcols = ["length", "plain loop s", "scan s", "parallel prefix s", "plain / parallel",
             "plain / parallel, each run", "plain / scan", "max |parallel - plain|"]
    prefix = ("\n\n### Compositional evaluation (URN n = 50, k = 3, 4 sequences)\n\n"
              + _table(report["prefix"], pcols)) if report["prefix"] else ""
    return head + "\n### Training\n\n" + _table(report["speed"], cols) + prefix + "\n"


if __name__ == "__main__":
    main()
