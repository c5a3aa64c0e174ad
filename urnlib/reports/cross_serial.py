"""Figures, tables and claims of the cross-serial chapter (paper 001 sec. 3: Fig. 2a-d, Table 1).

The paper's numbers are constants here, each with its source; ours come from the stored runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from urnlib.claims import Claim, claim
from urnlib.languages import cross_serial as cs
from urnlib.models import build_model, count_parameters
from urnlib.plots.curves import curves_panel, panel_grid
from urnlib.reports.common import share_lower_at_matched_x
from urnlib.results import Run

CHAPTER = "cross_serial"
#: paper 001 Table 1: parameters with V = 10 (LSTM embedding 20), by units
PAPER_TABLE1 = {("LSTM", 32): 7314, ("LSTM", 16): 2738, ("LSTM", 8): 1218,
                ("URN", 32): 5290, ("URN", 16): 1370, ("URN", 8): 370}
PAPER_VOCAB = 10  # the vocabulary size Table 1's counts imply


def labels_of(runs: dict[str, Run], units: list[int]) -> list[str]:
    """Run labels in a stable order: URNs by size, then LSTMs by size."""
    return [f"{fam} {n}" for fam in ("URN", "LSTM") for n in units if f"{fam} {n}" in runs]


def error_by_length(run: Run, epoch: int = -1) -> pd.Series:
    """Full-string error rate by m + n at one epoch (lengths absent from the test set dropped)."""
    row = run.history[epoch]
    wrong, total = np.asarray(row["length_wrong"], float), np.asarray(row["length_total"], float)
    keep = total > 0
    return pd.Series(wrong[keep] / total[keep], index=np.nonzero(keep)[0], name=run.name)


def error_by_length_table(runs: dict[str, Run], units: list[int]) -> pd.DataFrame:
    """Error rate by m + n after the last epoch, one row per model."""
    return pd.DataFrame({lab: error_by_length(runs[lab]) for lab in labels_of(runs, units)}).T


def figure_paper001(runs: dict[str, Run], units: list[int], train_k: int):
    """Paper 001 Fig. 2a-d."""
    labels = labels_of(runs, units)
    fig, axes = panel_grid(2, 2)
    a, b, c, d = axes.ravel()
    curves_panel(a, {lab: (runs[lab].column("epoch"), runs[lab].column("test_loss")) for lab in labels},
                 xlabel="epoch", ylabel="test cross-entropy (nats/symbol)", title="test loss per epoch")
    curves_panel(b, {lab: (runs[lab].column("epoch"), runs[lab].column("error_rate")) for lab in labels},
                 xlabel="epoch", ylabel="full-string error rate", title="error rate per epoch")
    curves_panel(c, {lab: (runs[lab].column("train_loss"), runs[lab].column("error_rate")) for lab in labels},
                 xlabel="training loss (nats/symbol)", ylabel="full-string error rate",
                 title="error rate against training loss", invert_x=True)
    curves_panel(d, {lab: (s.index, s.to_numpy()) for lab in labels for s in [error_by_length(runs[lab])]},
                 xlabel="pattern length m + n", ylabel="full-string error rate",
                 title="error rate by length (last epoch)", markers=True)
    d.axvspan(train_k - 0.5, d.get_xlim()[1], color="0.9", zorder=0)
    d.text(train_k - 0.4, 0.97, "unseen in training", transform=d.get_xaxis_transform(), va="top",
           fontsize="small")
    handles, names = a.get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=min(len(labels), 6))
    return fig


def table1(lstm_embedding: int = 20, dropout: float = 0.05, trained_vocab: int | None = None) -> pd.DataFrame:
    """Paper 001 Table 1 at the paper's sizes, counted on modules built with the paper's V = 10, next to
    the paper's numbers; and, if ``trained_vocab`` is given, the counts of the models as trained here."""
    rows = []
    for n in (32, 16, 8):
        row = {"units": n}
        for fam, spec in (("LSTM", {"kind": "lstm", "n": n, "embedding_size": lstm_embedding}),
                          ("URN", {"kind": "urn", "n": n})):
            kind = spec.pop("kind")
            row[f"{fam} (paper)"] = PAPER_TABLE1[(fam, n)]
            row[f"{fam} (ours, V=10)"] = count_parameters(build_model(kind, PAPER_VOCAB, dropout=dropout,
                                                                      **spec))
            if trained_vocab is not None:
                row[f"{fam} (as trained, V={trained_vocab})"] = count_parameters(
                    build_model(kind, trained_vocab, dropout=dropout, **spec))
        rows.append(row)
    return pd.DataFrame(rows)


