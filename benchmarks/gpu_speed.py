"""Training speed on a CUDA GPU: urnlib's models against torch's fused (cuDNN) modules of the same size.

    .venv/bin/python benchmarks/gpu_speed.py          # on a machine with a CUDA GPU (a few minutes)
    .venv/bin/python benchmarks/gpu_speed.py --quick  # 2 rounds, small batches, no files; on the CPU
                                                      # where there is no GPU (a smoke test of the script)

Without ``--quick`` and without CUDA it measures nothing and says so (CPU timings are the other benchmarks').

Milliseconds per training step - forward, cross-entropy over every position, backward, Adam - interleaved over
rounds (medians, the device synchronised around each timing), with the ratio of each urnlib model to its torch
counterpart (same sizes, same vocabulary, same batch):

* ``URN 50`` and ``URN 128`` vs ``nn.LSTM`` of the same n (Dyck, paper 000/001: batch 512 x 21 symbols);
* the paper LSTM ``lstm 50 e12`` (one bias per gate, torch's fused call on derived weights) vs ``nn.LSTM 50``
  with a 12-wide embedding (the same batch);
* ``TPRU d=64 N=64`` vs ``nn.GRU 64`` (the TPRU chapter's size: batch 64 x 40 steps);
* the lecture's ``GRU 64`` (not torch's GRU: :class:`urnlib.models.cells.GRUScan`) vs ``nn.GRU 64``
  (the same batch).

Each urnlib model is timed in the variants of its GPU path (issue 32), ratios against torch in the same run:

* ``urnlib``: as a chapter trains it (the recurrence replayed from CUDA graphs, :mod:`urnlib.models.graphs`;
  the URN's dense scan and every symbol's matrix);
* ``eager``: the same code with graphs switched off (``URNLIB_CUDA_GRAPHS=0``);
* ``grouped`` (URN only): the path before issue 32 (the grouped layout, host-side bookkeeping, no graphs).

Models run in float32 in training mode without dropout. Writes ``benchmarks/results/gpu_speed.json`` with
the card's name, torch and CUDA versions and the date; ``--profile FILE`` also writes torch's profile of each
model's step (the kernels and operators that take the time).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import platform
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models import graphs, scan
from urnlib.models.registry import build_model
from urnlib.tasks.dyck import VOCAB_SIZE

JSON = Path(__file__).resolve().parent / "results" / "gpu_speed.json"
MARKDOWN = Path(__file__).resolve().parents[1] / "book" / "performance" / "gpu_speed.md"
#: the targets of issue 32: urnlib model / torch counterpart, at most
TARGETS = {"URN 50": 1.5, "URN 128": 1.5, "paper LSTM 50": 1.1, "TPRU d=64 N=64": 2.0, "lecture GRU 64": 1.5}


class TorchLM(nn.Module):
    """Embedding -> torch's fused ``nn.LSTM`` / ``nn.GRU`` -> readout: the counterpart of an urnlib model."""

    def __init__(self, cell: str, vocab_size: int, n: int, embedding_size: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell](embedding_size, n, batch_first=True)
        self.readout = nn.Linear(n, vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.readout(self.rnn(self.embedding(tokens))[0])


#: (label, urnlib spec, torch counterpart (cell, n, embedding), vocabulary, batch, steps)
COMPARISONS = [
    ("URN 50", "urn 50", ("lstm", 50, 50), VOCAB_SIZE, 512, 21),
    ("URN 128", "urn 128", ("lstm", 128, 128), VOCAB_SIZE, 512, 21),
    ("paper LSTM 50", "lstm 50 e12", ("lstm", 50, 12), VOCAB_SIZE, 512, 21),
    ("TPRU d=64 N=64", "tpru 64 N64", ("gru", 64, 64), VOCAB_SIZE, 64, 40),
    ("lecture GRU 64", "gru 64 e64", ("gru", 64, 64), VOCAB_SIZE, 64, 40),
]


def step_of(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor):
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    model.train()

    def step():
        opt.zero_grad()
        logits = model(tokens)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).backward()
        opt.step()

    return step


