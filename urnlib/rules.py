"""Decision rules on measures across seeds: when a claim holds, fails, or cannot be decided here.

Every rule takes :class:`~urnlib.seeds.Stat` values (one value per seed) and returns ``True`` (holds),
``False`` (fails) or ``None`` (not decidable: the difference is within the seed spread, or a side is at
chance). The rule of each is written once, here, as the text a claims table shows (``*_RULE``).

* :func:`beats` - A is better than B only when the means differ by more than the two standard deviations
  together (the ±1 sd bands do not overlap); B better by that much fails; anything closer is noise.
* :func:`at_least` / :func:`at_most` - a threshold from the paper: the whole ±1 sd band on the right side
  holds, the whole band on the wrong side fails, a band across the threshold is not decidable.
* :func:`positive` - a paired difference (the same seed's data on both sides, e.g. B - A per seed): holds
  when its whole ±1 sd band is above 0, fails when the whole band is below 0.
* :func:`on_every_seed` - a yes/no property measured per seed: all seeds yes, all seeds no, or mixed.
* :func:`combine` - one claim over several sizes or models: every part holds / some part fails (partly
  when others hold) / otherwise undecided.
* :func:`off_chance` - the guard of a comparison: both sides must be clearly off chance.
"""

from __future__ import annotations

from typing import Iterable

from urnlib.seeds import Stat

__all__ = ["beats", "at_least", "at_most", "positive", "on_every_seed", "combine", "off_chance", "BEATS_RULE",
           "THRESHOLD_RULE", "PAIRED_RULE", "EVERY_SEED_RULE", "CHANCE_RULE"]

BEATS_RULE = "means differ by more than the two seed standard deviations together; closer is not decided"
THRESHOLD_RULE = "the whole mean ± 1 sd band across seeds on the stated side; a band across it is not decided"
EVERY_SEED_RULE = "on every seed (mixed seeds: not decided)"
PAIRED_RULE = "the per-seed difference's mean ± 1 sd band above 0; a band across 0 is not decided"
CHANCE_RULE = "both sides off chance (mean - 1 sd above it)"


def beats(a: Stat, b: Stat, *, higher: bool = True, margin: float = 0.0) -> bool | None:
    """Whether A is better than B across seeds.

    Args:
        a, b: the measure of each side.
        higher: a higher value is better (accuracy); ``False`` for losses and error rates.
        margin: a difference the paper's claim needs on top of the noise (in the measure's units).

    Returns:
        ``True`` when A's mean is better than B's by more than ``a.sd + b.sd + margin``, ``False`` when B's is
        better by more than ``a.sd + b.sd``, else ``None``; ``None`` when a side has no value.
    """
    if not a.n or not b.n:
        return None
    diff = (a.mean - b.mean) if higher else (b.mean - a.mean)
    noise = a.sd + b.sd
    if diff > noise + margin:
        return True
    if -diff > noise:
        return False
    return None


def at_least(s: Stat, threshold: float) -> bool | None:
    """``s >= threshold``: ``True`` when mean - sd >= threshold, ``False`` when mean + sd < threshold."""
    if not s.n:
        return None
    if s.low >= threshold:
        return True
    if s.high < threshold:
        return False
    return None


def at_most(s: Stat, threshold: float) -> bool | None:
    """``s <= threshold``: ``True`` when mean + sd <= threshold, ``False`` when mean - sd > threshold."""
    if not s.n:
        return None
    if s.high <= threshold:
        return True
    if s.low > threshold:
        return False
    return None


def positive(difference: Stat) -> bool | None:
    """A paired difference is above 0: ``True`` when mean - sd > 0, ``False`` when mean + sd < 0."""
    if not difference.n:
        return None
    if difference.low > 0:
        return True
    if difference.high < 0:
        return False
    return None


def on_every_seed(flags: Iterable[bool]) -> bool | None:
    """``True`` when the property holds on every seed, ``False`` when on none, ``None`` when mixed."""
    flags = [bool(f) for f in flags]
    if not flags:
        return None
    if all(flags):
        return True
    if not any(flags):
        return False
    return None


def combine(parts: Iterable[bool | None]) -> tuple[bool | None, bool]:
    """One verdict from the verdicts of a claim's parts (sizes, models).

    Returns:
        ``(holds, partly)``: ``(True, False)`` when every part holds; ``(False, partly)`` when a part fails,
        ``partly`` when another part holds; ``(None, False)`` otherwise (no part fails, some undecided).
    """
    parts = list(parts)
    if parts and all(p is True for p in parts):
        return True, False
    if any(p is False for p in parts):
        return False, any(p is True for p in parts)
    return None, False


def off_chance(chance: float, *sides: Stat, higher: bool = True) -> bool:
    """Whether every side is clearly better than ``chance`` (its ±1 sd band entirely on the good side)."""
    if higher:
        return all(s.n and s.low > chance for s in sides)
    return all(s.n and s.high < chance for s in sides)
