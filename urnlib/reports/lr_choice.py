"""A learning-rate choice as a table (:mod:`urnlib.lr_choice`), shared by the zoo and the TPRU
chapter: one row per model, its validation measure at each candidate rate, the rate chosen, and what could not
be compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from urnlib.lr_choice import RateChoice, lr_text
from urnlib.seeds import Stat

__all__ = ["choice_frame", "rates", "chosen_elsewhere"]


def rates(choices: list[RateChoice]) -> list[float]:
    """Every candidate rate of ``choices``, in order."""
    return list(dict.fromkeys(lr for c in choices for lr in c.runs))


def chosen_elsewhere(choices: list[RateChoice]) -> list[RateChoice]:
    """The choices that read another rate than the model's own."""
    return [c for c in choices if c.chosen is not None and c.chosen != c.own]


def choice_frame(choices: list[RateChoice], lead: Callable[[RateChoice], dict[str, Any]], measure: str,
                 fmt: Callable[[Stat], str]) -> pd.DataFrame:
    """One row per choice: the columns of ``lead(choice)``, then the measure (``measure``: its words) at each
    candidate rate as ``fmt`` writes it (``"not stored"``: planned, none stored; empty: not a candidate of
    this row), the rate chosen, and a note of what could not be compared (the column left out where no row has
    one)."""
    rows = []
    for c in choices:
        row = dict(lead(c))
        for lr in rates(choices):
            stat = c.stat(lr) if lr in c.runs else None
            row[f"{measure}, lr {lr_text(lr)}"] = (fmt(stat) if stat is not None
                                                   else "not stored" if lr in c.runs else "")
        row["chosen lr"] = "none stored" if c.chosen is None else lr_text(c.chosen)
        row["note"] = "; ".join(c.notes)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty or not frame["note"].astype(bool).any():
        frame = frame.drop(columns="note", errors="ignore")
    return frame
