"""The scorecard: what reproduces, one row per figure, table or group of claims of each paper.

Computed from the saved claims (:func:`urnlib.claims.load_claims`), never typed: a row is one group of
:func:`urnlib.claims.group_claims` (a chapter's claims about one place in a paper), its verdicts are the
counts of its claims' verdicts, and its reason is taken from its claims' ``direction`` and ``cause``. The
papers' claims are listed paper by paper, named as the bibliography names them (authors and year,
``book/references.bib``); the extensions (claims the papers never made, ``Claim.extension``) are listed
apart. Each row links to the group's anchor on its chapter's page (:func:`urnlib.claims.anchor`) and, where
the chapter registry knows it, to the chapter's figure or numbered table (a label ``tbl-...``, e.g. paper 002
Table 2 on Evans et al.'s released files; :meth:`urnlib.chapters.registry.Chapter.figure`).

In a notebook of the chapters' folder (the summary page)::

    from urnlib.reports.scorecard import scorecard
    scorecard(load_claims(claims_dir))
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from urnlib.claims import CAUSES, MISSES, VERDICTS, Claim
from urnlib.reports.bibliography import REFERENCES, Paper, named_source, paper_of, papers
from urnlib.reports.claims_tables import ClaimGroup, chapter_title, figure_link, group_claims, verdict_chip
from urnlib.reports.opening import PAPERS

__all__ = ["Paper", "Row", "rows", "reason", "reason_parts", "papers", "paper_of", "named_source",
           "Scorecard", "scorecard", "summary", "REFERENCES"]

#: a reason longer than this is cut at a word (the whole of it shows on hovering)
REASON_CHARS = 110
#: the misses in the order a row's reason picks them
_WORST_FIRST = ("not reproduced", "partly reproduced", "inconclusive", "not run here")


def _cut(text: str, limit: int = REASON_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + " ..."


def reason_parts(claims: list[Claim] | tuple[Claim, ...]) -> tuple[str | None, str, str]:
    """``(cause, what was found, the other misses)`` of :func:`reason`, uncut: all reproduced, ``(None, the
    first claim's direction, "")``; otherwise the cause and direction of the first claim of the worst verdict
    (in the order not reproduced, partly reproduced, inconclusive, not run here) and, where there are other
    misses, ``"+N more: n1 cause1, n2 cause2"``."""
    misses = [c for c in claims if c.verdict in MISSES]
    if not misses:
        return None, claims[0].direction if claims else "", ""
    worst = min(misses, key=lambda c: _WORST_FIRST.index(c.verdict))
    others = [c for c in misses if c is not worst]
    by_cause = {cause: sum(c.cause == cause for c in others) for cause in [*CAUSES, None]}
    tally = ", ".join(f"{n} {cause or 'not recorded'}" for cause, n in by_cause.items() if n)
    return worst.cause, worst.direction, f"+{len(others)} more: {tally}" if others else ""


def reason(claims: list[Claim] | tuple[Claim, ...]) -> str:
    """One line on why a group of claims got its verdicts, from their ``cause`` and ``direction``
    (:func:`reason_parts`): ``"cause: direction (+N more: ...)"``, the direction cut at a word so that the
    line has at most :data:`REASON_CHARS` characters."""
    cause, rest = _reason(claims)
    return f"{cause}: {rest}" if cause else rest


def _reason(claims) -> tuple[str | None, str]:
    """The cause and the rest of :func:`reason`'s line."""
    cause, found, more = reason_parts(claims)
    tail = f" ({more})" if more else ""
    return cause, _cut(found, REASON_CHARS - (len(cause) + 2 if cause else 0) - len(tail)) + tail


@dataclass(frozen=True)
class Row:
    """One row of the scorecard: a chapter's claims about one place in a paper (all papers' claims, or all
    extensions: a group holding both gives a row of each)."""

    paper: str | None  # the paper's file number ("000"), None when the source names none
    place: str  # the source without the paper ("Fig. 3")
    group: ClaimGroup
    claims: tuple[Claim, ...]
    extension: bool

    @property
    def chapter(self) -> str:
        return self.group.chapter

    @property
    def anchor(self) -> str:
        return self.group.anchor

    def counts(self) -> dict[str, int]:
        """``{verdict: number of the row's claims}`` for the verdicts present, in the order of VERDICTS."""
        return {v: n for v in VERDICTS if (n := sum(c.verdict == v for c in self.claims))}

    @property
    def reason(self) -> str:
        return reason(self.claims)


def rows(claims: list[Claim]) -> list[Row]:
    """The scorecard's rows: the papers' claims first, paper by paper in the order of their file numbers
    (then sources naming none), each paper's rows in the order of the claims (chapter by chapter); then the
    extensions, in the order of the claims."""
    order = {p: i for i, p in enumerate(PAPERS)}  # the papers by file number
    found = []
    for group in group_claims(claims):
        paper, place = paper_of(group.source)
        for extension in (False, True):
            mine = tuple(c for c in group.claims if c.extension == extension)
            if mine:
                found.append(Row(paper, place, group, mine, extension))
    papers_rows = [r for r in found if not r.extension]
    papers_rows.sort(key=lambda r: order.get(r.paper, len(order)))  # stable: the claims' order within a paper
    return papers_rows + [r for r in found if r.extension]


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
table.urnlib-scorecard tr.urnlib-chapter th {background-color: #f4f6f8; color: #212529; font-weight: normal;
  padding-left: 1em;}
table.urnlib-scorecard tr.urnlib-chapter a, table.urnlib-scorecard tr.urnlib-paper a {color: #1a4f8b;}
.urnlib-verdict {display: inline-block; padding: 0 0.35em; border-radius: 0.25em; color: #212529;
  white-space: nowrap; margin: 0.05em 0;}
</style>"""
_COLUMNS = {"in the paper": 24, "verdicts": 28, "why (the worst miss: its cause, what was found)": 48}


def _a(href: str, text: str) -> str:
    return f'<a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>'


def _tally(claims) -> str:
    return " ".join(verdict_chip(v, n) for v in VERDICTS if (n := sum(c.verdict == v for c in claims)))


def _row_html(row: Row, names: dict[str, Paper]) -> str:
    figure = figure_link(row.chapter, row.group.source, from_chapter=False)
    place = row.place
    if row.extension:  # the extensions' table names the paper in every row
        place = named_source(row.group.source, names)
    cell = _a(f"{row.chapter}.html#{row.anchor}", place)
    if figure:  # the chapter's figure, or its numbered table (a label tbl-...)
        cell += f" ({_a(figure, 'table' if '#tbl-' in figure else 'figure')})"
    chips = " ".join(verdict_chip(v, n if len(row.claims) > 1 else None) for v, n in row.counts().items())
    whole = html.escape(" | ".join(f"{c.statement}: {c.direction}" for c in row.claims), quote=True)
    cause, rest = _reason(row.claims)  # reason()'s line, the cause shown as the claims tables show it
    why = (f'<code title="{html.escape(CAUSES.get(cause, ""), quote=True)}">{html.escape(cause)}</code> '
           if cause else "") + html.escape(rest)
    return f'<tr><td>{cell}</td><td>{chips}</td><td title="{whole}">{why}</td></tr>'


def _heading(text: str, claims, cls: str) -> str:
    return (f'<tr class="{cls}"><th colspan="{len(_COLUMNS)}">{text}: {len(claims)} claim'
            f"{'s' if len(claims) != 1 else ''} {_tally(claims)}</th></tr>")


def _table(rows_: list[Row], names: dict[str, Paper], by_paper: bool) -> str:
    """The papers' rows under a heading per paper and, within it, per chapter (``by_paper``), or the
    extensions' rows under a heading per chapter."""
    total = sum(_COLUMNS.values())
    cols = "".join(f'<col style="width: {100 * w / total:.1f}%">' for w in _COLUMNS.values())
    first = "in the paper" if by_paper else "the paper's claim, tested further"
    head = "".join(f"<th>{name}</th>" for name in [first, *list(_COLUMNS)[1:]])
    body, paper_now, chapter_now = [], object(), object()
    for row in rows_:
        if by_paper and row.paper != paper_now:
            paper_now, chapter_now = row.paper, object()
            paper = names.get(row.paper) if row.paper else None
            title = (f"<b>{html.escape(paper.name)}</b>, <i>{html.escape(paper.title)}</i>" if paper else
                     f"<b>{'paper ' + row.paper if row.paper else 'other sources'}</b>")
            body.append(_heading(title, [c for r in rows_ if r.paper == row.paper for c in r.claims],
                                 "urnlib-paper"))
        if row.chapter != chapter_now:
            chapter_now = row.chapter
            mine = [c for r in rows_ if r.chapter == row.chapter and (not by_paper or r.paper == row.paper)
                    for c in r.claims]
            body.append(_heading("in " + _a(f"{row.chapter}.html", chapter_title(row.chapter)), mine,
                                 "urnlib-chapter"))
        body.append(_row_html(row, names))
    return (f'<table class="urnlib-scorecard"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


class Scorecard:
    """The scorecard as a notebook shows it (HTML): a sentence of totals, the papers' rows paper by paper,
    then the extensions' rows. Links are relative to the chapters' folder (the summary page's)."""

    def __init__(self, claims: list[Claim], names: dict[str, Paper] | None = None):
        self.claims = list(claims)
        self.names = papers() if names is None else names
        self.rows = rows(self.claims)

    def to_html(self) -> str:
        own = [r for r in self.rows if not r.extension]
        ext = [r for r in self.rows if r.extension]
        parts = [_CSS, f"<p>{html.escape(summary(self.claims))}</p>"]
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
