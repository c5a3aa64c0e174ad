"""The Dyck experiment (paper 000 sec. 5 / Fig. 3; paper 001 sec. 4 / Fig. 3, Table 2).

Train next-symbol language models on Dyck strings of depth <= ``train_max_depth``, test them on
unconstrained (deeper) strings, and score only the closing brackets, by number of attractors.

The chapter's protocol, callable without a notebook::

    from urnlib.experiments import dyck
    runs = dyck.run(dyck.Config.paper())   # the stored runs, by label; never trains

:class:`Config` holds the parameters of ``notebooks/params/dyck.<scale>.yaml``; :meth:`Config.plan` expands
them to one :class:`~urnlib.results.RunSpec` per model: paper 000's k-TURN, Full URN and arbitrary-embedding
RNN, paper 001's comparison (each kind of ``models_001`` at each size of ``units_001``), and, with
``variants``, two variants of the k-TURN that are not in the papers (the learning rate of the authors'
code; no dropout on the state). :func:`train_run` trains one run (a module-level function, so that any
worker process can run it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.experiments.config import ChapterConfig, run_config, train_token_model
from urnlib.languages import dyck
from urnlib.models.registry import build_trained, component_of, parse_spec
from urnlib.params import ParameterError, check_list, check_bool, check_choice, check_float, check_int
from urnlib.results import Run, RunSpec, Trained
from urnlib.tokens import TokenData
from urnlib.train import TrainConfig

__all__ = ["Config", "DyckTask", "DyckData", "make_data", "evaluate_closing", "train_run", "run",
           "rebuild_model", "EXPERIMENT", "COMPARISON_KINDS"]

EXPERIMENT = "dyck"
COMPONENTS = ("train.loop", "data.dyck", "experiment.dyck")
#: model kinds of the paper 001 comparison, and the label prefix of their runs
COMPARISON_KINDS = {"urn": "URN", "lstm": "LSTM", "arbitrary": "Arbitrary"}
VOCAB_SIZE = len(dyck.DyckVocab())
MAX_UNITS = 4096


@dataclass(frozen=True)
class DyckTask:
    """Data settings of one run (the values come from :class:`Config`).

    Args:
        n_pairs: bracket pairs per string (a string has ``2 n_pairs`` characters).
        train_size, test_size: strings in the training and test sets.
        train_max_depth: nesting cap of the training strings (test strings have none).
        generator: ``"walk"`` or ``"midpoint"`` (see :mod:`urnlib.languages.dyck`).
        seed: data seed (the training and test streams derive from it).
    """

    n_pairs: int
    train_size: int
    test_size: int
    train_max_depth: int
    generator: str
    seed: int

    def __post_init__(self):
        check_int("n_pairs", self.n_pairs, minimum=1, maximum=500)
        check_int("train_size", self.train_size, minimum=1, maximum=10_000_000)
        check_int("test_size", self.test_size, minimum=1, maximum=1_000_000)
        check_int("train_max_depth", self.train_max_depth, minimum=1, maximum=self.n_pairs)
        check_choice("generator", self.generator, list(dyck.GENERATORS))
        check_int("seed", self.seed, minimum=0)


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/dyck.<scale>.yaml`` says where each value comes from).

    Args:
        seed: one seed for data, initialisation, data order and dropout masks.
        n_pairs, train_size, test_size, train_max_depth, generator: the data (:class:`DyckTask`).
        epochs, batch_size, lr: training (Adam).
        dropout: dropout rate of every model.
        units_000, truncation_k: size of paper 000's models, and the k of its k-TURN.
        units_001, models_001: sizes and kinds (``urn``, ``lstm``, ``arbitrary``) of paper 001's comparison.
        lstm_embedding: the LSTM's embedding size.
        variants: also the two k-TURN variants (learning rate ``variant_lr``; no state dropout).
        variant_lr: learning rate of the first variant.
        min_bucket: attractor counts with fewer scored test predictions are left out of the claims.
    """

    CHAPTER = "dyck"

    seed: int
    n_pairs: int
    train_size: int
    test_size: int
    train_max_depth: int
    generator: str
    epochs: int
    batch_size: int
    lr: float
    dropout: float
    units_000: int
    truncation_k: int
    units_001: list
    models_001: list
    lstm_embedding: int
    variants: bool
    variant_lr: float
    min_bucket: int

    def validate(self) -> None:
        self.task()
        check_int("epochs", self.epochs, minimum=1, maximum=100_000)
        check_int("batch_size", self.batch_size, minimum=1, maximum=1_000_000)
        self.train_config()
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        check_int("units_000", self.units_000, minimum=2, maximum=MAX_UNITS)
        check_int("truncation_k", self.truncation_k, minimum=1)
        check_int("lstm_embedding", self.lstm_embedding, minimum=1, maximum=MAX_UNITS)
        check_bool("variants", self.variants)
        check_float("variant_lr", self.variant_lr, minimum=0.0, strict_min=True)
        check_int("min_bucket", self.min_bucket, minimum=1)
        check_list("units_001", self.units_001, example="[8, 16, 32]",
                   each=lambda name, n: check_int(name, n, minimum=1, maximum=MAX_UNITS))
        check_list("models_001", self.models_001, example=f"{list(COMPARISON_KINDS)}",
                   each=lambda name, kind: check_choice(name, kind, list(COMPARISON_KINDS)))
        if self.variants and self.variant_lr == self.lr:
            raise ParameterError(f"variant_lr={self.variant_lr} equals lr: the '{self.turn}, lr ...' variant "
                                 "would repeat the k-TURN; choose another variant_lr or set variants=False")
        if self.variants and self.dropout == 0:
            raise ParameterError(f"dropout=0 with variants=True: the '{self.turn}, no state dropout' variant "
                                 "would repeat the k-TURN; set variants=False")
        self.models()  # every model spec through the registry's grammar and checks

    # ------------------------------------------------------------------ what is run
    def task(self) -> DyckTask:
        return DyckTask(self.n_pairs, self.train_size, self.test_size, self.train_max_depth, self.generator,
                        self.seed)

    def train_config(self, lr: float | None = None) -> TrainConfig:
        return TrainConfig(self.epochs, self.batch_size, self.lr if lr is None else lr, self.seed)

    @property
    def turn(self) -> str:
        """The label of paper 000's truncated model, e.g. ``"3-TURN"``."""
        return f"{self.truncation_k}-TURN"

    def paper000_labels(self) -> list[str]:
        """The models of paper 000 Fig. 3."""
        return [self.turn, "Full URN", "Arbitrary"]

    def comparison_labels(self) -> list[str]:
        """The models of paper 001 Fig. 3, family by family (the notebook's order: URNs, LSTMs, arbitrary)."""
        return [f"{COMPARISON_KINDS[kind]} {n}" for kind in COMPARISON_KINDS if kind in self.models_001
                for n in self.units_001]

    def variant_labels(self) -> list[str]:
        """The k-TURN variants (empty when ``variants`` is off)."""
        if not self.variants:
            return []
        return [f"{self.turn}, lr {self.variant_lr}", f"{self.turn}, no state dropout"]

    def models(self) -> dict[str, tuple[dict[str, Any], float]]:
        """``{label: (model spec, learning rate)}`` of every run, each spec read by the model registry."""
        n, k = self.units_000, self.truncation_k
        out = {self.turn: (self._spec(f"urn {n} k{k}", f"units_000={n}, truncation_k={k}"), self.lr),
               "Full URN": (self._spec(f"urn {n}", f"units_000={n}"), self.lr),
               "Arbitrary": (self._spec(f"arbitrary {n}", f"units_000={n}"), self.lr)}
        for n in self.units_001:
            for kind in self.models_001:
                text = f"lstm {n} e{self.lstm_embedding}" if kind == "lstm" else f"{kind} {n}"
                out[f"{COMPARISON_KINDS[kind]} {n}"] = (self._spec(text, f"units_001 contains {n}"), self.lr)
        if self.variants:
            lr_label, state_label = self.variant_labels()
            out[lr_label] = (out[self.turn][0], self.variant_lr)
            out[state_label] = ({**out[self.turn][0], "state_dropout": False}, self.lr)
        return out

    def _spec(self, text: str, source: str) -> dict[str, Any]:
        try:
            spec = parse_spec(text)
        except ParameterError as err:
            raise ParameterError(f"{source}: {err}") from None
        return {**spec, "dropout": self.dropout}

    def plan(self) -> list[RunSpec]:
        """Every run of the chapter: paper 000's three models, paper 001's comparison, the variants."""
        task = asdict(self.task())
        return [RunSpec(EXPERIMENT, label,
                        {"task": task, "model": model, "train": asdict(self.train_config(lr))},
                        (*COMPONENTS, component_of(model)), f"{__name__}:train_run")
                for label, (model, lr) in self.models().items()]

    def summary(self) -> str:
        return (f"Built at {self.describe()}: {self.train_size:,} training strings of {self.n_pairs} bracket "
                f"pairs (depth <= {self.train_max_depth}), {self.test_size:,} test strings of any depth, "
                f"{self.epochs} epochs; models: " + "; ".join(s.name for s in self.plan()) + ".")

    # ------------------------------------------------------------------ resources
    def memory_estimate(self) -> dict[str, tuple[float, str]]:
        """Bytes of the largest things a run holds, each with the parameters that lower it."""
        length = 2 * self.n_pairs
        n = max([self.units_000, *self.units_001])
        return {
            # the strings as Python objects while they are generated and encoded, then the tensors
            "the data": ((self.train_size + self.test_size) * length * 64.0,
                         "train_size, test_size or n_pairs"),
            # a batch's states, gates and their gradients (float32)
            "a training batch": (self.batch_size * length * max(n, self.lstm_embedding) * 4.0 * 32,
                                 "batch_size, n_pairs, units_000 or units_001"),
            # every symbol's n x n matrix, its exponential's intermediates and gradients
            "the symbols' matrices": (VOCAB_SIZE * n * n * 4.0 * 32, "units_000 or units_001"),
        }

