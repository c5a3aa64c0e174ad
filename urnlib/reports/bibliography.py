"""The papers as the book names them: by authors and year from its bibliography (``book/references.bib``),
not by their file numbers ("paper 000"), for the claims tables and the scorecard.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from urnlib.artefacts import PAPER_PREFIX
from urnlib.chapter import NOTEBOOKS
from urnlib.reports.opening import PAPERS

__all__ = ["Paper", "papers", "paper_of", "named_source", "REFERENCES"]

#: the bibliography the book cites from
REFERENCES = NOTEBOOKS.parent / "book" / "references.bib"
# A claim's source starts with the paper's file number ("paper 000 Fig. 3", "lecture 004, Elman ...");
# urnlib.reports.opening.PAPERS gives each number's key in the bibliography.
_PREFIX = PAPER_PREFIX


@dataclass(frozen=True)
class Paper:
    """A paper as the book names it: ``name`` (authors, and the year where the bibliography gives one),
    ``title``, and its key in the bibliography."""

    key: str
    name: str
    title: str


def _bib_fields(text: str) -> dict[str, dict[str, str]]:
    """``{key: {field: value}}`` of a BibTeX file's entries (values with their outer braces removed)."""
    entries = {}
    for m in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, re.S):
        fields = {}
        for f in re.finditer(r"(\w+)\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}", m.group(2)):
            fields[f.group(1).lower()] = " ".join(f.group(2).replace("{", "").replace("}", "").split())
        entries[m.group(1)] = fields
    return entries


def _authors(field: str) -> str:
    """BibTeX authors as an author-year citation names them: one or two surnames, or the first et al."""
    names = [a.split(",")[0].strip() if "," in a else a.strip().split()[-1] for a in field.split(" and ")]
    if len(names) == 1:
        return names[0]
    return " and ".join(names) if len(names) == 2 else f"{names[0]} et al."


def papers(path: str | Path = REFERENCES) -> dict[str, Paper]:
    """``{"000": Paper(...), ...}``: each paper of ``urnlib.reports.opening.PAPERS`` (by its file number)
    named from the bibliography at ``path`` (authors and year; "n.d." where the bibliography gives no year, as
    the book's citations write it).

    Raises:
        FileNotFoundError: the bibliography is not there.
        KeyError: a paper's key is not in it (the message names it).
    """
    return dict(_papers(str(path)))


@functools.lru_cache(maxsize=8)
def _papers(path: str) -> tuple[tuple[str, Paper], ...]:
    entries = _bib_fields(Path(path).read_text())
    out = []
    for number, key in PAPERS.items():
        if key not in entries:
            raise KeyError(f"{key!r} (paper {number}) is not in {path}")
        fields = entries[key]
        year = fields.get("year")
        out.append((number, Paper(key, f"{_authors(fields.get('author', key))} ({year or 'n.d.'})",
                                  fields.get("title", ""))))
    return tuple(out)


def paper_of(source: str) -> tuple[str | None, str]:
    """``(paper, place)`` of a claim's source: ``"paper 000 Fig. 3"`` -> ``("000", "Fig. 3")``;
    ``(None, source)`` for a source that names none of the papers (``urnlib.reports.opening.PAPERS``)."""
    m = _PREFIX.match(source)
    if m is None or m.group(1) not in PAPERS:
        return None, source
    return m.group(1), source[m.end():] or "as a whole"


def named_source(source: str, names: dict[str, Paper] | None = None) -> str:
    """A claim's source with its paper named by authors and year rather than its file number:
    ``"paper 000 Fig. 3"`` -> ``"Bernardy and Lappin (2022), Fig. 3"`` (``names``: :func:`papers` of the
    book's bibliography); a source that names none of the papers as it is."""
    paper, place = paper_of(source)
    if paper is None:
        return source
    names = papers() if names is None else names
    return f"{names[paper].name}, {place}" if paper in names else source
