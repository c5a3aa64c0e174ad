"""Tables of the agreement chapter read from a k-TURN's word embeddings (paper 000 sec. 4.1, Tables 1-2,
and the effects of composed phrases), from the generators a stored run keeps of its most frequent words,
and their claims over seeds. The page shows the tables of the first seed's run; the claims read every seed.
The paper's numbers are constants here, with their source. Also the chapter's notes on what separates its runs
from the paper's (:func:`differences`, :func:`implementation_notes`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from urnlib import analysis, rules
from urnlib.claims import Claim
from urnlib.declare import Measured, Spec, evaluate
from urnlib.models import URN
from urnlib.models.unitary import skew_size
from urnlib.results import Run
from urnlib.rules import Decision
from urnlib.seeds import Seeds, Stat

__all__ = ["PAPER_TABLE1", "PAPER_TABLE2_WORDS", "PAPER_TABLE2", "PAPER_THRESHOLD", "RELEVANT_TAGS",
           "embeddings", "main_tags", "table1", "frequent_noun_pairs", "table2", "paper_table2",
           "number_groups", "phrase_table", "analysis_claims", "table1_section", "table2_section",
           "phrase_section", "PAPER_SENTENCES", "differences", "implementation_notes", "TABLE_QUOTES",
           "TABLE_SPECS", "TableMeasures", "STORED"]

PAPER_SENTENCES = 1_700_000  # paper 000 sec. 4: "1.7 million sentences ... extracted from Wikipedia"

#: paper 000 Table 1: average effect of the most frequent tokens of the Wikipedia data (3-TURN, n = 50);
#: the first entry is printed as a bullet, the text calls it "the dot"
PAPER_TABLE1 = {
    ".": 0.22, "the": 1.44, "his": 1.47, "its": 2.17, "also": 2.27, "their": 2.54, "not": 2.73, "been": 2.82,
    "at": 3.40, "or": 3.46, "by": 3.50, "one": 3.54, "this": 3.62, "be": 3.65, "an": 3.70, "as": 3.76,
    "he": 3.95, "had": 3.95, "to": 3.96, "a": 4.06, "of": 4.09, "from": 4.09, "i": 4.11, "it": 4.14,
    "and": 4.18, "on": 4.33, "with": 4.36, "has": 4.41, "for": 4.62, "in": 4.62, "have": 4.62, "who": 4.68,
    "were": 4.88, "that": 5.00, "was": 5.55, "(": 5.68, ")": 5.74, "are": 6.25, "but": 6.27, "is": 6.38,
    "which": 7.75, ",": 8.35,
}
#: paper 000 Table 2: distances between the embeddings of frequent nouns and their plurals
PAPER_TABLE2_WORDS = ["article", "year", "area", "world", "family",
                      "articles", "years", "areas", "worlds", "families"]
PAPER_TABLE2 = np.array([
    [0.00, 7.04, 6.51, 6.89, 5.82, 9.26, 9.84, 10.01, 10.87, 9.39],
    [7.04, 0.00, 7.62, 6.30, 5.38, 8.22, 9.06, 9.75, 10.14, 8.64],
    [6.51, 7.62, 0.00, 6.42, 6.34, 9.57, 9.70, 10.39, 11.63, 10.39],
    [6.89, 6.30, 6.42, 0.00, 5.17, 7.32, 8.82, 9.17, 9.13, 7.83],
    [5.82, 5.38, 6.34, 5.17, 0.00, 7.71, 7.72, 8.78, 9.49, 8.82],
    [9.26, 8.22, 9.57, 7.32, 7.71, 0.00, 5.11, 4.79, 4.28, 4.57],
    [9.84, 9.06, 9.70, 8.82, 7.72, 5.11, 0.00, 6.42, 6.61, 7.14],
    [10.01, 9.75, 10.39, 9.17, 8.78, 4.79, 6.42, 0.00, 5.93, 6.09],
    [10.87, 10.14, 11.63, 9.13, 9.49, 4.28, 6.61, 5.93, 0.00, 7.79],
    [9.39, 8.64, 10.39, 7.83, 8.82, 4.57, 7.14, 6.09, 7.79, 0.00],
])
PAPER_THRESHOLD = 7.5  # paper 000 sec. 4.1: same number "7.5 or less", different number "7.5 or more"
#: tags of the tokens the paper calls relevant to the task ("verbs, relative pronouns")
RELEVANT_TAGS = ("VBZ", "VBP", "VBD", "VB", "VBN", "VBG", "MD", "WDT", "WP")
IRREGULAR_PLURALS = {"man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet",
                     "mouse": "mice", "tooth": "teeth", "goose": "geese"}


# --------------------------------------------------------------------------- embeddings
def embeddings(run: Run) -> dict[str, np.ndarray]:
    """``Q(word)`` (float64, no dropout) of the most frequent words, from the run's stored generators."""
    if "head_embedding" not in run.weights:
        raise ValueError(f"run {run.name!r} stored no URN embeddings (is it a URN?)")
    spec = run.params["model"]
    rows = run.weights["head_embedding"]
    model = URN(rows.shape[0], spec["n"], spec["k"], dropout=0.0).double().eval()
    with torch.no_grad():
        model.embedding.copy_(rows.double())
        Q = model.matrices().numpy()
    return dict(zip(run.final["head_words"], Q))


