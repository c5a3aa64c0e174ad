"""The TPRU chapter's learning-rate choice (:mod:`urnlib.chapters.tpru.lr`; not in paper 002) in words and
as a table: per entailment encoder, its best validation accuracy at each candidate rate and the rate the
chapter reads."""

from __future__ import annotations

import pandas as pd

from urnlib.lr_choice import RateChoice, lr_text
from urnlib.reports.lr_choice import choice_frame, chosen_elsewhere, rates
from urnlib.seeds import Stat

__all__ = ["lr_choice"]


def _percent(stat: Stat) -> str:
    return Stat.of(100 * v for v in stat.values).mean_sd(1)


def lr_choice(choices: list[RateChoice]) -> tuple[str, pd.DataFrame]:
    """A sentence (Markdown) and a table, one row per encoder: its best validation accuracy (%, mean ± sd over
    the stored seeds) at each candidate rate, and the rate the chapter reads."""
    frame = choice_frame(choices, lambda c: {"encoder": c.label}, "validation accuracy (%)", _percent)
    if not choices:
        return "No entailment encoder is planned.", frame
    own = lr_text(choices[0].own)
    if all(len(c.runs) == 1 for c in choices):
        return (f"Every encoder trains at one learning rate, the chapter's `lr` (Adam, {own}, the authors' "
                "code's; `lr_choices` names no other), so nothing is chosen: the table gives each encoder's "
                "best validation accuracy at that rate."), frame
    other = chosen_elsewhere(choices)
    moved = (f"another rate than {own} was chosen for {len(other)} of the {len(choices)} encoders ("
             + ", ".join(f"{c.label}: {lr_text(c.chosen)}" for c in other) + ")"
             if other else f"every encoder is read at {own}")
    text = (f"Every encoder trained at each learning rate of `lr_choices` "
            f"({', '.join(lr_text(lr) for lr in rates(choices))}) on every seed, and the chapter reads it at "
            "the rate whose runs reach the higher mean best validation accuracy over the seeds (an exact tie "
            f"keeps `lr` = {own}; the test splits are not read). This is the book's choice, not the paper's: "
            "the ablation above found few-role TPRUs that stay at chance at the authors' rate. Here "
            f"{moved}.")
    partial = [c for c in choices if c.notes]
    if partial:
        text += (f" {len(partial)} of the {len(choices)} compare fewer runs than planned: the runs not "
                 "stored are left out of the choice (the note says which).")
    return text, frame
