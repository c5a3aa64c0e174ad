"""The zoo's claims: what a paper said about a pair of cells, checked on every task of the zoo.

Each paper compared its cells on its own tasks; here each such claim is decided on every task where it can be
read, at every parameter budget (the parts of one claim, :func:`urnlib.rules.combine`: every budget holds,
some fail - partly when others hold -, or undecided), over seeds (:mod:`urnlib.rules`), at each run's best
epoch unless the claim speaks of the whole training curve. Comparisons of a task's headline measure need both
sides off chance (:data:`urnlib.reports.zoo.MEASURES`); a side at chance leaves the claim "not testable here".
A miss on the paper's own task whose runs were still improving at the epoch cap gets the cause ``scale``; a
miss on a task the paper did not test is a finding, not a defect of the reproduction: its cause stays
``open``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.metrics import max_error_rate
from urnlib.reports.common import largest_rise
from urnlib.reports.zoo import CHAPTER, MEASURES, buckets, headline
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "RISE"]

#: nats: a validation loss that never rises more than this above its running minimum is monotonous
RISE = 0.01
#: a part's verdict, what it measured, and whether its chance guard failed
Part = tuple[bool | None, str, bool]
#: a claim's part at one budget: ``part(cells, task, budget)``
PartFn = Callable[[dict[str, Seeds], str, int], Part]
NOT_TESTED = "not tested by the paper on this task"


def _fmt(stat: Stat, digits: int = 3) -> str:
    """``"0.912 ± 0.004"`` (the claim says on how many seeds)."""
    return stat.mean_sd(digits)


def _improving_at_cap(seeds: Seeds) -> bool:
    """A run of ``seeds`` ended at its epoch cap at its best epoch (it was still improving)."""
    return any(not run.final.get("stopped_early") and run.final.get("best_epoch") == len(run.history)
               for run in seeds)


def _decide(out: list[Claim], views, source: str, statement: str | Callable[[str], str],
            paper: dict[str, str], rule: str, needs: list[str], part: PartFn,
            tasks: list[str] | None = None) -> None:
    """One claim per task (of ``tasks``, default every task) where every cell of ``needs`` was trained: its
    parts are ``part(cells, task, budget)`` at every budget. ``statement``: text, or text per task;
    ``paper``: the paper's words per task it tested."""
    for task, by_budget in views.items():
        if tasks is not None and task not in tasks:
            continue
        found = [(budget, cells) for budget, cells in by_budget.items() if all(n in cells for n in needs)]
        if not found:
            continue
        parts = [(budget, part(cells, task, budget)) for budget, cells in found]
        holds, partly = rules.combine(p[0] for _, p in parts)
        seeds = min(len(cells[n]) for _, cells in found for n in needs)
        guard = any(p[2] for _, p in parts)
        if holds is None:
            cause = "scale" if guard else "noise"
        elif task in paper:
            capped = any(_improving_at_cap(cells[n]) for _, cells in found for n in needs)
            cause = "scale" if capped else "open"
        else:
            cause = "open"
        ours = "; ".join(f"{budget:,} parameters: {text}" for budget, (_, text, _) in parts)
        text = statement(task) if callable(statement) else statement
        out.append(claim(CHAPTER, source + ("" if task in paper else " (another task)"),
                         f"[{task}] {text}", paper.get(task, NOT_TESTED), ours, rule, holds, partly,
                         seeds=seeds, cause=cause))


def _beats_headline(a: str, b: str) -> PartFn:
    """A's headline measure better than B's, both off chance."""
    def part(cells, task, budget) -> Part:
        m = MEASURES[task]
        sa, sb = headline(cells[a], task), headline(cells[b], task)
        guard = not rules.off_chance(m.chance, sa, sb, higher=m.higher)
        text = f"{a} {_fmt(sa, m.digits)} vs {b} {_fmt(sb, m.digits)}"
        text += " (a side at chance)" if guard else ""
        return (None if guard else rules.beats(sa, sb, higher=m.higher)), text, guard
    return part


def _max_error(seeds: Seeds, task: str, min_total: int) -> Stat:
    return seeds.stat(lambda run: max_error_rate(*buckets(run, task), min_total))


def _chance_error(task: str) -> float:
    """The largest error rate of a bucket a model that learned nothing would have."""
    return 1.0 - MEASURES[task].chance if MEASURES[task].higher else MEASURES[task].chance


