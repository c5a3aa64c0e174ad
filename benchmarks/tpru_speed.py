"""Training speed of a TPRU layer against torch's fused GRU and LSTM, and of 8 slices against one, in one run.

    .venv/bin/python benchmarks/tpru_speed.py            # (about a minute on 2 idle cores)
    .venv/bin/python benchmarks/tpru_speed.py --quick    # 2 rounds, no files

One training step (forward, a loss on the states, backward, Adam) of one recurrent layer at the TPRU
chapter's size (paper 002: d = d' = 64, N = 64 roles; batch 64, 40 steps), interleaved over rounds (medians):

* ``TPRU`` - as the chapter trains it: the recurrence as one autograd node with a hand-written backward
  (:mod:`urnlib.models.tpru_scan`), with 1 and 8 slices (appendix E);
* ``TPRU, autograd loop`` - the same layer through autograd step by step (``layer.scan = False``);
* ``nn.GRU`` and ``nn.LSTM`` of the same d (fused kernels);
* ``floor (b)`` - the TPRU step's products (the recurrent product ``b M_b`` and the binding ``R f``, forward
  and both backward products, per step) timed as ``torch.mm`` at their shapes.

The process keeps freed memory as training does (:mod:`urnlib.allocator`). Targets (issue 18): TPRU
<= 1.0x ``nn.GRU``; 8 slices <= 1.2x one slice. Writes
``book/performance/tpru_speed.md`` and ``benchmarks/results/tpru_speed.json``.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from recurrent_speed import _table, excess, interleaved, machine, op_times, timing_arguments, write_report
from urnlib.allocator import keep_freed_memory
from urnlib.models.tpru_cell import TPRU

JSON = Path(__file__).resolve().parent / "results" / "tpru_speed.json"
BOOK_TABLE = Path(__file__).resolve().parents[1] / "book" / "performance" / "tpru_speed.md"
B, T, D, N = 64, 40, 64, 64


def step_of(layer: nn.Module, x: torch.Tensor):
    opt = torch.optim.Adam(layer.parameters(), 1e-3)

    def step():
        opt.zero_grad()
        out = layer(x)
        out = out[0] if isinstance(out, tuple) else out
        out.square().mean().backward()
        opt.step()

    return step


def floor_of(slices: int):
    """Per step: ``b M_b`` (B x d x (sN + d)) and ``R f`` (s batches of B x N x d/s), forward and the two
    gradient products of each."""
    P = slices * N + D
    a, m, g = torch.randn(B, D), torch.randn(D, P), torch.randn(B, P)
    ds = D // slices
    f, r, gb = torch.randn(slices, B, N), torch.randn(slices, N, ds), torch.randn(slices, B, ds)

    def run():
        for _ in range(T):
            a @ m, g @ m.T, a.T @ g
            torch.bmm(f, r), torch.bmm(gb, r.transpose(1, 2)), torch.bmm(f.transpose(1, 2), gb)

    return run


def main() -> None:
    args = timing_arguments(__doc__, rounds=15, reps=5).parse_args()
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # as urnlib.train.fit sets the allocator for training (urnlib.allocator)
    torch.manual_seed(0)
    x = torch.randn(B, T, D)
    loop1, loop8 = TPRU(D, D, N), TPRU(D, D, N, slices=8)
    loop1.scan = loop8.scan = False
    fns = {"TPRU s=1": step_of(TPRU(D, D, N), x), "TPRU s=1, autograd loop": step_of(loop1, x),
           "TPRU s=8": step_of(TPRU(D, D, N, slices=8), x), "TPRU s=8, autograd loop": step_of(loop8, x),
           "nn.GRU": step_of(nn.GRU(D, D, batch_first=True), x),
           "nn.LSTM": step_of(nn.LSTM(D, D, batch_first=True), x),
           "floor (b) s=1": floor_of(1), "floor (b) s=8": floor_of(8)}
    t = interleaved(fns, 2 if args.quick else args.rounds, args.reps)
    rows = [{"model": k, "ms per step": 1000 * v,
             "x nn.GRU": v / t["nn.GRU"], "x nn.LSTM": v / t["nn.LSTM"],
             "x its floor (b)": (v / t["floor (b) s=8"] if "s=8" in k else v / t["floor (b) s=1"])
             if k.startswith("TPRU") else None}
            for k, v in t.items()]
    ratios = {"TPRU / nn.GRU (target <= 1.0)": t["TPRU s=1"] / t["nn.GRU"],
              "8 slices / 1 slice (target <= 1.2)": t["TPRU s=8"] / t["TPRU s=1"],
              "scan / autograd loop, s=1": t["TPRU s=1"] / t["TPRU s=1, autograd loop"],
              "scan / autograd loop, s=8": t["TPRU s=8"] / t["TPRU s=8, autograd loop"]}
    torch.manual_seed(0)
    times = {k: op_times(step_of(layer, x), 3 if args.quick else 10)
             for k, layer in (("TPRU s=1", TPRU(D, D, N)), ("TPRU s=8", TPRU(D, D, N, slices=8)),
                              ("nn.GRU", nn.GRU(D, D, batch_first=True)))}
    profiles = {"TPRU s=1 against nn.GRU": excess(times["TPRU s=1"], times["nn.GRU"]),
                "TPRU s=8 against TPRU s=1": excess(times["TPRU s=8"], times["TPRU s=1"])}
    report = {"machine": machine(), "shape": {"B": B, "T": T, "d": D, "N": N}, "rows": rows, "ratios": ratios,
              "profiles": profiles}
    write_report(to_markdown(report), report, JSON, BOOK_TABLE, args.quick)


def to_markdown(report: dict) -> str:
    m, s = report["machine"], report["shape"]
    head = (f"*Measured {m['date']} on {m['cpu']}, {m['threads']} threads, torch {m['torch']}: one training "
            f"step of one layer, batch {s['B']} x {s['T']} steps, d = {s['d']}, N = {s['N']}; medians of "
            "interleaved rounds.*\n\n")
    table = _table(report["rows"], ["model", "ms per step", "x nn.GRU", "x nn.LSTM", "x its floor (b)"])
    ratios = "\n".join(f"- {k}: {v:.2f}" for k, v in report["ratios"].items())
    profiles = "\n".join(
        f"- {name}: " + "; ".join(f"`{r['op']}` {r['ms']:.2f} vs {r['against']:.2f}" for r in rows)
        for name, rows in report.get("profiles", {}).items())
    return (head + table + "\n\n" + ratios + "\n\n**Where the time goes** (self CPU ms per step, "
            "torch.profiler; the operations with the largest excess first):\n\n" + profiles + "\n")


if __name__ == "__main__":
    main()
