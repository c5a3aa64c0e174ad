"""Claims: the paper's number or statement, ours, the rule that decides agreement, and the verdict.

A chapter builds a list of :class:`Claim` with :func:`claim` (the verdict is computed from a
boolean the chapter measured, never typed in), shows it with :func:`claims_table`, and saves it
with :func:`save_claims` so that the summary page can list every claim of the book. Numbers for the
paper and ours columns read best through :func:`format_value` (``claim`` applies it to numbers given
in place of text): integers without decimals, other values to 4 significant digits.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import asdict, dataclass, replace
from pathlib import Path

__all__ = ["Claim", "claim", "claims_frame", "claims_table", "verdict_summary", "save_claims", "load_claims",
           "format_value", "VERDICTS", "CAUSES", "MISSES", "misses_by_cause", "seed_summary",
           "verdict_counts", "across_settings", "setting_summary"]

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not testable here")
MISSES = ("partly reproduced", "not reproduced", "not testable here")
#: why a claim is missed: every claim that is not reproduced carries one (``open`` when nobody knows yet)
CAUSES = {
    "paper": "the paper's own numbers or formulas disagree",
    "data": "the paper's data is not reachable here (the stand-in is named)",
    "scale": "the compute here is below the paper's",
    "setting": "a stated setting that the authors' code did not use",
    "noise": "the difference is within the spread of the seeds",
    "open": "not known yet",
}
_COLOURS = {"reproduced": "#d9f2d9", "partly reproduced": "#fff2cc", "not reproduced": "#f8d7da",
            "not testable here": "#e9ecef"}
# Relative column widths of the claims table (its layout is fixed: it fits the width it is given, wrapping
# long cells, rather than growing wider than the page).
_WIDTHS = {"chapter": 12, "source": 10, "statement": 22, "paper": 14, "ours": 19, "rule": 21, "verdict": 14}


def format_value(value, digits: int = 4) -> str:
    """A measured or printed number as the claims tables show it.

    Integers (also floats with an integral value, e.g. ``848570.0``) get thousands separators and no decimals
    (``"848,570"``); other numbers keep ``digits`` significant digits without trailing zeros (``0.503000`` ->
    ``"0.503"``, ``1.529142`` -> ``"1.529"``), but never lose integer digits (``3310.8`` -> ``"3,311"``); very
    small or very large ones use an exponent (``"1.2e-07"``). Booleans are "yes"/"no", NaN is "n/a", text is
    returned as it is.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_"):  # numpy's bool too
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if not isinstance(value, numbers.Real):
        return str(value)
    x = float(value)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    magnitude = math.floor(math.log10(abs(x)))
    if magnitude < -4 or magnitude >= 15:
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa}e{exponent}"
    decimals = max(0, digits - 1 - magnitude)
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass(frozen=True)
class Claim:
    chapter: str
    source: str  # where the paper says it, e.g. "paper 000 Fig. 3"
    statement: str  # the paper's claim, in our words
    paper: str  # the paper's number or qualitative result
    ours: str  # what this run measured
    rule: str  # the test or tolerance that decides agreement
    verdict: str
    seeds: int | None = None  # how many seeds the claim rests on (None: it rests on no trained run)
    cause: str | None = None  # a miss's cause, one of CAUSES (None for a reproduced claim)


def claim(chapter: str, source: str, statement: str, paper: str | float, ours: str | float, rule: str,
          holds: bool | None, partly: bool = False, *, seeds: int | None = None, cause: str | None = None
          ) -> Claim:
    """Make a claim whose verdict follows from ``holds`` (``None``: not testable at this scale/data).

    ``partly=True`` with ``holds=False`` gives "partly reproduced" (e.g. the trend holds but not
    the magnitude); the chapter says which part. ``paper`` and ``ours`` may be numbers: they are
    written with :func:`format_value`. ``seeds``: how many seeds the measurement rests on. ``cause``: why the
    claim would be missed (one of :data:`CAUSES`); it is kept only when the verdict is a miss, and a miss
    without one gets ``open``.
    """
    if holds is None:
        verdict = "not testable here"
    elif holds:
        verdict = "reproduced"
    else:
        verdict = "partly reproduced" if partly else "not reproduced"
    if cause is not None and cause not in CAUSES:
        raise ValueError(f"cause={cause!r} is not one of {list(CAUSES)}")
    cause = (cause or "open") if verdict in MISSES else None
    return Claim(chapter, source, statement, format_value(paper), format_value(ours), rule, verdict,
                 None if seeds is None else int(seeds), cause)


def across_settings(by_setting: dict[str, list[Claim]]) -> list[Claim]:
    """The claims decided under each training setting (``{setting: claims}``, each statement starting with
    ``"[setting] "``), in that order; a claim missed under one setting (not for noise) and reproduced under
    another gets the cause ``setting``: the setting, not the paper, is why it is missed."""
    def statement(c: Claim) -> str:  # the claim without its setting
        return c.statement.split("] ", 1)[-1] if c.statement.startswith("[") else c.statement

    held = {statement(c) for cs in by_setting.values() for c in cs if c.verdict == "reproduced"}
    return [replace(c, cause="setting") if c.verdict in MISSES and c.cause != "noise" and statement(c) in held
            else c for cs in by_setting.values() for c in cs]


