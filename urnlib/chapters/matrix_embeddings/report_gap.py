"""The cause of each analogy count that falls short of paper 003's, from the evidence of the matrix-embedding
chapter's ablations (:mod:`urnlib.chapters.matrix_embeddings.report_analogy`), for its claims.

For a model whose count at the kept epoch (log entries, the paper's representation) is below the paper's:

* ``setting``: a setting of another optimiser (the authors' Adagrad) reaches the paper's count (not clearly
  below it by :func:`urnlib.rules.at_least`): our optimiser was the cause.
* ``data``: the count grows with the share of the training sentences (least-squares slope on log2 of the
  share, t-test at :data:`urnlib.rules.LEVEL`), and that line reaches the paper's count within the doublings
  from our corpus to the paper's (UMBC, not reachable offline): the missing corpus is the cause.
* ``authors`` (:func:`urnlib.claims.authors_cause`): the authors' whole recipe (Adagrad at lr 1.0 with their
  batch) was run, none of its runs stopped at its epoch cap (for 4.3's range "after equal amount of
  training": none before the epochs the other models trained with it), its count is still clearly below the
  paper's, and the trend does not reach it within the paper's corpus: the miss stands with their training;
  the corpus itself (UMBC) is the experiment left, named with its cost.
* ``open`` otherwise, with what was tried and the experiment that would settle it, its cost estimated from the
  stored runs' CPU seconds.

A model without ablation runs gets no entry: its claims keep the chapter's own reading.
"""

from __future__ import annotations

import math
import re

import numpy as np
from scipy import stats as _stats

from urnlib import rules
from urnlib.claims import authors_cause
from urnlib.chapters.matrix_embeddings.report_analogy import (
    CHAPTER_RUNS, kept_count, optimiser_settings, paper_count, run_setting, settings, share_points,
)
from urnlib.chapters.matrix_embeddings.report import PAPER_CORRECT, PAPER_WORDS
from urnlib.seeds import Seeds, Stat
from urnlib.statements import in_range

__all__ = ["gap_causes", "gap_summary"]

View = dict[str, Seeds]
#: the authors' code's batch (paper 003's lm_me.py default: 10,000 sentences)
AUTHORS_BATCH = 10_000


def _count(seeds: Seeds) -> Stat:
    return seeds.stat(kept_count)


def _cpu_hours(seeds: Seeds) -> float:
    """The mean CPU hours of one run of ``seeds`` (NaN where the runs recorded none)."""
    spent = [(getattr(r, "record", None) or {}).get("cpu_time_s") for r in seeds]
    return math.nan if any(c is None for c in spent) else float(np.mean(spent)) / 3600


def _trend(row: dict[str, Seeds]) -> tuple[object, float, float] | None:
    """The least-squares fit of the kept count on log2 of the share over every run of the chapter's optimiser,
    the share trained most, and the doublings from there to the paper's corpus; ``None`` under 2 shares."""
    x, y = share_points(row)
    if len(set(x)) < 2 or len(x) < 3:
        return None
    tokens = row[CHAPTER_RUNS][0].final.get("data", {}).get("train_tokens")
    room = math.log2(PAPER_WORDS / tokens) if tokens else math.nan
    return _stats.linregress(x, y), float(y[x == x.max()].mean()), room


