"""The agreement experiment (paper 000 sec. 4, Fig. 2 and Tables 1-2; Linzen, Dupoux & Goldberg 2016).

A classifier reads a sentence up to the word before a present-tense verb and predicts the verb's
number (singular VBZ / plural VBP); accuracy is reported by number of attractors. The paper's model is
a 3-TURN with 50 units; the baseline is the LSTM of Linzen et al. (50 units, embedding 50). Both are
the language models of :mod:`urnlib.models` with a readout of 2 classes, read at the last word of the
prefix (every other position carries no loss), so they train in the one loop of :mod:`urnlib.train`.
The data sources (the agreement grammar, real English built offline, Linzen-format files) and the
evaluation are in :mod:`urnlib.tasks.agreement`; the checks of the sources before training in
:mod:`urnlib.chapters.agreement.data`.

The chapter's protocol, callable without a notebook::

    from urnlib.chapters.agreement import experiment as agreement
    runs = agreement.run(agreement.Config.paper())   # stored runs by source and label; never trains

:class:`Config` holds the parameters of ``notebooks/params/agreement.<scale>.yaml``; :meth:`Config.plan`
expands them to one :class:`~urnlib.results.RunSpec` per source, model and seed (stored under
``agreement/<source>/``, named ``"<label> seed <s>"``; a seed fixes a run's data - the grammar's sentences or
the split of real text -, initialisation, data order and dropout masks), and :func:`train_run` trains one of
them (a module-level function, so that any worker process can run it). A run trains for at most ``epochs``
epochs, stops early after ``patience`` epochs without a lower ``monitor`` (never before ``min_epochs``), and
keeps the weights and metrics of its best epoch, the lowest ``val_loss`` on validation sentences drawn like
the training ones (held out from the training side of real text). ``more_seeds``: :mod:`.more_seeds`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any


from urnlib.chapters.agreement.data import FileSummary, check_file, check_linzen, check_memory, check_offline
from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.models.registry import component_of, parse_spec
from urnlib.params import ParameterError, check_choice, check_float, check_int
from urnlib.results import Run, RunSpec
from urnlib.seeds import Seeds, by_label, check_seeds, split_setting
from urnlib.tasks.agreement import (PAD, AgreementData, AgreementVocab, CorpusTask, SyntheticTask,
                                    build_vocab, evaluate_agreement, make_data, source_kind, source_name,
                                    task_for, task_of, tasks_for)
from urnlib.train import TrainConfig
# training one run and rebuilding it live beside this module; named here, as the plans name them
from urnlib.chapters.agreement.training import ANALYSIS_WORDS, rebuild_model, train_run
from urnlib.chapters.agreement.sizes import Size, sized_task, sizes_of, split_sizes
from urnlib.chapters.agreement import more_seeds as more

__all__ = ["Config", "AgreementRuns", "run_spec", "train_run", "run", "rebuild_model", "EXPERIMENT",
           "MODEL_LABELS", "MONITORS", "ANALYSIS_WORDS", "SyntheticTask", "CorpusTask", "task_for",
           "tasks_for", "task_of", "source_name", "check_file", "FileSummary", "AgreementVocab",
           "build_vocab", "AgreementData", "make_data", "evaluate_agreement", "PAD"]

EXPERIMENT = "agreement"
#: the epoch metrics this chapter's runs may select on (early stopping, kept weights): the loss on
#: validation sentences drawn like the training ones (the paper preset's runs, stored before the protocol,
#: still watch the test loss until the agreement retrain)
VALIDATION_MONITORS = ("val_loss",)
MODEL_LABELS = {"urn": "{k}-TURN", "lstm": "LSTM"}
COMPONENTS = ("train.loop", "experiment.agreement")
#: data components of each kind of source
DATA_COMPONENTS = {"synthetic": ("data.agreement_grammar",),
                   "offline": ("data.agreement_offline", "data.linzen"), "file": ("data.linzen",),
                   "linzen": ("data.numpred",)}
#: what may pick a run's best epoch and stop it: ``val_loss`` on validation sentences drawn like the training
#: ones (the protocol); ``test_loss`` on the test sentences (runs stored before it)
MONITORS = {"val_loss": "validation loss", "test_loss": "test loss"}


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/agreement.<scale>.yaml`` says where each value comes
    from)."""

    CHAPTER = "agreement"

    seeds: list
    sources: list
    analysis_source: str
    synthetic_train: int
    synthetic_test_per_count: int
    synthetic_train_max_attractors: int
    synthetic_max_attractors: int
    vocab_size: int
    test_fraction: float
    max_examples: int
    offline_max_sentences: int
    models: list
    units: int
    truncation_k: int
    lstm_embedding: int
    dropout: float
    epochs: int
    patience: int
    monitor: str
    min_epochs: int
    batch_size: int
    lr: float
    code_lr: float
    small_vocab: int
    min_total: int
    phrases: list
    sizes: list = field(default_factory=list)  # the size trend's runs (.sizes; []: none)
    more_seeds: dict = field(default_factory=dict)  # seeds of some models only (.more_seeds; {}: none)

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Every check before any work. In modes ``train`` and ``retrain`` the data is checked too: each
        Linzen-format file is read to its end (a defect on any line stops here), and the corpora of the
        ``offline`` source are verified against their pinned packages; mode ``load`` reads no data."""
        check_seeds(self.seeds)
        check_int("synthetic_train", self.synthetic_train, minimum=2, maximum=10_000_000)
        check_int("synthetic_test_per_count", self.synthetic_test_per_count, minimum=1, maximum=1_000_000)
        check_int("synthetic_max_attractors", self.synthetic_max_attractors, minimum=0, maximum=12)
        check_int("synthetic_train_max_attractors", self.synthetic_train_max_attractors, minimum=0,
                  maximum=self.synthetic_max_attractors)
        check_int("vocab_size", self.vocab_size, minimum=1, maximum=10_000_000)
        check_float("test_fraction", self.test_fraction, minimum=0.0, maximum=0.9, strict_min=True)
        check_int("max_examples", self.max_examples, minimum=0, maximum=1_000_000_000)
        check_int("offline_max_sentences", self.offline_max_sentences, minimum=0, maximum=1_000_000_000)
        check_int("small_vocab", self.small_vocab, minimum=0)
        self.code_setting  # noqa: B018 - checks code_lr
        if self.small_vocab >= self.vocab_size:
            raise ParameterError(f"small_vocab={self.small_vocab} is not below vocab_size={self.vocab_size}: "
                                 "the sensitivity check trains the k-TURN with a smaller vocabulary (0: "
                                 "skip it)")
        check_int("min_total", self.min_total, minimum=1)
        if not isinstance(self.phrases, list) or not all(isinstance(p, str) and p.split()
                                                         for p in self.phrases):
            raise ParameterError(f"phrases={self.phrases!r}: give a list of non-empty strings of "
                                 "space-separated words, e.g. ['the', 'of the']")
        self.train_config(self.seeds[0])
        tasks = self.tasks()
        preset = "more_seeds" not in self.overrides  # the preset's own entries follow the reader's sources
        self.more_seeds = more.check_more_seeds(self.more_seeds, sources=list(tasks), seeds=list(self.seeds),
                                                labels=list(self.model_specs()), preset=preset)
        files = self._check_data(tasks) if self.mode != "load" else {}
        if self.analysis_source and self.analysis_source not in tasks:
            raise ParameterError(f"analysis_source={self.analysis_source!r} is not one of the sources "
                                 f"{list(tasks)} ('' for none)")
        check_memory(self, files, round(self.synthetic_train * max(
            [1.0] + [s.share for s in self.size_specs() if s.source == "synthetic"])))

    def _check_data(self, tasks: dict[str, SyntheticTask | CorpusTask]) -> dict[str, FileSummary]:
        """Read every file source to its end; verify the corpora of ``offline``. Returns the files' sizes."""
        files: dict[str, FileSummary] = {}
        for name, task in tasks.items():
            if source_kind(task) in ("offline", "linzen"):  # their corpora and files, verified
                {"offline": check_offline, "linzen": check_linzen}[source_kind(task)]()
            elif source_kind(task) == "file":
                limit = f" (max_examples={self.max_examples})" if self.max_examples else ""
                summary = files[name] = check_file(task.source, self.max_examples or None)
                if summary.examples < 10:
                    raise ParameterError(f"data source {task.source!r}: {summary.examples} examples{limit}; "
                                         "the split needs at least 10")
                if summary.sentences - math.ceil(self.test_fraction * summary.sentences) < 1:
                    raise ParameterError(f"data source {task.source!r}: {summary.sentences} distinct "
                                         f"sentences{limit} leave none for training at "
                                         f"test_fraction={self.test_fraction}")
        return files

    def tasks(self, seed: int | None = None) -> dict[str, SyntheticTask | CorpusTask]:
        """The task of every source under ``seed`` (default: the first of ``seeds``), by source name (two
        sources with one name are refused)."""
        seed = self.seeds[0] if seed is None else seed
        if not isinstance(self.sources, list) or not self.sources or not all(
                isinstance(s, str) and s for s in self.sources):
            raise ParameterError(f"sources={self.sources!r}: give a non-empty list of 'synthetic', "
                                 "'offline', 'linzen' or paths of Linzen-format TSV files")
        synthetic = dict(train_size=self.synthetic_train, test_per_count=self.synthetic_test_per_count,
                         train_max_attractors=self.synthetic_train_max_attractors,
                         max_attractors=self.synthetic_max_attractors, seed=seed)
        corpus = dict(vocab_size=self.vocab_size, test_fraction=self.test_fraction,
                      max_examples=self.max_examples, offline_max_sentences=self.offline_max_sentences,
                      seed=seed)
        return tasks_for(self.sources, synthetic=synthetic, corpus=corpus)

    def train_config(self, seed: int, lr: float | None = None) -> TrainConfig:
        """At most ``epochs`` epochs, the best epoch's weights (lowest ``monitor``) kept; Adam at ``lr``."""
        check_int("epochs", self.epochs, minimum=1, maximum=100_000)
        check_int("patience", self.patience, minimum=0, maximum=100_000)
        check_int("batch_size", self.batch_size, minimum=1, maximum=1_000_000)
        check_float("lr", self.lr, minimum=0.0, maximum=10.0, strict_min=True)
        check_choice("monitor", self.monitor, list(MONITORS))
        patience = None if self.stop() else (self.patience or None)  # with min_epochs: the stop rule's
        return TrainConfig(self.epochs, self.batch_size, self.lr if lr is None else lr, seed,
                           monitor=self.monitor, minimize=True, keep_best=True, patience=patience)

    def stop(self) -> dict[str, Any] | None:
        """The stopping rule when it waits (``min_epochs``, e.g. paper 000's 10 epochs) before ``patience``
        acts (:class:`~urnlib.callbacks.EarlyStop`); ``None``: the loop's own patience (no minimum)."""
        check_int("min_epochs", self.min_epochs, minimum=0, maximum=self.epochs)
        if not (self.min_epochs and self.patience):
            return None
        return {"key": self.monitor, "patience": self.patience, "min_epochs": self.min_epochs}

    @property
    def setting(self) -> str:  # the main setting's name (paper 000's printed lr): "lr 0.01"
        return f"lr {self.lr:g}"

    @property
    def code_setting(self) -> str | None:
        """The name of the second setting (``"lr 0.001"``, the authors' code's rate), every model on every
        source trained at ``code_lr`` too; ``None`` when ``code_lr`` is 0. Its runs are named ``"<label>,
        <code setting> seed <s>"``."""
        check_float("code_lr", self.code_lr, minimum=0.0, maximum=10.0)
        if not self.code_lr:
            return None
        if f"lr {self.code_lr:g}" == self.setting:
            raise ParameterError(f"code_lr={self.code_lr} is the chapter's lr={self.lr}: give another rate "
                                 "for the second setting, or 0 to train only at lr")
        return f"lr {self.code_lr:g}"

    @property
    def turn(self) -> str | None:
        """The k-TURN's label (``"3-TURN"``), or ``None`` when ``models`` has no ``urn``."""
        return MODEL_LABELS["urn"].format(k=self.truncation_k) if "urn" in self.models else None

    def model_specs(self) -> dict[str, dict[str, Any]]:
        """The classifiers, by label: the k-TURN (paper 000 sec. 4) and the LSTM (Linzen et al. 2016)."""
        if not isinstance(self.models, list) or not self.models:
            raise ParameterError(f"models={self.models!r} must be a non-empty list drawn from "
                                 f"{list(MODEL_LABELS)}")
        for kind in self.models:
            check_choice("each of models", kind, list(MODEL_LABELS))
        if len(set(self.models)) != len(self.models):
            raise ParameterError(f"models={self.models!r} names a model twice; give each once")
        n, k = check_int("units", self.units, minimum=2, maximum=4096), self.truncation_k
        check_int("truncation_k", k, minimum=1)
        check_int("lstm_embedding", self.lstm_embedding, minimum=1, maximum=100_000)
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        specs = {}
        for kind in self.models:
            if kind == "urn":
                if n % 2:
                    raise ParameterError(f"units={n}: the k-TURN needs an even number of units (its "
                                         f"rotations act on planes; n={n})")
                if k >= n:
                    raise ParameterError(f"truncation_k={k} with units={n}: a k-TURN needs 1 <= k < n (here "
                                         f"k={k}, n={n}); lower truncation_k or raise units")
                text, given = f"urn {n} k{k}", "units, truncation_k"
                spec = {"kind": "urn", "n": n, "k": k, "dropout": self.dropout, "n_out": 2}
            else:
                text, given = f"lstm {n} e{self.lstm_embedding}", "units, lstm_embedding"
                spec = {"kind": "lstm", "n": n, "embedding_size": self.lstm_embedding,
                        "dropout": self.dropout, "n_out": 2}
            try:
                parse_spec(text)  # the registry's own checks of the model
            except ParameterError as err:
                raise ParameterError(f"the {kind} model made of parameters {given}: {err}") from None
            specs[MODEL_LABELS[kind].format(k=k)] = spec
        return specs

    @property
    def variant(self) -> str | None:
        """The label of the k-TURN with ``small_vocab`` words on real text (``"3-TURN, vocabulary 1000"``),
        or ``None`` when it is not trained."""
        return f"{self.turn}, vocabulary {self.small_vocab}" if self.small_vocab and self.turn else None

    def size_specs(self) -> list[Size]:
        """The entries of ``sizes`` (:func:`.sizes.sizes_of`)."""
        return sizes_of(self.sizes, tasks=self.tasks(), models=list(self.models), seeds=list(self.seeds),
                        rates=(self.lr, self.code_lr))

    def size_runs(self, source: str) -> list[RunSpec]:
        """The size trend's runs on ``source`` (:mod:`.sizes`): the chapter's run (at its entry's rate) on
        another number of training sentences, labelled ``"3-TURN, 2x sentences"``."""
        specs, out = self.model_specs(), []
        for size in (s for s in self.size_specs() if s.source == source):
            for seed in size.seeds:
                task, extra = sized_task(self.tasks(seed)[source], size.share, size.pool)
                for label in (MODEL_LABELS[kind].format(k=self.truncation_k) for kind in size.models):
                    out.append(run_spec(size.label(label), seed, task, specs[label],
                                        self.train_config(seed, size.rate), label=label, stop=self.stop(),
                                        setting=size.words, size=size.share, extra=extra, pool=size.pool,
                                        rate=size.rate))
        return out

    def groups(self) -> list[tuple[str, list[RunSpec]]]:
        """``(source, specs)``: the runs of each source, seed by seed (each seed's data is built once), every
        model and, on real text, the k-TURN with ``small_vocab`` words (a sensitivity check, its own label
        :attr:`variant`)."""
        specs = self.model_specs()
        out = []
        for name in self.tasks():
            runs = []
            for seed in more.seeds_of_source(self.more_seeds, name, list(self.seeds)):
                task, cfg = self.tasks(seed)[name], self.train_config(seed)
                runs += [run_spec(label, seed, task, spec, cfg, label=label, stop=self.stop())
                         for label, spec in specs.items()
                         if more.trains(self.more_seeds, name, label, seed, list(self.seeds))]
                if seed not in self.seeds:  # more_seeds: the main setting's models only
                    continue
                if self.variant and isinstance(task, CorpusTask):
                    small = replace(task, vocab_size=self.small_vocab)
                    runs.append(run_spec(self.variant, seed, small, specs[self.turn], cfg, label=self.turn,
                                         stop=self.stop(),
                                         setting=f"vocabulary {self.small_vocab}"))
                if self.code_setting:
                    code = self.train_config(seed, self.code_lr)
                    runs += [run_spec(f"{label}, {self.code_setting}", seed, task, spec, code, label=label,
                                      stop=self.stop(),
                                      setting=self.code_setting) for label, spec in specs.items()]
            out.append((name, runs + self.size_runs(name)))
        return out

    def plan(self) -> list[RunSpec]:
        """Every run of :meth:`groups`, in order (names repeat across sources: see :func:`run`)."""
        return [spec for _, specs in self.groups() for spec in specs]

    def summary(self) -> str:
        real = [name for name, task in self.tasks().items() if isinstance(task, CorpusTask)]
        variant = (f"; the {self.turn} also with a vocabulary of {self.small_vocab:,} words on "
                   f"{', '.join(real)}" if self.variant and real else "")
        code = f"; every model also at lr {self.code_lr:g}" if self.code_setting else ""
        code += "".join(f"; {', '.join(s.models)} on {s.source} at {s.words} (seeds {list(s.seeds)}"
                        + (f", {s.pool:g} of each test file pooled into training)" if s.pool else ")")
                        for s in self.size_specs())
        plural = "s" if self.patience > 1 else ""
        watched = MONITORS[self.monitor]
        after = f" after epoch {self.min_epochs}" if self.stop() else ""
        stop = (f", stopped{after} once {self.patience} epoch{plural} pass without a lower {watched}"
                if self.patience else "")
        return (f"Built at {self.describe()}: sources {', '.join(self.tasks())}; models "
                f"{', '.join(self.model_specs())}; seeds {list(self.seeds)}; at most {self.epochs} "
                f"epochs{stop}, each run read at its best epoch (lowest {watched}); Adam lr {self.lr}, batch "
                f"{self.batch_size}{code}{variant} ({len(self.plan())} runs).")


