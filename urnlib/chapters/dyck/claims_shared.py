"""What every claim of the Dyck chapter shares: the epochs they read (:data:`FINAL`, :data:`CURVE`,
:data:`WEIGHTS`), what their measures read (:class:`Measures`), the claims made once per model
(:class:`Each`), the training guard (:func:`untrained`) and :func:`decide`, which decides a table of
:class:`~urnlib.declare.Spec` under one setting with :func:`urnlib.declare.evaluate`. Paper 000's claims are
declared in :mod:`urnlib.chapters.dyck.claims`, paper 001's in :mod:`urnlib.chapters.dyck.claims_001`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Sequence

import numpy as np

from urnlib.chapters.dyck.report import CHAPTER, MAJORITY_ACCURACY, PAPER_EPOCHS, run_accuracy
from urnlib.claims import Claim
from urnlib.declare import Spec, evaluate
from urnlib.declare import untrained as guard
from urnlib.reports.common import cpu_hours, settle_unless_decided
from urnlib.seeds import Seeds, Stat

__all__ = ["FINAL", "CURVE", "WEIGHTS", "Measures", "Each", "decide", "untrained", "retrain", "settle",
           "fmt", "curve"]

FINAL = f"final (epoch {PAPER_EPOCHS}, the papers'; they select no epoch)"
CURVE = f"every epoch, 1-{PAPER_EPOCHS} (the training curve)"
WEIGHTS = f"final (epoch {PAPER_EPOCHS}, the papers': the stored weights)"


def retrain(*groups: Seeds, seeds: int | None = None, per: str = "") -> str:
    """The cost of training the models of ``groups`` again, from what their stored runs took: ``"about 0.4
    CPU hours, as these runs took"``; ``seeds``: that many new seeds of each (scaled from their own seeds);
    ``per``: what the hours are for (``"per 100 epochs"``)."""
    hours = sum(cpu_hours(g) * (seeds / len(g) if seeds else 1) for g in groups)
    return f"about {hours:.1f} CPU hours{' ' + per if per else ''}, as these runs took"


def settle(holds: bool | None, urn: dict[int, Seeds], lstm: dict[int, Seeds]) -> str:
    """What would settle a URN-against-LSTM claim: more seeds where it is undecided; where it fails decided,
    not more seeds but the authors' Keras models, which could show whether their setting holds."""
    cost = retrain(*urn.values(), *lstm.values(), seeds=3, per="per setting")
    return settle_unless_decided(holds, f"3 more seeds of each model under each setting ({cost})",
                                 "the authors' Keras URN and LSTM on 3 seeds at each size would show whether "
                                 f"their setting gives the paper's curves ({cost})")


def fmt(stat: Stat, digits: int = 3) -> str:
    return stat.text(digits)


def curve(run, key: str) -> np.ndarray:
    """A history column over the papers' epochs 1-100."""
    return np.asarray(run.column(key)[:PAPER_EPOCHS], dtype=float)


def untrained(view: dict[str, Seeds], labels, read) -> dict[str, str]:
    """The models among ``labels`` that did not train, each with why: fewer than the papers' 100 epochs on a
    seed, or closing-bracket accuracy at the epoch read not clearly above the majority class
    (:func:`urnlib.declare.untrained`)."""
    return guard(view, labels, epochs=PAPER_EPOCHS, measure=lambda run: read(run)["closing_accuracy"],
                 chance=MAJORITY_ACCURACY, what="closing-bracket accuracy",
                 baseline=f"the majority class's {MAJORITY_ACCURACY:g}")


@dataclass
class Measures:
    """What the measures read: one setting's runs (``{model label: Seeds}``), the history row a claim on one
    epoch reads, the attractor buckets' least count, the sizes trained as both URN and LSTM, the truncated
    model and its variants, and the models the claims rest on (``labels``: the training guard's)."""

    view: dict[str, Seeds]
    read: Callable
    min_total: int
    units: list[int]
    turn: str = ""
    variants: list[str] = field(default_factory=list)
    tables: dict = field(default_factory=dict)  # computed once per model: Table 4 of each seed

    @property
    def labels(self) -> list[str]:
        ours = [self.turn, "Full URN", "Arbitrary", *self.variants] if self.turn else []
        return ours + self.both

    @property
    def both(self) -> list[str]:
        """The URNs and LSTMs of paper 001's comparison."""
        return [f"{fam} {n}" for fam in ("URN", "LSTM") for n in self.units]

    def family(self, fam: str) -> dict[int, Seeds]:
        return {n: self.view[f"{fam} {n}"] for n in self.units}

    def buckets(self, run) -> tuple[np.ndarray, np.ndarray]:
        """Attractor counts and accuracy of one run at the epoch read (buckets with ``min_total``)."""
        s = run_accuracy(run, self.min_total, self.read(run))
        return s["count"], s["accuracy"]


@dataclass(frozen=True)
class Each:
    """Claims made once per model (``labels(m)``): ``{lab}`` in a spec's statement names the model, and its
    measure takes it (``measure(m, lab=...)``); ``variant``: our variants of the model, whose claims are
    extensions and say so in their source."""

    labels: Callable[[Measures], Sequence[str]]
    specs: tuple[Spec, ...]
    variant: bool = False

    def made(self, m: Measures) -> list[Spec]:
        out = []
        for lab in self.labels(m):
            for spec in self.specs:
                s = replace(spec, statement=spec.statement.replace("{lab}", lab),
                            measure=partial(spec.measure, lab=lab))
                if self.variant:
                    s = replace(s, source=f"{s.source} (our variant)", extension=True)
                out.append(s)
        return out


def decide(setting: str, table: Sequence[Spec | Each], m: Measures) -> list[Claim]:
    """The claims of ``table`` decided on one setting's runs, each statement starting with ``[setting]``; a
    claim resting on a model that did not train (:func:`untrained`) is no evidence."""
    specs = [s for row in table for s in (row.made(m) if isinstance(row, Each) else [row])]
    specs = [replace(s, statement=f"[{setting}] {s.statement}") for s in specs]
    return evaluate(CHAPTER, specs, m, seeds={lab: len(m.view[lab]) for lab in m.labels},
                    idle=untrained(m.view, m.labels, m.read))
