"""The agreement chapter's training-size trend (issue 50; not in paper 000's text): the chapter's models
trained again on more or fewer training sentences than its own runs, to show whether a claim missed with cause
"data" is missed for the training set's size.

An entry of the parameter ``sizes`` is ``{source, factor or fraction, models, seeds}``. ``source`` names one
of the chapter's sources. ``factor`` (> 1) multiplies the chapter's training sentences, for the synthetic
grammar only (``synthetic_train`` x factor new sentences of the grammar; real text has no more sentences than
the chapter's runs read). ``fraction`` (0 < fraction < 1) keeps that share of the chapter's training
sentences: for real text a seeded part of the training side of the chapter's split (by sentence, from the
stream ``[seed, 3]``, so that a smaller part lies inside a larger one), the held-out test and validation
sentences unchanged; for the grammar ``synthetic_train`` x fraction sentences. ``models`` (default: the
chapter's) are kinds of ``models``; ``seeds`` (default: the chapter's) must be among the chapter's seeds, so
that the chapter's own run of each seed is the trend's point at the full size. A run is the chapter's run at
the chapter's ``lr`` with only its training sentences changed, under the label ``"<model>, <size>"``
(``"3-TURN, 2x sentences"``, ``"LSTM, 1/4 of the sentences"``), kept apart from the chapter's groups
(:func:`split_sizes`).

``lr`` (default: the chapter's ``lr``) may name the chapter's second rate ``code_lr``: the entry is then a
point of that setting's trend, whose full size is the chapter's runs at ``code_lr``; its runs carry the
coordinate ``rate`` and labels such as ``"3-TURN, 2x sentences, lr 0.001"``.

``pool`` (0 < pool < 1; the ``linzen`` source only) makes the entry a point of the **pooled** trend: that
share of each of Linzen et al.'s test files (split by sentence with a fixed stream, the same for every seed)
joins the training sentences, and the rest of each file is the bucket tested
(:func:`urnlib.tasks.agreement_linzen.linzen_split`): no sentence both trains and is tested. ``fraction``
(0 < fraction <= 1, 1 allowed here) keeps that nested part of the pooled training sentences, as above; the
validation sentences are carved from the training side as in the chapter's runs. Every pooled entry of a
source has one pool, so that the trend is tested on one set of sentences. Its runs carry the run parameter
:data:`POOL_PARAM` (the chapter's runs and the other sizes have none: their keys are unchanged), the
coordinate ``pool`` and labels such as ``"3-TURN, 1/4 of the pooled sentences"``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from urnlib.corpora.linzen import NAMED_SOURCES
from urnlib.params import ParameterError, check_choice, check_entries, check_float
from urnlib.seeds import Seeds, check_seeds, coords_of
from urnlib.tasks.agreement import CorpusTask, SyntheticTask
from urnlib.tasks.agreement_linzen import POOL_PARAM  # the share of Linzen et al.'s test files that trains

__all__ = ["SIZE_KEYS", "SIZE_EXAMPLE", "FRACTION_PARAM", "POOL_PARAM", "Size", "size_words", "sizes_of",
           "sized_task", "split_sizes"]

#: what an entry of ``sizes`` may set
SIZE_KEYS = ("source", "factor", "fraction", "pool", "models", "seeds", "lr")
SIZE_EXAMPLE = "{source: synthetic, factor: 2, models: [urn, lstm], seeds: [0, 1, 2]}"
#: the sources known by name (an entry on one of them that the chapter does not train is left out)
NAMED = NAMED_SOURCES
#: the run parameter of a part of real text's training sentences (read by the training, a key of its params)
FRACTION_PARAM = "train_fraction"
#: the source whose test files a pool draws on
POOL_SOURCE = "linzen"


def size_words(share: float, pool: float = 0.0) -> str:
    """A size relative to the chapter's training sentences, in words: ``"2x sentences"``, ``"1/4 of the
    sentences"``, ``"all sentences"`` (1); with a ``pool``, of the pooled training sentences: ``"1/4 of the
    pooled sentences"``, ``"all pooled sentences"``."""
    pooled = "pooled " if pool else ""
    if share == 1:
        return f"all {pooled}sentences"
    if share > 1:
        return f"{share:g}x sentences"
    return f"{Fraction(share).limit_denominator(1000)} of the {pooled}sentences"


