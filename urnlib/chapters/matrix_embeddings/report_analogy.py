"""Why our matrix models answer fewer analogy questions than paper 003's (not in the paper): the analogy
counts over the epochs and the ablations of the matrix-embedding chapter, from stored runs.

The chapter's runs come grouped by model (``urnlib.chapters.matrix_embeddings.experiment.Config.view``), the
settings of its ``ablations`` by label (``Config.ablation_view``); :func:`settings` sets each ablation setting
beside the chapter's runs of its model. What a setting changes is read from its runs' parameters (optimiser,
learning rate, batch, epoch cap, share of the training sentences: :func:`run_setting`); its name from their
coordinate ``ablation``. A count at the *kept* epoch is a run's final metric: the epoch of its lowest
validation loss; the per-epoch counts are of the matrices' entries (the history's ``analogies_correct``), the
paper's of their log entries (:data:`urnlib.chapters.matrix_embeddings.report.PAPER_CORRECT`, the chapter's
copy of its table). :func:`gap_line` says which evidence bears on the gap, each part only where its runs
exist, else which entries of ``ablations`` would test it and at what cost.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as _stats

from urnlib import rules
from urnlib.models.palette import COLORBLIND
from urnlib.models.registry import Style, spec_string
from urnlib.plots.curves import BASELINE, column_figure, curves_panel, figure_legend
from urnlib.plots.series import SeedCurves
from urnlib.chapters.matrix_embeddings.report import MATRIX_KINDS, PAPER_CORRECT, PAPER_WORDS
from urnlib.seeds import Seeds, Stat, coords_of

__all__ = ["CHAPTER_RUNS", "settings", "RunSetting", "run_setting", "optimiser_settings", "same_recipe",
           "share_points", "paper_count", "kept_count", "epochs_figure", "ablation_table", "gap_line"]

View = dict[str, Seeds]
#: the name of the chapter's own runs of a model among its settings
CHAPTER_RUNS = "the chapter's runs"
_OURS = Style("ours", COLORBLIND[0], ".", "-")
#: one colour per ablation setting, in the order they first appear (the same setting, the same colour in
#: every panel): the book's colour-blind palette, but the chapter's runs' blue, word2vec's grey and the yellow
_PALETTE = tuple(c for i, c in enumerate(COLORBLIND) if i not in (0, 7, 8))
_KEPT = {"exp": Style("kept", "#000000", "D", "none"), "log": Style("kept log", "#000000", "x", "none")}
#: the shares of the training sentences an ablation of the corpus size would train on
_FRACTIONS = (0.25, 0.5)


class RunSetting(NamedTuple):
    """How a run trained: its optimiser, learning rate, batch (sentences), epoch cap and share of the training
    sentences. :attr:`recipe` is all but the share: how it was optimised."""

    optimizer: str
    lr: float
    batch_size: int
    epochs: int
    train_fraction: float

    @property
    def recipe(self) -> tuple:
        return self.optimizer, self.lr, self.batch_size, self.epochs


def run_setting(run) -> RunSetting:
    """The :class:`RunSetting` a run trained with (runs stored without a field: ``NaN`` / ``0``)."""
    train = run.params.get("train", {})
    return RunSetting(train.get("optimizer", "adam"), train.get("lr", math.nan), train.get("batch_size", 0),
                      train.get("epochs", 0), run.params["task"].get("train_fraction", 1.0))


def optimiser_settings(row: dict[str, Seeds]) -> dict[str, Seeds]:
    """The settings of a model's ``row`` (:func:`settings`) that change only how it is optimised (optimiser,
    learning rate, batch, epoch cap: :attr:`RunSetting.recipe`), on the chapter's share of the training
    sentences."""
    base = run_setting(row[CHAPTER_RUNS][0])
    changed = lambda s: run_setting(s[0]).train_fraction == base.train_fraction and \
        run_setting(s[0]).recipe != base.recipe  # noqa: E731
    return {n: s for n, s in row.items() if n != CHAPTER_RUNS and changed(s)}


def same_recipe(row: dict[str, Seeds]) -> list[Seeds]:
    """The settings of ``row`` optimised as the chapter's runs (:attr:`RunSetting.recipe`), whatever their
    share of the training sentences: the points of a trend over the corpus size."""
    base = run_setting(row[CHAPTER_RUNS][0]).recipe
    return [s for s in row.values() if run_setting(s[0]).recipe == base]


def share_points(row: dict[str, Seeds], rep: str = "log") -> tuple[np.ndarray, np.ndarray]:
    """``(log2 share, kept count)`` of every run of ``row`` optimised as the chapter's (:func:`same_recipe`),
    runs without a count at ``rep`` left out: the points of the trend over the corpus size."""
    runs = [r for s in same_recipe(row) for r in s]
    points = [(math.log2(run_setting(r).train_fraction), kept_count(r, rep)) for r in runs]
    points = [p for p in points if not math.isnan(p[1])]
    return np.array([p[0] for p in points]), np.array([p[1] for p in points])


def _setting_name(seeds: Seeds) -> str:
    """What a setting changes (its runs' coordinate ``ablation``), ``""`` at the chapter's values."""
    return next((coords_of(r).get("ablation") for r in seeds if coords_of(r).get("ablation")), "")


def settings(view: View, ablations: View | None = None) -> dict[str, dict[str, Seeds]]:
    """``{model: {setting: Seeds}}`` of every matrix model of ``view``: :data:`CHAPTER_RUNS` first, then each
    setting of ``ablations`` of that model, named by what it changes. An entry at the chapter's values stands
    for the chapter's runs where it has more seeds."""
    out = {label: {CHAPTER_RUNS: s} for label, s in view.items()
           if s[0].params["model"]["kind"] in MATRIX_KINDS}
    for seeds in (ablations or {}).values():
        row = out.get(spec_string(seeds[0].params["model"]))
        if row is None:
            continue
        name = _setting_name(seeds) or CHAPTER_RUNS
        if name != CHAPTER_RUNS or len(seeds) > len(row[CHAPTER_RUNS]):
            row[name] = seeds
    return out


def paper_count(model: str) -> float | None:
    """The paper's count for ``model`` (:data:`~urnlib.chapters.matrix_embeddings.report.PAPER_CORRECT`; a
    range such as "1-2": its top), ``None`` for a model the paper does not count."""
    numbers = [int(n) for n in re.findall(r"\d+", PAPER_CORRECT.get(model, ""))]
    return float(max(numbers)) if numbers else None


def _kept_epoch(run) -> int:
    """The 1-based epoch whose weights the run kept (of its lowest validation loss)."""
    return int(run.final["epoch"])


def kept_count(run, representation: str = "log") -> float:
    """Analogy questions a run answers at its kept epoch: with the log entries (NaN where not scored) or the
    entries (``"exp"``)."""
    if representation == "exp":
        return float(run.final["analogies_correct"])
    total = (run.final.get("analogy_log_sections") or {}).get("total")
    return float(total["correct"]) if total else math.nan


def _kept(seeds: Seeds) -> tuple[Stat, str]:
    """The count the decisions read: the log entries' (the paper's representation), the entries' where a run
    has no log score."""
    log = seeds.stat(kept_count)
    if log.missing:
        return seeds.stat(lambda r: kept_count(r, "exp")), "entries"
    return log, "log entries"


def _word2vec(view: View) -> Stat | None:
    seeds = next((s for s in view.values() if s[0].params["model"]["kind"] == "word2vec"), None)
    return None if seeds is None else seeds.final("analogies_correct")


def epochs_figure(view: View, ablations: View | None = None):
    """One panel per matrix model: the analogy questions answered with the entries after every epoch, one
    line per seed (no mean: the seeds stop at different epochs), a colour per setting; each run's kept epoch
    marked (black diamonds; crosses: its log entries' count there), word2vec's count on the same sentences
    (mean over its seeds, grey) and the paper's count (black, dotted) as horizontal lines. A log scale where
    every count is above 0."""
    grouped = settings(view, ablations)
    if not grouped:
        fig, (ax,), _ = column_figure(1, letters=False)
        ax.axis("off")
        ax.text(0.5, 0.5, "no matrix model at this preset", ha="center", va="center")
        return fig
    fig, axes, spare = column_figure(len(grouped))
    w2v, colours, legend = _word2vec(view), {}, {}
    for name in (n for row in grouped.values() for n in row if n != CHAPTER_RUNS):
        colours.setdefault(name, _PALETTE[len(colours) % len(_PALETTE)])
    panels = []
    for model, row in grouped.items():
        series, styles, kept = {}, {}, {"exp": [], "log": []}
        for name, seeds in row.items():
            look = _OURS if name == CHAPTER_RUNS else Style(name, colours[name], ".", "-")
            series[name] = SeedCurves(seeds.each(lambda run: run.column("analogies_correct")), each=True)
            styles[name] = legend.setdefault(name, look)
            for run in seeds:
                for rep in kept:
                    kept[rep].append((_kept_epoch(run), kept_count(run, rep)))
        last = max(len(r.history) for s in row.values() for r in s)
        for rep, what in (("exp", "kept epoch (lowest validation loss)"), ("log", "log entries, kept epoch")):
            points = sorted(p for p in kept[rep] if not math.isnan(p[1]))
            if points:
                series[what], styles[what] = (np.array([p[0] for p in points]),
                                              np.array([p[1] for p in points])), _KEPT[rep]
                legend.setdefault(what, _KEPT[rep])
        if w2v is not None and w2v.n:
            what = f"word2vec, same sentences ({w2v.n} seeds)"
            series[what], styles[what] = ([1, last], [w2v.mean] * 2), BASELINE
            legend.setdefault(what, BASELINE)
        paper = paper_count(model)
        marks = [(paper, f"the paper: {PAPER_CORRECT[model]} (log entries)")] if paper is not None else []
        panels.append((model, series, styles, marks))
    values = [v for _, series, _, marks in panels for s in series.values()
              for v in (np.concatenate(s.curves) if isinstance(s, SeedCurves) else np.ravel(s[1]))]
    logy = all(v > 0 for v in values + [m[0] for *_, marks in panels for m in marks])
    for ax, (model, series, styles, marks) in zip(axes, panels):
        if ax is axes[0]:  # the figure's one legend names every setting: the first panel holds them all
            missing = {k: ([np.nan], [np.nan]) for k in legend if k not in series}
            series, styles = {**series, **missing}, {**styles, **{k: legend[k] for k in missing}}
        curves_panel(ax, series, styles, xlabel="epoch", title=model, logy=logy, markers=True,
                     integer_x=True, marks=marks,
                     ylabel="analogies correct" + (" (log scale)" if logy else ""))
        if logy:  # plain numbers on the log axis: 20, 50, 100, 200 (not 2 x 10^1)
            ax.yaxis.set_major_formatter("{x:g}")
            ax.yaxis.set_minor_formatter(lambda y, _: f"{y:g}" if f"{y:g}"[0] in "25" else "")
    figure_legend(fig, axes[0], spare, max_cols=2)
    return fig


def _epochs(seeds: Seeds) -> str:
    return ", ".join(f"{_kept_epoch(r)}/{len(r.history)}" for r in seeds)


def ablation_table(view: View, ablations: View | None = None) -> pd.DataFrame:
    """One row per matrix model and setting (:func:`settings`): the seeds, each seed's kept epoch / epochs
    run, the analogy questions correct at the kept epoch with the log entries and the entries and the best
    count over the epochs (entries), mean ± sd over the seeds, the test perplexity at the kept epoch, and
    the paper's count."""
    rows = []
    for model, row in settings(view, ablations).items():
        for name, seeds in row.items():
            rows.append({"model": model, "setting": name, "seeds": len(seeds),
                         "kept epoch / epochs run": _epochs(seeds),
                         "correct, kept epoch: log entries": seeds.stat(kept_count).mean_sd(1, "-"),
                         "correct, kept epoch: entries": seeds.final("analogies_correct").mean_sd(1),
                         "best over the epochs: entries": seeds.best("analogies_correct", False).mean_sd(1),
                         "test perplexity": seeds.final("perplexity").mean_sd(1),
                         "the paper": PAPER_CORRECT.get(model, "")})
    return pd.DataFrame(rows)


def _cost(seeds: Seeds, shares: tuple[float, ...] = (1.0,)) -> str:
    """What a run like each of ``seeds`` on each share of the training sentences in ``shares`` costs, from the
    CPU seconds per epoch and the epochs of ``seeds`` (an epoch on a share of the sentences costs that share
    of one; records without CPU time: their epochs' wall-clock seconds)."""
    spent, unit = [(getattr(r, "record", None) or {}).get("cpu_time_s") for r in seeds], "CPU"
    if any(c is None for c in spent):
        spent, unit = [sum(row.get("seconds", math.nan) for row in r.history) for r in seeds], "wall-clock"
    per_epoch = float(np.mean([c / len(r.history) for c, r in zip(spent, seeds)]))
    epochs, cap = float(np.mean([len(r.history) for r in seeds])), seeds[0].params["train"]["epochs"]
    n, hours = len(seeds) * len(shares), lambda e: len(seeds) * e * per_epoch * sum(shares) / 3600  # noqa: E731
    if math.isnan(per_epoch):
        return f"{n} runs, their cost unknown (the stored runs recorded no time)"
    return (f"{n} runs, about {hours(epochs):.1f} {unit} hours at the stored runs' {per_epoch:.0f} s an "
            f"epoch of all the training sentences and {epochs:.0f} epochs a run; at most {hours(cap):.1f} at "
            f"the cap of {cap} epochs")


def _entry(model: str, **changes) -> str:
    return "`{" + ", ".join([f"model: '{model}'", *(f"{k}: {v}" for k, v in changes.items())]) + "}`"


def _optimiser_part(model: str, row: dict[str, Seeds], paper: float) -> str:
    """Does another optimiser (the authors' Adagrad at lr 1.0) close the gap?"""
    base, tried = row[CHAPTER_RUNS], optimiser_settings(row)
    if not tried:
        return (f"*The optimiser* (not run here): {_entry(model, optimizer='adagrad', lr=1.0)} in "
                f"`ablations` would test the authors' Adagrad ({_cost(base)}).")
    ours, what = _kept(base)
    parts = []
    for name, seeds in tried.items():
        s, _ = _kept(seeds)
        if any(rules.at_least(seeds.stat(lambda r, rep=rep: kept_count(r, rep)), paper)
               for rep in ("log", "exp")):
            verdict = f"closes the gap (the paper's {paper:g} reached)"
        else:
            d = rules.compare(s, ours, names=(name, "the chapter's runs"))
            verdict = {True: "answers more than the chapter's runs but stays far below the paper's "
                             f"{paper:g}", False: "answers fewer than the chapter's runs",
                       None: "answers no clearly different number (the seeds do not decide it)"}[d.holds]
        parts.append(f"{name}: {s.mean_sd(1)} ({what}, kept epoch; the chapter's runs {ours.mean_sd(1)}) - "
                     f"{verdict}")
    return "*The optimiser*: " + "; ".join(parts) + "."


def _fraction_part(model: str, row: dict[str, Seeds], paper: float) -> str:
    """Does the count grow with the share of the training sentences (a trend over the shares)?"""
    base = row[CHAPTER_RUNS]
    trained = same_recipe(row)
    shares = sorted({run_setting(s[0]).train_fraction for s in trained})
    if len(shares) < 2:
        entries = " and ".join(_entry(model, train_fraction=f) for f in _FRACTIONS)
        return f"*The corpus size* (not run here): {entries} would test it ({_cost(base, _FRACTIONS)})."
    rep = "log" if all(not math.isnan(kept_count(r)) for s in trained for r in s) else "exp"
    x, y = share_points(row, rep)  # rep: every run has it, so none is left out
    counts = ", ".join(f"{f:.0%}: {Stat.of(y[x == math.log2(f)]).mean_sd(1)}" for f in shares)
    if len(x) < 3:
        return f"*The corpus size*: {counts} (too few runs for a trend)."
    fit = _stats.linregress(x, y)
    if fit.slope > 0 and fit.pvalue < rules.LEVEL:
        top = y[x == x.max()].mean()
        need = (paper - top) / fit.slope
        words = (PAPER_WORDS / base[0].final["data"]["train_tokens"]) if "data" in base[0].final else math.nan
        trend = f"the count grows by {fit.slope:.1f} per doubling of the sentences (p = {fit.pvalue:.2g})"
        if need > 0:  # where a straight line in log2 of the corpus would reach the paper's count
            trend += (f"; if that held, the paper's {paper:g} would take {need:.0f} doublings of our corpus, "
                      f"the paper's being {words:,.0f} times ours ({math.log2(words):.0f} doublings)")
    else:
        trend = (f"no growth with the share of the sentences ({fit.slope:+.1f} per doubling, p = "
                 f"{fit.pvalue:.2g}): more data of this kind would not close the gap")
    what = "log entries" if rep == "log" else "entries"
    return f"*The corpus size* (kept epoch, {what}): {counts}; {trend}."


def _epoch_part(seeds: Seeds, paper: float, w2v: Stat | None) -> str:
    """Does the per-epoch count peak before the kept epoch and fall while the validation loss still falls?"""
    early = 0  # seeds whose count peaks before the kept epoch and falls while the validation loss still falls
    for run in seeds:
        counts, loss = run.column("analogies_correct"), run.column("val_loss")
        peak, kept = int(np.argmax(counts)), _kept_epoch(run) - 1
        early += peak < kept and counts[peak] > counts[kept] and loss[kept] < loss[peak]
    best = seeds.best("analogies_correct", False)
    where = ", ".join(str(int(np.argmax(r.column("analogies_correct"))) + 1) for r in seeds)
    numbers = (f"best {best.mean_sd(1)} after epochs {where}; {seeds.final('analogies_correct').mean_sd(1)} "
               f"at the kept epoch, kept / run: {_epochs(seeds)}")
    if early:
        text = (f"*The epoch*: with the entries the count peaks before the kept epoch on {early} of "
                f"{len(seeds)} seeds and falls while the validation loss still falls ({numbers}): the kept "
                "epoch is not where the analogies are best")
    else:
        text = f"*The epoch*: with the entries no seed's count peaks before its kept epoch ({numbers})"
    reach = paper if w2v is None or not w2v.n else min(paper, w2v.mean)
    if best.n and best.high < reach / 2:
        text += (f"; but even the best epoch answers under half of the paper's {paper:g}"
                 + (f" and of word2vec's {w2v.mean:.0f} on the same sentences" if w2v is not None and w2v.n
                    else "") + ": choosing the epoch does not close the gap")
    elif best.n and best.high < paper:
        text += f"; even the best epoch stays below the paper's {paper:g}"
    return text + "."


def gap_line(view: View, ablations: View | None = None) -> str:
    """Which evidence bears on the gap between our analogy counts and the paper's (Markdown), for every matrix
    model that answers fewer than the paper's count at its kept epoch: whether another optimiser closes it
    (the authors' Adagrad), whether the count grows with the share of the training sentences (the
    least-squares slope of the kept epoch's count on log2 of the share over every run, its t-test at 5%), and
    whether the count peaks before the kept epoch while the validation loss still falls. A question whose runs
    do not exist is named with the entries of ``ablations`` that would answer it and their CPU cost."""
    w2v, parts = _word2vec(view), []
    for model, row in settings(view, ablations).items():
        paper = paper_count(model)
        ours, what = _kept(row[CHAPTER_RUNS])
        if paper is None or not ours.n or ours.mean >= paper:
            continue
        vectors = f"; word2vec on the same sentences: {w2v.mean_sd(0)}" if w2v is not None and w2v.n else ""
        below = rules.threshold(ours, paper, above=False).holds
        items = [_optimiser_part(model, row, paper), _fraction_part(model, row, paper),
                 _epoch_part(row[CHAPTER_RUNS], paper, w2v)]
        parts.append(f"**{model}** answers {ours.mean_sd(1)} questions ({what}, kept epoch) against the "
                     f"paper's {paper:g}" + ("" if below else " (not clearly fewer: the seeds do not decide)")
                     + f"{vectors}.\n\n" + "\n".join(f"- {item}" for item in items))
    if not parts and not any(paper_count(m) is not None for m in settings(view)):
        return (f"The paper counts the analogies of none of these models (only of "
                f"{', '.join(PAPER_CORRECT)}): there is no gap to read.")
    if not parts:
        return "No matrix model answers fewer analogy questions than the paper's: there is no gap to explain."
    return "\n\n".join(parts)
