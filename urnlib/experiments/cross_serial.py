"""The cross-serial experiment (paper 001 sec. 3, Fig. 2a-d, Table 1).

Language models trained on strings of C_8 = { a^m b^n c^m d^n | m + n < 8 } and tested on C_10, where the
strings with m + n = 8 or 9 are longer than any seen in training. A test string counts as correct when
every next-symbol prediction, up to and including the stop symbol, is a valid continuation in C_10.

The chapter's protocol, callable without a notebook::

    from urnlib.experiments import cross_serial
    runs = cross_serial.run(cross_serial.Config.paper())   # the stored runs, by label; never trains

:class:`Config` holds the parameters of ``notebooks/params/cross_serial.<scale>.yaml``; :meth:`Config.plan`
expands them to one :class:`~urnlib.results.RunSpec` per model, and :func:`train_run` trains one of them
(a module-level function, so that any worker process can run it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.experiments.config import ChapterConfig, run_config, train_token_model
from urnlib.languages import cross_serial as cs
from urnlib.models.registry import build_trained, component_of
from urnlib.params import ParameterError, check_choice, check_float, check_int
from urnlib.results import Run, RunSpec, Trained
from urnlib.tokens import TokenData
from urnlib.train import TrainConfig, predict

__all__ = ["Config", "CrossSerialTask", "CrossSerialData", "make_data", "evaluate_strings", "train_run",
           "run", "rebuild_model", "EXPERIMENT", "KINDS"]

EXPERIMENT = "cross_serial"
COMPONENTS = ("train.loop", "data.cross_serial", "experiment.cross_serial")
#: model kinds of the comparison, and the label prefix of their runs
KINDS = {"urn": "URN", "lstm": "LSTM"}


@dataclass(frozen=True)
class CrossSerialTask:
    """Data settings of one run (the values come from :class:`Config`)."""

    train_k: int  # training strings from C_train_k
    test_k: int  # test strings from C_test_k; also the language predictions are scored in
    train_size: int
    test_size: int
    min_block: int  # m, n >= min_block: see urnlib.languages.cross_serial on how "uniformly" is read
    seed: int

    def __post_init__(self):
        check_int("min_block", self.min_block, minimum=0, maximum=1)
        for name in ("train_k", "test_k"):
            value = getattr(self, name)
            check_int(name, value, minimum=2)
            cs.check_language(value, self.min_block, name)
        if self.train_k > self.test_k:
            raise ParameterError(
                f"train_k={self.train_k} is above test_k={self.test_k}: the test language must contain the "
                "training language (C_k grows with k), so use train_k <= test_k"
            )
        check_int("train_size", self.train_size, minimum=1, maximum=10_000_000)
        check_int("test_size", self.test_size, minimum=1, maximum=1_000_000)
        check_int("seed", self.seed, minimum=0)


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/cross_serial.<scale>.yaml`` says where each value comes
    from)."""

    CHAPTER = "cross_serial"

    seed: int
    train_k: int
    test_k: int
    train_size: int
    test_size: int
    min_block: int
    epochs: int
    batch_size: int
    lr: float
    dropout: float
    units: list
    models: list
    lstm_embedding: int

    def validate(self) -> None:
        self.task()
        self.train_config()
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        check_int("lstm_embedding", self.lstm_embedding, minimum=1)
        if not isinstance(self.units, (list, tuple)) or not self.units:
            raise ParameterError(f"units={self.units!r} must be a non-empty list of unit counts, "
                                 "e.g. [8, 16, 32]")
        for n in self.units:
            check_int("each of units", n, minimum=2, maximum=4096)
            if n % 2:
                raise ParameterError(f"units contains {n}: the URN needs an even number of units")
        if not isinstance(self.models, (list, tuple)) or not self.models:
            raise ParameterError(f"models={self.models!r} must be a non-empty list drawn from {list(KINDS)}")
        for kind in self.models:
            check_choice("each of models", kind, list(KINDS))
        # memory: the test set's logits are held at once (N x T x V floats)
        length = 2 * self.test_k + 2
        need = self.test_size * length * len(cs.CrossSerialVocab()) * 4 * 3
        if need > 8 * 2**30:
            raise ParameterError(f"test_size={self.test_size} with test_k={self.test_k} needs about "
                                 f"{need / 2**30:.0f} GiB to score; lower test_size or test_k")

    def task(self) -> CrossSerialTask:
        return CrossSerialTask(self.train_k, self.test_k, self.train_size, self.test_size, self.min_block,
                               self.seed)

    def train_config(self) -> TrainConfig:
        return TrainConfig(self.epochs, self.batch_size, self.lr, self.seed)

    def model_spec(self, kind: str, n: int) -> dict[str, Any]:
        """The URN is untruncated and has no state dropout (reference-facts: cross-serial URN); dropout acts
        on its parameters and output. The LSTM has dropout on its input and state."""
        if kind == "urn":
            return {"kind": "urn", "n": n, "k": None, "dropout": self.dropout, "state_dropout": False}
        return {"kind": "lstm", "n": n, "embedding_size": self.lstm_embedding, "dropout": self.dropout}

    def plan(self) -> list[RunSpec]:
        """One run per kind of ``models`` (paper: URN and LSTM) and size of ``units`` (paper: 8, 16, 32)."""
        task, cfg = asdict(self.task()), asdict(self.train_config())
        specs = []
        for kind in self.models:
            for n in self.units:
                model = self.model_spec(kind, n)
                specs.append(RunSpec(EXPERIMENT, f"{KINDS[kind]} {n}",
                                     {"task": task, "model": model, "train": cfg},
                                     (*COMPONENTS, component_of(model)), f"{__name__}:train_run"))
        return specs

    def summary(self) -> str:
        return (f"Built at {self.describe()}: {self.train_size:,} training strings from C_{self.train_k}, "
                f"{self.test_size:,} test strings from C_{self.test_k}, {self.epochs} epochs, models: "
                + ", ".join(s.name for s in self.plan()) + ".")


