"""Paper 002's Table 2 on Evans et al.'s released files: the chapter's entailment runs scored on the released
validation set and five test sets (:mod:`urnlib.chapters.tpru.released` fills the cache they come from),
beside the paper's rows and Evans et al.'s LSTM encoder, and the released files set against the generated
splits the runs were trained and selected on.

``released`` is what :func:`urnlib.chapters.tpru.released.released_results` gives: ``released.accuracy``
maps a label to one ``{split: {"correct", "total"}}`` per seed (in its :class:`~urnlib.seeds.Seeds`' order),
``released.statistics`` a split to the released file's :func:`urnlib.languages.logic.split_statistics`. A
model's number is a :class:`~urnlib.seeds.Stat` over its seeds of the weights each run kept (its best epoch by
the validation accuracy on generated pairs: the released files select nothing).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from urnlib.chapters.tpru.report import (
    PAPER_MEAN_WORLDS, PAPER_TABLE2, PAPER_TRAIN_SIZE, SPLITS, TEST_SPLITS, format_params, our_rows, pct,
)
from urnlib.reports.common import unbroken  # the notebook and tests name it here
from urnlib.seeds import Seeds, Stat

__all__ = ["EVANS_TABLE", "released_accuracy", "released_test_accuracy", "released_table2", "released_line",
           "data_comparison", "unbroken"]

#: Evans et al. (2018; the ICLR submission, which reports three splits): their LSTM encoder, accuracy (%)
EVANS_TABLE = {"LSTM encoder": {"valid": 82.3, "easy": 81.1, "hard": 69.4}}


def released_accuracy(released: Any, label: str, split: str) -> Stat:
    """The accuracy of ``label``'s runs on the released file of ``split``, one value per seed."""
    return Stat.of(e[split]["correct"] / e[split]["total"] for e in released.accuracy[label])


def released_test_accuracy(released: Any, label: str) -> Stat:
    """Per seed, the accuracy averaged over the five released test files (each file weighs the same)."""
    return Stat.of(float(np.mean([e[s]["correct"] / e[s]["total"] for s in TEST_SPLITS]))
                   for e in released.accuracy[label])


def released_table2(ent_runs: dict[str, Seeds], released: Any,
                    scaled: dict[str, Seeds] | None = None) -> pd.DataFrame:
    """Table 2 on the released files: accuracy (%) on each file, paper 002's plain-architecture rows and Evans
    et al.'s LSTM encoder as printed, then ours (mean ± sd over seeds) and the encoder's parameter count, then
    the scaled group's (``scaled``: the runs on a larger training set, scored on the same files)."""
    rows = [{"source": "paper 002", "model": name, **{s: f"{vals[s]:.1f}" for s in SPLITS},
             "# params (encoder)": vals["params"]} for name, vals in PAPER_TABLE2.items()]
    rows += [{"source": "Evans et al. (2018)", "model": name,
              **{s: f"{vals[s]:.1f}" if s in vals else "" for s in SPLITS}, "# params (encoder)": ""}
             for name, vals in EVANS_TABLE.items()]
    rows += our_rows(ent_runs, scaled, lambda label, seeds: {
        "model": label, **{s: pct(released_accuracy(released, label, s)) for s in SPLITS},
        "# params (encoder)": format_params(seeds[0].final["encoder_params"])})
    return pd.DataFrame(rows)


def released_line(ent_runs: dict[str, Seeds], released: Any) -> str:
    """What the two versions of Table 2 are (Markdown): the data our encoders trained on, read from the runs,
    and the released files, with their sizes."""
    data = next(iter(ent_runs.values()))[0].final["data"]
    files = ", ".join(f"{released.files[s]['file']} ({released.statistics[s]['count']:,} pairs)"
                      for s in SPLITS)
    generated = ", ".join(f"{s} {data[s]['count']:,}" for s in SPLITS)
    return (f"Our encoders were trained on **{data['train']['count']:,} generated pairs** (our "
            "re-implementation of Evans et al.'s generator; the paper's training file of about "
            f"{PAPER_TRAIN_SIZE:,} pairs was not released) and kept the weights of their best epoch by the "
            "accuracy on generated validation pairs. They are tested twice: on **Evans et al.'s released "
            f"files**, the paper's own test data ({files}), and on generated splits of the same names "
            f"({generated} pairs; *exam* is our hand-made set). The released files decide the claims on "
            "Table 2.")


def _worlds(x: float) -> str:
    """A mean 2^#vars: whole numbers from 100 on (``848,570``), one decimal below (``75.7``)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _profile(split: str, source: str, st: dict[str, Any], paper: str) -> dict[str, str]:
    return {"split": split, "source": source, "pairs": f"{st['count']:,}",
            "entailed (%)": f"{100 * st['positive']:.1f}" if "positive" in st else "",
            "mean 2^#vars (paper)": paper, "mean 2^#vars": _worlds(st["mean_worlds"]),
            "mean variables": f"{st['mean_vars']:.2f}", "mean operators per formula": f"{st['mean_ops']:.2f}",
            **{f"H{i} accuracy (%)": f"{100 * st[f'acc_h{i}']:.1f}" for i in (1, 2, 3)},
            "surface baseline (%)": f"{100 * st['acc_surface']:.1f}" if "acc_surface" in st else ""}


def data_comparison(ent_runs: dict[str, Seeds], released: Any) -> pd.DataFrame:
    """The released files against the generated splits of the same names (those of the runs): size, share of
    entailed pairs, mean 2^#vars next to the paper's "Mean 2^#Vars" row (Evans et al.'s data), mean variables
    per pair and operators per formula, the accuracy (%) of the heuristics H1-H3, and (generated splits) the
    surface baseline fit on the training pairs."""
    generated = next(iter(ent_runs.values()))[0].final["data"]
    rows = []
    for s in SPLITS:
        rows.append(_profile(s, "released", released.statistics[s], _worlds(PAPER_MEAN_WORLDS[s])))
        rows.append(_profile(s, "generated", generated[s], ""))
    return pd.DataFrame(rows)
