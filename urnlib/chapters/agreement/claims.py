"""How the agreement chapter reads its runs, and its claims (paper 000 sec. 4, Fig. 2; Linzen et al. 2016).

Figures and tables read every run at its best epoch (:func:`best_row`): the lowest validation loss, on
sentences drawn like the training ones (the ``linzen`` source: a part of Linzen et al.'s validation file), the
measure its training monitored under the book's protocol (:mod:`urnlib.claims`); test data are read for
reporting only, and a run stored before the protocol is refused (:func:`best_index`). The claims read each run
at **the paper's final epoch** (paper 000 sec. 4: "Training is performed for ten epochs",
:data:`PAPER_EPOCHS`) and give the validation-selected reading beside it; where the two disagree the claim
says so.

**The training guard** (:func:`untrained`): a model whose run stopped before the paper's ten epochs, or
whose accuracy at epoch 10 is not clearly above the majority class or whose test loss is not clearly below
the class entropy (the loss of predicting the class shares; ``ln 2`` for balanced classes), both by
:func:`urnlib.rules.off_chance` over the seeds, is no evidence (on Linzen et al.'s files, whose test
sentences are not drawn like the training ones, the validation loss against the validation sentences' class
entropy decides instead): its claims are inconclusive with cause
``untrained``, and ``ours`` says which model and why.

Every rule is a t-test of :mod:`urnlib.rules` on the seeds against a value the paper's sentence states
(0 for "no evidence of accuracy dropping" and "declines", 1% for "error rates well under one percent"), or
a comparison with the heuristics (Welch's t-test): no tolerance of ours. A curve's change is fitted from the
first bucket whose attractor count is exact (:data:`FIRST_EXACT`: on Linzen et al.'s files the 0 bucket is
our selection of held-out sentences, :mod:`urnlib.tasks.agreement_linzen`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from urnlib import rules
from urnlib.claims import Claim, across_settings, claim
from urnlib.metrics import accuracy_by_count_seeds
from urnlib.chapters.agreement.report_tables import PAPER_SENTENCES, analysis_claims
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat
from urnlib.statements import NO_DROP_RULE, no_drop
from urnlib.tasks.agreement_linzen import validation_share

CHAPTER = "agreement"
#: the heuristics stored with every run's data statistics, by the label the figure and tables give them
HEURISTICS = {"first noun": "first-noun heuristic", "nearest noun": "nearest-noun heuristic"}
PAPER_EPOCHS = 10  # paper 000 sec. 4: "Training is performed for ten epochs"
#: source -> the first attractor count whose bucket is exact (the fitted changes start there; default 0)
FIRST_EXACT = {"linzen": 1}
#: the sentences of paper 000 the claims decide, word for word
QUOTES = {
    "flat": "Crucially, there is no evidence of accuracy dropping as the number of attractors increases.",
    "error": 'We see that the TURN "solves" this task, with error rates well under one percent.',
    "order": "if an RNN captures the long-distance dependencies involved in agreement relations, it cannot "
             "rely solely on the linear sequence of nouns (in particular their number inflections) preceding "
             "the predicted verb in a sentence.",
    "lstm": "Even though the model does better than the majority class baseline for up to four attractors, "
            "accuracy declines steadily as the number of attractor increases.",
}


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


def _stats(seeds: Seeds) -> list[dict]:
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
    rows = [s["heuristics"][name] for s in _stats(seeds)]
    return accuracy_by_count_seeds([(r["attr_correct"], r["attr_total"]) for r in rows], min_total)


def _with_attractors(row: dict) -> float:
    """Accuracy over the test sentences with at least one attractor (NaN when there are none)."""
    total = sum(row["attr_total"][1:])
    return sum(row["attr_correct"][1:]) / total if total else float("nan")


def attractor_stat(seeds: Seeds, read=best_row) -> Stat:
    """A model's accuracy on the sentences with attractors, at the epoch ``read`` picks, over seeds."""
    return seeds.stat(lambda run: _with_attractors(read(run)))


def heuristic_stat(seeds: Seeds, name: str) -> Stat:
    """Heuristic ``name``'s accuracy on the sentences with attractors, over the seeds' test sets."""
    return Stat.of(_with_attractors(s["heuristics"][name]) for s in _stats(seeds))


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


