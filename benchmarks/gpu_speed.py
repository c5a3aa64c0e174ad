"""Training speed on a CUDA GPU: urnlib's models against torch's fused (cuDNN) modules at their best.

    .venv/bin/python benchmarks/gpu_speed.py          # on a machine with a CUDA GPU (about 2 minutes)
    .venv/bin/python benchmarks/gpu_speed.py --quick  # 3 rounds, small batches, no files; on the CPU
                                                      # where there is no GPU (a smoke test of the script)

Without ``--quick`` and without CUDA it measures nothing and says so (CPU timings are the other benchmarks').

Milliseconds per training step - forward, cross-entropy over every position, backward, Adam - of each urnlib
model and its torch counterpart (same sizes, vocabulary and batch), with the chapters' dropout (issue 47):

* ``URN 50`` and ``URN 128`` (dropout 0.05, paper 000/001) vs ``nn.LSTM`` of the same n (Dyck, 512 x 21);
* the paper LSTM ``lstm 50 e12`` (dropout 0.05) vs ``nn.LSTM 50`` with a 12-wide embedding (the same batch);
* the TPRU at its chapter's shape ``tpru 64 N64 s8`` (8 slices, no dropout: the chapter trains without) and
  with one slice, vs ``nn.GRU 64`` (batch 64 x 40);
* the lecture's ``GRU 64`` (:class:`urnlib.models.cells.GRU`, not torch's; no dropout, as the primer trains
  it) vs ``nn.GRU 64`` (the same batch).

The torch counterpart is embedding -> ``nn.Dropout`` -> ``nn.LSTM``/``nn.GRU`` -> ``nn.Dropout`` -> readout,
the dropout rate that of the urnlib model it is compared with (``nn.Identity`` where the rate is 0). Variants:

* ``urnlib``: as a chapter trains it (the recurrence replayed from CUDA graphs, :mod:`urnlib.models.graphs`);
* ``eager``: the same code with graphs switched off (``URNLIB_CUDA_GRAPHS=0``);
* ``torch``: torch's module run eagerly;
* ``torch_graphed``: torch's whole training step captured in one CUDA graph and replayed (PyTorch's "whole
  network capture": static inputs, ``Adam(capturable=True)``, warm-up on a side stream) - torch at its best
  on launch-bound steps. A capture that fails is reported for that variant; the others are still timed.

Each round times every variant of a comparison for ``--reps`` steps, in an order shuffled anew each round (a
seeded ``random.Random``), the device synchronised around each timing; per variant the median and
interquartile range (q1-q3) of its rounds' ms per step are reported, the raw rounds kept in the json. The
ratios are medians of the per-round ratios of ``urnlib`` to the fastest torch variant (by median) and to eager
torch. The host (CPU model, cores, load average before and after) goes into the json and the page's caption.
Writes ``benchmarks/results/gpu_speed.json`` and ``book/performance/gpu_speed.md``; ``--profile FILE`` also
writes torch's profile of each urnlib model's step.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models import graphs
from urnlib.models.registry import build_model
from urnlib.tasks.dyck import VOCAB_SIZE

JSON = Path(__file__).resolve().parent / "results" / "gpu_speed.json"
MARKDOWN = Path(__file__).resolve().parents[1] / "book" / "performance" / "gpu_speed.md"
#: the targets of issue 47: urnlib model / the fastest torch variant, at most
TARGETS = {"URN 50": 1.0, "URN 128": 1.0, "paper LSTM 50": 1.1, "TPRU d=64 N=64 s=8": 1.5,
           "TPRU d=64 N=64 s=1": 1.5, "lecture GRU 64": 1.0}
TORCH_VARIANTS = ("torch", "torch_graphed")
OURS = ("urnlib", "eager")


class Comparison(NamedTuple):
    label: str
    spec: str  #: the urnlib model
    cell: str  #: torch's counterpart: "lstm" or "gru", its n and embedding width
    n: int
    embedding: int
    dropout: float  #: the chapter's, for both
    batch: int
    steps: int


COMPARISONS = [
    Comparison("URN 50", "urn 50", "lstm", 50, 50, 0.05, 512, 21),
    Comparison("URN 128", "urn 128", "lstm", 128, 128, 0.05, 512, 21),
    Comparison("paper LSTM 50", "lstm 50 e12", "lstm", 50, 12, 0.05, 512, 21),
    Comparison("TPRU d=64 N=64 s=8", "tpru 64 N64 s8", "gru", 64, 64, 0.0, 64, 40),
    Comparison("TPRU d=64 N=64 s=1", "tpru 64 N64", "gru", 64, 64, 0.0, 64, 40),
    Comparison("lecture GRU 64", "gru 64 e64", "gru", 64, 64, 0.0, 64, 40),
]


class TorchLM(nn.Module):
    """Embedding -> dropout -> torch's fused ``nn.LSTM`` / ``nn.GRU`` -> dropout -> readout: the counterpart
    of an urnlib model, with its dropout rate on the embedding's output and before the readout."""

    def __init__(self, cell: str, vocab_size: int, n: int, embedding_size: int, dropout: float = 0.0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell](embedding_size, n, batch_first=True)
        self.drop_in = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.drop_out = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.readout = nn.Linear(n, vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.readout(self.drop_out(self.rnn(self.drop_in(self.embedding(tokens)))[0]))


def _loss(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def step_of(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor):
    """One eager training step of ``model``: forward, cross-entropy, backward, Adam."""
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    model.train()

    def step():
        opt.zero_grad()
        _loss(model, tokens, targets).backward()
        opt.step()

    return step


def graphed_step_of(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor, warmup: int = 3):
    """The whole training step captured in one CUDA graph (PyTorch's "whole network capture"): static inputs,
    ``Adam(capturable=True)``, ``warmup`` steps on a side stream first, the capture on the same stream; the
    step replays the graph."""
    opt = torch.optim.Adam(model.parameters(), 1e-3, capturable=True)
    model.train()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            opt.zero_grad(set_to_none=True)
            _loss(model, tokens, targets).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph, stream=side):  # the warm-up's stream: its handles and workspaces made there
        _loss(model, tokens, targets).backward()
        opt.step()

    def step():  # holds the model and optimiser: the graph writes into their tensors
        graph.replay()

    step.keep = (model, opt)
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


def shuffled(labels, rng: random.Random) -> list[str]:
    """``labels`` in the order ``rng`` draws (a new permutation each call)."""
    order = list(labels)
    rng.shuffle(order)
    return order


def spread(values) -> dict[str, float]:
    """Median and quartiles (q1, q3; inclusive method) of ``values``."""
    values = list(values)
    if len(values) < 2:
        return {"median": values[0], "q1": values[0], "q3": values[0]}
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {"median": median, "q1": q1, "q3": q3}


def interleaved(fns: dict, rounds: int, reps: int, device: torch.device,
                rng: random.Random) -> dict[str, list[float]]:
    """Seconds per call of each function in each of ``rounds`` rounds (after two warm-up calls), the
    functions timed in a shuffled order each round."""
    for fn in fns.values():
        fn(), fn()
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(rounds):
        for label in shuffled(fns, rng):
            times[label].append(timed(fns[label], reps, device))
    return times


def within(context, step):
    def run():
        with context():
            step()
    return run


def _variants(c: Comparison, tokens, targets, device: torch.device) -> tuple[dict, dict]:
    """The step of each variant of comparison ``c`` (each run once), and why the others are missing."""
    def ours():
        return build_model(c.spec, VOCAB_SIZE, dropout=c.dropout).to(device)

    def theirs():
        return TorchLM(c.cell, VOCAB_SIZE, c.n, c.embedding, c.dropout).to(device)

    builders = {"urnlib": lambda: step_of(ours(), tokens, targets),
                "eager": lambda: within(lambda: graphs.enabled(False), step_of(ours(), tokens, targets)),
                "torch": lambda: step_of(theirs(), tokens, targets),
                "torch_graphed": lambda: graphed_step_of(theirs(), tokens, targets)}
    steps, missing = {}, {}
    for variant, build in builders.items():
        if variant == "torch_graphed" and device.type != "cuda":
            missing[variant] = "skipped: CUDA graphs need a CUDA device (--quick on the CPU)"
            continue
        torch.manual_seed(0)
        try:  # a variant that fails is reported, and the others still timed
            steps[variant] = build()
            steps[variant]()
        except Exception as err:  # noqa: BLE001 - the error goes into the report
            missing[variant] = f"{type(err).__name__}: {err}"
            steps.pop(variant, None)
            if device.type == "cuda":  # a failed capture may leave work queued; the next variant starts clean
                with contextlib.suppress(Exception):
                    torch.cuda.synchronize()
    return steps, missing


def summarise(times: dict[str, list[float]]) -> dict:
    """Per variant its ms per step (median, q1, q3, rounds); the fastest torch variant; the per-round ratios
    of urnlib to it and to eager torch (median, q1, q3)."""
    out = {"variants": {v: {**{k: 1e3 * x for k, x in spread(t).items()}, "rounds_ms": [1e3 * x for x in t]}
                        for v, t in times.items()}}
    torches = [v for v in TORCH_VARIANTS if v in times]
    if torches:
        out["best_torch"] = min(torches, key=lambda v: out["variants"][v]["median"])
    if "urnlib" in times:
        for key, against in (("ratio", out.get("best_torch")), ("ratio_eager", "torch")):
            if against in times:
                out[key] = spread(a / b for a, b in zip(times["urnlib"], times[against], strict=True))
    return out


def compare(c: Comparison, device: torch.device, rounds: int, reps: int, shrink: int, rng: random.Random,
            profile: list | None = None) -> dict:
    batch = max(1, c.batch // shrink)
    torch.manual_seed(0)
    tokens = torch.randint(0, VOCAB_SIZE, (batch, c.steps), device=device)
    targets = torch.randint(0, VOCAB_SIZE, (batch, c.steps), device=device)
    steps, missing = _variants(c, tokens, targets, device)
    times = interleaved(steps, rounds, reps, device, rng)
    if profile is not None and "urnlib" in steps:
        profile.append(profiled(c.label, steps["urnlib"], device))
    return {"model": c.label, "spec": c.spec, "dropout": c.dropout, "batch": [batch, c.steps],
            "torch": f"nn.{c.cell.upper()} {c.n} (embedding {c.embedding})", "errors": missing,
            **summarise(times)}


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


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


def machine(device: torch.device) -> dict:
    info = {"device": str(device), "torch": torch.__version__, "python": platform.python_version(),
            "date": datetime.date.today().isoformat(), "cpu": cpu_model(), "cores": os.cpu_count(),
            "threads": torch.get_num_threads(), "load_before": list(os.getloadavg())}
    if device.type == "cuda":
        info |= {"gpu": torch.cuda.get_device_name(device), "cuda": torch.version.cuda,
                 "cudnn": torch.backends.cudnn.version()}
    return info


def _ms(r: dict, variant: str, iqr: bool = True) -> str:
    v = r["variants"].get(variant)
    if v is None:
        return "failed" if "skipped" not in r["errors"].get(variant, "skipped") else "-"
    return f"{v['median']:.2f} [{v['q1']:.2f}-{v['q3']:.2f}]" if iqr else f"{v['median']:.2f}"


def _ratio(r: dict, key: str) -> str:
    x = r.get(key)
    return "-" if x is None else f"{x['median']:.2f} [{x['q1']:.2f}-{x['q3']:.2f}]"


def _target(r: dict) -> str:
    target = TARGETS.get(r["model"])
    if target is None or "ratio" not in r:
        return ""
    return f"<= {target} " + ("(met)" if r["ratio"]["median"] <= target else "(missed)")


def caption(report: dict) -> str:
    m = report["machine"]
    load = ["/".join(f"{x:.1f}" for x in m.get(k, [])) for k in ("load_before", "load_after")]
    return (f"*Measured {m['date']} on one {m.get('gpu', m['device'])}, torch {m['torch']}, "
            f"CUDA {m.get('cuda')}, cuDNN {m.get('cudnn')}; host {m['cpu']}, {m['cores']} cores, load "
            f"average (1/5/15 min) {load[0]} before, {load[1]} after. Ms per training step (forward, "
            f"cross-entropy, backward, Adam), float32, with the chapters' dropout: median [q1-q3] of "
            f"{report['rounds']} rounds of {report['reps']} steps, the variants in a shuffled order each "
            f"round. Torch graphed: torch's whole step captured in one CUDA graph. x best torch: urnlib / "
            f"the fastest torch variant (named); x eager torch: urnlib / torch eager; medians [q1-q3] of the "
            f"rounds' ratios.*")


def to_markdown(report: dict) -> str:
    """The Performance page's table of ``report``."""
    if any("variants" not in r for r in report["rows"]):
        raise SystemExit("gpu_speed: these results predate issue 47's format; measure again on a GPU")
    lines = [caption(report), "", "| model | batch | dropout | urnlib | graphs off | torch eager "
             "| torch graphed | torch counterpart | x best torch | x eager torch | target |",
             "|---" * 11 + "|"]
    for r in report["rows"]:
        best = {"torch": "eager", "torch_graphed": "graphed"}.get(r.get("best_torch"), "-")
        cells = [r["model"], f"{r['batch'][0]} x {r['batch'][1]}", f"{r['dropout']:g}",
                 *(_ms(r, v) for v in (*OURS, *TORCH_VARIANTS)), r["torch"], f"{_ratio(r, 'ratio')} ({best})",
                 _ratio(r, "ratio_eager"), _target(r)]
        lines.append("| " + " | ".join(cells) + " |")
    failed = sorted({f"* {r['model']}, {variant}: {err[:300]}" if not err.startswith("skipped") else
                     f"* {variant} {err}" for r in report["rows"] for variant, err in r["errors"].items()})
    return "\n".join(lines + ([""] + failed if failed else [])) + "\n"


def measure(device: torch.device, rounds: int, reps: int, shrink: int, seed: int,
            profile: list | None) -> dict:
    rng, start = random.Random(seed), time.perf_counter()
    report = {"machine": machine(device), "rounds": rounds, "reps": reps, "seed": seed,
              "rows": [compare(c, device, rounds, reps, shrink, rng, profile) for c in COMPARISONS]}
    report["machine"]["load_after"] = list(os.getloadavg())
    report["seconds"] = time.perf_counter() - start
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--reps", type=int, default=10, help="steps per timing")
    ap.add_argument("--seed", type=int, default=0, help="seed of the variants' order in each round")
    ap.add_argument("--quick", action="store_true",
                    help="3 rounds of 1 step, batches / 16, no files; on the CPU where there is no GPU")
    ap.add_argument("--profile", type=Path, help="also write torch's profile of each model's step here")
    ap.add_argument("--json", type=Path, default=JSON, help=f"where the results go (default {JSON})")
    ap.add_argument("--markdown", type=Path, default=MARKDOWN, help="where the Performance page's table goes")
    ap.add_argument("--from-json", action="store_true",
                    help="measure nothing: write the page's table from the results in --json (where they "
                         "were measured on a GPU machine and brought back)")
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
    rounds, reps, shrink = (3, 1, 16) if args.quick else (args.rounds, args.reps, 1)
    profiles = [] if args.profile else None
    report = measure(device, rounds, reps, shrink, args.seed, profiles)
    if args.profile:
        args.profile.write_text("\n\n".join(profiles) + "\n")
    m = report["machine"]
    print(f"{m.get('gpu', 'CPU')} ({device}), torch {torch.__version__}; host {m['cpu']}, "
          f"{m['cores']} cores, load {m['load_before'][0]:.1f} -> {m['load_after'][0]:.1f}; "
          f"{report['seconds']:.0f} s")
    print(to_markdown(report))
    if args.quick:
        print("(--quick: nothing written; torch graphed needs CUDA)" if device.type != "cuda"
              else "(--quick: nothing written)")
        return
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(to_markdown(report))
    print(f"wrote {args.json} and {args.markdown}")


if __name__ == "__main__":
    main()
