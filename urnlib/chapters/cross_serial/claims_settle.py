"""What would settle a cross-serial claim (paper 001 sec. 3), with its cost from the stored runs: more seeds
where a difference lies within their spread; where a difference is decided against the paper, the experiment
that could explain it instead."""

from __future__ import annotations

import numpy as np

from urnlib.claims import authors_cause
from urnlib.models.recurrent import AUTHORS_CELL
from urnlib.reports.common import settle_unless_decided
from urnlib.rules import compare
from urnlib.seeds import Stat

__all__ = ["cost", "more_seeds", "lstm_settle", "authors_lstm_evidence", "AUTHORS_CELL"]


def cost(seeds, labels, n: int) -> str:
    """What ``n`` runs of each of the models ``labels`` take, from the stored runs' epoch times."""
    seconds = [[sum(row.get("seconds", 0.0) for row in run.history) for run in seeds[lab].runs]
               for lab in labels]
    hours = n * sum(float(np.mean(s)) for s in seconds if s) / 3600
    return (f"about {hours:.1f} hours of training, from the stored runs' epoch times" if hours
            else "their time not recorded")


def more_seeds(seeds, labels, n: int = 3) -> str:
    """``n`` more seeds of the models ``labels``, with their training time from the stored runs' epochs."""
    which = "each model" if len(labels) != 1 else labels[0]
    return f"{n} more seeds of {which} ({cost(seeds, labels, n)})"


def lstm_settle(loss: dict[str, Stat], pairs, seeds, more: str, tried: bool = False) -> str:
    """What would settle "LSTMs make better guesses": ``more`` where no size is decided against the paper;
    where some are, the authors' Keras LSTM at them (:func:`urnlib.reports.common.settle_unless_decided`)."""
    worse = [n for n in pairs if compare(loss[f"LSTM {n}"], loss[f"URN {n}"], higher=False).holds is False]
    if not worse:
        return more
    means = [loss[f"LSTM {n}"].mean for n in pairs]
    growing = len(means) > 1 and all(a < b for a, b in zip(means, means[1:]))
    labels = [f"LSTM {n}" for n in worse]
    n = len(seeds[labels[0]])
    return settle_unless_decided(
        False, more,
        f"the URN is lower at {', '.join(map(str, worse))} units"
        + (", where the LSTM's test loss has grown with its size (see the claim that the larger LSTMs "
           "overfit)" if growing else "")
        + (f"; the authors' LSTM cell did not change that (the evidence): both models trained on the "
           f"authors' strings too (m + n drawn uniformly, 10 symbols: what changes Fig. 2c) at those sizes "
           f"on {n} seeds would show whether their whole setting does "
           f"({cost(seeds, labels + [f'URN {k}' for k in worse], n)})" if tried else
           f"; the authors' Keras LSTM (its initialisation and dropout) at those sizes on {n} seeds would "
           f"show whether theirs guesses better ({cost(seeds, labels, n)})"))




def authors_lstm_evidence(variants, urn: dict[int, Stat], read) -> tuple[str | None, str]:
    """The cause of a Fig. 2a miss from the LSTMs trained with the authors' cell (``variants``: ``{label:
    Seeds}``; ``urn``: the URN's test loss by size at the epoch ``read`` reads), whether the authors' LSTM
    reaches a lower test loss than the URN at each size trained that way (Welch's t-test,
    :func:`urnlib.rules.compare`), the cause by :func:`urnlib.claims.authors_cause` where it is ``setting``
    (lower at every such size: the cell is why we miss); a miss that stands with the cell gets no cause (the
    cell alone is not the authors' whole setting); each size's numbers are the evidence, ``(None, "")``
    without such runs (the claim keeps its cause)."""
    found = {n: variants[f"LSTM {n}, {AUTHORS_CELL}"] for n in urn if f"LSTM {n}, {AUTHORS_CELL}" in variants}
    if not found:
        return None, ""
    loss = {n: seeds.stat(lambda run: read(run)["test_loss"]) for n, seeds in found.items()}
    decided = {n: compare(loss[n], urn[n], higher=False, names=(f"the authors' LSTM {n}", f"URN {n}"))
               for n in found}
    # in words only (read on test data): each authors' LSTM at its lowest test loss, the reading kindest to it
    kindest = {n: seeds.stat(lambda run: min(row["test_loss"] for row in run.history))
               for n, seeds in found.items()}
    text = "; ".join(f"LSTM {n} with the authors' cell (dropout 0.10 with its own output mask, orthogonal "
                     f"recurrent weights): test loss {loss[n].mean_sd(3)} against the URN's "
                     f"{urn[n].mean_sd(3)} ({decided[n].direction}; the LSTM at its lowest test loss, the "
                     f"reading kindest to it: {kindest[n].mean_sd(3)})" for n in found)
    # the cell alone is not the authors' whole setting (their strings, m + n uniform, change Fig. 2c): it can
    # be the cause (setting), but a miss that stands with it is not shown to stand with theirs
    cause = authors_cause(d.holds for d in decided.values())
    return (cause if cause == "setting" else None), text
