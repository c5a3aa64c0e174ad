"""Figures, tables and claims of the Dyck chapter, drawn from stored runs.

Paper 000: Fig. 3 (accuracy by attractors), validation losses, Table 3 (plane similarity),
Table 4 (effects and signatures). Paper 001: Fig. 3a-d and Table 2. The paper's numbers are
constants here, each with its source; ours always come from the runs (models are rebuilt from a run's
stored spec and weights through :func:`urnlib.models.build_model`). All drawing is in :mod:`urnlib.plots`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from urnlib import analysis
from urnlib.claims import Claim, claim
from urnlib.languages.dyck import PAIRS, DyckVocab, depth
from urnlib.metrics import accuracy_by_count, max_error_rate
from urnlib.models import build_model, count_parameters
from urnlib.models.registry import build_trained
from urnlib.plots.curves import accuracy_by_count_figure, panels_figure
from urnlib.plots.dials import signature_table_figure
from urnlib.reports.common import largest_rise, share_lower_at_matched_x
from urnlib.results import Run

CHAPTER = "dyck"

#: paper 000 sec. 5: validation losses of the Full URN and the arbitrary-embedding RNN
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
VOCAB_SIZE = len(DyckVocab())  # 10 brackets, start, padding


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run (its spec and weights), in eval mode. A stale run found under older
    component versions comes without its weights: they are read from its folder."""
    weights = run.weights if run.weights is not None else torch.load(run.path / "weights.pt")  # weights only
    return build_trained(run.params["model"], weights, VOCAB_SIZE)


def data_summary(data) -> pd.DataFrame:
    """Strings per maximum depth in the training and test sets, and scored closing brackets per attractor
    count in the test set (what the buckets of the figures rest on), of the chapter's ``data``
    (:func:`urnlib.experiments.dyck.make_data`: vocab, train, test_strings, test_attractors)."""
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


def attractor_accuracy(run: Run, epoch: int = -1, min_total: int = 1) -> dict[str, np.ndarray]:
    """Accuracy by number of attractors (with Wilson intervals) at one epoch (default: the last)."""
    row = run.history[epoch]
    return accuracy_by_count(row["attr_correct"], row["attr_total"], min_total)


def max_error_per_epoch(run: Run, min_total: int = 1) -> np.ndarray:
    """Paper 001 Fig. 3c: the largest error rate over attractor counts, at every epoch."""
    return np.array([max_error_rate(r["attr_correct"], r["attr_total"], min_total) for r in run.history])


def figure_accuracy_by_attractors(runs: dict[str, Run], labels: list[str], min_total: int = 1):
    """Paper 000 Fig. 3: closing-bracket accuracy by attractors, 50-unit models."""
    series = {label: attractor_accuracy(runs[label], min_total=min_total) for label in labels}
    return accuracy_by_count_figure(series, baseline=MAJORITY_ACCURACY, baseline_label="majority class (20%)",
                                    title="Accuracy of closing-bracket prediction by number of attractors")


def attractor_summary(runs: dict[str, Run], labels: list[str], min_total: int) -> str:
    """One sentence (Markdown) on the last epoch's accuracy by attractors of ``labels``: overall
    closing-bracket accuracy and the weakest bucket among those with at least ``min_total`` predictions."""
    parts = []
    for label in labels:
        s = attractor_accuracy(runs[label], min_total=min_total)
        worst = int(np.argmin(s["accuracy"]))
        parts.append(f"{label} {runs[label].final['closing_accuracy']:.3f} overall, lowest "
                     f"{s['accuracy'][worst]:.3f} (at {int(s['count'][worst])} attractors)")
    return ("After the last epoch, closing-bracket accuracy of our runs (attractor counts with at least "
            f"{min_total} scored predictions): " + "; ".join(parts) + ".")


def figure_signatures(run: Run, label: str):
    """Paper 000 Table 4 as dials: the effect and signature of every bracket and matching pair of ``run``."""
    _, dial_rows = table4(run)
    return signature_table_figure(dial_rows, title=f"{label}: average effect and signature")