def run_spec(name: str, seed: int | None, task: SyntheticTask | CorpusTask, model: dict[str, Any],
             train: TrainConfig, *, label: str, setting: str | None = None,
             stop: dict[str, Any] | None = None, size: float | None = None,
             extra: dict[str, Any] | None = None, pool: float = 0.0, rate: float | None = None) -> RunSpec:
    """One run: ``model`` (a spec of :func:`urnlib.models.build_model`) trained on ``task`` under ``seed``,
    its group ``name`` (coordinates: the model's ``label``, the ``setting`` it differs in, the ``source``),
    stored under ``agreement/<source name>/<key>``; ``stop``: its own stopping rule (:meth:`Config.stop`);
    a size trend's run (:mod:`.sizes`): its ``size`` (share), ``pool`` and ``rate`` (coordinates where
    given) and ``extra`` parameters beyond the task's."""
    params = {"task": asdict(task), "model": model, "train": train.params(),
              **({"stop": stop} if stop else {}), **(extra or {})}
    return RunSpec.of(f"{EXPERIMENT}/{source_name(task)}", name, params,
                      (*COMPONENTS, *DATA_COMPONENTS[source_kind(task)], component_of(model)),
                      train_run, seed=seed, source=source_name(task), model=label,
                      setting=setting, **({"size": size} if size else {}), **({"pool": pool} if pool else {}),
                      **({"rate": rate} if rate else {}))


