"""Tables and figures of the TPRU chapter (paper 002), from stored runs and the checks of
:mod:`urnlib.experiments.tpru_checks`; the claims are in :mod:`urnlib.reports.tpru_claims`.

Entailment runs come as ``label -> [Run per seed]`` (:func:`urnlib.experiments.tpru_entailment.run_all`); numbers
are means over the seeds. Language-model runs as ``label -> Run`` (:func:`urnlib.experiments.tpru_lm.run_lm`).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
import pandas as pd

from urnlib.results import Run

CHAPTER = "tpru"
SPLITS = ("valid", "easy", "hard", "big", "massive", "exam")
TEST_SPLITS = SPLITS[1:]
#: paper 002 Table 2, plain architecture, dim 64 (accuracy %, and "# params" as printed)
PAPER_TABLE2 = {
    "GRU": {"valid": 84.3, "easy": 68.2, "hard": 84.3, "big": 77.0, "massive": 57.4, "exam": 66.8, "params": "49.1k"},
    "TPRU - 512": {"valid": 88.6, "easy": 73.1, "hard": 88.4, "big": 79.0, "massive": 62.0, "exam": 71.8,
                   "params": "98.3k"},
    "LSTM": {"valid": 88.6, "easy": 76.3, "hard": 88.4, "big": 79.0, "massive": 64.7, "exam": 76.4, "params": "131.1k"},
}
#: Evans et al.'s training set (paper 002 uses their data): about 100k pairs
PAPER_TRAIN_SIZE = 100_000
#: "Mean 2^#Vars" row of Table 2 (Evans et al.'s Table 1)
PAPER_MEAN_WORLDS = {"valid": 75.7, "easy": 81.0, "hard": 184.4, "big": 3310.8, "massive": 848570.0, "exam": 5.8}
#: paper 002 Table 4 (left): test perplexity, two layers, dim 1024
PAPER_TABLE4 = {"TPRU": {"WikiText-103": 41.4, "WikiText-2": 76.8, "params": "12.6m"},
                "LSTM": {"WikiText-103": 42.3, "WikiText-2": 76.0, "params": "16.8m"}}
#: paper 002 Table 5: top two PMI values per tag (tags whose two values differ by at least 0.5; 7 of 17)
PAPER_TABLE5 = {"ADV": (7.37, 5.83), "DET": (6.06, 5.41), "INTJ": (7.13, 6.46), "NOUN": (7.23, 5.84),
                "PART": (7.54, 6.91), "PROPN": (7.27, 6.47), "VERB": (7.22, 6.28)}
PMI_GAP = 0.5  # sec. 6.2: "the top two PMI values ... differ by at least 0.5"


# ----------------------------------------------------------------------------------------------------- #
# helpers
# ----------------------------------------------------------------------------------------------------- #
def model_spec(runs: list[Run]) -> dict:
    """The model parameters (``params["model"]``) of a row's runs (the seeds share them)."""
    return runs[0].params["model"]


def mean_accuracy(runs: list[Run], split: str) -> float:
    """Final accuracy on ``split``, averaged over the seeds."""
    return float(np.mean([r.final["accuracy"][split] for r in runs]))


def _count(runs: list[Run], split: str) -> int:
    return int(runs[0].final["data"][split]["count"])


def at_chance(runs_list: list[list[Run]], splits) -> bool:
    """Every accuracy within two standard errors (of a coin on that split's size, over all seeds) of 50%."""
    for runs in runs_list:
        for s in splits:
            se = math.sqrt(0.25 / (_count(runs, s) * len(runs)))
            if abs(mean_accuracy(runs, s) - 0.5) > 2 * se:
                return False
    return True


def mean_curve(runs: list[Run], key: str) -> np.ndarray:
    """The per-epoch history column ``key``, averaged over the seeds."""
    return np.mean([r.column(key) for r in runs], axis=0)


def runs_of_kind(ent_runs: dict[str, list[Run]], kind: str) -> dict[str, list[Run]]:
    """The rows whose model is of ``kind`` (``"tpru"``, ``"gru"``, ``"lstm"``)."""
    return {k: v for k, v in ent_runs.items() if model_spec(v)["kind"] == kind}


def main_tpru(ent_runs: dict[str, list[Run]]) -> str | None:
    """The TPRU row set against the paper's "TPRU - 512": the most roles, then the most slices."""
    tprus = runs_of_kind(ent_runs, "tpru")
    if not tprus:
        return None
    return max(tprus, key=lambda k: (model_spec(tprus[k])["n_roles"], model_spec(tprus[k])["slices"]))