def figure_ablations(runs: dict[str, Run], turn: str, variants: list[str], min_total: int = 1):
    """The chapter's k-TURN next to its variants (authors' code learning rate; no state dropout).

    Args:
        turn: the k-TURN's label; variants: the variants' labels (empty: the k-TURN alone, a figure that
            says the variants were not trained).
    """
    series = {f"{turn} (papers' setting)": attractor_accuracy(runs[turn], min_total=min_total)}
    series |= {label: attractor_accuracy(runs[label], min_total=min_total) for label in variants}
    title = (f"{turn} and {len(variants)} variants: accuracy by number of attractors" if variants
             else f"{turn}: accuracy by number of attractors (variants not trained: variants=False)")
    return accuracy_by_count_figure(series, baseline=MAJORITY_ACCURACY, baseline_label="majority class (20%)",
                                    title=title)


def _effects(run: Run) -> dict[str, float]:
    t4, _ = table4(run)
    return {"mean single-bracket effect": float(t4["effect (ours)"][:10].mean()),
            "mean matching-pair effect": float(t4["effect (ours)"][10:].mean())}


def ablation_table(runs: dict[str, Run], turn: str, variants: list[str], min_total: int) -> pd.DataFrame:
    """Final test loss, closing-bracket accuracy, worst attractor bucket (among those with at least
    ``min_total`` predictions) and mean effects (Table 4) of the k-TURN and its variants."""
    rows = []
    for label, run in {f"{turn} (papers' setting)": runs[turn], **{v: runs[v] for v in variants}}.items():
        s = attractor_accuracy(run, min_total=min_total)
        rows.append({"model": label, "test loss": run.final["test_loss"],
                     "closing accuracy": run.final["closing_accuracy"],
                     "worst bucket accuracy": float(s["accuracy"].min()),
                     "at attractors": int(s["count"][np.argmin(s["accuracy"])]),
                     **_effects(run)})
    return pd.DataFrame(rows)


def validation_loss_table(runs: dict[str, Run], labels: list[str]) -> pd.DataFrame:
    """Final test ("validation") loss per model, next to paper 000's where it reports one."""
    return pd.DataFrame({
        "model": labels,
        "paper 000": [PAPER_VAL_LOSS.get(lab, np.nan) for lab in labels],
        "ours (final epoch)": [runs[lab].final["test_loss"] for lab in labels],
        "ours (best epoch)": [min(runs[lab].column("test_loss")) for lab in labels],
    })


def embeddings(run: Run) -> dict[str, np.ndarray]:
    """Each bracket's transition matrix of a trained model (no dropout), float64."""
    model = rebuild_model(run)
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


def table3(run: Run, a: str = "(", b: str = "[") -> pd.DataFrame:
    """Paper 000 Table 3: similarity of every rotation plane of ``a`` with every one of ``b``."""
    Q = embeddings(run)
    ang_a, ang_b, table = analysis.plane_similarity_table(Q[a], Q[b], tol=1e-3)
    return pd.DataFrame(table, index=[f"{a} {np.degrees(x):.0f}°" for x in ang_a],
                        columns=[f"{b} {np.degrees(x):.0f}°" for x in ang_b])


def comparison_labels(runs: dict[str, Run], units: list[int]) -> list[str]:
    """Labels of the paper 001 comparison present in ``runs``, family by family (URN, LSTM, Arbitrary)."""
    return [f"{fam} {n}" for fam in ("URN", "LSTM", "Arbitrary") for n in units if f"{fam} {n}" in runs]


