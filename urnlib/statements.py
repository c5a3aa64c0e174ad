"""The kinds of statement a claim makes, each decided by one rule that every chapter shares.

A claim names its kind (:attr:`urnlib.claims.Claim.kind`); the rule that decides the kind stamps its
:class:`~urnlib.rules.Decision` with it, so a saved claim says which rule decided it, and the book's words for
the rule come from :data:`KINDS`, never from a chapter. ``tests/test_statements.py`` checks that every kind is
decided by exactly one function, and every saved claim names one of these kinds.

=============== =========================================================================================
kind            what the paper says, and the rule
=============== =========================================================================================
beats           A is better than B (:func:`urnlib.rules.compare`, Welch's t-test)
beats-paired    A is better than B on the same data, seed by seed (:func:`urnlib.rules.paired`)
vs-number       a measure lies above or below a number the paper states (:func:`urnlib.rules.threshold`)
matches         A matches B, or a printed number, within a tolerance from the paper's words
                (:func:`urnlib.rules.matches`)
within          A is no worse than B by a tolerance from the paper's words (:func:`urnlib.rules.within`)
no-drop         a measure does not fall from A to B: an equivalence test against a margin (:func:`no_drop`)
in-range        a measure lies in a range the paper prints, decided seed by seed (:func:`in_range`)
trend           a measure rises (or falls) with size, at every step of the sizes (:func:`trend`)
every-seed      a yes/no property of each run holds in general (:func:`urnlib.rules.every_seed`)
rates           a yes/no property holds more often for A than for B (:func:`urnlib.rules.rates`)
check           a formula, count or printed number checked exactly (no seeds: equal or not)
=============== =========================================================================================

A difference within the seeds' spread decides nothing: the claim is *inconclusive* with the seeds that would
decide it. A tie where every seed of every side gives one value (a ceiling or floor of the task) is its own
outcome, cause ``tie``: no number of seeds orders the models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from scipy import stats as _stats

from urnlib import rules
from urnlib.rules import LEVEL, Decision, decides, seeds_to_decide
from urnlib.seeds import Stat

__all__ = ["Kind", "KINDS", "no_drop", "in_range", "trend", "check", "kind_of", "NO_DROP_RULE", "TREND_RULE",
           "IN_RANGE_RULE"]

NO_DROP_RULE = ("equivalence test at 5%: the drop's one-sided upper bound below the margin (the paper's "
                "words, else one pooled sd of the seeds); a significant drop beyond it fails; else undecided")
IN_RANGE_RULE = ("on every seed: inside the printed range on every seed holds, outside it on every seed "
                 "fails (mixed seeds: a sign test at 5%)")
TREND_RULE = ("Welch's t-test at 5% at every step between consecutive sizes: every step in the stated "
              "direction holds, a significant step against it fails")


@dataclass(frozen=True)
class Kind:
    """A kind of statement: its name in the book, the rule in words, and the one function that decides it."""

    name: str
    title: str
    rule: str
    decide: Callable[..., Decision] | None


@decides("no-drop")
def no_drop(before: Stat | None = None, after: Stat | None = None, *, change: Stat | None = None,
            margin: float | None = None, higher: bool = True,
            names: tuple[str, str] = ("before", "after")) -> Decision:
    """Whether a measure does not fall from ``before`` to ``after`` (two one-sided tests, Schuirmann's TOST).

    Args:
        before, after: the measure on each side, one value per seed; or
        change: the per-seed change itself (after - before on the same seed, e.g. a fitted slope times the
            range), tested as one sample.
        margin: the largest drop that still counts as "no drop", from the paper's words; ``None``: the seeds'
            spread (one pooled standard deviation of the two sides, or of ``change``).
        higher: a higher value is better (accuracy); ``False`` for losses and error rates.

    Returns:
        holds ``True`` when the drop's upper one-sided 95% bound lies below ``margin``; ``False`` when the
        drop is significantly above ``margin`` (two-sided, as :func:`urnlib.rules.compare`); else ``None``
        with the seeds that would decide it. A drop that is merely not significant decides nothing.
    """
    if change is not None:
        if not change.n:
            return Decision(None, "the change has no value", math.nan)
        drop = -change.mean if higher else change.mean
        var, se2, df, have = change.sd ** 2, change.sd ** 2 / change.n, change.n - 1, change.n
        sides, where = 1, f"{names[1]} {'falls' if drop > 0 else 'rises' if drop < 0 else 'stays'}"
    else:
        if not before or not after or not before.n or not after.n:
            return Decision(None, "a side has no value", math.nan)
        drop = (before.mean - after.mean) if higher else (after.mean - before.mean)
        var = (before.sd ** 2 + after.sd ** 2) / 2
        se2 = before.sd ** 2 / before.n + after.sd ** 2 / after.n
        df, have, sides = before.n + after.n - 2, min(before.n, after.n), 2
        word = "falls" if drop > 0 else "rises" if drop < 0 else "stays"
        where = f"{names[1]} {word}"
    margin = math.sqrt(var) if margin is None else margin
    direction = f"{where}" + (f" by {abs(drop):.3g}" if drop else "") + \
        (f" from {names[0]}" if change is None else "") + f" (margin {margin:.3g})"
    if se2 == 0 or df < 1:  # no spread: the sign decides, and no drop at all is no drop
        return Decision(drop <= margin, direction, margin - drop)
    se = math.sqrt(se2)
    if drop + float(_stats.t.ppf(1 - LEVEL, df)) * se < margin:
        return Decision(True, direction, margin - drop)
    if drop - float(_stats.t.ppf(1 - LEVEL / 2, df)) * se > margin:
        return Decision(False, direction, margin - drop)
    more = seeds_to_decide(margin - drop, var, sides=sides)
    return Decision(None, direction, margin - drop, None if more is None else max(more, have + 1))


@decides("in-range")
def in_range(values: Iterable[float], low: float, high: float, *, name: str = "the measure") -> Decision:
    """Whether a measure lies in the range ``[low, high]`` the paper prints, decided seed by seed
    (:func:`urnlib.rules.every_seed` on "inside the range"): every seed inside holds, every seed outside
    fails, mixed seeds go to a sign test. A mean of seeds far outside the range is never "inconclusive"."""
    values = [float(v) for v in values if not math.isnan(float(v))]
    inside = [low <= v <= high for v in values]
    d = rules.every_seed(inside, what=f"{name} in [{low:g}, {high:g}]")
    seen = ", ".join(f"{v:g}" for v in values)
    return Decision(d.holds, f"{d.direction} ({seen})", d.size, d.seeds_needed)


@decides("trend")
def trend(by_size: Sequence[tuple[float, Stat]], *, rising: bool = True,
          what: str = "the measure") -> Decision:
    """Whether a measure rises (``rising``) or falls with size at every step between consecutive sizes
    (:func:`urnlib.rules.compare` per step, the sizes in increasing order): holds when every step goes the
    stated way significantly, fails when one step goes against it significantly, else undecided with the
    seeds that would decide every undecided step. A reversal between two middle sizes is seen, which a test
    of the two ends alone would miss."""
    steps = sorted(by_size, key=lambda p: p[0])
    if len(steps) < 2:
        return Decision(None, f"{what}: fewer than two sizes", math.nan)
    parts = [rules.compare(b, a, higher=rising, names=(f"{what} at {sb:g}", f"at {sa:g}"))
             for (sa, a), (sb, b) in zip(steps, steps[1:])]
    holds, _ = rules.combine(parts)
    size = min(p.size for p in parts)
    direction = "; ".join(p.direction for p in parts)
    return Decision(holds, direction, size, rules.needed(parts) if holds is None else None)


@decides("check")
def check(ok: bool, *, found: str = "") -> Decision:
    """A formula, count or printed number checked exactly: no seeds, equal or not."""
    return Decision(bool(ok), found or ("as the paper states" if ok else "not as the paper states"),
                    1.0 if ok else -1.0)


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("beats", "A beats B", rules.BEATS_RULE, rules.compare),
    Kind("beats-paired", "A beats B on the same data", rules.PAIRED_RULE, rules.paired),
    Kind("vs-number", "above or below a stated number", rules.THRESHOLD_RULE, rules.threshold),
    Kind("matches", "A matches B or a number", "Welch's t-test at 5% of the side behind against the other "
         "moved by the paper's tolerance", rules.matches),
    Kind("within", "A no worse than B by a tolerance", "Welch's t-test at 5% of A against B moved by the "
         "paper's tolerance", rules.within),
    Kind("no-drop", "does not fall", NO_DROP_RULE, no_drop),
    Kind("in-range", "in a printed range", IN_RANGE_RULE, in_range),
    Kind("trend", "a trend across sizes", TREND_RULE, trend),
    Kind("every-seed", "a property of every run", rules.EVERY_SEED_RULE, rules.every_seed),
    Kind("rates", "how often, A against B", rules.RATES_RULE, rules.rates),
    Kind("check", "a formula, count or printed number", "checked exactly: equal or not", check),
)}


def kind_of(holds, rule: str = "") -> str:
    """The kind a claim's ``holds`` was decided as: a :class:`~urnlib.rules.Decision`'s own; for a claim of
    several parts combined (:func:`urnlib.rules.combine`), the kind whose rule, in its own words, the claim's
    ``rule`` states first; else ``check`` (a yes/no computed exactly, such as a parameter count)."""
    kind = getattr(holds, "kind", "")
    if kind:
        return kind
    named = sorted((rule.index(k.rule), k.name) for k in KINDS.values() if k.rule and k.rule in rule)
    return named[0][1] if named else "check"