def data_summary(train_k: int, test_k: int, min_block: int) -> pd.DataFrame:
    """How many distinct strings each length m + n has in C_train_k and C_test_k."""
    rows = []
    for k, name in ((train_k, "training language"), (test_k, "test language")):
        lengths = np.bincount([m + n for m, n in cs.language(k, min_block)], minlength=test_k)
        rows.append(pd.Series(lengths, name=f"{name} C_{k}"))
    return pd.DataFrame(rows).loc[:, lambda df: df.sum() > 0]


def claims(runs: dict[str, Run], *, units: list[int], train_k: int, lstm_embedding: int = 20) -> list[Claim]:
    """Every claim of paper 001 sec. 3 with its verdict, measured on ``runs``."""
    out: list[Claim] = []
    add = out.append
    t1 = table1(lstm_embedding)
    equal = bool((t1["LSTM (paper)"] == t1["LSTM (ours, V=10)"]).all()
                 and (t1["URN (paper)"] == t1["URN (ours, V=10)"]).all())
    add(claim(CHAPTER, "paper 001 Table 1", "parameter counts of the cross-serial models (V = 10)",
              "LSTM 7314/2738/1218, URN 5290/1370/370 (32/16/8 units)",
              "LSTM " + "/".join(str(v) for v in t1["LSTM (ours, V=10)"])
              + ", URN " + "/".join(str(v) for v in t1["URN (ours, V=10)"]),
              f"equal, counted on modules built with V = 10 (LSTM embedding {lstm_embedding})", equal))

    pairs = [n for n in units if f"URN {n}" in runs and f"LSTM {n}" in runs]
    if not pairs:
        return out
    fin = {lab: r.final for lab, r in runs.items()}
    better = [fin[f"LSTM {n}"]["test_loss"] < fin[f"URN {n}"]["test_loss"] for n in pairs]
    add(claim(CHAPTER, "paper 001 Fig. 2a",
              "LSTMs make better per-symbol guesses (lower test loss) than URNs, across the board",
              "LSTM lower",
              "; ".join(f"{n}: LSTM {fin[f'LSTM {n}']['test_loss']:.3f} "
                        f"vs URN {fin[f'URN {n}']['test_loss']:.3f}" for n in pairs),
              "final LSTM test loss < final URN test loss at every size", all(better), partly=any(better)))
    best = min(min(r.column("error_rate")) for r in runs.values())
    best_label = min(runs, key=lambda lab: min(runs[lab].column("error_rate")))
    add(claim(CHAPTER, "paper 001 Fig. 2b",
              "the best models reach less than 10% full-string error on the test set",
              "< 0.10", f"best {best:.3f} ({best_label})", "lowest error rate over models and epochs < 0.10",
              bool(best < 0.10)))
    big = f"LSTM {max(pairs)}"
    err = runs[big].column("error_rate")
    add(claim(CHAPTER, "paper 001 Fig. 2b", "the larger LSTMs overfit: their error rate goes back up",
              "overfitting",
              f"{big}: best {min(err):.3f} at epoch {int(np.argmin(err)) + 1}, final {err[-1]:.3f}",
              f"final error of {big} > its best + 0.05", bool(err[-1] > min(err) + 0.05)))
    shares = {n: share_lower_at_matched_x(runs[f"URN {n}"].column("train_loss"),
                                          runs[f"URN {n}"].column("error_rate"),
                                          runs[f"LSTM {n}"].column("train_loss"),
                                          runs[f"LSTM {n}"].column("error_rate"))
              for n in pairs}
    valid = {n: s for n, s in shares.items() if s is not None}
    add(claim(CHAPTER, "paper 001 Fig. 2c",
              "at a given training loss, URNs have lower error rates than LSTMs",
              "URN lower",
              "; ".join(f"{n}: URN lower at {100 * s:.0f}% of shared loss levels" if s is not None
                        else f"{n}: no shared range"
                        for n, s in shares.items()),
              "URN lower at >= 80% of the shared training-loss range, every size",
              (all(s >= 0.8 for s in valid.values()) if valid else None),
              partly=any(s >= 0.8 for s in valid.values())))
    if 32 in pairs:
        u32 = runs["URN 32"]
        at_one = [e for e, tl in zip(u32.column("error_rate"), u32.column("train_loss")) if tl >= 1.0]
        add(claim(CHAPTER, "paper 001 Fig. 2c",
                  "the 32-unit URN gets below 0.4 error while its training loss is still as high as 1",
                  "< 0.4 at training loss 1",
                  f"lowest error at training loss >= 1: {min(at_one):.3f}" if at_one
                  else "training loss never >= 1 after epoch 1",
                  "some epoch with training loss >= 1.0 has error < 0.4 (loss in nats per symbol)",
                  bool(at_one and min(at_one) < 0.4) if at_one else None))
    drops = {lab: max(0.0, float(np.max(-np.diff(runs[lab].column("error_rate")), initial=0.0))) + 0.0
             for lab in labels_of(runs, pairs)}
    smoother = [drops[f"URN {n}"] < drops[f"LSTM {n}"] for n in pairs]
    add(claim(CHAPTER, "paper 001 Fig. 2c", "URNs' error rate falls smoothly; LSTMs' drops sharply",
              "URN smoother", "; ".join(f"{lab}: {d:.2f}" for lab, d in drops.items()),
              "largest one-epoch fall of the error rate: URN < LSTM at every size", all(smoother),
              partly=any(smoother)))
    unseen = {lab: float(error_by_length(runs[lab])[lambda s: s.index >= train_k].mean())
              for lab in labels_of(runs, pairs)}
    seen = {lab: float(error_by_length(runs[lab])[lambda s: s.index < train_k].mean())
            for lab in labels_of(runs, pairs)}
    if any(np.isnan(v) for v in unseen.values()):  # the test language has no length beyond the training one
        add(claim(CHAPTER, "paper 001 sec. 3.1, Fig. 2d", "behaviour on lengths unseen in training",
                  "errors on unseen lengths; LSTM better there", "no unseen length in the test set",
                  f"needs test_k > train_k (here {train_k})", None))
        return out
    worse = [unseen[lab] > seen[lab] for lab in unseen]
    add(claim(CHAPTER, "paper 001 sec. 3.1",
              "both architectures fit the training lengths but err on longer, unseen strings",
              "errors on unseen lengths",
              "; ".join(f"{lab}: seen {seen[lab]:.2f}, unseen {unseen[lab]:.2f}" for lab in unseen),
              "mean error over unseen lengths > over seen lengths, every model", all(worse),
              partly=any(worse)))
    lstm_better = [unseen[f"LSTM {n}"] < unseen[f"URN {n}"] for n in pairs]
    add(claim(CHAPTER, "paper 001 Fig. 2d", "LSTMs do better than URNs on lengths unseen in training",
              "LSTM better overall",
              "; ".join(f"{n}: LSTM {unseen[f'LSTM {n}']:.2f} vs URN {unseen[f'URN {n}']:.2f}"
                        for n in pairs),
              "mean unseen-length error LSTM < URN, at most sizes (all but one)",
              sum(lstm_better) >= len(pairs) - 1 and any(lstm_better)))
    sizes = sorted(pairs)
    if len(sizes) > 1:
        urn_error = [unseen[f"URN {n}"] for n in sizes]
        lstm_error = [unseen[f"LSTM {n}"] for n in sizes]
        add(claim(CHAPTER, "paper 001 Fig. 2d",
                  "on unseen lengths URNs improve with more units while LSTMs get worse",
                  "URN better, LSTM worse with size",
                  "URN " + " > ".join(f"{x:.2f}" for x in urn_error)
                  + "; LSTM " + " < ".join(f"{x:.2f}" for x in lstm_error) + f" (sizes {sizes})",
                  "unseen-length error decreases with size for the URN and increases for the LSTM "
                  "(largest vs smallest)",
                  bool(urn_error[-1] < urn_error[0] and lstm_error[-1] > lstm_error[0]),
                  partly=bool(urn_error[-1] < urn_error[0] or lstm_error[-1] > lstm_error[0])))
    return out
