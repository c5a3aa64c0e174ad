"""The agreement chapter's training-size trend (:mod:`urnlib.chapters.agreement.sizes`, issue 50; not in paper
000): the models' error on test sentences with attractors against the number of training sentences, one panel
per source, with the paper's number marked; the numbers per attractor count; how far each trend would have to
run to reach the paper's error (a least-squares line on log2 of the training sentences, an extrapolation); and
which claims' causes the trend decided (:mod:`urnlib.chapters.agreement.claims_sizes`).

Figures and tables read every run at its best epoch (lowest validation loss), as the chapter's others; the
claims read epoch 10. A size's point is the mean over the trend's seeds, bars ± one standard deviation; the
full size is the chapter's own runs of those seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from urnlib.chapters.agreement.claims_read import best_row, by_attractors, with_attractors
from urnlib.chapters.agreement.claims_sizes import (PAPER_TRAIN, Part, Points, fit_part, sentences, size_of,
                                                    trends_of)
from urnlib.chapters.agreement.report_linzen import PAPER_ERROR
from urnlib.plots.curves import panels_figure
from urnlib.plots.series import SeedCurves
from urnlib.reports.common import looks
from urnlib.reports.opening import displayed
from urnlib.seeds import Stat
from urnlib.reports.bibliography import named_text

__all__ = ["ERROR", "figure", "tables", "sizes_text", "extrapolation_text", "found_text", "found",
           "causes_text", "sizes_section"]

#: the figure's measure: the error on test sentences with attractors, at the best epoch, against the paper's
#: "error rates well under one percent" (paper 000 sec. 4)
ERROR = Part("the error on test sentences with attractors", lambda s: s.stat(lambda r: 1 - with_attractors(
    best_row(r))), PAPER_ERROR, False)
#: the paper's number, drawn on every panel: its 3-TURN's error on its training size
PAPER_MARK = (PAPER_TRAIN, PAPER_ERROR, named_text("paper 000: 3-TURN < 1%,\n1.5 million sentences"))
#: doublings past which the text gives no number of sentences (one with 20 digits says nothing)
FAR = 30
#: the error axis (log): its lowest value (an error below it, or a mean - sd, is drawn there)
FLOOR = 1e-3


def _series(points: Points) -> SeedCurves:
    """Each seed's error at every size, at the size's mean training sentences (seaborn's mean ± sd over the
    seeds; a seed missing at a size is left out there); an error below :data:`FLOOR` (0: no sentence wrong)
    is drawn at it, where the log axis can show it."""
    sizes = [sentences(seeds) for _, seeds in points]
    values = [dict(zip(seeds.seeds, np.maximum(ERROR.measure(seeds).values, FLOOR))) for _, seeds in points]
    every = sorted({s for v in values for s in v})
    return SeedCurves([[v[s] for v in values if s in v] for s in every],
                      x=[[x for x, v in zip(sizes, values) if s in v] for s in every])


def figure(trends: dict[str, dict[str, Points]]):
    """Error on test sentences with attractors against training sentences (log-log), one panel per source,
    each model's mean over seeds with a ± sd band; dotted, each model's least-squares line on log2 of the
    sentences run on to the paper's training size (an extrapolation); the paper's 3-TURN point marked."""
    panels, styles = [], {}
    for source, models in trends.items():
        styles |= looks({label: points[-1][1] for label, points in models.items()})
        panels.append({"series": {label: _series(points) for label, points in models.items()},
                       "xlabel": "training sentences", "ylabel": "error, sentences with attractors",
                       "title": source, "logy": True, "markers": True, "bounds": (FLOOR, 1.0),
                       "marks": [PAPER_MARK]})
    fig = panels_figure(panels, styles)
    for ax, models in zip(fig.axes, trends.values()):
        ax.set_xscale("log")
        for label, points in models.items():
            fit = fit_part(points, ERROR)
            if math.isnan(fit.slope):
                continue
            top = math.log2(sentences(points[-1][1]))
            xs = np.linspace(top, math.log2(PAPER_TRAIN), 20)
            start = fit.intercept + fit.slope * top  # the line itself, from the largest size on
            ys = start + fit.slope * (xs - top)  # drawn down to the axis' floor, not along it
            ax.plot(2 ** xs, np.where(ys >= FLOOR, np.minimum(ys, 1.0), np.nan), linestyle=":",
                    linewidth=1.0, color=styles[label].matplotlib(0)["color"])
        ax.set_xlim(min(sentences(p[0][1]) for p in models.values()) / 1.5, PAPER_TRAIN * 1.5)
        ax.set_ylim(FLOOR / 1.3, 1.0)  # one error axis on every panel
    return fig


def tables(trends: dict[str, dict[str, Points]], min_total: int = 1) -> dict[str, pd.DataFrame]:
    """The numbers of :func:`figure` and per attractor count, one table per source: a column per model and
    size (its training sentences), rows the error on sentences with attractors, the accuracy on all test
    sentences and per attractor count (counts with ``min_total`` test sentences on every seed), mean ± sd."""
    out = {}
    for source, models in trends.items():
        columns = {}
        for label, points in models.items():
            for share, seeds in points:
                acc = by_attractors(seeds, min_total)
                column = {"error, with attractors": ERROR.measure(seeds).mean_sd(3),
                          "accuracy, all": seeds.stat(lambda r: best_row(r)["accuracy"]).mean_sd(3)}
                column |= {f"accuracy, {int(k)} attractor{'s' if k != 1 else ''}":
                           _stat(acc["per_seed"][:, i]) for i, k in enumerate(acc["count"])}
                columns[f"{label}, {size_of(share, seeds)} ({sentences(seeds):,.0f})"] = column
        table = pd.DataFrame(columns).fillna("")
        table.index.name = "measure"
        out[source] = table
    return out


def _stat(values) -> str:
    return Stat.of(values).mean_sd(3)


def sizes_text(trends: dict[str, dict[str, Points]]) -> str:
    """What the sizes are, source by source, and which sentences train and test (Markdown)."""
    lines = []
    for source, models in trends.items():
        points = next(iter(models.values()))
        sizes = ", ".join(f"{sentences(seeds):,.0f} ({size_of(share, seeds)})" for share, seeds in points)
        seeds = sorted({s for _, group in points for s in group.seeds})
        lines.append(f"* **{source}**: {sizes} training sentences, seeds {seeds}, models "
                     f"{', '.join(models)}.")
    return "\n".join(lines)


def extrapolation_text(trends: dict[str, dict[str, Points]]) -> str:
    """How far each model's trend would have to run to reach the paper's error (Markdown, one item per source
    and model); an extrapolation, and said to be one."""
    lines = []
    for source, models in trends.items():
        for label, points in models.items():
            fit = fit_part(points, ERROR)
            if math.isnan(fit.slope):
                lines.append(f"* *{source}*, {label}: one size only, no trend.")
                continue
            if fit.slope == 0 or math.isnan(fit.pvalue):
                lines.append(f"* *{source}*, {label}: the error on sentences with attractors does not change "
                             "with the training sentences.")
                continue
            slope = (f"{'falls' if fit.slope < 0 else 'rises'} by {abs(fit.slope):.3f} per doubling of the "
                     f"training sentences (p = {fit.pvalue:.2g}"
                     + ("" if fit.improves else ", not a significant fall") + ")")
            if fit.need == 0:
                reach = "it is already below the paper's 1%"
            elif math.isinf(fit.need):
                reach = "on that line no number of sentences reaches the paper's 1%"
            elif fit.need > FAR:
                reach = (f"on that line it would reach the paper's 1% only after {fit.need:.0f} more "
                         f"doublings, far beyond the paper's {PAPER_TRAIN / 1e6:.2f} million sentences "
                         f"({fit.room:.1f} doublings)")
            else:
                size = sentences(points[-1][1]) * 2 ** fit.need
                reach = (f"on that line it would reach the paper's 1% after {fit.need:.1f} more doublings, "
                         f"at about {size:,.0f} sentences ("
                         + ("within" if fit.need <= fit.room else "beyond")
                         + f" the paper's {PAPER_TRAIN / 1e6:.2f} million)")
            lines.append(f"* *{source}*, {label}: the error on sentences with attractors {slope}; {reach}.")
    return "\n".join(lines)


def found_text(trends: dict[str, dict[str, Points]], decided) -> str:
    """What the size trend found, in two sentences written from the runs (Markdown): which models' error on
    sentences with attractors falls significantly with the training sentences (best epoch, as the figure),
    and how many of the claims it was trained for it puts down to the data (read at epoch 10)."""
    falls, not_falls = [], []
    for source, models in trends.items():
        for label, points in models.items():
            fit = fit_part(points, ERROR)
            if math.isnan(fit.slope):
                continue
            if fit.improves:
                falls.append(f"{label} on *{source}* ({fit.slope:+.3f} per doubling, p = {fit.pvalue:.2g})")
            else:
                not_falls.append(f"{label} on *{source}*")
    said = ["The error on test sentences with attractors (each run at its best epoch, as the figure reads "
            f"it) falls significantly with more training sentences for {_listed(falls) or 'no model'}"
            + (f", not for {_listed(not_falls)}." if not_falls else ".")]
    causes = [c.cause for c in decided if str(getattr(c, "evidence", "")).startswith("size trend")]
    if causes:
        data = causes.count("data")
        said.append(f"Of the {len(causes)} claims missed where a trend was trained (read at epoch 10), it "
                    f"puts {data} down to the data (its line reaches the paper's value within the paper's "
                    f"{PAPER_TRAIN / 1e6:.2f} million sentences, an extrapolation) and leaves "
                    f"{len(causes) - data} open.")
    return " ".join(said)


def _listed(items: list[str]) -> str:
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def causes_text(decided) -> str:
    """The claims whose cause the size trend decided (their ``evidence`` starts with the trend), as a list."""
    rows = [f"* {c.statement}: **{c.cause}**. {c.evidence}" for c in decided
            if str(getattr(c, "evidence", "")).startswith("size trend")]
    return "\n".join(rows) if rows else "*No claim missed where a size trend was trained.*"


def found(runs, decided) -> str:
    """:func:`found_text` of the chapter's runs (``runs.sizes``), or a note where no trend was trained."""
    trends = trends_of(runs.sizes, runs.by_source)
    return found_text(trends, decided) if trends else "*No size trend in this preset (`sizes` is empty).*"