def role_series(ent_runs: dict[str, list[Run]]) -> dict[int, str]:
    """Fig. 1: N -> label of the one-slice TPRU runs (of the most common d), by N."""
    one = {k: v for k, v in runs_of_kind(ent_runs, "tpru").items() if model_spec(v)["slices"] == 1}
    if not one:
        return {}
    ds = [model_spec(v)["d"] for v in one.values()]
    d = max(set(ds), key=ds.count)
    return dict(sorted((model_spec(v)["n_roles"], k) for k, v in one.items() if model_spec(v)["d"] == d))


def slice_pairs(ent_runs: dict[str, list[Run]]) -> dict[int, tuple[str, str]]:
    """Fig. 2: N -> (one-slice label, multi-slice label) for every N trained both ways (same d)."""
    tprus = runs_of_kind(ent_runs, "tpru")
    out = {}
    for k, v in tprus.items():
        s = model_spec(v)
        if s["slices"] > 1:
            single = next((k1 for k1, v1 in tprus.items() if model_spec(v1)["slices"] == 1
                           and (model_spec(v1)["n_roles"], model_spec(v1)["d"]) == (s["n_roles"], s["d"])),
                          None)
            if single is not None:
                out[s["n_roles"]] = (single, k)
    return dict(sorted(out.items()))


def format_params(n: int) -> str:
    """A parameter count as the paper prints it: ``49.1k``, ``12.6m``."""
    return f"{n / 1e6:.1f}m" if n >= 1e6 else f"{n / 1e3:.1f}k"


# ----------------------------------------------------------------------------------------------------- #
# logical entailment
# ----------------------------------------------------------------------------------------------------- #
def scale_line(ent_runs: dict[str, list[Run]]) -> str:
    """What the runs trained on, against the paper (Markdown)."""
    any_runs = next(iter(ent_runs.values()))
    p = any_runs[0].params
    n_train = p["task"]["train"]
    return (f"Training pairs: {n_train:,} ({PAPER_TRAIN_SIZE / n_train:.0f} times fewer than Evans et al.'s "
            f"~{PAPER_TRAIN_SIZE:,}); {p['train']['epochs']} epochs, batch {p['train']['batch_size']}, Adam lr "
            f"{p['train']['lr']}; {len(any_runs)} initialisation seed(s) per model (the paper averages 3); "
            f"encoders of {p['architecture']['layers']} layers, embedding {p['architecture']['embedding_size']}, "
            f"MLP hidden layer {p['architecture']['hidden']}.")


def noise_line(ent_runs: dict[str, list[Run]]) -> str:
    """How large a difference between two accuracies is noise (Markdown): the standard error of an accuracy near
    50% on the validation and test splits, given the seeds."""
    runs = next(iter(ent_runs.values()))
    seeds = len(runs)
    se = {s: 100 * math.sqrt(0.25 / (_count(runs, s) * seeds)) for s in ("valid", "hard")}
    return (f"With {seeds} seed(s) per model, an accuracy near 50% has a standard error of about {se['valid']:.1f} "
            f"points on the validation split and {se['hard']:.1f} on a generated test split: differences of less "
            f"than about twice that are within the noise of the data alone (not counting the spread between "
            f"initialisations, which one seed cannot measure).")


def data_table(ent_runs: dict[str, list[Run]]) -> pd.DataFrame:
    """The evaluation splits as generated: size, mean 2^#vars next to Evans et al.'s, operators, heuristics."""
    stats = next(iter(ent_runs.values()))[0].final["data"]
    rows = []
    for s in SPLITS:
        st = stats[s]
        rows.append({"split": s, "pairs": st["count"], "mean 2^#vars (paper)": PAPER_MEAN_WORLDS[s],
                     "mean 2^#vars (ours)": st["mean_worlds"], "mean operators per formula": st["mean_ops"],
                     "H1 accuracy": st["acc_h1"], "H2 accuracy": st["acc_h2"], "H3 accuracy": st["acc_h3"]})
    return pd.DataFrame(rows)


def table2(ent_runs: dict[str, list[Run]]) -> pd.DataFrame:
    """Table 2: accuracy (%) on every split, the paper's rows (plain architecture) above ours (mean over seeds,
    +- the spread over seeds when there are several), and the encoder's parameter count."""
    rows = []
    for name, vals in PAPER_TABLE2.items():
        rows.append({"source": "paper", "model": name, **{s: f"{vals[s]:.1f}" for s in SPLITS},
                     "# params (encoder)": vals["params"]})
    for label, runs in ent_runs.items():
        row = {"source": "ours", "model": label}
        for s in SPLITS:
            accs = 100 * np.array([r.final["accuracy"][s] for r in runs])
            row[s] = f"{accs.mean():.1f}" + (f" ± {accs.std(ddof=1):.1f}" if len(accs) > 1 else "")
        row["# params (encoder)"] = f"{runs[0].final['encoder_params']:,}"
        rows.append(row)
    return pd.DataFrame(rows)