@dataclass(frozen=True)
class Size:
    """One entry read: a source, its share of the chapter's training sentences, the model kinds and seeds."""

    source: str
    share: float  # times the chapter's training sentences (> 1: more grammar sentences; < 1: a part)
    models: tuple[str, ...]
    seeds: tuple[int, ...]
    pool: float = 0.0  # the share of Linzen et al.'s test files that trains (0: none)
    rate: float | None = None  # the chapter's code_lr where the entry trains at it (None: at lr)

    @property
    def words(self) -> str:
        """The size in words, with the rate where it is not the chapter's: ``"2x sentences, lr 0.001"``."""
        return size_words(self.share, self.pool) + (f", lr {self.rate:g}" if self.rate else "")

    def label(self, model: str) -> str:
        """The runs' label: ``"3-TURN, 2x sentences"`` (``model``: the model's label in the chapter)."""
        return f"{model}, {self.words}"


def sizes_of(entries: Any, *, tasks: dict[str, SyntheticTask | CorpusTask], models: list[str],
             seeds: list[int], rates: tuple[float, float] = (0.0, 0.0)) -> list[Size]:
    """The entries of ``sizes`` read (``tasks``: the chapter's sources by name; ``models`` and ``seeds``: the
    chapter's, the defaults and what an entry may name). An entry on a named source (``synthetic``,
    ``offline``, ``linzen``) the chapter does not train is left out: a preset's trend follows its sources.

    Raises:
        ParameterError: an entry that is not one, naming it (``sizes[i]``) and what to write.
    """
    out: list[Size] = []
    for name, entry in check_entries("sizes", entries, example=SIZE_EXAMPLE, required={"source": "a source"},
                                     keys=SIZE_KEYS):
        if entry["source"] in NAMED and entry["source"] not in tasks:
            continue  # a source this configuration does not train: no trend on it
        check_choice(f"{name}.source", entry["source"], list(tasks))
        pool = _pool(name, entry, tasks[entry["source"]])
        share = _share(name, entry, tasks[entry["source"]], pool)
        kinds = entry.get("models", models)
        if not isinstance(kinds, list) or not kinds or len(set(kinds)) != len(kinds):
            raise ParameterError(f"{name}.models={kinds!r}: give a non-empty list of the chapter's models "
                                 f"{models}, each once")
        for kind in kinds:
            check_choice(f"each of {name}.models", kind, list(models))
        chosen = entry.get("seeds", seeds)
        check_seeds(chosen, f"{name}.seeds")
        if set(chosen) - set(seeds):
            raise ParameterError(f"{name}.seeds={chosen!r}: {sorted(set(chosen) - set(seeds))} are not among "
                                 f"the chapter's seeds {seeds} (their runs are the trend's full size)")
        size = Size(entry["source"], float(share), tuple(kinds), tuple(chosen), pool,
                    _rate(name, entry, rates))
        if any((s.source, s.share, s.pool, s.rate) == (size.source, size.share, size.pool, size.rate)
               for s in out):
            raise ParameterError(f"{name} repeats {size.source!r} at {size.words}; give each size one entry")
        other = next((s.pool for s in out if s.source == size.source and s.pool and s.pool != pool), None)
        if pool and other is not None:
            raise ParameterError(f"{name}.pool={pool:g}: another entry pools {other:g} of {size.source!r}'s "
                                 "test files; give every pooled entry of a source one pool (the trend is "
                                 "tested on one held-out share)")
        out.append(size)
    return out