def main_tags(run: Run) -> dict[str, list[str]]:
    """Each stored word's POS tags in the training data, most frequent first."""
    return {w: t.split() for w, t in zip(run.final["head_words"], run.final["head_tags"])}


def table1(run: Run, top: int = 42) -> pd.DataFrame:
    """Paper 000 Table 1: effect ``||Q - I||^2`` of the ``top`` most frequent tokens, ascending, with the
    paper's value for the same token where its table has it."""
    Q = embeddings(run)
    tags = main_tags(run)
    words = list(Q)[:top]
    df = pd.DataFrame({"token": words, "main tag": [tags[w][0] if tags[w] else "" for w in words],
                       "effect (ours)": [analysis.effect(Q[w]) for w in words],
                       "effect (paper)": [PAPER_TABLE1.get(w, np.nan) for w in words]})
    return df.sort_values("effect (ours)").reset_index(drop=True)


def _plural(word: str, known: set[str]) -> str | None:
    candidates = [IRREGULAR_PLURALS.get(word), word + "s", word + "es"]
    if word.endswith("y"):
        candidates.append(word[:-1] + "ies")
    return next((c for c in candidates if c in known), None)


def frequent_noun_pairs(run: Run, count: int = 5) -> list[tuple[str, str]]:
    """The ``count`` most frequent nouns whose plural is also stored, excluding words that can be verbs
    (paper 000 Table 2: "Words which can be both nouns and verbs were excluded")."""
    tags = main_tags(run)
    never_verb = {w for w, t in tags.items() if t and not any(x.startswith("VB") or x == "MD" for x in t)}
    plural_nouns = {w for w in never_verb if tags[w][0] == "NNS"}
    pairs = []
    for w in run.final["head_words"]:
        if w in never_verb and tags[w][0] == "NN":
            p = _plural(w, plural_nouns)
            if p is not None:
                pairs.append((w, p))
        if len(pairs) == count:
            break
    return pairs