def _majority(seeds: Seeds) -> Stat:
    """The share of the more frequent verb number in each seed's test set."""
    return Stat.of(max(s["test_plural_share"], 1 - s["test_plural_share"]) for s in _stats(seeds))


def baseline_stat(seeds: Seeds) -> Stat:
    """Per seed, the best of the majority class and the two heuristics on the test sentences with attractors:
    what a model must beat for its accuracy there to mean anything."""
    return Stat.of(np.nanmax([max(s["test_plural_share"], 1 - s["test_plural_share"]),
                              *(_with_attractors(s["heuristics"][name]) for name in HEURISTICS)])
                   for s in _stats(seeds))


# --------------------------------------------------------------------------- the training guard
def _entropy(p: float) -> float:
    return -sum(x * math.log(x) for x in (p, 1 - p) if x > 0)


def _valid_shares(seeds: Seeds) -> list[float] | None:
    """Per seed, the share of plural verbs among the validation sentences, for a source whose test sentences
    are not drawn like its training ones (``linzen``: trained on the mixed validation file, tested mostly on
    sentences with attractors); ``None`` for the others, whose test sentences are."""
    if seeds[0].params.get("task", {}).get("source") != "linzen":
        return None
    return [validation_share(t["seed"], t["test_fraction"], t["max_examples"])
            for t in (run.params["task"] for run in seeds)]


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
    read, data, shares = at_epoch(epochs), _stats(seeds), _valid_shares(seeds)
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
        zero = Stat.of(acc0["per_seed"][:, 0] - np.asarray(_majority(seeds).values)
                       if len(acc0["count"]) and acc0["count"][0] == 0 else [])
        if not rules.off_chance(0.0, zero):
            return (f"the {label}'s accuracy without attractors at epoch {epochs} is not clearly above the "
                    f"majority class (difference {zero.text(3)}): a decline needs a model that learnt them")
    return ""


# --------------------------------------------------------------------------- claims
@dataclass(frozen=True)
class _Read:
    """What one reading of the runs decided."""

    holds: bool | None
    text: str
    direction: str
    seeds_needed: int | None = None


def _word(r: _Read, clause: bool = False) -> str:
    """What a reading decided: "holds", "fails" or "undecided" ("is undecided" in a ``clause``)."""
    return {True: "holds", False: "fails", None: "is undecided" if clause else "undecided"}[r.holds]


def _untrained_settle(seeds: Seeds, epochs: int) -> str:
    """The experiment that would give evidence where :func:`untrained` found none: the paper's epochs where a
    run stopped before them; for a model at chance after them, longer training on the same seeds."""
    if any(len(run.history) < epochs for run in seeds):
        return f"retrain for the paper's {epochs} epochs, selecting on validation data"
    return (f"the model is at chance after the paper's {epochs} epochs at this learning rate: train the same "
            "seeds on past them (early stopping on the validation loss) and see whether they leave chance")


def _decided(statement: str, source: str, paper: str, rule: str, decide, seeds: Seeds, why: str, miss: str,
             settle: str, quote: str, epochs: int) -> Claim:
    """A claim read at the paper's final epoch (the validation-selected reading beside it), or inconclusive
    (cause ``untrained``) when ``why`` says a model it rests on is no evidence."""
    best = decide(best_row)
    if why:  # the one guard of every chapter (claim's idle): no evidence, whatever the reading says
        return claim(CHAPTER, source, statement, paper,
                     f"for information, at the {SELECTED}: {best.text} ({_word(best)})", rule, best.holds,
                     seeds=len(seeds), quote=quote, direction=best.direction, idle=[why],
                     epoch=f"- (not trained); the information at the {SELECTED}",
                     settle=_untrained_settle(seeds, epochs))
    main = decide(at_epoch(epochs))
    same = "the same verdict" if best.holds == main.holds else (
        f"there it {_word(best, clause=True)}: the two readings disagree")
    return claim(CHAPTER, source, statement, paper,
                 f"at epoch {epochs}: {main.text}; at the {SELECTED}: {best.text} ({same})",
                 rule, main.holds, seeds=len(seeds), cause="noise" if main.holds is None else miss,
                 quote=quote, direction=main.direction, seeds_needed=main.seeds_needed,
                 epoch=f"epoch {epochs} (the paper's final; the runs trained on), beside it the {SELECTED}",
                 settle="" if main.holds is not False else settle)


