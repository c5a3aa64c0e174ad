"""The cost of the runs committed at an earlier revision (the book before a retrain), for the Performance
page to show beside today's table.

    .venv/bin/python -m tools.cost_at REV [--out book/performance/cost_before.md]

Extracts ``notebooks/results`` of ``REV`` (git archive) into a temporary folder and tabulates its runs per
chapter with :func:`urnlib.reports.cost.cost_table`: runs, runs that recorded CPU time, their CPU hours, and
the wall hours of the runs stored before CPU time was recorded (not comparable with CPU time: wall time on a
shared machine counts waiting, and a run on 2 threads spends up to twice its wall time in CPU). No stale-run
count (an earlier revision's runs are stale against today's code) and no hours on N workers (they need CPU
times). The table is written after a line naming the revision.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: the columns of the table (cost_table's without staleness, the longest run and the hours on N workers)
COLUMNS = ["chapter", "runs", "with CPU time", "CPU hours", "wall hours (runs without CPU time)"]


def git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=True).stdout


def cost_at(rev: str) -> str:
    """The Markdown table of the runs committed at ``rev``, with a line naming it."""
    from urnlib.migrate import key_folders
    from urnlib.reports.cost import cost_table, frame_markdown

    commit = git("rev-parse", "--short", rev).decode().strip()
    date = git("show", "-s", "--format=%ad", "--date=short", rev).decode().strip()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(git("archive", rev, "notebooks/results"))) as tar:
            tar.extractall(tmp, filter="data")
        key_folders(Path(tmp) / "notebooks" / "results")  # a revision before folders were named by key
        frame = cost_table(Path(tmp) / "notebooks" / "results", staleness=False)[COLUMNS]
    if not frame["with CPU time"].any():  # stored before CPU time was recorded: only wall time is known
        frame = frame.drop(columns=["with CPU time", "CPU hours"])
    head = f"*The runs committed at {commit} ({date}).*\n\n"
    return head + frame_markdown(frame)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev")
    ap.add_argument("--out", type=Path, help="write the table here (default: print it)")
    args = ap.parse_args()
    text = cost_at(args.rev)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text)


if __name__ == "__main__":
    main()