def setting_summary(claims: list[Claim], settings: dict[str, str]) -> str:
    """Markdown: per setting (``{name: what it is}``), how many of its claims are reproduced and how many
    missed (claims are matched to a setting by their ``"[name] "`` prefix), then the setting under which the
    largest share of its claims is reproduced, and how many claims hold under one setting only."""
    lines, shares = [], {}
    for name, what in settings.items():
        mine = [c for c in claims if c.statement.startswith(f"[{name}] ")]
        counts = {v: sum(c.verdict == v for c in mine) for v in VERDICTS}
        tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        lines.append(f"- **{name}** ({what}): " + (f"{len(mine)} claims, {tally}." if mine else "no claims."))
        if mine:
            shares[name] = (counts["reproduced"] / len(mine), counts["reproduced"], len(mine))
    if len(shares) > 1:
        best = max(shares.values())[0]
        top = [name for name, v in shares.items() if v[0] == best]
        which = " and ".join(f"**{name}** ({shares[name][1]} of {shares[name][2]})" for name in top)
        lines.append("\n" + (f"The largest share of claims is reproduced under {which}" if len(top) == 1 else
                             f"The settings {which} reproduce the same share of their claims"))
        moved = sum(c.cause == "setting" for c in claims)
        lines[-1] += (f"; {moved} claim{'s' if moved != 1 else ''} missed under one setting "
                      f"{'are' if moved != 1 else 'is'} reproduced under another (cause *setting* in the "
                      "claims table).")
    return "\n".join(lines)


def claims_frame(claims: list[Claim]):
    """A pandas DataFrame of the claims (one row each)."""
    import pandas as pd

    cols = ["source", "statement", "paper", "ours", "rule", "verdict"]
    rows = [{k: format_value(v) for k, v in asdict(c).items() if k not in ("seeds", "cause")} for c in claims]
    return pd.DataFrame(rows, columns=["chapter", *cols])


def claims_table(claims: list[Claim], with_chapter: bool = False):
    """A styled table (pandas Styler) with verdicts coloured, for display in a notebook.

    The table takes the full width of the page's text column with fixed relative column widths, and long
    cells wrap (a long word breaks), so that it never needs sideways scrolling; cell text is HTML-escaped
    (a claim may say ``< 1%`` or ``<unk>``).
    """
    df = claims_frame(claims)
    if not with_chapter:
        df = df.drop(columns="chapter")
    total = sum(_WIDTHS[c] for c in df.columns)
    widths = [{"selector": f"th.col_heading.col{i}", "props": f"width: {100 * _WIDTHS[c] / total:.1f}%;"}
              for i, c in enumerate(df.columns)]
    return (df.style.hide(axis="index")
            .format(escape="html")
            .map(lambda v: f"background-color: {_COLOURS.get(v, 'white')}; color: #212529",  # dark mode too
                 subset=["verdict"])
            .set_properties(**{"text-align": "left", "vertical-align": "top", "overflow-wrap": "anywhere"})
            .set_table_attributes('class="urnlib-claims"')
            .set_table_styles([{"selector": "", "props": "table-layout: fixed; width: 100%;"},
                               {"selector": "th", "props": "text-align: left; overflow-wrap: anywhere;"},
                               *widths]))


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


def verdict_counts(claims: list[Claim]):
    """Per chapter (in the order of ``claims``), the number of claims and of each verdict (:data:`VERDICTS`,
    in that order), with a last row ``all``: a DataFrame."""
    import pandas as pd

    rows = []
    for chapter in [*dict.fromkeys(c.chapter for c in claims), None]:
        mine = [c for c in claims if chapter is None or c.chapter == chapter]
        rows.append({"chapter": "all" if chapter is None else chapter, "claims": len(mine),
                     **{v: sum(c.verdict == v for c in mine) for v in VERDICTS}})
    return pd.DataFrame(rows)


def seed_summary(claims: list[Claim]):
    """Per chapter: claims resting on trained runs, the fewest and most seeds they rest on, and how many rest
    on fewer than 3 (a DataFrame)."""
    import pandas as pd

    rows = []
    for chapter in dict.fromkeys(c.chapter for c in claims):
        seeds = [c.seeds for c in claims if c.chapter == chapter and c.seeds is not None]
        rows.append({"chapter": chapter, "claims on trained runs": len(seeds),
                     "fewest seeds": min(seeds) if seeds else "-", "most seeds": max(seeds) if seeds else "-",
                     "on fewer than 3 seeds": sum(s < 3 for s in seeds)})
    return pd.DataFrame(rows)


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
    """Every claim saved under ``directory``, chapter by chapter (file name order).

    Raises:
        FileNotFoundError: no claim is saved there (the chapters that save them have not been run).
    """
    out = []
    for path in sorted(Path(directory).glob("*.json")):
        out.extend(Claim(**item) for item in json.loads(path.read_text()))
    if not out:
        raise FileNotFoundError(f"no claims found in {directory}: "
                                "run the chapter notebooks first (make book)")
    return out
