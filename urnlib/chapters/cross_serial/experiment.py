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
``{model: Seeds}``.

Training runs until the monitored metric (``monitor``: the validation loss, on strings drawn from C_8 like the
training strings) has not improved for ``patience`` epochs, never before ``min_epochs``, at most ``epochs``;
with ``keep_best`` the stored weights and final metrics are those of the best epoch, while the history holds
every epoch trained, the test measures included (read for reporting only).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from urnlib.callbacks import stopping_callbacks
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

    def plan(self) -> list[RunSpec]:
        """One run per model (:meth:`labels`) and seed, named ``"URN 16 seed 2"``; the seed is the data's and
        the training's."""
        specs = []
        for kind in self.models:
            for n in self.units:
                model = self.model_spec(kind, n)
                for seed in self.seeds:
                    specs.append(RunSpec.of(EXPERIMENT, f"{KINDS[kind]} {n}",
                                            {"task": asdict(self.task(seed)), "model": model,
                                             "train": self.train_config(seed).params(), "stop": self.stop()},
                                            (*COMPONENTS, component_of(model)), train_run,
                                            seed=seed, kind=kind, units=n))
        return specs

    def view(self, runs: dict[str, Run]) -> dict[str, Seeds]:
        """The runs as ``{model label: Seeds}`` (one setting here, so grouping by label is all)."""
        return by_label(runs)

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
        return (f"Built at {self.describe()}: {self.train_size:,} training strings from C_{self.train_k}, "
                f"{self.test_size:,} test strings from C_{self.test_k}; training {self.stopping()}; seeds "
                f"{list(self.seeds)}; models: " + ", ".join(self.labels())
                + f" ({len(self.plan())} runs).")


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the model of one run of :meth:`Config.plan`. Its history holds every epoch trained; its final
    metrics (and weights) are the best epoch's by the monitor when ``keep_best`` is on, else the last epoch's
    (:func:`~urnlib.experiments.training.train_token_model`). A run that monitors ``val_loss`` also scores
    the validation strings after every epoch (runs monitoring a test measure, stored before the protocol,
    train as they did)."""
    task = CrossSerialTask(**spec.params["task"])
    data = make_data(task)
    callbacks = stopping_callbacks(spec.params.get("stop"))
    validation = validation_data(task) if spec.params["train"].get("monitor") == "val_loss" else None
    return train_token_model(spec, checkpoint, data.train, data.test, len(data.vocab),
                             evaluate=lambda m: evaluate_strings(m, data, task), callbacks=callbacks,
                             valid=validation)


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned model and seed, by run name (``"URN 16 seed 2"``; group them with
    :meth:`Config.view`); ``store`` and ``mode`` default to the config's (see
    :func:`urnlib.experiments.config.run_config`)."""
    return run_config(config, store=store, mode=mode)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run, in eval mode."""
    return run.model(len(cs.CrossSerialVocab()))
