"""The cross-serial experiment (paper 001 sec. 3, Fig. 2a-d, Table 1).

Language models trained on strings of C_8 = { a^m b^n c^m d^n | m + n < 8 } and tested on C_10, where the
strings with m + n = 8 or 9 are longer than any seen in training. A test string counts as correct when
every next-symbol prediction, up to and including the stop symbol, is a valid continuation in C_10.

The chapter's protocol, callable without a notebook::

    from urnlib.chapters.cross_serial import experiment as cross_serial
    config = cross_serial.Config.paper()
    runs = cross_serial.run(config)     # the stored runs, by name ("URN 16 seed 0", ...); never trains
    seeds = config.view(runs)           # {"URN 16": Seeds([...]), ...}

:class:`Config` holds the parameters of ``notebooks/params/cross_serial.<scale>.yaml``; :meth:`Config.plan`
expands them to one :class:`~urnlib.results.RunSpec` per model and seed (run ``"URN 16 seed 2"``: the seed
fixes the run's data, initialisation, data order and dropout masks), and :func:`train_run` trains one of them
(a module-level function, so that any worker process can run it). :meth:`Config.view` groups the runs as
``{model: Seeds}``; the runs of the parameter ``variants`` (:mod:`urnlib.chapters.cross_serial.variants`: a
model trained again as the authors' code draws its strings and sizes its output) are planned beside them and
grouped apart by :meth:`Config.variant_view`.

Training runs until the monitored metric (``monitor``: the validation loss, on strings drawn from C_8 like the
training strings) has not improved for ``patience`` epochs, never before ``min_epochs``, at most ``epochs``;
with ``keep_best`` the stored weights and final metrics are those of the best epoch, while the history holds
every epoch trained, the test measures included (read for reporting only).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from urnlib.callbacks import stopping_callbacks
from urnlib.chapters.cross_serial import variants as cs_variants
from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.experiments.training import train_token_model
from urnlib.languages import cross_serial as cs
from urnlib.models.registry import component_of
from urnlib.params import ParameterError, check_bool, check_choice, check_float, check_int, check_list
from urnlib.results import Run, RunSpec, Trained
from urnlib.seeds import Seeds, by_label, check_seeds
from urnlib.tasks.cross_serial import CrossSerialTask, evaluate_strings, make_data, validation_data
from urnlib.train import TrainConfig

#: CrossSerialTask, make_data and evaluate_strings are urnlib.tasks.cross_serial's, named here for the tests
__all__ = ["Config", "CrossSerialTask", "make_data", "evaluate_strings", "train_run",
           "run", "rebuild_model", "EXPERIMENT", "KINDS", "MONITORS"]

EXPERIMENT = "cross_serial"
#: the epoch metrics this chapter's runs may select on (early stopping, kept weights): the loss on validation
#: strings drawn from C_train_k like the training strings
VALIDATION_MONITORS = ("val_loss",)
COMPONENTS = ("train.loop", "data.cross_serial", "experiment.cross_serial")
#: model kinds of the comparison, and the label prefix of their runs
KINDS = {"urn": "URN", "lstm": "LSTM"}
#: epoch metrics that ``monitor`` may watch (all: lower is better). ``val_loss`` is the loss on validation
#: strings drawn from C_train_k like the training strings (:func:`urnlib.tasks.cross_serial.validation_data`):
#: the protocol of the book (selection never on test data); the other two read the test set
MONITORS = {"val_loss": "validation loss", "test_loss": "test loss", "error_rate": "full-string error rate"}


def _epochs(n: int) -> str:
    return f"{n} epoch{'s' if n != 1 else ''}"


def _check_units(name: str, n: Any) -> None:
    check_int(name, n, minimum=2, maximum=4096)
    if n % 2:
        raise ParameterError(f"{name}={n}: the URN needs an even number of units")


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/cross_serial.<scale>.yaml`` says where each value comes
    from).

    Args:
        seeds: the seeds of every model; one seed fixes a run's data, initialisation, data order and dropout
            masks.
        train_k, test_k, train_size, test_size, min_block: the data (:class:`CrossSerialTask`).
        epochs: the cap on training epochs.
        patience: stop after this many epochs without improvement of ``monitor`` (0: never, train ``epochs``).
        min_epochs: never stop before this many epochs (the paper's training length: claims read the curve);
            ``epochs`` still caps training.
        monitor: the epoch metric watched (``test_loss`` or ``error_rate``; lower is better).
        keep_best: end with the weights and final metrics of the best epoch by ``monitor`` (else the last).
        batch_size, lr: training (Adam).
        dropout: dropout rate of every model.
        units, models: the sizes and kinds (``urn``, ``lstm``) compared.
        lstm_embedding: the LSTM's embedding size.
        variants: models trained again in another setting (:mod:`urnlib.chapters.cross_serial.variants`;
            ``[]``: none, the default, so that a preset without it plans the chapter's runs alone).
    """

    CHAPTER = "cross_serial"

    seeds: list
    train_k: int
    test_k: int
    train_size: int
    test_size: int
    min_block: int
    epochs: int
    patience: int
    min_epochs: int
    monitor: str
    keep_best: bool
    batch_size: int
    lr: float
    dropout: float
    units: list
    models: list
    lstm_embedding: int
    variants: list = field(default_factory=list)

    def validate(self) -> None:
        check_seeds(self.seeds)
        for seed in self.seeds:
            self.task(seed)
        check_int("epochs", self.epochs, minimum=1, maximum=100_000)
        check_int("patience", self.patience, minimum=0, maximum=100_000)
        check_int("min_epochs", self.min_epochs, minimum=0)  # above epochs: the cap wins
        check_choice("monitor", self.monitor, list(MONITORS))
        check_bool("keep_best", self.keep_best)
        for seed in self.seeds:
            self.train_config(seed)
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        check_int("lstm_embedding", self.lstm_embedding, minimum=1)
        check_list("units", self.units, example="[8, 16, 32]", each=_check_units)
        check_list("models", self.models, example=f"{list(KINDS)}",
                   each=lambda name, kind: check_choice(name, kind, list(KINDS)))
        self.variant_specs()
        # memory: the test set's logits are held at once (N x T x V floats)
        length = 2 * self.test_k + 2
        need = self.test_size * length * len(cs.CrossSerialVocab()) * 4 * 3
        if need > 8 * 2**30:
            raise ParameterError(f"test_size={self.test_size} with test_k={self.test_k} needs about "
                                 f"{need / 2**30:.0f} GiB to score; lower test_size or test_k")

    def task(self, seed: int) -> CrossSerialTask:
        """The data of the runs of ``seed``."""
        return CrossSerialTask(self.train_k, self.test_k, self.train_size, self.test_size, self.min_block,
                               seed)

    def train_config(self, seed: int) -> TrainConfig:
        """The training of the runs of ``seed``: Adam within ``epochs``; the monitor keeps the best epoch
        (``keep_best``); the stopping rule is :meth:`stop`."""
        watched = bool(self.patience) or self.keep_best
        return TrainConfig(self.epochs, self.batch_size, self.lr, seed,
                           monitor=self.monitor if watched else None, minimize=True, keep_best=self.keep_best)

    def stop(self) -> dict[str, Any]:
        """The stopping rule of a run (:class:`~urnlib.callbacks.EarlyStop`): after ``patience`` epochs
        without a better ``monitor``, never before ``min_epochs``."""
        return {"key": self.monitor, "patience": self.patience, "min_epochs": self.min_epochs}

    def model_spec(self, kind: str, n: int) -> dict[str, Any]:
        """The URN is untruncated and has no state dropout (reference-facts: cross-serial URN); dropout acts
        on its parameters and output. The LSTM has dropout on its input and state."""
        if kind == "urn":
            return {"kind": "urn", "n": n, "k": None, "dropout": self.dropout, "state_dropout": False}
        return {"kind": "lstm", "n": n, "embedding_size": self.lstm_embedding, "dropout": self.dropout}

    def labels(self) -> list[str]:
        """The models, ``"URN 8"`` ...: each kind of ``models`` (paper: URN and LSTM) at each size of
        ``units``."""
        return [f"{KINDS[kind]} {n}" for kind in self.models for n in self.units]

    def _spec(self, kind: str, n: int, seed: int, variant: cs_variants.Variant | None = None) -> RunSpec:
        model, train, stop = self.model_spec(kind, n), self.train_config(seed), self.stop()
        label, extra, coords = f"{KINDS[kind]} {n}", {}, {}
        if variant is not None:  # its epochs (and never more before stopping), sampler and classes
            if variant.epochs is not None:
                train = replace(train, epochs=variant.epochs)
                stop = {**stop, "min_epochs": min(stop["min_epochs"], variant.epochs)}
            label, extra = cs_variants.label_of(label, variant), variant.params()
            model = {**model, **variant.model_options()}
            coords = {"variant": label}
        return RunSpec.of(EXPERIMENT, label,
                          {"task": asdict(self.task(seed)), "model": model, "train": train.params(),
                           "stop": stop, **extra},
                          (*COMPONENTS, component_of(model)), train_run, seed=seed, kind=kind, units=n,
                          **coords)

    def variant_specs(self) -> dict[str, cs_variants.Variant]:
        """``{label: Variant}`` of ``variants`` (:func:`.variants.variants_of`)."""
        return cs_variants.variants_of(self.variants, kinds=KINDS, seeds=list(self.seeds), epochs=self.epochs,
                                       check_units=_check_units)

    def variant_plan(self) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed]}`` of ``variants``."""
        return {label: [self._spec(v.kind, v.units, seed, v) for seed in v.seeds]
                for label, v in self.variant_specs().items()}

    def plan(self) -> list[RunSpec]:
        """One run per model (:meth:`labels`) and seed, named ``"URN 16 seed 2"``; the seed is the data's and
        the training's; then the runs of ``variants`` (:meth:`variant_plan`)."""
        specs = [self._spec(kind, n, seed) for kind in self.models for n in self.units for seed in self.seeds]
        return specs + [s for group in self.variant_plan().values() for s in group]

    def view(self, runs: dict[str, Run]) -> dict[str, Seeds]:
        """The chapter's runs as ``{model label: Seeds}`` (one setting, so grouping by label is all); the
        variants' runs are left out (:meth:`variant_view`)."""
        variants = set(self.variant_specs())
        return {label: seeds for label, seeds in by_label(runs).items() if label not in variants}

    def variant_view(self, runs: dict[str, Run]) -> dict[str, Seeds]:
        """The runs of ``variants`` as ``{variant label: Seeds}``, in the order of the entries."""
        grouped = by_label(runs)
        return {label: grouped[label] for label in self.variant_specs() if label in grouped}

    def stopping(self) -> str:
        """How long a run trains, in words (for the page)."""
        watched = MONITORS[self.monitor]
        keep = (f", keeping the weights and metrics of the epoch of the lowest {watched}" if self.keep_best
                else "")
        if not self.patience:
            return f"{_epochs(self.epochs)}{keep}"
        return (f"at least {_epochs(self.min_epochs)}, then until the {watched} has not improved for "
                f"{_epochs(self.patience)}, at most {_epochs(self.epochs)}{keep}")

    def summary(self) -> str:
        variants = self.variant_specs()
        also = ("; variants: " + ", ".join(f"{label} (seeds {v.seeds})" for label, v in variants.items())
                if variants else "")
        return (f"Built at {self.describe()}: {self.train_size:,} training strings from C_{self.train_k}, "
                f"{self.test_size:,} test strings from C_{self.test_k}; training {self.stopping()}; seeds "
                f"{list(self.seeds)}; models: " + ", ".join(self.labels()) + also
                + f" ({len(self.plan())} runs).")


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the model of one run of :meth:`Config.plan`. Its history holds every epoch trained; its final
    metrics (and weights) are the best epoch's by the monitor when ``keep_best`` is on, else the last epoch's
    (:func:`~urnlib.experiments.training.train_token_model`). A run that monitors ``val_loss`` also scores
    the validation strings after every epoch (runs monitoring a test measure, stored before the protocol,
    train as they did). A variant's run (:mod:`urnlib.chapters.cross_serial.variants`) draws its strings by
    its ``sampler`` and builds its model with ``classes`` symbols."""
    task = CrossSerialTask(**spec.params["task"])
    sampler = spec.params.get("sampler", "strings")
    data = make_data(task, sampler)
    callbacks = stopping_callbacks(spec.params.get("stop"))
    validation = validation_data(task, sampler) if spec.params["train"].get("monitor") == "val_loss" else None
    classes = spec.params.get("classes", len(data.vocab))
    return train_token_model(spec, checkpoint, data.train, data.test, classes,
                             evaluate=lambda m: evaluate_strings(m, data, task), callbacks=callbacks,
                             valid=validation)


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned model and seed, by run name (``"URN 16 seed 2"``; group them with
    :meth:`Config.view`); ``store`` and ``mode`` default to the config's (see
    :func:`urnlib.experiments.config.run_config`)."""
    return run_config(config, store=store, mode=mode)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run, in eval mode (with its ``classes`` symbols where a variant set
    them)."""
    return run.model(run.params.get("classes", len(cs.CrossSerialVocab())))
