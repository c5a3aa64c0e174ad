"""The zoo's claims: what a paper said about a pair of cells, checked on every task of the zoo.

Each paper compared its cells on its own tasks; here each such claim is decided on every task where it can be
read, at every parameter budget (the parts of one claim, :func:`urnlib.rules.combine`: every budget holds,
some fail - partly when others hold -, or undecided), over seeds (:mod:`urnlib.rules`), at each run's best
validation epoch. None of these comparisons is one the papers made (other cells, budgets, tasks), so every
claim is an extension (``extension=True``, counted apart from the papers'), and each quotes the sentence it
extends. A claim rests only on what the runs recorded:

* the runs recorded the loss on held-out data drawn like the training data (stored as ``test_loss``: the
  loss that picks the best epoch), never the loss on the test set. Paper 001's statements on the *test* loss
  (Figs. 2a, 3a) are therefore not run here (cause ``data``; the validation loss is shown as a stand-in, and
  ``settle`` says what would decide them). Paper 000's statement is on the *validation* loss and is decided on
  it, except on a^n b^n, whose "validation" strings are its training strings (a finite language): there it
  would be a training fit, and is not run here.
* comparisons of a task's headline measure need every side off chance
(:data:`urnlib.chapters.zoo.report.MEASURES`,
  :func:`urnlib.rules.off_chance`); a side at chance did not train: the part is undecided with the cause
  ``untrained``.
* "beyond the training range" on a^n b^n is the primer's rule (:func:`urnlib.rules.beyond`).

A miss is ``open``: on the paper's own task the zoo's data and budgets are smaller than the paper's; on a task
the paper never used it is a finding, not a defect of the reproduction. Its ``settle`` names the rerun.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Mapping

from urnlib import rules
from urnlib.claims import Claim
from urnlib.declare import Measured, Spec, evaluate
from urnlib.metrics import max_error_rate
from urnlib.reports.common import largest_rise
from urnlib.paper_quotes import QUOTE_BEST, QUOTE_WEISS
from urnlib.rules import BEYOND_RULE, beyond, not_beyond
from urnlib.chapters.zoo.report import CHAPTER, MEASURES, buckets, headline
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "declared", "ZooClaim", "Measures", "NO_TEST_LOSS", "NO_TEST_CURVE"]

#: a part's decision (``None``: nothing to decide), what it measured, and what blocks it (``"untrained"``,
#: ``"data"`` or ``None``)
Part = tuple[rules.Decision | None, str, str | None]
NOT_TESTED = "not tested by the paper on this task"
NO_TEST_LOSS = "the runs recorded no test-set loss (stand-in: the validation loss)"
NO_TEST_CURVE = ("the runs recorded no test-set loss per epoch, and the stored weights are only the best "
                 "epoch's (stand-in: the validation loss)")
ANBN_HELD_OUT = ("a^n b^n's validation strings are its training strings (a finite language): its loss is a "
                 "training fit, not a held-out loss")
Q_LOSS_CROSS = "We see that LSTM models generally make better guesses than URNs, across the board."
Q_LOSS_DYCK = ("As in the cross-serial task, we observe that LSTM models make better guesses than URN, at "
               "least for a similar number of units.")
Q_ARBITRARY = ("The performance of the full URN is better over the long term and in general, with a "
               "validation loss of 1.47213 compared to 1.52914 for the arbitrary case.")
Q_UNSEEN = ("We see here that the LSTMs tend to do better overall than the URNs for lengths unseen in the "
            "training data.")
Q_MAX_ERROR = ("Using this metric, a URN performs consistently better than an LSTM with the same number of "
               "units (and a similar number of parameters).")
Q_MONOTONOUS = ("However, we see that the training of the URN is uniformly monotonous, while the LSTM can "
                "sometimes become worse for a few epochs before converging.")
Q_NO_FALL = {"agreement": "Crucially, there is no evidence of accuracy dropping as the number of attractors "
                          "increases.",
             "dyck": "By contrast, the URN models remain accurate as the number of attractors grows."}
Q_TPRU = ("Overall, our proposed TPRU outperforms its closest comparison counterpart GRU, and provides "
          "comparable performance to the LSTM.")


def _fmt(stat: Stat, digits: int = 3) -> str:
    """``"0.912 ± 0.004"`` (the claim says on how many seeds)."""
    return stat.mean_sd(digits)


@dataclass(frozen=True)
class _Merged(rules.Decision):
    """A decision made of several (``parts``): a claim that fails on one and holds on another is partly
    reproduced, as the primer's claims on several models are."""

    parts: tuple[rules.Decision, ...] = ()


