"""The agreement chapter's pooled size trend on Linzen et al.'s files (issue 50; not in paper 000): the
accuracy per attractor count against the number of training sentences, on the validation file's sentences
alone and with a share of each test file pooled into training (held apart from the sentences tested:
:mod:`urnlib.chapters.agreement.sizes`), to tell the training set's size apart from its distribution.

Both trends read each run at its best epoch (lowest validation loss), as the chapter's figures. The pooled
trend is tested on the test files' held-out share only, the same sentences for every pooled run; the trend on
the validation file's sentences on the whole test files (the same distribution, twice the sentences). The
direct comparison on one test set: the chapter's own runs (no test-file sentence trained) scored again from
their stored weights on the held-out share (:func:`rescored`, evaluation only, no training), kept in
:data:`CACHE` beside the runs, each under its run's key and the pool, once computed and checked against the
run's stored data.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
import torch

from urnlib.chapters.agreement.claims_read import best_row
from urnlib.chapters.agreement.claims_sizes import PAPER_TRAIN, Points, pooled_trends_of, size_of, trends_of
from urnlib.chapters.agreement.report_linzen import PAPER_ERROR, SOURCE
from urnlib.errors import DataError
from urnlib.plots.curves import column_figure, draw_marks
from urnlib.plots.layout import fitting_legend
from urnlib.reports.bibliography import named_text
from urnlib.seeds import Seeds, Stat, coords_of
from urnlib.tasks.agreement import _split, encode_examples, evaluate_agreement, make_data, task_of

__all__ = ["CACHE", "COUNTS", "PLAIN", "POOLED", "RESCORED", "pool_of", "rescored", "frame", "figure",
           "tables", "reach_text", "found_text", "data_text", "pooled_section"]

#: the file beside the chapter's runs that keeps the chapter's runs scored on the pooled trend's test share
CACHE = "pooled_test.json"
#: the attractor counts drawn (the test files'; the 0 bucket is held-out validation sentences, not a file's)
COUNTS = (1, 2, 3, 4, 5)
#: the three series of the figure, by the training sentences they read
PLAIN = "validation file only"
POOLED = "test files pooled"
RESCORED = "validation file only, scored on the pooled test share"
#: the paper's 3-TURN: "error rates well under one percent" on about 1.5 million sentences (paper 000 sec. 4)
PAPER_MARK = (PAPER_TRAIN, 1 - PAPER_ERROR, named_text("paper 000: 3-TURN > 99%, 1.5 million sentences"))


def pool_of(points: Points) -> float:
    """The pool of a pooled trend's runs (one a source: :func:`urnlib.chapters.agreement.sizes.sizes_of`)."""
    return float(coords_of(points[0][1].runs[0])["pool"])


def _score(run, pool: float) -> dict:
    """One of the chapter's runs scored on the pooled trend's test sentences: its training data built again
    (the vocabulary it was trained with; checked against what it stored), its stored weights (the best epoch),
    the test files' held-out share and the run's own 0 bucket."""
    task = task_of(run.params["task"])
    data = make_data(task, True, run.params.get("train_fraction", 1.0))
    stored = run.final["data"]
    if (len(data.vocab), data.stats["train_examples"]) != (stored["vocabulary"], stored["train_examples"]):
        raise DataError(f"run {run.name}: its training data built again ({len(data.vocab)} tokens, "
                        f"{data.stats['train_examples']} sentences) is not what it stored "
                        f"({stored['vocabulary']}, {stored['train_examples']}); retrain it (mode train) or "
                        "restore the data")
    _, test, _ = _split(task, pool)
    data.test = encode_examples(test, data.vocab)
    data.test_attractors = torch.tensor([ex.n_attractors for ex in test])
    model = run.model(stored["vocabulary"], extra=("head_embedding",))
    scored = evaluate_agreement(model, data)
    return {"name": run.name, "pool": pool, "train_examples": stored["train_examples"], **scored}


