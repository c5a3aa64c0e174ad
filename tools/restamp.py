"""Restamp a chapter's committed runs whose behaviour probes show the code still computes what made them.

    .venv/bin/python -m tools.restamp CHAPTER [CHAPTER ...] [--dry-run]

For each run of the chapter's paper plan that has no current stored run: the stored run with the same
name made by older code (a format-1 record, or older component versions) is restamped - stored under
today's key, component and library versions, with new checksums, its numbers and weights unchanged -
when (1) every probe of the chapter passes against its golden (the goldens were written by the code
that trained the runs, so a passing probe means the same numbers), (2) no component the run uses has
changed since (a format-1 run was made by version 1 of every component), and (3) its parameters equal
the plan's, up to the training settings that were added since with the values that reproduce the old
loop (:data:`NEUTRAL`). Anything else is reported and left stale: it needs retraining.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from urnlib.chapters import registry  # noqa: E402 - after the checkout is on the path

#: chapter -> (experiment modules whose Config plans the runs, probes that pin them): every chapter of the
#: registry that has runs
CHAPTERS = {c.name: ([c.experiment], list(c.probes)) for c in registry.CHAPTERS if c.trains}
#: settings a stored run's parameters may lack, with the value that reproduces the loop that made it
NEUTRAL = {"train.optimizer": "adam", "train.clip": None, "train.monitor": None, "train.minimize": True,
           "train.keep_best": False, "train.patience": None}


def flatten(d, prefix=""):
    out = {}
    for key, value in d.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def params_difference(old: dict, new: dict) -> list[str]:
    """How ``new`` differs from ``old`` beyond settings added with their neutral values (empty: the same
    run)."""
    a, b = flatten(old), flatten(new)
    out = [f"{k}: {a[k]!r} -> {b[k]!r}" for k in sorted(set(a) & set(b)) if a[k] != b[k]]
    out += [f"{k}: dropped (was {a[k]!r})" for k in sorted(set(a) - set(b))]
    out += [f"{k}: added as {b[k]!r}" for k in sorted(set(b) - set(a)) if NEUTRAL.get(k, object()) != b[k]]
    return out


def restamp(chapter: str, dry_run: bool = False) -> int:
    from tests.probes import check
    from urnlib import migrate
    from urnlib.results import RunStore

    modules, probes = CHAPTERS[chapter]
    failing = []
    for name in probes:
        changes, diffs = check(name)
        if changes or diffs:
            failing.append(f"{name}: {(changes + diffs)[:3]}")
    if failing:
        print(f"{chapter}: probes fail, nothing restamped:\n  " + "\n  ".join(failing))
        return 1
    counts = {"current": 0, "restamped": 0, "left stale": 0, "missing": 0}
    for module in modules:
        config = module.Config.paper()
        store = RunStore(config.store_path())
        for spec in config.plan():
            if store.load(spec) is not None:
                counts["current"] += 1
                continue
            older = store.others(spec)
            if not older:
                print(f"  missing: {spec.experiment}/{spec.name}")
                counts["missing"] += 1
                continue
            old = store.read(older[0].path)
            if old.record.get("format", 1) > 1:  # made under component versions that differ from today's
                print(f"  left stale: {spec.experiment}/{spec.name}: {'; '.join(old.stale_reasons())}")
                counts["left stale"] += 1
                continue
            changed = [f"{c} v1 -> v{v}" for c, v in spec.versions.items() if v > 1]
            if changed:  # a legacy run was made by v1 of every component
                print(f"  left stale: {spec.experiment}/{spec.name}: changed since it was made: "
                      f"{'; '.join(changed)}")
                counts["left stale"] += 1
                continue
            diff = params_difference(old.params, spec.params)
            if diff:
                print(f"  left stale: {spec.experiment}/{spec.name}: parameters differ: {'; '.join(diff)}")
                counts["left stale"] += 1
                continue
            if not dry_run:
                migrate.restamp(store, spec, old)
            print(f"  restamped: {spec.experiment}/{spec.name} ({old.path.name} -> {spec.folder_name})")
            counts["restamped"] += 1
    print(f"{chapter}: " + ", ".join(f"{v} {k}" for k, v in counts.items())
          + (" (dry run)" if dry_run else ""))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("chapters", nargs="+", choices=sorted(CHAPTERS))
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    return max(restamp(c, args.dry_run) for c in args.chapters)


if __name__ == "__main__":
    sys.exit(main())
