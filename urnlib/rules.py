"""Decision rules on measures across seeds: when a claim holds, fails, or is not decided by the seeds run.

One rule per kind of claim, shared by every chapter and the zoo. Each takes :class:`~urnlib.seeds.Stat`
values (one value per seed) and returns a :class:`Decision`: ``holds`` (``True``, ``False``, or ``None``
when the seeds do not decide it), the ``direction`` and ``size`` of what was measured, and, for an
undecided difference, ``seeds_needed``: how many seeds per side would decide it if the observed means and
spreads stayed as they are. The tolerance of every rule comes from the seed spread, never from a number
of ours: a difference is decided when a t-test at the 5% level (two-sided) decides it.

* :func:`compare` - A better than B (Welch's t-test on the two sides' seeds); ``margin``: a difference
  the paper's own words require on top of it (e.g. "at least 10 points better").
* :func:`threshold` - a measure on one side of a number the paper states (one-sample t-test).
* :func:`paired` - a per-seed difference (the same seed's data on both sides) above 0 (paired t-test).
* :func:`within` / :func:`matches` - A no worse than B by a tolerance the paper's own numbers give
  ("comparable", "similar"): :func:`compare` against B moved by the tolerance; :func:`matches` for whichever
  side is behind.
* :func:`every_seed` - a yes/no property measured per seed: all seeds yes (holds), all no (fails); mixed seeds
  are decided by a sign test (is the share of seeds with the property away from one half?), else undecided
  with the seeds that would decide it.
* :func:`rates` - how often a yes/no property holds over the seeds of A against those of B (Fisher's exact
  test: a rate, unlike a mean, has no spread of its own to take a t-test from).
* :func:`combine` - one claim over several sizes or models; :func:`needed` - the seeds that would decide
  every undecided part of such a claim.
* :func:`off_chance` - the training guard: a model whose measure is not clearly off chance did not train,
  and a claim resting on it is no evidence.

A side measured once, or with no spread (a deterministic measure, every seed equal), is decided by the sign
of the difference. ``beats``, ``at_least``, ``at_most``, ``positive`` and ``on_every_seed`` return only
``holds``, for rules that combine several parts.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Iterable

from scipy import stats as _stats

from urnlib.seeds import Stat

__all__ = ["Decision", "decides", "compare", "within", "matches", "threshold", "paired", "every_seed",
           "beats",
           "at_least", "at_most", "positive", "on_every_seed", "combine", "needed", "off_chance",
           "seeds_to_decide",
           "rates", "beyond", "not_beyond", "BEYOND_RULE",
           "LEVEL", "BEATS_RULE", "THRESHOLD_RULE", "PAIRED_RULE", "EVERY_SEED_RULE", "CHANCE_RULE",
           "MAX_SEEDS", "RATES_RULE"]

LEVEL = 0.05  #: two-sided significance level of every t-test here
MAX_SEEDS = 1000  #: past this many seeds per side a difference is called "not decidable by seeds"
BEATS_RULE = "Welch's t-test at 5% on the seeds' values; undecided: the seeds that would decide it"
THRESHOLD_RULE = "one-sample t-test at 5% against the stated value; undecided: the seeds that would decide it"
EVERY_SEED_RULE = ("on every seed (mixed seeds: a sign test at 5% on the share of seeds with it; undecided: "
                   "the seeds that would decide it)")
PAIRED_RULE = "paired t-test at 5% on the per-seed differences; undecided: the seeds that would decide it"
RATES_RULE = ("Fisher's exact test at 5% (two-sided) on the two sets of seeds; undecided: the seeds that "
              "would decide it")
CHANCE_RULE = ("both sides off chance (mean - 1 sd above it, and every seed above it); a side at chance did "
               "not train")


@dataclass(frozen=True)
class Decision:
    """What a rule decided.

    Args:
        holds: ``True`` (the claim holds), ``False`` (it fails), ``None`` (the seeds do not decide it).
        direction: what was measured, in words (``"A above B by 0.031"``, ``"0.912, above 0.9"``).
        size: the signed difference (A - B, the measure - the threshold, the mean paired difference), in
            the measure's units, positive in the claim's favour.
        seeds_needed: for an undecided difference, the seeds per side that would decide it at the observed
            spread (``None``: decided, or more than :data:`MAX_SEEDS`, or no spread to go on).
        kind: the kind of statement the rule decides (:data:`urnlib.statements.KINDS`), stamped by the rule.
        cause: ``"tie"`` when every seed of every side gives one value (a ceiling or floor of the task): no
            number of seeds can order them, which is an outcome, not noise.
    """

    holds: bool | None
    direction: str
    size: float
    seeds_needed: int | None = None
    kind: str = ""  #: the kind of statement decided (a key of :data:`urnlib.statements.KINDS`)
    cause: str | None = None  #: an undecided outcome the rule names itself (``"tie"``), else ``None``

    @property
    def undecided(self) -> str:
        """How an undecided claim could be decided, in words ("" when decided)."""
        if self.holds is not None:
            return ""
        if self.seeds_needed is None:
            return "no number of seeds would decide it at this spread" if self.size == 0 or math.isnan(
                self.size) else f"more than {MAX_SEEDS:,} seeds per side would be needed"
        return f"about {self.seeds_needed} seeds per side would decide it at this spread"


def decides(kind: str):
    """Mark a rule as the one that decides statements of ``kind`` (a key of :data:`urnlib.statements.KINDS`):
    its :class:`Decision` carries the kind, and the function its attribute ``kind``."""
    def wrap(rule):
        @functools.wraps(rule)
        def stamped(*args, **kwargs) -> Decision:
            made = rule(*args, **kwargs)
            return made if made.kind else replace(made, kind=kind)
        stamped.kind = kind
        return stamped
    return wrap


def _t(df: float) -> float:
    return float(_stats.t.ppf(1 - LEVEL / 2, df)) if df > 0 else math.inf


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def seeds_to_decide(size: float, variance: float, sides: int = 2) -> int | None:
    """The fewest seeds n per side at which ``|size|`` passes the t-test, the spread staying as observed:
    ``|size| > t(df) * sqrt(sides * variance / n)`` (``variance``: the mean of the sides' variances; df
    ``sides * (n - 1)``). ``None`` past :data:`MAX_SEEDS` or when there is nothing to decide."""
    if size == 0 or math.isnan(size) or variance <= 0:
        return None
    for n in range(2, MAX_SEEDS + 1):
        if abs(size) > _t(sides * (n - 1)) * math.sqrt(sides * variance / n):
            return n
    return None


@decides("beats")
def compare(a: Stat, b: Stat, *, higher: bool = True, margin: float = 0.0, names: tuple[str, str] = ("A", "B")
            ) -> Decision:
    """Whether A is better than B across seeds (Welch's t-test at :data:`LEVEL`).

    Args:
        a, b: the measure of each side.
        higher: a higher value is better (accuracy); ``False`` for losses and error rates.
        margin: a difference the paper's claim needs on top of the noise (in the measure's units).
        names: the two sides, for :attr:`Decision.direction`.

    Returns:
        holds ``True`` when A is better than B by more than ``margin`` significantly, ``False`` when B is
        significantly better, else ``None`` (with the seeds that would decide it).
    """
    if not a.n or not b.n:
        return Decision(None, "a side has no value", math.nan)
    diff = (a.mean - b.mean) if higher else (b.mean - a.mean)
    raw = a.mean - b.mean
    word = "above" if raw > 0 else "below" if raw < 0 else "equal to"
    direction = f"{names[0]} {word} {names[1]}" + (f" by {_fmt(abs(raw))}" if raw else "")
    va, vb = a.sd ** 2, b.sd ** 2
    se2 = va / a.n + vb / b.n
    if se2 == 0:  # one seed each, or no spread: the sign decides
        holds = True if diff > margin else False if diff < 0 else None
        tie = diff == 0 and a.n > 1 and b.n > 1  # every seed of both sides gives one value
        return Decision(holds, direction + (" on every seed" if tie else ""), diff,
                        cause="tie" if tie else None)
    df = se2 ** 2 / sum((v / n) ** 2 / (n - 1) for v, n in ((va, a.n), (vb, b.n)) if n > 1 and v > 0)
    crit = _t(df) * math.sqrt(se2)
    if diff - margin > crit:
        return Decision(True, direction, diff)
    if -diff > crit:
        return Decision(False, direction, diff)
    toward = diff - margin if diff > margin else diff  # what more seeds would have to show
    return Decision(None, direction, diff, _more(seeds_to_decide(toward, (va + vb) / 2), min(a.n, b.n)))


@decides("vs-number")
def threshold(s: Stat, value: float, *, above: bool = True, name: str = "the measure") -> Decision:
    """Whether ``s`` lies above (``above=True``) or below ``value`` across seeds (one-sample t-test)."""
    if not s.n:
        return Decision(None, f"{name}: no value", math.nan)
    size = (s.mean - value) if above else (value - s.mean)
    side = "above" if s.mean > value else "below" if s.mean < value else "at"
    direction = f"{name} {_fmt(s.mean)}, {side} {_fmt(value)}"
    return _one_sample(size, s, direction)


@decides("beats-paired")
def paired(difference: Stat, *, name: str = "the per-seed difference") -> Decision:
    """Whether a paired difference (e.g. B - A, seed by seed) is above 0 (paired t-test)."""
    if not difference.n:
        return Decision(None, f"{name}: no value", math.nan)
    return _one_sample(difference.mean, difference, f"{name} {_fmt(difference.mean)} on average")


def _one_sample(size: float, s: Stat, direction: str) -> Decision:
    if s.n < 2 or s.sd == 0:  # no spread: the sign decides, and a value exactly at the bound is not past it
        return Decision(size > 0, direction, size)
    crit = _t(s.n - 1) * s.sd / math.sqrt(s.n)
    if size > crit:
        return Decision(True, direction, size)
    if -size > crit:
        return Decision(False, direction, size)
    return Decision(None, direction, size, _more(seeds_to_decide(size, s.sd ** 2, sides=1), s.n))


def _more(needed: int | None, have: int) -> int | None:
    """At least one seed more than the ``have`` that left it undecided (:func:`seeds_to_decide` pools the
    spread, the test it stands for does not, so at small n it can name the seeds already run)."""
    return None if needed is None else max(needed, have + 1)


@decides("within")
def within(a: Stat, b: Stat, tolerance: float, *, relative: bool = False, higher: bool = True,
           names: tuple[str, str] = ("A", "B")) -> Decision:
    """A is no worse than B by more than ``tolerance`` (absolute, or a fraction of B with ``relative``):
    :func:`urnlib.compare` of A against B moved by the tolerance; the direction is A's against B's."""
    sign = 1 if higher else -1
    moved = Stat.of(v * (1 - sign * tolerance) if relative else v - sign * tolerance for v in b.values)
    d = compare(a, moved, higher=higher)
    return Decision(d.holds, compare(a, b, names=names).direction, d.size, d.seeds_needed)


@decides("matches")
def matches(a: Stat, b: Stat, tolerance: float, *, relative: bool = False, higher: bool = True,
            names: tuple[str, str] = ("A", "B")) -> Decision:
    """A and B within ``tolerance`` of each other: :func:`within` for the side that is behind, stamped
    ``matches`` whichever side is behind (the direction A's against B's)."""
    if (a.mean < b.mean) == higher:
        return replace(within(a, b, tolerance, relative=relative, higher=higher, names=names), kind="matches")
    d = within(b, a, tolerance, relative=relative, higher=higher)
    return Decision(d.holds, compare(a, b, names=names).direction, d.size, d.seeds_needed, "matches", d.cause)


def _sign_test(k: int, n: int) -> float:
    return float(_stats.binomtest(k, n, 0.5).pvalue)


@decides("every-seed")
def every_seed(flags: Iterable[bool], *, what: str = "the property") -> Decision:
    """Whether a yes/no property of each seed holds in general: ``True`` when it holds on every seed,
    ``False`` when on none (no spread: the sign decides, as for a measure). Mixed seeds are a spread: a
    sign test (two-sided, :data:`LEVEL`) on the share of seeds with the property against one half decides
    them, else ``None`` with the seeds that would decide it were the observed share to stay as it is.
    ``size``: the share minus one half."""
    flags = [bool(f) for f in flags]
    k, n = sum(flags), len(flags)
    direction = f"{what} on {k} of {n} seeds"
    if not flags:
        return Decision(None, direction, math.nan)
    if all(flags):
        return Decision(True, direction, 0.5)
    if not any(flags):
        return Decision(False, direction, -0.5)
    share = k / n
    if _sign_test(k, n) < LEVEL:
        return Decision(share > 0.5, direction, share - 0.5)
    more = _seeds_until(n + 1, lambda m: _sign_test(round(share * m), m)) if share != 0.5 else None
    return Decision(None, direction, share - 0.5, more)


def _seeds_until(start: int, p_value) -> int | None:
    """The fewest seeds from ``start`` on at which ``p_value(seeds)`` falls below :data:`LEVEL` (``None``
    past :data:`MAX_SEEDS`): a share of seeds kept as observed, tested at more seeds."""
    return next((n for n in range(start, MAX_SEEDS + 1) if p_value(n) < LEVEL), None)


def _fisher(a: int, n_a: int, b: int, n_b: int) -> float:
    return float(_stats.fisher_exact([[a, n_a - a], [b, n_b - b]])[1])


@decides("rates")
def rates(a: int, n_a: int, b: int, n_b: int, *, what: str = "the property",
          names: tuple[str, str] = ("A", "B")) -> Decision:
    """Whether a yes/no property holds more often on A's ``n_a`` seeds (``a`` of them) than on B's (``b`` of
    ``n_b``): ``True`` when A's rate is higher and Fisher's exact test (two-sided, :data:`LEVEL`) decides it,
    ``False`` when B's is and the test decides it, else ``None`` with the seeds per side that would decide it
    were the observed rates to stay as they are."""
    for name, k, n in ((names[0], a, n_a), (names[1], b, n_b)):
        if not (isinstance(k, int) and isinstance(n, int) and 0 <= k <= n and n >= 1):
            raise ValueError(f"{name}: {k} of {n} seeds is not a count of seeds")
    p_a, p_b = a / n_a, b / n_b
    direction = f"{what} on {a} of {n_a} seeds of {names[0]} and {b} of {n_b} of {names[1]}"
    size = p_a - p_b
    if _fisher(a, n_a, b, n_b) < LEVEL:
        return Decision(size > 0, direction, size)
    needed = (_seeds_until(max(n_a, n_b) + 1, lambda n: _fisher(round(p_a * n), n, round(p_b * n), n))
              if size != 0 else None)
    return Decision(None, direction, size, needed)


def beats(a: Stat, b: Stat, *, higher: bool = True, margin: float = 0.0) -> bool | None:
    """:func:`compare`'s ``holds``."""
    return compare(a, b, higher=higher, margin=margin).holds


