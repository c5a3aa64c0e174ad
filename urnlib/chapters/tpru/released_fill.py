"""The command that scores a preset's stored entailment runs on Evans et al.'s released files and fills the
cache the TPRU chapter reads (:mod:`urnlib.chapters.tpru.released`; paper 002 Table 2)::

    python -m urnlib.chapters.tpru.released_fill --scale paper [--store DIR]

It never trains: every entailment run the chapter may read must be stored (a missing one is an error naming
the command that trains it): each encoder at every rate of ``lr_choices`` (the chapter reads the rate each
encoder picks on validation accuracy, :mod:`urnlib.chapters.tpru.lr`) and the scaled group's runs. Runs
whose entry is current are skipped, so a second call scores nothing. It scores on the threads torch is given:
set ``OMP_NUM_THREADS=1`` beside other work.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from urnlib.errors import UrnlibError
from urnlib.chapters.tpru.experiment import Config
from urnlib.chapters.tpru.released import cache_path, fill
from urnlib.results import RunSpec, RunStore

__all__ = ["main", "scored_specs"]


def scored_specs(config: Config) -> list[RunSpec]:
    """The runs whose released scores the chapter may read: every encoder at every candidate rate, then the
    scaled group's."""
    at_rates = [spec for rates in config.lr_plan().values() for specs in rates.values() for spec in specs]
    return at_rates + [spec for specs in config.scaled_plan().values() for spec in specs]


def main(argv: list[str] | None = None) -> int:
    """Fill the cache of a preset's stored entailment runs; an error is one line, ``error: ...``, status 2."""
    p = argparse.ArgumentParser(prog="python -m urnlib.chapters.tpru.released_fill",
                                description="Score the stored entailment runs of the TPRU chapter on Evans "
                                            "et al.'s released files (paper 002 Table 2) and fill the cache.")
    p.add_argument("--scale", default="paper", help="the preset whose runs are scored (default: paper)")
    p.add_argument("--store", default=None, help="the run store (default: the preset's)")
    args = p.parse_args(argv)
    try:
        config = Config.load(args.scale, mode="load")  # scores stored runs: reads no corpus
        root = Path(args.store).resolve() if args.store else config.store_path()
        store = RunStore(root, rebuild=config.rebuild_command())
        runs = [store.stored(spec, "load", config.on_stale) for spec in scored_specs(config)]
        n = fill(runs, cache_path(root), store=root)
    except UrnlibError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{cache_path(root)}: {n} of {len(runs)} run(s) scored, the others were current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
