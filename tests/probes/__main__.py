"""Write or check the behaviour probes' golden files.

    python -m tests.probes --check                # every probe against its golden; prints the differences
    python -m tests.probes --check dyck agreement # some of them
    python -m tests.probes --write dyck           # run probe dyck and (re)write tests/golden/dyck.json
    python -m tests.probes --list                 # the probes and the components each pins

Run it from the repository root. ``--urnlib-root DIR`` imports ``urnlib`` from the checkout ``DIR``
instead, e.g. a worktree of the commit before a refactor, to write the goldens with the old code::

    git worktree add /tmp/orig HEAD
    python -m tests.probes --urnlib-root /tmp/orig --write

(the probes themselves always come from this checkout's ``tests/probes``; the corpora are read from its
``.cache/npm/node_modules`` unless ``URNLIB_NPM_DIR`` says otherwise). The first line printed names the
``urnlib`` that ran.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tests.probes import PROBES, check, golden_path, timed, write_command, write_golden

REPO = Path(__file__).resolve().parents[2]


def _names(given: list[str]) -> list[str]:
    unknown = [n for n in given if n not in PROBES]
    if unknown:
        sys.exit(f"unknown probe(s) {unknown}; probes are {list(PROBES)}")
    return given or list(PROBES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.probes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", nargs="*", metavar="NAME", help="run and write the goldens (default: all)")
    group.add_argument("--check", nargs="*", metavar="NAME", help="compare with the goldens (default: all)")
    group.add_argument("--list", action="store_true", help="list the probes and their components")
    parser.add_argument("--urnlib-root", metavar="DIR", help="import urnlib from this checkout")
    args = parser.parse_args(argv)

    if args.urnlib_root:
        root = str(Path(args.urnlib_root).resolve())
        sys.path.insert(0, root)
        os.environ.setdefault("URNLIB_NPM_DIR", str(REPO / ".cache" / "npm" / "node_modules"))
    import urnlib

    print(f"urnlib from {Path(urnlib.__file__).resolve().parent}")
    root = Path(args.urnlib_root).resolve() if args.urnlib_root else None
    if root is not None and not Path(urnlib.__file__).resolve().is_relative_to(root):
        sys.exit(f"urnlib was imported from {urnlib.__file__}, not from {root}")
    if args.list:
        for probe in PROBES.values():
            print(f"{probe.name:18} {', '.join(probe.components)}")
        return 0

    failed, total = [], 0.0
    for name in _names(args.write if args.write is not None else args.check):
        if args.write is not None:
            path, seconds = timed(lambda: write_golden(name))
            print(f"{name:18} written in {seconds:5.1f} s: {path}")
        else:
            try:
                (changes, diffs), seconds = timed(lambda: check(name))
            except FileNotFoundError as err:
                print(f"{name:18} MISSING: {err}")
                failed.append(name)
                continue
            status = "ok" if not changes and not diffs else "FAILED"
            print(f"{name:18} {status} in {seconds:5.1f} s")
            if changes:
                print(f"  the golden is out of date for {'; '.join(changes)}: regenerate it with "
                      f"`{write_command(name)}`")
            for line in diffs:
                print(f"  {line}")
            if changes or diffs:
                failed.append(name)
        total += seconds
    print(f"{total:.1f} s in all" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if failed and args.check is not None:
        print(f"If you meant to change behaviour, bump the version of the component you changed in "
              f"urnlib/components.py with a note, then `{write_command()}` ({golden_path('NAME')}).")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
