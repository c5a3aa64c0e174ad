"""How the agreement chapter reads its runs (paper 000 sec. 4, Fig. 2; Linzen et al. 2016), and its training
guard; the claims are in :mod:`urnlib.chapters.agreement.claims`.

Figures and tables read every run at its best epoch (:func:`best_row`): the lowest validation loss, on
sentences drawn like the training ones (the ``linzen`` source: a part of Linzen et al.'s validation file), the
measure its training monitored under the book's protocol (:mod:`urnlib.claims`); test data are read for
reporting only, and a run stored before the protocol is refused (:func:`best_index`). The claims read each run
at **the paper's final epoch** (paper 000 sec. 4: "Training is performed for ten epochs",
:data:`PAPER_EPOCHS`, :func:`at_epoch`).

**The training guard** (:func:`untrained`): a model whose run stopped before the paper's ten epochs, or
whose accuracy at epoch 10 is not clearly above the majority class or whose test loss is not clearly below
the class entropy (the loss of predicting the class shares; ``ln 2`` for balanced classes), both by
:func:`urnlib.rules.off_chance` over the seeds, is no evidence (on Linzen et al.'s files, whose test
sentences are not drawn like the training ones, the validation loss against the validation sentences' class
entropy decides instead): its claims are inconclusive with cause ``untrained``, and ``ours`` says which model
and why.
"""

from __future__ import annotations

import math

import numpy as np

from urnlib import rules
from urnlib.metrics import accuracy_by_count_seeds
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat
from urnlib.tasks.agreement_linzen import POOL_PARAM, validation_share

__all__ = ["HEURISTICS", "PAPER_EPOCHS", "SELECTED", "best_index", "best_row", "at_epoch", "data_stats",
           "by_attractors", "heuristic_by_attractors", "with_attractors", "attractor_stat", "heuristic_stat",
           "fall", "majority", "baseline_stat", "untrained", "untrained_settle"]

#: the heuristics stored with every run's data statistics, by the label the figure and tables give them
HEURISTICS = {"first noun": "first-noun heuristic", "nearest noun": "nearest-noun heuristic"}
PAPER_EPOCHS = 10  # paper 000 sec. 4: "Training is performed for ten epochs"


# --------------------------------------------------------------------------- reading runs
def best_index(run: Run) -> int:
    """The 0-based index of the run's best epoch: the lowest validation loss, the measure its training
    monitored (the book's protocol). A run that monitored anything else is refused: it predates the protocol
    and must be trained again (``python -m urnlib.cli train --scale paper --only agreement``)."""
    key = run.params.get("train", {}).get("monitor")
    if key != "val_loss":
        raise ValueError(f"run {run.name!r} selected its epoch on {key or 'no measure'!r}, not on validation "
                         "data: it predates the book's protocol; train it again (python -m urnlib.cli train "
                         "--scale <preset> --only agreement)")
    return int(np.argmin(run.column(key)))


#: the best-epoch reading (:func:`best_index`), in words
SELECTED = "lowest validation loss"


def best_row(run: Run) -> dict:
    """The history row of the run's best epoch (:func:`best_index`): what every figure and table reads."""
    return run.history[best_index(run)]


def at_epoch(epoch: int):
    """A reader of the history row of ``epoch`` (1-based) of a run that reached it."""
    return lambda run: run.history[epoch - 1]


def data_stats(seeds: Seeds) -> list[dict]:
    """The data statistics of each seed (the runs of one source and seed share their data)."""
    return [run.final["data"] for run in seeds]


def by_attractors(seeds: Seeds, min_total: int = 1, read=best_row) -> dict[str, np.ndarray]:
    """Accuracy by number of attractors at the epoch ``read`` picks (default: each run's best): mean over
    seeds, ``low``/``high`` mean ± sd, ``per_seed`` (:func:`urnlib.metrics.accuracy_by_count_seeds`;
    buckets every seed fills with ``min_total``)."""
    rows = [read(run) for run in seeds]
    return accuracy_by_count_seeds([(r["attr_correct"], r["attr_total"]) for r in rows], min_total)


def heuristic_by_attractors(seeds: Seeds, name: str, min_total: int = 1) -> dict[str, np.ndarray]:
    """The same for heuristic ``name`` (a key of :data:`HEURISTICS`) on the test sets of ``seeds``."""
    rows = [s["heuristics"][name] for s in data_stats(seeds)]
    return accuracy_by_count_seeds([(r["attr_correct"], r["attr_total"]) for r in rows], min_total)


def with_attractors(row: dict) -> float:
    """Accuracy over the test sentences with at least one attractor (NaN when there are none)."""
    total = sum(row["attr_total"][1:])
    return sum(row["attr_correct"][1:]) / total if total else float("nan")


def attractor_stat(seeds: Seeds, read=best_row) -> Stat:
    """A model's accuracy on the sentences with attractors, at the epoch ``read`` picks, over seeds."""
    return seeds.stat(lambda run: with_attractors(read(run)))


def heuristic_stat(seeds: Seeds, name: str) -> Stat:
    """Heuristic ``name``'s accuracy on the sentences with attractors, over the seeds' test sets."""
    return Stat.of(with_attractors(s["heuristics"][name]) for s in data_stats(seeds))


def fall(acc: dict[str, np.ndarray], start: int = 0) -> Stat:
    """Per seed, the least-squares change of accuracy from ``start`` attractors (the first exact bucket,
    :data:`FIRST_EXACT`) to the largest count kept (the whole curve, not its noisiest bucket), rounded to 12
    decimals (a flat curve's least-squares fit leaves float residue like -8e-17, whose sign would otherwise
    decide a rule); NaN for a seed with fewer than 2 buckets."""
    kept = np.asarray(acc["count"]) >= start
    counts = np.asarray(acc["count"], dtype=float)[kept]
    if len(counts) < 2:
        return Stat.of([float("nan")] * len(acc["per_seed"]))
    return Stat.of(round(float(np.polyfit(counts, row[kept], 1)[0] * (counts[-1] - counts[0])), 12)
                   for row in acc["per_seed"])