def _hours(seeds: list[Seeds], epochs: int, factor: float = 1.0) -> float:
    """CPU hours to train ``seeds`` for ``epochs`` on ``factor`` times their data, from their seconds per
    epoch."""
    return sum(float(np.mean([np.mean(r.column("seconds")) for r in s])) * len(s) for s in seeds
               ) * epochs * factor / 3600


def claims(runs_by_source: dict[str, dict[str, Seeds]], *, turn: str, analysis_source: str | None,
           min_total: int = 20, setting: str | None = None, epochs: int = PAPER_EPOCHS) -> list[Claim]:
    """The claims of one setting's runs (with ``setting``, each statement starts with ``"[setting] "``), each
    read at the paper's final epoch ``epochs`` beside the lowest-validation-loss reading, behind the training
    guard (:func:`untrained`). A flat curve means something only above the heuristics (the first-noun
    heuristic is flat too): "does not drop" also needs the model to beat, on the sentences with attractors,
    the best of the majority class and the two heuristics (:func:`baseline_stat`)."""
    out = []
    for source, runs in runs_by_source.items():
        first = next(iter(runs.values()))
        base = baseline_stat(first)
        base_text = (f"best of majority class and heuristics {base.text()} ("
                     + "; ".join(f"{label} {heuristic_stat(first, name).text()}"
                                 for name, label in HEURISTICS.items()) + ")")
        lstm_settle = (f"train the LSTM on Linzen et al.'s Wikipedia sentences (only their validation and "
                       f"test files are shipped here), {epochs} epochs, selecting on validation data")
        start = FIRST_EXACT.get(source, 0)
        size = first[0].final["data"]["train_examples"]
        cost = (f"{epochs} epochs, selecting on validation data: about "
                f"{_hours(list(runs.values()), epochs, PAPER_SENTENCES * 0.9 / size):.0f} CPU hours for "
                f"{len(first)} seeds, scaled from these runs")
        if source == "linzen":  # the paper's distribution, but not its training data
            miss = "data"
            settle = (f"train on Linzen et al.'s training sentences, which are not released (paper 000: "
                      f"90% of {PAPER_SENTENCES / 1e6:.1f} million; here {size:,} of their validation file), "
                      + cost)
        elif source == "synthetic":  # our grammar: no data is missing for the TURN's claims
            miss = "open"
            paper = f"{PAPER_SENTENCES * 0.9 / 1e6:.1f} million"
            settle = (f"whether the miss is the data's size: train on as many sentences of the grammar as "
                      f"the paper had of Wikipedia ({paper}; here {size:,}), " + cost)
        else:
            miss = "data"
            settle = (f"train on Linzen et al.'s {PAPER_SENTENCES / 1e6:.1f} million Wikipedia sentences "
                      "(here only their validation and test files are shipped; our stand-in is this "
                      f"source's {size:,} sentences), " + cost)
        if turn in runs:
            seeds = runs[turn]
            why = untrained(seeds, turn, epochs)

            def flat(read, seeds=seeds, start=start):
                acc, mine = by_attractors(seeds, min_total, read), attractor_stat(seeds, read)
                change = fall(acc, start)
                # "no evidence of a drop": an equivalence test, the margin the seeds' spread (the paper
                # gives none); a drop that is merely not significant decides nothing
                drop = no_drop(change=change, names=("", "accuracy"))
                above = rules.compare(mine, base, names=(turn, "the best baseline"))
                holds = rules.combine([drop, above])[0]  # the heuristics: what gives it meaning
                word = {True: "no drop beyond the margin", False: "a drop beyond the margin",
                        None: "undecided by the seeds"}[drop.holds]
                return _Read(holds, f"fitted change from {start} to {_last(acc)} attractors {change.text()} "
                             f"({word}); accuracy on sentences with attractors {mine.text()} vs {base_text}",
                             f"{drop.direction}; {above.direction}", rules.needed([drop, above]))

            out.append(_decided(
                f"{turn} accuracy does not drop as attractors increase, above the heuristics ({source} data)",
                "paper 000 sec. 4, Fig. 2", "no evidence of a drop, up to 12 attractors",
                f"no drop: the fitted change from the first exact bucket to the last ({NO_DROP_RULE}), and "
                f"on sentences with attractors better than the majority class and both heuristics "
                f"({rules.BEATS_RULE}); buckets with >= {min_total} sentences on every seed",
                flat, seeds, why, miss, settle, QUOTES["flat"], epochs))

            def error(read, seeds=seeds):
                d = rules.threshold(seeds.stat(lambda run: 1 - read(run)["accuracy"]), 0.01, above=False,
                                    name="test error")
                return _Read(d.holds, d.direction, d.direction, d.seeds_needed)

            out.append(_decided(f"{turn} error rate well under 1% ({source} data)", "paper 000 sec. 4",
                                "< 1%", f"test error below 0.01 ({rules.THRESHOLD_RULE})", error, seeds, why,
                                miss, settle, QUOTES["error"], epochs))

            def beats(read, seeds=seeds):
                d = rules.compare(attractor_stat(seeds, read), base, names=(turn, "the best baseline"))
                return _Read(d.holds, f"{turn} {attractor_stat(seeds, read).text()}; {base_text}",
                             d.direction, d.seeds_needed)

            out.append(_decided(
                f"{turn} does not rely on the linear order of nouns: on sentences with attractors it beats "
                f"the first-noun and nearest-noun heuristics ({source} data)",
                "paper 000 sec. 4 (after Linzen et al. 2016)",
                "agreement needs syntactic structure, not the nouns' order",
                f"better than the majority class and both heuristics ({rules.BEATS_RULE})", beats, seeds,
                why, miss, settle, QUOTES["order"], epochs))
        if "LSTM" in runs:
            seeds = runs["LSTM"]

            def declines(read, seeds=seeds, start=start):
                acc = by_attractors(seeds, min_total, read)
                d = rules.threshold(fall(acc, start), 0.0, above=False, name="fitted change")
                return _Read(d.holds, f"fitted change from {start} to {_last(acc)} attractors "
                             f"{fall(acc, start).text()}", d.direction, d.seeds_needed)

            out.append(_decided(
                f"the LSTM's accuracy declines as attractors increase ({source} data)",
                "paper 000 sec. 6.1 and Fig. 2 (Linzen et al. 2016)",
                "declines (reported up to 4 attractors)",
                f"fitted change below 0 ({rules.THRESHOLD_RULE}; buckets with >= {min_total} sentences on "
                f"every seed)", declines, seeds, untrained(seeds, "LSTM", epochs, at_zero=True),
                "data",  # the paper's curve is Linzen et al.'s, on their Wikipedia sentences: not ours
                settle if source != "synthetic" else lstm_settle, QUOTES["lstm"], epochs))
    if analysis_source is not None and turn in runs_by_source.get(analysis_source, {}):
        seeds = runs_by_source[analysis_source][turn]
        out += analysis_claims(seeds, analysis_source, CHAPTER, untrained=untrained(seeds, turn, epochs))
    return [replace(c, statement=f"[{setting}] {c.statement}") for c in out] if setting else out


def settings(config) -> dict[str, str]:
    """``{setting: what it is}`` of the settings the chapter trains (:meth:`AgreementRuns.views`)."""
    out = {config.setting: "Adam's learning rate as paper 000 sec. 4 prints it"}
    if config.code_setting:
        out[config.code_setting] = "the authors' code: Adam() at its default rate"
    return out


def chapter_claims(runs, config) -> list[Claim]:
    """The claims under each setting the runs were trained in (statements prefixed with the setting when
    there are two), Tables 1-2's on the main setting's k-TURN only; a claim missed for an open cause under
    one setting and reproduced under the other gets the cause ``setting``
    (:func:`urnlib.claims.across_settings`)."""
    views = runs.views(config)
    by_setting = {name: claims(view, turn=config.turn, min_total=config.min_total,
                               analysis_source=(config.analysis_source or None) if name == config.setting
                               else None, setting=name if len(views) > 1 else None)
                  for name, view in views.items()}
    return across_settings(by_setting)


def _last(acc: dict[str, np.ndarray]) -> str:
    return str(int(acc["count"][-1])) if len(acc["count"]) else "?"
