"""The TPRU chapter's scaled group: one group of extra entailment runs on a larger training set, the book's
setting nearest paper 002's (Evans et al. trained on about 100,000 pairs; the chapter's main encoders on
``train_size``). The parameter ``scaled`` read into run specs.

``scaled`` is ``null`` or ``{}`` (no group: the chapter's plan and its runs' keys are those without it) or a
mapping ``{models, train_size, split_profile, seeds, epochs, min_epochs, patience}``: ``models`` (encoders in
the registry's grammar, as the chapter's ``models``) and ``train_size`` (a multiple of 4) are required, every
other key defaults to the chapter's value, e.g.::

    scaled: {models: ["gru 64", "lstm 64", "tpru 64 N64"], train_size: 100000, split_profile: released,
             seeds: [0, 1, 2], epochs: 30, min_epochs: 10}

An entry of ``models`` may also be ``{model: "tpru 64 N512", seeds: [0]}``: that encoder on its own seeds (an
encoder too costly for every seed of the group); its key is the one it would have with the group's seeds. An
entry ``{model: "lstm 64", directions: 2}`` reads each row both ways (two stacks, the parameters doubled:
:class:`~urnlib.models.tpru_stack.BothWays`; paper 002 Table 2's counts are two directions' of its two-layer
encoders), labelled ``"LSTM 64 bidirectional"``; ``directions: 1`` is the plain encoder.

Its runs are trained exactly like the chapter's main encoders (architecture, optimiser, learning rate, batch,
clipping, stopping rule, validation and test sizes, generator seed), on the group's training set and split
ranges, for at most its ``epochs``: a run's parameters are those the chapter's main run of the same encoder
and seed would have with the group's values in place of the chapter's (its key is that run's). Its name is
its label, :func:`scaled_label`: ``"GRU 64, 100,000 pairs (released ranges)"``.

Validation and test pairs: each generated split has its own random stream (:func:`urnlib.languages.logic.
generate_dataset`), so a larger training set leaves the validation and test pairs as they were, except a
group of pairs alpha-equivalent to a new training pair, which is dropped for the next one drawn (none was at
400 against 4,000 training pairs, in either profile). Another ``split_profile`` draws every split from other
ranges: the scaled group's generated validation and test pairs are then not the main runs' (none in common),
while Evans et al.'s released files, on which both are scored, are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from urnlib.chapters.tpru import entailment as ent
from urnlib.languages.logic import PROFILES
from urnlib.params import ParameterError, check_choice, check_int
from urnlib.results import RunSpec
from urnlib.seeds import check_seeds
from urnlib.train import TrainConfig

__all__ = ["SCALED_KEYS", "SCALED_EXAMPLE", "PROFILE_WORDS", "Scaled", "scaled_label", "scaled_group",
           "summary", "merge"]

#: what ``scaled`` may set (``models`` and ``train_size`` required)
SCALED_KEYS = ("models", "train_size", "split_profile", "seeds", "epochs", "min_epochs", "patience")
SCALED_EXAMPLE = ("{models: ['gru 64', 'lstm 64', 'tpru 64 N64'], train_size: 100000, "
                  "split_profile: released, epochs: 30, min_epochs: 10}")
#: a profile in a label: which split ranges drew the training pairs
PROFILE_WORDS = {"reconstruction": "reconstructed ranges", "released": "released ranges"}
#: what to write for a key the group gets wrong
_HINTS = {"train_size": "a multiple of 4, e.g. 100000 (the size of Evans et al.'s training file)",
          "epochs": "the most epochs a run of the group trains, e.g. 30",
          "min_epochs": "the epochs trained before patience may stop a run, e.g. 10",
          "patience": "an integer >= 1, or null to train every run for scaled.epochs"}


@dataclass(frozen=True)
class Scaled:
    """The group read: ``{label: encoder spec}``, its training set and split ranges, seeds and stopping."""

    encoders: dict[str, dict[str, Any]]
    train_size: int
    split_profile: str
    seeds: list[int]
    epochs: int
    min_epochs: int
    patience: int | None
    own_seeds: dict[str, list[int]] = field(default_factory=dict)  # label -> its seeds, where not ``seeds``

    def seeds_of(self, label: str) -> list[int]:
        """The seeds an encoder of the group trains on: its own where its entry gives them, else the
        group's."""
        return self.own_seeds.get(label, self.seeds)

    def task(self, usual: ent.EntailmentTask) -> ent.EntailmentTask:
        """The chapter's task ``usual`` with the group's training set and split ranges."""
        return replace(usual, train=self.train_size, profile=self.split_profile)

    def train_config(self, usual: TrainConfig) -> TrainConfig:
        """The chapter's training of a run ``usual`` with the group's cap on epochs."""
        return replace(usual, epochs=self.epochs)

    def stop(self, usual: dict[str, Any] | None) -> dict[str, Any] | None:
        """The chapter's stopping rule ``usual`` with the group's patience and minimum epochs (``None``:
        train ``epochs``)."""
        if not self.patience:
            return None
        return {**(usual or {"key": "valid_acc", "minimize": False}), "patience": self.patience,
                "min_epochs": self.min_epochs}

    def plan(self, spec_of: Callable[..., RunSpec]) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed]}``; ``spec_of(label, encoder spec, seed, scaled=self)`` is the
        chapter's run spec of an encoder and seed, here changed by this group."""
        return {label: [spec_of(label, spec, seed, scaled=self) for seed in self.seeds_of(label)]
                for label, spec in self.encoders.items()}