def _cause(model: str, row: dict[str, Seeds], paper: float) -> tuple[str, str, str]:
    """``(cause, what the ablations found, settle text)`` of one model's gap."""
    found, ours = [], _count(row[CHAPTER_RUNS])
    for name, seeds in optimiser_settings(row).items():
        s = _count(seeds)
        if rules.at_least(s, paper) is not False:  # not clearly below the paper's count
            return "setting", f"{name} answers {s.mean_sd(1)}, the paper's {paper:g} reached", ""
        more = rules.compare(s, ours).holds
        found.append(f"{name}: {s.mean_sd(1)} against the chapter's {ours.mean_sd(1)} ("
                     + {True: "more, but far below the paper's", False: "fewer",
                        None: "not clearly different"}[more] + ")")
    trend = _trend(row)
    if trend is not None:
        fit, top, room = trend
        if fit.slope > 0 and fit.pvalue < rules.LEVEL:
            need = (paper - top) / fit.slope
            text = (f"the count grows by {fit.slope:.1f} per doubling of the training sentences (p = "
                    f"{fit.pvalue:.2g}); the paper's {paper:g} would take {need:.0f} doublings, the paper's "
                    f"corpus being {room:.0f} doublings of ours")
            if need <= room:
                return "data", text, ""
            found.append(text)
        else:
            found.append(f"no growth with the share of the training sentences ({fit.slope:+.1f} per "
                         f"doubling, p = {fit.pvalue:.2g})")
    if not found:
        return "open", "", ""
    tried = "; ".join(found)
    recipe = _authors_recipe(row)
    if recipe is not None:  # the authors' whole recipe, still clearly below the paper's count: authors
        capped = any(len(r.history) >= run_setting(r).epochs for r in recipe)  # more epochs come first
        cause = None if capped else authors_cause([rules.at_least(_count(recipe), paper)])
        cause = cause or "open"
        return cause, tried, f"tried here - {tried}. Next: {_corpus_next(recipe)}"
    adagrad = next((s for s in optimiser_settings(row).values() if run_setting(s[0]).optimizer == "adagrad"),
                   row[CHAPTER_RUNS])
    batch = row[CHAPTER_RUNS][0].params["train"]["batch_size"]
    hours, fewer = 3 * _cpu_hours(adagrad), AUTHORS_BATCH / batch
    cost = ("its cost unknown" if math.isnan(hours) else
            f"about {hours:.1f} CPU hours for 3 seeds at as many epochs as the Adagrad runs here; a batch "
            f"{fewer:.0f} times larger makes {fewer:.0f} times fewer updates an epoch, so it may need more")
    settle = (f"tried here - {tried}. Next: the authors' whole recipe for {model}, Adagrad at lr 1.0 with "
              f"their batch of {AUTHORS_BATCH:,} sentences (ours: {batch}) and the log entries counted after "
              f"every epoch ({cost}); the paper's corpus itself (UMBC) is not reachable here")
    return "open", tried, settle


def _range_cause(model: str, row: dict[str, Seeds], equal: int = 0) -> tuple[str, str, str] | None:
    """``(cause, what the recipe found, settle)`` of a count the paper prints as a range (4.3's "1-2") from
    the authors' whole recipe, decided seed by seed as the claim is (:func:`urnlib.statements.in_range`):
    ``setting`` where their recipe answers inside the range, ``authors`` where it answers outside it too;
    ``None`` where undecided, or where a recipe run stopped at its epoch cap (not their training) before
    ``equal`` epochs: the most the other models trained with the same recipe before their validation loss
    stopped them (paper 003 sec. 5 counts 4.3's questions "after equal amount of training"). The settle text
    of ``authors``: their corpus, the experiment left (:func:`_corpus_next`)."""
    recipe = _authors_recipe(row)
    low, high = (int(n) for n in re.findall(r"\d+", PAPER_CORRECT[model]))
    if recipe is None or any(_cut_short(r, equal) for r in recipe):
        return None
    counts = _count(recipe)
    decision = in_range(counts.values, low, high, name=f"{model} with the authors' recipe (log entries)")
    cause = authors_cause([decision.holds])
    if cause is None:
        return None
    name = next(n for n, s in optimiser_settings(row).items() if s is recipe)
    capped = sum(len(r.history) >= run_setting(r).epochs for r in recipe) if equal else 0
    equally = (f"; {capped} of its {len(recipe)} runs stopped at the cap of {run_setting(recipe[0]).epochs} "
               f"epochs, past the {equal} the other models trained with the same recipe before their "
               "validation loss stopped them: at least the paper's \"equal amount of training\""
               if capped else "")
    return cause, (f"{name} (the authors' whole recipe): {counts.mean_sd(1)} against the chapter's "
                   f"{_count(row[CHAPTER_RUNS]).mean_sd(1)} ({decision.direction}){equally}"), \
        (_corpus_next(recipe) if cause == "authors" else "")


def _cut_short(run, equal: int) -> bool:
    """A run stopped at its epoch cap, before ``equal`` epochs (at any epoch where ``equal`` is 0)."""
    capped = len(run.history) >= run_setting(run).epochs
    return capped and (not equal or len(run.history) < equal)


