"""Claims: the paper's sentence and number, ours, the rule that decides agreement, and the verdict.

A chapter builds a list of :class:`Claim` with :func:`claim` (the verdict is computed from what the chapter
measured - a :class:`~urnlib.rules.Decision` or a boolean - never typed in), shows it with
:func:`urnlib.reports.claims_tables.claims_table`, and saves it with :func:`save_claims` so that the summary
page can list every claim of the book. Numbers for the paper and ours columns read best through
:func:`format_value` (``claim`` applies it to numbers given in place of text): integers without decimals,
other values to 4 significant digits.

**The protocol** every chapter follows: selection (early stopping, kept weights, any "best epoch") uses a
validation set drawn like the training data, or the paper's own validation split; test data are read for
reporting only. Each claim quotes the paper's sentence it decides (``quote``), says which epoch it reads
(``epoch``: the paper's final epoch, or the one selected on validation data) and what was measured
(``direction``), and gets one of five verdicts (:data:`VERDICTS`):

* reproduced / partly reproduced / not reproduced: the rule (:mod:`urnlib.rules`) decided it;
* inconclusive: the seeds do not decide it (a difference within their spread: its direction, its size and
  the seeds that would decide it are given), or a model it rests on did not train (cause ``untrained``);
* not run here: the data or the compute it needs is not here (cause ``data`` or ``scale``: the claim says
  what it would take).

A miss names its cause from evidence (:data:`CAUSES`). Claims the papers never made (the zoo's) are extensions
(``extension=True``), counted apart from the papers'.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from urnlib.artefacts import artefact_of
from urnlib.statements import kind_of

__all__ = ["Claim", "claim", "save_claims", "load_claims", "format_value", "VERDICTS", "CAUSES", "MISSES",
           "UNDECIDED", "across_settings", "setting_summary", "both_readings", "anchor", "authors_cause"]

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "inconclusive", "not run here")
MISSES = VERDICTS[1:]
UNDECIDED = ("inconclusive", "not run here")  #: what ``holds=None`` gives, by cause
#: why a claim is missed: every claim that is not reproduced carries one (``open`` when nobody knows yet: the
#: claim then names the experiment that would settle it)
CAUSES = {
    "paper": "the paper's own numbers or formulas disagree",
    "data": "the paper's data is not reachable here (the stand-in is named)",
    "scale": "the compute here is below the paper's",
    "setting": "a stated setting that the authors' code did not use",
    "noise": "the difference is within the spread of the seeds (its direction, size and the seeds that would "
             "decide it are given)",
    "untrained": "a model it rests on did not train as the paper did (it stayed at chance, or stopped "
                 "before the paper's number of epochs): no evidence either way",
    "tie": "every seed of every side gives the same value (a ceiling or floor of the task): the task cannot "
           "order the models, and no number of seeds would",
    "authors": "the miss stands with the models trained as the authors' code trains them (their cell, rate "
               "or mask; the evidence names those runs), not a difference of our setting",
    "open": "not known yet (the claim names the experiment that would settle it)",
}


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
    verdict: str  # one of VERDICTS
    seeds: int | None = None  # how many seeds the claim rests on (None: it rests on no trained run)
    cause: str | None = None  # a miss's cause, one of CAUSES (None for a reproduced claim)
    quote: str = ""  # the paper's sentence the claim decides, word for word
    epoch: str = ""  # which epoch it reads: "final (epoch 100)", "selected on validation data", "-" ...
    direction: str = ""  # what was measured: "URN below LSTM by 0.03", "0.91, above 0.9"
    seeds_needed: int | None = None  # inconclusive: seeds per side that would decide it at this spread
    extension: bool = False  # a claim the papers never made (the zoo's), counted apart
    settle: str = ""  # a miss: the experiment that would settle it, its cost
    artefact: str = ""  # the paper's figure, table or section it is about ("Fig. 3", "Table 2", "sec. 4")
    kind: str = ""  # the kind of statement, one of urnlib.statements.KINDS (the rule that decided it)
    evidence: str = ""  # a miss: the experiment behind its cause, and its numbers
    headline: bool = False  # the artefact's headline claim: its miss makes the artefact not reproduced


def claim(chapter: str, source: str, statement: str, paper: str | float, ours: str | float, rule: str,
          holds, partly: bool = False, *, seeds: int | None = None, cause: str | None = None,
          quote: str = "", epoch: str = "", direction: str = "", seeds_needed: int | None = None,
          extension: bool = False, settle: str = "", idle=(), artefact: str = "", kind: str = "",
          evidence: str = "", headline: bool = False) -> Claim:
    """Make a claim whose verdict follows from ``holds``.

    Args:
        holds: ``True``, ``False``, ``None`` (undecided: "inconclusive", or "not run here" when ``cause`` is
            ``data`` or ``scale``), or a :class:`~urnlib.rules.Decision`, whose ``direction`` and
            ``seeds_needed`` are then taken unless given.
        partly: with ``holds=False``, "partly reproduced" (e.g. the trend holds but not the magnitude); the
            chapter says which part.
        paper, ours: numbers or text (numbers are written with :func:`format_value`).
        seeds: how many seeds the measurement rests on.
        cause: why the claim would be missed (one of :data:`CAUSES`); kept only for a miss; an inconclusive
            claim without one gets ``noise``, another miss ``open``.
        quote, epoch, direction, seeds_needed, extension, settle, evidence: see :class:`Claim`.
        idle: the models the claim rests on that did not train (each named, with why where known): the one
            training guard of every chapter. Then the claim is no evidence: inconclusive, cause ``untrained``,
            ``ours`` names them, whatever ``holds`` says, and so does ``evidence`` where none is given.
        artefact: the paper's figure, table or section (:func:`urnlib.artefacts.artefact_of` of ``source``
            when not given).
        kind: the kind of statement (:data:`urnlib.statements.KINDS`); taken from a Decision's own, else
            ``check`` (a yes/no computed exactly).

    The settle policy, the same for every chapter: a claim keeps its ``settle`` text only when it is missed.
    """
    kind = kind or kind_of(holds, rule)
    artefact = artefact or artefact_of(source)[1]
    if hasattr(holds, "holds"):  # a rules.Decision
        direction = direction or holds.direction
        seeds_needed = seeds_needed if seeds_needed is not None else holds.seeds_needed
        cause = cause or (holds.cause if holds.holds is None else None)
        holds = holds.holds
    if idle:
        direction = direction or (ours if isinstance(ours, str) else "")
        holds, partly, cause = None, False, "untrained"
        ours = f"did not train ({'; '.join(idle)}): {format_value(ours)}"
        evidence = evidence or f"the training guard: {'; '.join(idle)}"
    if cause is not None and cause not in CAUSES:
        raise ValueError(f"cause={cause!r} is not one of {list(CAUSES)}")
    if cause == "authors" and holds is not False:  # only a decided miss can stand in the authors' setting
        cause = None
    if holds is None:
        verdict = "not run here" if cause in ("data", "scale") else "inconclusive"
        cause = cause or "noise"
    elif holds:
        verdict = "reproduced"
    else:
        verdict = "partly reproduced" if partly else "not reproduced"
    cause = (cause or "open") if verdict in MISSES else None
    if not direction:  # a yes/no check (a formula, a count): what was found, against the statement
        direction = {"reproduced": "as the paper states", "not run here": "not measured here",
                     "inconclusive": "the seeds disagree"}.get(verdict, "not as the paper states")
    return Claim(chapter, source, statement, format_value(paper), format_value(ours), rule, verdict,
                 None if seeds is None else int(seeds), cause, quote, epoch, direction,
                 seeds_needed if verdict == "inconclusive" else None, extension,
                 settle if verdict in MISSES else "", artefact, kind, evidence if verdict in MISSES else "",
                 headline)


def authors_cause(holds: Iterable[bool | None]) -> str | None:
    """The cause of a miss from the same claim decided again on runs trained as the authors' code trains them,
    one decision per part the claim rests on (``holds``, e.g. one per size; an empty one gives ``None``):
    ``setting`` where it holds on every part (our setting is why it is missed), ``authors`` where it fails on
    one (the miss stands in the authors' setting too), ``None`` where no part fails and one is undecided (the
    claim keeps the cause it had)."""
    held = list(holds)
    if not held:
        return None
    if any(h is False for h in held):
        return "authors"
    return "setting" if all(h is True for h in held) else None


def both_readings(final: list[Claim], other: list[Claim],
                  reading: str = "at the lowest test loss (selected on test data)") -> list[Claim]:
    """The claims read at the epoch the paper's protocol implies (``final``), each with the other reading of
    the same claim (``other``, e.g. at an epoch selected on test data) added to its ``ours`` where that
    reading's verdict differs: both lists decide the same claims, in the same order."""
    return [f if f.verdict == o.verdict else replace(f, ours=f"{f.ours} || {reading}: {o.ours}, {o.verdict}")
            for f, o in zip(final, other, strict=True)]


