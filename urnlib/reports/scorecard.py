"""The scorecard: what reproduces, one row per figure, table or section of each paper, with one verdict.

Computed from the saved claims (:func:`urnlib.claims.load_claims`), never typed: a row is one artefact of a
paper (:func:`urnlib.artefacts.artefacts`: every claim about it, in whatever chapter or setting), its verdict
the roll-up of its claims' verdicts (:func:`urnlib.artefacts.rollup`, whose rule the page states), and its
reason one plain sentence written from the claim that decides it. The legend of verdicts and causes comes
first. The papers' rows are listed paper by paper, named as the bibliography names them; the extensions
(claims the papers never made, ``Claim.extension``) are listed apart. Each row links to the chapter's claims
about it and, where the chapter registry knows it, to the chapter's figure or numbered table.
:func:`export` writes every claim as JSON and CSV, one record per claim, for a reader to analyse.

In a notebook of the chapters' folder (the summary page)::

    from urnlib.reports.scorecard import scorecard
    scorecard(load_claims(claims_dir))
"""

from __future__ import annotations

import csv
import html
import json
import re
from dataclasses import asdict
from pathlib import Path

from urnlib.artefacts import ROLLUP_RULE, Artefact, artefact_key, artefacts
from urnlib.claims import CAUSES, VERDICTS, Claim, anchor
from urnlib.reports.bibliography import REFERENCES, Paper, named_text, paper_of, papers
from urnlib.reports.claims_tables import chapter_title, figure_link, verdict_chip

__all__ = ["Paper", "rows", "papers", "paper_of", "Scorecard", "scorecard", "summary", "legend", "export",
           "kinds_table", "row_id",
           "REFERENCES", "FIELDS"]



def rows(claims: list[Claim]) -> list[Artefact]:
    """The scorecard's rows: one per artefact of each paper (:func:`urnlib.artefacts.artefacts`), the papers'
    first, paper by paper in the order of their file numbers, then the extensions'."""
    return artefacts(claims)


def row_id(art: Artefact) -> str:
    """The HTML id of an artefact's row on the scorecard, which the landing page links to:
    ``"scorecard-000-fig-2"`` (``"scorecard-extension-..."`` for an extension's row)."""
    where = f"{'extension-' if art.extension else ''}{art.paper or 'other'}-{art.name}"
    return "scorecard-" + (re.sub(r"[^a-z0-9]+", "-", where.lower()).strip("-") or "row")


def summary(claims: list[Claim]) -> str:
    """One sentence: how many of the papers' claims got each verdict, and how many extensions there are."""
    own = [c for c in claims if not c.extension]
    tally = ", ".join(f"{n} {v}" for v in VERDICTS if (n := sum(c.verdict == v for c in own)))
    ext = len(claims) - len(own)
    return (f"The papers' {len(own)} claims: {tally or 'none'}."
            + (f" Apart from them, {ext} extension{'s' if ext != 1 else ''} (claims the papers never made)."
               if ext else ""))


_CSS = """<style>
table.urnlib-scorecard {width: 100%; table-layout: fixed; border-collapse: collapse; font-size: 0.8em;
  line-height: 1.35; margin-bottom: 1em;}
table.urnlib-scorecard th, table.urnlib-scorecard td {text-align: left; vertical-align: top;
  padding: 0.2em 0.4em; overflow-wrap: anywhere; border-top: 1px solid #dee2e6;}
table.urnlib-scorecard thead th {border-bottom: 2px solid #adb5bd; border-top: none;}
table.urnlib-scorecard tr.urnlib-paper th {background-color: #e3e8ee; color: #212529; font-weight: normal;
  border-top: 2px solid #adb5bd; padding-top: 0.35em;}
.urnlib-count {font-size: 0.9em; color: #495057;}
table.urnlib-scorecard tr {scroll-margin-top: 5em;}
table.urnlib-scorecard tr.urnlib-chapter th {background-color: #f4f6f8; color: #212529; font-weight: normal;
  padding-left: 1em;}
table.urnlib-scorecard tr.urnlib-chapter a, table.urnlib-scorecard tr.urnlib-paper a {color: #1a4f8b;}
.urnlib-verdict {display: inline-block; padding: 0 0.35em; border-radius: 0.25em; color: #212529;
  white-space: nowrap; margin: 0.05em 0;}
</style>"""
_COLUMNS = {"in the paper": 18, "verdict": 16, "why": 52, "in the book": 14}


def _a(href: str, text: str) -> str:
    return f'<a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>'


def _tally(claims) -> str:
    return " ".join(verdict_chip(v, n) for v in VERDICTS if (n := sum(c.verdict == v for c in claims)))


def kinds_table(claims: list[Claim]) -> str:
    """Markdown: every kind of statement (:data:`urnlib.statements.KINDS`), the rule that decides it in the
    rule's own words, and how many of ``claims`` it decides."""
    from urnlib.statements import KINDS

    lines = ["| kind | the statement | the rule | claims |", "|---|---|---|---|"]
    for name, kind in KINDS.items():
        n = sum(c.kind == name for c in claims)
        lines.append(f"| `{name}` | {kind.title} | {kind.rule} | {n} |")
    return "\n".join(lines)


def legend(claims: list[Claim]) -> str:
    """HTML: the verdicts and the causes of misses that the rows use, each with its meaning, and the roll-up
    rule; shown before the first row."""
    used = {c.cause for c in claims if c.cause}
    verdicts = " ".join(verdict_chip(v) for v in VERDICTS)
    causes = "; ".join(f"<code>{html.escape(k)}</code>: {html.escape(v)}" for k, v in CAUSES.items()
                       if k in used)
    return (f"<p><b>Verdicts</b>: {verdicts}. {html.escape(ROLLUP_RULE).replace('*', '')}</p>"
            + (f"<p><b>Causes of a miss</b>: {causes}.</p>" if causes else ""))


