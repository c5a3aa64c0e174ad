"""One verdict per figure, table and section of each paper: the artefact a claim is about, and the roll-up.

A claim names the paper's artefact it is about (:attr:`urnlib.claims.Claim.artefact`: ``"Fig. 3"``,
``"Table 2"``, ``"sec. 4"``; for the lecture, the work its slide shows: ``"Weiss et al. (2018)"``). Every
claim about one artefact of one paper, in whatever chapter and under whatever setting it was decided, rolls
up into one verdict by :func:`rollup`, the one rule the scorecard, the chapter openings and the landing page
share (:data:`ROLLUP_RULE`, shown on the scorecard page):

* **reproduced** when every claim decided about it is reproduced;
* **not reproduced** when its headline claim is not, or no claim about it is reproduced at all and one is not;
* **inconclusive** when no claim about it is decided (each is inconclusive, or not run here);
* **not run here** when no claim about it was run;
* **partly reproduced** otherwise: some of its claims are reproduced, others missed.

Claims that were not run here are left out of the roll-up while another claim about the artefact was run.
The roll-up is monotone: a claim going from not reproduced to reproduced never worsens its artefact
(``tests/test_statements.py`` checks it on random sets of claims).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["artefact_of", "artefact_key", "Artefact", "rollup", "artefacts", "ROLLUP_RULE", "RANK", "reason",
           "PAPER_PREFIX"]

ROLLUP_RULE = ("An artefact (a figure, table or section of a paper) is *reproduced* when every claim decided "
               "about it is reproduced; *not reproduced* when its headline claim is not, or when none of its "
               "claims is reproduced and one is not; *inconclusive* when none of its claims is decided; *not "
               "run here* when none was run; otherwise *partly reproduced*. Claims not run here count only "
               "where nothing else about the artefact was run.")

#: the verdicts from worst to best, the order in which the roll-up is monotone
RANK = {"not reproduced": 0, "inconclusive": 1, "not run here": 1, "partly reproduced": 2, "reproduced": 3}

#: a claim's source starts with the paper's file number ("paper 000 Fig. 3", "lecture 004, Elman ...")
PAPER_PREFIX = re.compile(r"^(?:paper|lecture) (\d{3})\b[\s,]*")
_PLACES = (re.compile(r"\bFigs?\. ?(\d+)"), re.compile(r"\bTables? (\d+)"), re.compile(r"\bappendix ([A-Z])"),
           re.compile(r"\bsec\. ?(\d+(?:\.\d+)?)"))
_NAMES = ("Fig. {}", "Table {}", "appendix {}", "sec. {}")
_WORK = re.compile(r"([A-Z][A-Za-z]+(?: et al\.| and [A-Z][A-Za-z]+)?) \(?(\d{4})\)?")


def artefact_of(source: str) -> tuple[str | None, str]:
    """``(paper's file number, artefact)`` of a claim's ``source``: its figure where it names one (panels
    a, b, ... belong to their figure), else its table, appendix or section, in that order; for the lecture
    (paper 004), whose claims cite the works its slides show, the work (``"Elman (1990)"``); else
    ``"the paper as a whole"``.

    >>> artefact_of("paper 000 sec. 4, Fig. 2")
    ('000', 'Fig. 2')
    >>> artefact_of("lecture 004, Weiss et al. (2018)")
    ('004', 'Weiss et al. (2018)')
    """
    m = PAPER_PREFIX.match(source)
    paper = m.group(1) if m else None
    rest = source[m.end():] if m else source
    for pattern, name in zip(_PLACES, _NAMES):
        found = pattern.search(rest)
        if found and not (source.startswith("lecture") and name.startswith("Fig")):
            return paper, name.format(found.group(1))
    work = _WORK.search(rest)
    if work:
        return paper, f"{work.group(1)} ({work.group(2)})"
    return paper, "the paper as a whole"


@dataclass(frozen=True)
class Artefact:
    """The claims about one artefact of one paper (``extension``: the claims the papers never made about it,
    rolled up apart) and its one verdict."""

    paper: str | None
    name: str
    claims: tuple
    extension: bool = False

    @property
    def verdict(self) -> str:
        return rollup(self.claims)

    @property
    def deciding(self):
        """The claim the verdict follows from: the first headline miss, else the worst claim (the first of
        the lowest rank), else the first claim."""
        run = [c for c in self.claims if c.verdict != "not run here"] or list(self.claims)
        return min(run, key=lambda c: (RANK[c.verdict], not getattr(c, "headline", False)))

    @property
    def chapters(self) -> list[str]:
        return list(dict.fromkeys(c.chapter for c in self.claims))

    def reason(self, causes: dict[str, str] | None = None) -> str:
        return reason(self, causes or {})


def rollup(claims) -> str:
    """The one verdict of an artefact from its claims' verdicts (:data:`ROLLUP_RULE`)."""
    verdicts = [c.verdict for c in claims]
    run = [v for v in verdicts if v != "not run here"]
    if not run:
        return "not run here"
    if any(getattr(c, "headline", False) and c.verdict == "not reproduced" for c in claims):
        return "not reproduced"
    if all(v == "reproduced" for v in run):
        return "reproduced"
    if all(v == "inconclusive" for v in run):
        return "inconclusive"
    if not any(v in ("reproduced", "partly reproduced") for v in run):
        return "not reproduced" if "not reproduced" in run else "inconclusive"
    return "partly reproduced"


def reason(artefact: Artefact, causes: dict[str, str]) -> str:
    """One plain sentence on why an artefact got its verdict, written from its deciding claim: what the paper
    says and what was found; for a miss, also its cause in words (``causes``: ``urnlib.claims.CAUSES``)."""
    c = artefact.deciding
    n = len(artefact.claims)
    count = f"{n} claims" if n != 1 else "1 claim"
    statement = c.statement.split("] ", 1)[-1] if c.statement.startswith("[") else c.statement
    if artefact.verdict == "reproduced":
        return f"All {count} hold; e.g. {statement}: {c.direction}."
    why = causes.get(c.cause or "", "")
    why = why.split(" (")[0].split(":")[0]
    return f"{statement[0].upper()}{statement[1:]}: {c.direction}" + (f" ({why})." if why else ".")


def artefact_key(c) -> tuple[bool, str | None, str]:
    """``(extension, paper, artefact)``: the row of the scorecard a claim belongs to (its declared artefact,
    else the one its source names)."""
    paper, name = artefact_of(c.source)
    return c.extension, paper, c.artefact or name


def artefacts(claims) -> list[Artefact]:
    """The artefacts of ``claims``, the papers' first (paper by paper in file-number order, each paper's
    artefacts in the order of its first claim), then the extensions' (in the order of their first claim)."""
    found: dict[tuple, list] = {}
    for c in claims:
        found.setdefault(artefact_key(c), []).append(c)
    keys = sorted(found, key=lambda k: (k[0], k[1] is None, k[1] or ""))
    return [Artefact(paper, name, tuple(found[(ext, paper, name)]), ext) for ext, paper, name in keys]
