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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from urnlib.corpora.linzen import NAMED_SOURCES
from urnlib.params import ParameterError, check_choice, check_entries, check_float
from urnlib.seeds import Seeds, check_seeds, coords_of
from urnlib.tasks.agreement import CorpusTask, SyntheticTask

__all__ = ["SIZE_KEYS", "SIZE_EXAMPLE", "Size", "size_words", "sizes_of", "sized_task", "split_sizes"]

#: what an entry of ``sizes`` may set
SIZE_KEYS = ("source", "factor", "fraction", "models", "seeds")
SIZE_EXAMPLE = "{source: synthetic, factor: 2, models: [urn, lstm], seeds: [0, 1, 2]}"
#: the sources known by name (an entry on one of them that the chapter does not train is left out)
NAMED = NAMED_SOURCES
#: the run parameter of a part of real text's training sentences (read by the training, a key of its params)
FRACTION_PARAM = "train_fraction"


def size_words(share: float) -> str:
    """A size relative to the chapter's training sentences, in words: ``"2x sentences"``, ``"1/4 of the
    sentences"``, ``"all sentences"`` (1)."""
    if share == 1:
        return "all sentences"
    if share > 1:
        return f"{share:g}x sentences"
    return f"{Fraction(share).limit_denominator(1000)} of the sentences"


@dataclass(frozen=True)
class Size:
    """One entry read: a source, its share of the chapter's training sentences, the model kinds and seeds."""

    source: str
    share: float  # times the chapter's training sentences (> 1: more grammar sentences; < 1: a part)
    models: tuple[str, ...]
    seeds: tuple[int, ...]

    @property
    def words(self) -> str:
        return size_words(self.share)

    def label(self, model: str) -> str:
        """The runs' label: ``"3-TURN, 2x sentences"`` (``model``: the model's label in the chapter)."""
        return f"{model}, {self.words}"


def sizes_of(entries: Any, *, tasks: dict[str, SyntheticTask | CorpusTask], models: list[str],
             seeds: list[int]) -> list[Size]:
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
        synthetic = isinstance(tasks[entry["source"]], SyntheticTask)
        if ("factor" in entry) == ("fraction" in entry):
            raise ParameterError(f"{name}={entry!r}: give either factor (> 1, more grammar sentences) or "
                                 "fraction (0 < fraction < 1, a part of the chapter's training sentences)")
        if "factor" in entry:
            if not synthetic:
                raise ParameterError(f"{name}: factor={entry['factor']!r} on {entry['source']!r}: real text "
                                     "has no more sentences than the chapter's runs read; give a fraction")
            share = check_float(f"{name}.factor", entry["factor"], minimum=1.0, maximum=1000.0,
                                strict_min=True)
        else:
            share = check_float(f"{name}.fraction", entry["fraction"], minimum=0.0, maximum=1.0,
                                strict_min=True)
            if share == 1:
                raise ParameterError(f"{name}.fraction=1 is the chapter's own runs; give a part below 1")
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
        size = Size(entry["source"], float(share), tuple(kinds), tuple(chosen))
        if any((s.source, s.share) == (size.source, size.share) for s in out):
            raise ParameterError(f"{name} repeats {size.source!r} at {size.words}; give each size one entry")
        out.append(size)
    return out


def sized_task(task: SyntheticTask | CorpusTask, share: float) -> tuple[SyntheticTask | CorpusTask,
                                                                      dict[str, Any]]:
    """``(task, extra run parameters)`` of a run on ``share`` times ``task``'s training sentences: the grammar
    draws that many sentences; real text keeps the task and adds :data:`FRACTION_PARAM` (read by
    :func:`urnlib.tasks.agreement.make_data`)."""
    if isinstance(task, SyntheticTask):
        return replace(task, train_size=max(2, round(task.train_size * share))), {}
    return task, {FRACTION_PARAM: share}


def split_sizes(grouped: dict[str, Seeds]) -> tuple[dict[str, Seeds], dict[str, Seeds]]:
    """``(sizes, rest)`` of one source's groups (:func:`urnlib.seeds.by_label`): the size trend's groups (a
    ``size`` coordinate) by label, and the chapter's own."""
    sizes, rest = {}, {}
    for label, seeds in grouped.items():
        coords = coords_of(seeds.runs[0]) if len(seeds) else {}
        (sizes if "size" in coords else rest)[label] = seeds
    return sizes, rest