def _merge(decisions: list[rules.Decision]) -> rules.Decision:
    """One decision from several (:func:`urnlib.rules.combine`), their directions joined."""
    holds = rules.combine(d.holds for d in decisions)[0]
    kinds = {d.kind for d in decisions}
    return _Merged(holds, "; ".join(d.direction for d in decisions), math.nan, rules.needed(decisions),
                   kind=kinds.pop() if len(kinds) == 1 else "", parts=tuple(decisions))


def _hours(by_budget: dict[int, dict[str, Seeds]], needs: list[str]) -> float:
    cpu = [float(run.record.get("cpu_time_s") or run.record.get("wall_time_s") or 0.0)
           for cells in by_budget.values() for label in needs if label in cells for run in cells[label]]
    return max(sum(cpu) / 3600, 0.1)


def _epoch(by_budget: dict[int, dict[str, Seeds]], task: str) -> str:
    """Which epoch the runs of ``task`` are read at, from their training settings."""
    run = next(iter(next(iter(by_budget.values())).values()))[0]
    train = run.params.get("train", {})
    cap, patience = train.get("epochs"), train.get("patience")
    stop = (f"; each run stopped after {patience} epochs without a lower one" if patience else "") + (
        f", at most {cap}" if cap else "")
    if task == "anbn":
        return f"best epoch by the loss on the training strings (the validation of a finite language{stop})"
    return f"best validation epoch (lowest loss on held-out data drawn like the training data{stop})"


def _capped(cells: dict[str, Seeds], needs: list[str]) -> int:
    """How many runs of ``needs`` were still improving at their cap on epochs (best epoch = last, not
    stopped)."""
    return sum(not run.final.get("stopped_early") and run.final.get("best_epoch") == len(run.history)
               for label in needs for run in cells[label])


@dataclass
class Measures:
    """What the zoo's measures read: ``views`` (``{task: {budget: {cell label: Seeds}}}``), the smallest
    bucket counted, the k-TURN's label and the test-set loss of each run (:mod:`.heldout`, by run key; empty:
    not measured)."""

    views: dict
    min_total: int
    turn: str
    test_loss: Mapping[str, float] = field(default_factory=dict)

    def valid(self, seeds: Seeds) -> Stat:
        return seeds.final("test_loss")  # the validation loss (the runs' name for it)

    def test(self, seeds: Seeds) -> Stat | None:
        """The test-set loss over the seeds; ``None`` where a run's was not measured."""
        keys = [run.record.get("key") for run in seeds]
        return Stat.of(self.test_loss[k] for k in keys) if all(k in self.test_loss for k in keys) else None


#: a claim's part at one budget: ``part(m, cells, task, budget)``
PartFn = Callable[[Measures, dict[str, Seeds], str, int], Part]


@dataclass(frozen=True)
class ZooClaim:
    """A paper's statement on a pair of cells, declared once and decided on every task (of ``tasks``,
    default every task) where every cell of ``needs`` was trained: its parts are ``part(m, cells, task,
    budget)`` at every budget. ``statement``: text, or text per task; ``paper``: the paper's words per task it
    tested; ``quote``: the sentence extended, or one per task (a task without one gets the first);
    ``settle_data``: what would measure a part that is not measured (``missing`` says why)."""

    source: str
    statement: str | Callable[[str], str]
    paper: dict[str, str]
    quote: str | dict[str, str]
    kind: str
    what: str
    needs: list[str]
    part: PartFn
    tasks: tuple[str, ...] | None = None
    settle_data: str = ""
    missing: str = NO_TEST_LOSS


