"""tools/cost_at.py tabulates the runs committed at a revision: at HEAD, every run folder git holds."""

import subprocess
from pathlib import Path

from tools.cost_at import cost_at

REPO = Path(__file__).resolve().parents[1]


def test_cost_at_head_counts_the_committed_runs():
    text = cost_at("HEAD")
    assert text.startswith("*The runs committed at ")
    listing = ["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", "HEAD", "notebooks/results"]
    files = subprocess.run(listing, capture_output=True, text=True, check=True).stdout.splitlines()
    runs = sum(f.endswith("/record.json") for f in files)
    total = next(line for line in text.splitlines() if line.startswith("| total |"))
    assert total.split(" | ")[1] == str(runs) and runs > 0
    assert "stale" not in text and "workers" not in text
