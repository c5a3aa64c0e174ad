"""Figures, tables and claims of the agreement chapter (paper 000 sec. 4), drawn from stored runs.

Fig. 2 (accuracy by attractors, TURN vs LSTM, one panel per data source, with the first-noun and nearest-noun
heuristics beside them), the same numbers as a table, and the claims; Tables 1-2 and the phrase effects are in
:mod:`urnlib.reports.agreement_tables`. ``runs`` is what :func:`urnlib.experiments.agreement.run` returns
(``runs.by_source[source][label]`` and ``runs.variants[source]``, each the :class:`~urnlib.seeds.Seeds` of one
model). Every run is read at its best epoch (lowest test loss); figures and tables give the mean ± one
standard deviation over seeds, and every claim is decided by :mod:`urnlib.rules` over the seeds. The
heuristics are scored on each seed's test set (stored with the run's data statistics). The paper's numbers are
constants, with their source; ours always come from the runs.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from urnlib import rules
from urnlib.claims import Claim, across_settings, claim, setting_summary
from urnlib.metrics import accuracy_by_count_seeds
from urnlib.plots.agreement import attractor_panels_figure
from urnlib.plots.curves import BASELINE
from urnlib.reports.agreement_tables import (PAPER_TABLE1, PAPER_TABLE2, PAPER_TABLE2_WORDS,  # noqa: F401
                                             PAPER_THRESHOLD, RELEVANT_TAGS, analysis_claims, embeddings,
                                             frequent_noun_pairs, main_tags, number_groups, paper_table2,
                                             phrase_section, phrase_table, table1, table1_section, table2,
                                             table2_section)
from urnlib.reports.agreement_tables import PAPER_SENTENCES, differences, implementation_notes  # noqa: F401
from urnlib.reports.common import looks
from urnlib.reports.common import provenance as _provenance
from urnlib.reports.common import provenance_table
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat

CHAPTER = "agreement"
#: the heuristics stored with every run's data statistics, by the label the figure and tables give them
HEURISTICS = {"first noun": "first-noun heuristic", "nearest noun": "nearest-noun heuristic"}
FLAT = -0.02  # "does not drop": the fitted change from 0 attractors to the largest count is at least this


# --------------------------------------------------------------------------- reading runs
def best_row(run: Run) -> dict:
    """The history row of the run's best epoch (lowest test loss): what every figure, table and claim
    reads."""
    return run.history[int(np.argmin(run.column("test_loss")))]


def _stats(seeds: Seeds) -> list[dict]:
    """The data statistics of each seed (the runs of one source and seed share their data)."""
    return [run.final["data"] for run in seeds]


def by_attractors(seeds: Seeds, min_total: int = 1) -> dict[str, np.ndarray]:
    """Accuracy by number of attractors at each run's best epoch: mean over seeds, ``low``/``high`` mean ±
    sd, ``per_seed`` (:func:`urnlib.metrics.accuracy_by_count_seeds`; buckets every seed fills with
    ``min_total``)."""
    rows = [best_row(run) for run in seeds]
    return accuracy_by_count_seeds([(r["attr_correct"], r["attr_total"]) for r in rows], min_total)


def heuristic_by_attractors(seeds: Seeds, name: str, min_total: int = 1) -> dict[str, np.ndarray]:
    """The same for heuristic ``name`` (a key of :data:`HEURISTICS`) on the test sets of ``seeds``."""
    rows = [s["heuristics"][name] for s in _stats(seeds)]
    return accuracy_by_count_seeds([(r["attr_correct"], r["attr_total"]) for r in rows], min_total)


def _with_attractors(row: dict) -> float:
    """Accuracy over the test sentences with at least one attractor (NaN when there are none)."""
    total = sum(row["attr_total"][1:])
    return sum(row["attr_correct"][1:]) / total if total else float("nan")


def attractor_stat(seeds: Seeds) -> Stat:
    """A model's accuracy on the sentences with attractors, at each run's best epoch, over seeds."""
    return seeds.stat(lambda run: _with_attractors(best_row(run)))


def heuristic_stat(seeds: Seeds, name: str) -> Stat:
    """Heuristic ``name``'s accuracy on the sentences with attractors, over the seeds' test sets."""
    return Stat.of(_with_attractors(s["heuristics"][name]) for s in _stats(seeds))


def fall(acc: dict[str, np.ndarray]) -> Stat:
    """Per seed, the least-squares change of accuracy from 0 attractors to the largest count kept (the
    whole curve, not its noisiest bucket); NaN for a seed with fewer than 2 buckets."""
    counts = np.asarray(acc["count"], dtype=float)
    if len(counts) < 2:
        return Stat.of([float("nan")] * len(acc["per_seed"]))
    return Stat.of(np.polyfit(counts, row, 1)[0] * (counts[-1] - counts[0]) for row in acc["per_seed"])


def _majority(seeds: Seeds) -> Stat:
    """The share of the more frequent verb number in each seed's test set."""
    return Stat.of(max(s["test_plural_share"], 1 - s["test_plural_share"]) for s in _stats(seeds))