def claims(views, *, min_total: int, turn: str, test_loss: Mapping[str, float] | None = None) -> list[Claim]:
    """Every claim of the chapter on ``views`` (``{task: {budget: {cell label: Seeds}}}``).

    Args:
        min_total: attractor counts (lengths) with fewer test predictions on a seed are left out.
        turn: the k-TURN's label (``"3-TURN"``).
        test_loss: ``{run key: test-set loss}`` measured from the stored weights
            (:func:`urnlib.chapters.zoo.heldout.test_losses`); ``None``: not measured, the claims on the test
            loss are not run here.
    """
    m = Measures(views, min_total, turn, dict(test_loss or {}))
    specs = [spec for z in declared(turn, min_total) for spec in _specs(z, m)]
    seeds = {f"{task} {budget} {cell}": len(runs) for task, by_budget in views.items()
             for budget, cells in by_budget.items() for cell, runs in cells.items()}
    return evaluate(CHAPTER, specs, m, seeds=seeds)


def _specs(z: ZooClaim, m: Measures) -> list[Spec]:
    out = []
    for task, by_budget in m.views.items():
        found = [(budget, cells) for budget, cells in by_budget.items() if all(n in cells for n in z.needs)]
        if (z.tasks is not None and task not in z.tasks) or not found:
            continue
        parts = [(budget, z.part(m, cells, task, budget)) for budget, cells in found]
        epoch = _epoch(by_budget, task)
        if any(p[2] == "data" for _, p in parts):
            epoch = "- (not measured); the stand-in at the " + epoch
        found_here = _measured(z, task, by_budget, found, parts)
        text = z.statement(task) if callable(z.statement) else z.statement
        words = z.quote if isinstance(z.quote, str) else z.quote.get(task, next(iter(z.quote.values())))
        out.append(Spec(z.source + ("" if task in z.paper else " (another task)"), f"[{task}] {text}", words,
                        z.paper.get(task, NOT_TESTED), z.kind, z.what, epoch,
                        lambda _m, found_here=found_here: found_here, extension=True))
    return out


def _measured(z: ZooClaim, task: str, by_budget, found, parts) -> Measured:
    """One task's claim from its parts at every budget: the same policy for every zoo claim."""
    ours = "; ".join(f"{budget:,} parameters: {text}" for budget, (_, text, _) in parts)
    blocks = {p[2] for _, p in parts}
    hours = _hours(by_budget, z.needs)
    if "data" in blocks:
        return Measured(ours, None, rests=(), cause="data", direction="not measured: " + z.missing,
                        settle=z.settle_data.format(task=task, hours=hours))
    decisions = [p[0] for _, p in parts if p[2] is None]
    holds, partly = rules.combine(None if p[2] else p[0].holds for _, p in parts)
    subs = [d for d in decisions for d in (getattr(d, "parts", None) or [d])]
    partly = holds is False and (partly or any(d.holds is True for d in subs))
    cause = "untrained" if holds is None and "untrained" in blocks else None
    settle = ""
    if holds is False:
        capped = sum(_capped(cells, z.needs) for _, cells in found)
        settle = (f"the paper's protocol on {task} (its data, their size and epochs) with more seeds"
                  if task in z.paper else f"an extension ({task} was never tested by the paper): more "
                  "seeds and budgets would show whether the finding holds")
        settle += f", about {hours:.1f} CPU hours as run here" + (
            f"; {capped} runs were still improving at their cap on epochs" if capped else "")
    return Measured(ours, holds, partly, cause=cause, settle=settle, decided=decisions,
                    direction="; ".join(f"{budget:,}: {p[0].direction}" for budget, p in parts
                                        if p[0] is not None),
                    seeds_needed=rules.needed(decisions) if cause is None else None,
                    rests=[f"{task} {budget} {n}" for budget, _ in found for n in z.needs])