def figure_paper001(runs: dict[str, Run], units: list[int], min_total: int = 1):
    """Paper 001 Fig. 3a-d for the compared models (paper: URN and LSTM) at each size."""
    labels = comparison_labels(runs, units)
    max_error = {lab: max_error_per_epoch(runs[lab], min_total) for lab in labels}
    by_count = {lab: attractor_accuracy(runs[lab], min_total=min_total) for lab in labels}
    return panels_figure([
        {"series": {lab: (runs[lab].column("epoch"), runs[lab].column("test_loss")) for lab in labels},
         "xlabel": "epoch", "ylabel": "test cross-entropy (nats/symbol)", "title": "test loss per epoch"},
        {"series": {lab: (s["count"], 1 - s["accuracy"]) for lab, s in by_count.items()},
         "xlabel": "number of attractors", "ylabel": "error rate",
         "title": "error rate by attractors (last epoch)", "markers": True, "hline": 1 - MAJORITY_ACCURACY},
        {"series": {lab: (runs[lab].column("epoch"), max_error[lab]) for lab in labels},
         "xlabel": "epoch", "ylabel": "maximum error rate over attractor counts",
         "title": "maximum error rate per epoch"},
        {"series": {lab: (runs[lab].column("train_loss"), max_error[lab]) for lab in labels},
         "xlabel": "training loss (nats/symbol)", "ylabel": "maximum error rate",
         "title": "maximum error rate against training loss", "invert_x": True},
    ])


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


# ---------------------------------------------------------------- claims
def _buckets(run: Run, min_total: int) -> tuple[np.ndarray, np.ndarray]:
    s = attractor_accuracy(run, min_total=min_total)
    return s["count"], s["accuracy"]


def claims(runs: dict[str, Run], *, turn: str, units: list[int], lstm_embedding: int, min_total: int,
           variants: list[str] = ()) -> list[Claim]:
    """Every claim of the chapter with its verdict, measured on ``runs``.

    Args:
        turn: label of the truncated model (e.g. "3-TURN").
        units: sizes of the paper 001 comparison.
        lstm_embedding: the LSTM's embedding size (Table 2's counts).
        min_total: attractor buckets with fewer scored predictions are left out of the rules.
        variants: labels of the k-TURN's variants in ``runs``; the "does not fall" claim is also checked on
            each (marked with the variant in the statement).
    """
    out = _paper000_claims(runs, turn, min_total, variants)
    out.append(_table2_claim(lstm_embedding))
    # the URN-vs-LSTM claims need both
    units = [n for n in units if f"URN {n}" in runs and f"LSTM {n}" in runs]
    if units:
        out += _paper001_claims(runs, units, min_total)
    return out


