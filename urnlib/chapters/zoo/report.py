"""The zoo chapter's table, figures, reading and costs, drawn from stored runs.

Functions take the runs as ``{task: {budget: {cell label: Seeds}}}`` (what
:meth:`urnlib.chapters.zoo.experiment.Config.views` returns). Every measure is read at each run's best epoch
(lowest validation loss: the final metrics the run stored), and given over seeds as mean ± one standard
deviation. Each task has one headline measure (:data:`MEASURES`); the sentences of :func:`reading` are built
from the numbers, so they stay true after a rerun. The claims are in :mod:`urnlib.chapters.zoo.claims`;
drawing is in :mod:`urnlib.plots.budgets`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from urnlib import rules
from urnlib.metrics import accuracy_by_count_seeds
from urnlib.plots.series import UNIT, SeedCurves
from urnlib.plots.budgets import cells_figure
from urnlib.reports.common import looks
from urnlib.lr_choice import lr_text
from urnlib.reports.lr_choice import chosen_elsewhere, choice_frame, rates as choice_rates
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat

__all__ = ["CHAPTER", "MEASURES", "Measure", "headline", "headline_stats", "buckets", "summary_table",
           "sizes_table", "lr_choice", "figure_task", "reading", "cost_table", "cost_summary", "winners"]

CHAPTER = "zoo"
Views = dict[str, dict[int, dict[str, Seeds]]]


@dataclass(frozen=True)
class Measure:
    """A task's headline measure: what it is (``text``; ``short`` for the table's column), which way is
    better, and the value of a model that learned nothing (the chance guard of every comparison)."""

    text: str
    short: str
    higher: bool
    chance: float
    chance_text: str
    digits: int
    value: Callable[[Run], float]

    @property
    def better(self) -> str:
        return "higher is better" if self.higher else "lower is better"

    @property
    def arrow(self) -> str:
        return "↑" if self.higher else "↓"


def _unseen_error(run: Run) -> float:
    """Cross-serial: the full-string error rate on the test strings with m + n >= train_k, longer than any
    training string."""
    k, row = run.params["task"]["train_k"], run.final
    wrong, total = sum(row["length_wrong"][k:]), sum(row["length_total"][k:])
    return wrong / total if total else math.nan


#: task -> its headline measure
MEASURES = {
    "dyck": Measure("closing-bracket accuracy on test strings of any depth", "closing-bracket accuracy", True,
                    0.2, "the majority class (20%)", 3, lambda run: run.final["closing_accuracy"]),
    "cross_serial": Measure("full-string error rate on the test strings longer than any trained on",
                            "error on longer strings", False, 1.0, "every string wrong", 3, _unseen_error),
    "anbn": Measure("largest n up to which every aⁿbⁿ is accepted", "largest n accepted", True, 0.0,
                    "none accepted", 1, lambda run: run.final["largest_accepted"]),
    "agreement": Measure("verb-number accuracy on the test sentences", "accuracy", True, 0.5, "chance (50%)",
                         3, lambda run: run.final["accuracy"]),
}


def headline(seeds: Seeds, task: str) -> Stat:
    """The task's headline measure over seeds, at each run's best epoch."""
    return seeds.stat(MEASURES[task].value)


def headline_stats(views: Views) -> dict[str, dict[int, dict[str, Stat]]]:
    return {task: {budget: {label: headline(seeds, task) for label, seeds in cells.items()}
                   for budget, cells in by_budget.items()} for task, by_budget in views.items()}


def buckets(run: Run, task: str, row: dict[str, Any] | None = None) -> tuple[list[int], list[int]]:
    """``(correct, total)`` per bucket of ``row`` (default the best epoch's): attractor counts (Dyck,
    agreement) or pattern lengths m + n (cross-serial)."""
    row = run.final if row is None else row
    if task == "cross_serial":
        total = row["length_total"]
        return [t - w for t, w in zip(total, row["length_wrong"])], total
    return row["attr_correct"], row["attr_total"]


def _fmt(stat: Stat, digits: int) -> str:
    return stat.mean_sd(digits)


def _count(seeds: Seeds) -> int:
    return int(seeds[0].final["n_params"])


def _best(stats: dict[str, Stat], higher: bool) -> str | None:
    known = {label: s for label, s in stats.items() if s.n}
    if not known:
        return None
    pick = max if higher else min
    return pick(known, key=lambda label: known[label].mean)


def best_labels(stats: dict[str, Stat], higher: bool, digits: int) -> list[str]:
    """The cells whose mean, shown to ``digits`` decimals, equals the best one's: bold in the summary table (a
    tie at the precision shown is a tie to the reader)."""
    best = _best(stats, higher)
    if best is None:
        return []
    shown = round(stats[best].mean, digits)
    return [label for label, s in stats.items() if s.n and round(s.mean, digits) == shown]


def summary_table(views: Views, titles: dict[str, str]):
    """Tasks x cells: each task's headline measure (mean ± sd over seeds, best epochs) with the model's
    parameter count in parentheses, one row per task and budget; the best mean of each row in bold (every
    cell of a tie at the precision shown, :func:`best_labels`)."""
    rows, bold = [], []
    for task, by_budget in views.items():
        m = MEASURES[task]
        for budget, cells in by_budget.items():
            stats = {label: headline(seeds, task) for label, seeds in cells.items()}
            rows.append({"task": titles.get(task, task), "measure": f"{m.short} {m.arrow}",
                         "budget": f"{budget:,}",
                         **{label: f"{_fmt(s, m.digits)} ({_count(cells[label]):,})"
                            for label, s in stats.items()}})
            bold.append(best_labels(stats, m.higher, m.digits))
    df = pd.DataFrame(rows)

    def weight(frame):
        css = pd.DataFrame("", index=frame.index, columns=frame.columns)
        for i, labels in enumerate(bold):
            for label in labels:
                css.loc[i, label] = "font-weight: bold"
        return css

    return df.style.hide(axis="index").apply(weight, axis=None)


def sizes_table(sizes: list[dict[str, Any]]) -> pd.DataFrame:
    """Each cell's size (units, or the TPRU's d) and parameter count per task and budget, from the plan's
    ``sizes`` (:meth:`urnlib.chapters.zoo.experiment.Config.sizes`)."""
    frame = pd.DataFrame(sizes)
    frame["entry"] = [f"n = {r['size']}: {r['parameters']:,}" for r in sizes]
    table = frame.pivot(index=["task", "budget"], columns="cell", values="entry")
    rows = list(dict.fromkeys(zip(frame["task"], frame["budget"])))  # the plan's order, not sorted
    return table.loc[rows, list(dict.fromkeys(frame["cell"]))].reset_index()


def lr_choice(choices: list, titles: dict[str, str]) -> tuple[str, pd.DataFrame]:
    """The learning-rate choice of :meth:`urnlib.chapters.zoo.experiment.Config.lr_choice`: a sentence
    (Markdown) and a table, one row per (task, budget, cell): the validation loss at each candidate rate (at
    each run's best epoch, mean ± sd over the stored seeds), the rate chosen, and (where any) what could not
    be compared."""
    rates = choice_rates(choices)
    frame = choice_frame(choices, lambda c: {"task": titles.get(c.task, c.task), "budget": f"{c.budget:,}",
                                             "cell": c.cell}, "validation loss", lambda s: s.mean_sd(3))
    if all(len(c.runs) == 1 for c in choices):
        return ("Every task trains at one learning rate, its `lr` (`lr_choices` names no other), so nothing "
                "is chosen: the table gives each cell's validation loss at that rate."), frame
    other = len(chosen_elsewhere(choices))
    partial = sum(bool(c.notes) for c in choices)
    text = (f"Every (task, budget, cell) trained at each learning rate of `lr_choices` "
            f"({', '.join(lr_text(lr) for lr in rates)}) on every seed, and is read at the rate whose runs "
            f"reach the lower mean validation loss over seeds (each run at its best epoch; an exact tie "
            f"keeps the task's `lr`): the book's choice, not the papers'. A rate other than the task's was "
            f"chosen for {other} of {len(choices)} (task, budget, cell).")
    if partial:
        text += (f" {partial} of the {len(choices)} compare fewer runs than planned: the runs not stored are "
                 "left out of the choice (the note says which).")
    return text, frame


# ---------------------------------------------------------------------------------------------- figures
def _bucket_series(cells: dict[str, Seeds], task: str, min_total: int, error: bool) -> dict:
    """Each seed's accuracy (or error rate) per bucket every seed fills with ``min_total`` (drawn as the mean
    over seeds with ± one sd; an empty line where no bucket is filled)."""
    out = {}
    for label, seeds in cells.items():
        s = accuracy_by_count_seeds([buckets(run, task) for run in seeds], min_total)
        per = 1 - s["per_seed"] if error else s["per_seed"]
        out[label] = SeedCurves(list(per), x=[s["count"]] * len(per)) if len(s["count"]) else ([], [])
    return out


def figure_task(task: str, by_budget: dict[int, dict[str, Seeds]], min_total: int):
    """Every cell's curve on ``task``, one panel per budget: accuracy by attractors (Dyck, agreement), error
    rate by length m + n (cross-serial), the largest n accepted per epoch (aⁿbⁿ); means over seeds with
    ± one standard deviation inside the measure's range, at each run's best epoch (aⁿbⁿ: every epoch, each
    seed's curve where the seeds stopped at different epochs)."""
    panels, styles = [], {}
    for budget, cells in by_budget.items():
        styles |= looks(cells)  # each cell's from its spec
        title = f"{budget:,} parameters"
        any_run = next(iter(cells.values()))[0]
        if task in ("dyck", "agreement"):
            m = MEASURES[task]
            panels.append({"series": _bucket_series(cells, task, min_total, error=False), "markers": True,
                           "xlabel": "number of attractors", "ylabel": "accuracy (best epoch)",
                           "title": title, "hline": (m.chance, m.chance_text), "bounds": UNIT})
        elif task == "cross_serial":
            k = any_run.params["task"]["train_k"]
            panels.append({"series": _bucket_series(cells, task, min_total, error=True), "markers": True,
                           "xlabel": "pattern length m + n", "ylabel": "full-string error rate (best epoch)",
                           "title": title, "vline": (k - 0.5, "longest trained on"), "bounds": UNIT})
        else:
            n = any_run.params["task"]["max_train_n"]
            series = {label: SeedCurves(seeds.each(lambda run: run.column("largest_accepted")))
                      for label, seeds in cells.items()}
            panels.append({"series": series, "xlabel": "epoch", "ylabel": "largest n accepted",
                           "title": title, "hline": (n, "largest n trained on")})
    return cells_figure(panels, styles, empty=f"{task}: not in this configuration's tasks")


# ---------------------------------------------------------------------------------------------- reading
def _the(label: str) -> str:
    """A cell in a sentence: ``"the LSTM"``, ``"the arbitrary-matrix RNN"``."""
    return "the arbitrary-matrix RNN" if label == "Arbitrary" else f"the {label}"


def _names(labels: list[str]) -> str:
    labels = [_the(x) for x in labels]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def winners(views: Views) -> dict[tuple[str, int], tuple[str | None, list[str], list[str]]]:
    """Per (task, budget): the best cell by mean, the cells not separable from it (:func:`urnlib.rules.beats`
    undecided) and the cells at chance (:func:`urnlib.rules.off_chance` false)."""
    out = {}
    for task, by_budget in headline_stats(views).items():
        m = MEASURES[task]
        for budget, stats in by_budget.items():
            best = _best(stats, m.higher)
            tied = [label for label, s in stats.items() if best is not None and label != best
                    and rules.beats(stats[best], s, higher=m.higher) is None]
            at_chance = [label for label, s in stats.items()
                         if not rules.off_chance(m.chance, s, higher=m.higher)]
            out[(task, budget)] = (best, tied, at_chance)
    return out


def reading(views: Views, titles: dict[str, str]) -> str:
    """What the summary table shows, in sentences built from its numbers (Markdown)."""
    stats, found = headline_stats(views), winners(views)
    lines = []
    for task, by_budget in stats.items():
        m = MEASURES[task]
        parts = []
        for budget, cells in by_budget.items():
            best, tied, at_chance = found[(task, budget)]
            if best is None:
                continue
            if len(at_chance) == len(cells):
                parts.append(f"at {budget:,} parameters no cell is clearly better than a model that learned "
                             f"nothing: {m.chance_text} (the best mean, {_the(best)}'s, is "
                             f"{_fmt(cells[best], m.digits)})")
                continue
            text = f"at {budget:,} parameters {_the(best)} does best ({_fmt(cells[best], m.digits)})"
            text += (f", with {_names(tied)} within the seeds' spread of it" if tied
                     else ", ahead of every other cell by more than the seeds' spread")
            if at_chance:
                verb = "is" if len(at_chance) == 1 else "are"
                text += (f"; {_names(at_chance)} {verb} not clearly better than a model that learned "
                         f"nothing: {m.chance_text}")
            parts.append(text)
        lines.append(f"* **{titles.get(task, task)}** ({m.text}, {m.better}): " + "; ".join(parts) + ".")
    ranks: dict[str, list[float]] = {}
    for task, by_budget in stats.items():
        m = MEASURES[task]
        for cells in by_budget.values():
            means = pd.Series({label: s.mean for label, s in cells.items()})
            for label, r in means.rank(ascending=not m.higher).items():
                ranks.setdefault(label, []).append(float(r))
    if ranks:
        order = sorted(ranks, key=lambda label: np.mean(ranks[label]))
        wins = {label: sum(best == label for best, _, _ in found.values()) for label in order}
        lines.append(f"* **Across the {len(found)} task and budget rows**, by mean rank (1 is best): "
                     + ", ".join(f"{_the(label)} {np.mean(ranks[label]):.1f}" for label in order)
                     + ". Best mean per row: " + ", ".join(f"{_the(label)} {n} time{'s' if n != 1 else ''}"
                                                             for label, n in wins.items() if n) + ".")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- cost
def _runs(views: Views) -> list[tuple[str, int, str, Run]]:
    return [(task, budget, label, run) for task, by_budget in views.items()
            for budget, cells in by_budget.items() for label, seeds in cells.items() for run in seeds]


def _cpu(run: Run) -> float:
    cpu = run.record.get("cpu_time_s")
    return float(cpu if cpu is not None else run.record.get("wall_time_s", 0.0))


def cost_table(views: Views, titles: dict[str, str] | None = None) -> pd.DataFrame:
    """CPU minutes per run of every cell on every task (mean over seeds and budgets); a task's column is
    headed by its title in ``titles`` (default: its key)."""
    rows: dict[tuple[str, str], list[float]] = {}
    for task, _, label, run in _runs(views):
        rows.setdefault((task, label), []).append(_cpu(run) / 60)
    frame = pd.DataFrame([{"task": task, "cell": label, "CPU minutes per run": float(np.mean(v))}
                          for (task, label), v in rows.items()])
    table = frame.pivot(index="cell", columns="task", values="CPU minutes per run")
    table = table[list(views)].loc[list(dict.fromkeys(frame["cell"]))].round(2)
    return table.rename(columns=titles or {}).rename_axis(columns=None).reset_index()


def cost_summary(views: Views, workers: int = 2, titles: dict[str, str] | None = None) -> str:
    """One sentence: the runs' CPU time in all, per run, the longest (its task named by ``titles``, default
    its key), and the wall time on ``workers``."""
    runs = _runs(views)
    cpu = [_cpu(run) for *_, run in runs]
    task, budget, label, longest = runs[int(np.argmax(cpu))]
    total, mean = sum(cpu), float(np.mean(cpu))
    task = (titles or {}).get(task, task)
    return (f"The {len(runs)} runs took {_duration(total)} of CPU time in all ({_duration(mean)} "
            f"per run on average; the longest, {_the(label)} on {task} at {budget:,} parameters, seed "
            f"{longest.name.rsplit(' ', 1)[-1]}, {_duration(max(cpu))}): about {_duration(total / workers)} "
            f"on {workers} workers.")


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} hours"
    return f"{seconds / 60:.1f} minutes" if seconds >= 60 else f"{seconds:.1f} seconds"