def _fall(run, task: str, min_total: int) -> float:
    """Worst accuracy at >= 3 attractors minus the mean at 0-2 (buckets with >= ``min_total`` predictions)."""
    correct, total = buckets(run, task)
    acc = {k: c / t for k, (c, t) in enumerate(zip(correct, total)) if t >= min_total}
    low, high = [a for k, a in acc.items() if k <= 2], [a for k, a in acc.items() if k >= 3]
    if not low or not high:
        return math.nan
    return float(min(high) - sum(low) / len(low))


# ---------------------------------------------------------------- the parts: one budget of one task


def _beats_headline(a: str, b: str) -> PartFn:
    """A's headline measure better than B's, both off chance."""
    def part(m, cells, task, budget) -> Part:
        measure = MEASURES[task]
        sa, sb = headline(cells[a], task), headline(cells[b], task)
        at_chance = [label for label, s in ((a, sa), (b, sb))
                     if not rules.off_chance(measure.chance, s, higher=measure.higher)]
        text = f"{a} {_fmt(sa, measure.digits)} vs {b} {_fmt(sb, measure.digits)}"
        text += f" ({' and '.join(at_chance)} at chance: did not train)" if at_chance else ""
        blocked = "untrained" if at_chance else None
        return rules.compare(sa, sb, higher=measure.higher, names=(a, b)), text, blocked
    return part


def _stand_in(a: str, b: str) -> PartFn:
    def part(m, cells, task, budget) -> Part:
        text = f"validation loss {a} {_fmt(m.valid(cells[a]), 4)} vs {b} {_fmt(m.valid(cells[b]), 4)}"
        return None, text, "data"
    return part


def _test_lower(m, cells, task, budget) -> Part:
    """The LSTM's test-set loss below the URN's (measured from the stored weights); not measured: the
    validation loss as a stand-in, undecided."""
    lstm, urn = m.test(cells["LSTM"]), m.test(cells["URN"])
    if lstm is None or urn is None:
        return _stand_in("LSTM", "URN")(m, cells, task, budget)
    return (rules.compare(lstm, urn, higher=False, names=("LSTM", "URN")),
            f"test loss LSTM {_fmt(lstm, 4)} vs URN {_fmt(urn, 4)}", None)


def _lower_valid(m, cells, task, budget) -> Part:
    """The Full URN's held-out loss below the arbitrary-matrix RNN's: the validation loss; on a^n b^n, whose
    validation strings are its training strings, the loss on the strings beyond the training range."""
    if task == "anbn":
        su, sa = m.test(cells["URN"]), m.test(cells["Arbitrary"])
        if su is None or sa is None:
            return _stand_in("URN", "Arbitrary")(m, cells, task, budget)
        what = "loss beyond the training range"
    else:
        su, sa, what = m.valid(cells["URN"]), m.valid(cells["Arbitrary"]), "validation loss"
    return (rules.compare(su, sa, higher=False, names=("URN", "Arbitrary")),
            f"{what} URN {_fmt(su, 4)} vs Arbitrary {_fmt(sa, 4)}", None)


def _max_error_part(m, cells, task, budget) -> Part:
    u, lo = _max_error(cells["URN"], task, m.min_total), _max_error(cells["LSTM"], task, m.min_total)
    at_chance = [label for label, s in (("URN", u), ("LSTM", lo))
                 if not rules.off_chance(_chance_error(task), s, higher=False)]
    text = f"URN {_fmt(u)} vs LSTM {_fmt(lo)}"
    text += f" ({' and '.join(at_chance)} at chance: did not train)" if at_chance else ""
    return rules.compare(u, lo, higher=False, names=("URN", "LSTM")), text, "untrained" if at_chance else None