def fig1(ent_runs: dict[str, list[Run]]):
    """Fig. 1: training loss and validation accuracy per epoch of the one-slice TPRUs by N (GRU, LSTM dotted)."""
    series = role_series(ent_runs)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.4, 3.6), layout="constrained")
    colours = plt.cm.viridis(np.linspace(0.1, 0.85, max(len(series), 1)))
    for colour, (n, label) in zip(colours, series.items()):
        runs = ent_runs[label]
        epochs = runs[0].column("epoch")
        a.plot(epochs, mean_curve(runs, "train_loss"), marker="o", ms=3, color=colour, label=f"TPRU N={n}")
        b.plot(epochs, 100 * mean_curve(runs, "valid_acc"), marker="o", ms=3, color=colour,
               label=f"TPRU N={n}")
    for kind, style in (("gru", ":"), ("lstm", "-.")):
        for label, runs in runs_of_kind(ent_runs, kind).items():
            epochs = runs[0].column("epoch")
            a.plot(epochs, mean_curve(runs, "train_loss"), style, color="grey", label=label)
            b.plot(epochs, 100 * mean_curve(runs, "valid_acc"), style, color="grey", label=label)
    a.set(xlabel="epoch", ylabel="training loss (cross-entropy, nats)", title="(a) training loss")
    b.set(xlabel="epoch", ylabel="validation accuracy (%)", title="(b) validation accuracy")
    _epoch_axes(a, b)
    b.legend(fontsize=8)
    return fig


def _epoch_axes(*axes) -> None:
    """Grid and whole-number epoch ticks on each panel."""
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def fig2(ent_runs: dict[str, list[Run]]):
    """Fig. 2: one slice (solid, "N") against several (dashed, "N M"): training loss and training accuracy."""
    pairs = slice_pairs(ent_runs)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.4, 3.6), layout="constrained")
    colours = plt.cm.plasma(np.linspace(0.1, 0.8, max(len(pairs), 1)))
    for colour, (n, (single, multi)) in zip(colours, pairs.items()):
        s = model_spec(ent_runs[multi])["slices"]
        for label, style, name in ((single, "-", f"{n}"), (multi, "--", f"{n} M ({s} slices)")):
            runs = ent_runs[label]
            epochs = runs[0].column("epoch")
            a.plot(epochs, mean_curve(runs, "train_loss"), style, marker="o", ms=3, color=colour, label=name)
            b.plot(epochs, 100 * mean_curve(runs, "train_acc"), style, marker="o", ms=3, color=colour,
                   label=name)
    a.set(xlabel="epoch", ylabel="training loss (cross-entropy, nats)", title="(a) training loss")
    b.set(xlabel="epoch", ylabel="training accuracy (%)", title="(b) accuracy on training pairs")
    _epoch_axes(a, b)
    b.legend(fontsize=8, title="roles N")
    return fig


# ----------------------------------------------------------------------------------------------------- #
# language modelling
# ----------------------------------------------------------------------------------------------------- #
def lm_line(lm_runs: dict[str, Run]) -> str:
    run = next(iter(lm_runs.values()))
    s, p = run.final["data"], run.params
    return (f"Brown: {s['train_tokens']:,} training, {s['valid_tokens']:,} validation and {s['test_tokens']:,} test "
            f"tokens, vocabulary {s['vocabulary']:,} (`<unk>` is {s['unk_share_train']:.1%} of the training tokens); "
            f"{p['setup']['layers']} layers of dimension {p['setup']['d']}, the TPRU with N = {p['setup']['n_roles']} "
            f"roles; {p['train']['epochs']} epochs, batch {p['train']['batch_size']}, Adam lr {p['train']['lr']}.")


def table4(lm_runs: dict[str, Run]) -> pd.DataFrame:
    """Table 4 stand-in: perplexity on Brown (ours) next to WikiText (the paper's)."""
    rows = []
    for label, run in lm_runs.items():
        f = run.final
        paper = PAPER_TABLE4.get(label.split()[0], {})
        rows.append({"model": label, "valid perplexity": f["valid_ppl"], "test perplexity": f["test_ppl"],
                     "best epoch": f["best_epoch"], "# params (recurrent)": f"{f['recurrent_params']:,}",
                     "# params (all)": f"{f['n_params']:,}",
                     "paper: WikiText-103": paper.get("WikiText-103"), "paper: WikiText-2": paper.get("WikiText-2"),
                     "paper: # params": paper.get("params")})
    return pd.DataFrame(rows)