def _paper000_claims(runs: dict[str, Run], turn: str, min_total: int, variants) -> list[Claim]:
    out: list[Claim] = []
    add = out.append
    fmt = lambda xs: ", ".join(f"{x:.3f}" for x in xs)  # noqa: E731

    for lab, run in [(turn, runs[turn]), ("Full URN", runs["Full URN"]), *((v, runs[v]) for v in variants)]:
        k, acc = _buckets(run, min_total)
        low, high = acc[k <= 2].mean(), acc[k >= 3].min()
        variant = lab not in (turn, "Full URN")
        add(claim(CHAPTER, "paper 000 Fig. 3" + (" (our variant)" if variant else ""),
                  f"{lab}: accuracy does not fall as attractors grow", "near perfect, not declining",
                  f"mean acc. at 0-2 attractors {low:.3f}; worst at >= 3: {high:.3f}",
                  "worst accuracy over buckets >= 3 attractors >= mean over 0-2 minus 0.02 "
                  f"(buckets with >= {min_total} predictions)",
                  bool(high >= low - 0.02)))
        if variant:
            continue
        add(claim(CHAPTER, "paper 000 Fig. 3", f"{lab}: near-perfect accuracy at every attractor count",
                  "near perfect", f"lowest bucket accuracy {acc.min():.3f}", "every bucket >= 0.95",
                  bool(acc.min() >= 0.95)))
    k, acc = _buckets(runs["Arbitrary"], min_total)
    slope = float(np.polyfit(k, acc, 1)[0]) if len(k) > 1 else float("nan")
    add(claim(CHAPTER, "paper 000 Fig. 3",
              "arbitrary-embedding RNN: accuracy declines steadily with attractors", "steadily decreasing",
              f"least-squares slope {slope:+.4f} per attractor; accuracies {fmt(acc)}",
              "slope of accuracy vs attractors < 0", bool(slope < 0)))
    add(claim(CHAPTER, "paper 000 Fig. 3",
              "arbitrary-embedding RNN stays well above the 20% majority baseline up to 9 attractors",
              "above 20%", f"lowest bucket accuracy {acc.min():.3f}", "every bucket > 0.2",
              bool(acc.min() > 0.2)))
    full, arb = runs["Full URN"].final["test_loss"], runs["Arbitrary"].final["test_loss"]
    add(claim(CHAPTER, "paper 000 sec. 5",
              "Full URN reaches a lower validation loss than the arbitrary-embedding RNN",
              "1.47213 vs 1.52914", f"{full:.5f} vs {arb:.5f}", "Full URN loss < arbitrary loss",
              bool(full < arb)))

    t4, _ = table4(runs[turn])
    single = t4["effect (ours)"][:10].to_numpy()
    pairs = t4["effect (ours)"][10:].to_numpy()
    add(claim(CHAPTER, "paper 000 Table 4",
              "matching pairs have an effect near 0, single brackets a large one",
              "pairs 0.06-0.07; single 13.98-14.85",
              f"pairs {pairs.min():.3f}-{pairs.max():.3f}; single {single.min():.2f}-{single.max():.2f}",
              "every pair effect < 0.1 and every single effect > 10x the largest pair effect",
              bool(pairs.max() < 0.1 and single.min() > 10 * pairs.max()),
              partly=bool(single.min() > 10 * pairs.max())))
    spread = (single.max() - single.min()) / single.mean()
    add(claim(CHAPTER, "paper 000 Table 4", "all single brackets have strikingly similar effects",
              "13.98-14.85 (spread 6%)", f"spread {100 * spread:.1f}% of the mean",
              "(max - min) / mean < 0.1", bool(spread < 0.1)))
    t3 = table3(runs[turn]).to_numpy()
    n_planes = min(t3.shape)
    diag = np.array([t3[i, i] for i in range(n_planes)])
    off = t3[~np.eye(*t3.shape, dtype=bool)]
    add(claim(CHAPTER, "paper 000 Table 3",
              "planes rotated by similar angles share coordinates (high similarity); "
              "planes rotated by different angles are closer to orthogonal",
              "matched-angle similarities up to 1.73; others 0.2-1.35",
              f"matched-angle (diagonal) mean {diag.mean():.2f}, max {diag.max():.2f}; "
              f"others mean {off.mean():.2f}",
              "mean similarity of matched-angle planes > mean of the other pairs",
              bool(diag.mean() > off.mean())))
    return out


def _table2_claim(lstm_embedding: int) -> Claim:
    t2 = table2(lstm_embedding)
    equal = bool((t2["LSTM (paper)"] == t2["LSTM (ours)"]).all()
                 and (t2["URN (paper)"] == t2["URN (ours)"]).all())
    return claim(CHAPTER, "paper 001 Table 2", "parameter counts of the Dyck models (V = 12)",
                 "LSTM 6300/2204/924, URN 6348/1644/444 (32/16/8 units)",
                 "LSTM " + "/".join(str(v) for v in t2["LSTM (ours)"])
                 + ", URN " + "/".join(str(v) for v in t2["URN (ours)"]),
                 f"equal, counted on the modules (LSTM embedding {lstm_embedding})", equal)