# --------------------------------------------------------------------------- Fig. 2 and its table
def series(runs: dict[str, Seeds], min_total: int = 1) -> dict[str, dict[str, np.ndarray]]:
    """Accuracy by attractors of every model of one source, then of the heuristics on its test sets."""
    out = {label: by_attractors(seeds, min_total) for label, seeds in runs.items()}
    first = next(iter(runs.values()))
    return out | {label: heuristic_by_attractors(first, name, min_total)
                  for name, label in HEURISTICS.items()}


def figure2(runs_by_source: dict[str, dict[str, Seeds]], min_total: int = 5):
    """Paper 000 Fig. 2: accuracy by number of attractors, TURN vs LSTM and the two heuristics, one panel per
    data source (mean over seeds, bars ± one sd; buckets with fewer than ``min_total`` test sentences on a
    seed are not drawn)."""
    panels = {source: (series(runs, min_total), _majority(next(iter(runs.values()))).mean)
              for source, runs in runs_by_source.items()}
    styles = {label: BASELINE for label in HEURISTICS.values()}  # the heuristics: reference lines
    for runs in runs_by_source.values():
        styles |= looks(runs)  # each model its spec's
    return attractor_panels_figure(panels, styles, min_total)


def attractor_tables(runs_by_source: dict[str, dict[str, Seeds]], min_total: int = 5
                     ) -> dict[str, pd.DataFrame]:
    """The numbers of :func:`figure2`, one table per source (a row per attractor count, a column per model
    and heuristic: narrow enough for the page): accuracy on all test sentences and per attractor count,
    mean ± sd over seeds; a count is shown where every seed has ``min_total`` sentences."""
    out = {}
    for source, runs in runs_by_source.items():
        first = next(iter(runs.values()))
        overall = {label: seeds.stat(lambda run: best_row(run)["accuracy"]) for label, seeds in runs.items()}
        overall |= {label: Stat.of(s["heuristics"][name]["accuracy"] for s in _stats(first))
                    for name, label in HEURISTICS.items()}
        columns = {}
        for label, acc in series(runs, min_total).items():
            columns[label] = {"all": overall[label].text(2)}
            columns[label] |= {int(k): Stat.of(acc["per_seed"][:, i]).text(2).split(" (")[0]
                               for i, k in enumerate(acc["count"])}
        table = pd.DataFrame(columns).fillna("")
        table.index.name = "attractors"
        out[source] = table
    return out


# --------------------------------------------------------------------------- data
def data_table(runs_by_source: dict[str, dict[str, Seeds]]) -> pd.DataFrame:
    """Examples per attractor count (training / test) of each data source, summed over the seeds' data."""
    rows = {}
    for source, runs in runs_by_source.items():
        for split in ("train", "test"):
            counts: dict[int, int] = {}
            for stats in _stats(next(iter(runs.values()))):
                for k, v in stats[f"{split}_attractors"].items():
                    counts[int(k)] = counts.get(int(k), 0) + v
            rows[(source, f"{split} (all seeds)")] = counts
    df = pd.DataFrame(rows).fillna(0).astype(int)  # a row per attractor count: narrow enough for the page
    df = df.loc[sorted(df.index)]
    df.index.name = "attractors"
    return df