def claims(views, *, min_total: int, turn: str) -> list[Claim]:
    """Every claim of the chapter on ``views`` (``{task: {budget: {cell label: Seeds}}}``).

    Args:
        min_total: attractor counts (lengths) with fewer test predictions on a seed are left out.
        turn: the k-TURN's label (``"3-TURN"``).
    """
    out: list[Claim] = []

    def loss(seeds: Seeds) -> Stat:
        return seeds.final("test_loss")

    def lower_loss(a: str, b: str):
        def part(cells, task, budget) -> Part:
            sa, sb = loss(cells[a]), loss(cells[b])
            return rules.beats(sa, sb, higher=False), f"{a} {_fmt(sa, 4)} vs {b} {_fmt(sb, 4)}", False
        return part

    lower = (  # (source, statement, the paper's words by task, (lower, higher))
        ("paper 001 Figs. 2a, 3a",
         "the LSTM reaches a lower validation loss than the URN at the same parameter budget",
         {"dyck": "LSTMs make better guesses (lower test loss) than URNs of the same size",
          "cross_serial": "LSTMs make better guesses than URNs, across the board"}, ("LSTM", "URN")),
        ("paper 000 sec. 5", "the Full URN reaches a lower validation loss than the arbitrary-matrix RNN",
         {"dyck": "1.47213 vs 1.52914 (validation loss)"}, ("URN", "Arbitrary")))
    for source, statement, paper, (a, b) in lower:
        _decide(out, views, source, statement, paper,
                f"{a} lower at every budget, best epochs ({rules.BEATS_RULE})", [a, b], lower_loss(a, b))
    _decide(out, views, "paper 001 sec. 3.1",
            "the LSTM generalises better than the URN (the task's headline measure)",
            {"cross_serial": "LSTMs do better overall than URNs for lengths unseen in training"},
            f"LSTM better at every budget ({rules.BEATS_RULE}; {rules.CHANCE_RULE})", ["LSTM", "URN"],
            _beats_headline("LSTM", "URN"))

    def max_error(cells, task, budget) -> Part:
        u, lo = _max_error(cells["URN"], task, min_total), _max_error(cells["LSTM"], task, min_total)
        guard = not rules.off_chance(_chance_error(task), u, lo, higher=False)
        text = f"URN {_fmt(u)} vs LSTM {_fmt(lo)}" + (" (a side at chance)" if guard else "")
        return (None if guard else rules.beats(u, lo, higher=False)), text, guard

    _decide(out, views, "paper 001 Fig. 3c",
            lambda task: "the URN's maximum error rate over "
            + ("pattern lengths m + n" if task == "cross_serial" else "attractor counts")
            + " is lower than the LSTM's", {"dyck": "consistently lower than the LSTM's"},
            f"URN lower at every budget, best epochs, buckets with >= {min_total} predictions on every seed "
            f"({rules.BEATS_RULE}; {rules.CHANCE_RULE})", ["URN", "LSTM"], max_error,
            tasks=["dyck", "cross_serial", "agreement"])

    def monotonous(cells, task, budget) -> Part:
        urn, lstm = (cells[c].stat(lambda run: largest_rise(run.column("test_loss")))
                     for c in ("URN", "LSTM"))
        holds = rules.combine([rules.at_most(urn, RISE), rules.at_least(lstm, RISE)])[0]
        return holds, f"largest rise: URN {_fmt(urn, 4)}, LSTM {_fmt(lstm, 4)}", False

    _decide(out, views, "paper 001 Fig. 3a",
            "URN training is monotonous; the LSTM's validation loss can get worse for a few epochs",
            {"dyck": "the URN's training is uniformly monotonous, the LSTM can get worse for a few epochs"},
            f"largest rise of the validation loss above its running minimum, whole curve: URN's <= {RISE}, "
            f"LSTM's >= {RISE} nats, every budget ({rules.THRESHOLD_RULE})",
            ["URN", "LSTM"], monotonous)

    def no_fall(cells, task, budget) -> Part:
        drop = cells[turn].stat(lambda run: _fall(run, task, min_total))
        text = f"worst accuracy at >= 3 attractors minus mean at 0-2 {_fmt(drop)}"
        return rules.at_least(drop, -0.02), text, False

    _decide(out, views, "paper 000 Figs. 2, 3", f"the {turn}'s accuracy does not fall as attractors grow",
            {"dyck": "near perfect, not declining", "agreement": "no drop up to 12 attractors"},
            f"that difference >= -0.02 at every budget ({rules.THRESHOLD_RULE}; buckets with >= {min_total} "
            "predictions on every seed)", [turn], no_fall, tasks=["dyck", "agreement"])

    def counts(cells, task, budget) -> Part:
        n = cells["LSTM"][0].params["task"]["max_train_n"]
        lstm, srn, gru = (headline(cells[c], task) for c in ("LSTM", "SRN", "GRU"))
        holds = rules.combine([rules.at_least(lstm, n + 1), rules.at_most(srn, n), rules.at_most(gru, n)])[0]
        text = f"LSTM {_fmt(lstm, 1)}, SRN {_fmt(srn, 1)}, GRU {_fmt(gru, 1)} (trained to n = {n})"
        return holds, text, False

    _decide(out, views, "lecture 004 (Weiss et al. 2018)",
            "the LSTM counts beyond its training range; the SRN and the GRU do not",
            {"anbn": "the LSTM generalises past N, the GRU and SRN do not"},
            f"largest n accepted: LSTM > N, SRN and GRU <= N, every budget ({rules.THRESHOLD_RULE})",
            ["LSTM", "SRN", "GRU"], counts, tasks=["anbn"])

    def gated(cells, task, budget) -> Part:
        parts = [_beats_headline("LSTM", other)(cells, task, budget) for other in ("SRN", "GRU")]
        return rules.combine(p[0] for p in parts)[0], "; ".join(p[1] for p in parts), any(p[2] for p in parts)

    _decide(out, views, "lecture 004",
            "the LSTM does better than the SRN and the GRU (the task's headline measure)",
            {"anbn": "the LSTM counts, the GRU and SRN do not"},
            f"LSTM better than both at every budget ({rules.BEATS_RULE}; {rules.CHANCE_RULE})",
            ["LSTM", "SRN", "GRU"], gated, tasks=["dyck", "cross_serial", "agreement"])
    _decide(out, views, "paper 002 Table 2",
            "the TPRU does better than the GRU (the task's headline measure)",
            {}, f"TPRU better at every budget ({rules.BEATS_RULE}; {rules.CHANCE_RULE})", ["TPRU", "GRU"],
            _beats_headline("TPRU", "GRU"))
    return out


def _fall(run, task: str, min_total: int) -> float:
    """Worst accuracy at >= 3 attractors minus the mean at 0-2 (buckets with >= ``min_total`` predictions)."""
    correct, total = buckets(run, task)
    acc = {k: c / t for k, (c, t) in enumerate(zip(correct, total)) if t >= min_total}
    low, high = [a for k, a in acc.items() if k <= 2], [a for k, a in acc.items() if k >= 3]
    if not low or not high:
        return math.nan
    return float(min(high) - sum(low) / len(low))
