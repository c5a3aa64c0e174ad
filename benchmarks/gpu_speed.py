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

Models run in float32 in training mode without dropout. Writes ``benchmarks/results/gpu_speed.json`` with
the card's name, torch and CUDA versions and the date.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models.registry import build_model
from urnlib.tasks.dyck import VOCAB_SIZE

JSON = Path(__file__).resolve().parent / "results" / "gpu_speed.json"


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


def compare(row, device: torch.device, rounds: int, reps: int, shrink: int) -> dict:
    label, spec, (cell, n, e), V, B, T = row
    B = max(1, B // shrink)
    torch.manual_seed(0)
    tokens = torch.randint(0, V, (B, T), device=device)
    targets = torch.randint(0, V, (B, T), device=device)
    ours = build_model(spec, V, dropout=0.0).to(device)
    theirs = TorchLM(cell, V, n, e).to(device)
    t = interleaved({"urnlib": step_of(ours, tokens, targets), "torch": step_of(theirs, tokens, targets)},
                    rounds, reps, device)
    return {"model": label, "spec": spec, "torch": f"nn.{cell.upper()} {n} (embedding {e})", "batch": [B, T],
            "urnlib_ms": 1e3 * t["urnlib"], "torch_ms": 1e3 * t["torch"], "ratio": t["urnlib"] / t["torch"]}


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
    lines = [f"{'model':<16} {'urnlib ms':>10} {'torch ms':>10} {'ratio':>6}  torch counterpart, batch"]
    for r in report["rows"]:
        lines.append(f"{r['model']:<16} {r['urnlib_ms']:>10.2f} {r['torch_ms']:>10.2f} {r['ratio']:>6.2f}  "
                     f"{r['torch']}, {r['batch'][0]} x {r['batch'][1]}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10, help="steps per timing")
    ap.add_argument("--quick", action="store_true",
                    help="2 rounds of 1 step, batches / 16, no files; on the CPU where there is no GPU")
    args = ap.parse_args()
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
    report = {"machine": machine(device), "rounds": rounds, "reps": reps,
              "rows": [compare(row, device, rounds, reps, shrink) for row in COMPARISONS]}
    print(f"{report['machine'].get('gpu', 'CPU')} ({device}), torch {torch.__version__}")
    print(to_text(report))
    if args.quick:
        print("(--quick: nothing written)")
        return
    JSON.parent.mkdir(parents=True, exist_ok=True)
    JSON.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {JSON}")


if __name__ == "__main__":
    main()