def _monotonous(m, cells, task, budget) -> Part:
    urn, lstm = (cells[c].stat(lambda run: largest_rise(run.column("test_loss"))) for c in ("URN", "LSTM"))
    return None, f"largest rise of the validation loss: URN {_fmt(urn, 4)}, LSTM {_fmt(lstm, 4)}", "data"


def _no_fall(m, cells, task, budget) -> Part:
    measure = MEASURES[task]
    drop = cells[m.turn].stat(lambda run: _fall(run, task, m.min_total))
    trained = rules.off_chance(measure.chance, headline(cells[m.turn], task), higher=measure.higher)
    text = f"worst accuracy at >= 3 attractors minus mean at 0-2 {_fmt(drop)}"
    text += "" if trained else f" ({m.turn} at chance: did not train)"
    blocked = None if trained else "untrained"
    return rules.threshold(drop, 0.0, above=True, name="that difference"), text, blocked


def _counts(labels: list[str], rule: Callable[[Stat, int, str], rules.Decision]) -> PartFn:
    def part(m, cells, task, budget) -> Part:
        n = cells[labels[0]][0].params["task"]["max_train_n"]
        largest = {c: headline(cells[c], task) for c in labels}
        at_chance = [c for c, s in largest.items() if not rules.off_chance(0.0, s)]
        text = ", ".join(f"{c} {_fmt(s, 1)}" for c, s in largest.items()) + f" (trained to n = {n})"
        text += f" ({' and '.join(at_chance)} accepted none: did not train)" if at_chance else ""
        return _merge([rule(s, n, c) for c, s in largest.items()]), text, "untrained" if at_chance else None
    return part


def _gated(m, cells, task, budget) -> Part:
    parts = [_beats_headline("LSTM", other)(m, cells, task, budget) for other in ("SRN", "GRU")]
    blocked = any(p[2] for p in parts)
    return _merge([p[0] for p in parts]), "; ".join(p[1] for p in parts), "untrained" if blocked else None


def _max_error(seeds: Seeds, task: str, min_total: int) -> Stat:
    return seeds.stat(lambda run: max_error_rate(*buckets(run, task), min_total))


def _chance_error(task: str) -> float:
    """The largest error rate of a bucket a model that learned nothing would have."""
    return 1.0 - MEASURES[task].chance if MEASURES[task].higher else MEASURES[task].chance


# ---------------------------------------------------------------- the claims, declared

TEST_LOSS_SETTLE = ("the loss on the test set recorded every epoch (the task's evaluation would add it) and "
                    "the cells retrained on {task}: about {hours:.1f} CPU hours")
OFF_CHANCE = f"both sides off chance ({rules.CHANCE_RULE})"