def _rate(name: str, entry: dict[str, Any], rates: tuple[float, float]) -> float | None:
    """An entry's ``lr``: ``None`` at the chapter's ``lr`` (``rates[0]``), else the second setting's
    ``code_lr`` (``rates[1]``), the only other rate whose full size the chapter trains."""
    lr, code = rates
    if "lr" not in entry or entry["lr"] == lr:
        return None
    if not code or entry["lr"] != code:
        raise ParameterError(f"{name}.lr={entry['lr']!r}: a size trend trains at the chapter's lr={lr:g}"
                             + (f" or its code_lr={code:g}" if code else "") + " (the full size is the "
                             "chapter's own runs at that rate); drop lr or give one of those")
    return float(code)


def _pool(name: str, entry: dict[str, Any], task: SyntheticTask | CorpusTask) -> float:
    """An entry's ``pool`` checked (0 without one): on the ``linzen`` source only, strictly between 0 and
    1."""
    if "pool" not in entry:
        return 0.0
    if not (isinstance(task, CorpusTask) and task.source == POOL_SOURCE):
        raise ParameterError(f"{name}.pool={entry['pool']!r} on {entry['source']!r}: a pool trains on a "
                             f"share of Linzen et al.'s test files, so it is for the source {POOL_SOURCE!r} "
                             "only")
    if "factor" in entry:
        raise ParameterError(f"{name}: pool with factor: a pooled entry keeps a fraction (0 < fraction "
                             "<= 1) of the pooled training sentences")
    pool = check_float(f"{name}.pool", entry["pool"], minimum=0.0, maximum=1.0, strict_min=True)
    if pool == 1:
        raise ParameterError(f"{name}.pool=1 would leave no test sentence in Linzen et al.'s test files; "
                             "give a share strictly between 0 and 1")
    return pool


def _share(name: str, entry: dict[str, Any], task: SyntheticTask | CorpusTask, pool: float) -> float:
    """An entry's share of the training sentences: its ``factor`` (> 1, the grammar) or ``fraction`` (0 < f <
    1; up to 1 with a ``pool``)."""
    if ("factor" in entry) == ("fraction" in entry):
        raise ParameterError(f"{name}={entry!r}: give either factor (> 1, more grammar sentences) or "
                             "fraction (0 < fraction < 1, a part of the chapter's training sentences)")
    if "factor" in entry:
        if not isinstance(task, SyntheticTask):
            raise ParameterError(f"{name}: factor={entry['factor']!r} on {entry['source']!r}: real text "
                                 "has no more sentences than the chapter's runs read; give a fraction")
        return check_float(f"{name}.factor", entry["factor"], minimum=1.0, maximum=1000.0, strict_min=True)
    share = check_float(f"{name}.fraction", entry["fraction"], minimum=0.0, maximum=1.0, strict_min=True)
    if share == 1 and not pool:
        raise ParameterError(f"{name}.fraction=1 is the chapter's own runs; give a part below 1")
    return share


def sized_task(task: SyntheticTask | CorpusTask, share: float, pool: float = 0.0
               ) -> tuple[SyntheticTask | CorpusTask, dict[str, Any]]:
    """``(task, extra run parameters)`` of a run on ``share`` times ``task``'s training sentences: the grammar
    draws that many sentences; real text keeps the task and adds :data:`FRACTION_PARAM` (below 1) and, with a
    ``pool``, :data:`POOL_PARAM` (both read by :func:`urnlib.tasks.agreement.make_data`)."""
    if isinstance(task, SyntheticTask):
        return replace(task, train_size=max(2, round(task.train_size * share))), {}
    return task, {**({FRACTION_PARAM: share} if share < 1 else {}), **({POOL_PARAM: pool} if pool else {})}


def split_sizes(grouped: dict[str, Seeds]) -> tuple[dict[str, Seeds], dict[str, Seeds]]:
    """``(sizes, rest)`` of one source's groups (:func:`urnlib.seeds.by_label`): the size trend's groups (a
    ``size`` coordinate) by label, and the chapter's own."""
    sizes, rest = {}, {}
    for label, seeds in grouped.items():
        coords = coords_of(seeds.runs[0]) if len(seeds) else {}
        (sizes if "size" in coords else rest)[label] = seeds
    return sizes, rest
