"""The synthetic tasks of the zoo chapter: one adapter per task, over the task modules of :mod:`urnlib.tasks`.

Each adapter builds a run's data and its per-epoch evaluation from its task module (the task dataclass,
``make_data``, ``validation_data`` and the evaluation function; never a chapter's Config), and says what the
models see: ``vocab_size`` input symbols and ``n_out`` outputs (``None``: a next-symbol language model).

Every run is read at its best *validation* epoch, and stopped early on it: the loss on held-out data drawn
like the training data (its own seeded stream, ``[seed, 2]``; as many strings or sentences as the test set),
not on the test set, whose deeper or longer strings are what the task tests (on Dyck the test loss rises from
the first epoch on, as a model learns that training strings never nest deeper than 3).

* ``dyck`` (:mod:`urnlib.tasks.dyck`): train on Dyck strings nested at most ``train_max_depth`` deep,
  test on strings of any depth; closing-bracket accuracy by number of attractors (depth generalisation).
* ``cross_serial`` (:mod:`urnlib.tasks.cross_serial`): train on C_train_k, test on C_test_k; full-string
  error by pattern length m + n (length generalisation).
* ``anbn`` (:mod:`urnlib.tasks.anbn`): train on a^n b^n, n <= ``max_train_n``; the largest n up
  to which every a^m b^m is accepted (counting). The training language is finite: its validation loss is the
  loss on the training strings, once each, in eval mode; acceptance beyond the training range is the test.
* ``agreement`` (:mod:`urnlib.tasks.agreement`): the synthetic agreement grammar, a classifier of
  the verb's number read at the word before it; accuracy by number of attractors. Models are built over the
  grammar's whole vocabulary (:data:`AGREEMENT_VOCAB`), so that a model's size does not depend on which words
  a seed's sentences happen to use.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass
from typing import Any, Callable

from torch import nn

from urnlib.params import ParameterError
from urnlib.tasks.agreement import grammar_vocab_size
from urnlib.tokens import TokenData

__all__ = ["TASKS", "TaskKind", "ZooData", "TRAINING_KEYS", "AGREEMENT_VOCAB"]

#: keys of a task's settings that are the training's, not the data's
TRAINING_KEYS = ("lr", "batch_size")


@dataclass
class ZooData:
    """A run's data: training and validation :class:`~urnlib.tokens.TokenData` and the per-epoch evaluation
    (on the test data)."""

    train: TokenData
    valid: TokenData
    evaluate: Callable[[nn.Module], dict[str, Any]]


class TaskKind:
    """One task of the zoo (subclasses below).

    Attributes:
        name: its key in the chapter's ``tasks`` parameter.
        title: how the chapter names it.
        keys: its data settings (the task dataclass's fields, less what the chapter sets itself).
        components: the :mod:`urnlib.components` whose behaviour its data and evaluation depend on.
        vocab_size: input symbols of its models.
        n_out: outputs of its models (``None``: ``vocab_size``, a next-symbol language model).
    """

    name: str = ""
    title: str = ""
    keys: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    vocab_size: int = 0
    n_out: int | None = None
    task_class: str = ""  #: ``"module:Class"`` of the task dataclass
    vocab_class: str = ""  #: ``"module:Class"`` of the vocabulary whose size is :attr:`vocab_size`

    def check(self, settings: Any) -> None:
        """``settings`` holds exactly :attr:`keys` and :data:`TRAINING_KEYS`."""
        allowed = [*self.keys, *TRAINING_KEYS]
        if not isinstance(settings, dict):
            raise ParameterError(f"tasks[{self.name!r}]={settings!r} must be a mapping of {allowed}")
        unknown = sorted(set(settings) - set(allowed))
        missing = [k for k in allowed if k not in settings]
        if unknown or missing:
            raise ParameterError(f"tasks[{self.name!r}]: " + "; ".join(
                ([f"unknown setting(s) {unknown}"] if unknown else [])
                + ([f"missing setting(s) {missing}"] if missing else [])) + f"; the settings are {allowed}")

    def data_settings(self, settings: dict[str, Any]) -> dict[str, Any]:
        self.check(settings)
        return {k: settings[k] for k in self.keys}

    def __init__(self):
        if self.vocab_class:
            self.vocab_size = len(_imported(self.vocab_class)())

    def task(self, settings: dict[str, Any], seed: int):
        """The task dataclass of ``settings`` (the chapter's) under ``seed`` (validated by its module)."""
        values = self.data_settings(settings)
        try:
            return _imported(self.task_class)(**values, **self.task_extras(values, seed))
        except ParameterError as err:
            raise ParameterError(f"tasks[{self.name!r}]: {err}") from None

    def task_extras(self, values: dict[str, Any], seed: int) -> dict[str, Any]:
        """The task dataclass's fields that are not settings: the seed."""
        return {"seed": seed}

    def task_of(self, params: dict[str, Any]):
        """The task dataclass of a run's stored ``params["task"]``."""
        return _imported(self.task_class)(**params)

    def data(self, task) -> ZooData:
        raise NotImplementedError

    def test(self, task) -> TokenData:
        """The task's test set as next-symbol (or label) targets: what a test-set loss is read on."""
        raise NotImplementedError


def _imported(path: str):
    """``"module:name"`` -> the object, imported when a task first needs it (a run imports only the modules
    of its own task)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class Dyck(TaskKind):
    name, title = "dyck", "Dyck (depth generalisation)"
    keys = ("n_pairs", "train_size", "test_size", "train_max_depth", "generator")
    components = ("data.dyck", "experiment.dyck")
    task_class, vocab_class = "urnlib.tasks.dyck:DyckTask", "urnlib.languages.dyck:DyckVocab"

    def data(self, task) -> ZooData:
        from urnlib.tasks.dyck import evaluate_closing, make_data, validation_data

        data = make_data(task)
        return ZooData(data.train, validation_data(task), lambda model: evaluate_closing(model, data))

    def test(self, task) -> TokenData:
        from urnlib.tasks.dyck import make_data

        return make_data(task).test


class CrossSerial(TaskKind):
    name, title = "cross_serial", "cross-serial (length generalisation)"
    keys = ("train_k", "test_k", "train_size", "test_size", "min_block")
    components = ("data.cross_serial", "experiment.cross_serial")
    task_class = "urnlib.tasks.cross_serial:CrossSerialTask"
    vocab_class = "urnlib.languages.cross_serial:CrossSerialVocab"

    def data(self, task) -> ZooData:
        from urnlib.tasks.cross_serial import evaluate_strings, make_data, validation_data

        data = make_data(task)
        return ZooData(data.train, validation_data(task),
                       lambda model: evaluate_strings(model, data, task))

    def test(self, task) -> TokenData:
        from urnlib.tasks.cross_serial import make_data

        return make_data(task).test


class Anbn(TaskKind):
    name, title = "anbn", "aⁿbⁿ (counting)"
    keys = ("max_train_n", "copies", "max_test_n", "threshold")
    components = ("data.anbn", "experiment.primer_anbn")
    task_class, vocab_class = "urnlib.tasks.anbn:AnbnTask", "urnlib.languages.anbn:AnbnVocab"

    def task_extras(self, values, seed):
        """No seed: the strings are the same under every seed (trace_n is the primer's state plot's)."""
        return {"trace_n": values["max_train_n"]}

    def data(self, task) -> ZooData:
        from urnlib.tasks.anbn import acceptance, largest, training_data, validation_data

        def evaluate(model):
            accepted = acceptance(model, task)
            return {"largest_accepted": largest(accepted), "accepted": accepted}

        return ZooData(training_data(task), validation_data(task), evaluate)

    def test(self, task) -> TokenData:
        """a^n b^n for n beyond the training range, N + 1 .. max_test_n, once each (the strings the
        acceptance test scores that training never showed)."""
        from urnlib.languages import anbn

        return TokenData(*anbn.encode(anbn.strings(range(task.max_train_n + 1, task.max_test_n + 1)),
                                      anbn.AnbnVocab()))


#: the agreement grammar's vocabulary: padding, its words and its POS tags
AGREEMENT_VOCAB = grammar_vocab_size()


class Agreement(TaskKind):
    name, title = "agreement", "agreement (synthetic grammar)"
    keys = ("train_size", "test_per_count", "train_max_attractors", "max_attractors")
    components = ("data.agreement_grammar", "experiment.agreement")
    vocab_size, n_out = AGREEMENT_VOCAB, 2
    task_class = "urnlib.tasks.agreement:SyntheticTask"

    def data(self, task) -> ZooData:
        from urnlib.tasks.agreement import evaluate_agreement, make_data, validation_data

        data = make_data(task)
        if len(data.vocab) > self.vocab_size:
            raise ParameterError(f"the agreement data of {asdict(task)} has {len(data.vocab)} symbols, more "
                                 f"than the grammar's {self.vocab_size}")
        return ZooData(data.train, validation_data(task, data.vocab),
                       lambda model: evaluate_agreement(model, data))

    def test(self, task) -> TokenData:
        from urnlib.tasks.agreement import make_data

        return make_data(task).test


#: every task of the zoo, by name
TASKS: dict[str, TaskKind] = {kind.name: kind for kind in (Dyck(), CrossSerial(), Anbn(), Agreement())}
