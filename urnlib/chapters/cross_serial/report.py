"""Figures, tables and claims of the cross-serial chapter (paper 001 sec. 3: Fig. 2a-d, Table 1).

The paper's numbers are constants here, each with its source; ours come from the stored runs, several seeds
per model. Every function takes the runs grouped by model, ``{label: Seeds}`` (``Config.view(runs)`` or
:func:`urnlib.seeds.by_label`). A measure of a run is read at its *selected epoch*, the epoch of its lowest
monitored metric (the validation loss, on strings drawn from C_8 like the training strings; the epoch
``keep_best`` keeps), only beside the reading at the paper's final epoch, epoch 100 (:func:`final_row`).
Tables, panel (d) and claims read epoch 100 except where a claim speaks of the whole curve (epochs 1-100).
Figures draw the mean over seeds with a band of ± one standard deviation; curves end where early stopping
ended the runs (the mean and band over the seeds that reach each point). Claims are decided by
:mod:`urnlib.rules` on the seeds' statistics.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

from urnlib.languages import cross_serial as cs
from urnlib.models import build_model, count_parameters
from urnlib.plots.curves import Mark, curves_panel, figure_legend, panel_grid
from urnlib.plots.series import UNIT, SeedCurves
from urnlib.reports.common import looks
from urnlib.results import Run
from urnlib.declare import untrained as guard
from urnlib.seeds import Seeds, Stat, by_label
from urnlib.reports.bibliography import named_text

CHAPTER = "cross_serial"
#: paper 001 Table 1: parameters with V = 10 (LSTM embedding 20), by units
PAPER_TABLE1 = {("LSTM", 32): 7314, ("LSTM", 16): 2738, ("LSTM", 8): 1218,
                ("URN", 32): 5290, ("URN", 16): 1370, ("URN", 8): 370}
PAPER_VOCAB = 10  # the vocabulary size Table 1's counts imply
PAPER_ERROR = 0.10  # paper 001 sec. 3 / Fig. 2b: the best models get below 10% full-string error
PAPER_URN32_ERROR, PAPER_URN32_LOSS = 0.4, 1.0  # paper 001 Fig. 2c: URN 32 below 0.4 error at training loss 1
#: paper 001 sec. 3.1 on Fig. 2c: "In contrast, the LSTM models exhibit a sharp drop in error rate around 0.7
#: training loss."
PAPER_LSTM_DROP_LOSS = 0.7
SHARE = 0.5  # paper 001 sec. 3.1: URNs "tend to achieve lower error rates": at more than half the levels
#: paper 001 sec. 4 trains 100 epochs (and the authors' code the cross-serial models too: reference-facts):
#: the epoch tables and claims read; the epoch of the lowest validation loss (the weights our runs keep) is
#: reported beside it
PAPER_EPOCHS = 100

Grouped = Mapping[str, Seeds]


def grouped(seeds: Mapping) -> dict[str, Seeds]:
    """``{label: Seeds}`` as given; ``{run name: Run}`` (a plan's runs) is grouped first."""
    if all(isinstance(s, Seeds) for s in seeds.values()):
        return dict(seeds)
    return by_label(seeds)


def labels_of(seeds: Grouped, units: list[int]) -> list[str]:
    """Model labels in a stable order: URNs by size, then LSTMs by size (those present)."""
    return [f"{fam} {n}" for fam in ("URN", "LSTM") for n in units if f"{fam} {n}" in seeds]


def ms(stat: Stat, digits: int = 3) -> str:
    """``"0.912 ± 0.004"`` (mean ± sd over the seeds), ``"0.912"`` for one seed, ``"n/a"`` for none."""
    return stat.mean_sd(digits)


def _n_seeds(seeds: Grouped, labels) -> int:
    """The seeds a claim on ``labels`` rests on (the fewest any of them has)."""
    return min(len(seeds[lab]) for lab in labels)


# --------------------------------------------------------------------------- the best epoch of a run
#: the training guard's chance: the cross-entropy of a uniform guess over the vocabulary (nats per symbol)
CHANCE_LOSS = math.log(len(cs.CrossSerialVocab()))


def best_index(run: Run) -> int:
    """The 0-based index of the run's selected epoch: the lowest value (the first of equal ones) of the metric
    its training monitored (the validation loss), the epoch ``keep_best`` keeps; the last epoch for a run
    trained without a monitor."""
    key = run.params.get("train", {}).get("monitor")
    if key is None:  # nothing was selected: the last epoch
        return len(run.history) - 1
    return int(np.argmin(np.asarray(run.column(key), dtype=float)))


def best_row(run: Run) -> dict:
    """The history row of the run's selected epoch (:func:`best_index`: on validation data, under the
    protocol)."""
    return run.history[best_index(run)]


def final_row(run: Run) -> dict:
    """The history row of the paper's final epoch, epoch :data:`PAPER_EPOCHS` (the last of a shorter run)."""
    return run.history[min(PAPER_EPOCHS, len(run.history)) - 1]


def untrained(seeds: Grouped, labels: list[str], read) -> dict[str, str]:
    """The models among ``labels`` that are no evidence, each with why: a seed trained fewer than the paper's
    100 epochs, or the validation loss at the epoch read is not clearly below a uniform guess's
    (:data:`CHANCE_LOSS`, :func:`urnlib.declare.untrained`)."""
    return guard(seeds, labels, epochs=PAPER_EPOCHS, measure=lambda run: read(run)["val_loss"],
                 chance=CHANCE_LOSS, higher=False, what="validation loss",
                 baseline=f"a uniform guess's ln {round(math.exp(CHANCE_LOSS))} = {CHANCE_LOSS:.3f}")


def stopped_early(run: Run) -> bool:
    """Whether the run ended before its epoch cap (early stopping)."""
    return len(run.history) < int(run.params.get("train", {}).get("epochs", len(run.history)))


def error_by_length(run: Run, row: dict | None = None) -> pd.Series:
    """Full-string error rate by m + n in one history row (default: epoch 100's, :func:`final_row`); lengths
    absent from the test set dropped."""
    row = final_row(run) if row is None else row
    wrong, total = np.asarray(row["length_wrong"], float), np.asarray(row["length_total"], float)
    keep = total > 0
    return pd.Series(wrong[keep] / total[keep], index=np.nonzero(keep)[0], name=run.name)


def error_by_length_stats(seeds: Seeds, read=final_row) -> pd.DataFrame:
    """Error rate by m + n at epoch 100 (``read``: another row, e.g. :func:`best_row`): one row per length,
    columns ``mean``, ``sd``, ``low``, ``high`` (mean ∓ sd) and ``seeds`` (seeds whose test sets have it)."""
    frame = pd.DataFrame({i: error_by_length(run, read(run)) for i, run in enumerate(seeds)})  # length x seed
    stats = [Stat.of(frame.loc[length]) for length in frame.index]
    return pd.DataFrame({"mean": [s.mean for s in stats], "sd": [s.sd for s in stats],
                         "low": [s.low for s in stats], "high": [s.high for s in stats],
                         "seeds": [s.n for s in stats]}, index=frame.index)


def error_by_length_table(seeds: Grouped, units: list[int], digits: int = 3) -> pd.DataFrame:
    """Error rate by m + n at epoch 100, ``"mean ± sd"`` over seeds: one row per model, one column per
    length."""
    seeds = grouped(seeds)
    def cell(r) -> str:
        return f"{r['mean']:.{digits}f}" + (f" ± {r['sd']:.{digits}f}" if r["seeds"] > 1 else "")

    rows = {}
    for lab in labels_of(seeds, units):
        rows[lab] = {length: cell(r) for length, r in error_by_length_stats(seeds[lab]).iterrows()}
    return pd.DataFrame(rows).T.rename_axis(index="model", columns="m + n")


def unseen_seen(run: Run, train_k: int, read=final_row) -> tuple[float, float]:
    """Mean error over the lengths unseen in training (m + n >= train_k) and over the seen ones, at epoch 100
    (or the row ``read`` gives; NaN where the test set has none)."""
    errors = error_by_length(run, read(run))
    unseen, seen = errors[errors.index >= train_k], errors[errors.index < train_k]
    return (float(unseen.mean()) if len(unseen) else math.nan, float(seen.mean()) if len(seen) else math.nan)


# --------------------------------------------------------------------------- curves over seeds
def error_against_train_loss(seeds: Seeds, points: int = 40) -> SeedCurves:
    """The error rate as a function of the training loss, each seed's: its curve, sorted by training loss,
    interpolated on ``points`` levels spanning all seeds, at the levels its range covers (drawn as the mean
    at each level over the seeds that cover it, with ± one sd)."""
    curves = []
    for run in seeds:
        x, y = np.asarray(run.column("train_loss"), float), np.asarray(run.column("error_rate"), float)
        order = np.argsort(x)
        curves.append((x[order], y[order]))
    grid = np.linspace(min(x.min() for x, _ in curves), max(x.max() for x, _ in curves), points)
    inside = [(grid >= x.min()) & (grid <= x.max()) for x, _ in curves]
    return SeedCurves([np.interp(grid[keep], x, y) for keep, (x, y) in zip(inside, curves)],
                      x=[grid[keep] for keep in inside])


def _by_length(seeds: Seeds) -> SeedCurves:
    """Each seed's error rate by m + n at epoch 100 (:func:`error_by_length`), over the lengths its test set
    has."""
    rates = [error_by_length(run) for run in seeds]
    return SeedCurves([r.to_numpy() for r in rates], x=[r.index.to_numpy() for r in rates])


def paper_marks() -> dict[str, list[Mark]]:
    """The values paper 001 prints for its Fig. 2, by panel letter (:data:`urnlib.plots.curves.Mark`), each
    labelled with its source; the sentences are the paper's (sec. 3.1)."""
    return {
        # "The best models can achieve less then ten percent error rate on average on the test set."
        "b": [(PAPER_ERROR, named_text(f"paper 001, Fig. 2b:\nbest models < {PAPER_ERROR:.0%} error"))],
        # "For instance, the 32-unit URN is able to obtain an error rate below 0.4 with a training loss as
        # high as 1."
        "c": [(PAPER_URN32_LOSS, PAPER_URN32_ERROR,
               named_text(f"paper 001, Fig. 2c: URN 32\n< {PAPER_URN32_ERROR:g} error at loss "
                          f"{PAPER_URN32_LOSS:g}")),
              # "In contrast, the LSTM models exhibit a sharp drop in error rate around 0.7 training loss."
              (PAPER_LSTM_DROP_LOSS, None,
               named_text(f"paper 001, Fig. 2c: LSTMs'\nsharp drop near loss {PAPER_LSTM_DROP_LOSS:g}"))],
    }


def figure_paper001(seeds: Grouped, units: list[int], train_k: int, marks: bool = True):
    """Paper 001 Fig. 2a-d, each seed's values (:class:`~urnlib.plots.series.SeedCurves`) drawn as seaborn's
    mean over seeds with a band of ± one standard deviation (cut at 0 and 1 for error rates); with ``marks``,
    the values the paper prints for them (:func:`paper_marks`: the 10% error of the best models in (b); the
    URN 32's error below 0.4 at training loss 1 and the LSTMs' drop near 0.7 in (c)), black, each named in its
    panel's legend."""
    drawn = paper_marks() if marks else {}
    seeds = grouped(seeds)
    labels = labels_of(seeds, units)
    styles = looks({lab: seeds[lab] for lab in labels})  # each model's from its spec
    fig, axes = panel_grid(2, 2)
    a, b, c, d = axes.ravel()
    curve = {key: {lab: SeedCurves(seeds[lab].each(lambda run, k=key: run.column(k))) for lab in labels}
             for key in ("test_loss", "error_rate")}
    curves_panel(a, curve["test_loss"], styles, integer_x=True, xlabel="epoch",
                 ylabel="test cross-entropy (nats/symbol)", title="test loss per epoch")
    curves_panel(b, curve["error_rate"], styles, integer_x=True, bounds=UNIT, xlabel="epoch",
                 ylabel="full-string error rate", title="error rate per epoch", marks=drawn.get("b"))
    curves_panel(c, {lab: error_against_train_loss(seeds[lab]) for lab in labels}, styles, bounds=UNIT,
                 xlabel="training loss (nats/symbol)", ylabel="full-string error rate",
                 title="error rate against training loss", invert_x=True, marks=drawn.get("c"))
    curves_panel(d, {lab: _by_length(seeds[lab]) for lab in labels}, styles, bounds=UNIT,
                 xlabel="pattern length m + n", ylabel="full-string error rate",
                 title="error rate by length (epoch 100)", markers=True)
    d.set_ylim(top=max(d.get_ylim()[1], 1.15))  # room above an error rate of 1 for the label
    d.axvspan(train_k - 0.5, d.get_xlim()[1], color="0.9", zorder=0)
    d.text(train_k - 0.4, 0.97, "unseen in\ntraining", transform=d.get_xaxis_transform(), va="top")
    figure_legend(fig, a, max_cols=6)  # the models (the marks are named in their panels)
    return fig


def runs_table(seeds: Grouped, units: list[int]) -> pd.DataFrame:
    """Per model, over seeds (mean ± sd): the test loss and error rate at epoch 100 (the paper's), the
    selected epoch (lowest validation loss) with the validation loss, test loss and error rate there, the
    epochs trained and how many seeds stopped early."""
    seeds = grouped(seeds)
    rows = []
    for lab in labels_of(seeds, units):
        s = seeds[lab]
        rows.append({"model": lab, "seeds": len(s),
                     "selected epoch": ms(s.stat(lambda r: best_index(r) + 1), 1),
                     "epochs trained": ms(s.stat(lambda r: len(r.history)), 1),
                     "stopped early": f"{sum(s.each(stopped_early))} of {len(s)}",
                     "test loss (epoch 100)": ms(s.stat(lambda r: final_row(r)["test_loss"])),
                     "error rate (epoch 100)": ms(s.stat(lambda r: final_row(r)["error_rate"])),
                     "validation loss (selected epoch)": ms(s.stat(lambda r: best_row(r).get("val_loss",
                                                                                            float("nan")))),
                     "test loss (selected epoch)": ms(s.stat(lambda r: best_row(r)["test_loss"])),
                     "error rate (selected epoch)": ms(s.stat(lambda r: best_row(r)["error_rate"]))})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- tables without runs
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