def _equal_training(rows: dict[str, dict[str, Seeds]], model: str) -> int:
    """The most epochs any run of the other models trained with the authors' whole recipe where none of
    them stopped at its cap (their validation loss stopped them): the "equal amount of training" a range
    is read after; 0 where there is none."""
    others = [_authors_recipe(row) for m, row in rows.items() if m != model]
    runs = [r for recipe in others if recipe is not None for r in recipe]
    if not runs or any(len(r.history) >= run_setting(r).epochs for r in runs):
        return 0
    return max(len(r.history) for r in runs)


def _authors_recipe(row: dict[str, Seeds]) -> Seeds | None:
    """The setting of ``row`` trained with the authors' whole recipe (Adagrad at their batch), if any."""
    for seeds in optimiser_settings(row).values():
        setting = run_setting(seeds[0])
        if setting.optimizer == "adagrad" and setting.batch_size == AUTHORS_BATCH:
            return seeds
    return None


def _corpus_next(recipe: Seeds) -> str:
    """The experiment left once the authors' recipe is run: their corpus, one epoch (their code's default),
    its cost from the recipe runs' CPU seconds an epoch; and whether those runs stopped at their cap."""
    tokens = recipe[0].final.get("data", {}).get("train_tokens")
    epochs = [len(r.history) for r in recipe]
    per_epoch = _cpu_hours(recipe) * 3600 / float(np.mean(epochs)) if epochs and min(epochs) else math.nan
    times = PAPER_WORDS / tokens if tokens else math.nan
    cost = ("its cost unknown" if math.isnan(per_epoch * times) else
            f"about {3 * per_epoch * times / 3600:,.0f} CPU hours for 3 seeds at the recipe runs' "
            f"{per_epoch:.0f} CPU s an epoch of our {tokens:,} training words, the paper's corpus being "
            f"{times:,.0f} times ours")
    capped = sum(len(r.history) >= run_setting(r).epochs for r in recipe)
    cap = run_setting(recipe[0]).epochs
    more = (f"; {capped} of the {len(recipe)} recipe runs stopped at their cap of {cap} epochs, so more "
            "epochs on our corpus come first") if capped else ""
    return (f"the authors' recipe on the paper's corpus (UMBC, {PAPER_WORDS / 1e9:.3f}G words, not reachable "
            f"offline), one epoch as their code's default ({cost}){more}")


def gap_causes(view: View, ablations: View | None = None) -> dict[str, tuple[str, str, str]]:
    """``{model: (cause, finding, settle text)}`` for every matrix model of ``view`` whose count at the kept
    epoch is below the paper's and which has ablation runs (see the module docstring)."""
    out, rows = {}, settings(view, ablations)
    for model, row in rows.items():
        paper = paper_count(model)
        if paper is not None and paper < 10 and _authors_recipe(row) is not None:  # 4.3's "1 or 2"
            decided = _range_cause(model, row, _equal_training(rows, model))
            if decided is not None:
                out[model] = decided
            continue
        if paper is None or len(row) < 2 or paper < 10:  # a range has no shortfall to explain
            continue
        ours = _count(row[CHAPTER_RUNS])
        if ours.n and ours.mean < paper:
            out[model] = _cause(model, row, paper)
    return out


def gap_summary(causes: dict[str, tuple[str, str, str]], view: View, ablations: View | None = None) -> str:
    """What the ablations found, in a few lines for the page (Markdown; the evidence in full, its figure
    and table fold below it): per model of ``causes`` (:func:`gap_causes`), its count at the kept epoch
    against the paper's, the cause its claims take, and what was found. Empty where no model has a cause."""
    items = []
    for model, (cause, found, _settle) in causes.items():
        row = settings(view, ablations)[model]
        items.append(f"* **{model}**: {_count(row[CHAPTER_RUNS]).mean_sd(1)} questions (log entries, "
                     f"kept epoch) against the paper's {paper_count(model):g}; the cause its claims take: "
                     f"*{cause}*"
                     + (f" ({found})" if found else "") + ".")
    if not items:
        return ""
    return ("What the runs found (the causes as in the claims table; the evidence in full, its figure and "
            "table are folded below):\n\n" + "\n".join(items))
