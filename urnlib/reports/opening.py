"""The top of a chapter's page: its results in a few generated sentences (from its claims, never typed), the
command that regenerates it and what its runs cost, the papers cited by authors and year rather than by file
number, and results tables numbered with their printed precision.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from urnlib.claims import anchor
from urnlib.reports.bibliography import PAPERS, named_text
from urnlib.reports.common import _escaped

__all__ = ["PAPERS", "cite_papers", "results_summary", "runs_cost", "regenerate_line", "chapter_opening",
           "numbered_table", "MISSED_BECAUSE", "displayed", "artefacts_line"]


# ------------------------------------------------------------------------ the top of a chapter's page
_PAPER = re.compile(r"\b(?:[Pp]aper|[Ll]ecture) (00\d)\b")


def cite_papers(text: str, role: str = "alp") -> str:
    """``text`` with every paper named by its file number (``paper 000``, ``lecture 004``) replaced by a
    citation of it (MyST, sphinxcontrib-bibtex's ``{cite:ROLE}``; ``alp``: "Bernardy and Lappin, 2022", for
    use inside parentheses, with a comma before what follows it: "paper 000 Fig. 3" -> "Bernardy and Lappin,
    2022, Fig. 3"; ``t``: "Bernardy and Lappin [2022]", in a sentence). A number that :data:`PAPERS` does not
    know is left as it is."""
    def cited(m: re.Match) -> str:
        if m.group(1) not in PAPERS:
            return m.group()
        follows = text[m.end():m.end() + 2]
        comma = "," if role == "alp" and follows[:1] == " " and follows[1:2].isalnum() else ""
        return f"{{cite:{role}}}`{PAPERS[m.group(1)]}`{comma}"

    return _PAPER.sub(cited, text)


def _markdown_text(text: str) -> str:
    """Plain text (a claim's statement) for Markdown: the characters Markdown or MyST would read as markup
    (emphasis, roles, math, HTML tags) backslashed, so that it shows as written."""
    return re.sub(r"([\\`*_{}\[\]<>#|~^$])", r"\\\1", text)


def _counted(counts: Mapping[str, int]) -> str:
    """``{"reproduced": 3, "inconclusive": 1}`` -> ``"3 are reproduced and 1 inconclusive"`` (zeros left
    out; the verb after the first number only)."""
    parts = [f"{n} {what}" for what, n in counts.items() if n]
    if not parts:
        return "none"
    first = next(n for n in counts.values() if n)
    parts[0] = parts[0].replace(" ", " is " if first == 1 else " are ", 1)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _bare(statement: str) -> tuple[str, str]:
    """A claim's statement without the training setting it starts with (``"[lr 0.01] ..."``), and that
    setting (``""`` when it names none)."""
    if statement.startswith("[") and "] " in statement:
        setting, rest = statement[1:].split("] ", 1)
        return rest, setting
    return statement, ""


#: why a claim is missed, as the opening paragraph of a chapter says it (one per cause of
#: :data:`urnlib.claims.CAUSES`; the claims table gives the evidence)
MISSED_BECAUSE = {
    "paper": "because the paper's own numbers or formulas disagree",
    "data": "because the paper's data is not reachable here",
    "scale": "because the compute here is below the paper's",
    "setting": "under one training setting but reproduced (or reached with more data) under another",
    "noise": "because the difference is within the seeds' spread",
    "untrained": "because a model it rests on did not train",
    "tie": "because every seed of every model gives the same value (the task cannot order them)",
    "authors": "even with the models trained as the authors' code trains them",
    "open": "for a reason not known yet (each claim names the experiment that would settle it)",
}


def _shortened(text: str, most: int = 90) -> str:
    """``text`` cut at the last word that ends within ``most`` characters, with an ellipsis (the claims table
    gives the whole statement)."""
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _settings_text(settings: Sequence[str], emphasis: bool = True) -> str:
    """``a``, ``a and b``, ``a, b and c`` (each in italics, as Markdown, unless not ``emphasis``)."""
    named = [f"*{_markdown_text(s)}*" for s in settings] if emphasis else list(settings)
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def _misses_sentence(missed: Sequence, cause: str | None, settings: Sequence[str], most: int,
                     setting: str) -> str:
    """One sentence: the claims missed for one cause, each statement once, linked to its group in the page's
    claims table (:func:`urnlib.claims.anchor`), with its source and the settings it is missed under (all of
    them: "every setting"), at most ``most`` of them."""
    groups: dict[str, dict] = {}
    for c in missed:
        bare, named = _bare(c.statement)
        entry = groups.setdefault(bare, {"source": c.source, "settings": [], "verdicts": set(),
                                         "anchor": anchor(c.chapter, c.source)})
        entry["settings"].append(named)
        entry["verdicts"].add(c.verdict)
    items = []
    for bare, entry in list(groups.items())[:most]:
        where = cite_papers(entry["source"])
        named = [s for s in entry["settings"] if s]
        if named:
            where += f"; every {setting}" if len(named) == len(settings) > 1 else f"; {_settings_text(named)}"
        partly = ", partly" if entry["verdicts"] == {"partly reproduced"} else ""
        link = f'<a href="#{entry["anchor"]}">*{_markdown_text(_shortened(named_text(bare)))}*</a>'
        items.append(f"{link} ({where}{partly})")
    if len(groups) > most:
        items.append(f"and {len(groups) - most} more (the claims table)")
    why = MISSED_BECAUSE.get(cause or "", f"(cause *{cause or 'not recorded'}*)")
    return f"Not reproduced {why}: " + "; ".join(items) + "."


def results_summary(claims: Sequence, most: int = 2, setting: str = "training setting") -> str:
    """The opening paragraph of a chapter, from its claims (:class:`urnlib.claims.Claim`): how many of the
    papers' claims each verdict has, which are not (or only partly) reproduced and why (a sentence per cause,
    each statement once with the settings it is missed under, at most ``most`` per cause), why the undecided
    ones are undecided, and the extensions (claims the papers do not make) apart. Markdown with citations.
    A statement that starts with ``"[NAME] "`` is decided under the ``setting`` NAME (the zoo's: a task)."""
    from urnlib.claims import CAUSES, UNDECIDED, VERDICTS

    papers = [c for c in claims if not c.extension]
    extensions = [c for c in claims if c.extension]
    main = papers or extensions
    if not main:
        return "This chapter decides no claim."
    keys = list(dict.fromkeys(PAPERS[m.group(1)] for c in main for m in _PAPER.finditer(c.source)
                              if m.group(1) in PAPERS))
    whose = _settings_text([f"{{cite:t}}`{key}`" for key in keys], emphasis=False) if keys else "the papers"
    counts = {v: sum(c.verdict == v for c in main) for v in VERDICTS}
    settings = list(dict.fromkeys(s for s in (_bare(c.statement)[1] for c in main) if s))
    if papers:
        head = f"Of the {len(main)} claims of {whose} decided here"
    else:
        head = (f"This chapter's {len(main)} claims carry sentences of {whose} to other cells, tasks or "
                "sizes (they are ours, not the papers'); of them")
    if len(settings) > 1:
        head += f" (each under every {setting}: {_settings_text(settings)})"
    sentences = [f"{head}, {_counted(counts)}."]
    missed = [c for c in main if c.verdict in ("not reproduced", "partly reproduced")]
    for cause in [*CAUSES, None]:
        mine = [c for c in missed if c.cause == cause]
        if mine:
            sentences.append(_misses_sentence(mine, cause, settings, most, setting))
    for verdict in UNDECIDED:
        mine = [c for c in main if c.verdict == verdict]
        if mine:
            why = {k: sum(c.cause == k for c in mine) for k in [*CAUSES, None]}
            sentences.append(f"{verdict.capitalize()}: " + "; ".join(
                f"{n} {MISSED_BECAUSE.get(k or '', f'(cause {k})')}" for k, n in why.items() if n) + ".")
    if papers and extensions:
        ext = {v: sum(c.verdict == v for c in extensions) for v in VERDICTS}
        sentences.append(f"{len(extensions)} more {'claim is' if len(extensions) == 1 else 'claims are'} "
                         f"ours, not the papers' (extensions, counted apart): {_counted(ext)}.")
    return " ".join(sentences)


def runs_cost(runs) -> dict[str, float]:
    """What training ``runs`` (a dict or an iterable of :class:`~urnlib.results.Run`) took, from their
    records: ``runs``, ``cpu_hours`` (of the runs that recorded CPU time), ``without_cpu`` (runs that did
    not) and their ``wall_hours``, and the ``longest`` run's CPU hours."""
    runs = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    cpu = [r.record.get("cpu_time_s") for r in runs]
    timed = [t / 3600 for t in cpu if t is not None]
    return {"runs": len(runs), "cpu_hours": sum(timed), "longest": max(timed, default=0.0),
            "without_cpu": sum(t is None for t in cpu),
            "wall_hours": sum(r.record.get("wall_time_s", 0.0) for r, t in zip(runs, cpu) if t is None)
            / 3600}


def _hours(hours: float) -> str:
    """CPU time as a reader reads it: minutes below an hour, hours to one decimal above."""
    minutes = round(hours * 60)
    if hours >= 1:
        return f"{hours:.1f} CPU hours"
    return "under a CPU minute" if minutes < 1 else f"{minutes} CPU minute{'s' * (minutes != 1)}"


def regenerate_line(config, runs) -> str:
    """Markdown: the command that regenerates a chapter's page (trains its missing or stale runs and executes
    the notebook) and what training its runs cost, summed from the stored runs' records."""
    cost = runs_cost(runs)
    text = f"**To regenerate this page:** `{config.rebuild_command()}`"
    if not cost["runs"]:
        return text + " (it trains no model)."
    text += (f" (its {cost['runs']:,} runs took {_hours(cost['cpu_hours'])} to train, by their records; the "
             f"longest {_hours(cost['longest'])}")
    if cost["without_cpu"]:
        text += (f"; {cost['without_cpu']} of them recorded only their wall time, {cost['wall_hours']:.1f} "
                 "hours, not in that sum")
    return text + f"). `make reproduce SCALE={config.scale}` regenerates every chapter and the book."


def displayed(items: Sequence, tables: Sequence[tuple[str, str] | None] = ()) -> list:
    """What a report's section returns (Markdown, tables, figures), as the page shows it: Markdown with every
    paper named by its file number cited instead (:func:`cite_papers`, in-sentence form), and the i-th table
    (a pandas DataFrame or Styler) numbered with the i-th ``(caption, name)`` of ``tables``
    (:func:`numbered_table`; ``None``, or no i-th entry: shown as it is, e.g. a table whose colours carry
    meaning). Use as ``display(*displayed(...))``."""
    from IPython.display import Markdown

    out, i = [], 0
    for item in items:
        if isinstance(item, Markdown):
            item = Markdown(cite_papers(item.data, role="t"))
        elif hasattr(item, "style") or hasattr(item, "to_string") and hasattr(item, "data"):
            numbered = tables[i] if i < len(tables) else None
            i += 1
            if numbered is not None:
                item = Markdown(numbered_table(item, *numbered))
        out.append(item)
    return out


def artefacts_line(claims: Sequence) -> str:
    """One line per paper of the chapter: each of its figures, tables and sections with one verdict, by the
    book's roll-up (:func:`urnlib.artefacts.rollup`, the scorecard's rule), each linked to its claims; the
    papers' artefacts only (extensions are counted apart); empty where the chapter decides no paper's
    claim."""
    from urnlib.artefacts import artefacts

    lines = []
    found = [a for a in artefacts([c for c in claims if not c.extension])]
    for paper in dict.fromkeys(a.paper for a in found):
        mine = [a for a in found if a.paper == paper]
        items = [f'<a href="#{anchor(a.claims[0].chapter, a.claims[0].source)}">{_markdown_text(a.name)}</a> '
                 f"*{a.verdict}*" for a in mine]
        whose = f"{{cite:t}}`{PAPERS[paper]}`" if paper in PAPERS else "The papers"
        lines.append(f"{whose}, by figure and table: " + "; ".join(items) + ".")
    return "\n\n".join(lines)


def chapter_opening(config, runs, claims, setting: str = "training setting") -> str:
    """The top of a chapter's page, written from its runs and claims: one verdict per figure and table of
    each paper (:func:`artefacts_line`), :func:`results_summary`, then :func:`regenerate_line`. Display it
    with ``display(Markdown(...))`` in a cell tagged ``remove-input``."""
    head = artefacts_line(claims)
    summary = f"{results_summary(claims, setting=setting)}\n\n{regenerate_line(config, runs)}"
    return f"{head}\n\n{summary}" if head else summary


#: what a cell of a table says after a mean over seeds: " (3 seeds)"
_SEEDS = re.compile(r" \((\d+) seeds?\)$")
# a float a Styler wrote at its default precision (6 decimals): its trailing zeros say nothing
_DEFAULT_PRECISION = re.compile(r"(-?\d+\.\d*?)0+$")


def numbered_table(table, caption: str, name: str) -> str:
    """A table of results as a numbered table of the book (MyST ``{table}``: "Table N" before its caption,
    and ``{numref}`NAME``` refers to it): a pandas DataFrame (its index shown unless it only numbers the rows,
    numbers as :func:`urnlib.claims.format_value` writes them to 6 significant digits) or a Styler, whose
    formats and hidden index are kept (a float it writes at its default 6 decimals loses its trailing zeros);
    colours and other styles are not kept. ``caption`` is Markdown. Display the result with
    ``display(Markdown(...))``."""
    from urnlib.claims import format_value

    if hasattr(table, "to_string") and hasattr(table, "data"):
        styler = table
    else:  # the index is shown where it says something (named, or not the rows' numbers)
        import pandas as pd

        styler = table.style.format(
            lambda v: format_value(v, 6) if isinstance(v, (int, float, np.number)) else v)
        if isinstance(table.index, pd.RangeIndex) and table.index.name is None:
            styler = styler.hide(axis="index")
    sep = "\x1f"
    rows = [line.split(sep) for line in styler.to_string(delimiter=sep).rstrip("\n").split("\n")]
    # the header from the columns themselves (to_string merges a MultiIndex's repeated labels), each level's
    # labels joined; as many empty cells before it as the body rows have index cells
    columns = [" ".join(str(part) for part in (col if isinstance(col, tuple) else (col,)) if str(part))
               for col in styler.data.columns]
    body_rows = rows[len(rows) - len(styler.data):] if len(styler.data) else []
    width = max((len(row) for row in body_rows), default=len(columns))
    shown = width - len(columns)  # index levels shown: their names head their columns
    names = [str(n) if n is not None else "" for n in styler.data.index.names]
    header = (names if shown == len(names) else [""] * shown) + columns
    if len(header) != width:  # columns hidden by the Styler: its own header rows, as they are
        header = rows[0] + [""] * (width - len(rows[0]))
    body_rows = [row + [""] * (width - len(row)) for row in body_rows]

    def cell(text: str) -> str:
        if re.fullmatch(r"-?\d+\.\d{6}", text):
            text = _DEFAULT_PRECISION.sub(r"\1", text).rstrip(".")
        return _escaped(text).replace("|", r"\|") or " "

    body = [[cell(c) for c in row] for row in body_rows]
    seeds = {int(m.group(1)) for row in body for c in row for m in [_SEEDS.search(c)] if m}
    if len(seeds) == 1:  # every mean over the same seeds: said once, in the caption
        body = [[_SEEDS.sub("", c) for c in row] for row in body]
        caption += f" Every mean ± sd is over {seeds.pop()} seeds."
    lines = ["| " + " | ".join(cite_papers(cell(h)) for h in header) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(cite_papers(c) for c in row) + " |" for row in body]
    # a tilde fence: the caption may hold backticks (a citation, code), which a backtick fence's line may not
    return f"~~~{{table}} {caption}\n:name: {name}\n\n" + "\n".join(lines) + "\n~~~\n"
