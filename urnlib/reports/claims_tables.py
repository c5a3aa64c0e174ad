"""How the book shows claims: grouped by the place in a paper they are about, in compact tables with the
decision rules stated once, and counted per chapter and per cause (the claims themselves, their verdicts and
their files are :mod:`urnlib.claims`'s).

A chapter shows its claims with :func:`claims_table`; the summary page (``notebooks/claims.ipynb``) shows
every chapter's with :func:`verdict_counts`, :func:`cause_counts`, :func:`seed_summary` and the scorecard
(:mod:`urnlib.reports.scorecard`). Each group of claims has an anchor (:func:`anchor`) that other pages link
to.
"""

from __future__ import annotations

import html
import re
from dataclasses import asdict, dataclass

from urnlib.claims import CAUSES, MISSES, VERDICTS, Claim, anchor, format_value
from urnlib.reports.bibliography import named_source, named_text
from urnlib.reports.claims_style import _CSS, _OPEN_TARGET

__all__ = ["claims_frame", "claims_table", "verdict_summary", "misses_by_cause", "seed_summary",
           "verdict_counts", "anchor", "ClaimGroup", "group_claims", "ClaimsTable", "chapter_title",
           "figure_link", "short_rule", "rules_legend", "legend_html", "cause_counts", "verdict_chip",
           "in_book_order", "shown_source", "VERDICT_COLOURS"]

_COLOURS = {"reproduced": "#d9f2d9", "partly reproduced": "#fff2cc", "not reproduced": "#f8d7da",
            "inconclusive": "#e9ecef", "not run here": "#dee2e6"}
#: each verdict's background colour in the book's tables (the landing page's too)
VERDICT_COLOURS = _COLOURS


def claims_frame(claims: list[Claim]):
    """A pandas DataFrame of the claims (one row each)."""
    import pandas as pd

    cols = ["source", "statement", "paper", "ours", "rule", "verdict"]
    rows = [{k: format_value(v) for k, v in asdict(c).items() if k in ("chapter", *cols)} for c in claims]
    return pd.DataFrame(rows, columns=["chapter", *cols])


@dataclass(frozen=True)
class ClaimGroup:
    """A chapter's claims about one place in a paper (a figure, a table, a section): :func:`group_claims`."""

    chapter: str
    source: str  # the first claim's source (the others' differ at most in punctuation, case or spacing)
    anchor: str  # :func:`anchor` of (chapter, source)
    claims: tuple[Claim, ...]

    def counts(self) -> dict[str, int]:
        """``{verdict: number of claims}`` for the verdicts present, in the order of :data:`VERDICTS`."""
        return _counts(self.claims)


def group_claims(claims: list[Claim]) -> list[ClaimGroup]:
    """The claims grouped by chapter and source (claims whose :func:`anchor` is the same), groups in the order
    of their first claim, claims in their order within a group."""
    found: dict[tuple[str, str], list[Claim]] = {}
    for c in claims:
        found.setdefault((c.chapter, anchor(c.chapter, c.source)), []).append(c)
    return [ClaimGroup(chapter, mine[0].source, key, tuple(mine)) for (chapter, key), mine in found.items()]


def _counts(claims) -> dict[str, int]:
    return {v: n for v in VERDICTS if (n := sum(c.verdict == v for c in claims))}


def chapter_title(chapter: str) -> str:
    """A chapter's title from the chapter registry (the name itself for a chapter that is not there)."""
    import urnlib.chapters.registry as chapters

    return next((c.title for c in chapters.CHAPTERS if c.name == chapter), chapter)


def in_book_order(claims: list[Claim]) -> list[Claim]:
    """The claims chapter by chapter in the order of the chapter registry (chapters it does not know last, in
    the order of ``claims``), each chapter's claims in their order."""
    import urnlib.chapters.registry as chapters

    order = {name: i for i, name in enumerate(chapters.names())}
    return sorted(claims, key=lambda c: order.get(c.chapter, len(order)))