def across_settings(by_setting: dict[str, list[Claim]]) -> list[Claim]:
    """The claims decided under each training setting (``{setting: claims}``, each statement starting with
    ``"[setting] "``), in that order; a claim missed under one setting for a cause nobody knows yet (``open``)
    and reproduced under another gets the cause ``setting``: the setting, not the paper, is why it is missed,
    and the settings that reproduce it as its evidence (after any evidence it had). Reproduced nowhere but
    missed under another setting for want of data or compute (``data``, ``scale``: that setting's own trend
    reaches the paper's value within the paper's size, where this one's did not), it is ``setting`` too, with
    that trend as its evidence. Else, missed under another setting with the cause ``authors`` (the miss
    stands with the authors' own setting), it takes that cause, with that setting's evidence; otherwise it
    stays ``open``, with what the other settings found (their verdicts and numbers) as its evidence.
    Another setting's result replaces only ``open``: a cause found from evidence (``data``, ``scale``,
    ``paper``, ``noise``, ``untrained``, ...) stays as it is."""
    def statement(c: Claim) -> str:  # the claim without its setting
        return c.statement.split("] ", 1)[-1] if c.statement.startswith("[") else c.statement

    held: dict[str, list[str]] = {}
    grows: dict[str, list[tuple[str, str]]] = {}
    stands: dict[str, list[tuple[str, str]]] = {}
    elsewhere: dict[str, list[Claim]] = {}
    for setting, cs in by_setting.items():
        for c in cs:
            elsewhere.setdefault(statement(c), []).append(c)
            if c.verdict == "reproduced":
                held.setdefault(statement(c), []).append(setting)
            elif c.verdict in MISSES and c.cause in ("data", "scale"):
                grows.setdefault(statement(c), []).append((setting, c.evidence))
            elif c.verdict in MISSES and c.cause == "authors":
                stands.setdefault(statement(c), []).append((setting, c.evidence))

    def moved(c: Claim) -> Claim:  # the evidence: where the same claim is reproduced, beside any it had
        if statement(c) in held:
            cause, where = "setting", (f"reproduced under {', '.join(held[statement(c)])} (the same claim on "
                                       "that setting's runs)")
        elif statement(c) in grows:
            cause, where = "setting", "; ".join(
                f"reached under {setting} within the paper's amount of training (that setting's own trend): "
                f"{evidence}" for setting, evidence in grows[statement(c)])
        elif statement(c) in stands:
            cause, where = "authors", "; ".join(f"missed under {setting} too, {evidence}"
                                                for setting, evidence in stands[statement(c)])
        else:  # no cause from the others, but what they found is evidence too
            cause, where = "open", "; ".join(
                f"{o.verdict} under {o.statement[1:].split('] ', 1)[0]}: {o.ours}"
                for o in elsewhere[statement(c)] if o is not c and o.statement.startswith("["))
            if not where:
                return c
        return replace(c, cause=cause, evidence=f"{c.evidence}; {where}" if c.evidence else where)

    return [moved(c) if c.verdict in MISSES and c.cause == "open" else c
            for cs in by_setting.values() for c in cs]


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
                      f"{'are' if moved != 1 else 'is'} put down to it (cause *setting* in the claims "
                      "table).")
    return "\n".join(lines)