def majority(seeds: Seeds) -> Stat:
    """The share of the more frequent verb number in each seed's test set."""
    return Stat.of(max(s["test_plural_share"], 1 - s["test_plural_share"]) for s in data_stats(seeds))


def baseline_stat(seeds: Seeds) -> Stat:
    """Per seed, the best of the majority class and the two heuristics on the test sentences with attractors:
    what a model must beat for its accuracy there to mean anything."""
    return Stat.of(np.nanmax([max(s["test_plural_share"], 1 - s["test_plural_share"]),
                              *(with_attractors(s["heuristics"][name]) for name in HEURISTICS)])
                   for s in data_stats(seeds))


# --------------------------------------------------------------------------- the training guard
def _entropy(p: float) -> float:
    return -sum(x * math.log(x) for x in (p, 1 - p) if x > 0)


def _valid_shares(seeds: Seeds) -> list[float] | None:
    """Per seed, the share of plural verbs among the validation sentences, for a source whose test sentences
    are not drawn like its training ones (``linzen``: trained on the mixed validation file, tested mostly on
    sentences with attractors); ``None`` for the others, whose test sentences are."""
    if seeds[0].params.get("task", {}).get("source") != "linzen":
        return None
    return [validation_share(t["seed"], t["test_fraction"], t["max_examples"], pool)
            for t, pool in ((run.params["task"], run.params.get(POOL_PARAM, 0.0)) for run in seeds)]


def _which(seeds: Seeds, *gaps: Stat) -> str:
    """Which seeds are at or below chance on any of ``gaps`` (per seed, in the order of ``seeds``), in words:
    the guard is over the seeds' band, and a few seeds at chance widen it."""
    low = [str(s) for i, s in enumerate(seeds.seeds) if any(g.values[i] <= 0 for g in gaps)]
    if not low:
        return "; no single seed is at or below chance: the seeds' spread is"
    return (f"; seed{'s' if len(low) > 1 else ''} {', '.join(low)} of {len(seeds)} at or below chance on "
            f"{'one' if len(gaps) == 1 else 'either'} measure")


def untrained(seeds: Seeds, label: str, epochs: int = PAPER_EPOCHS, *, at_zero: bool = False) -> str:
    """Why the runs of ``seeds`` are no evidence, in words ("" when they are): a run stopped before the
    paper's ``epochs``; or, at that epoch, accuracy not clearly above the majority class or test loss not
    clearly below the class entropy (:func:`urnlib.rules.off_chance` over the seeds, and the accuracy on
    every seed: a seed above the majority class whose test loss exceeds the entropy overfits); where the test
    sentences are not drawn like the training ones (:func:`_valid_shares`), the validation loss not clearly
    below the validation sentences' class entropy instead (a model that fails on attractors is not thereby
    untrained); with ``at_zero``, also accuracy without attractors not clearly above the majority class (a
    decline presupposes it)."""
    short = [f"seed {s} after {len(run.history)}" for s, run in zip(seeds.seeds, seeds)
             if len(run.history) < epochs]
    if short:
        return f"the {label} stopped before the paper's {epochs} epochs ({', '.join(short)} epochs)"
    read, data, shares = at_epoch(epochs), data_stats(seeds), _valid_shares(seeds)
    if shares is not None:
        gap = Stat.of(_entropy(p) - read(r)["val_loss"] for r, p in zip(seeds, shares))
        if not rules.off_chance(0.0, gap):
            return (f"the {label} is at chance at epoch {epochs} on its validation sentences: class entropy "
                    f"minus validation loss {gap.text(3)}{_which(seeds, gap)}")
    else:
        acc = Stat.of(read(r)["accuracy"] - max(d["test_plural_share"], 1 - d["test_plural_share"])
                      for r, d in zip(seeds, data))
        loss = Stat.of(_entropy(d["test_plural_share"]) - read(r)["test_loss"] for r, d in zip(seeds, data))
        # each seed is judged by its accuracy: a seed above the majority class whose test loss exceeds the
        # class entropy is overconfident (it overfits), not at chance; the loss guards the seeds' band
        if not (rules.off_chance(0.0, acc) and rules.off_chance(0.0, loss, each=False)):
            return (f"the {label} is at chance at epoch {epochs}: accuracy minus majority class "
                    f"{acc.text(3)}, class entropy minus test loss {loss.text(3)}{_which(seeds, acc, loss)}")
    if at_zero:
        acc0 = by_attractors(seeds, 1, read)
        zero = Stat.of(acc0["per_seed"][:, 0] - np.asarray(majority(seeds).values)
                       if len(acc0["count"]) and acc0["count"][0] == 0 else [])
        if not rules.off_chance(0.0, zero):
            return (f"the {label}'s accuracy without attractors at epoch {epochs} is not clearly above the "
                    f"majority class (difference {zero.text(3)}): a decline needs a model that learnt them")
    return ""


def untrained_settle(seeds: Seeds, epochs: int) -> str:
    """The experiment that would give evidence where :func:`untrained` found none: the paper's epochs where a
    run stopped before them; for a model at chance after them, longer training on the same seeds."""
    if any(len(run.history) < epochs for run in seeds):
        return f"retrain for the paper's {epochs} epochs, selecting on validation data"
    return (f"the model is at chance after the paper's {epochs} epochs at this learning rate: train the same "
            "seeds on past them (early stopping on the validation loss) and see whether they leave chance")
