"""Seconds per training epoch of the Dyck chapter's models, measured in one run, as ratios to the LSTM.

    .venv/bin/python benchmarks/epoch_time.py [--batches 10] [--threads 2]

Each model trains ``--batches`` minibatches of 512 Dyck strings (after one warm-up batch); the time is
extrapolated to the paper's epoch of 200 batches, and said so. This is the training step of
``urnlib.train.fit`` (forward, loss, backward, Adam step), without the per-epoch evaluation.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from urnlib.languages import dyck
from urnlib.models import build_model, count_parameters

MODELS = {
    "3-TURN 50": ("urn", {"n": 50, "k": 3}),
    "Full URN 50": ("urn", {"n": 50}),
    "Arbitrary 50": ("arbitrary", {"n": 50}),
    "LSTM 50 (paper cell)": ("lstm", {"n": 50, "embedding_size": 12}),
    "URN 32": ("urn", {"n": 32}),
    "LSTM 32 (paper cell)": ("lstm", {"n": 32, "embedding_size": 12}),
}
PAPER_BATCHES = 200  # 102,400 strings / 512


def seconds_per_batch(kind: str, opts: dict, x: torch.Tensor, y: torch.Tensor, batches: int) -> float:
    torch.manual_seed(0)
    model = build_model(kind, len(dyck.DyckVocab()), **opts)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step():
        loss = F.cross_entropy(model(x).reshape(-1, model.readout.out_features), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()  # warm-up
    t0 = time.perf_counter()
    for _ in range(batches):
        step()
    return (time.perf_counter() - t0) / batches, count_parameters(model)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    vocab = dyck.DyckVocab()
    x, y = dyck.encode(dyck.generate(512, 10, max_depth=3, rng=0), vocab)
    rows = {}
    for label, (kind, opts) in MODELS.items():
        rows[label] = seconds_per_batch(kind, opts, x, y, args.batches)
    ref = rows["LSTM 50 (paper cell)"][0]
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.batches} batches of 512 per model, "
          f"extrapolated to {PAPER_BATCHES} batches per epoch")
    print(f"{'model':24s} {'params':>8s} {'s/epoch':>9s} {'ratio to LSTM 50':>17s}")
    for label, (sec, params) in rows.items():
        print(f"{label:24s} {params:8d} {sec * PAPER_BATCHES:9.2f} {sec / ref:17.2f}")


if __name__ == "__main__":
    main()
