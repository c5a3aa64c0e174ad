"""The CPU side of ``gpu_concurrent.py``: each TPRU-chapter model that trained on the shared GPU, trained here
for two epochs of 64 batches on one thread (its own spec, the training pairs cut to 4,096), its progress bar
written to ``LOGDIR/<label, as a file name>.log`` for ``gpu_concurrent.py --cpu``. Run it on an otherwise
idle machine (about 2 minutes).

    python3 benchmarks/gpu_concurrent_cpu.py LOGDIR
"""

import contextlib
import copy
import dataclasses
import re
import sys
from pathlib import Path

import torch

from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import entailment as te

LABELS = ("GRU 64", "LSTM 64", "TPRU 64 N=64 s=8")  # at 20,000 pairs, and the large preset's two below
SCALED = ("LSTM 64", "TPRU 64 N=64")


def specs():
    paper, large = tpru.Config.load("paper"), tpru.Config.load("large")
    main = paper.entailment_plan()
    yield from (main[label][0] for label in LABELS)
    scaled = large.scaled_plan()
    yield from (next(g[0] for k, g in scaled.items() if k.startswith(label + ",")) for label in SCALED)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    for spec in specs():
        params = copy.deepcopy(spec.params)
        params["task"]["train"] = 4096
        params["train"]["epochs"], params["stop"] = 2, None
        short = dataclasses.replace(spec, params=params)
        log = out / (re.sub(r"[^A-Za-z0-9]+", "_", spec.name.rsplit(" seed ", 1)[0]).strip("_") + ".log")
        with open(log, "w") as handle, contextlib.redirect_stderr(handle):
            te.train_run(short, None)
        print(log)


if __name__ == "__main__":
    main()
