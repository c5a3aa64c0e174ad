"""The matrix-embedding chapter's ablations (not in paper 003): the entries of the parameter ``ablations``
read into the settings that :meth:`urnlib.chapters.matrix_embeddings.experiment.Config.ablation_plan` trains,
to find why our 4.2 models answer far fewer analogy questions than the paper's.

An entry is ``{model, optimizer, lr, batch_size, epochs, train_fraction, seeds}``; only ``model`` is required,
one of the chapter's ``models`` (``"4.2 diagonal 100"``). The others default to the chapter's values:
``optimizer`` (``"adam"``, or the authors' ``"adagrad"``), ``lr``, ``batch_size`` (sentences a batch; the
authors' code: 10,000), ``epochs`` (the cap), ``train_fraction`` (train on the first share of the training
sentences; the vocabulary and the held-out sentences stay the same) and ``seeds``. Each entry's runs
train exactly like the chapter's runs of its model with what the entry changes, so an entry at the chapter's
values names the chapter's own runs (the same keys) for the seeds they share. The report is
:mod:`urnlib.chapters.matrix_embeddings.report_analogy`.

    ablations:
      - {model: "4.2 diagonal 100", optimizer: adagrad, lr: 1.0}   # the authors' optimiser
      - {model: "4.2 diagonal 100", optimizer: adagrad, lr: 1.0, batch_size: 10000}  # the authors' recipe
      - {model: "4.2 diagonal 100", train_fraction: 0.25}         # a quarter of the training sentences
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from urnlib.models.registry import parse_spec, spec_string
from urnlib.params import ParameterError, check_float, check_int
from urnlib.seeds import check_seeds

__all__ = ["ABLATION_KEYS", "ABLATION_EXAMPLE", "Ablation", "fraction_words", "setting_words",
           "ablation_settings"]

#: what an entry of ``ablations`` may set
ABLATION_KEYS = ("model", "optimizer", "lr", "batch_size", "epochs", "train_fraction", "seeds")
ABLATION_EXAMPLE = "{model: '4.2 diagonal 100', optimizer: adagrad, lr: 1.0, seeds: [0, 1, 2]}"


@dataclass(frozen=True)
class Ablation:
    """One setting of ``ablations``: its model (parsed, one of the chapter's ``models``), how it trains, its
    seeds, its label and what it changes (``setting``: ``""`` at the chapter's values)."""

    label: str
    setting: str
    model: dict
    optimizer: str
    lr: float
    batch_size: int
    epochs: int
    train_fraction: float
    seeds: tuple[int, ...]


def fraction_words(fraction: float) -> str:
    """``0.25`` -> ``"25% of the training sentences"``; ``1`` -> ``"all the training sentences"``."""
    return "all the training sentences" if fraction == 1 else f"{100 * fraction:g}% of the training sentences"


def setting_words(optimizer: str, lr: float, train_fraction: float, *, chapter: dict[str, Any],
                  optimizers: dict[str, str], batch_size: int | None = None,
                  epochs: int | None = None) -> str:
    """What a setting changes from the ``chapter``'s ``{optimizer, lr, batch_size, epochs, train_fraction}``,
    for a reader: ``"Adagrad lr 1.0"`` (the optimiser and its learning rate, named together when either
    changes), ``"batch 10,000"``, ``"at most 80 epochs"``, ``"25% of the training sentences"``, those that
    change comma-separated, or ``""`` (the chapter's own setting). ``batch_size`` and ``epochs`` left out (or
    ``None``) are the chapter's."""
    parts = []
    if optimizer != chapter["optimizer"] or lr != chapter["lr"]:
        parts.append(f"{optimizers[optimizer]} lr {float(lr)}")
    if batch_size is not None and batch_size != chapter.get("batch_size", batch_size):
        parts.append(f"batch {batch_size:,}")
    if epochs is not None and epochs != chapter.get("epochs", epochs):
        parts.append(f"at most {epochs} epochs")
    if train_fraction != chapter["train_fraction"]:
        parts.append(fraction_words(train_fraction))
    return ", ".join(parts)


def _value(name: str, entry: dict[str, Any], key: str, default: Any, write: str) -> Any:
    """``entry[key]`` checked (a number > 0; a share at most 1), else ``default``; a value equal to the
    chapter's is the chapter's own (``1`` and ``1.0`` give one run key)."""
    if key not in entry:
        return default
    try:
        value = check_float(f"{name}.{key}", entry[key], minimum=0.0, strict_min=True,
                            maximum=1.0 if key == "train_fraction" else None)
    except ParameterError as err:
        raise ParameterError(f"{err}: write {write}") from None
    return default if value == default else value


def _count(name: str, entry: dict[str, Any], key: str, default: int, write: str) -> int:
    """``entry[key]`` checked (an integer >= 1), else ``default``."""
    if key not in entry:
        return default
    try:
        return check_int(f"{name}.{key}", entry[key], minimum=1)
    except ParameterError as err:
        raise ParameterError(f"{err}: write {write}") from None


def _model(name: str, entry: dict[str, Any], models: list[dict[str, Any]]) -> dict[str, Any]:
    """The entry's model: one of the chapter's ``models``, parsed."""
    names = [spec_string(m) for m in models]
    try:
        spec = parse_spec(entry["model"])
    except ParameterError as err:
        raise ParameterError(f"{name}.model: {err}; write one of the chapter's models {names}") from None
    if spec not in models:
        raise ParameterError(f"{name}.model={entry['model']!r} is not one of the chapter's models: write one "
                             f"of {names}, or leave the ablations out with ablations=[] (an ablation trains "
                             "a model of `models` differently)")
    return spec


def _entries(entries: Any) -> list[tuple[str, dict[str, Any]]]:
    """``[(f"ablations[{i}]", entry)]``: a list whose every entry is a mapping with a model and only the keys
    of :data:`ABLATION_KEYS`, else a ParameterError naming the entry."""
    if not isinstance(entries, (list, tuple)):
        raise ParameterError(f"ablations={entries!r}: write a list (empty: none) of entries, e.g. "
                             f"[{ABLATION_EXAMPLE}]")
    for i, entry in enumerate(entries):
        extra = sorted(set(entry) - set(ABLATION_KEYS)) if isinstance(entry, dict) else []
        wrong = ("is not a mapping with a model" if not isinstance(entry, dict) or "model" not in entry else
                 f"has {extra}, but an entry takes only {list(ABLATION_KEYS)}" if extra else "")
        if wrong:
            raise ParameterError(f"ablations[{i}]={entry!r} {wrong}: write e.g. {ABLATION_EXAMPLE}")
    return [(f"ablations[{i}]", entry) for i, entry in enumerate(entries)]


def ablation_settings(entries: Any, *, models: list[dict[str, Any]], chapter: dict[str, Any],
                      seeds: list[int], optimizers: dict[str, str]) -> dict[str, Ablation]:
    """``{label: Ablation}`` of ``entries``, in their order. A label is the model's, then what the entry
    changes after a comma (:func:`setting_words`): ``"4.2 diagonal 100, Adagrad lr 1.0"``,
    ``"4.2 diagonal 100, 25% of the training sentences"``; an entry at the chapter's values is labelled as the
    chapter's runs of its model (``"4.2 diagonal 100"``).

    Args:
        entries: the parameter ``ablations`` (a list; empty: none).
        models: the chapter's parsed ``models``.
        chapter: the chapter's ``{optimizer, lr, batch_size, epochs, train_fraction}``, the defaults of an
            entry.
        seeds: the chapter's seeds, the default of an entry's.
        optimizers: the optimisers the matrix models train with, by name -> display name.

    Raises:
        ParameterError: an entry that is not one, naming it (``ablations[i].<key>``) and what to write.
    """
    out: dict[str, Ablation] = {}
    for name, entry in _entries(entries):
        model = _model(name, entry, models)
        optimizer = entry.get("optimizer", chapter["optimizer"])
        if optimizer not in optimizers:
            raise ParameterError(f"{name}.optimizer={optimizer!r} is not one the matrix models train with: "
                                 f"write one of {list(optimizers)} (adagrad with lr: 1.0 is the authors')")
        lr = _value(name, entry, "lr", chapter["lr"], "a learning rate > 0, e.g. lr: 1.0")
        batch = _count(name, entry, "batch_size", chapter["batch_size"],
                       "a number of sentences >= 1, e.g. batch_size: 10000 (the authors')")
        epochs = _count(name, entry, "epochs", chapter["epochs"], "a number of epochs >= 1, e.g. epochs: 80")
        fraction = _value(name, entry, "train_fraction", chapter["train_fraction"],
                          "a share of the training sentences in (0, 1], e.g. train_fraction: 0.25")
        chosen = entry.get("seeds", seeds)
        check_seeds(chosen, f"{name}.seeds")
        setting = setting_words(optimizer, lr, fraction, chapter=chapter, optimizers=optimizers,
                                batch_size=batch, epochs=epochs)
        label = spec_string(model) + (f", {setting}" if setting else "")
        if label in out:
            raise ParameterError(f"{name} repeats {label!r}; give each setting one entry (with all its "
                                 "seeds)")
        out[label] = Ablation(label, setting, model, optimizer, lr, batch, epochs, fraction, tuple(chosen))
    return out