def at_least(s: Stat, value: float) -> bool | None:
    """``s >= value``: :func:`threshold`'s ``holds``."""
    return threshold(s, value, above=True).holds


def at_most(s: Stat, value: float) -> bool | None:
    """``s <= value``: :func:`threshold`'s ``holds``."""
    return threshold(s, value, above=False).holds


def positive(difference: Stat) -> bool | None:
    """:func:`paired`'s ``holds``."""
    return paired(difference).holds


def on_every_seed(flags: Iterable[bool]) -> bool | None:
    """:func:`every_seed`'s ``holds``."""
    return every_seed(flags).holds


def combine(parts: Iterable[bool | None | Decision]) -> tuple[bool | None, bool]:
    """One verdict from the verdicts of a claim's parts (sizes, models): each a ``holds`` or a
    :class:`Decision`.

    Returns:
        ``(holds, partly)``: ``(True, False)`` when every part holds; ``(False, partly)`` when a part fails,
        ``partly`` when another part holds; ``(None, False)`` otherwise (no part fails, some undecided).
    """
    parts = [p.holds if isinstance(p, Decision) else p for p in parts]
    if parts and all(p is True for p in parts):
        return True, False
    if any(p is False for p in parts):
        return False, any(p is True for p in parts)
    return None, False


def needed(parts: Iterable[Decision | None]) -> int | None:
    """The seeds per side that would decide every undecided part of a claim at the observed spreads (the
    most any part needs), for the claim that :func:`combine` leaves undecided; ``None`` when no part is
    undecided or one cannot be decided by seeds. A part ``None`` (not measured) is left out."""
    open_parts = [p for p in parts if p is not None and p.holds is None]
    if not open_parts or any(p.seeds_needed is None for p in open_parts):
        return None
    return max(p.seeds_needed for p in open_parts)


