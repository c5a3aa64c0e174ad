"""Give stored runs the names of a chapter's current plan when only their labels changed.

    .venv/bin/python -m tools.rename_runs CHAPTER [CHAPTER ...] [--dry-run]

A run's key hashes its parameters and component versions, not its name; when a chapter's labels change
(e.g. seeds became a dimension: ``"3-TURN"`` is now ``"3-TURN, lr 0.01 seed 0"``), the stored run with the
same key is still the same computation. For each run of the chapter's paper plan with no stored run under
its name, a stored run of the same experiment with the same key is renamed (record and folder; numbers and
weights untouched). Nothing is trained.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools.restamp import CHAPTERS  # noqa: E402 - chapter -> (experiment modules, probes)


def rename(chapter: str, dry_run: bool = False) -> int:
    from urnlib import migrate
    from urnlib.results import RunStore

    renamed = 0
    for module in CHAPTERS[chapter][0]:
        config = importlib.import_module(module).Config.paper()
        store = RunStore(config.store_path())
        for spec in config.plan():
            if store.load(spec) is not None:
                continue
            for old in migrate.with_key(store, spec):
                print(f"{'would rename' if dry_run else 'renamed'}: {old.path.name} -> {spec.folder_name}")
                if not dry_run:
                    migrate.rename(store, old, spec)
                renamed += 1
                break
    return renamed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chapters", nargs="+", choices=sorted(CHAPTERS))
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    for chapter in args.chapters:
        print(f"{chapter}: {rename(chapter, args.dry_run)} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
