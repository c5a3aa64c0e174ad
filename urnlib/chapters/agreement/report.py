"""Figures, tables and claims of the agreement chapter (paper 000 sec. 4), drawn from stored runs.

Fig. 2 (accuracy by attractors, TURN vs LSTM, one panel per data source, with the first-noun and nearest-noun
heuristics beside them), the same numbers as a table, and the claims; Tables 1-2 and the phrase effects are in
:mod:`urnlib.chapters.agreement.report_tables`. ``runs`` is what
:func:`urnlib.chapters.agreement.experiment.run` returns (``runs.by_source[source][label]`` and
``runs.variants[source]``, each the :class:`~urnlib.seeds.Seeds` of one model). Figures and tables read every
run at its best epoch (lowest validation loss) and give the mean ± one standard deviation over seeds; the
claims (:mod:`urnlib.chapters.agreement.claims`) read the paper's final epoch, 10, behind a training guard,
and are decided by :mod:`urnlib.rules` over the seeds. The heuristics are scored on each seed's test set
(stored with the run's data statistics). The paper's numbers are constants, with their source; ours always
come from the runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from urnlib.claims import Claim, setting_summary
from urnlib.plots.attractors import attractor_panels_figure
from urnlib.plots.curves import BASELINE
from urnlib.chapters.agreement.report_tables import (PAPER_TABLE1, PAPER_TABLE2, PAPER_TABLE2_WORDS,  # noqa: F401
                                             PAPER_THRESHOLD, RELEVANT_TAGS, analysis_claims, embeddings,
                                             frequent_noun_pairs, main_tags, number_groups, paper_table2,
                                             phrase_section, phrase_table, table1, table1_section, table2,
                                             table2_section)
from urnlib.chapters.agreement.report_tables import PAPER_SENTENCES, differences, implementation_notes  # noqa: F401
from urnlib.chapters.agreement.claims import (CHAPTER, HEURISTICS, PAPER_EPOCHS, QUOTES,  # noqa: F401
                                             FIRST_EXACT, majority, data_stats, with_attractors, at_epoch,
                                             SELECTED, attractor_stat, baseline_stat, best_index, best_row,
                                             by_attractors,
                                             chapter_claims, claims, fall, heuristic_by_attractors,
                                             heuristic_stat, settings, untrained)
from urnlib.chapters.agreement.report_linzen import figure_marks
from urnlib.chapters.agreement.report_majority import majority_by_attractors
from urnlib.reports.common import looks, unbroken
from urnlib.reports.common import provenance as _provenance
from urnlib.reports.common import provenance_table
from urnlib.seeds import Seeds, Stat

# --------------------------------------------------------------------------- Fig. 2 and its table
#: the column of :func:`attractor_tables` that gives the majority answer's accuracy (per bucket: its own)
MAJORITY = "majority answer"


def series(runs: dict[str, Seeds], min_total: int = 1) -> dict[str, dict[str, np.ndarray]]:
    """Accuracy by attractors of every model of one source, then of the heuristics on its test sets."""
    out = {label: by_attractors(seeds, min_total) for label, seeds in runs.items()}
    first = next(iter(runs.values()))
    return out | {label: heuristic_by_attractors(first, name, min_total)
                  for name, label in HEURISTICS.items()}


def figure2(runs_by_source: dict[str, dict[str, Seeds]], min_total: int = 5):
    """Paper 000 Fig. 2: accuracy by number of attractors, TURN vs LSTM and the two heuristics, one panel per
    data source (mean over seeds, bars ± one sd; buckets with fewer than ``min_total`` test sentences on a
    seed are not drawn), with the majority answer of each bucket read from the seeds' test sentences
    (:func:`~urnlib.chapters.agreement.report_majority.majority_by_attractors`)."""
    panels = {source: (series(runs, min_total), majority_by_attractors(next(iter(runs.values())), min_total))
              for source, runs in runs_by_source.items()}
    styles = {label: BASELINE for label in HEURISTICS.values()}  # the heuristics: reference lines
    for runs in runs_by_source.values():
        styles |= looks(runs)  # each model its spec's
    notes, reference = figure_marks(runs_by_source)
    return attractor_panels_figure(panels, styles, notes=notes, reference=reference)


def attractor_tables(runs_by_source: dict[str, dict[str, Seeds]], min_total: int = 5
                     ) -> dict[str, pd.DataFrame]:
    """The numbers of :func:`figure2`, one table per source (a row per attractor count, a column per model
    and heuristic, and the majority answer: narrow enough for the page): accuracy on all test sentences and
    per attractor count, mean ± sd over seeds; a count is shown where every seed has ``min_total``
    sentences."""
    out = {}
    for source, runs in runs_by_source.items():
        first = next(iter(runs.values()))
        overall = {label: seeds.stat(lambda run: best_row(run)["accuracy"]) for label, seeds in runs.items()}
        overall |= {label: Stat.of(s["heuristics"][name]["accuracy"] for s in data_stats(first))
                    for name, label in HEURISTICS.items()}
        overall[MAJORITY] = majority(first)
        columns = {}
        kept = series(runs, min_total) | {MAJORITY: majority_by_attractors(first, min_total)}
        for label, acc in kept.items():
            columns[label] = {"all": unbroken(overall[label].text(2))}
            columns[label] |= {int(k): unbroken(Stat.of(acc["per_seed"][:, i]).text(2).split(" (")[0])
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
            for stats in data_stats(next(iter(runs.values()))):
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
                         "parameters": seeds[0].final["n_params"], "majority class": majority(seeds).text(3),
                         "best epoch": seeds.stat(lambda run: 1 + best_index(run)).text(1),
                         "test accuracy": seeds.stat(lambda run: best_row(run)["accuracy"]).text(4)})
    return pd.DataFrame(rows)


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
                     f"majority class {majority(first).text()}. On the sentences with attractors: "
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


def side_by_side(table: pd.DataFrame, parts: int = 2) -> pd.DataFrame:
    """``table``'s rows in ``parts`` blocks side by side, read down the first block, then the next: a long,
    narrow table in a fraction of its height. Each block keeps the columns' names; a float is written with 2
    decimals and a missing value as an empty cell (as :func:`table1_section` shows them), and the last block
    is padded with empty cells."""
    text = table.copy()
    for column in text.columns:
        if pd.api.types.is_float_dtype(text[column]):
            text[column] = ["" if pd.isna(v) else f"{v:.2f}" for v in text[column]]
    size = -(-len(text) // parts)
    blocks = [text.iloc[i * size:(i + 1) * size].reset_index(drop=True) for i in range(parts)]
    return pd.concat(blocks, axis=1).fillna("")


def table1_blocks(runs, analysis_source: str | None, turn: str | None) -> list:
    """:func:`table1_section` with its table of 42 tokens in two blocks side by side (:func:`side_by_side`),
    so that it takes half the page's height; a note as it is."""
    return [side_by_side(item.data).style.hide(axis="index") if isinstance(getattr(item, "data", None),
                                                                           pd.DataFrame) else item
            for item in table1_section(runs, analysis_source, turn)]


