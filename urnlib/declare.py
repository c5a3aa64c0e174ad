"""Claims as declarations: each chapter states its claims as a table of :class:`Spec` entries, and one
function, :func:`evaluate`, turns them into :class:`~urnlib.claims.Claim` objects the same way in every
chapter.

A :class:`Spec` is what the paper says (its artefact in ``source``, the quoted sentence, the claim in our
words, the paper's number), the kind of statement (:data:`urnlib.statements.KINDS`), the measure in words
(``what``) and the measure itself: a function of the chapter's measured runs that returns a :class:`Measured`
(what we found, and the decision of the kind's rule), or ``None`` where the runs cannot make the claim (a size
that was not trained). The model is Great Expectations' expectations: a declared type with its arguments,
whose evaluation gives the observed value and the outcome, and whose words come from the type.

What :func:`evaluate` does once for every chapter:

* **the rule's words** are the measure in words followed by the kind's rule (:attr:`Spec.rule`), never typed
  into a claim;
* **the kind is checked**: every :class:`~urnlib.rules.Decision` a measure returns must come from the kind's
  rule; a claim of several parts (sizes, models) returns them as a list, and one verdict follows from
  :func:`urnlib.rules.combine` (``partly`` when some part holds) with the seeds that would decide every
  undecided part (:func:`urnlib.rules.needed`);
* **the training guard**: a claim that rests on a model that did not train (``idle``) is no evidence
  (inconclusive, cause ``untrained``: :func:`urnlib.claims.claim`), and it rests on as many seeds as the
  fewest of its models has;
* **the settle policy** of :func:`urnlib.claims.claim`: a claim keeps its settle text and evidence only when
  it is missed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from urnlib.claims import Claim, claim, format_value
from urnlib.rules import Decision, combine, needed, off_chance
from urnlib.statements import KINDS

__all__ = ["Spec", "Measured", "evaluate", "untrained"]


@dataclass(frozen=True)
class Measured:
    """What a claim's measure found.

    Args:
        ours: what was measured, in words or as a number.
        holds: the decision of the kind's rule (a :class:`~urnlib.rules.Decision`); a list of them for a claim
            of several parts; ``True``/``False`` for a property checked exactly; ``None`` undecided.
        partly: with a failing single decision, "partly reproduced" (the chapter says which part held).
        rests: the models (labels) the claim rests on; ``None``: every model :func:`evaluate` was given.
        settle: the experiment that would settle a miss, with its cost (kept only for a miss).
        direction: what was measured against the statement; ``None``: the decision's own, else ``ours`` (a
            claim of several parts, or one checked exactly).
        seeds_needed: the seeds that would decide it; ``None``: from the decision or its parts.
        cause, evidence: a miss's cause (:data:`urnlib.claims.CAUSES`) and the experiment behind it.
        paper: the paper's number where it depends on the setting (``None``: the spec's).
        decided: the decisions behind a ``holds`` the chapter combined itself (checked against the kind).
    """

    ours: Any
    holds: Any
    partly: bool = False
    rests: Sequence[str] | None = None
    settle: str = ""
    direction: str | None = None
    seeds_needed: int | None = None
    cause: str | None = None
    evidence: str = ""
    paper: Any = None
    decided: Sequence[Decision] = ()


@dataclass(frozen=True)
class Spec:
    """One claim of a paper, declared: where and what the paper says, the kind of statement, the measure in
    words and as a function of the chapter's measurements (``measure(m)`` gives a :class:`Measured`, or
    ``None`` where the runs cannot make the claim). ``what``, ``statement`` and ``epoch`` may be functions of
    the measurements where their words depend on the runs."""

    source: str  # the paper and its artefact: "paper 001 Fig. 2a"
    statement: str | Callable[[Any], str]  # the claim, in our words (or from the measurements)
    quote: str  # the paper's sentence, word for word
    paper: Any  # the paper's number or qualitative result
    kind: str  # a key of urnlib.statements.KINDS
    what: str | Callable[[Any], str]  # the measure and its direction, in words (or from the measurements)
    epoch: str | Callable[[Any], str]  # which epoch it reads (or from the measurements)
    measure: Callable[[Any], Measured | None]
    extension: bool = False  # a claim the papers never made
    headline: bool = False  # the artefact's headline claim
    artefact: str = ""  # the artefact, where it is not the one named in ``source``

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.source}: {self.quote[:60]!r}: kind {self.kind!r} is not one of "
                             f"{list(KINDS)}")

    def rule(self, m: Any = None) -> str:
        """The rule's words: the measure in words, then the kind's rule (:data:`urnlib.statements.KINDS`)."""
        what = self.what(m) if callable(self.what) else self.what
        return f"{what}; {KINDS[self.kind].rule}" if what else KINDS[self.kind].rule


def _decided(found: Measured) -> Iterable[Decision]:
    parts = list(found.holds) if isinstance(found.holds, (list, tuple)) else [found.holds]
    return [p for p in [*parts, *found.decided] if isinstance(p, Decision)]


def evaluate(chapter: str, specs: Iterable[Spec], m: Any, *, seeds: Mapping[str, int] | None = None,
             idle: Mapping[str, str] | None = None) -> list[Claim]:
    """The claims of ``specs`` decided on the measurements ``m`` (whatever the chapter's measures read).

    Args:
        seeds: ``{model label: its number of seeds}``; a claim rests on as many seeds as the fewest of its
            models (:attr:`Measured.rests`, default every label here); ``None``: on no trained run.
        idle: ``{model label: why it did not train}``: the training guard of :func:`urnlib.claims.claim`.

    Raises:
        ValueError: a measure's decision comes from another kind's rule than its spec declares.
    """
    seeds, idle = dict(seeds or {}), dict(idle or {})
    out = []
    for spec in specs:
        found = spec.measure(m)
        if found is None:
            continue
        wrong = {d.kind for d in _decided(found) if d.kind and d.kind != spec.kind}
        if wrong:
            raise ValueError(f"{chapter}: {spec.statement!r} is declared {spec.kind!r} but decided by the "
                             f"rule of {sorted(wrong)}")
        holds, partly, direction, needs = found.holds, found.partly, found.direction, found.seeds_needed
        if direction is None:  # a decision says what it found; a combined or exact claim, its measures
            direction = "" if isinstance(holds, Decision) else format_value(found.ours)
        if isinstance(holds, (list, tuple)):
            parts = list(holds)
            holds, partly = combine(parts)
            needs = needed([p for p in parts if isinstance(p, Decision)]) if needs is None else needs
        rests = list(seeds) if found.rests is None else list(found.rests)
        count = min((seeds[lab] for lab in rests if lab in seeds), default=None)
        statement, epoch = (f(m) if callable(f) else f for f in (spec.statement, spec.epoch))
        made = claim(
            chapter, spec.source, statement, spec.paper if found.paper is None else found.paper,
            found.ours, spec.rule(m), holds, partly, seeds=count, cause=found.cause, quote=spec.quote,
            epoch=epoch, direction=direction or "", seeds_needed=needs, extension=spec.extension,
            settle=found.settle, idle=[f"{lab} {idle[lab]}" for lab in rests if lab in idle],
            artefact=spec.artefact, kind=spec.kind, evidence=found.evidence, headline=spec.headline)
        out.append(_why_undecided(made, found))
    return out


def _why_undecided(made: Claim, found: Measured) -> Claim:
    """A claim left to the seeds' spread (``noise``) with no count of seeds that would decide it: its evidence
    says, part by part, why none does (:attr:`urnlib.rules.Decision.undecided`: an even split of the seeds,
    or more than :data:`urnlib.rules.MAX_SEEDS` per side)."""
    if made.verdict != "inconclusive" or made.cause != "noise" or made.seeds_needed or made.evidence:
        return made
    why = [f"{d.direction}: {d.undecided}" for d in _decided(found) if d.holds is None and d.undecided]
    return replace(made, evidence="undecided by the seeds' spread; " + "; ".join(why)) if why else made


def untrained(groups: Mapping[str, Sequence], labels: Iterable[str], *, epochs: int,
              measure: Callable[[Any], float], chance: float, higher: bool = True, what: str,
              baseline: str) -> dict[str, str]:
    """The training guard's ``{label: why}`` for :func:`evaluate`: the models among ``labels`` that are no
    evidence, a seed having trained fewer than the paper's ``epochs``, or ``measure`` of the runs not clearly
    off ``chance`` (:func:`urnlib.rules.off_chance`: over the seeds' band and on every seed; ``higher``: a
    higher value is better). ``what`` names the measure and ``baseline`` the chance level, in words."""
    out = {}
    for lab in labels:
        if any(len(r.history) < epochs for r in groups[lab]):
            out[lab] = f"trained fewer than {epochs} epochs"
            continue
        value = groups[lab].stat(measure)
        if not off_chance(chance, value, higher=higher):
            out[lab] = f"is at chance: {what} {value.text(3)}, {baseline}"
    return out