def figure_link(chapter: str, source: str, from_chapter: bool = True) -> str | None:
    """The link to the chapter's figure of the paper's place ``source`` (the chapter registry's
    :meth:`~urnlib.chapters.registry.Chapter.figure`), from the chapter's own page (``#fig-...``) or from
    another page of the chapters' folder (``dyck.html#fig-...``); ``None`` when no figure is known."""
    import urnlib.chapters.registry as chapters

    entry = next((c for c in chapters.CHAPTERS if c.name == chapter), None)
    label = entry.figure(source) if entry is not None else None
    if label is None:
        return None
    return f"#{label}" if from_chapter else f"{chapter}.html#{label}"


# The rules' standard phrases (urnlib.rules), stated once in the legend and named in each claim's rule.
def _rule_terms() -> list[tuple[str, str]]:
    from urnlib import rules

    return [(rules.BEATS_RULE, "Welch's t-test"), (rules.THRESHOLD_RULE, "one-sample t-test"),
            (rules.PAIRED_RULE, "paired t-test"), (rules.EVERY_SEED_RULE, "on every seed"),
            (rules.CHANCE_RULE, "both sides off chance")]


def short_rule(rule: str) -> str:
    """A claim's rule with the rules' standard phrases (:mod:`urnlib.rules`) replaced by their names, which
    the claims tables' legend defines (:func:`rules_legend`)."""
    for phrase, name in _rule_terms():
        rule = rule.replace(phrase, name)
    return rule


def rules_legend(claims: list[Claim]) -> list[tuple[str, str]]:
    """``[(name, the phrase it stands for)]`` for the rules' standard phrases that ``claims`` use."""
    return [(name, phrase) for phrase, name in _rule_terms() if any(phrase in c.rule for c in claims)]


# Relative column widths of a claims table (its layout is fixed: it fits the width it is given, wrapping long
# cells, rather than growing wider than the page).
_COLUMNS = {"claim": 30, "paper": 17, "found here": 26, "verdict": 14, "cause": 13}


def _h(value) -> str:
    """A value as HTML text: escaped, with Markdown's inline code (a word between backticks) as code, and a
    paper named by its file number ("paper 000") named by authors and year (:func:`named_text`)."""
    text = html.escape(named_text(format_value(value)), quote=True)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


# TeX in a quoted sentence: $$...$$, $...$, or a command outside dollars (the paper's own typing, e.g.
# "\\mathbf{J}_t is ..."), each shown as inline math (MathJax typesets elements of class "math").
_TEX = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|(\\[A-Za-z]+(?:\{[^{}]*\})*(?:_\{[^{}]*\}|_[A-Za-z0-9])?)", re.S)


def _quote_html(text: str) -> str:
    """A quoted sentence as HTML: its text escaped (:func:`_h`), its TeX as MathJax's inline math."""
    out, last = [], 0
    for m in _TEX.finditer(text):
        tex = next(g for g in m.groups() if g is not None)
        out += [_h(text[last:m.start()]),
                f'<span class="math notranslate nohighlight">\\({html.escape(tex, quote=True)}\\)</span>']
        last = m.end()
    return "".join(out) + _h(text[last:])


def verdict_chip(verdict: str, n: int | None = None) -> str:
    """A verdict (with a number ``n`` of claims before it) in the verdict's colour, as HTML."""
    text = verdict if n is None else f"{n} {verdict}"
    return (f'<span class="urnlib-verdict" style="background-color: {_COLOURS.get(verdict, "white")}">'
            f"{html.escape(text)}</span>")


def _tally_html(claims) -> str:
    return " ".join(verdict_chip(v, n) for v, n in _counts(claims).items())