def _row_html(art: Artefact, names: dict[str, Paper]) -> str:
    first = art.claims[0]
    place = art.name if not art.extension else f"{_paper_name(art.paper, names)}, {art.name}"
    cell = _a(f"{first.chapter}.html#{anchor(first.chapter, first.source)}", place)
    figure = figure_link(first.chapter, first.source, from_chapter=False)
    if figure:  # the chapter's figure, or its numbered table (a label tbl-...)
        cell += f" ({_a(figure, 'table' if '#tbl-' in figure else 'figure')})"
    n = len(art.claims)
    where = ", ".join(_a(f"{ch}.html", chapter_title(ch)) for ch in art.chapters)
    counts = f'<br><span class="urnlib-count">{n} claim{"s" if n != 1 else ""}: {_tally(art.claims)}</span>'
    why = html.escape(named_text(art.reason(CAUSES), names))
    return (f'<tr id="{row_id(art)}"><td>{cell}</td><td>{verdict_chip(art.verdict)}</td><td>{why}</td>'
            f"<td>{where}{counts if n > 1 else ''}</td></tr>")


def _paper_name(paper: str | None, names: dict[str, Paper]) -> str:
    found = names.get(paper) if paper else None
    return found.name if found else (f"paper {paper}" if paper else "other sources")


def _table(rows_: list[Artefact], names: dict[str, Paper], by_paper: bool) -> str:
    """The rows under a heading per paper (``by_paper``), or the extensions' rows in one table."""
    total = sum(_COLUMNS.values())
    cols = "".join(f'<col style="width: {100 * w / total:.1f}%">' for w in _COLUMNS.values())
    head = "".join(f"<th>{name}</th>" for name in _COLUMNS)
    body, paper_now = [], object()
    for art in rows_:
        if by_paper and art.paper != paper_now:
            paper_now = art.paper
            paper = names.get(art.paper) if art.paper else None
            title = (f"<b>{html.escape(paper.name)}</b>, <i>{html.escape(paper.title)}</i>" if paper else
                     f"<b>{html.escape(_paper_name(art.paper, names))}</b>")
            mine = [a for a in rows_ if a.paper == art.paper]
            tally = " ".join(verdict_chip(v, n) for v in VERDICTS
                             if (n := sum(a.verdict == v for a in mine)))
            body.append(f'<tr class="urnlib-paper"><th colspan="{len(_COLUMNS)}">{title}: {len(mine)} '
                        f"artefact{'s' if len(mine) != 1 else ''} {tally}</th></tr>")
        body.append(_row_html(art, names))
    return (f'<table class="urnlib-scorecard"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


class Scorecard:
    """The scorecard as a notebook shows it (HTML): a sentence of totals, the legend, the papers' rows paper
    by paper, then the extensions' rows. Links are relative to the chapters' folder (the summary page's)."""

    def __init__(self, claims: list[Claim], names: dict[str, Paper] | None = None):
        self.claims = list(claims)
        self.names = papers() if names is None else names
        self.rows = rows(self.claims)

    def to_html(self) -> str:
        own = [r for r in self.rows if not r.extension]
        ext = [r for r in self.rows if r.extension]
        parts = [_CSS, f"<p>{html.escape(summary(self.claims))}</p>", legend(self.claims)]
        if own:
            parts.append(_table(own, self.names, by_paper=True))
        if ext:
            parts.append("<p><b>Extensions</b>: the papers' statements tested where the papers never tested "
                         "them (other tasks, other models, our variants); counted apart from the papers' "
                         "claims.</p>")
            parts.append(_table(ext, self.names, by_paper=False))
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return summary(self.claims)


def scorecard(claims: list[Claim], names: dict[str, Paper] | None = None) -> Scorecard:
    """The scorecard of ``claims`` (:class:`Scorecard`), the papers named from the bibliography
    (:func:`papers`) unless ``names`` are given."""
    return Scorecard(claims, names)


#: the fields of one claim in :func:`export`'s files, in this order
FIELDS = ("paper", "artefact", "chapter", "source", "statement", "quote", "kind", "rule", "paper_value",
          "measured", "direction", "epoch", "seeds", "seeds_needed", "verdict", "cause", "evidence", "settle",
          "extension", "artefact_verdict")


def export(claims: list[Claim], directory: str | Path, stem: str = "claims") -> tuple[Path, Path]:
    """Write every claim to ``<directory>/<stem>.json`` and ``.csv``, one record per claim (:data:`FIELDS`:
    the paper, the artefact and its rolled-up verdict, the quote, the rule kind, the measured values, the
    seeds, the verdict, cause and evidence), so that a reader can analyse the book's results without
    scraping it."""
    verdict_of = {(a.extension, a.paper, a.name): a.verdict for a in artefacts(claims)}
    records = []
    for c in claims:
        key = artefact_key(c)
        item = asdict(c)
        item.update(paper=key[1], artefact=key[2], paper_value=c.paper, measured=c.ours,
                    artefact_verdict=verdict_of[key])
        records.append({k: item[k] for k in FIELDS})
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    as_json, as_csv = directory / f"{stem}.json", directory / f"{stem}.csv"
    as_json.write_text(json.dumps(records, indent=1))
    with as_csv.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(records)
    return as_json, as_csv
