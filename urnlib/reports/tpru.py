"""Tables, figures and lines of text of the TPRU chapter (paper 002), from stored runs and the rows of the
sec. 4 checks; the claims are in :mod:`urnlib.reports.tpru_claims`. Drawing is in :mod:`urnlib.plots.tpru`.

The chapter's ``run`` (:func:`urnlib.experiments.tpru.run`) gives the entailment runs as ``label -> [Run per
seed]`` (numbers here are means over the seeds), the language-model runs as ``label -> Run``, and the rows of
the gradient checks and of the Table 1 check. Tables hold formatted strings (the precision each number needs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from urnlib.plots.tpru import lm_curves_figure, roles_figure, slices_figure
from urnlib.results import Run

CHAPTER = "tpru"
SPLITS = ("valid", "easy", "hard", "big", "massive", "exam")
TEST_SPLITS = SPLITS[1:]
#: paper 002 Table 2, plain architecture, dim 64 (accuracy %, and "# params" as printed)
PAPER_TABLE2 = {
    "GRU": {"valid": 84.3, "easy": 68.2, "hard": 84.3, "big": 77.0, "massive": 57.4, "exam": 66.8,
            "params": "49.1k"},
    "TPRU - 512": {"valid": 88.6, "easy": 73.1, "hard": 88.4, "big": 79.0, "massive": 62.0, "exam": 71.8,
                   "params": "98.3k"},
    "LSTM": {"valid": 88.6, "easy": 76.3, "hard": 88.4, "big": 79.0, "massive": 64.7, "exam": 76.4,
             "params": "131.1k"},
}
#: Evans et al.'s training set (paper 002 uses their data): about 100k pairs
PAPER_TRAIN_SIZE = 100_000
#: "Mean 2^#Vars" row of Table 2 (Evans et al.'s Table 1)
PAPER_MEAN_WORLDS = {"valid": 75.7, "easy": 81.0, "hard": 184.4, "big": 3310.8, "massive": 848570.0,
                     "exam": 5.8}
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
    """Every accuracy within two standard errors (of a coin on that split's size, over all seeds) of
    50%."""
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
    train, arch = p["train"], p["architecture"]
    return (f"Training pairs: {n_train:,} ({PAPER_TRAIN_SIZE / n_train:.0f} times fewer than Evans et al.'s "
            f"~{PAPER_TRAIN_SIZE:,}); {train['epochs']} epochs, batch {train['batch_size']}, Adam lr "
            f"{train['lr']}; {len(any_runs)} initialisation seed(s) per model (the paper averages 3); "
            f"encoders of {arch['layers']} layers, embedding {arch['embedding_size']}, MLP hidden layer "
            f"{arch['hidden']}.")


def noise_line(ent_runs: dict[str, list[Run]]) -> str:
    """How large a difference between two accuracies is noise (Markdown): the standard error of an accuracy
    near 50% on the validation and test splits, given the seeds."""
    runs = next(iter(ent_runs.values()))
    seeds = len(runs)
    se = {s: 100 * math.sqrt(0.25 / (_count(runs, s) * seeds)) for s in ("valid", "hard")}
    return (f"With {seeds} seed(s) per model, an accuracy near 50% has a standard error of about "
            f"{se['valid']:.1f} points on the validation split and {se['hard']:.1f} on a generated test "
            "split: differences of less than about twice that are within the noise of the data alone (not "
            "counting the spread between initialisations, which one seed cannot measure).")


def cost_line(runs: Iterable[Run]) -> str:
    """What training the runs cost (Markdown): the longest run and the total, in minutes of wall-clock time
    (and of CPU time, where the run recorded it)."""
    runs = list(runs)
    if not runs:
        return "No stored runs."
    wall = {r.name: r.record.get("wall_time_s", 0.0) / 60 for r in runs}
    cpu = [r.record.get("cpu_time_s") for r in runs]
    longest = max(wall, key=wall.get)
    text = (f"The longest of the {len(runs)} runs, *{longest}*, trained for {_minutes(wall[longest])}; "
            f"all of them together for {_minutes(sum(wall.values()))}")
    if all(c is not None for c in cpu):
        text += f" ({_minutes(sum(cpu) / 60)} of CPU time)"
    return text + "."


def _minutes(x: float) -> str:
    return "less than a minute" if x < 0.5 else "1 minute" if x < 1.5 else f"{x:.0f} minutes"


def _worlds(x: float) -> str:
    """A mean 2^#vars: whole numbers from 100 on (``848,570``), one decimal below (``75.7``)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def data_table(ent_runs: dict[str, list[Run]]) -> pd.DataFrame:
    """The evaluation splits as generated: size, mean 2^#vars next to Evans et al.'s, operators, and the
    accuracy (%) of the three heuristics H1-H3."""
    stats = next(iter(ent_runs.values()))[0].final["data"]
    rows = []
    for s in SPLITS:
        st = stats[s]
        rows.append({"split": s, "pairs": f"{st['count']:,}",
                     "mean 2^#vars (paper)": _worlds(PAPER_MEAN_WORLDS[s]),
                     "mean 2^#vars (ours)": _worlds(st["mean_worlds"]),
                     "mean operators per formula": f"{st['mean_ops']:.1f}",
                     **{f"H{i} accuracy (%)": f"{100 * st[f'acc_h{i}']:.1f}" for i in (1, 2, 3)}})
    return pd.DataFrame(rows)


def table2(ent_runs: dict[str, list[Run]]) -> pd.DataFrame:
    """Table 2: accuracy (%) on every split, the paper's rows (plain architecture) above ours (mean over
    seeds, +- the spread over seeds when there are several), and the encoder's parameter count."""
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


def _curve(runs: list[Run], key: str) -> tuple[list[int], np.ndarray]:
    return runs[0].column("epoch"), mean_curve(runs, key)


def fig1(ent_runs: dict[str, list[Run]]):
    """Fig. 1: training loss and validation accuracy per epoch of the one-slice TPRUs by N (GRU, LSTM
    grey)."""
    series = role_series(ent_runs)
    refs = {label: (_curve(runs, "train_loss"), _curve(runs, "valid_acc"))
            for kind in ("gru", "lstm") for label, runs in runs_of_kind(ent_runs, kind).items()}
    return roles_figure({n: _curve(ent_runs[k], "train_loss") for n, k in series.items()},
                        {n: _curve(ent_runs[k], "valid_acc") for n, k in series.items()}, refs,
                        loss_label="training loss (cross-entropy, nats)",
                        accuracy_label="validation accuracy (%)", accuracy_title="validation accuracy")


def fig2(ent_runs: dict[str, list[Run]]):
    """Fig. 2: one slice (solid, "N") against several (dashed, "N M"): training loss and training accuracy."""
    pairs = {}
    for n, (single, multi) in slice_pairs(ent_runs).items():
        s = model_spec(ent_runs[multi])["slices"]
        names = (("single", single, f"{n}"), ("multi", multi, f"{n} M ({s} slices)"))
        pairs[n] = {key: (name, _curve(ent_runs[label], "train_loss"), _curve(ent_runs[label], "train_acc"))
                    for key, label, name in names}
    return slices_figure(pairs, loss_label="training loss (cross-entropy, nats)",
                         accuracy_label="training accuracy (%)")


# ----------------------------------------------------------------------------------------------------- #
# language modelling
# ----------------------------------------------------------------------------------------------------- #
def lm_line(lm_runs: dict[str, Run]) -> str:
    run = next(iter(lm_runs.values()))
    s, p = run.final["data"], run.params
    setup, train = p["setup"], p["train"]
    return (f"Brown: {s['train_tokens']:,} training, {s['valid_tokens']:,} validation and "
            f"{s['test_tokens']:,} test tokens, vocabulary {s['vocabulary']:,} (`<unk>` is "
            f"{s['unk_share_train']:.1%} of the training tokens); {setup['layers']} layers of dimension "
            f"{setup['d']}, the TPRU with N = {setup['n_roles']} roles; {train['epochs']} epochs, batch "
            f"{train['batch_size']}, Adam lr {train['lr']}.")


def table4(lm_runs: dict[str, Run]) -> pd.DataFrame:
    """Table 4 stand-in: perplexity on Brown (ours) next to WikiText (the paper's)."""
    rows = []
    for label, run in lm_runs.items():
        f = run.final
        paper = PAPER_TABLE4.get(label.split()[0], {})
        rows.append({"model": label, "valid perplexity": f"{f['valid_ppl']:.1f}",
                     "test perplexity": f"{f['test_ppl']:.1f}", "best epoch": f"{f['best_epoch']}",
                     "# params (recurrent)": f"{f['recurrent_params']:,}",
                     "# params (all)": f"{f['n_params']:,}",
                     **{f"paper: {c}": f"{paper[c]:.1f}" if c in paper else ""
                        for c in ("WikiText-103", "WikiText-2")},
                     "paper: # params": paper.get("params", "")})
    return pd.DataFrame(rows)


def lm_curves(lm_runs: dict[str, Run]):
    """Table 4 (right) stand-in: training loss (NLL per token) and validation perplexity per epoch."""
    return lm_curves_figure({label: ((run.column("epoch"), run.column("train_loss")),
                                     (run.column("epoch"), run.column("valid_ppl")))
                             for label, run in lm_runs.items()})


def tpru_lm_run(lm_runs: dict[str, Run]) -> Run | None:
    """The language-model run that measured the role/POS PMI (the TPRU's), or None."""
    return next((r for r in lm_runs.values() if "pmi" in r.final), None)


def top_two_gap(entry: dict) -> float | None:
    """Difference of the top two roles' PMI of one tag's entry (None with fewer than two roles)."""
    top = entry["top"]
    return top[0]["pmi"] - top[1]["pmi"] if len(top) >= 2 else None


def _gap(g: float | None) -> str:
    return "" if g is None else f"{g:.2f}"


def table5(lm_runs: dict[str, Run]) -> pd.DataFrame:
    """Table 5 stand-in: per universal POS tag, the top two roles by PMI with the maximally selected role
    (role id, PMI, tokens with that role and tag), the gap, the same gap for the untrained TPRU, and the
    paper's top two PMI values (MNLI, spaCy tags) where Table 5 lists the tag."""
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
        rows.append({"tag": tag, "tokens": f"{e['count']:,}", "top-1 role: PMI (tokens)": cell(top[0]),
                     "top-2 role: PMI (tokens)": cell(top[1]), "gap": _gap(g),
                     f"gap >= {PMI_GAP}": "" if g is None else "yes" if g >= PMI_GAP else "no",
                     "gap, untrained TPRU": _gap(gu),
                     "paper: top 2 PMI": "" if paper is None else f"{paper[0]:.2f} / {paper[1]:.2f}"})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------- #
# sec. 4 checks
# ----------------------------------------------------------------------------------------------------- #
def gradient_table(rows: list[dict]) -> pd.DataFrame:
    """The gradient-analysis checks (``gradient_checks`` of :mod:`urnlib.experiments.tpru_checks`), one row
    per
    setting: differences from autograd and the smallest eigenvalues in scientific notation, ratios to 3
    decimals."""
    names = {"eq8_printed": "eq. 8 as printed: max |diff|", "eq8_corrected": "eq. 8 corrected: max |diff|",
             "eq7_printed": "eq. 7 as printed: max |diff|", "eq7_corrected": "eq. 7 corrected: max |diff|",
             "J_min_eig": "J_t (from f_t): min eigenvalue",
             "J_max_eig_over_max_f": "J_t (from f_t): max eig / max f",
             "J_printed_min_eig": "J_t as printed (f_b): min eigenvalue", "max_f_b": "max (f_b)_n"}
    formats = {"J_max_eig_over_max_f": "{:.3f}", "J_printed_min_eig": "{:.2f}", "max_f_b": "{:.3f}"}
    out = []
    for r in rows:
        row = {"setting": f"{r['variant']}, {r['slices']} slice(s), {r['trials']} random steps"}
        row.update({title: formats.get(key, "{:.1e}").format(r[key]) for key, title in names.items()})
        out.append(row)
    return pd.DataFrame(out)


def table1_table(rows: list[dict]) -> pd.DataFrame:
    """Table 1 "# Params" against the built encoders, and the counts printed in Tables 2 and 4."""
    out = []
    for r in rows:
        out.append({"model": r["kind"].upper(), "d": r["d"], "d'": r["d_in"], "layers": r["layers"],
                    "Table 1 formula (weights)": f"{r['formula']:,}", "built: weights": f"{r['weights']:,}",
                    "built: biases": f"{r['biases']:,}", "built: total": f"{r['total']:,}",
                    "paper's printed count": "" if r["paper"] is None
                    else f"{format_params(r['paper'])} ({r['paper_source']})",
                    "Table 1 time per step": f"{r['time']:,}"})
    return pd.DataFrame(out)
