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

__all__ = ["Paper", "PAPERS", "papers", "paper_of", "named_source", "named_text", "REFERENCES"]

#: the papers' file numbers (as the claims' sources name them: "paper 000 Fig. 3", "lecture 004, ...") and
#: their keys in book/references.bib, so that a page names a paper by its authors and year, not its number
#: (``urnlib.reports.opening`` cites them by these keys)
PAPERS = {"000": "bernardy2022neural", "001": "bernardy_assessing", "002": "tpru", "003": "borbely_matrix",
          "004": "levy2023neural"}

#: the bibliography the book cites from
REFERENCES = NOTEBOOKS.parent / "book" / "references.bib"
# A claim's source starts with the paper's file number ("paper 000 Fig. 3", "lecture 004, Elman ...");
# PAPERS gives each number's key in the bibliography.
_PREFIX = PAPER_PREFIX


@dataclass(frozen=True)
class Paper:
    """A paper as the book names it: ``name`` (authors, and the year where the bibliography gives one),
    ``title``, its key in the bibliography, and ``link``: where a reader finds it (its DOI as a URL, else its
    URL, else its arXiv page; ``""`` when the entry gives none)."""

    key: str
    name: str
    title: str
    link: str = ""


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
    """``{"000": Paper(...), ...}``: each paper of ``PAPERS`` (by its file number)
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
                                  fields.get("title", ""), _link(fields))))
    return tuple(out)


def _link(fields: dict[str, str]) -> str:
    """The URL of an entry: ``https://doi.org/<doi>``, else its ``url``, else its arXiv page (``eprint``)."""
    if fields.get("doi"):
        return f"https://doi.org/{fields['doi']}"
    if fields.get("url"):
        return fields["url"]
    return f"https://arxiv.org/abs/{fields['eprint']}" if fields.get("eprint") else ""


def paper_of(source: str) -> tuple[str | None, str]:
    """``(paper, place)`` of a claim's source: ``"paper 000 Fig. 3"`` -> ``("000", "Fig. 3")``;
    ``(None, source)`` for a source that names none of the papers (``PAPERS``)."""
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


# a paper named by its file number anywhere in a text: "paper 000", "Paper 002's", "lecture 004"
_NUMBERED = re.compile(r"\b(?:[Pp]aper|[Ll]ecture) (\d{3})\b(['\u2019]s\b)?")


def named_text(text: str, names: dict[str, Paper] | None = None) -> str:
    """``text`` (a claim's statement, evidence or settling experiment, a scorecard reason) with every paper
    named by its file number named by authors and year instead: ``"(paper 000: 90% of 1.7 million)"`` ->
    ``"(Lappin and Bernardy (2022): 90% of 1.7 million)"``, ``"not paper 002's"`` -> ``"not Tang et al.'s
    (2018)"``. A number :data:`PAPERS` does not know is left as it is, and so is the
    whole text where the book's bibliography is not there (a copy of the library without the book)."""
    if not _NUMBERED.search(text):
        return text
    if names is None:
        try:
            names = papers()
        except FileNotFoundError:
            return text

    def named(m: re.Match) -> str:
        paper = names.get(m.group(1))
        if paper is None:
            return m.group()
        if not m.group(2):
            return paper.name
        who, _, year = paper.name.partition(" (")  # "Tang et al. (2018)" -> "Tang et al.'s (2018)"
        return f"{who}{m.group(2)} ({year}" if year else f"{who}{m.group(2)}"

    return _NUMBERED.sub(named, text)