def rescored(seeds: Seeds, pool: float) -> Seeds:
    """``seeds`` (the chapter's runs of one model) scored on the test sentences of the pooled trend of
    ``pool`` (:func:`_score`), as runs whose best row is that score; read from :data:`CACHE` where kept, else
    computed (some seconds a run) and written there."""
    path = Path(seeds.runs[0].path).parent.parent / CACHE
    kept = json.loads(path.read_text()) if path.is_file() else {}
    keys = [f"{run.record['key']} pool {pool:g}" for run in seeds]
    todo = [(key, run) for key, run in zip(keys, seeds) if key not in kept]
    for key, run in todo:
        kept[key] = _score(run, pool)
    if todo:
        path.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")
    return Seeds(RESCORED, [_Scored(kept[key], run) for key, run in zip(keys, seeds)], list(seeds.seeds))


class _Scored:
    """A chapter's run as its score on the pooled test share: one row, its training sentences."""

    def __init__(self, row: dict, run):
        self.history = [row]
        self.final = {"data": {"train_examples": row["train_examples"]}}
        self.coords, self.name = {**run.coords, "setting": RESCORED}, run.name
        self.params = run.params

    def column(self, key):
        return [row[key] for row in self.history]


def _rows(trend: str, points: Points, model: str) -> list[dict]:
    rows = []
    for share, seeds in points:
        size = float(np.mean([run.final["data"]["train_examples"] for run in seeds]))
        for run, seed in zip(seeds.runs, seeds.seeds):
            row = best_row(run) if trend != RESCORED else run.history[-1]
            for n in COUNTS:
                if n < len(row["attr_total"]) and row["attr_total"][n]:
                    rows.append({"model": model, "trend": trend, "attractors": str(n), "seed": seed,
                                 "sentences": size, "size": size_of(share, seeds),
                                 "accuracy": row["attr_correct"][n] / row["attr_total"][n]})
    return rows


def frame(plain: dict[str, Points], pooled: dict[str, Points], again: dict[str, Seeds] | None = None
          ) -> pd.DataFrame:
    """Every run's accuracy per attractor count (:data:`COUNTS`) at its best epoch, by model and trend
    (:data:`PLAIN`, :data:`POOLED`, and :data:`RESCORED` for ``again``: the chapter's runs on the pooled test
    share), at the size's mean training sentences."""
    rows = []
    for model, points in pooled.items():
        rows += _rows(POOLED, points, model) + _rows(PLAIN, plain.get(model, []), model)
        if again and model in again:
            rows += _rows(RESCORED, [(1.0, again[model])], model)
    return pd.DataFrame(rows)


def figure(data: pd.DataFrame):
    """Accuracy per attractor count (colour) against the training sentences (log), one panel per model: the
    pooled trend solid (circles), the trend on the validation file's sentences dashed (squares), the
    chapter's runs on the pooled test share as crosses; means over seeds with ± sd bars; the paper's 3-TURN
    marked on its panel."""
    models = list(dict.fromkeys(data["model"]))
    fig, axes, _ = column_figure(len(models), row_height=3.1)
    palette = dict(zip([str(n) for n in COUNTS], sns.color_palette("flare", len(COUNTS))))
    for ax, model in zip(axes, models):
        part = data[data["model"] == model]
        sns.lineplot(data=part[part["trend"] != RESCORED], x="sentences", y="accuracy", hue="attractors",
                     style="trend", style_order=[POOLED, PLAIN], hue_order=list(palette), palette=palette,
                     markers={POOLED: "o", PLAIN: "s"}, dashes={POOLED: "", PLAIN: (3, 2)}, errorbar="sd",
                     err_style="bars", ax=ax, legend=ax is axes[0])
        again = part[part["trend"] == RESCORED]
        if len(again):
            sns.scatterplot(data=again, x="sentences", y="accuracy", hue="attractors", palette=palette,
                            marker="X", s=45, ax=ax, legend=False, zorder=4)
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_title(model)
        ax.set_xlabel("training sentences")
        ax.set_ylabel("accuracy")
        ax.set_xlim(data["sentences"].min() / 1.6, PAPER_TRAIN * 2)  # one axis, on to the paper's size
    legend = axes[0].get_legend()  # seaborn's, of the first panel: one legend below the panels
    if legend is not None:
        handles, names = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
        legend.remove()
        names = [{"attractors": "attractors:", "trend": "training sentences:"}.get(n, n) for n in names]
        fitting_legend(fig, handles, names, max_cols=5, frameon=False)
    for ax, model in zip(axes, models):
        if model.endswith("TURN"):  # the paper's numbers are its 3-TURN's
            draw_marks(ax, [PAPER_MARK])
    return fig