def _paper001_claims(runs: dict[str, Run], units: list[int], min_total: int) -> list[Claim]:
    out: list[Claim] = []
    add = out.append
    urn, lstm = ({n: runs[f"{fam} {n}"] for n in units} for fam in ("URN", "LSTM"))
    lstm_better = [lstm[n].final["test_loss"] < urn[n].final["test_loss"] for n in units]
    add(claim(CHAPTER, "paper 001 Fig. 3a", "LSTMs reach a lower test loss than URNs of the same size",
              "LSTM better guesses",
              "; ".join(f"{n}: LSTM {lstm[n].final['test_loss']:.3f} vs URN {urn[n].final['test_loss']:.3f}"
                        for n in units),
              "final LSTM loss < final URN loss at every size", all(lstm_better), partly=any(lstm_better)))
    rises = {n: (largest_rise(urn[n].column("test_loss")), largest_rise(lstm[n].column("test_loss")))
             for n in units}
    smoother = [urn_rise <= lstm_rise for urn_rise, lstm_rise in rises.values()]
    add(claim(CHAPTER, "paper 001 Fig. 3a",
              "URN training is monotonous; the LSTM can get worse for a few epochs",
              "URN uniformly monotonous",
              "; ".join(f"{n}: URN {urn_rise:.3f}, LSTM {lstm_rise:.3f}"
                        for n, (urn_rise, lstm_rise) in rises.items()),
              "largest rise of the test loss above its running minimum: URN <= LSTM at every size",
              all(smoother), partly=any(smoother)))
    if 8 in units:
        tl = lstm[8].column("test_loss")
        add(claim(CHAPTER, "paper 001 Fig. 3a",
                  "the 8-unit LSTM overfits: its test loss rises after epoch 30",
                  "rises after epoch 30",
                  f"best {min(tl):.3f} at epoch {int(np.argmin(tl)) + 1}, final {tl[-1]:.3f}",
                  "final loss > best loss + 0.01 and best epoch < last", bool(tl[-1] > min(tl) + 0.01)))
    for n in units:
        k, acc = _buckets(urn[n], min_total)
        add(claim(CHAPTER, "paper 001 Fig. 3b", f"URN {n}: weakest at few attractors, better at many",
                  "errors concentrated at low attractor counts",
                  f"error at 0-1 attractors {1 - acc[k <= 1].mean():.3f}, "
                  f"at the largest bucket ({k.max()}) {1 - acc[-1]:.3f}",
                  "error at the largest bucket < mean error at 0-1 attractors",
                  bool(1 - acc[-1] < 1 - acc[k <= 1].mean())))
    worst = {}
    for n in units:
        k, acc = _buckets(lstm[n], min_total)
        worst[n] = int(k[np.argmin(acc)])
    add(claim(CHAPTER, "paper 001 Fig. 3b", "LSTMs do worst at a moderate number of attractors (3 to 4)",
              "worst at 3-4 attractors", "; ".join(f"LSTM {n}: worst at {w}" for n, w in worst.items()),
              "the worst bucket is 2 to 5 attractors for every size",
              all(2 <= w <= 5 for w in worst.values()),
              partly=any(2 <= w <= 5 for w in worst.values())))
    max_error = {n: (max_error_per_epoch(urn[n], min_total), max_error_per_epoch(lstm[n], min_total))
                 for n in units}
    share = {n: float(np.mean(urn_max < lstm_max)) for n, (urn_max, lstm_max) in max_error.items()}
    add(claim(CHAPTER, "paper 001 Fig. 3c",
              "a URN has a lower maximum error rate than the LSTM of the same size throughout training",
              "consistently lower",
              "; ".join(f"{n}: lower at {100 * s:.0f}% of epochs" for n, s in share.items()),
              "lower at >= 90% of epochs, every size", all(s >= 0.9 for s in share.values()),
              partly=any(s >= 0.9 for s in share.values())))
    first = {n: max_error[n][0][0] for n in units}
    add(claim(CHAPTER, "paper 001 Fig. 3c",
              "URNs beat the majority baseline (80% error) within the first epoch", "within the first epoch",
              "; ".join(f"URN {n}: {e:.3f}" for n, e in first.items()),
              "max error rate after epoch 1 < 0.8 at every size", all(e < 0.8 for e in first.values())))
    matched = {n: share_lower_at_matched_x(urn[n].column("train_loss"), max_error[n][0],
                                           lstm[n].column("train_loss"), max_error[n][1]) for n in units}
    valid = {n: m for n, m in matched.items() if m is not None}
    add(claim(CHAPTER, "paper 001 Fig. 3d",
              "at equal training loss, URNs have a lower maximum error rate than LSTMs",
              "URN better across the board",
              "; ".join(f"{n}: URN lower at {100 * m:.0f}% of common loss levels" if m is not None
                        else f"{n}: no common loss range" for n, m in matched.items()),
              "URN lower at >= 80% of the shared training-loss range, every size",
              (all(m >= 0.8 for m in valid.values()) if valid else None),
              partly=any(m >= 0.8 for m in valid.values())))
    return out
