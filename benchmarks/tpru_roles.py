"""What the TPRU at paper 002's 512 roles costs to train on the CPU, against the chapter's 64 (issue 50).

    .venv/bin/python benchmarks/tpru_roles.py            # about 2 minutes on one core; writes the json
    .venv/bin/python benchmarks/tpru_roles.py --quick    # 2 rounds, nothing written

The TPRU chapter's scaled group trains its entailment classifiers on 100,000 generated pairs; paper 002's
Table 2 TPRU has 512 roles, ours 64. This times one training step (the classifier's forward, cross-entropy,
backward and Adam, one thread, batches of 64 pairs drawn from the chapter's generated training pairs, as
its runs train) of the chapter's TPRU 64 at N = 64 and at N = 512, interleaved over rounds in alternating
order, in process CPU seconds (a busy machine slows the wall clock, not the CPU time a step takes). The
ratio, times the CPU seconds an epoch of the stored N = 64 runs took, is what an epoch at 512 roles costs:
the cost that decides whether the chapter trains it. Writes ``benchmarks/results/tpru_roles.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
JSON = REPO / "benchmarks" / "results" / "tpru_roles.json"
ROLES = (64, 512)


def _flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    lines = text.splitlines()
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    return [f for f in ("avx2", "avx512f") if f in flags]


def _stored_epoch_cpu_s(config) -> float | None:
    """CPU seconds an epoch of the stored scaled-group TPRU (N = 64) runs took: each run's CPU time over its
    epochs, the median over seeds (``None`` where none is stored)."""
    from urnlib.results import RunStore

    store, per_epoch = RunStore(config.store_path()), []
    for spec in config.plan():
        if "TPRU 64 N=64, 100,000" not in spec.name:
            continue
        folder = store.root / spec.experiment / spec.key
        if (folder / "record.json").is_file():
            record = json.loads((folder / "record.json").read_text())
            if record.get("cpu_time_s") and record.get("history"):
                per_epoch.append(record["cpu_time_s"] / len(record["history"]))
    return statistics.median(per_epoch) if per_epoch else None


def measure(rounds: int, steps: int) -> dict:
    import torch

    torch.set_num_threads(1)
    os.chdir(REPO / "notebooks")
    from urnlib.chapters.tpru import experiment
    from urnlib.chapters.tpru.entailment import Architecture, EntailmentTask, build_classifier, make_data

    config = experiment.Config.load("paper")
    spec = next(s for s in config.plan() if s.experiment == "tpru_entailment" and "TPRU 64 N=64" in s.name)
    params = spec.params
    arch = Architecture(**params["architecture"])
    x, y = make_data(EntailmentTask(**params["task"])).splits["train"]
    g = torch.Generator().manual_seed(0)
    batches = [torch.randperm(len(x), generator=g)[:64] for _ in range(steps)]
    models = {}
    for n in ROLES:
        model = build_classifier({**params["model"], "n_roles": n}, arch, 0).train()
        models[n] = (model, torch.optim.Adam(model.parameters(), 1e-3))

    def step(n: int, idx) -> None:
        model, opt = models[n]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model.classify(x[idx]), y[idx]).backward()
        opt.step()

    for n in ROLES:  # warm-up
        step(n, batches[0])
    times: dict[int, list[float]] = {n: [] for n in ROLES}
    for r in range(rounds):
        for n in ROLES if r % 2 == 0 else ROLES[::-1]:
            start = time.process_time()
            for idx in batches:
                step(n, idx)
            times[n].append((time.process_time() - start) / len(batches))
    per_step = {n: statistics.median(v) for n, v in times.items()}
    ratio = per_step[512] / per_step[64]
    epoch = _stored_epoch_cpu_s(config)
    return {"date": datetime.date.today().isoformat(), "platform": platform.platform(), "isa": _flags(),
            "torch": torch.__version__, "threads": 1, "rounds": rounds, "steps_per_round": steps,
            "encoder": params["model"], "cpu_s_per_step": {str(n): v for n, v in per_step.items()},
            "rounds_s": {str(n): v for n, v in times.items()}, "ratio_512_over_64": ratio,
            "stored_n64_epoch_cpu_s": epoch, "n512_epoch_cpu_s": None if epoch is None else epoch * ratio}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=8, help="training steps per timing")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 2 steps, nothing written")
    args = ap.parse_args()
    rounds, steps = (2, 2) if args.quick else (args.rounds, args.steps)
    result = measure(rounds, steps)
    per = result["cpu_s_per_step"]
    print(f"{', '.join(result['isa']) or 'no AVX2'}; CPU s per step: N=64 {per['64']:.4f}, "
          f"N=512 {per['512']:.4f}; ratio {result['ratio_512_over_64']:.2f}")
    if result["n512_epoch_cpu_s"]:
        print(f"stored N=64 epoch {result['stored_n64_epoch_cpu_s']:.0f} CPU s -> N=512 about "
              f"{result['n512_epoch_cpu_s']:.0f} CPU s an epoch")
    if args.quick:
        print("(--quick: nothing written)")
        return
    JSON.parent.mkdir(parents=True, exist_ok=True)
    JSON.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {JSON}")


if __name__ == "__main__":
    main()