def tables(data: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The numbers of :func:`figure`, one table per model: a column per trend and size (its mean training
    sentences), a row per attractor count, mean ± sd over seeds."""
    out = {}
    for model, part in data.groupby("model", sort=False):
        columns = {}
        for (trend, size, sentences), group in part.groupby(["trend", "size", "sentences"], sort=False):
            name = f"{trend}: {size}" if trend != RESCORED else trend
            name += f" ({sentences:,.0f})"
            columns[name] = {f"{n} attractor{'s' if n != '1' else ''}": Stat.of(g["accuracy"]).mean_sd(3)
                             for n, g in group.groupby("attractors")}
        table = pd.DataFrame(columns)
        table.index.name = "accuracy"
        out[model] = table[sorted(table.columns, key=lambda c: (not c.startswith(PLAIN + ":"),
                                                                 c.startswith(RESCORED)))]
    return out


def reach_text(data: pd.DataFrame) -> str:
    """Per model and attractor count, each trend's least-squares line of accuracy on log2 of the training
    sentences (every seed's run), its slope per doubling and how many more doublings it would need to reach
    the paper's 99% (an extrapolation), as a Markdown list."""
    from scipy import stats as _stats

    lines = []
    for model, part in data.groupby("model", sort=False):
        said = []
        for n, group in part.groupby("attractors"):
            each = []
            for trend in (PLAIN, POOLED):
                g = group[group["trend"] == trend]
                if g["sentences"].nunique() < 2:
                    continue
                fit = _stats.linregress(np.log2(g["sentences"]), g["accuracy"])
                top = math.log2(g["sentences"].max())
                gap = (1 - PAPER_ERROR) - (fit.intercept + fit.slope * top)
                need = 0 if gap <= 0 else (gap / fit.slope if fit.slope > 0 else math.inf)
                size = g["sentences"].max() * 2 ** need if not math.isinf(need) else math.inf
                where = ("never on that line" if math.isinf(need) else "already" if need == 0 else
                         f"at about {size:,.0f} sentences" if size <= PAPER_TRAIN else
                         f"after {need:.1f} more doublings, beyond the paper's "
                         f"{PAPER_TRAIN / 1e6:.2f} million")
                each.append(f"{trend} {fit.slope:+.3f} per doubling (p = {fit.pvalue:.2g}), 99% {where}")
            said.append(f"{n}: " + "; ".join(each))
        lines.append(f"* **{model}**, by attractor count: " + " · ".join(said) + ".")
    return "\n".join(lines)


def found_text(data: pd.DataFrame | None) -> str:
    """What the pooled trend found, written from the runs (Markdown): per model, the accuracy at the fewest
    and the most attractors (:data:`COUNTS`) of the chapter's runs scored on the pooled test share, then of
    the smallest and the largest pooled training set (means over seeds, best epochs)."""
    if data is None or not len(data):
        return "*No pooled size trend in this preset.*"
    said, sizes = [], ""
    for model, part in data.groupby("model", sort=False):
        pooled, own = part[part["trend"] == POOLED], part[part["trend"] == RESCORED]
        if own.empty or pooled.empty:
            continue
        points = [own, pooled[pooled["sentences"] == pooled["sentences"].min()],
                  pooled[pooled["sentences"] == pooled["sentences"].max()]]
        said.append(f"**{model}** " + ", ".join(" and ".join(
            f"{rows[rows['attractors'] == str(n)]['accuracy'].mean():.2f}" for n in (COUNTS[0], COUNTS[-1]))
            for rows in points))
        low, high = (f"{rows['sentences'].iloc[0]:,.0f}" for rows in points[1:])
        sizes = (f"after the validation file's {own['sentences'].iloc[0]:,.0f} sentences, then after {low} "
                 f"and {high} pooled ones")
    if not said:
        return ""
    return (f"On the same held-out test sentences, the accuracy at {COUNTS[0]} and at {COUNTS[-1]} "
            f"attractors {sizes}: " + "; ".join(said) + " (means over seeds, each run at its best epoch).")


def data_text(pooled: dict[str, Points]) -> str:
    """Which sentences the pooled runs train and test on, from the data statistics of the first seed's run on
    all pooled sentences (Markdown)."""
    share, seeds = next(iter(pooled.values()))[-1]
    stats = seeds.runs[0].final["data"]
    info, tests = stats["linzen"], stats["test_attractors"]
    each = ", ".join(f"{info['pooled'][str(n)]:,} of {n} attractor{'s' if n > 1 else ''} (testing "
                     f"{tests.get(str(n), 0):,})" for n in COUNTS)
    return (f"**Which sentences train and test.** A fixed draw by sentence (the same for every seed) puts "
            f"{info['pool']:.0%} of each test file's sentences into training: {each}. Beside them train the "
            "validation file's sentences, as in the chapter's runs; a training sentence with the words of a "
            f"tested one is dropped ({info['dropped']:,} here), so **no sentence is both trained on and "
            "tested**, and **the test buckets are smaller** than the chapter's, which test whole files. The "
            "validation sentences that pick each run's epoch are carved from the training side, as in the "
            f"chapter's runs. At {size_of(share, seeds)} the first seed's run trains on "
            f"{stats['train_examples']:,} sentences and selects on {stats.get('valid_examples', 0):,}.")


def pooled_section(runs) -> tuple:
    """``(figure, items, data)`` of the page's pooled section (``None`` figure without a pooled trend): the
    figure, the Markdown and numbered tables beside it, and the numbers (:func:`frame`)."""
    from IPython.display import Markdown

    from urnlib.reports.opening import displayed

    pooled = pooled_trends_of(runs.sizes).get(SOURCE, {})
    if not pooled:
        return None, [Markdown("*No pooled size trend in this preset.*")], None
    plain = trends_of(runs.sizes, runs.by_source).get(SOURCE, {})
    pool = pool_of(next(iter(pooled.values())))
    wanted = {s for points in pooled.values() for _, seeds in points for s in seeds.seeds}
    again = {}
    for model in pooled:
        own = runs.by_source.get(SOURCE, {}).get(model)
        if own is not None:
            kept = [(r, s) for r, s in zip(own.runs, own.seeds) if s in wanted]
            again[model] = rescored(Seeds(own.label, [r for r, _ in kept], [s for _, s in kept]), pool)
    data = frame(plain, pooled, again)
    items = [Markdown(data_text(pooled)), Markdown(
        "How far each trend would have to run to reach the paper's 99% at every count, on a least-squares "
        "line of the accuracy on log2 of the training sentences through every seed's run. **This is an "
        "extrapolation** beyond the sizes trained, not a measurement:\n\n" + reach_text(data))]
    captions = []
    for model, table in tables(data).items():
        items.append(table)
        captions.append((f"The numbers of {{numref}}`fig-agreement-pooled`, {model}: accuracy per attractor "
                         "count at each run's best epoch, mean ± sd over seeds, per trend and size (its mean "
                         "training sentences).", f"tbl-agreement-pooled-{model.lower().replace(' ', '-')}"))
    return figure(data), displayed(items, captions), data
