"""The agreement chapter on Linzen et al.'s (2016) released files (the ``linzen`` source,
:mod:`urnlib.tasks.agreement_linzen`): which files train, select and test, against the paper's data; the
accuracy per attractor count with the paper's kind of interval (Wilson 95%, here on the predictions of all
seeds pooled); how well the Brown-corpus tags find the nouns the heuristics and the 0 bucket rest on.
Everything is read from the stored runs' data statistics and histories.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from urnlib.corpora.numpred import SPLITS
from urnlib.metrics import wilson_interval
from urnlib.chapters.agreement.claims import HEURISTICS, SELECTED, data_stats, best_row
from urnlib.chapters.agreement.report_tables import PAPER_SENTENCES
from urnlib.seeds import Seeds
from urnlib.reports.bibliography import named_text

__all__ = ["SOURCE", "ZERO_NOTE", "PAPER_ERROR", "data_text", "wilson_table", "figure_marks"]

SOURCE = "linzen"
#: how the 0 bucket of the source is formed (under its panel's title)
ZERO_NOTE = "0: held-out sentences without a noun of the\nother number, easier than Linzen et al.'s"
#: paper 000 sec. 4 on its 3-TURN on this distribution: "error rates well under one percent"
PAPER_ERROR = 0.01


def figure_marks(sources) -> tuple[dict[str, str], dict[str, tuple[float, str]]]:
    """The notes and the paper's reference line of Fig. 2's panels: only the ``linzen`` panel has them (the
    paper's numbers are about its data)."""
    if SOURCE not in sources:
        return {}, {}
    return ({SOURCE: ZERO_NOTE},
            {SOURCE: (1 - PAPER_ERROR, named_text("paper 000 sec. 4: 3-TURN error well under 1%"))})


def data_text(runs: dict[str, Seeds]) -> str:
    """Which of the released files train, select and test, with the sentences of the first seed, against
    the paper's training data; and how often the tags find each test sentence's attractors (Markdown)."""
    first = next(iter(runs.values()))
    stats = first[0].final["data"]
    info = stats[SOURCE]
    tests = stats["test_attractors"]
    buckets = " / ".join(f"{tests[str(n)]:,}" for n in range(1, 6) if str(n) in tests)
    recall = ", ".join(f"{n}: {share:.0%}" for n, share in info["lexicon_recall"].items())
    paper = PAPER_SENTENCES * 0.9
    return (
        f"**Linzen et al.'s released files** (source *{SOURCE}*, the distribution of the paper's Fig. 2). "
        f"Their training split is not released. The models train on {stats['train_examples']:,} sentences "
        f"of their validation file `{SPLITS['val']}`, select their epoch on "
        f"{stats.get('valid_examples', 0):,} others ({SELECTED}), and are tested on the five "
        f"released test files (`numpred.test.1` ... `.5`: {buckets} sentences with 1 to 5 attractors) and on "
        f"{info['zero_bucket']:,} of {info['held_out']:,} held-out sentences of the validation file, those "
        f"with no noun of the other number than the verb (the 0 bucket; an easier set than Linzen et al.'s, "
        f"whose 0-attractor sentences may hold such nouns before the subject). Paper 000 trained on about "
        f"{paper / 1e6:.1f} million sentences (90% of {PAPER_SENTENCES / 1e6:.1f} million), "
        f"{paper / stats['train_examples']:,.0f} times as many. The files keep only words (the rarer ones "
        f"replaced by their tag), so nouns and their number come from the tagged Brown corpus "
        f"({info['lexicon_words']:,} nouns); in a test file of N attractors they find at least N nouns of "
        f"the other number in this share of the sentences (N: share): {recall}. The heuristics and the 0 "
        f"bucket rest on these tags.")


def _pooled(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    size = max(len(r["attr_total"]) for r in rows)
    correct, total = np.zeros(size), np.zeros(size)
    for r in rows:
        correct[: len(r["attr_correct"])] += r["attr_correct"]
        total[: len(r["attr_total"])] += r["attr_total"]
    return correct, total


def wilson_table(runs: dict[str, Seeds]) -> pd.DataFrame:
    """Accuracy per attractor count of each model (at its best epoch) and heuristic, the predictions of all
    seeds pooled, with Wilson 95% intervals: the paper's kind of interval (paper 000 Fig. 2, one run)."""
    first = next(iter(runs.values()))
    sources = {label: [best_row(run) for run in seeds] for label, seeds in runs.items()}
    sources |= {label: [s["heuristics"][name] for s in data_stats(first)]
                for name, label in HEURISTICS.items()}
    columns = {"sentences (all seeds)": {n: f"{int(t):,}" for n, t in enumerate(_pooled(
        sources[next(iter(runs))])[1])}}
    for label, rows in sources.items():
        correct, total = _pooled(rows)
        low, high = wilson_interval(correct, np.maximum(total, 1))
        columns[label] = {n: f"{c / t:.3f} [{lo:.3f}, {hi:.3f}]" if t else ""
                          for n, (c, t, lo, hi) in enumerate(zip(correct, total, low, high))}
    table = pd.DataFrame(columns)
    table.index.name = "attractors"
    return table
