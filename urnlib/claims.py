"""Claims: the paper's number or statement, ours, the rule that decides agreement, and the verdict.

A chapter builds a list of :class:`Claim` with :func:`claim` (the verdict is computed from a
boolean the chapter measured, never typed in), shows it with :func:`claims_table`, and saves it
with :func:`save_claims` so that the summary page can list every claim of the book.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Claim", "claim", "claims_frame", "claims_table", "verdict_summary", "save_claims", "load_claims", "VERDICTS"]

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not testable here")
_COLOURS = {"reproduced": "#d9f2d9", "partly reproduced": "#fff2cc", "not reproduced": "#f8d7da",
            "not testable here": "#e9ecef"}


@dataclass(frozen=True)
class Claim:
    chapter: str
    source: str  # where the paper says it, e.g. "paper 000 Fig. 3"
    statement: str  # the paper's claim, in our words
    paper: str  # the paper's number or qualitative result
    ours: str  # what this run measured
    rule: str  # the test or tolerance that decides agreement
    verdict: str


def claim(chapter: str, source: str, statement: str, paper: str, ours: str, rule: str,
          holds: bool | None, partly: bool = False) -> Claim:
    """Make a claim whose verdict follows from ``holds`` (``None``: not testable at this scale/data).

    ``partly=True`` with ``holds=False`` gives "partly reproduced" (e.g. the trend holds but not
    the magnitude); the chapter says which part.
    """
    if holds is None:
        verdict = "not testable here"
    elif holds:
        verdict = "reproduced"
    else:
        verdict = "partly reproduced" if partly else "not reproduced"
    return Claim(chapter, source, statement, paper, ours, rule, verdict)


def claims_frame(claims: list[Claim]):
    """A pandas DataFrame of the claims (one row each)."""
    import pandas as pd

    cols = ["source", "statement", "paper", "ours", "rule", "verdict"]
    return pd.DataFrame([asdict(c) for c in claims], columns=["chapter", *cols])


def claims_table(claims: list[Claim], with_chapter: bool = False):
    """A styled table (pandas Styler) with verdicts coloured, for display in a notebook."""
    df = claims_frame(claims)
    if not with_chapter:
        df = df.drop(columns="chapter")
    return (df.style.hide(axis="index")
            .map(lambda v: f"background-color: {_COLOURS.get(v, 'white')}", subset=["verdict"])
            .set_properties(**{"text-align": "left", "vertical-align": "top"}))


def verdict_summary(claims: list[Claim]) -> str:
    """One Markdown paragraph: how many claims hold, and which do not (for the top of a chapter)."""
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    head = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    misses = [c for c in claims if c.verdict in ("not reproduced", "partly reproduced")]
    lines = [f"**{len(claims)} claims: {head}.**"]
    if misses:
        lines.append(" Not (fully) reproduced: " + "; ".join(f"{_escape(c.statement)} ({c.source})" for c in misses)
                     + ".")
    return "".join(lines)


def _escape(text: str) -> str:
    """Backslash the Markdown characters a claim's formula may hold (``b_{t-1}``, ``W_u^T``, ``<= 1``), so a
    statement renders as written rather than in italics or as HTML."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>#|~^" else ch for ch in text)


def save_claims(claims: list[Claim], directory: str | Path, chapter: str) -> Path:
    """Write ``<directory>/<chapter>.json`` (read back by :func:`load_claims`)."""
    path = Path(directory) / f"{chapter}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(c) for c in claims], indent=1))
    return path


def load_claims(directory: str | Path) -> list[Claim]:
    """Every claim saved under ``directory``, chapter by chapter (file name order)."""
    out = []
    for path in sorted(Path(directory).glob("*.json")):
        out.extend(Claim(**item) for item in json.loads(path.read_text()))
    return out