@dataclass
class CrossSerialData:
    vocab: cs.CrossSerialVocab
    train: TokenData
    test: TokenData
    test_pairs: list[tuple[int, int]]


@lru_cache(maxsize=4)
def make_data(task: CrossSerialTask) -> CrossSerialData:
    """Seeded training strings from C_train_k and test strings from C_test_k."""
    vocab = cs.CrossSerialVocab()
    train = cs.generate(task.train_size, task.train_k, min_block=task.min_block,
                        rng=np.random.default_rng([task.seed, 0]))
    test = cs.generate(task.test_size, task.test_k, min_block=task.min_block,
                       rng=np.random.default_rng([task.seed, 1]))
    return CrossSerialData(vocab, TokenData(*cs.encode(train, vocab)), TokenData(*cs.encode(test, vocab)),
                           test)


def evaluate_strings(model: torch.nn.Module, data: CrossSerialData, task: CrossSerialTask) -> dict[str, Any]:
    """Full-string error rate on the test set, overall and by pattern length m + n.

    Returns:
        ``error_rate`` and lists indexed by m + n: ``length_wrong``, ``length_total``.
    """
    predicted = predict(model, data.test.inputs).argmax(dim=-1)
    correct = cs.score_strings(predicted, data.test_pairs, data.vocab, task.test_k, task.min_block)
    lengths = torch.tensor([m + n for m, n in data.test_pairs])
    total = torch.bincount(lengths, minlength=task.test_k)
    wrong = torch.bincount(lengths, weights=(~correct).double(), minlength=task.test_k)
    return {
        "error_rate": float((~correct).double().mean()),
        "length_wrong": [int(v) for v in wrong.tolist()],
        "length_total": [int(v) for v in total.tolist()],
    }


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the model of one run of :meth:`Config.plan`; final metrics are the last epoch's."""
    task = CrossSerialTask(**spec.params["task"])
    data = make_data(task)
    return train_token_model(spec, checkpoint, data.train, data.test, len(data.vocab),
                             evaluate=lambda m: evaluate_strings(m, data, task))


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned model, by label; ``store`` and ``mode`` default to the config's (see
    :func:`urnlib.experiments.config.run_config`)."""
    return run_config(config, store=store, mode=mode)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run, in eval mode."""
    return build_trained(run.params["model"], run.weights, len(cs.CrossSerialVocab()))