def _escape(text: str) -> str:
    """Backslash the Markdown characters a claim's formula may hold (``b_{t-1}``, ``W_u^T``, ``<= 1``), so a
    statement renders as written rather than in italics or as HTML."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>#|~^" else ch for ch in text)


def anchor(chapter: str, source: str) -> str:
    """The HTML id of a chapter's group of claims about one place in a paper (``source``): the same on the
    chapter's page and on the summary page, so that other pages can link to it (``dyck.html#<anchor>``).

    It depends on ``chapter`` and ``source`` only, lower-cased with every run of other characters than ASCII
    letters and digits made one ``-`` (``anchor("dyck", "paper 000 Fig. 3")`` is
    ``"claims-dyck-paper-000-fig-3"``): sources that differ only in punctuation, case or spacing share a
    group.
    """
    return f"claims-{_slug(chapter) or 'chapter'}-{_slug(source) or 'unsourced'}"


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def save_claims(claims: list[Claim], directory: str | Path, chapter: str) -> Path:
    """Write ``<directory>/<chapter>.json`` (read back by :func:`load_claims`).

    Raises:
        ValueError: a claim lacks its ``quote``, ``epoch`` or ``direction``, its verdict is not one of
            :data:`VERDICTS`, or its cause is ``open`` without ``settle`` (the message names it): every saved
            claim says which sentence it decides and which epoch it reads, and an open miss how to settle it.
    """
    bad = [f"{c.statement!r} ({', '.join(k for k in ('quote', 'epoch', 'direction') if not getattr(c, k))})"
           for c in claims if not (c.quote and c.epoch and c.direction)]
    bad += [f"{c.statement!r} (verdict {c.verdict!r})" for c in claims if c.verdict not in VERDICTS]
    bad += [f"{c.statement!r} (cause open without the experiment that would settle it)" for c in claims
            if c.cause == "open" and not c.settle]
    if bad:
        raise ValueError(f"{chapter}: claims without a quote, epoch or direction, or with an unknown "
                         "verdict: " + "; ".join(bad))
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
