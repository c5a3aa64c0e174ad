"""The cross-serial chapter's variants (not in paper 001's text): one model of the chapter trained again in
the way the authors' code differs from ours, to explain a claim the chapter's runs miss (issue 50).

An entry of the parameter ``variants`` is ``{model, units, sampler, classes, epochs, seeds}``; ``model`` (a
kind of :data:`urnlib.chapters.cross_serial.experiment.KINDS`) and ``units`` are required. ``sampler``
(:data:`urnlib.languages.cross_serial.SAMPLERS`, default ``"strings"``: the chapter's) draws the training,
validation and test strings: ``"lengths"`` draws the pattern length m + n uniformly, then m, as the authors'
code (``xdep.py``) does. ``classes`` (default: the vocabulary's 7) is the size of the model's input and
output layers: the authors' code builds both with 10 (paper 001 Table 1's V = 10), of which the extra ones are
never a target. ``epochs`` (default: the chapter's) caps the training; ``seeds`` defaults to the
chapter's. ``cell: authors`` (an LSTM only) builds the LSTM as the authors' TypedFlow code does
(:data:`AUTHORS_LSTM`: dropout 0.10 on its input, its state and, with a mask of its own, its output;
orthogonal recurrent weights). What an entry sets at the chapter's value stays out of its runs' parameters and
label, and an
entry must change something: e.g. ``{model: urn, units: 32, sampler: lengths, classes: 10, epochs: 10}``
trains URN 32 as the authors' code does, for the first 10 epochs, under the label ``"URN 32, m+n uniform, 10
classes, 10 epochs"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from urnlib.languages import cross_serial as cs
from urnlib.models.recurrent import AUTHORS_CELL, AUTHORS_LSTM
from urnlib.params import ParameterError, check_choice, check_entries, check_int
from urnlib.seeds import check_seeds

__all__ = ["VARIANT_KEYS", "VARIANT_EXAMPLE", "Variant", "variants_of", "label_of", "AUTHORS_LSTM"]

#: what an entry of ``variants`` may set
VARIANT_KEYS = ("model", "units", "sampler", "classes", "epochs", "seeds", "cell")
VARIANT_EXAMPLE = "{model: urn, units: 32, sampler: lengths, classes: 10, epochs: 10}"
#: how a sampler reads in a label
SAMPLER_WORDS = {"lengths": "m+n uniform"}
CELLS = {"authors": AUTHORS_LSTM}


@dataclass(frozen=True)
class Variant:
    """One entry read: the model (kind and units), what it changes (``None``: the chapter's) and its seeds."""

    kind: str
    units: int
    seeds: list[int]
    sampler: str | None = None
    classes: int | None = None
    epochs: int | None = None
    cell: str | None = None

    def model_options(self) -> dict[str, Any]:
        """What this variant changes in the model's spec (``{}``: nothing)."""
        return dict(CELLS[self.cell]) if self.cell else {}

    def params(self) -> dict[str, Any]:
        """The run parameters this variant adds to a run of the chapter (``{}``: none)."""
        return {key: value for key, value in (("sampler", self.sampler), ("classes", self.classes))
                if value is not None}


def label_of(prefix: str, variant: Variant) -> str:
    """``"URN 32, m+n uniform, 10 classes, 10 epochs"`` (``prefix``: the model's label in the chapter)."""
    words = ([SAMPLER_WORDS[variant.sampler]] if variant.sampler else []) + \
        ([f"{variant.classes} classes"] if variant.classes else []) + \
        ([f"{variant.epochs} epochs"] if variant.epochs else []) + \
        ([AUTHORS_CELL] if variant.cell else [])
    return ", ".join([prefix, *words])


def variants_of(entries: Any, *, kinds: dict[str, str], seeds: list[int], epochs: int,
                check_units) -> dict[str, Variant]:
    """``{label: Variant}`` of ``entries`` (``kinds``: model kind -> label prefix; ``seeds`` and ``epochs``:
    the chapter's, the defaults; ``check_units(name, n)``: the chapter's check of a model size).

    Raises:
        ParameterError: an entry that is not one, naming it (``variants[i]``) and what to write.
    """
    out: dict[str, Variant] = {}
    vocab = len(cs.CrossSerialVocab())
    required = {"model": "a model", "units": "units"}
    for name, entry in check_entries("variants", entries, example=VARIANT_EXAMPLE, required=required,
                                     keys=VARIANT_KEYS):
        check_choice(f"{name}.model", entry["model"], list(kinds))
        check_units(f"{name}.units", entry["units"])
        sampler = entry.get("sampler", cs.SAMPLERS[0])
        check_choice(f"{name}.sampler", sampler, list(cs.SAMPLERS))
        classes = entry.get("classes", vocab)
        check_int(f"{name}.classes", classes, minimum=vocab, maximum=10_000)
        cap = entry.get("epochs", epochs)
        check_int(f"{name}.epochs", cap, minimum=1, maximum=100_000)
        chosen = entry.get("seeds", seeds)
        check_seeds(chosen, f"{name}.seeds")
        cell = entry.get("cell")
        if cell is not None:
            check_choice(f"{name}.cell", cell, list(CELLS))
            if entry["model"] != "lstm":
                raise ParameterError(f"{name}.cell={cell!r}: only the LSTM has the authors' cell; drop it")
        variant = Variant(entry["model"], int(entry["units"]), list(chosen),
                          sampler if sampler != cs.SAMPLERS[0] else None,
                          int(classes) if classes != vocab else None, int(cap) if cap != epochs else None,
                          cell)
        if not variant.params() and variant.epochs is None and not variant.cell:
            raise ParameterError(f"{name}={entry!r} changes nothing: it would be the chapter's own runs; set "
                                 "sampler, classes, epochs or cell")
        label = label_of(f"{kinds[variant.kind]} {variant.units}", variant)
        if label in out:
            raise ParameterError(f"{name} repeats {label!r}; give each variant one entry (with all its "
                                 "seeds)")
        out[label] = variant
    return out