def table2(run: Run, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """Paper 000 Table 2: ``||P - Q||^2`` between the singular and plural nouns of ``pairs``."""
    Q = embeddings(run)
    words = [s for s, _ in pairs] + [p for _, p in pairs]
    return pd.DataFrame([[analysis.distance(Q[a], Q[b]) for b in words] for a in words], index=words,
                        columns=words)


def paper_table2() -> pd.DataFrame:
    return pd.DataFrame(PAPER_TABLE2, index=PAPER_TABLE2_WORDS, columns=PAPER_TABLE2_WORDS)


def number_groups(table: pd.DataFrame) -> dict[str, np.ndarray]:
    """Off-diagonal distances of a Table 2 split into same-number and different-number pairs
    (the first half of the rows are singular, the second half plural)."""
    d = table.to_numpy()
    half = len(d) // 2
    same, diff = [], []
    for i, j in itertools.combinations(range(len(d)), 2):
        (same if (i < half) == (j < half) else diff).append(d[i, j])
    return {"same": np.array(same), "different": np.array(diff)}


def phrase_table(run: Run, phrases: list[str]) -> pd.DataFrame:
    """Effects of composed phrases, ``Q(x_0 ... x_i) = Q(x_0) ... Q(x_i)`` in network order (paper 000
    sec. 3-4). A phrase with a word outside the stored vocabulary is listed with its missing words."""
    Q = embeddings(run)
    rows = []
    for phrase in phrases:
        words = phrase.split()
        missing = [w for w in words if w not in Q]
        value = np.nan if missing else analysis.effect(analysis.phrase_embedding(Q, words))
        rows.append({"phrase": phrase, "effect": value,
                     "sum of word effects": np.nan if missing else sum(analysis.effect(Q[w]) for w in words),
                     "missing": " ".join(missing)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- claims over seeds
def _relevant_gap(run: Run) -> float:
    """Median effect of the task-relevant tokens minus the median of the others, among Table 1's tokens."""
    t1 = table1(run)
    relevant = t1["main tag"].isin(RELEVANT_TAGS)
    if not relevant.any() or relevant.all():
        return float("nan")
    return float(t1["effect (ours)"][relevant].median() - t1["effect (ours)"][~relevant].median())


def _rank_correlation(run: Run) -> float:
    both = table1(run).dropna()
    if len(both) <= 2:
        return float("nan")
    return float(both["effect (ours)"].rank().corr(both["effect (paper)"].rank()))


def _number_gap(run: Run) -> float:
    pairs = frequent_noun_pairs(run)
    if len(pairs) < 2:
        return float("nan")
    g = number_groups(table2(run, pairs))
    return float(g["different"].mean() - g["same"].mean())


#: the sentences of paper 000 sec. 4.1 (and Table 1's caption) that Tables 1-2's claims decide, word for word
TABLE_QUOTES = {
    "relevant": "tokens which are relevant to the task (e.g. verbs, relative pronouns) generally have a "
                "larger effect than those which are not (e.g. the dot, \"not\").",
    "order": "Table 1: Table of average effects for agreement experiment for the most frequent tokens in the "
             "corpus, ordered by average effect, from least to greatest",
    "number": "nouns with the same number inflection tend to be grouped (with a distance of 7.5 or less "
              "between them), while nouns with differing numbers are further apart (with a distance of "
              "7.5 or more).",
}
#: the weights Tables 1-2 read: the stored ones, of the best epoch (by the validation loss: the protocol)
STORED = ("the stored weights: the epoch of the lowest validation loss (selected on validation sentences); "
          "the paper's epoch-10 weights are not stored")
PAIRS = "seeds with two noun pairs"  #: the k-TURN's seeds that Table 2's claim rests on


@dataclass(frozen=True)
class TableMeasures:
    """Tables 1-2's measures over the k-TURN's seeds (:func:`_relevant_gap`, :func:`_rank_correlation`,
    :func:`_number_gap`); ``untrained``: why the k-TURN is no evidence ("" when it is)."""

    gap: Stat
    rho: Stat
    diff: Stat
    untrained: str


def _table_claim(m: TableMeasures, ours: str, d: Decision, rests: tuple[str, ...] = ("k-TURN",)) -> Measured:
    """A miss is put down to the data (our texts are not the paper's Wikipedia, and far smaller) unless the
    seeds do not decide it (noise); an untrained k-TURN's weights are shown for information only."""
    if m.untrained:
        word = {True: "holds", False: "fails", None: "undecided"}[d.holds]
        return Measured(f"no evidence: {m.untrained}. For information: {ours} ({word})", None, rests=rests,
                        cause="untrained", direction=d.direction,
                        settle="retrain for the paper's 10 epochs, selecting on validation data")
    return Measured(ours, d, rests=rests, cause="noise" if d.holds is None else "data",
                    settle="" if d.holds is not False else
                    "train on Linzen et al.'s Wikipedia sentences (not shipped here), 10 epochs")


#: Tables 1-2's claims (``{source}``: the analysis source; read from :data:`STORED`)
TABLE_SPECS = [
    Spec("paper 000 sec. 4.1, Table 1",
         "task-relevant tokens (verbs, relative pronouns) have larger effects ({source})",
         TABLE_QUOTES["relevant"], "verbs and relative pronouns at the top, the dot and 'not' near the "
         "bottom", "beats-paired", "difference > 0 among the 42 most frequent tokens", STORED,
         lambda m: _table_claim(m, "median effect of verb/MD/WDT/WP tokens minus the median of the rest "
                                f"{m.gap.text(2)}", rules.paired(m.gap, name="relevant minus other tokens' "
                                                                 "median effect"))),
    Spec("paper 000 Table 1 (its order)", "the order of the effects ({source})", TABLE_QUOTES["order"],
         "the printed order", "vs-number", "rho above 0: the paper's order, not an unrelated one", STORED,
         lambda m: _table_claim(m, f"Spearman rho with the paper's effects over the shared tokens "
                                f"{m.rho.text(2)}", rules.threshold(m.rho, 0.0, name="Spearman rho"))),
    Spec("paper 000 sec. 4.1, Table 2",
         "nouns of the same number are closer than nouns of different number ({source})",
         TABLE_QUOTES["number"], "same number <= 7.5, different number >= 7.5", "beats-paired",
         "difference > 0: further apart", STORED,
         lambda m: _table_claim(m, "mean different-number distance minus mean same-number distance "
                                f"{m.diff.text(2)}", rules.paired(m.diff, name="different- minus "
                                                                  "same-number distance"), (PAIRS,))
         if m.diff.n else None),
]


def analysis_claims(seeds: Seeds, source: str, chapter: str, *, untrained: str = "") -> list[Claim]:
    """Tables 1-2's claims on the k-TURN's runs of ``source`` (one per seed), read from the stored weights
    (the best epoch's). ``untrained``: why the k-TURN is no evidence (the agreement chapter's training guard;
    "" when it is): every claim is then inconclusive, cause ``untrained``, with what the weights show."""
    m = TableMeasures(seeds.stat(_relevant_gap), seeds.stat(_rank_correlation), seeds.stat(_number_gap),
                      untrained)
    epoch = f"- (not trained); the information from {STORED}" if untrained else STORED
    specs = [replace(s, statement=s.statement.format(source=source), epoch=epoch) for s in TABLE_SPECS]
    return evaluate(chapter, specs, m, seeds={"k-TURN": len(seeds), PAIRS: m.diff.n})


# --------------------------------------------------------------------------- what the page shows
def _note(text: str) -> list:
    from IPython.display import Markdown

    return [Markdown(f"*{text}*")]


def _analysed(runs, analysis_source: str | None, turn: str | None) -> Run | None:
    """The first seed's k-TURN on the analysis source (what the tables show), or None."""
    seeds = runs.by_source.get(analysis_source or "", {}).get(turn) if turn else None
    return seeds[0] if seeds else None


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
        out = [Markdown(f"**Ours** ({analysis_source}, {run.name}):"),
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


# --------------------------------------------------------------------------- what separates the runs
def _urn_terms(spec: dict) -> tuple[int, str]:
    """``l`` of a k-TURN spec, and the sum it is, ``"49 + 48 + 47"``."""
    n, k = spec["n"], spec["k"]
    return skew_size(n, k), " + ".join(str(n - 1 - i) for i in range(k if k is not None else n - 1))


def _data_size(real: dict[str, dict[str, Seeds]], turn: str | None) -> str:
    stats = {s: r[next(iter(r))][0].final["data"] for s, r in real.items()}
    sentences = " and ".join(f"{st['train_examples']:,} ({s})" for s, st in stats.items())
    many = sum(v for st in stats.values() for k, v in st["train_attractors"].items() if int(k) > 3)
    text = (f"* **Data size.** Real text reachable here yields {sentences} training sentences, not "
            f"{PAPER_SENTENCES / 1e6:.1f} million, {many:,} of them with more than 3 attractors.")
    source, by_label = next(iter(real.items()))
    if turn in by_label:
        per_word = _urn_terms(by_label[turn][0].params["model"])[0]
        words = by_label[turn][0].final["data"]["vocabulary"]
        text += (f" A {turn} has $l = {per_word}$ parameters per word: with the {words:,} tokens of the "
                 f"{source} vocabulary that is {per_word * words:,} parameters, most of them for words seen "
                 "a handful of times")
        if "LSTM" in by_label:
            size = by_label["LSTM"][0].params["model"]["embedding_size"]
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
        "* **The synthetic grammar is easier than English in one way**: the subject is the first noun after "
        "a sentence-initial phrase or clause (when there is one), and only nouns and a handful of "
        "constructions stand between it and the verb; the first-noun and nearest-noun heuristics beside the "
        "models show how far the nouns' order alone gets.\n"
        "* **The paper's LSTM curve is Linzen et al.'s**, trained on their data; ours is the same "
        "architecture trained here, on each source, with the paper's optimiser settings.")


def first_run_stop(first: dict) -> str:
    """How the runs were stopped, in words, from the first run's stored stopping rule."""
    run = next(iter(first.values()))
    rule = run.params.get("stop") or {}
    patience = rule.get("patience") or run.params["train"].get("patience")
    if not patience:
        return ""
    after = f" after epoch {rule['min_epochs']}" if rule.get("min_epochs") else ""
    plural = "s" if patience > 1 else ""
    return f", stopped{after} once {patience} epoch{plural} pass without a lower validation loss"


def implementation_notes(runs, turn: str | None) -> str:
    """The models and the optimiser as the runs used them (Markdown bullets)."""
    first = {label: seeds[0] for by_label in runs.by_source.values() for label, seeds in by_label.items()}
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
    code = {run.params["train"]["lr"] for by_label in runs.code_lr.values() for seeds in by_label.values()
            for run in seeds}
    rates = ", ".join(f"{lr:g}" for lr in sorted(code))
    also = (f" Every model is also trained at learning rate {rates} (the authors' code; see *The learning "
            "rate* above)." if code else "")
    stop = first_run_stop(first)
    return "\n".join([
        " ".join(models),
        "* **Vocabulary**: the `vocab_size` most frequent words of the training sentences; every other word "
        "is replaced by its POS tag (paper 000 sec. 4). Training computes the matrices of only the words a "
        "batch reads.",
        "* **Real text** is split by a seeded shuffle of its sentences (two verbs of one sentence stay on "
        "one side; each seed has its own split), and a part of the training side is held out for validation. "
        "On Linzen et al.'s files the shuffle divides their validation file (their test files are read "
        "whole). The offline builder keeps sentences of at most 50 tokens and every present-tense verb "
        "(VBZ/VBP) whose subject is a common noun (NN/NNS), coordinated subjects excluded.",
        "* **The heuristics** read only the tags of the prefix: the number of its first noun, and of its "
        "last noun (the one nearest the verb); nouns are `NN`/`NNS`, as attractors are counted.",
        f"* **Adam, learning rate {train['lr']}, batch {train['batch_size']}, at most {train['epochs']} "
        f"epochs{stop}**; figures and tables read each run at its best epoch (lowest validation loss; the "
        "paper's 10% held-out set serves for both validation and testing), the claims at epoch 10, the "
        f"paper's final. Paper 000 sec. 4: learning rate 0.01, 10 epochs; "
        f"the authors' code: batch 512.{also}"])