def declared(turn: str, min_total: int) -> list[ZooClaim]:
    """The zoo's claims, in the chapter's order: each a paper's statement extended to every task."""
    buckets_counted = f"buckets with >= {min_total} predictions on every seed"
    words = {"anbn": "the LSTM generalises past N, the GRU and SRN do not"}
    return [
        ZooClaim("paper 001 Figs. 2a, 3a",
                 "the LSTM reaches a lower test loss than the URN at the same parameter budget",
                 {"dyck": "LSTMs make better guesses (lower test loss) than URNs of the same size",
                  "cross_serial": "LSTMs make better guesses than URNs, across the board"},
                 {"cross_serial": Q_LOSS_CROSS, "dyck": Q_LOSS_DYCK}, "beats",
                 "test-set loss at the best validation epoch (from the stored weights), LSTM lower at every "
                 "budget", ["LSTM", "URN"], _test_lower, settle_data=TEST_LOSS_SETTLE),
        ZooClaim("paper 000 sec. 5",
                 "the Full URN reaches a lower validation loss than the arbitrary-matrix RNN",
                 {"dyck": "1.47213 vs 1.52914 (validation loss)"}, Q_ARBITRARY, "beats",
                 "URN lower at every budget, best validation epochs (on a^n b^n, whose validation strings "
                 "are its training strings: the loss on the strings beyond the training range)",
                 ["URN", "Arbitrary"], _lower_valid, settle_data="a held-out loss on {task}: strings beyond "
                 "the training range scored from the stored weights", missing=ANBN_HELD_OUT),
        ZooClaim("paper 001 sec. 3.1",
                 "the LSTM generalises better than the URN (the task's headline measure)",
                 {"cross_serial": "LSTMs do better overall than URNs for lengths unseen in training"},
                 Q_UNSEEN, "beats", f"LSTM better at every budget, {OFF_CHANCE}", ["LSTM", "URN"],
                 _beats_headline("LSTM", "URN")),
        # cross-serial is left out: there paper 001 says the opposite (the LSTMs do better on unseen lengths,
        # decided above with the paper's own sentence)
        ZooClaim("paper 001 Fig. 3c",
                 "the URN's maximum error rate over attractor counts is lower than the LSTM's",
                 {"dyck": "consistently lower than the LSTM's"}, Q_MAX_ERROR, "beats",
                 f"URN lower at every budget, best validation epochs, {buckets_counted}, {OFF_CHANCE}",
                 ["URN", "LSTM"], _max_error_part, tasks=("dyck", "agreement")),
        ZooClaim("paper 001 Fig. 3a",
                 "URN training is monotonous; the LSTM's test loss can get worse for a few epochs",
                 {"dyck": "the URN's training is uniformly monotonous, the LSTM can get worse for a few "
                          "epochs"},
                 Q_MONOTONOUS, "every-seed", "largest rise of the test loss above its running minimum, whole "
                 "curve: 0 on every URN seed, above 0 on some LSTM seed, every budget", ["URN", "LSTM"],
                 _monotonous, settle_data=TEST_LOSS_SETTLE, missing=NO_TEST_CURVE),
        ZooClaim("paper 000 Figs. 2, 3", f"the {turn}'s accuracy does not fall as attractors grow",
                 {"dyck": "near perfect, not declining", "agreement": "no drop up to 12 attractors"},
                 Q_NO_FALL, "vs-number", f"worst accuracy at >= 3 attractors above the mean at 0-2 at every "
                 f"budget, against 0, {buckets_counted}, {OFF_CHANCE}", [turn], _no_fall,
                 tasks=("dyck", "agreement")),
        ZooClaim("lecture 004 (Weiss et al. 2018)", "the LSTM counts beyond its training range", words,
                 QUOTE_WEISS, "vs-number", f"LSTM's {BEYOND_RULE}, every budget", ["LSTM"],
                 _counts(["LSTM"], beyond), tasks=("anbn",)),
        ZooClaim("lecture 004 (Weiss et al. 2018)",
                 "the SRN and the GRU do not generalise beyond their training range", words, QUOTE_WEISS,
                 "vs-number", f"not {BEYOND_RULE} (no seed beyond N also holds), SRN and GRU, every budget",
                 ["SRN", "GRU"], _counts(["SRN", "GRU"], not_beyond), tasks=("anbn",)),
        ZooClaim("lecture 004", "the LSTM does better than the SRN and the GRU (the task's headline measure)",
                 {"anbn": "the LSTM counts, the GRU and SRN do not"}, QUOTE_BEST, "beats",
                 f"LSTM better than both at every budget, {OFF_CHANCE}", ["LSTM", "SRN", "GRU"], _gated),
        ZooClaim("paper 002 Table 2", "the TPRU does better than the GRU (the task's headline measure)", {},
                 Q_TPRU, "beats", f"TPRU better at every budget, {OFF_CHANCE}", ["TPRU", "GRU"],
                 _beats_headline("TPRU", "GRU")),
    ]