def lm_curves(lm_runs: dict[str, Run]):
    """Table 4 (right) stand-in: training loss (NLL per token) and validation perplexity per epoch."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.4, 3.4), layout="constrained")
    for label, run in lm_runs.items():
        epochs = run.column("epoch")
        a.plot(epochs, run.column("train_loss"), marker="o", label=label)
        b.plot(epochs, run.column("valid_ppl"), marker="o", label=label)
    a.set(xlabel="epoch", ylabel="training NLL (nats per token)", title="(a) training loss")
    b.set(xlabel="epoch", ylabel="validation perplexity", title="(b) validation perplexity")
    _epoch_axes(a, b)
    a.legend(fontsize=8)
    return fig


def tpru_lm_run(lm_runs: dict[str, Run]) -> Run | None:
    """The language-model run that measured the role/POS PMI (the TPRU's), or None."""
    return next((r for r in lm_runs.values() if "pmi" in r.final), None)


def top_two_gap(entry: dict) -> float | None:
    """Difference of the top two roles' PMI of one tag's entry (None with fewer than two roles)."""
    top = entry["top"]
    return top[0]["pmi"] - top[1]["pmi"] if len(top) >= 2 else None


def table5(lm_runs: dict[str, Run]) -> pd.DataFrame:
    """Table 5 stand-in: per universal POS tag, the top two roles by PMI with the maximally selected role
    (role id, PMI, tokens with that role and tag), the gap, the same gap for the untrained TPRU, and the paper's
    top two PMI values (MNLI, spaCy tags) where Table 5 lists the tag."""
    run = tpru_lm_run(lm_runs)
    if run is None:
        return pd.DataFrame()
    pmi, untrained = run.final["pmi"]["tags"], run.final["pmi_untrained"]["tags"]
    order = [t for t in PAPER_TABLE5 if t in pmi] + [t for t in pmi if t not in PAPER_TABLE5]
    rows = []
    for tag in order:
        e = pmi[tag]
        top = e["top"] + [None] * (2 - len(e["top"]))
        cell = lambda t: "" if t is None else f"role {t['role']}: {t['pmi']:.2f} ({t['joint']})"  # noqa: E731
        g, gu = top_two_gap(e), top_two_gap(untrained[tag]) if tag in untrained else None
        paper = PAPER_TABLE5.get(tag)
        rows.append({"tag": tag, "tokens": e["count"], "top-1 role: PMI (tokens)": cell(top[0]),
                     "top-2 role: PMI (tokens)": cell(top[1]), "gap": g, f"gap >= {PMI_GAP}": None if g is None
                     else g >= PMI_GAP, "gap, untrained TPRU": gu,
                     "paper: top 2 PMI": "" if paper is None else f"{paper[0]:.2f} / {paper[1]:.2f}"})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------- #
# sec. 4 checks
# ----------------------------------------------------------------------------------------------------- #
def gradient_table(rows: list[dict]) -> pd.DataFrame:
    """The gradient-analysis checks (:func:`urnlib.experiments.tpru_checks.gradient_checks`), one row per setting."""
    names = {"eq8_printed": "eq. 8 as printed: max |diff|", "eq8_corrected": "eq. 8 corrected: max |diff|",
             "eq7_printed": "eq. 7 as printed: max |diff|", "eq7_corrected": "eq. 7 corrected: max |diff|",
             "J_min_eig": "J_t (from f_t): min eigenvalue", "J_max_eig_over_max_f": "J_t (from f_t): max eig / max f",
             "J_printed_min_eig": "J_t as printed (f_b): min eigenvalue", "max_f_b": "max (f_b)_n"}
    df = pd.DataFrame(rows)
    df.insert(0, "setting", [f"{r['variant']}, {r['slices']} slice(s), {r['trials']} random steps" for r in rows])
    return df[["setting", *names]].rename(columns=names)


def table1_table(rows: list[dict]) -> pd.DataFrame:
    """Table 1 "# Params" against the built encoders, and the counts printed in Tables 2 and 4."""
    out = []
    for r in rows:
        out.append({"model": r["kind"].upper(), "d": r["d"], "d'": r["d_in"], "layers": r["layers"],
                    "Table 1 formula (weights)": f"{r['formula']:,}", "built: weights": f"{r['weights']:,}",
                    "built: biases": f"{r['biases']:,}", "built: total": f"{r['total']:,}",
                    "paper's printed count": "" if r["paper"] is None else f"{format_params(r['paper'])} "
                    f"({r['paper_source']})", "Table 1 time per step": f"{r['time']:,}"})
    return pd.DataFrame(out)