def summary(group: Scaled | None) -> str:
    """The group in words, for the end of the chapter's summary (``""`` without one)."""
    if group is None:
        return ""
    stop = f", stopped after {group.patience} without a better one" if group.patience else ""
    least = f" but never before {group.min_epochs}" if group.patience and group.min_epochs else ""
    own = {label: f" (seeds {seeds})" for label, seeds in group.own_seeds.items()}
    names = ", ".join(ent.model_label(spec) + own.get(label, "") for label, spec in group.encoders.items())
    return (f"; the scaled group: {names} on "
            f"{group.train_size:,} training pairs ({_ranges(group.split_profile)}; seeds {group.seeds}, at "
            f"most {group.epochs} epochs{stop}{least})")


def merge(planned: list[RunSpec], scaled: dict[str, list[RunSpec]]) -> list[RunSpec]:
    """The chapter's runs ``planned``, then the scaled group's runs ``scaled``.

    Raises:
        ParameterError: a run of the group is one of the chapter's (the same parameters) under another name.
    """
    names = {spec.key: spec.name for spec in planned}
    out = list(planned)
    for spec in (s for specs in scaled.values() for s in specs):
        if spec.key in names:
            raise ParameterError(f"scaled: {spec.name!r} is the chapter's run {names[spec.key]!r} (the same "
                                 "parameters); change scaled.train_size, scaled.split_profile or "
                                 "scaled.epochs")
        out.append(spec)
    return out


def scaled_label(spec: dict[str, Any], train_size: int, profile: str) -> str:
    """``"GRU 64, 100,000 pairs (released ranges)"``: the encoder's label, the training pairs and the split
    ranges that drew them. The stored runs are named by these labels: the words never change."""
    return f"{ent.model_label(spec)}, {train_size:,} pairs ({_ranges(profile)})"


def _ranges(profile: str) -> str:
    return PROFILE_WORDS.get(profile, f"{profile} ranges")


def _checked(key: str, check) -> Any:
    """``check()`` with a ParameterError's message completed by what to write for ``scaled.<key>``."""
    try:
        return check()
    except ParameterError as err:
        raise ParameterError(f"{err}; write {_HINTS[key]}" if key in _HINTS else str(err)) from None