def legend_html(claims: list[Claim]) -> str:
    """The legend of the claims tables (HTML): the verdicts' colours, the causes of the misses present and the
    rules' standard phrases that the claims use, each stated once."""
    verdicts = " ".join(verdict_chip(v) for v in VERDICTS)
    causes = [cause for cause in CAUSES if any(c.cause == cause for c in claims)]
    parts = [f"<p><b>Verdicts:</b> {verdicts}. <i>Inconclusive</i>: the seeds do not decide it ((<i>n</i> "
             "seeds) beside the cause: the seeds per side that would decide it at the spread observed) or a "
             "model it rests on did not train; <i>not run here</i>: its data or compute is not here.</p>"]
    if causes:
        parts.append("<p><b>Cause</b> of a miss: " + "; ".join(
            f"<code>{html.escape(cause)}</code> {html.escape(CAUSES[cause])}" for cause in causes) + ".</p>")
    rules = rules_legend(claims)
    if rules:
        parts.append("<p><b>Rules</b> (each claim's own opens under its quote, with the values measured and "
                     "the epoch read): " + "; ".join(f"<i>{html.escape(name)}</i>: {html.escape(phrase)}"
                                                    for name, phrase in rules) + ".</p>")
    return f'<div class="urnlib-claims-legend">{"".join(parts)}</div>'


def _claim_rows(c: Claim) -> str:
    statement = _h(c.statement) + (' <span class="urnlib-tag">extension</span>' if c.extension else "")
    cause = "-" if c.cause is None else \
        f'<code title="{html.escape(CAUSES.get(c.cause, ""), quote=True)}">{html.escape(c.cause)}</code>'
    if c.seeds_needed is not None:
        cause += (f' <span title="{c.seeds_needed:,} seeds per side would decide it at the spread observed">'
                  f"({c.seeds_needed:,} seeds)</span>")
    colour = _COLOURS.get(c.verdict, "white")
    verdict = (f'<td class="urnlib-claims-verdict" style="background-color: {colour}; color: #212529">'
               f"{html.escape(c.verdict)}</td>")
    details = [("measured", c.ours), ("rule", short_rule(c.rule)), ("epoch", c.epoch),
               ("seeds", "-" if c.seeds is None else c.seeds), ("evidence", c.evidence),
               ("what would settle it", c.settle)]
    more = "".join(f"<p><b>{name}:</b> {_h(value)}</p>" for name, value in details if value not in ("", None))
    quote = (f"\u201c{_quote_html(c.quote)}\u201d" if c.quote else
             "the measured values, the rule and the epoch")
    return (f'<tr class="urnlib-claim"><td>{statement}</td><td>{_h(c.paper)}</td><td>{_h(c.direction)}</td>'
            f"{verdict}<td>{cause}</td></tr>"
            f'<tr class="urnlib-more"><td colspan="{len(_COLUMNS)}"><details><summary>{quote}</summary>'
            f"<div>{more}</div></details></td></tr>")


def shown_source(source: str) -> str:
    """A claim's source as the tables show it: its paper named by authors and year
    (:func:`urnlib.reports.bibliography.named_source`, ``"Bernardy and Lappin (2022), Fig. 3"``), or the
    source as saved where the book's bibliography is not there (a copy of the library without the book)."""
    try:
        return named_source(source)
    except FileNotFoundError:
        return source


def _group_html(group: ClaimGroup, from_chapter: bool) -> str:
    """One group folded: its summary line (the place in the paper, the group's verdict by the book's roll-up,
    its tally and a link to the chapter's figure), and under it the table of its claims."""
    from urnlib.artefacts import rollup

    figure = figure_link(group.chapter, group.source, from_chapter)
    verdict = rollup(group.claims)
    head = [f'<a href="#{group.anchor}">{_h(shown_source(group.source))}</a>', verdict_chip(verdict)]
    if len(group.claims) > 1 or group.claims[0].verdict != verdict:
        n = len(group.claims)
        head.append(f"{n} claim{'s' if n != 1 else ''}: {_tally_html(group.claims)}")
    if figure:
        what = "the table" if figure.rsplit("#", 1)[-1].startswith("tbl-") else "the figure"
        head.append(f'<a href="{html.escape(figure, quote=True)}">{what}</a>')
    total = sum(_COLUMNS.values())
    cols = "".join(f'<col style="width: {100 * w / total:.1f}%">' for w in _COLUMNS.values())
    columns = "".join(f"<th>{name}</th>" for name in _COLUMNS)
    rows = "".join(_claim_rows(c) for c in group.claims)
    return (f'<details class="urnlib-group" id="{group.anchor}"><summary>{" &middot; ".join(head)}</summary>'
            f'<table class="urnlib-claims"><colgroup>{cols}</colgroup><thead><tr>{columns}</tr></thead>'
            f"<tbody>{rows}</tbody></table></details>")


