"""Whether more epochs explain Table 2's accuracies (issue 50): the cause of the "accuracies themselves" miss
from each encoder's validation curve.

Our encoders train for at most a cap of epochs (the scaled group: 30) where the authors' code runs 90
(:data:`~urnlib.chapters.tpru.report_scaled.AUTHORS_EPOCHS`). For each encoder the claim rests on, its
validation accuracy after every epoch of the later half of its training (the generated validation split,
drawn like the training pairs; the early epochs climb from chance and would steepen the line) is fitted on
log2 of the epoch over every seed (:func:`urnlib.trends.log2_trend`), against its printed valid accuracy in
Table 2. The cause is ``scale`` where the line of every encoder below its printed number improves and reaches
it within the authors' epochs; otherwise none (the claim keeps its own), the curves being the evidence
either way.
"""

from __future__ import annotations

import math

from urnlib.chapters.tpru.report import PAPER_TABLE2
from urnlib.chapters.tpru.report_scaled import AUTHORS_EPOCHS
from urnlib.seeds import Seeds
from urnlib.trends import LogTrend, log2_trend

__all__ = ["curve_trend", "epochs_cause"]


def curve_trend(seeds: Seeds, target: float) -> tuple[LogTrend | None, int]:
    """The validation accuracy's line over the later half of the epochs of ``seeds`` (every seed's points),
    against ``target`` (a share), with the doublings to the authors' epochs; and the most epochs a run
    trained."""
    top = max(len(run.history) for run in seeds)
    rows = [row for run in seeds for row in run.history if row["epoch"] > top // 2 and "valid_acc" in row]
    trend = log2_trend([row["epoch"] for row in rows], [row["valid_acc"] for row in rows], target=target,
                       higher=True, room=math.log2(AUTHORS_EPOCHS / top))
    return trend, top


def epochs_cause(ent: dict[str, Seeds], printed: dict[str, str], below: list[str]) -> tuple[str | None, str]:
    """``(cause, evidence)``: ``printed`` maps each encoder the claim rests on to its Table 2 row; ``below``
    names those under their printed valid accuracy. ``scale`` where every one of ``below`` reaches its number
    within the authors' epochs on its line; ``(None, "")`` where none of them has a curve."""
    parts, reach = [], []
    for label in below:
        target = PAPER_TABLE2[printed[label]]["valid"] / 100
        trend, top = curve_trend(ent[label], target)
        if trend is None:
            continue
        reach.append(trend.reaches)
        words = trend.words("epochs", f"{100 * target:.1f}%", top, what="epoch",
                            theirs=f"the authors' {AUTHORS_EPOCHS} epochs are")
        parts.append(f"{label}: {words}")
    if not parts:
        return None, ""
    cause = "scale" if all(reach) else None
    verdict = (f"More epochs, up to the authors' {AUTHORS_EPOCHS}, would close the gap on these lines"
               if cause else f"The lines do not reach the printed accuracies within the authors' "
               f"{AUTHORS_EPOCHS} epochs: the epochs alone do not explain the gap")
    return cause, ("validation accuracy over the later half of the epochs trained, on log2 of the epoch (the "
                   "generated validation split): " + "; ".join(parts) + f". {verdict}")
