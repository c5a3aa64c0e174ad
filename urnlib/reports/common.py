"""What the chapters' reports share: the look of a run's curves, curve comparisons for the claims, the
provenance of the runs and the settings section (the top of a chapter's page is
:mod:`urnlib.reports.opening`'s)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from urnlib.models import registry
from urnlib.params import ParameterError
from urnlib.plots.curves import BASELINE
from urnlib.results import Run

__all__ = ["cpu_hours", "settle_unless_decided", "model_spec", "look", "looks", "largest_rise",
           "share_lower_at_matched_x", "unbroken",
           "provenance_table", "provenance", "whose", "settings_section"]


def cpu_hours(*groups) -> float:
    """The hours the runs of ``groups`` (each a :class:`~urnlib.seeds.Seeds` or any iterable of runs) took to
    train, by their records: the process CPU time, else (runs stored before it was recorded) the wall time."""
    return sum(float(run.record.get("cpu_time_s") or run.record.get("wall_time_s") or 0.0)
               for runs in groups for run in runs) / 3600


def model_spec(run: Run) -> dict[str, Any]:
    """The model spec a run stored: ``params["model"]``, or for a run that keeps its kind beside its setup
    (the TPRU chapter's language models: ``params["kind"]``, ``params["setup"]``) the two together."""
    params = run.params
    if isinstance(params.get("model"), dict) and "kind" in params["model"]:
        return params["model"]
    if "kind" in params:
        return {**params.get("setup", {}), "kind": params["kind"]}
    raise ParameterError(f"run {run.name!r} stores no model spec (params['model'] with a 'kind', or "
                         f"params['kind']): its params have {sorted(params)}")


def look(runs: Run | Sequence[Run]) -> registry.Style:
    """The :class:`~urnlib.models.registry.Style` of a run's curves (or of a label's runs, its
    :class:`~urnlib.seeds.Seeds`: their first run's), from its model spec, never its label: a registered
    model kind's (:func:`urnlib.models.registry.style`: the spec ``urn 50 k3`` draws as the k-TURN), and
    :data:`urnlib.plots.curves.BASELINE` for a reference its spec names that is no model kind (Kneser-Ney
    counts, word2vec vectors)."""
    spec = model_spec(runs if isinstance(runs, Run) else runs[0])
    return registry.style(spec) if spec["kind"] in registry.KINDS else BASELINE


def looks(groups: Mapping[str, Run | Sequence[Run]]) -> dict[str, registry.Style]:
    """``{label: look(runs)}`` of a figure's series, ``{label: Seeds}`` (or ``{label: Run}``)."""
    return {label: look(runs) for label, runs in groups.items()}


def largest_rise(values) -> float:
    """Largest rise of a curve above its running minimum (0 for a curve that never goes back up)."""
    x = np.asarray(values, dtype=float)
    return float(np.max(x - np.minimum.accumulate(x)))


def share_lower_at_matched_x(x1, y1, x2, y2, points: int = 25) -> float | None:
    """Fraction of the x-levels both curves reach at which curve 1 is below curve 2.

    Used to compare error rates "at a given training loss" (paper 001 Fig. 2c and 3d): each curve is
    sorted by x and linearly interpolated on ``points`` levels of the shared x-range.

    Returns:
        the fraction, or ``None`` when the two x-ranges do not overlap.
    """
    curves = []
    for x, y in ((x1, y1), (x2, y2)):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        order = np.argsort(x)
        curves.append((x[order], y[order]))
    lo = max(curves[0][0].min(), curves[1][0].min())
    hi = min(curves[0][0].max(), curves[1][0].max())
    if hi <= lo:
        return None
    grid = np.linspace(lo, hi, points)
    first, second = (np.interp(grid, x, y) for x, y in curves)
    return float(np.mean(first < second))


def provenance_table(runs: list[Run]):
    """A pandas DataFrame: which commit, code and machine produced each run, and whether it is stale (why)."""
    import pandas as pd

    rows = []
    for run in runs:
        git = run.record.get("git", {}) or {}
        commit = (git.get("commit") or "unknown")[:10] + (EDITED if git.get("dirty") else "")
        cpu = run.record.get("cpu_time_s")
        reasons = run.stale_reasons()
        rows.append({
            "run": run.name,
            "key": run.record["key"],
            "commit": commit,
            "created": run.record["created"][:16].replace("T", " "),
            "CPU time (min)": "-" if cpu is None else f"{cpu / 60:.1f}",
            "wall time (min)": f"{run.record.get('wall_time_s', 0) / 60:.1f}",
            "torch": (run.record.get("libraries") or run.record.get("versions", {})).get("torch", "?"),
            "status": "stale: " + "; ".join(reasons) if reasons else "current",
        })
    return pd.DataFrame(rows)


def provenance(runs, table=None) -> list:
    """What a chapter shows under "Runs and where they come from": a warning naming the stale runs and why
    (when there are any), what a commit marked *+ edits* means (when one is), then the table of
    :func:`urnlib.results.provenance_table` (or ``table``: that table with columns a chapter adds).
    ``runs``: a dict or list of :class:`~urnlib.results.Run`. Use as ``display(*provenance(runs))``."""
    from IPython.display import Markdown

    runs = list(runs.values()) if isinstance(runs, dict) else list(runs)
    table = provenance_table(runs) if table is None else table
    out = []
    stale = table[table["status"] != "current"]
    if len(stale):
        names = ", ".join(f"*{name}*" for name in stale["run"])
        out.append(Markdown(f"**Warning: {len(stale)} of {len(table)} runs are stale** ({names}): the code "
                            "or libraries that would train them today differ from those that did (the status "
                            "column says how). Run `make reproduce` to retrain them."))
    if table["commit"].str.endswith(EDITED).any():
        out.append(Markdown(f"A run whose commit is marked *{EDITED.strip()}* was trained from that commit "
                            "with changes not yet committed to it; the store keeps those changes beside the "
                            "runs."))
    out.append(table.style.hide(axis="index"))  # last: a chapter may take it
    return out


#: after a commit in the provenance table: the run was trained from that commit with uncommitted changes
EDITED = " + edits"


def whose(comment: str) -> str:
    """Who chose a preset value, from its comment in the parameter file: ``"ours, for time"`` (below the
    papers' scale to fit this machine), ``"ours, data"`` (what stands in for data not reachable here),
    ``"ours"``, ``"papers"`` (a paper or the authors' code) or ``"-"`` (no comment)."""
    text = comment.lower()
    if not text:
        return "-"
    if "ours" in text:
        if "for time" in text:
            return "ours, for time"
        return "ours, data" if any(w in text for w in DATA_WORDS) else "ours"
    return "papers"


#: words with which a parameter file's comment says that a value stands in for data not reachable here
DATA_WORDS = ("reachable", "cannot be downloaded", "stands in")


def _value(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_value(v)}" for k, v in value.items())
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _escaped(text: str) -> str:
    """``text`` for Markdown with every ``<`` outside code spans escaped, so that a token such as ``<unk>`` is
    shown rather than taken for an HTML tag and swallowed."""
    parts = re.split(r"(`+[^`]*`+)", text)
    return "".join(part if part.startswith("`") else part.replace("<", r"\<") for part in parts)


def settings_section(config) -> str:
    """Markdown for a chapter's page: how many of the ``paper`` preset's values (the book's) are the papers'
    and how many are ours (and of those, how many are below the papers' scale to fit this machine), then a
    dropdown with every value of the page's preset and the comment its parameter file gives it. Another
    preset (``tiny``, ``full``) also shows the ``paper`` value it replaces, with its own file's comment or,
    for a value it changes without one, as its own choice. Read from the files (``ChapterConfig.where_from``),
    so the page says what the presets say; values a user overrode are marked."""
    kind = type(config)
    book = kind.where_from("paper")
    names = config.setting_fields()
    kinds = [whose(book.get(name, "")) for name in names]

    def named(which: str) -> str:
        return ", ".join(f"`{name}`" for name, k in zip(names, kinds) if k == which)

    ours = sum(k.startswith("ours") for k in kinds)
    summary = (f"Of the {len(names)} values of the `paper` preset "
               f"(`notebooks/params/{config.CHAPTER}.paper.yaml`, the book's), {kinds.count('papers')} are "
               f"the papers' or their authors' code's and {ours} are ours (the papers give none, the "
               "authors' code differs, or the papers' value does not fit here)")
    scaled, data = kinds.count("ours, for time"), kinds.count("ours, data")
    summary += (f"; {scaled} of ours {'is' if scaled == 1 else 'are'} below the papers' scale to fit this "
                f"machine ({named('ours, for time')})" if scaled else "; none is below the papers' scale")
    summary += (f" and {data} {'stands' if data == 1 else 'stand'} in for data not reachable here "
                f"({named('ours, data')})." if data else ".")
    paper, rows = None, {name: (whose(book.get(name, "")), book.get(name, "")) for name in names}
    if config.scale != "paper":
        paper, own = kind.preset("paper"), kind.where_from(config.scale)
        changed = [name for name in names if paper.get(name) != getattr(config, name)]
        for name in names:   # a value this preset changes and does not comment on is its own choice
            if own.get(name):
                rows[name] = (whose(own[name]), own[name])
            elif name in changed:
                rows[name] = (f"`{config.scale}` preset", f"(the paper preset's: {book.get(name) or '-'})")
        summary += (f" This page was built from the preset `{config.scale}`, which changes {len(changed)} of "
                    "them (the column *paper preset*): its numbers and verdicts are not the book's.")
    header = ["parameter", "value", *(["paper preset"] if paper is not None else []), "whose",
              "where it comes from"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        shown, (who, comment) = _value(getattr(config, name)), rows[name]
        if name in config.overrides:
            shown += f" (preset: {_value(config.overrides[name][0])})"
        cells = [f"`{name}`", shown, *([_value(paper.get(name))] if paper is not None else []), who,
                 comment or "-"]
        lines.append("| " + " | ".join(_escaped(c).replace("|", r"\|") for c in cells) + " |")
    return (summary + "\n\n```{dropdown} Every value of the preset and where it comes from\n"
            + "\n".join(lines) + "\n```\n")


def overfit_rise(curve) -> float:
    """How far a curve (a loss or an error rate over epochs) ends above its lowest value: paper 001's
    overfitting, read the same way in the Dyck and cross-serial chapters."""
    curve = np.asarray(curve, dtype=float)
    return float(curve[-1] - curve.min())


def settle_unless_decided(holds: bool | None, more: str, instead: str) -> str:
    """A claim's settle text: ``more`` (more seeds), unless the claim is decided against the paper (``holds``
    False): more seeds are not the next experiment there, ``instead`` is (what could explain the miss)."""
    if holds is False:
        return ("decided against the paper at these seeds, so more seeds are not the next experiment: "
                + instead)
    return more


def unbroken(value):
    """A "mean ± sd" kept on one line (non-breaking spaces around the ±), so that a narrow table wraps its
    headers, not its numbers: of a string, or of every string cell of a DataFrame."""
    if isinstance(value, str):
        return value.replace(" ± ", "\u00a0±\u00a0")
    return value.map(lambda v: unbroken(v) if isinstance(v, str) else v)