def _groups_html(groups: list[ClaimGroup], from_chapter: bool) -> str:
    return "".join(_group_html(g, from_chapter) for g in groups)


class ClaimsTable:
    """Claims as a notebook shows them (HTML): a legend, then the claims grouped by the paper's figure, table
    or section (:func:`group_claims`), each group folded under one line (its anchor, :func:`anchor`; its
    verdict by the book's roll-up, :func:`urnlib.artefacts.rollup`; its tally and a link to the chapter's
    figure where one is known; a link to the anchor opens it); in a group's table, each claim's statement, the
    paper's value, what was found here, the verdict and the cause of a miss, and under it the quoted sentence,
    which opens the values measured, the rule, the epoch and the seeds. ``with_chapter``: one folded section
    per chapter, named by its title."""

    def __init__(self, claims: list[Claim], with_chapter: bool = False):
        self.claims = list(claims)
        self.with_chapter = with_chapter
        self.groups = group_claims(self.claims)

    def to_html(self) -> str:
        legend = legend_html(self.claims)
        if not self.with_chapter:
            return _CSS + legend + _groups_html(self.groups, from_chapter=True) + _OPEN_TARGET
        parts = []
        for chapter in dict.fromkeys(c.chapter for c in self.claims):
            mine = [c for c in self.claims if c.chapter == chapter]
            title = html.escape(chapter_title(chapter))
            count = f"{len(mine)} claim{'s' if len(mine) != 1 else ''}"
            summary = (f"<b>{title}</b>: {count} {_tally_html(mine)} "
                       f'&middot; <a href="{html.escape(chapter, quote=True)}.html">the chapter</a>')
            parts.append(f'<details class="urnlib-chapter"><summary>{summary}</summary>'
                         f"{_groups_html([g for g in self.groups if g.chapter == chapter], False)}</details>")
        return _CSS + legend + "".join(parts) + _OPEN_TARGET

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        tally = ", ".join(f"{n} {v}" for v, n in _counts(self.claims).items())
        return f"{len(self.claims)} claims in {len(self.groups)} groups: {tally or 'none'}"


def claims_table(claims: list[Claim], with_chapter: bool = False) -> ClaimsTable:
    """The claims as a notebook shows them (:class:`ClaimsTable`: HTML with the decision rules in a legend,
    the claims grouped by the paper's figure or table, each group with its :func:`anchor`). Every text is
    HTML-escaped (a claim may say ``< 1%`` or ``<unk>``). ``with_chapter``: claims of several chapters, one
    folded section each (the summary page), linking to the chapters' pages."""
    return ClaimsTable(claims, with_chapter)


def verdict_summary(claims: list[Claim]) -> str:
    """One Markdown paragraph: how many claims hold, and which do not (for the top of a chapter)."""
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    head = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    misses = [c for c in claims if c.verdict in ("not reproduced", "partly reproduced")]
    lines = [f"**{len(claims)} claims: {head}.**"]
    if misses:
        lines.append(" Not (fully) reproduced: "
                     + "; ".join(f"{_escape(c.statement)} ({c.source})" for c in misses) + ".")
    return "".join(lines)


