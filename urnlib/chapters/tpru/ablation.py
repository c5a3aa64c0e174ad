"""The TPRU chapter's ablation of its few-role encoders (not in paper 002): the entries of the parameter
``ablations`` read into run specs.

An entry is ``{model, bias_init, score_scale, variant, min_epochs, layers, seeds, optimizer, lr, clip,
clip_value}``; only ``model`` (a TPRU, in the registry's grammar) is required. ``bias_init`` and
``score_scale`` default to 1 (the original implementation's), ``variant`` to ``"tpru"`` (else one of sec. 4's
modifications, :data:`urnlib.models.tpru_cell.VARIANTS`); at their defaults they stay out of the encoder spec,
so that an entry without them names the chapter's main runs for the seeds they share. ``min_epochs``
(default: the chapter's) is the number of epochs trained before patience may stop a run; ``layers`` (default:
the chapter's, paper 002 appendix C.1's two) the encoder's recurrent layers; at the chapter's values both stay
out of the run spec and the label. ``seeds`` defaults to the chapter's. ``optimizer`` (a key of
:data:`urnlib.train.OPTIMIZERS`), ``lr``, ``clip`` (the largest gradient norm, ``null``: none) and
``clip_value`` (the largest gradient entry, ``null``: none) change the training
(:class:`urnlib.train.TrainConfig`); at the chapter's values they stay out of the run spec as well, e.g.
``{model: 'tpru 64 N4', optimizer: amsgrad, clip_value: 10.0, clip: null}`` trains with the optimisation of
paper 002's code; ``{model: 'tpru 64 N4', layers: 1}`` trains a one-layer encoder.
The report is :mod:`urnlib.chapters.tpru.report_ablation`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from urnlib.chapters.tpru import entailment as ent
from urnlib.models.tpru_cell import VARIANTS
from urnlib.params import ParameterError, check_choice, check_entries, check_float, check_int
from urnlib.seeds import check_seeds
from urnlib.train import OPTIMIZERS, TrainConfig

__all__ = ["ABLATION_KEYS", "TRAINING_KEYS", "ABLATION_EXAMPLE", "Setting", "ablation_specs"]

#: the training settings an entry may change (fields of :class:`urnlib.train.TrainConfig`)
TRAINING_KEYS = ("optimizer", "lr", "clip", "clip_value")
#: what an entry of ``ablations`` may set
ABLATION_KEYS = ("model", "bias_init", "score_scale", "variant", "min_epochs", "layers", "seeds",
                 *TRAINING_KEYS)
ABLATION_EXAMPLE = "{model: 'tpru 64 N4', bias_init: 0.0, seeds: [0, 1, 2]}"


@dataclass(frozen=True)
class Setting:
    """One entry read: its encoder spec, seeds, ``min_epochs`` (``None``: the chapter's), the training
    settings it changes from the chapter's (``{}``: none; :meth:`train_config` applies them) and its encoder
    layers (``None``: the chapter's)."""

    spec: dict[str, Any]
    seeds: list[int]
    min_epochs: int | None
    train: dict[str, Any]
    layers: int | None = None

    def train_config(self, usual: TrainConfig) -> TrainConfig:
        """``usual`` (the chapter's training of a run) with this entry's changes."""
        return replace(usual, **self.train)


def _entry_spec(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The encoder spec of one entry: its model's, with what it changes where that is not the default."""
    try:
        spec = ent.encoder_spec(entry["model"])
    except ParameterError as err:
        raise ParameterError(f"{name}: {err}") from None
    if spec["kind"] != "tpru":
        raise ParameterError(f"{name}: model {entry['model']!r} is not a TPRU; the ablation changes a TPRU "
                             "(write e.g. 'tpru 64 N4')")
    for option in ("bias_init", "score_scale"):
        if option in entry:
            check_float(f"{name}.{option}", entry[option], minimum=0.0, maximum=100.0,
                        strict_min=option == "score_scale")
            if float(entry[option]) != 1.0:
                spec[option] = float(entry[option])
    variant = entry.get("variant", "tpru")
    check_choice(f"{name}.variant", variant, list(VARIANTS))
    if variant != "tpru":
        spec["variant"] = variant
    return spec


def _entry_layers(name: str, entry: dict[str, Any], usual: int | None) -> int | None:
    """The encoder layers of one entry where they differ from ``usual`` (the chapter's), checked; else
    ``None``."""
    if "layers" not in entry:
        return None
    if usual is None:
        raise ParameterError(f"{name}.layers: this chapter's ablation does not change the encoder's layers")
    check_int(f"{name}.layers", entry["layers"], minimum=1)
    return None if entry["layers"] == usual else int(entry["layers"])


#: what to write for a training setting an entry gets wrong
_TRAINING_HINTS = {"lr": "a learning rate > 0, e.g. 0.003",
                   "clip": "a number > 0, or null for no gradient-norm clipping",
                   "clip_value": "a number > 0, or null for no gradient-value clipping"}


def _entry_training(name: str, entry: dict[str, Any], usual: TrainConfig) -> dict[str, Any]:
    """The training settings of one entry that differ from ``usual`` (the chapter's), checked."""
    out: dict[str, Any] = {}
    for key in (k for k in TRAINING_KEYS if k in entry):
        value = entry[key]
        if key == "optimizer":
            check_choice(f"{name}.optimizer", value, list(OPTIMIZERS))
        elif value is not None or key == "lr":  # the clipping may be off (null), the learning rate not
            try:
                value = check_float(f"{name}.{key}", value, minimum=0.0, strict_min=True)
            except ParameterError as err:
                raise ParameterError(f"{err}; write {_TRAINING_HINTS[key]}") from None
        if value != getattr(usual, key):
            out[key] = value
    return out


def layers_words(layers: int) -> str:
    """How an entry's encoder depth reads in its label and setting name: ``"1 layer"``, ``"3 layers"``."""
    return f"{layers} layer" + ("s" if layers != 1 else "")


def ablation_specs(entries: Any, *, seeds: list[int], min_epochs: int, epochs: int,
                   train: TrainConfig, layers: int | None = None) -> dict[str, Setting]:
    """``{label: Setting}`` of ``entries`` (the chapter's ``seeds``, ``min_epochs`` and ``epochs`` are the
    defaults and the cap; ``train`` is the chapter's training, whose optimiser, learning rate and clipping an
    entry may change; ``layers`` the chapter's encoder layers, ``None``: an entry may not change them).
    Labels: :func:`urnlib.chapters.tpru.entailment.ablation_label`, plus ``", 1 layer"`` where an entry
    changes the layers and ``", N+ epochs"``.

    Raises:
        ParameterError: an entry that is not one, naming it (``ablations[i]``) and what to write.
    """
    out: dict[str, Setting] = {}
    for name, entry in check_entries("ablations", entries, example=ABLATION_EXAMPLE,
                                     required={"model": "a model"}, keys=ABLATION_KEYS):
        spec = _entry_spec(name, entry)
        chosen = entry.get("seeds", seeds)
        check_seeds(chosen, f"{name}.seeds")
        least = entry.get("min_epochs", min_epochs)
        check_int(f"{name}.min_epochs", least, minimum=0)
        if least > epochs:
            raise ParameterError(f"{name}.min_epochs={least} is more than epochs={epochs} (the cap): raise "
                                 "epochs, or leave the ablation out with ablations=[]")
        least = None if least == min_epochs else least
        depth = _entry_layers(name, entry, layers)
        changes = _entry_training(name, entry, train)
        label = (ent.ablation_label(spec, changes) + (f", {layers_words(depth)}" if depth is not None else "")
                 + (f", {least}+ epochs" if least is not None else ""))
        if label in out:
            raise ParameterError(f"{name} repeats {label!r}; give each setting one entry (with all its "
                                 "seeds)")
        out[label] = Setting(spec, list(chosen), least, changes, depth)
    return out