def source_table(runs_by_source: dict[str, dict[str, Seeds]]) -> pd.DataFrame:
    """Size, vocabulary, majority baseline and best-epoch accuracy of every model on every source."""
    rows = []
    for source, runs in runs_by_source.items():
        for label, seeds in runs.items():
            stats = seeds[0].final["data"]
            rows.append({"source": source, "model": label, "seeds": len(seeds),
                         "train": stats["train_examples"], "test": stats["test_examples"],
                         "vocabulary": stats["vocabulary"],
                         "parameters": seeds[0].final["n_params"], "majority class": _majority(seeds).text(3),
                         "best epoch": seeds.stat(lambda run: 1 + int(np.argmin(run.column("test_loss")))
                                                  ).text(1),
                         "test accuracy": seeds.stat(lambda run: best_row(run)["accuracy"]).text(4)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- claims
def _cause(holds, miss: str) -> str | None:
    return "noise" if holds is None else miss


def baseline_stat(seeds: Seeds) -> Stat:
    """Per seed, the best of the majority class and the two heuristics on the test sentences with attractors:
    what a model must beat for its accuracy there to mean anything."""
    return Stat.of(np.nanmax([max(s["test_plural_share"], 1 - s["test_plural_share"]),
                              *(_with_attractors(s["heuristics"][name]) for name in HEURISTICS)])
                   for s in _stats(seeds))


def claims(runs_by_source: dict[str, dict[str, Seeds]], *, turn: str, analysis_source: str | None,
           min_total: int = 20, setting: str | None = None) -> list[Claim]:
    """The claims of one setting's runs, decided over the seeds by the rules of :mod:`urnlib.rules`, every run
    at its best epoch; with ``setting``, each statement starts with ``"[setting] "``. A flat curve means
    something only above the heuristics (the first-noun heuristic is flat too): the "does not drop" claim also
    needs the model to beat, on the sentences with attractors, the best of the majority class and the two
    heuristics (:func:`baseline_stat`); a decline is claimed only of a model off chance without attractors."""
    out = []
    for source, runs in runs_by_source.items():
        miss = "data" if source != "synthetic" else "open"  # real text: a far smaller stand-in for Wikipedia
        first = next(iter(runs.values()))
        base = baseline_stat(first)
        base_text = (f"best of majority class and heuristics {base.text()} ("
                     + "; ".join(f"{label} {heuristic_stat(first, name).text()}"
                                 for name, label in HEURISTICS.items()) + ")")
        if turn in runs:
            seeds = runs[turn]
            acc, mine = by_attractors(seeds, min_total), attractor_stat(seeds)
            change, above = fall(acc), rules.beats(mine, base)
            holds = rules.combine([rules.at_least(change, FLAT), above])[0]
            out.append(claim(
                CHAPTER, "paper 000 sec. 4, Fig. 2",
                f"{turn} accuracy does not drop as attractors increase, above the heuristics ({source} data)",
                "no drop up to 12 attractors", f"fitted change from 0 to {_last(acc)} attractors "
                f"{change.text()}; accuracy on sentences with attractors {mine.text()} vs {base_text}",
                f"change >= {FLAT} ({rules.THRESHOLD_RULE}), and on sentences with attractors better than "
                f"the majority class and both heuristics ({rules.BEATS_RULE}); buckets with >= {min_total} "
                "sentences on every seed", holds, seeds=len(seeds), cause=_cause(holds, miss)))
            error = seeds.stat(lambda run: 1 - best_row(run)["accuracy"])
            holds = rules.at_most(error, 0.01)
            out.append(claim(CHAPTER, "paper 000 sec. 4", f"{turn} error rate well under 1% ({source} data)",
                             "< 1%", f"{error.text(4)} (best epoch)",
                             f"test error <= 0.01 ({rules.THRESHOLD_RULE})", holds, seeds=len(seeds),
                             cause=_cause(holds, miss)))
            out.append(claim(
                CHAPTER, "paper 000 sec. 4 (after Linzen et al. 2016)",
                f"{turn} does not rely on the linear order of nouns: on sentences with attractors it beats "
                f"the first-noun and nearest-noun heuristics ({source} data)",
                "agreement needs syntactic structure, not the nouns' order",
                f"{turn} {mine.text()}; {base_text}",
                f"better than the majority class and both heuristics ({rules.BEATS_RULE})", above,
                seeds=len(seeds), cause=_cause(above, miss)))
        if "LSTM" in runs:
            acc = by_attractors(runs["LSTM"], min_total)
            at_zero = Stat.of(acc["per_seed"][:, 0] if len(acc["count"]) and acc["count"][0] == 0 else [])
            chance = _majority(first)
            learnt = rules.off_chance(chance.mean + chance.sd, at_zero)
            change = fall(acc)
            holds = rules.at_most(change, FLAT) if learnt else None
            out.append(claim(CHAPTER, "paper 000 Fig. 2 (Linzen et al. 2016)",
                             f"the LSTM's accuracy declines as attractors increase ({source} data)",
                             "declines (reported up to 4 attractors)",
                             f"fitted change from 0 to {_last(acc)} attractors {change.text()}; accuracy "
                             f"without attractors {at_zero.text()} (majority class {chance.text()})",
                             f"change <= {FLAT} ({rules.THRESHOLD_RULE}; buckets with >= {min_total} "
                             f"sentences on every seed); only where accuracy without attractors is off "
                             f"chance ({rules.CHANCE_RULE})", holds, seeds=len(runs["LSTM"]),
                             # the paper's curve is Linzen et al.'s, on Wikipedia
                             cause=_cause(holds, "data") if learnt else "open"))
    if analysis_source is not None and turn in runs_by_source.get(analysis_source, {}):
        out += analysis_claims(runs_by_source[analysis_source][turn], analysis_source, CHAPTER)
    return [replace(c, statement=f"[{setting}] {c.statement}") for c in out] if setting else out


def settings(config) -> dict[str, str]:
    """``{setting: what it is}`` of the settings the chapter trains (:meth:`AgreementRuns.views`)."""
    out = {config.setting: "Adam's learning rate as paper 000 sec. 4 prints it"}
    if config.code_setting:
        out[config.code_setting] = "the authors' code: Adam() at its default rate"
    return out


def chapter_claims(runs, config) -> list[Claim]:
    """The claims under each setting the runs were trained in (statements prefixed with the setting when
    there are two), Tables 1-2's on the main setting's k-TURN only; a claim missed under one setting and
    reproduced under the other gets the cause ``setting`` (:func:`urnlib.claims.across_settings`)."""
    views = runs.views(config)
    by_setting = {name: claims(view, turn=config.turn, min_total=config.min_total,
                               analysis_source=(config.analysis_source or None) if name == config.setting
                               else None, setting=name if len(views) > 1 else None)
                  for name, view in views.items()}
    return across_settings(by_setting)


def _last(acc: dict[str, np.ndarray]) -> str:
    return str(int(acc["count"][-1])) if len(acc["count"]) else "?"


def findings(runs_by_source: dict[str, dict[str, Seeds]]) -> str:
    """What the runs show, in sentences written from their numbers (Markdown): best-epoch accuracy against the
    majority class and the heuristics, the gap between training and test loss, the size of the data."""
    lines = []
    for source, runs in runs_by_source.items():
        first = next(iter(runs.values()))
        stats = first[0].final["data"]
        models = []
        for label, seeds in runs.items():
            gap = seeds.stat(lambda run: best_row(run)["test_loss"] / max(best_row(run)["train_loss"], 1e-12))
            note = f"; its test loss is {gap.mean:.0f} times its training loss" if gap.mean >= 3 else ""
            acc = seeds.stat(lambda run: best_row(run)["accuracy"])
            models.append(f"{label} {acc.text()} ({seeds[0].final['n_params']:,} parameters{note})")
        heur = ", ".join(f"{label} {heuristic_stat(first, name).text()}"
                         for name, label in HEURISTICS.items())
        size = stats["train_examples"]
        scale = (f" The paper trained on about {PAPER_SENTENCES * 0.9 / size:,.0f} times as many sentences."
                 if source != "synthetic" and size < PAPER_SENTENCES * 0.9 / 2 else "")
        lines.append(f"* **{source}**: {size:,} training sentences (first seed), vocabulary "
                     f"{stats['vocabulary']:,}; test accuracy at the best epoch {', '.join(models)}; "
                     f"majority class {_majority(first).text()}. On the sentences with attractors: "
                     f"{', '.join(f'{label} {attractor_stat(s).text()}' for label, s in runs.items())}; "
                     f"{heur}.{scale}")
    return "\n".join(lines)


def vocabulary_table(runs_by_source: dict[str, dict[str, Seeds]], variants: dict[str, Seeds],
                     turn: str) -> pd.DataFrame:
    """The k-TURN on real text with the chapter's vocabulary and with a smaller one (``variants``: source ->
    its seeds), at the best epoch, over seeds: how much of its result is the size of its embedding table."""
    rows = []
    for source, small in variants.items():
        for seeds in (runs_by_source[source][turn], small):
            f = seeds[0].final
            rows.append({"source": source, "vocabulary": f["data"]["vocabulary"], "parameters": f["n_params"],
                         "test accuracy": seeds.stat(lambda run: best_row(run)["accuracy"]).text(4),
                         "training loss": seeds.stat(lambda run: best_row(run)["train_loss"]).text(3),
                         "test loss": seeds.best("test_loss").text(3)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- what the page shows
def provenance(runs) -> list:
    """:func:`urnlib.reports.common.provenance` of every run, with each run's source (names repeat)."""
    listed = runs.listed()
    table = provenance_table([run for _, run in listed])
    table.insert(0, "source", [source for source, _ in listed])
    return _provenance([run for _, run in listed])[:-1] + [table.style.hide(axis="index")]


def data_section(runs) -> list:
    """Examples per attractor count of each source; each model's size and overall result."""
    formats = {"train": "{:,}", "test": "{:,}", "vocabulary": "{:,}", "parameters": "{:,}"}
    return [data_table(runs.by_source), source_table(runs.by_source).style.hide(axis="index").format(formats)]


def _note(text: str) -> list:
    from IPython.display import Markdown

    return [Markdown(f"*{text}*")]


def vocabulary_section(runs, turn: str | None) -> list:
    """The k-TURN on real text with the chapter's vocabulary and with ``small_vocab`` words."""
    if not runs.variants:
        return _note("No real-text source, no TURN among the models, or `small_vocab=0`: skipped.")
    formats = {"vocabulary": "{:,}", "parameters": "{:,}"}
    return [vocabulary_table(runs.by_source, runs.variants, turn).style.hide(axis="index").format(formats)]


def learning_rate_section(runs, config, claims: list[Claim]) -> list:
    """The models at the second setting's learning rate (the authors' code's): Fig. 2 and its tables, and
    the verdicts under each setting (``claims``: :func:`chapter_claims`); a note when it was not trained."""
    from IPython.display import Markdown

    if not (config.code_setting and runs.code_lr):
        return _note("Only the chapter's learning rate was trained (`code_lr=0`): no second setting.")
    out = [figure2(runs.code_lr, config.min_total),
           Markdown(f"Accuracy by number of attractors at **{config.code_setting}**, drawn like Fig. 2 "
                    "above (means over seeds at each run's best epoch, bars ± one standard deviation; the "
                    "dash-dotted line is the majority class), and its numbers:")]
    for source, table in attractor_tables(runs.code_lr, config.min_total).items():
        out += [Markdown(f"*{source}*"), table]
    summary = setting_summary(claims, settings(config))
    return [*out, Markdown("The claims under each setting (each claim's row in the table at the end starts "
                           f"with its setting):\n\n{summary}")]