def _encoders(models: Any) -> tuple[dict[str, dict[str, Any]], dict[str, list[int]]]:
    """``({label: encoder spec}, {label: its own seeds})`` of ``scaled.models``."""
    if not isinstance(models, (list, tuple)) or not models:
        raise ParameterError(f"scaled.models={models!r} must be a non-empty list of encoders, each written "
                             f"{ent.ENCODER_FORMS}")
    out: dict[str, dict[str, Any]] = {}
    own: dict[str, list[int]] = {}
    for i, entry in enumerate(models):
        text, seeds, directions = _entry(i, entry)
        try:
            spec = ent.encoder_spec(text)
        except ParameterError as err:
            raise ParameterError(f"scaled.models contains {text!r}: {err}") from None
        spec = {**spec, "directions": 2} if directions == 2 else spec  # one way: the key as before
        if ent.model_label(spec) in out:
            raise ParameterError(f"scaled.models lists {ent.model_label(spec)!r} twice ({list(models)!r}); "
                                 "give each encoder once")
        out[ent.model_label(spec)] = spec
        if seeds is not None:
            own[ent.model_label(spec)] = seeds
    return out, own


def _entry(i: int, entry: Any) -> tuple[Any, list[int] | None, int]:
    """An encoder of ``scaled.models``, its own seeds (``None``: the group's) and its directions (1 or 2)."""
    if not isinstance(entry, dict):
        return entry, None, 1
    if "model" not in entry or set(entry) - {"model", "seeds", "directions"}:
        raise ParameterError(f"scaled.models[{i}]={entry!r}: an entry is an encoder, e.g. 'tpru 64 N64', or "
                             "{model: 'tpru 64 N512', seeds: [0]} (that encoder on its own seeds), or "
                             "{model: 'lstm 64', directions: 2} (reading each row both ways)")
    if "seeds" in entry:
        check_seeds(entry["seeds"], f"scaled.models[{i}].seeds")
    directions = entry.get("directions", 1)
    check_choice(f"scaled.models[{i}].directions", directions, [1, 2])
    return entry["model"], (list(entry["seeds"]) if "seeds" in entry else None), directions


def scaled_group(value: Any, chapter: Any) -> Scaled | None:
    """The group of ``value`` (the parameter ``scaled``), its labels :func:`scaled_label`; ``None`` where
    ``value`` is ``null`` or ``{}``. ``chapter`` (the chapter's
    :class:`~urnlib.chapters.tpru.experiment.Config`) gives the defaults: its ``seeds``, ``split_profile``,
    ``epochs``, ``min_epochs`` and ``patience``.

    Raises:
        ParameterError: a value that is not one, naming ``scaled.<key>`` and what to write.
    """
    if value is None or value == {}:
        return None
    if not isinstance(value, dict):
        raise ParameterError(f"scaled={value!r} must be null (no scaled runs) or a mapping, e.g. "
                             f"{SCALED_EXAMPLE}")
    unknown = sorted(set(value) - set(SCALED_KEYS))
    if unknown:
        raise ParameterError(f"scaled has {unknown}: it takes only {list(SCALED_KEYS)}")
    missing = [k for k in ("models", "train_size") if k not in value]
    if missing:
        raise ParameterError(f"scaled needs {' and '.join(missing)} (every other key defaults to the "
                             f"chapter's value), e.g. {SCALED_EXAMPLE}")
    encoders, own = _encoders(value["models"])
    size = _checked("train_size", lambda: ent.check_pairs("scaled.train_size", value["train_size"]))
    profile = value.get("split_profile", chapter.split_profile)
    check_choice("scaled.split_profile", profile, list(PROFILES))
    chosen = value.get("seeds", chapter.seeds)
    check_seeds(chosen, "scaled.seeds")
    cap = _checked("epochs", lambda: check_int("scaled.epochs", value.get("epochs", chapter.epochs),
                                               minimum=1))
    least = _checked("min_epochs", lambda: check_int(
        "scaled.min_epochs", value.get("min_epochs", chapter.min_epochs), minimum=0, maximum=cap,
        message=f"must be an integer from 0 to scaled.epochs={cap} (the group's cap)"))
    wait = value.get("patience", chapter.patience)
    if wait is not None:
        _checked("patience", lambda: check_int("scaled.patience", wait, minimum=1))
    labels = {label: scaled_label(spec, size, profile) for label, spec in encoders.items()}
    return Scaled({labels[label]: spec for label, spec in encoders.items()}, size, profile, list(chosen), cap,
                  least, wait, {labels[label]: seeds for label, seeds in own.items()})