@dataclass
class AgreementRuns:
    """The chapter's stored runs, grouped over seeds: ``by_source[source][label]`` (the models),
    ``variants[source]`` (the k-TURN with the smaller vocabulary on each real-text source) and
    ``code_lr[source][label]`` (the models at the second setting's learning rate; empty when not trained),
    each a :class:`~urnlib.seeds.Seeds`."""

    by_source: dict[str, dict[str, Seeds]]
    variants: dict[str, Seeds]
    code_lr: dict[str, dict[str, Seeds]] = field(default_factory=dict)
    sizes: dict[str, dict[str, Seeds]] = field(default_factory=dict)  # source -> the size trend's groups

    def listed(self) -> list[tuple[str, Run]]:
        """``(source, run)`` of every run, variants and the second setting last (their source says their
        vocabulary or learning rate)."""
        out = [(source, run) for source, runs in self.by_source.items() for seeds in runs.values()
               for run in seeds]
        out += [(f"{source}, vocabulary {run.params['task']['vocab_size']:,}", run)
                for source, seeds in self.variants.items() for run in seeds]
        out += [(f"{source}, lr {run.params['train']['lr']:g}", run)
                for source, runs in self.code_lr.items() for seeds in runs.values() for run in seeds]
        return out + [(f"{source}, {run.coords.get('setting')}", run)
                      for source, runs in self.sizes.items() for seeds in runs.values() for run in seeds]

    def views(self, config: Config) -> dict[str, dict[str, dict[str, Seeds]]]:
        """``{setting: {source: {label: Seeds}}}``: the main setting, then the second where it was trained."""
        out = {config.setting: self.by_source}
        if config.code_setting and self.code_lr:
            out[config.code_setting] = self.code_lr
        return out


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> AgreementRuns:
    """The stored run of every planned classifier (trained first where ``mode`` asks for it), grouped by
    source and label over the seeds.

    Args:
        config: the chapter's parameters.
        store: the run store (default: ``config.store``, relative to ``notebooks/``).
        mode: ``load``, ``train`` or ``retrain`` (default: ``config.mode``); see :mod:`urnlib.runner`.
    """
    by_source, variants, code_lr, sizes = {}, {}, {}, {}
    for source, specs in config.groups():  # one plan per source: names repeat across sources
        sized, grouped = split_sizes(by_label(run_config(config, specs, store=store, mode=mode)))
        if sized:
            sizes[source] = sized
        if config.variant in grouped:
            variants[source] = grouped.pop(config.variant)
        if config.code_setting:
            code_lr[source], grouped = split_setting(grouped, config.code_setting)
        by_source[source] = grouped
    return AgreementRuns(by_source, variants, code_lr, sizes)