def sizes_section(runs, decided) -> tuple:
    """``(figure, items)`` of the page's section: the figure (``None`` when no size trend was trained), and
    what the page shows beside it, ready for ``display(*items)`` (Markdown and the numbered tables). ``runs``
    as :func:`urnlib.chapters.agreement.experiment.run` returns them (``runs.sizes``), ``decided`` the
    chapter's claims."""
    from IPython.display import Markdown

    trends = trends_of(runs.sizes, runs.by_source)
    if not trends:
        return None, [Markdown("*No size trend in this preset (`sizes` is empty).*")]
    items = [Markdown("The sizes, with the training sentences of each (the mean over the seeds):\n\n"
                      + sizes_text(trends)),
             Markdown("How far each trend would have to run to reach the paper's error, on a least-squares "
                      "line through every seed's run on log2 of the training sentences. **This is an "
                      "extrapolation** beyond the sizes trained, not a measurement:\n\n"
                      + extrapolation_text(trends))]
    captions = []
    for source, table in tables(trends).items():  # one table per model: narrow enough for a folded section
        for label in trends[source]:
            items.append(table[[c for c in table.columns if c.startswith(f"{label}, ")]])
            captions.append((
                f"The numbers of {{numref}}`fig-agreement-sizes`, *{source}*, {label}: per size (its "
                "training sentences, the mean over seeds), the error on test sentences with attractors, the "
                "accuracy on all test sentences and per attractor count, mean ± sd over seeds at each run's "
                "best epoch.",
                f"tbl-agreement-sizes-{source}-{label.lower().replace(' ', '-')}"))
    items.append(Markdown("The claims whose cause the trend decided (read at epoch 10, as the claims "
                          "are):\n\n" + causes_text(decided)))
    return figure(trends), displayed(items, captions)