def misses_by_cause(claims: list[Claim]):
    """The claims not (fully) reproduced, grouped by cause (:data:`CAUSES`, in that order; ``not recorded``
    for claims saved before causes were): a DataFrame with columns cause, what it means, chapter, source,
    statement, verdict, seeds."""
    import pandas as pd

    order = {cause: i for i, cause in enumerate([*CAUSES, "not recorded"])}
    rows = [{"cause": c.cause or "not recorded", "what it means": CAUSES.get(c.cause or "", "-"),
             "chapter": c.chapter, "source": c.source, "statement": c.statement, "verdict": c.verdict,
             "seeds": "-" if c.seeds is None else c.seeds}
            for c in claims if c.verdict in MISSES]
    frame = pd.DataFrame(rows, columns=["cause", "what it means", "chapter", "source", "statement", "verdict",
                                        "seeds"])
    return frame.sort_values("cause", key=lambda col: col.map(order), kind="stable").reset_index(drop=True)


def verdict_counts(claims: list[Claim], titles: bool = False):
    """Per chapter (in the order of ``claims``), the number of claims and of each verdict (:data:`VERDICTS`,
    in that order), with a row ``the papers' claims`` (every chapter's, the extensions left out) and, where
    there are any, a row ``extensions`` (claims the papers never made, e.g. the zoo's): a DataFrame.
    ``titles``: chapters named by their titles (:func:`chapter_title`) rather than their names."""
    import pandas as pd

    def row(name, mine):
        counts = {v: sum(c.verdict == v for c in mine) for v in VERDICTS}
        return {"chapter": name, "claims": len(mine), **counts}

    rows = [row(chapter_title(chapter) if titles else chapter, [c for c in claims if c.chapter == chapter])
            for chapter in dict.fromkeys(c.chapter for c in claims)]
    rows.append(row("the papers' claims", [c for c in claims if not c.extension]))
    if any(c.extension for c in claims):
        rows.append(row("extensions", [c for c in claims if c.extension]))
    return pd.DataFrame(rows)


def cause_counts(claims: list[Claim], titles: bool = False):
    """The claims not (fully) reproduced counted by cause (:data:`CAUSES`, in that order; ``not recorded`` for
    claims saved before causes were): a DataFrame with columns cause, what it means, the papers' claims,
    extensions (the claims the papers never made) and chapters (each with its number of such misses; by
    title with ``titles``). Causes no claim has are left out."""
    import pandas as pd

    rows = []
    for cause in [*CAUSES, None]:
        mine = [c for c in claims if c.verdict in MISSES and c.cause == cause]
        if not mine:
            continue
        where = {chapter_title(ch) if titles else ch: sum(c.chapter == ch for c in mine)
                 for ch in dict.fromkeys(c.chapter for c in mine)}
        rows.append({"cause": cause or "not recorded", "what it means": CAUSES.get(cause or "", "-"),
                     "the papers' claims": sum(not c.extension for c in mine),
                     "extensions": sum(c.extension for c in mine),
                     "chapters": ", ".join(f"{name} ({n})" for name, n in where.items())})
    return pd.DataFrame(rows, columns=["cause", "what it means", "the papers' claims", "extensions",
                                       "chapters"])


def seed_summary(claims: list[Claim], titles: bool = False):
    """Per chapter: claims resting on trained runs, the fewest and most seeds they rest on, and how many rest
    on fewer than 3 (a DataFrame; chapters by title with ``titles``)."""
    import pandas as pd

    rows = []
    for chapter in dict.fromkeys(c.chapter for c in claims):
        seeds = [c.seeds for c in claims if c.chapter == chapter and c.seeds is not None]
        rows.append({"chapter": chapter_title(chapter) if titles else chapter,
                     "claims on trained runs": len(seeds),
                     "fewest seeds": min(seeds) if seeds else "-", "most seeds": max(seeds) if seeds else "-",
                     "on fewer than 3 seeds": sum(s < 3 for s in seeds)})
    return pd.DataFrame(rows)


def _escape(text: str) -> str:
    """Backslash the Markdown characters a claim's formula may hold (``b_{t-1}``, ``W_u^T``, ``<= 1``), so a
    statement renders as written rather than in italics or as HTML."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>#|~^" else ch for ch in text)