def phrase_found(section: list, turn: str | None) -> str:
    """What the phrase table of :func:`phrase_section` (``section``) shows, in one sentence written from it
    (Markdown; "" without a table): how many of its phrases of several words have a smaller effect than the
    sum of their words' effects (words that partly undo each other), and which."""
    tables = [item.data for item in section if isinstance(getattr(item, "data", None), pd.DataFrame)]
    if not tables:
        return ""
    table = tables[0].dropna(subset=["effect", "sum of word effects"])
    several = table[table["phrase"].str.split().str.len() > 1]
    smaller = several[several["effect"] < several["sum of word effects"]]
    named = ", ".join(f'"{phrase}" ({effect:.2f} against {total:.2f})' for phrase, effect, total in zip(
        smaller["phrase"], smaller["effect"], smaller["sum of word effects"]))
    larger = int((several["effect"] > several["sum of word effects"]).sum())
    return (f"In our {turn}, {len(smaller)} of the {len(several)} phrases of several words "
            f"{'has' if len(smaller) == 1 else 'have'} a smaller effect than the sum of their words' effects"
            + (f" ({named})" if named else "") + f" and {larger} a larger one.")


# --------------------------------------------------------------------------- what the page shows
def provenance(runs) -> list:
    """:func:`urnlib.reports.common.provenance` of every run, with each run's source (names repeat)."""
    listed = runs.listed()
    table = provenance_table([run for _, run in listed])
    table.insert(0, "source", [source for source, _ in listed])
    return _provenance([run for _, run in listed], table)


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


def learning_rate_section(runs, config, decided: list[Claim]) -> list:
    """The models at the second setting's learning rate (the authors' code's): Fig. 2 and its tables, and
    the verdicts under each setting (``decided``: :func:`chapter_claims`); a note when it was not trained."""
    from IPython.display import Markdown

    if not (config.code_setting and runs.code_lr):
        return _note("Only the chapter's learning rate was trained (`code_lr=0`): no second setting.")
    out = [figure2(runs.code_lr, config.min_total),
           Markdown(f"Accuracy by number of attractors at **{config.code_setting}**, drawn like Fig. 2 "
                    "above (means over seeds at each run's best epoch, bars ± one standard deviation; the "
                    "dash-dotted steps are the majority answer of each bucket), and its numbers:")]
    for source, table in attractor_tables(runs.code_lr, config.min_total).items():
        out += [Markdown(f"*{source}*"), table]
    summary = setting_summary(decided, settings(config))
    return [*out, Markdown("The claims under each setting (each claim's row in the table at the end starts "
                           f"with its setting):\n\n{summary}")]
