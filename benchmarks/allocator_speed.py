"""Training steps with glibc's default allocator and with freed memory kept (urnlib.allocator), in one run.

    .venv/bin/python benchmarks/allocator_speed.py            # (about 3 minutes on an idle core)
    .venv/bin/python benchmarks/allocator_speed.py --quick    # 2 rounds, small vocabulary, no files

:func:`urnlib.allocator.keep_freed_memory` (called by ``urnlib.train.fit``) sets glibc's allocator once per
process, so the two settings are measured in separate processes: each round starts one child process per
setting (their order alternating from round to round), which times training steps (forward, loss, backward,
Adam; process time, one thread as every training worker runs) of:

* the primer's language models at its paper configuration (``notebooks/params/primer.paper.yaml``: a batch of
  ``lm_batch_size`` rows of warm-up + window tokens over Brown's vocabulary; the loss of
  :func:`urnlib.losses.lm_loss`): the largest tensors of the book's training, a batch's logits;
* one TPRU layer at the TPRU chapter's size (d = 64, N = 64, batch 64 x 40 steps), with 1 and 8 slices;

and counts the minor page faults per step. Reported: medians over rounds, and kept / default. Writes
``book/performance/allocator_speed.md`` and ``benchmarks/results/allocator_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from recurrent_speed import _table, machine, timing_arguments, write_report

JSON = Path(__file__).resolve().parent / "results" / "allocator_speed.json"
BOOK_TABLE = Path(__file__).resolve().parents[1] / "book" / "performance" / "allocator_speed.md"
MODES = ("default", "kept")


def primer_case(text: str, V: int):
    """One training step of the primer's language model ``text`` on a batch of its paper configuration."""
    from lm_speed import build, primer_batch, step_of
    from urnlib import losses

    x, y = primer_batch(V)
    return step_of(build(text, V, False), x, y, losses.lm_loss)


def tpru_case(slices: int):
    """One training step of a TPRU layer (d = 64, N = 64, batch 64 x 40 steps; a loss on its states)."""
    from urnlib.models.tpru_cell import TPRU

    torch.manual_seed(0)
    layer, x = TPRU(64, 64, 64, slices=slices), torch.randn(64, 40, 64)
    opt = torch.optim.Adam(layer.parameters(), 1e-3)

    def step():
        opt.zero_grad()
        layer(x).square().mean().backward()
        opt.step()

    return step


def cases(V: int, quick: bool) -> dict:
    from urnlib.chapters.primer import experiment as primer

    config = primer.Config.paper()
    texts = [t for t in config.lm_models if t.startswith(("lstm", "nnlm 5 50 60"))]
    texts = texts[:1] if quick else texts
    shape = f"{config.lm_batch_size} x {config.warmup + config.window}"
    return {**{f"primer LM {t} ({shape})": (lambda t=t: primer_case(t, V)) for t in texts},
            "TPRU s=1": lambda: tpru_case(1), "TPRU s=8": lambda: tpru_case(8)}


def child(mode: str, V: int, reps: int, quick: bool) -> None:
    """Time every case in this process, with freed memory kept (``mode`` "kept") or not; print JSON."""
    if mode == "kept":
        from urnlib.allocator import keep_freed_memory

        assert keep_freed_memory(), "glibc's mallopt is not available here"
    out = {}
    for name, make in cases(V, quick).items():
        step = make()
        for _ in range(2):
            step()
        faults, t = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
        for _ in range(reps):
            step()
        out[name] = {"ms": 1000 * (time.process_time() - t) / reps,
                     "faults": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / reps}
    print(json.dumps(out))


def main() -> None:
    ap = timing_arguments(__doc__, rounds=5, reps=4)
    ap.set_defaults(threads=1)
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)  # one setting timed in this process
    ap.add_argument("--vocab", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.child:
        child(args.child, args.vocab, args.reps, args.quick)
        return
    from lm_speed import vocabulary_size

    V = vocabulary_size(args.quick)  # as lm_speed.py builds the primer's models
    rounds = 2 if args.quick else args.rounds
    env = {**os.environ, "URNLIB_KEEP_FREED_MEMORY": "1"}
    results: dict[str, dict[str, list]] = {m: {} for m in MODES}
    for r in range(rounds):
        for mode in (MODES if r % 2 == 0 else MODES[::-1]):
            cmd = [sys.executable, __file__, "--child", mode, "--vocab", str(V), "--threads",
                   str(args.threads), "--reps", str(args.reps), *(["--quick"] if args.quick else [])]
            out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
                             .stdout.strip().splitlines()[-1])
            for name, v in out.items():
                results[mode].setdefault(name, []).append(v)
            print(f"round {r + 1} {mode}: " + ", ".join(f"{k} {v['ms']:.1f} ms" for k, v in out.items()),
                  flush=True)
    rows = []
    for name in results["default"]:
        med = {m: statistics.median(v["ms"] for v in results[m][name]) for m in MODES}
        faults = {m: statistics.median(v["faults"] for v in results[m][name]) for m in MODES}
        rows.append({"training step": name, "default (ms)": med["default"], "kept (ms)": med["kept"],
                     "kept / default": med["kept"] / med["default"],
                     "page faults, default": faults["default"], "page faults, kept": faults["kept"]})
    report = {"machine": {**machine(), "threads": args.threads}, "rounds": rounds, "vocabulary": V,
              "rows": rows}
    write_report(to_markdown(report), report, JSON, BOOK_TABLE, args.quick)


def to_markdown(report: dict) -> str:
    m = report["machine"]
    head = (f"*Measured {m['date']} on {m['cpu']}, {m['threads']} thread(s), torch {m['torch']}: process "
            f"time of one training step, medians of {report['rounds']} rounds, each setting in its own "
            "process; page faults: minor faults per step.*\n\n")
    return head + _table(report["rows"], ["training step", "default (ms)", "kept (ms)", "kept / default",
                                          "page faults, default", "page faults, kept"]) + "\n"


if __name__ == "__main__":
    main()
