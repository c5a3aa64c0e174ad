"""Figures, tables and claims of the agreement chapter (paper 000 sec. 4), drawn from stored runs.

Fig. 2 (accuracy by attractors, TURN vs LSTM, one panel per data source), Table 1 (average effect
``||Q - I||^2`` of the most frequent tokens), Table 2 (distances between frequent nouns and their
plurals) and the effects of composed phrases (computed in :mod:`urnlib.reports.agreement_tables`). The
paper's numbers are constants, with their source; ours always come from the runs. ``runs`` is what
:func:`urnlib.experiments.agreement.run` returns (``runs.by_source[source][label]``,
``runs.variants[source]``); the ``*_section`` functions return what the page displays, in order
(``display(*report.table1_section(...))``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from urnlib.claims import Claim, claim
from urnlib.metrics import accuracy_by_count
from urnlib.models.unitary import skew_size
from urnlib.plots.agreement import attractor_panels_figure
from urnlib.reports.agreement_tables import (PAPER_TABLE1, PAPER_TABLE2, PAPER_TABLE2_WORDS,  # noqa: F401
                                             PAPER_THRESHOLD, RELEVANT_TAGS, embeddings, frequent_noun_pairs,
                                             main_tags, number_groups, paper_table2, phrase_table, table1,
                                             table2)
from urnlib.reports.common import provenance as _provenance
from urnlib.reports.common import provenance_table
from urnlib.results import Run

CHAPTER = "agreement"

# --------------------------------------------------------------------------- data and Fig. 2
def data_table(runs_by_source: dict[str, dict[str, Run]]) -> pd.DataFrame:
    """Examples per attractor count (training / test) of each data source, from the stored runs."""
    rows = {}
    for source, runs in runs_by_source.items():
        stats = next(iter(runs.values())).final["data"]
        for split in ("train", "test"):
            rows[(source, split)] = {int(k): v for k, v in stats[f"{split}_attractors"].items()}
    df = pd.DataFrame(rows).T.fillna(0).astype(int)
    df = df[sorted(df.columns)]
    df.columns.name = "attractors"
    return df


def source_table(runs_by_source: dict[str, dict[str, Run]]) -> pd.DataFrame:
    """Size, vocabulary, majority baseline and final accuracy of every model on every source."""
    rows = []
    for source, runs in runs_by_source.items():
        for label, run in runs.items():
            stats = run.final["data"]
            rows.append({"source": source, "model": label, "train": stats["train_examples"],
                         "test": stats["test_examples"], "vocabulary": stats["vocabulary"],
                         "parameters": run.final["n_params"],
                         "majority class": max(stats["test_plural_share"], 1 - stats["test_plural_share"]),
                         "test accuracy": run.final["accuracy"], "test error": 1 - run.final["accuracy"]})
    return pd.DataFrame(rows)


def attractor_accuracy(run: Run, min_total: int = 1) -> dict[str, np.ndarray]:
    """Accuracy by number of attractors after the last epoch, with Wilson 95% intervals."""
    return accuracy_by_count(run.final["attr_correct"], run.final["attr_total"], min_total)


def _majority(runs: dict[str, Run]) -> float:
    """The share of the more frequent verb number in the test set of a source (its runs share the data)."""
    stats = next(iter(runs.values())).final["data"]
    return max(stats["test_plural_share"], 1 - stats["test_plural_share"])


def figure2(runs_by_source: dict[str, dict[str, Run]], min_total: int = 5):
    """Paper 000 Fig. 2: accuracy by number of attractors, TURN vs LSTM, one panel per data source.

    Buckets with fewer than ``min_total`` test sentences are not drawn.
    """
    panels = {source: ({label: attractor_accuracy(run, min_total) for label, run in runs.items()},
                       _majority(runs))
              for source, runs in runs_by_source.items()}
    return attractor_panels_figure(panels, min_total)


# --------------------------------------------------------------------------- claims
def _flat(run: Run, min_total: int, margin: float = 0.05) -> tuple[bool | None, str]:
    """"No drop with attractors", decided three ways from Wilson 95% intervals:

    * a drop is detected (some bucket's upper bound below the 0-attractor lower bound): ``False``;
    * a drop larger than ``margin`` is excluded (every bucket's lower bound within ``margin`` of the
      0-attractor accuracy): ``True``;
    * neither (too few sentences per bucket to tell): ``None``, not testable with this data.
    """
    s = attractor_accuracy(run, min_total)
    if len(s["count"]) < 2 or s["count"][0] != 0:
        return None, f"fewer than 2 buckets with >= {min_total} sentences"
    worst = int(np.argmin(s["accuracy"]))
    text = (f"accuracy {s['accuracy'][0]:.3f} at 0 attractors, lowest {s['accuracy'][worst]:.3f} at "
            f"{s['count'][worst]} (buckets 0-{s['count'][-1]} with >= {min_total} sentences)")
    if np.any(s["high"][1:] < s["low"][0]):
        return False, text + "; a drop is detected"
    if np.all(s["low"][1:] >= s["accuracy"][0] - margin):
        return True, text
    return None, text + f"; intervals too wide to exclude a drop of {margin:.0%}"


def _falls(run: Run, min_total: int) -> tuple[bool, str]:
    """A fall: the bucket with the most attractors lies below the 0-attractor bucket, intervals disjoint."""
    s = attractor_accuracy(run, min_total)
    if len(s["count"]) < 2:
        return False, "too few buckets"
    ok = bool(s["high"][-1] < s["low"][0])
    return ok, f"{s['accuracy'][0]:.3f} at 0 attractors, {s['accuracy'][-1]:.3f} at {s['count'][-1]}"


def claims(runs_by_source: dict[str, dict[str, Run]], *, turn: str, analysis_source: str | None,
           min_total: int = 20) -> list[Claim]:
    """The chapter's claims, decided by rules fixed before the runs were looked at."""
    out = []
    for source, runs in runs_by_source.items():
        if turn in runs:
            ok, text = _flat(runs[turn], min_total)
            out.append(claim(CHAPTER, "paper 000 sec. 4, Fig. 2",
                             f"{turn} accuracy does not drop as attractors increase ({source} data)",
                             "no drop up to 12 attractors", text,
                             "drop detected (a bucket's 95% interval entirely below the 0-attractor one): "
                             "no; every bucket's lower bound within 5 points of the 0-attractor accuracy: "
                             "yes; "
                             f"else not testable (buckets >= {min_total} sentences)", ok))
            error = 1 - runs[turn].final["accuracy"]
            out.append(claim(CHAPTER, "paper 000 sec. 4", f"{turn} error rate well under 1% ({source} data)",
                             "< 1%", f"{error:.2%}", "overall test error < 1%", error < 0.01))
        if "LSTM" in runs:
            ok, text = _falls(runs["LSTM"], min_total)
            out.append(claim(CHAPTER, "paper 000 Fig. 2 (Linzen et al. 2016)",
                             f"the LSTM's accuracy declines as attractors increase ({source} data)",
                             "declines (reported up to 4 attractors)", text,
                             "most-attractor bucket's interval entirely below the 0-attractor one", ok))
    if analysis_source is not None and turn in runs_by_source.get(analysis_source, {}):
        run = runs_by_source[analysis_source][turn]
        t1 = table1(run)
        relevant = t1["main tag"].isin(RELEVANT_TAGS)
        med_rel, med_other = t1["effect (ours)"][relevant].median(), t1["effect (ours)"][~relevant].median()
        out.append(claim(CHAPTER, "paper 000 sec. 4.1, Table 1",
                         "task-relevant tokens (verbs, relative pronouns) have larger effects "
                         f"({analysis_source})",
                         "verbs and relative pronouns at the top, the dot and 'not' near the bottom",
                         f"median effect {med_rel:.2f} ({int(relevant.sum())} verb/WH tokens) vs "
                         f"{med_other:.2f} (other {int((~relevant).sum())})",
                         "median effect of verb/MD/WDT/WP tokens > median of the rest, among the top 42",
                         bool(med_rel > med_other)))
        both = t1.dropna()
        rho = (float(both["effect (ours)"].rank().corr(both["effect (paper)"].rank())) if len(both) > 2
               else np.nan)
        out.append(claim(CHAPTER, "paper 000 Table 1", f"the order of the effects ({analysis_source})",
                         "the printed order", f"Spearman rho {rho:.2f} over {len(both)} shared tokens",
                         "rank correlation with the paper's effects > 0.5",
                         None if np.isnan(rho) else rho > 0.5))
        pairs = frequent_noun_pairs(run)
        if len(pairs) >= 2:
            g = number_groups(table2(run, pairs))
            right = np.mean(np.concatenate([g["same"] <= PAPER_THRESHOLD, g["different"] >= PAPER_THRESHOLD]))
            out.append(claim(CHAPTER, "paper 000 sec. 4.1, Table 2",
                             "nouns of the same number are closer than nouns of different number "
                             f"({analysis_source})",
                             "same number <= 7.5, different number >= 7.5",
                             f"mean {g['same'].mean():.2f} (same) vs {g['different'].mean():.2f} "
                             f"(different); {right:.0%} of pairs on the paper's side of 7.5",
                             "mean same-number distance < mean different-number distance",
                             bool(g["same"].mean() < g["different"].mean())))
    return out


PAPER_SENTENCES = 1_700_000  # paper 000 sec. 4: "1.7 million sentences ... extracted from Wikipedia"


def findings(runs_by_source: dict[str, dict[str, Run]]) -> str:
    """What the runs show, in sentences written from their numbers (Markdown): accuracy against the majority
    class, the gap between training and test loss, and the size of the data against the paper's."""
    lines = []
    for source, runs in runs_by_source.items():
        stats = next(iter(runs.values())).final["data"]
        majority = _majority(runs)
        models = []
        for label, run in runs.items():
            f = run.final
            gap = f["test_loss"] / max(f["train_loss"], 1e-12)
            note = f"; its test loss is {gap:.0f} times its training loss" if gap >= 3 else ""
            models.append(f"{label} {f['accuracy']:.1%} ({f['n_params']:,} parameters{note})")
        size = stats["train_examples"]
        scale = (f" The paper trained on about {PAPER_SENTENCES * 0.9 / size:,.0f} times as many sentences."
                 if source != "synthetic" and size < PAPER_SENTENCES * 0.9 / 2 else "")
        lines.append(f"* **{source}**: {size:,} training sentences, vocabulary {stats['vocabulary']:,}; "
                     f"test accuracy {', '.join(models)}; majority class {majority:.1%}.{scale}")
    return "\n".join(lines)


def vocabulary_table(runs_by_source: dict[str, dict[str, Run]], variants: dict[str, Run],
                     turn: str) -> pd.DataFrame:
    """The k-TURN on real text with the chapter's vocabulary and with a smaller one (``variants``: source ->
    run): how much of its result is the size of its embedding table."""
    rows = []
    for source, small in variants.items():
        for run in (runs_by_source[source][turn], small):
            f = run.final
            rows.append({"source": source, "vocabulary": f["data"]["vocabulary"], "parameters": f["n_params"],
                         "test accuracy": f["accuracy"], "best epoch's accuracy": max(run.column("accuracy")),
                         "training loss": f["train_loss"], "test loss": f["test_loss"]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- what the page shows
def provenance(runs) -> list:
    """:func:`urnlib.reports.common.provenance` of every run, with each run's source (labels repeat)."""
    listed = runs.listed()
    table = provenance_table([run for _, run in listed])
    table.insert(0, "source", [source for source, _ in listed])
    return _provenance([run for _, run in listed])[:-1] + [table.style.hide(axis="index")]


def data_section(runs) -> list:
    """Examples per attractor count of each source; each model's size and overall result."""
    formats = {"train": "{:,}", "test": "{:,}", "vocabulary": "{:,}", "parameters": "{:,}",
               "majority class": "{:.1%}", "test accuracy": "{:.4f}", "test error": "{:.2%}"}
    return [data_table(runs.by_source), source_table(runs.by_source).style.hide(axis="index").format(formats)]


def _analysed(runs, analysis_source: str | None, turn: str | None) -> Run | None:
    return runs.by_source.get(analysis_source or "", {}).get(turn) if turn else None


def _note(text: str) -> list:
    from IPython.display import Markdown

    return [Markdown(f"*{text}*")]


def vocabulary_section(runs, turn: str | None) -> list:
    """The k-TURN on real text with the chapter's vocabulary and with ``small_vocab`` words."""
    if not runs.variants:
        return _note("No real-text source, no TURN among the models, or `small_vocab=0`: skipped.")
    formats = {"vocabulary": "{:,}", "parameters": "{:,}", "test accuracy": "{:.4f}",
               "best epoch's accuracy": "{:.4f}", "training loss": "{:.3f}", "test loss": "{:.3f}"}
    return [vocabulary_table(runs.by_source, runs.variants, turn).style.hide(axis="index").format(formats)]


def table1_section(runs, analysis_source: str | None, turn: str | None) -> list:
    run = _analysed(runs, analysis_source, turn)
    if run is None:
        return _note("No analysis source or no TURN among the models: Table 1 is skipped.")
    formats = {"effect (ours)": "{:.2f}", "effect (paper)": "{:.2f}"}
    return [table1(run).style.hide(axis="index").format(formats, na_rep="")]


def table2_section(runs, analysis_source: str | None, turn: str | None) -> list:
    """Ours (when the stored words hold at least 2 noun/plural pairs), then the paper's."""
    from IPython.display import Markdown

    run, out = _analysed(runs, analysis_source, turn), []
    pairs = frequent_noun_pairs(run) if run is not None else []
    if run is not None and len(pairs) < 2:
        out = _note(f"Only {len(pairs)} noun/plural pair(s) among the {len(run.final['head_words'])} stored "
                    "words: no table at this scale.")
    elif run is not None:
        t2 = table2(run, pairs)
        groups = number_groups(t2)
        out = [Markdown(f"**Ours** ({analysis_source}, {turn}):"),
               t2.style.format("{:.2f}").background_gradient(cmap="Blues_r", axis=None),
               Markdown(f"Mean distance: same number {groups['same'].mean():.2f}, different number "
                        f"{groups['different'].mean():.2f}.")]
    return out + [Markdown("**Paper 000 Table 2** (Wikipedia):"),
                  paper_table2().style.format("{:.2f}").background_gradient(cmap="Blues_r", axis=None)]


def phrase_section(runs, analysis_source: str | None, turn: str | None, phrases: list[str]) -> list:
    run = _analysed(runs, analysis_source, turn)
    if run is None:
        return _note("No analysis source or no TURN among the models: the phrases are skipped.")
    formats = {"effect": "{:.2f}", "sum of word effects": "{:.2f}"}
    return [phrase_table(run, phrases).style.hide(axis="index").format(formats, na_rep="-")]


def _urn_terms(spec: dict) -> tuple[int, str]:
    """``l`` of a k-TURN spec, and the sum it is, ``"49 + 48 + 47"``."""
    n, k = spec["n"], spec["k"]
    return skew_size(n, k), " + ".join(str(n - 1 - i) for i in range(k if k is not None else n - 1))


def _data_size(real: dict[str, dict[str, Run]], turn: str | None) -> str:
    stats = {s: next(iter(r.values())).final["data"] for s, r in real.items()}
    sentences = " and ".join(f"{st['train_examples']:,} ({s})" for s, st in stats.items())
    many = sum(v for st in stats.values() for k, v in st["train_attractors"].items() if int(k) > 3)
    text = (f"* **Data size.** Real text reachable here yields {sentences} training sentences, not "
            f"{PAPER_SENTENCES / 1e6:.1f} million, {many:,} of them with more than 3 attractors.")
    source, by_label = next(iter(real.items()))
    if turn in by_label:
        per_word = _urn_terms(by_label[turn].params["model"])[0]
        words = by_label[turn].final["data"]["vocabulary"]
        text += (f" A {turn} has $l = {per_word}$ parameters per word: with the {words:,} tokens of the "
                 f"{source} vocabulary that is {per_word * words:,} parameters, most of them for words seen "
                 "a handful of times")
        if "LSTM" in by_label:
            size = by_label["LSTM"].params["model"]["embedding_size"]
            far = "far " if per_word >= 2 * size else ""
            text += f"; the LSTM's {size} per word make it {far}smaller"
        text += "."
    return text + (" A training loss far below the test loss is the mark of a model memorising its sentences "
                   "rather than learning the rule. Run the paper's own file (see the top of this page) to "
                   "test the claims at their scale.\n")


def differences(runs, turn: str | None) -> str:
    """What separates these runs from the paper's (Markdown bullets), with the numbers of the runs."""
    real = {s: by_label for s, by_label in runs.by_source.items() if s != "synthetic"}
    return (_data_size(real, turn) if real else "") + (
        "* **The synthetic grammar is easier than English in one way**: its subject is always the "
        "sentence's first noun, so remembering that noun's number solves it. A model that fails on it fails "
        "to *keep* the number across attractors and length (a sentence with 12 attractors is longer than "
        "any training sentence); a model that succeeds has not shown that it finds subjects.\n"
        "* **The paper's LSTM curve is Linzen et al.'s**, trained on their data; ours is the same "
        "architecture trained here, on each source, with the paper's optimiser settings.")


def implementation_notes(runs, turn: str | None) -> str:
    """The models and the optimiser as the runs used them (Markdown bullets)."""
    first = {label: run for by_label in runs.by_source.values() for label, run in by_label.items()}
    models = ["* **The classifier** is the language model of the other chapters with a readout of 2 "
              "classes read at the last word before the verb; every other position carries no loss."]
    if turn in first:
        spec = first[turn].params["model"]
        per_word, terms = _urn_terms(spec)
        models.append(f"The {turn} has $l = {terms} = {per_word}$ parameters per word, "
                      f"dropout {spec['dropout']} on its parameters (one mask per batch), its state and its "
                      "output.")
    if "LSTM" in first:
        spec = first["LSTM"].params["model"]
        models.append(f"**The LSTM** ({spec['n']} units, embedding {spec['embedding_size']}; Linzen et al.: "
                      f"50 and 50) has one bias per gate and dropout {spec['dropout']}.")
    train = next(iter(first.values())).params["train"]
    return "\n".join([
        " ".join(models),
        "* **Vocabulary**: the `vocab_size` most frequent words of the training sentences; every other word "
        "is replaced by its POS tag (paper 000 sec. 4). Training computes the matrices of only the words a "
        "batch reads.",
        "* **Real text** is split by a seeded shuffle of its sentences (two verbs of one sentence stay on "
        "one side). The offline builder keeps sentences of at most 50 tokens and every present-tense verb "
        "(VBZ/VBP) whose subject is a common noun (NN/NNS), coordinated subjects excluded.",
        f"* **Adam, learning rate {train['lr']}, batch {train['batch_size']}, {train['epochs']} epochs** "
        "(paper 000 sec. 4: learning rate 0.01, 10 epochs; reference-facts: batch 512)."])
