"""Figures, tables and claims of the Dyck chapter, drawn from stored runs.

Paper 000: Fig. 3 (accuracy by attractors), validation losses, Table 3 (plane similarity),
Table 4 (effects and signatures). Paper 001: Fig. 3a-d and Table 2. Functions take one setting's runs as
``{model label: Seeds}`` (:meth:`urnlib.chapters.dyck.experiment.Config.view`), or ``{setting: that}``;
figures draw the mean over seeds with ± one standard deviation, at the papers' final epoch (epoch 100: both
papers train 100 epochs; :func:`final_row`). The papers select no epoch and the runs hold out no validation
strings, so nothing here reads a run at an epoch chosen on its test measures (the book's protocol). The claims
are in :mod:`urnlib.chapters.dyck.claims`. The paper's numbers are
constants here, each with its source; ours always come from the runs (models are rebuilt from a run's
stored spec and weights by :meth:`urnlib.results.Run.model`). All drawing is in :mod:`urnlib.plots`.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import torch

from urnlib import analysis
from urnlib.languages.dyck import PAIRS, VOCAB_SIZE, DyckVocab, depth
from urnlib.metrics import accuracy_by_count, accuracy_by_count_seeds, max_error_rate
from urnlib.models import build_model, count_parameters
from urnlib.models.registry import label as model_label
from urnlib.plots.curves import Mark, accuracy_by_count_figure, column_figure, figure_legend, panels_figure
from urnlib.plots.dials import signature_table_figure
from urnlib.plots.series import UNIT, SeedCurves
from urnlib.reports.common import looks
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat
from urnlib.reports.bibliography import named_text

CHAPTER = "dyck"

#: paper 000 sec. 5: validation losses of the Full URN and the arbitrary-embedding RNN (in
#: :func:`validation_loss_table`; no figure draws these models' losses, so none marks them)
PAPER_VAL_LOSS = {"Full URN": 1.47213, "Arbitrary": 1.52914}
#: paper 000 Table 4: average effect of each bracket and matching pair (3-TURN, 50 units)
PAPER_TABLE4 = {"(": 14.79, "<": 14.34, "{": 13.98, "[": 14.25, "+": 14.20, ")": 14.85, ">": 14.42,
                "}": 14.07, "]": 14.34, "-": 14.26, "()": 0.06, "<>": 0.06, "{}": 0.07, "[]": 0.06,
                "+-": 0.06}
#: paper 000 Table 3: plane similarity for ( and [ (rows: planes of "(", columns: planes of "[")
PAPER_TABLE3 = np.array([[0.33, 0.35, 1.35], [0.46, 1.73, 0.20], [1.09, 0.20, 0.34]])
#: paper 001 Table 2: parameter counts of the Dyck models (V = 12, LSTM embedding 12)
PAPER_TABLE2 = {("LSTM", 32): 6300, ("LSTM", 16): 2204, ("LSTM", 8): 924,
                ("URN", 32): 6348, ("URN", 16): 1644, ("URN", 8): 444}
MAJORITY_ACCURACY = 0.2  # five closing brackets
#: paper 001 sec. 4.1 on Fig. 3a: "In fact, for 8 units, the LSTM exhibits overfitting. The test loss
#: increases slowly after epoch 30." (the epoch urnlib.chapters.dyck.claims_001.PAPER_TURN_EPOCH decides its
#: claim on)
PAPER_LSTM8_TURN_EPOCH = 30
#: paper 000 sec. 5 and paper 001 sec. 4: "Training is performed with a learning rate of 0.01, and a dropout
#: rate of 0.05, for 100 epochs": the epoch every figure, table and claim reads
PAPER_EPOCHS = 100


def data_summary(data) -> pd.DataFrame:
    """Strings per maximum depth in the training and test sets, and scored closing brackets per attractor
    count in the test set (what the buckets of the figures rest on), of the chapter's ``data``
    (:func:`urnlib.chapters.dyck.experiment.make_data`: vocab, train, test_strings, test_attractors)."""
    vocab = data.vocab
    n_pairs = len(data.test_strings[0]) // 2
    train_strings = ["".join(vocab.symbols[i] for i in row) for row in data.train.targets.tolist()]
    train_depth = np.bincount([depth(s) for s in train_strings], minlength=n_pairs + 1)
    test_depth = np.bincount([depth(s) for s in data.test_strings], minlength=n_pairs + 1)
    attr = data.test_attractors[data.test_attractors >= 0]
    attr_counts = np.bincount(attr.numpy(), minlength=n_pairs + 1)[: n_pairs + 1]
    return pd.DataFrame({"training strings": train_depth, "test strings": test_depth,
                         "test closing brackets": attr_counts},
                        index=pd.Index(range(n_pairs + 1), name="depth / attractors")).iloc[1:].T


def paper_table3() -> pd.DataFrame:
    """Paper 000 Table 3 as printed (its dial headers did not survive text extraction)."""
    return pd.DataFrame(PAPER_TABLE3, index=[f"( plane {i + 1}" for i in range(3)],
                        columns=[f"[ plane {j + 1}" for j in range(3)])


def final_row(run: Run) -> dict:
    """The history row of the papers' final epoch, epoch :data:`PAPER_EPOCHS` (the last epoch of a run that
    trained fewer): the epoch the papers read, and the one whose weights the runs store."""
    return run.history[min(PAPER_EPOCHS, len(run.history)) - 1]


def trained_epochs(run: Run) -> int:
    """How many epochs the run trained (the papers train :data:`PAPER_EPOCHS`)."""
    return len(run.history)


def run_accuracy(run: Run, min_total: int = 1, row: dict | None = None) -> dict[str, np.ndarray]:
    """Accuracy by number of attractors of one run (Wilson intervals) at the final epoch (or ``row``)."""
    row = final_row(run) if row is None else row
    return accuracy_by_count(row["attr_correct"], row["attr_total"], min_total)


def attractor_accuracy(seeds: Seeds, min_total: int = 1, read=None) -> dict[str, np.ndarray]:
    """Accuracy by number of attractors over seeds at the final epoch (``read``: another function run ->
    history row): the mean with mean ± sd
    (:func:`urnlib.metrics.accuracy_by_count_seeds`; buckets every seed fills with ``min_total``)."""
    rows = [(read or final_row)(run) for run in seeds]
    return accuracy_by_count_seeds([(r["attr_correct"], r["attr_total"]) for r in rows], min_total)


def max_error_per_epoch(run: Run, min_total: int = 1) -> np.ndarray:
    """Paper 001 Fig. 3c: the largest error rate over attractor counts, at every epoch."""
    return np.array([max_error_rate(r["attr_correct"], r["attr_total"], min_total) for r in run.history])


def _title(setting: str) -> str:
    return f"setting: {setting}"


def figure_accuracy_by_attractors(views: dict[str, dict[str, Seeds]], labels: list[str], min_total: int = 1):
    """Paper 000 Fig. 3: closing-bracket accuracy by attractors of the 50-unit models, one panel per setting
    (mean over seeds, bars: ± one standard deviation), at the final epoch (epoch 100)."""
    fig, axes, spare = column_figure(len(views))
    for ax, (setting, view) in zip(axes, views.items()):
        series = {label: attractor_accuracy(view[label], min_total) for label in labels if label in view}
        accuracy_by_count_figure(series, looks({label: view[label] for label in series}),
                                 baseline=MAJORITY_ACCURACY, baseline_label="majority class (20%)",
                                 title=_title(setting), ax=ax, legend=False)
    figure_legend(fig, axes[0], spare)
    return fig


def attractor_summary(view: dict[str, Seeds], labels: list[str], min_total: int) -> str:
    """One sentence (Markdown) on the accuracy by attractors of ``labels`` at the final epoch over seeds:
    overall closing-bracket accuracy and the weakest bucket every seed fills with ``min_total``."""
    parts = []
    for label in labels:
        s = attractor_accuracy(view[label], min_total)
        overall = Stat.of(final_row(run)["closing_accuracy"] for run in view[label])
        worst = int(np.argmin(s["accuracy"]))
        parts.append(f"{label} {overall.text()} overall, lowest {s['accuracy'][worst]:.3f} "
                     f"(at {int(s['count'][worst])} attractors)")
    return "; ".join(parts)


def figure_signatures(run: Run, label: str):
    """Paper 000 Table 4 as dials: the effect and signature of every bracket and matching pair of ``run``."""
    _, dial_rows = table4(run)
    return signature_table_figure(dial_rows, title=f"{label}: average effect and signature")


def figure_ablations(views: dict[str, dict[str, Seeds]], turn: str, variants: list[str], min_total: int = 1):
    """The chapter's k-TURN next to its variants (no state dropout), one panel per setting, over seeds.

    Args:
        turn: the k-TURN's label; variants: the variants' labels (empty: the k-TURN alone, a figure that
            says the variants were not trained).
    """
    fig, axes, spare = column_figure(len(views))
    for ax, (setting, view) in zip(axes, views.items()):
        series = {label: attractor_accuracy(view[label], min_total) for label in [turn, *variants]
                  if label in view}  # a setting trains the variants it names
        title = _title(setting) + ("" if variants else " (variants not trained: variants=False)")
        accuracy_by_count_figure(series, looks({label: view[label] for label in series}),
                                 baseline=MAJORITY_ACCURACY, baseline_label="majority class (20%)",
                                 title=title, ax=ax, legend=False)
    figure_legend(fig, axes[0], spare)
    return fig


def effects(run: Run) -> dict[str, float]:
    """Mean effect of the single brackets and of the matching pairs (Table 4) of one run."""
    t4, _ = table4(run)
    return {"mean single-bracket effect": float(t4["effect (ours)"][:10].mean()),
            "mean matching-pair effect": float(t4["effect (ours)"][10:].mean())}


def ablation_table(views: dict[str, dict[str, Seeds]], turn: str, variants: list[str],
                   min_total: int) -> pd.DataFrame:
    """Per setting, the k-TURN and its variants at the final epoch (100), mean ± sd over seeds: test loss,
    closing-bracket accuracy, the worst attractor bucket, and the mean effects (Table 4)."""
    rows = []
    for setting, view in views.items():
        for label in [turn, *variants]:
            if label not in view:
                continue
            seeds = view[label]
            acc = attractor_accuracy(seeds, min_total)
            eff = seeds.each(effects)
            rows.append({"setting": setting, "model": label, "seeds": len(seeds),
                         "test loss": seeds.stat(lambda r: final_row(r)["test_loss"]).text(4),
                         "closing accuracy": Stat.of(final_row(r)["closing_accuracy"] for r in seeds).text(),
                         "worst bucket accuracy": f"{acc['accuracy'].min():.3f} "
                                                  f"(at {int(acc['count'][np.argmin(acc['accuracy'])])})",
                         **{k: Stat.of(e[k] for e in eff).text(3) for k in eff[0]}})
    return pd.DataFrame(rows)


def _bare(text) -> str:
    """A cell of :func:`ablation_table` without its "(N seeds)": the finding names the seeds once."""
    return re.sub(r" \(\d+ seeds?\)$", "", str(text))


def ablation_finding(table: pd.DataFrame, turn: str) -> str:
    """What :func:`ablation_table` found, in Markdown for the page: per setting and variant, its
    closing-bracket accuracy, weakest attractor bucket and mean matching-pair effect against the k-TURN's (the
    figure and the table fold below it)."""
    if set(table["model"]) <= {turn}:
        return "The variants were not trained (`variants=False`)."
    keys = {"closing accuracy": "accuracy", "worst bucket accuracy": "weakest attractor bucket",
            "mean matching-pair effect": "mean matching-pair effect"}
    items = []
    for setting, rows in table.groupby("setting", sort=False):
        base = rows[rows["model"] == turn]
        for _, row in rows[rows["model"] != turn].iterrows():
            seeds, values = f"{row['seeds']}", []
            for key, name in keys.items():
                values.append(f"{name} {_bare(row[key])}")
                if len(base):
                    values[-1] += f" against {_bare(base.iloc[0][key])}"
            if len(base):
                seeds += f" and {base.iloc[0]['seeds']}"
            items.append(f"* *{setting}*, {row['model']} ({seeds} seeds): " + "; ".join(values))
    return (f"At epoch 100, mean ± sd over seeds, each variant against the {turn} (a bucket: its accuracy "
            "and its number of attractors):\n\n" + "\n".join(items))


def authors_lstm_table(views: dict[str, dict[str, Seeds]], units: list[int], cell: str,
                       min_total: int = 1) -> pd.DataFrame:
    """Per setting that trains paper 001's LSTMs also with the authors' cell (labels ``"LSTM n, <cell>"``),
    each such size's URN, our LSTM and the authors' LSTM, mean ± sd over seeds: the test loss at epoch 100,
    its lowest over epochs 1-100 and the epoch of it, and the max error rate at epoch 100 (Fig. 3a and 3c)."""
    rows = []
    for setting, view in views.items():
        for n in units:
            if f"LSTM {n}, {cell}" not in view:
                continue
            for label in (f"URN {n}", f"LSTM {n}", f"LSTM {n}, {cell}"):
                seeds = view[label]
                loss = seeds.each(lambda r: np.asarray(r.column("test_loss")[:PAPER_EPOCHS], dtype=float))
                rows.append({"setting": setting, "model": label,
                             "test loss (epoch 100)": seeds.stat(lambda r: final_row(r)["test_loss"]).text(3),
                             "lowest test loss": Stat.of(c.min() for c in loss).text(3),
                             "its epoch": Stat.of(int(np.argmin(c)) + 1 for c in loss).text(0),
                             "max error rate (epoch 100)": seeds.stat(
                                 lambda r: max_error_rate(final_row(r)["attr_correct"],
                                                          final_row(r)["attr_total"], min_total)).text(3)})
    return pd.DataFrame(rows)


def validation_loss_table(views: dict[str, dict[str, Seeds]], labels: list[str]) -> pd.DataFrame:
    """Test ("validation") loss per model and setting, mean ± sd over seeds, next to paper 000's, at the final
    epoch (100, the paper's)."""
    rows = []
    for setting, view in views.items():
        for lab in labels:
            if lab in view:
                rows.append({"model": lab, "setting": setting, "paper 000": PAPER_VAL_LOSS.get(lab, "-"),
                             "ours (epoch 100)": view[lab].stat(lambda r: final_row(r)["test_loss"]).text(4)})
    return pd.DataFrame(rows)


def embeddings(run: Run) -> dict[str, np.ndarray]:
    """Each bracket's transition matrix of a trained model (no dropout), float64."""
    model = run.model(VOCAB_SIZE)
    with torch.no_grad():
        M = model.matrices().double().numpy()
    vocab = DyckVocab()
    return {s: M[i] for i, s in enumerate(vocab.symbols) if s not in (vocab.PAD, vocab.START)}


def table4(run: Run) -> tuple[pd.DataFrame, list]:
    """Paper 000 Table 4: effect and signature of every bracket and every matching pair (opener then closer).

    Returns:
        the table, and rows ``(label, effect, angles)`` for :func:`urnlib.plots.dials.signature_table_figure`.
    """
    Q = embeddings(run)
    labels = [o for o, _ in PAIRS] + [c for _, c in PAIRS] + [o + c for o, c in PAIRS]
    rows, dial_rows = [], []
    for label in labels:
        M = analysis.phrase_embedding(Q, label)
        angles = analysis.signature(M, tol=1e-3)
        eff = analysis.effect(M)
        rows.append({"symbol": label, "effect (paper)": PAPER_TABLE4[label], "effect (ours)": eff,
                     "signature (degrees)": ", ".join(f"{np.degrees(a):.0f}" for a in angles) or "-"})
        dial_rows.append((label, eff, list(angles)))
    return pd.DataFrame(rows), dial_rows


def table4_seeds(views: dict[str, dict[str, Seeds]], turn: str) -> pd.DataFrame:
    """Paper 000 Table 4 over seeds: each symbol's effect in the paper and, per setting, mean ± sd over the
    k-TURN's seeds."""
    out = None
    for setting, view in views.items():
        if turn not in view:
            continue
        tables = view[turn].each(lambda run: table4(run)[0])
        if out is None:
            out = tables[0][["symbol", "effect (paper)"]].copy()
        effects_ = np.array([t["effect (ours)"].to_numpy() for t in tables])
        out[f"{setting}"] = [Stat.of(col).text(3) for col in effects_.T]
    return out


def table3(run: Run, a: str = "(", b: str = "[") -> pd.DataFrame:
    """Paper 000 Table 3: similarity of every rotation plane of ``a`` with every one of ``b``."""
    Q = embeddings(run)
    ang_a, ang_b, table = analysis.plane_similarity_table(Q[a], Q[b], tol=1e-3)
    return pd.DataFrame(table, index=[f"{a} {np.degrees(x):.0f}°" for x in ang_a],
                        columns=[f"{b} {np.degrees(x):.0f}°" for x in ang_b])


def comparison_labels(view: dict[str, Seeds], units: list[int]) -> list[str]:
    """Labels of the paper 001 comparison present in ``view``, kind by kind (URN, LSTM, Arbitrary; the
    registry's labels)."""
    labels = [model_label({"kind": kind, "n": n}) for kind in ("urn", "lstm", "arbitrary") for n in units]
    return [lab for lab in labels if lab in view]


def paper_marks(labels: list[str]) -> dict[str, list[Mark]]:
    """The values paper 001 prints for its Fig. 3 that a panel of :func:`figure_paper001` shows, by panel
    letter (:data:`urnlib.plots.curves.Mark`), each labelled with its source: the epoch after which the 8-unit
    LSTM's test loss rises, in (a), when ``labels`` has an LSTM 8. (The majority class's 80% error rate, which
    the paper gives for (b) and (c), is the panels' unlabelled dash-dotted line.)"""
    if "LSTM 8" not in labels:
        return {}
    # "In fact, for 8 units, the LSTM exhibits overfitting. The test loss increases slowly after epoch 30."
    return {"a": [(PAPER_LSTM8_TURN_EPOCH, None,
                   named_text(f"paper 001, Fig. 3a: LSTM 8's test\nloss rises after epoch "
                              f"{PAPER_LSTM8_TURN_EPOCH}"))]}


def figure_paper001(view: dict[str, Seeds], units: list[int], min_total: int = 1, marks: bool = True):
    """Paper 001 Fig. 3a-d for the compared models (paper: URN and LSTM) at each size, in one setting: each
    seed's values (:class:`~urnlib.plots.series.SeedCurves`), drawn as seaborn's mean over seeds with a band
    of ± one standard deviation. The majority class's error rate (80%) is a dash-dotted line in (b) and, with
    ``marks``, in (c) too (sec. 4.1 gives it for both), where the paper's other printed values are drawn as
    well (:func:`paper_marks`), black and named in their panel's legend."""
    labels = comparison_labels(view, units)
    drawn = paper_marks(labels) if marks else {}
    max_err = {lab: (lambda run: max_error_per_epoch(run, min_total)) for lab in labels}
    by_count = {lab: attractor_accuracy(view[lab], min_total) for lab in labels}
    by_loss = {}
    for lab in labels:  # (d): the mean over seeds of max error against the mean training loss, epoch by epoch
        err, loss = (SeedCurves(view[lab].each(f)).frame().groupby("x")["y"].mean()  # over the seeds there
                     for f in (max_err[lab], lambda run: run.column("train_loss")))
        by_loss[lab] = (loss.to_numpy(), err.to_numpy())
    return panels_figure([
        {"series": {lab: SeedCurves(view[lab].each(lambda run: run.column("test_loss"))) for lab in labels},
         "xlabel": "epoch", "ylabel": "test cross-entropy (nats/symbol)", "title": "test loss per epoch",
         "marks": drawn.get("a")},
        {"series": {lab: SeedCurves(list(1 - s["per_seed"]), x=[s["count"]] * len(s["per_seed"]))
                    if len(s["count"]) else ([], []) for lab, s in by_count.items()},
         "xlabel": "number of attractors", "ylabel": "error rate",
         "title": "error rate by attractors (epoch 100)", "markers": True, "hline": 1 - MAJORITY_ACCURACY,
         "bounds": UNIT},
        {"series": {lab: SeedCurves(view[lab].each(max_err[lab])) for lab in labels},
         "xlabel": "epoch", "ylabel": "maximum error rate over attractor counts",
         # sec. 4.1 on Fig. 3c: "every model is capable of generalising to deeper nesting levels to some
         # extent, with an accuracy well above a majority class baseline (with an error rate of 80%)"
         "title": "maximum error rate per epoch", "bounds": UNIT,
         "hline": 1 - MAJORITY_ACCURACY if marks else None},
        {"series": by_loss, "xlabel": "training loss (nats/symbol)", "ylabel": "maximum error rate",
         "title": "maximum error rate against training loss", "invert_x": True},
    ], looks({lab: view[lab] for lab in labels}))  # each model in its spec's style


def table2(lstm_embedding: int) -> pd.DataFrame:
    """Paper 001 Table 2: parameter counts at the paper's sizes, counted on freshly built modules
    (the chapter's configuration: V = 12, LSTM embedding ``lstm_embedding``) next to the paper's."""
    rows = []
    for n in (32, 16, 8):  # dropout has no parameters: the counts do not depend on it
        lstm = build_model(f"lstm {n} e{lstm_embedding}", VOCAB_SIZE, dropout=0.0)
        urn = build_model(f"urn {n}", VOCAB_SIZE, dropout=0.0)
        rows.append({"units": n,
                     "LSTM (paper)": PAPER_TABLE2[("LSTM", n)], "LSTM (ours)": count_parameters(lstm),
                     "URN (paper)": PAPER_TABLE2[("URN", n)], "URN (ours)": count_parameters(urn)})
    return pd.DataFrame(rows)