def off_chance(chance: float, *sides: Stat, higher: bool = True, each: bool = True) -> bool:
    """Whether every side is clearly better than ``chance``: its ±1 sd band entirely on the good side, and
    (``each``) every seed on the good side too: one run at chance is no evidence, however well the others
    did. A seed whose measure is undefined (NaN) is left out, as in :class:`~urnlib.seeds.Stat`. Pass
    ``each=False`` for a measure that a trained run can also miss on its own (a test loss above the class
    entropy from overconfidence), where another measure judges the seeds one by one."""
    good = (lambda v: v > chance) if higher else (lambda v: v < chance)
    band = (lambda s: s.low) if higher else (lambda s: s.high)
    return all(s.n and good(band(s)) and (not each or all(good(v) for v in s.finite)) for s in sides)


BEYOND_RULE = f"largest n accepted above N ({THRESHOLD_RULE})"


def beyond(largest: Stat, n: int, name: str = "the largest n accepted") -> Decision:
    """Whether a model accepts a^m b^m beyond its training range m <= ``n``: its largest n accepted above
    ``n`` over the seeds (:func:`threshold`). The one rule of every chapter on a^n b^n (the primer, the
    zoo)."""
    return threshold(largest, n, above=True, name=name)


def not_beyond(largest: Stat, n: int, name: str = "the largest n accepted") -> Decision:
    """The negation of :func:`beyond`: holds when the largest n accepted is below ``n``, or when no seed goes
    beyond ``n`` (every seed at most ``n``: the test has nothing to decide); fails when it is above ``n``."""
    d = beyond(largest, n, name)
    if largest.n and max(largest.finite) <= n:
        return Decision(True, d.direction, -d.size, kind=d.kind)
    return Decision(None if d.holds is None else not d.holds, d.direction, -d.size, d.seeds_needed, d.kind)