@dataclass
class DyckData:
    vocab: dyck.DyckVocab
    train: TokenData
    test: TokenData
    test_strings: list[str]
    test_attractors: torch.Tensor  # (N, L) attractor count at closing positions, -1 elsewhere


@lru_cache(maxsize=4)
def make_data(task: DyckTask) -> DyckData:
    """Training strings (depth <= ``train_max_depth``) and unconstrained test strings, seeded."""
    vocab = dyck.DyckVocab()
    train = dyck.generate(task.train_size, task.n_pairs, max_depth=task.train_max_depth,
                          method=task.generator, rng=np.random.default_rng([task.seed, 0]))
    test = dyck.generate(task.test_size, task.n_pairs, max_depth=None, method=task.generator,
                         rng=np.random.default_rng([task.seed, 1]))
    attr = torch.tensor([[-1 if a is None else a for a in dyck.attractors(s)] for s in test])
    return DyckData(vocab, TokenData(*dyck.encode(train, vocab)), TokenData(*dyck.encode(test, vocab)), test,
                    attr)


@torch.no_grad()
def evaluate_closing(model: torch.nn.Module, data: DyckData, batch_size: int = 1024) -> dict[str, Any]:
    """Closing-bracket accuracy on the test set, overall and by number of attractors, ``batch_size``
    strings at a time (it never holds more than one batch of logits).

    Returns:
        ``closing_accuracy`` and two lists indexed by attractor count:
        ``attr_correct[a]``, ``attr_total[a]`` (a = 0 .. the largest count in the test set).
    """
    was_training = model.training
    model.eval()
    size = int(data.test_attractors.max()) + 1
    total = torch.zeros(size, dtype=torch.long)
    right = torch.zeros(size, dtype=torch.long)
    n_correct = n_scored = torch.zeros((), dtype=torch.long)
    try:
        for i in range(0, len(data.test), batch_size):
            logits = model(data.test.inputs[i : i + batch_size])
            scored, correct = dyck.score_closing(logits, data.test.targets[i : i + batch_size], data.vocab)
            attr = data.test_attractors[i : i + batch_size][scored]
            total += torch.bincount(attr, minlength=size)
            right += torch.bincount(attr[correct[scored]], minlength=size)
            n_correct, n_scored = n_correct + correct.sum(), n_scored + scored.sum()
    finally:
        model.train(was_training)
    return {
        "closing_accuracy": float(n_correct / n_scored),  # true division in the default dtype, as always
        "attr_correct": [int(v) for v in right.tolist()],
        "attr_total": [int(v) for v in total.tolist()],
    }


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the model of one run of :meth:`Config.plan`; final metrics are the last epoch's."""
    task = DyckTask(**spec.params["task"])
    data = make_data(task)
    return train_token_model(spec, checkpoint, data.train, data.test, len(data.vocab),
                             evaluate=lambda m: evaluate_closing(m, data))


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned model, by label; ``store`` and ``mode`` default to the config's (see
    :func:`urnlib.experiments.config.run_config`)."""
    return run_config(config, store=store, mode=mode)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run, in eval mode."""
    return build_trained(run.params["model"], run.weights, VOCAB_SIZE)