def timed(fn, reps: int, device: torch.device) -> float:
    """Seconds per call, the device's queue drained before and after."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - start) / reps


def interleaved(fns: dict, rounds: int, reps: int, device: torch.device) -> dict[str, float]:
    """Median seconds per call of each function, timed in turn over ``rounds`` (after two warm-up calls)."""
    for fn in fns.values():
        fn(), fn()
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(rounds):
        for label, fn in fns.items():
            times[label].append(timed(fn, reps, device))
    return {label: statistics.median(v) for label, v in times.items()}


@contextlib.contextmanager
def grouped_path():
    """The URN's path before issue 32: the grouped layout (no dense scan) and no graphs."""
    before = scan.DENSE_MAX_SYMBOLS
    scan.DENSE_MAX_SYMBOLS = 0
    try:
        with graphs.enabled(False):
            yield
    finally:
        scan.DENSE_MAX_SYMBOLS = before


#: variant -> the context its steps run in
VARIANTS = {"urnlib": contextlib.nullcontext, "eager": lambda: graphs.enabled(False), "grouped": grouped_path}


def within(context, step):
    def run():
        with context():
            step()
    return run


def compare(row, device: torch.device, rounds: int, reps: int, shrink: int,
            profile: list | None = None) -> dict:
    label, spec, (cell, n, e), V, B, T = row
    B = max(1, B // shrink)
    torch.manual_seed(0)
    tokens = torch.randint(0, V, (B, T), device=device)
    targets = torch.randint(0, V, (B, T), device=device)
    steps, errors = {}, {}
    for variant, context in VARIANTS.items():
        if variant == "grouped" and not spec.startswith("urn"):
            continue
        torch.manual_seed(0)
        ours = build_model(spec, V, dropout=0.0).to(device)
        steps[variant] = within(context, step_of(ours, tokens, targets))
        try:  # a variant that fails is reported, and the others still timed
            steps[variant]()
        except Exception as err:  # noqa: BLE001 - the error goes into the report
            errors[variant] = f"{type(err).__name__}: {err}"
            del steps[variant]
    steps["torch"] = step_of(TorchLM(cell, V, n, e).to(device), tokens, targets)
    t = interleaved(steps, rounds, reps, device)
    if profile is not None and "urnlib" in steps:
        profile.append(profiled(label, steps["urnlib"], device))
    out = {"model": label, "spec": spec, "torch": f"nn.{cell.upper()} {n} (embedding {e})", "batch": [B, T],
           "torch_ms": 1e3 * t["torch"], "errors": errors}
    for variant in VARIANTS:
        if variant in steps:
            out[f"{variant}_ms"] = 1e3 * t[variant]
            out[f"{variant}_ratio"] = t[variant] / t["torch"]
    out["ratio"] = out.get("urnlib_ratio", math.nan)
    return out


def profiled(label: str, step, device: torch.device, steps: int = 5) -> str:
    """torch's profile of ``steps`` training steps: operators and kernels by their own device time."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        for _ in range(steps):
            step()
        if device.type == "cuda":
            torch.cuda.synchronize()
    key = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
    return f"## {label} ({steps} steps)\n" + prof.key_averages().table(sort_by=key, row_limit=25)


def machine(device: torch.device) -> dict:
    info = {"device": str(device), "torch": torch.__version__, "python": platform.python_version(),
            "date": datetime.date.today().isoformat()}
    if device.type == "cuda":
        info |= {"gpu": torch.cuda.get_device_name(device), "cuda": torch.version.cuda,
                 "cudnn": torch.backends.cudnn.version()}
    else:
        info |= {"threads": torch.get_num_threads()}
    return info


def to_text(report: dict) -> str:
    lines = [f"{'model':<16} {'urnlib ms':>10} {'eager ms':>9} {'grouped':>8} {'torch ms':>9} {'ratio':>6} "
             f"{'eager':>6}  torch counterpart, batch"]
    def ms(r, key, width):
        return f"{r[key]:>{width}.2f}" if key in r else f"{'-':>{width}}"

    for r in report["rows"]:
        lines.append(f"{r['model']:<16} {ms(r, 'urnlib_ms', 10)} {ms(r, 'eager_ms', 9)} "
                     f"{ms(r, 'grouped_ms', 8)} "
                     f"{r['torch_ms']:>9.2f} {ms(r, 'urnlib_ratio', 6)} {ms(r, 'eager_ratio', 6)}  "
                     f"{r['torch']}, {r['batch'][0]} x {r['batch'][1]}")
        lines += [f"    {variant} failed: {err[:300]}" for variant, err in r["errors"].items()]
    return "\n".join(lines)


def to_markdown(report: dict) -> str:
    """The Performance page's table of ``report``."""
    m = report["machine"]
    lines = [f"*Measured {m['date']} on one {m.get('gpu', m['device'])}, torch {m['torch']}, "
             f"CUDA {m.get('cuda')}: "
             f"ms per training step (forward, cross-entropy, backward, Adam), float32, medians of "
             f"{report['rounds']} interleaved rounds of {report['reps']} steps.*", "",
             "| model | batch | urnlib | graphs off | before (grouped) | torch | torch counterpart | "
             "x torch | target |", "|---|---|---|---|---|---|---|---|---|"]

    def ms(r, key):
        return f"{r[key]:.2f}" if key in r else "-"

    for r in report["rows"]:
        target = TARGETS.get(r["model"])
        met = "" if target is None else (f"<= {target} " + ("(met)" if r["ratio"] <= target else "(missed)"))
        lines.append(f"| {r['model']} | {r['batch'][0]} x {r['batch'][1]} | {ms(r, 'urnlib_ms')} | "
                     f"{ms(r, 'eager_ms')} | {ms(r, 'grouped_ms')} | {r['torch_ms']:.2f} | {r['torch']} | "
                     f"{r['ratio']:.2f} | {met} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10, help="steps per timing")
    ap.add_argument("--quick", action="store_true",
                    help="2 rounds of 1 step, batches / 16, no files; on the CPU where there is no GPU")
    ap.add_argument("--profile", type=Path, help="also write torch's profile of each model's step here")
    ap.add_argument("--json", type=Path, default=JSON, help=f"where the results go (default {JSON})")
    ap.add_argument("--markdown", type=Path, default=MARKDOWN, help="where the Performance page's table goes")
    ap.add_argument("--from-json", action="store_true",
                    help="measure nothing: write the page's table from the results in --json (where they "
                         "were "
                         "measured on a GPU machine and brought back)")
    args = ap.parse_args()
    if args.from_json:
        args.markdown.write_text(to_markdown(json.loads(args.json.read_text())))
        print(f"wrote {args.markdown} from {args.json}")
        return
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif args.quick:
        device = torch.device("cpu")
        torch.set_num_threads(2)
    else:
        print("gpu_speed: no CUDA GPU here (torch.cuda.is_available() is False): nothing measured, nothing "
              "written. Run it on a machine with a GPU, or with --quick for a smoke test on the CPU.")
        return
    rounds, reps, shrink = (2, 1, 16) if args.quick else (args.rounds, args.reps, 1)
    profiles = [] if args.profile else None
    report = {"machine": machine(device), "rounds": rounds, "reps": reps,
              "rows": [compare(row, device, rounds, reps, shrink, profiles) for row in COMPARISONS]}
    if args.profile:
        args.profile.write_text("\n\n".join(profiles) + "\n")
    print(f"{report['machine'].get('gpu', 'CPU')} ({device}), torch {torch.__version__}")
    print(to_text(report))
    if args.quick:
        print("(--quick: nothing written)")
        return
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(to_markdown(report))
    print(f"wrote {args.json} and {args.markdown}")


if __name__ == "__main__":
    main()
