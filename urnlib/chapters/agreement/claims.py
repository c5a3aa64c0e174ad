"""The claims of the agreement chapter (paper 000 sec. 4, Fig. 2; Linzen et al. 2016), declared
(:mod:`urnlib.declare`): one :class:`~urnlib.declare.Spec` per claim in :data:`TURN_SPECS` and
:data:`LSTM_SPECS`, each with a small measure on one source's runs (:class:`Measures`); Tables 1-2's are
:data:`urnlib.chapters.agreement.report_tables.TABLE_SPECS`. How the runs are read, and the training guard,
are in :mod:`urnlib.chapters.agreement.claims_read` (re-exported here).

The claims read each run at **the paper's final epoch** (paper 000 sec. 4: "Training is performed for ten
epochs", :data:`PAPER_EPOCHS`) and give the validation-selected reading beside it (:data:`SELECTED`); where
the two disagree the claim says so. **The training guard** (:func:`untrained`): a model that stopped before
the paper's ten epochs or is at chance there is no evidence: its claims are inconclusive with cause
``untrained``, ``ours`` says which model and why, and gives the validation-selected reading for information.

Every rule is a t-test of :mod:`urnlib.rules` on the seeds against a value the paper's sentence states
(0 for "no evidence of accuracy dropping" and "declines", 1% for "error rates well under one percent"), or
a comparison with the heuristics (Welch's t-test): no tolerance of ours. A curve's change is fitted from the
first bucket whose attractor count is exact (:data:`FIRST_EXACT`: on Linzen et al.'s files the 0 bucket is
our selection of held-out sentences, :mod:`urnlib.tasks.agreement_linzen`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from urnlib import rules
from urnlib.chapters.agreement.claims_read import (HEURISTICS, PAPER_EPOCHS, SELECTED, at_epoch,  # noqa: F401
                                                   attractor_stat, baseline_stat, best_index, best_row,
                                                   by_attractors, data_stats, fall, heuristic_by_attractors,
                                                   heuristic_stat, majority, untrained, untrained_settle,
                                                   with_attractors)
from urnlib.chapters.agreement.claims_sizes import Points, parts, pooled_trends_of, size_cause, trends_of
from urnlib.chapters.agreement.report_tables import PAPER_SENTENCES, analysis_claims
from urnlib.claims import Claim, across_settings
from urnlib.declare import Measured, Spec, evaluate
from urnlib.rules import Decision
from urnlib.seeds import Seeds, Stat
from urnlib.statements import no_drop

CHAPTER = "agreement"
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
#: the epoch a claim reads (``{epochs}``: the paper's final), and where its model did not train
READ = "epoch {epochs} (the paper's final; the runs trained on), beside it the " + SELECTED
IDLE = f"- (not trained); the information at the {SELECTED}"


# --------------------------------------------------------------------------- what the measures read
@dataclass
class Measures:
    """One source's runs by model, and what their claims read beside them: the best of the majority class
    and the heuristics, the first exact bucket, the cause and settle text of a miss, by model, and the size
    trend of each model that has one (:mod:`.claims_sizes`: it decides a miss's cause), with what its
    evidence opens with."""

    source: str
    runs: dict[str, Seeds]
    turn: str
    min_total: int
    epochs: int
    why: dict[str, str]  # model -> why it is no evidence (untrained(); "" when it is)
    base: Stat
    base_text: str
    start: int
    miss: dict[str, str]  # model -> the cause of a miss
    settle: dict[str, str]  # model -> the experiment that would settle a miss
    trends: dict[str, Points] = field(default_factory=dict)  # model -> its size trend (none: the cause stays)
    trend_note: str = ""
    pooled: dict[str, Points] = field(default_factory=dict)  # model -> its pooled trend (claims_sizes)
    own: frozenset = frozenset()  # models whose trend trained at this setting's rate (no trend_note's words)

    def subject(self, label: str) -> str:
        """The words of :func:`untrained`'s sentence that name the model ("the LSTM", "the LSTM's"): the
        model's key in :func:`~urnlib.declare.evaluate`, which writes a guard as "<key> <the rest>"."""
        name = f"the {label}"
        return name + "'s" if self.why.get(label, "").startswith(name + "'s ") else name

    @property
    def seeds(self) -> dict[str, int]:
        return {self.subject(label): len(self.runs[label]) for label in self.why}

    @property
    def idle(self) -> dict[str, str]:
        """The training guard as :func:`~urnlib.declare.evaluate` takes it: its sentence, word for word."""
        return {self.subject(lab): why[len(self.subject(lab)) + 1:] for lab, why in self.why.items() if why}


def _hours(seeds: list[Seeds], epochs: int, factor: float = 1.0) -> float:
    """CPU hours to train ``seeds`` for ``epochs`` on ``factor`` times their data, from their seconds per
    epoch."""
    return sum(float(np.mean([np.mean(r.column("seconds")) for r in s])) * len(s) for s in seeds
               ) * epochs * factor / 3600


def _miss(source: str, runs: dict[str, Seeds], epochs: int) -> tuple[str, str]:
    """``(cause, settle)`` of a miss of the TURN's claims on ``source``: the data, except on our grammar."""
    first = next(iter(runs.values()))
    size = first[0].final["data"]["train_examples"]
    cost = (f"{epochs} epochs, selecting on validation data: about "
            f"{_hours(list(runs.values()), epochs, PAPER_SENTENCES * 0.9 / size):.0f} CPU hours for "
            f"{len(first)} seeds, scaled from these runs")
    if source == "linzen":  # the paper's distribution, but not its training data
        return "data", ("train on Linzen et al.'s training sentences, which are not released (paper 000: "
                        f"90% of {PAPER_SENTENCES / 1e6:.1f} million; here {size:,} of their validation "
                        "file), " + cost)
    if source == "synthetic":  # our grammar: no data is missing for the TURN's claims
        paper = f"{PAPER_SENTENCES * 0.9 / 1e6:.1f} million"
        return "open", (f"whether the miss is the data's size: train on as many sentences of the grammar as "
                        f"the paper had of Wikipedia ({paper}; here {size:,}), " + cost)
    return "data", (f"train on Linzen et al.'s {PAPER_SENTENCES / 1e6:.1f} million Wikipedia sentences "
                    "(here only their validation and test files are shipped; our stand-in is this "
                    f"source's {size:,} sentences), " + cost)


def measures(source: str, runs: dict[str, Seeds], *, turn: str, min_total: int, epochs: int,
             trends: dict[str, Points] | None = None, trend_note: str = "",
             pooled: dict[str, Points] | None = None, own: frozenset = frozenset()) -> Measures:
    """What the claims on one source's runs read; the LSTM's decline is put down to the data (the paper's
    curve is Linzen et al.'s, on their Wikipedia sentences: not ours); a model's size trend (``trends``) and
    pooled trend (``pooled``) decide the cause of its misses instead."""
    first = next(iter(runs.values()))
    base = baseline_stat(first)
    base_text = (f"best of majority class and heuristics {base.text()} ("
                 + "; ".join(f"{label} {heuristic_stat(first, name).text()}"
                             for name, label in HEURISTICS.items()) + ")")
    miss, settle = _miss(source, runs, epochs)
    lstm = settle if source != "synthetic" else (
        f"train the LSTM on Linzen et al.'s Wikipedia sentences (only their validation and test files are "
        f"shipped here), {epochs} epochs, selecting on validation data")
    why = {label: untrained(runs[label], label, epochs, at_zero=label == "LSTM")
           for label in (turn, "LSTM") if label in runs}
    return Measures(source, runs, turn, min_total, epochs, why, base, base_text, FIRST_EXACT.get(source, 0),
                    {turn: miss, "LSTM": "data"}, {turn: settle, "LSTM": lstm}, trends or {}, trend_note,
                    pooled or {}, own)


# --------------------------------------------------------------------------- one reading of the runs
@dataclass(frozen=True)
class Reading:
    """What one reading of the runs (an epoch of each run) decided: the rule's decision (a verdict where a
    claim's parts are of two kinds), and what was measured, in words."""

    decided: Decision | bool | None
    text: str
    direction: str
    seeds_needed: int | None = None

    @classmethod
    def of(cls, d: Decision, text: str) -> "Reading":
        return cls(d, text, d.direction, d.seeds_needed)

    @property
    def holds(self) -> bool | None:
        return self.decided.holds if isinstance(self.decided, Decision) else self.decided

    def word(self, clause: bool = False) -> str:
        """What the reading decided: "holds", "fails" or "undecided" ("is undecided" in a ``clause``)."""
        return {True: "holds", False: "fails", None: "is undecided" if clause else "undecided"}[self.holds]


def _last(acc: dict[str, np.ndarray]) -> str:
    return str(int(acc["count"][-1])) if len(acc["count"]) else "?"


def _flat(m: Measures, read) -> Reading:
    """No drop of the fitted change ("no evidence of a drop": an equivalence test, the margin the seeds'
    spread; the paper gives none), and above the heuristics (what gives a flat curve its meaning)."""
    seeds = m.runs[m.turn]
    acc, mine = by_attractors(seeds, m.min_total, read), attractor_stat(seeds, read)
    change = fall(acc, m.start)
    drop = no_drop(change=change, names=("", "accuracy"))
    above = rules.compare(mine, m.base, names=(m.turn, "the best baseline"))
    word = {True: "no drop beyond the margin", False: "a drop beyond the margin",
            None: "undecided by the seeds"}[drop.holds]
    return Reading(rules.combine([drop, above])[0],
                   f"fitted change from {m.start} to {_last(acc)} attractors {change.text()} ({word}); "
                   f"accuracy on sentences with attractors {mine.text()} vs {m.base_text}",
                   f"{drop.direction}; {above.direction}", rules.needed([drop, above]))


def _error(m: Measures, read) -> Reading:
    d = rules.threshold(m.runs[m.turn].stat(lambda run: 1 - read(run)["accuracy"]), 0.01, above=False,
                        name="test error")
    return Reading.of(d, d.direction)


def _beats(m: Measures, read) -> Reading:
    mine = attractor_stat(m.runs[m.turn], read)
    return Reading.of(rules.compare(mine, m.base, names=(m.turn, "the best baseline")),
                      f"{m.turn} {mine.text()}; {m.base_text}")


def _declines(m: Measures, read) -> Reading:
    acc = by_attractors(m.runs["LSTM"], m.min_total, read)
    change = fall(acc, m.start)
    return Reading.of(rules.threshold(change, 0.0, above=False, name="fitted change"),
                      f"fitted change from {m.start} to {_last(acc)} attractors {change.text()}")


def _read_twice(m: Measures, label: str, decide: Callable[[Measures, object], Reading]) -> Measured | None:
    """A claim on model ``label`` decided at the paper's final epoch, the validation-selected reading beside
    it; where the model is no evidence (:func:`untrained`), that reading for information only."""
    if label not in m.runs:
        return None
    best, rests = decide(m, best_row), [m.subject(label)]
    if m.why[label]:
        return Measured(f"for information, at the {SELECTED}: {best.text} ({best.word()})", best.holds,
                        rests=rests, direction=best.direction,
                        settle=untrained_settle(m.runs[label], m.epochs))
    main = decide(m, at_epoch(m.epochs))
    same = "the same verdict" if best.holds == main.holds else (
        f"there it {best.word(clause=True)}: the two readings disagree")
    cause, evidence = ("noise" if main.holds is None else m.miss[label]), ""
    if main.holds is False:  # a miss: its size trend, where the model has one, decides the cause
        note = f", read at epoch {m.epochs}" if label in m.own else m.trend_note
        found = size_cause(m.trends.get(label), parts(TREND[decide.__name__], read=at_epoch(m.epochs),
                                                      min_total=m.min_total, start=m.start,
                                                      base=m.base.mean), note, m.pooled.get(label))
        cause, evidence = found or (cause, evidence)
    return Measured(f"at epoch {m.epochs}: {main.text}; at the {SELECTED}: {best.text} ({same})",
                    main.decided, rests=rests, direction=main.direction, seeds_needed=main.seeds_needed,
                    cause=cause, evidence=evidence, settle=m.settle[label] if main.holds is False else "")


#: each claim's measure, by the function that decides it: its parts in a size trend
#: (:func:`.claims_sizes.parts`)
TREND = {"_flat": "flat", "_error": "error", "_beats": "beats", "_declines": "declines"}


def _buckets(m: Measures) -> str:
    return f"buckets with >= {m.min_total} sentences on every seed"


#: the claims on the k-TURN of each source (``{turn}``, ``{source}`` filled in from the runs)
TURN_SPECS = [
    Spec("paper 000 sec. 4, Fig. 2",
         "{turn} accuracy does not drop as attractors increase, above the heuristics ({source} data)",
         QUOTES["flat"], "no evidence of a drop, up to 12 attractors", "no-drop",
         lambda m: "no drop: the fitted change from the first exact bucket to the last, and on sentences "
                   "with attractors better than the majority class and both heuristics "
                   f"({rules.BEATS_RULE}); " + _buckets(m), READ, lambda m: _read_twice(m, m.turn, _flat)),
    Spec("paper 000 sec. 4", "{turn} error rate well under 1% ({source} data)", QUOTES["error"], "< 1%",
         "vs-number", "test error below 0.01", READ, lambda m: _read_twice(m, m.turn, _error)),
    Spec("paper 000 sec. 4 (after Linzen et al. 2016)",
         "{turn} does not rely on the linear order of nouns: on sentences with attractors it beats the "
         "first-noun and nearest-noun heuristics ({source} data)", QUOTES["order"],
         "agreement needs syntactic structure, not the nouns' order", "beats",
         "better than the majority class and both heuristics", READ,
         lambda m: _read_twice(m, m.turn, _beats)),
]
#: the claim on the LSTM of each source
LSTM_SPECS = [
    Spec("paper 000 sec. 6.1 and Fig. 2 (Linzen et al. 2016)",
         "the LSTM's accuracy declines as attractors increase ({source} data)", QUOTES["lstm"],
         "declines (reported up to 4 attractors)", "vs-number",
         lambda m: f"fitted change below 0 ({_buckets(m)})", READ,
         lambda m: _read_twice(m, "LSTM", _declines)),
]
SPECS = [*TURN_SPECS, *LSTM_SPECS]


def _specs(m: Measures) -> list[Spec]:
    """The specs of one source's runs: the model and the source in the statements, and the epoch read (none
    where the claim's model did not train)."""
    return [replace(s, statement=s.statement.format(turn=m.turn, source=m.source),
                    epoch=IDLE if m.why.get(label) else s.epoch.format(epochs=m.epochs))
            for label, specs in ((m.turn, TURN_SPECS), ("LSTM", LSTM_SPECS)) for s in specs]


def claims(runs_by_source: dict[str, dict[str, Seeds]], *, turn: str, analysis_source: str | None,
           min_total: int = 20, setting: str | None = None, epochs: int = PAPER_EPOCHS,
           trends: dict[str, dict[str, Points]] | None = None, trend_note: str = "",
           own: dict[str, set[str]] | None = None,
           pooled: dict[str, dict[str, Points]] | None = None) -> list[Claim]:
    """The claims of one setting's runs (with ``setting``, each statement starts with ``"[setting] "``), each
    read at the paper's final epoch ``epochs`` beside the lowest-validation-loss reading, behind the training
    guard (:func:`untrained`). A flat curve means something only above the heuristics (the first-noun
    heuristic is flat too): "does not drop" also needs the model to beat, on the sentences with attractors,
    the best of the majority class and the two heuristics (:func:`baseline_stat`). ``trends``: each source's
    size trends by model (:func:`.claims_sizes.trends_of`), which decide a miss's cause
    (:func:`.claims_sizes.size_cause`; ``trend_note``: what the evidence says of them beyond the epoch, except
    for the models of ``own``, ``{source: models}`` whose trend trained at this setting's rate), with each
    source's pooled trends by model (``pooled``: :func:`.claims_sizes.pooled_trends_of`)."""
    out = []
    for source, runs in runs_by_source.items():
        m = measures(source, runs, turn=turn, min_total=min_total, epochs=epochs,
                     trends=(trends or {}).get(source), trend_note=f", read at epoch {epochs}{trend_note}",
                     pooled=(pooled or {}).get(source), own=frozenset((own or {}).get(source, ())))
        out += evaluate(CHAPTER, _specs(m), m, seeds=m.seeds, idle=m.idle)
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


def _own_or_main(own: dict[str, dict[str, Points]], main: dict[str, dict[str, Points]]
                 ) -> dict[str, dict[str, Points]]:
    """A setting's size trends by source and model: its own where it trained one, else the main setting's."""
    return {source: {**models, **own.get(source, {})} for source, models in main.items()} | \
        {source: models for source, models in own.items() if source not in main}


def chapter_claims(runs, config) -> list[Claim]:
    """The claims under each setting the runs were trained in (statements prefixed with the setting when
    there are two), Tables 1-2's on the main setting's k-TURN only; a claim missed for an open cause under
    one setting and reproduced under the other, or reached there by that setting's own size trend, gets the
    cause ``setting``
    (:func:`urnlib.claims.across_settings`). A setting's size trend decides the cause of its misses: its own
    where the chapter trained one at its rate (``sizes`` entries with ``lr``), else the main setting's (its
    evidence then says so)."""
    views, sizes = runs.views(config), getattr(runs, "sizes", {})
    pooled = pooled_trends_of(sizes)
    trends = {name: trends_of(sizes, view, None if name == config.setting else config.code_lr)
              for name, view in views.items()}
    main = trends[config.setting]
    other = f", at {config.setting}: the sizes train at the chapter's learning rate only"
    by_setting = {name: claims(view, turn=config.turn, min_total=config.min_total,
                               analysis_source=(config.analysis_source or None) if name == config.setting
                               else None, setting=name if len(views) > 1 else None,
                               trends=_own_or_main(trends[name], main),
                               trend_note="" if name == config.setting else other,
                               own={source: set(models) for source, models in trends[name].items()},
                               pooled=pooled)
                  for name, view in views.items()}
    return across_settings(by_setting)
