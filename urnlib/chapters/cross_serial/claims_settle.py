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

__all__ = ["cost", "more_seeds", "lstm_settle", "authors_lstm_evidence", "authors_whole", "AUTHORS_CELL",
           "WHOLE"]


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


def lstm_settle(loss: dict[str, Stat], pairs, seeds, more: str, tried: bool = False,
                whole: bool = False) -> str:
    """What would settle "LSTMs make better guesses": ``more`` where no size is decided against the paper;
    where some are, the authors' Keras LSTM at them (:func:`urnlib.reports.common.settle_unless_decided`);
    once it is ``tried``, both models on the authors' strings; once those are trained (``whole``) and still
    undecided, more seeds of them."""
    worse = [n for n in pairs if compare(loss[f"LSTM {n}"], loss[f"URN {n}"], higher=False).holds is False]
    if not worse:
        return more
    means = [loss[f"LSTM {n}"].mean for n in pairs]
    growing = len(means) > 1 and all(a < b for a, b in zip(means, means[1:]))
    labels = [f"LSTM {n}" for n in worse]
    n = len(seeds[labels[0]])
    if whole:
        return ("more seeds of both models in the authors' whole setting (the evidence), at the sizes where "
                "the URN is lower here, would decide it")
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




#: how the variants label the authors' strings and output size (:func:`.variants.label_of`)
WHOLE = "m+n uniform, 10 classes"


def authors_lstm_evidence(variants, urn: dict[int, Stat], read) -> tuple[str | None, str]:
    """The cause of a Fig. 2a miss from the LSTMs trained with the authors' cell (``variants``: ``{label:
    Seeds}``; ``urn``: the URN's test loss by size at the epoch ``read`` reads), whether the authors' LSTM
    reaches a lower test loss than the URN at each size trained that way (Welch's t-test,
    :func:`urnlib.rules.compare`). The cell alone can make the cause ``setting`` (lower at every such size:
    the cell is why we miss); a miss that stands with it gets no cause from it (the cell alone is not the
    authors' whole setting). Where both models were also trained in the authors' whole setting (their
    strings, m + n drawn uniformly, and 10 classes; the LSTM with their cell), that decides
    (:func:`authors_whole`). Each size's numbers are the evidence, ``(None, "")`` without such runs (the
    claim keeps its cause)."""
    found = {n: variants[f"LSTM {n}, {AUTHORS_CELL}"] for n in urn if f"LSTM {n}, {AUTHORS_CELL}" in variants}
    whole_cause, whole_text = authors_whole(variants, list(urn), read)
    if not found:
        return whole_cause, whole_text
    loss = {n: seeds.stat(lambda run: read(run)["test_loss"]) for n, seeds in found.items()}
    decided = {n: compare(loss[n], urn[n], higher=False, names=(f"the authors' LSTM {n}", f"URN {n}"))
               for n in found}
    text = "; ".join(f"LSTM {n} with the authors' cell (dropout 0.10 with its own output mask, orthogonal "
                     f"recurrent weights): test loss {loss[n].mean_sd(3)} against the URN's "
                     f"{urn[n].mean_sd(3)} ({decided[n].direction}; the LSTM at its lowest test loss, the "
                     f"reading kindest to it: {_kindest(found[n]).mean_sd(3)})" for n in found)
    cell = authors_cause(d.holds for d in decided.values())
    cause = whole_cause or (cell if cell == "setting" else None)
    return cause, "; ".join(t for t in (text, whole_text) if t)


def _kindest(seeds) -> Stat:
    """In words only (read on test data): each run at its lowest test loss, the reading kindest to it."""
    return seeds.stat(lambda run: min(row["test_loss"] for row in run.history))


def authors_whole(variants, sizes: list[int], read) -> tuple[str | None, str]:
    """Fig. 2a decided again in the authors' whole setting: at each size of ``sizes`` where ``variants`` holds
    both their LSTM (their cell) and the URN trained on their strings with 10 classes (labels ``"LSTM n,
    m+n uniform, 10 classes, the authors' cell"`` and ``"URN n, m+n uniform, 10 classes"``), whether the
    LSTM's test loss at the epoch ``read`` reads is lower (Welch's t-test); the cause by
    :func:`urnlib.claims.authors_cause` (``setting`` where it holds at every such size, ``authors`` where it
    fails at one), ``(None, "")`` without such pairs."""
    labels = {n: (f"LSTM {n}, {WHOLE}, {AUTHORS_CELL}", f"URN {n}, {WHOLE}") for n in sizes}
    pairs = {n: (variants[a], variants[b]) for n, (a, b) in labels.items() if a in variants and b in variants}
    if not pairs:
        return None, ""
    loss = {n: tuple(s.stat(lambda run: read(run)["test_loss"]) for s in both) for n, both in pairs.items()}
    decided = {n: compare(lstm, urn, higher=False, names=(f"LSTM {n}", f"URN {n}"))
               for n, (lstm, urn) in loss.items()}
    each = [f"{n} units: LSTM {lstm.mean_sd(3)} against URN {urn.mean_sd(3)} ({decided[n].direction}; the "
            f"LSTM at its lowest test loss, the reading kindest to it: {_kindest(pairs[n][0]).mean_sd(3)})"
            for n, (lstm, urn) in loss.items()]
    text = ("in the authors' whole setting (their strings, m + n drawn uniformly, and 10 classes; the LSTM "
            "with their cell): " + "; ".join(each))
    return authors_cause(d.holds for d in decided.values()), text
