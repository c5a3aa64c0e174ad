"""The TPRU chapter (paper 002): one config for its three parts, the plan of its runs, and the runs.

* logical entailment with TPRU, GRU and LSTM encoders in a siamese classifier (Table 2, Figs. 1 and 2): data,
  encoders and the training of one run in :mod:`urnlib.chapters.tpru.entailment`;
* TPRU against LSTM language models on Brown (``lm_sizes``: again at other dimensions, a size trend), and
  the role/POS PMI (stand-ins for Tables 4 and 5): :mod:`urnlib.chapters.tpru.lm`;
* the gradient analysis of sec. 4 and Table 1's counts, measured without training: :mod:`.checks`; how many
  directions the trained encoders' sentence vectors use (why encoders stay at chance): :mod:`.features`;
* the entailment runs scored on Evans et al.'s released files (Table 2), from a committed cache:
  :mod:`urnlib.chapters.tpru.released`;
* the scaled group, extra entailment runs on a larger training set (parameter ``scaled``):
  :mod:`urnlib.chapters.tpru.scaled`.

The chapter's protocol, callable without a notebook::

    from urnlib.chapters.tpru import experiment as tpru
    results = tpru.run(tpru.Config.paper())   # the stored runs and the checks; never trains
    results.entailment["TPRU 64 N=64"]        # Seeds: the runs of one encoder, one per initialisation seed

:class:`Config` holds the parameters of ``notebooks/params/tpru.<scale>.yaml`` and checks all of them before
any work (:meth:`Config.validate`, with an estimate of the memory a configuration needs); :meth:`Config.plan`
expands them to one :class:`~urnlib.results.RunSpec` per encoder and seed and per language model and seed,
each named ``"<label> seed <s>"`` (coordinates ``model`` and ``seed``: :meth:`urnlib.records.RunSpec.of`).

The recipe (issue 16): every run is trained until its validation measure stops improving. Entailment runs
watch the validation accuracy (``TrainConfig(monitor="valid_acc", minimize=False, keep_best=True,
patience=patience)``, ``epochs`` the cap, gradients clipped at ``clip``), language models the validation
perplexity (``lm_patience``, ``lm_epochs`` the cap, ``lm_clip``); both end with the weights of their best
epoch, so the final metrics are the best epoch's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from urnlib.chapters.tpru import ablation as tpru_ablation
from urnlib.chapters.tpru import checks as tpru_checks
from urnlib.chapters.tpru import features as tpru_features
from urnlib.chapters.tpru import lr as tpru_lr
from urnlib.chapters.tpru import memory as tpru_memory
from urnlib.chapters.tpru import released as tpru_released
from urnlib.chapters.tpru import entailment as ent
from urnlib.chapters.tpru import lm
from urnlib.chapters.tpru import scaled as tpru_scaled
from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.lr_choice import RateChoice
from urnlib.languages.logic import PROFILES
from urnlib.models.tpru_stack import STACK_KINDS
from urnlib.params import ParameterError, check_list, check_bool, check_choice, check_float, check_int
from urnlib.results import Run, RunSpec
from urnlib.seeds import Seeds, check_seeds
from urnlib.tasks.brown_lm import BrownTask
from urnlib.train import TrainConfig

__all__ = ["Config", "TpruRuns", "run"]
VALIDATION_MONITORS = ("valid_acc", "valid_ppl")  #: what runs select on: validation accuracy, perplexity


def _rate(name: str, value: Any) -> None:
    check_float(name, value, minimum=0.0)
    if value >= 1:
        raise ParameterError(f"{name}={value} must be < 1")


def _optional(name: str, value: Any, check) -> None:  # None (off) or a value check accepts
    if value is not None:
        check(name, value)


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/tpru.<scale>.yaml`` says where each value comes from)."""

    CHAPTER = "tpru"

    seed: int
    seeds: list
    split_profile: str
    train_size: int
    valid_size: int
    test_size: int
    models: list
    layers: int
    embedding_size: int
    hidden: int
    dropout: float
    permute: bool
    epochs: int
    patience: int | None
    min_epochs: int
    clip: float | None
    batch_size: int
    lr: float
    lr_choices: list | None  # candidate rates of every encoder (None: lr alone): :meth:`lr_plan`
    lm_seeds: list
    lm_models: list
    lm_train_tokens: int
    lm_valid_tokens: int
    lm_test_tokens: int
    lm_min_count: int
    lm_lower: bool
    lm_max_sentences: int
    lm_window: int
    lm_warmup: int
    lm_d: int
    lm_layers: int
    lm_roles: int
    lm_slices: int
    lm_dropout: float
    lm_tie_weights: bool
    lm_epochs: int
    lm_patience: int | None
    lm_clip: float | None
    lm_batch_size: int
    lm_lr: float
    pmi_min_joint: int
    check_trials: int
    ablations: list  # the ablation of the few-role TPRUs (issue 33; not in the paper): :meth:`ablation_plan`
    scaled: dict | None  # extra runs on a larger training set (None, {}: none): :meth:`scaled_plan`
    lm_sizes: list = field(default_factory=list)  # the language models again at other dimensions

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Every parameter, named as the user passed it, then the memory estimate and (when runs may be
        trained) the Brown corpus; raises :class:`~urnlib.params.ParameterError` (or, for the corpus,
        :class:`~urnlib.errors.DataError`) before any work."""
        check_int("seed", self.seed, minimum=0)
        check_choice("split_profile", self.split_profile, list(PROFILES))
        check_seeds(self.seeds, "seeds")
        check_seeds(self.lm_seeds, "lm_seeds")
        for name in ("train_size", "valid_size", "test_size"):
            ent.check_pairs(name, getattr(self, name))
        self.encoders()
        check_int("layers", self.layers, minimum=1)
        check_int("embedding_size", self.embedding_size, minimum=1)
        check_int("hidden", self.hidden, minimum=1)
        _rate("dropout", self.dropout)
        check_bool("permute", self.permute)
        check_int("epochs", self.epochs, minimum=1)
        _optional("patience", self.patience, lambda n, v: check_int(n, v, minimum=1))
        check_int("min_epochs", self.min_epochs, minimum=0)
        if self.min_epochs > self.epochs:
            raise ParameterError(f"min_epochs={self.min_epochs} is more than epochs={self.epochs} (the cap): "
                                 "lower min_epochs with epochs")
        _optional("clip", self.clip, lambda n, v: check_float(n, v, minimum=0.0, strict_min=True))
        check_int("batch_size", self.batch_size, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        tpru_lr.check(self.lr_choices, self.lr)
        check_list("lm_models", self.lm_models, example=f"{list(STACK_KINDS)}",
                   each=lambda name, kind: check_choice(name, kind, list(STACK_KINDS)))
        lm.check_brown_split(self)
        for name in ("lm_d", "lm_layers", "lm_roles", "lm_slices"):
            check_int(name, getattr(self, name), minimum=1)
        if self.lm_d % self.lm_slices:
            raise ParameterError(f"lm_slices={self.lm_slices} must divide lm_d={self.lm_d} (appendix E "
                                 "splits the binding complex into equal slices)")
        _rate("lm_dropout", self.lm_dropout)
        check_bool("lm_tie_weights", self.lm_tie_weights)
        check_int("lm_epochs", self.lm_epochs, minimum=1)
        _optional("lm_patience", self.lm_patience, lambda n, v: check_int(n, v, minimum=1))
        _optional("lm_clip", self.lm_clip, lambda n, v: check_float(n, v, minimum=0.0, strict_min=True))
        check_int("lm_batch_size", self.lm_batch_size, minimum=1)
        check_float("lm_lr", self.lm_lr, minimum=0.0, strict_min=True)
        lm.check_sizes(self.lm_sizes, self.lm_d, self.lm_slices)
        check_int("pmi_min_joint", self.pmi_min_joint, minimum=1)
        check_int("check_trials", self.check_trials, minimum=1, maximum=10_000)
        self.ablation_specs()
        if self.scaled_group():  # and none of its runs is one of the chapter's under another name
            self.plan()
        if self.mode != "load":  # the book only loads stored runs: it does not read the corpus
            lm.check_brown_corpus(self)

    # ------------------------------------------------------------------ resources
    def memory_estimate(self) -> dict[str, tuple[float, str]]:
        """Bytes of the largest things the chapter's runs hold (:mod:`urnlib.chapters.tpru.memory`)."""
        return tpru_memory.memory_estimate(self)

    def encoders(self) -> dict[str, dict[str, Any]]:
        """``{label: encoder spec}`` of ``models``, each read by the registry's grammar."""
        if not isinstance(self.models, (list, tuple)) or not self.models:
            raise ParameterError(f"models={self.models!r} must be a non-empty list of encoders, each written "
                                 f"{ent.ENCODER_FORMS}")
        out: dict[str, dict[str, Any]] = {}
        for text in self.models:
            try:
                spec = ent.encoder_spec(text)
            except ParameterError as err:
                raise ParameterError(f"models contains {text!r}: {err}") from None
            label = ent.model_label(spec)
            if label in out:
                raise ParameterError(f"models lists {label!r} twice ({list(self.models)!r}); every run needs "
                                     "its own")
            out[label] = spec
        return out

    def ablation_specs(self) -> dict[str, tpru_ablation.Setting]:
        """``{label: Setting}`` (encoder spec, seeds, min_epochs or None, training changes) of ``ablations``
        (:func:`urnlib.chapters.tpru.ablation.ablation_specs`)."""
        return tpru_ablation.ablation_specs(self.ablations, seeds=self.seeds, min_epochs=self.min_epochs,
                                            epochs=self.epochs, train=self.train_config(0),
                                            layers=self.layers)

    def scaled_group(self) -> tpru_scaled.Scaled | None:
        """The group of ``scaled``, its defaults the chapter's (``None``: no group)."""
        return tpru_scaled.scaled_group(self.scaled, self)

    def task(self) -> ent.EntailmentTask:
        n = self.test_size
        return ent.EntailmentTask(self.train_size, self.valid_size, n, n, n, n, self.seed, self.split_profile)

    def architecture(self) -> ent.Architecture:
        return ent.Architecture(self.layers, self.embedding_size, self.hidden, self.dropout, self.permute)

    def train_config(self, seed: int) -> TrainConfig:
        """The entailment runs' optimisation (``seed``: the run's initialisation seed): Adam, gradients
        clipped at ``clip``, at most ``epochs`` epochs, ending with the weights of the epoch of the best
        validation accuracy; when to stop early is :meth:`stop`'s."""
        return TrainConfig(self.epochs, self.batch_size, self.lr, seed, clip=self.clip, monitor="valid_acc",
                           minimize=False, keep_best=True)

    def stop(self) -> dict[str, Any] | None:
        """The entailment runs' stopping rule (:class:`~urnlib.callbacks.EarlyStop`): after ``patience``
        epochs without a better validation accuracy, never before ``min_epochs`` (``None``: train
        ``epochs``)."""
        if not self.patience:
            return None
        return {"key": "valid_acc", "patience": self.patience, "min_epochs": self.min_epochs,
                "minimize": False}

    def lm_task(self) -> BrownTask:
        return BrownTask(train_tokens=self.lm_train_tokens, valid_tokens=self.lm_valid_tokens,
                         test_tokens=self.lm_test_tokens, min_count=self.lm_min_count, lower=self.lm_lower,
                         max_sentences=self.lm_max_sentences, window=self.lm_window, warmup=self.lm_warmup)

    def lm_setup(self) -> lm.LMSetup:
        return lm.LMSetup(self.lm_d, self.lm_layers, self.lm_roles, self.lm_slices, self.lm_dropout,
                          self.lm_tie_weights)

    def lm_train_config(self, seed: int) -> TrainConfig:
        """The language models keep the weights of their best epoch by validation perplexity (paper 002
        C.3), stopped after ``lm_patience`` epochs without a better one, at most ``lm_epochs``; ``seed``
        initialises the model and orders the rows."""
        return TrainConfig(self.lm_epochs, self.lm_batch_size, self.lm_lr, seed, clip=self.lm_clip,
                           monitor="valid_ppl", keep_best=True, patience=self.lm_patience)

    def _entailment_spec(self, label: str, spec: dict[str, Any], seed: int,
                         setting: tpru_ablation.Setting | None = None,
                         scaled: tpru_scaled.Scaled | None = None) -> RunSpec:
        stop, train, task, arch = self.stop(), self.train_config(seed), self.task(), self.architecture()
        if setting is not None:  # an ablation entry: its training, layers and epochs before stopping
            train = setting.train_config(train)
            if setting.layers is not None:
                arch = replace(arch, layers=setting.layers)
            if setting.min_epochs is not None and stop is not None:
                stop = {**stop, "min_epochs": setting.min_epochs}
        if scaled is not None:  # the scaled group: its training set, split ranges, epochs and stopping
            task, train, stop = scaled.task(task), scaled.train_config(train), scaled.stop(stop)
        return RunSpec.of(ent.EXPERIMENT, label,
                          {"task": task.params(), "architecture": asdict(arch),
                           "model": spec, "train": train.params(), "stop": stop},
                          ent.COMPONENTS, ent.train_run, seed=seed, model=label)

    def entailment_plan(self) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed of seeds]}`` of the entailment runs at the chapter's ``lr``."""
        return {label: rates[self.lr] for label, rates in self.lr_plan().items()}

    def lr_plan(self) -> dict[str, dict[float, list[RunSpec]]]:
        """``{label: {rate: [one RunSpec per seed of seeds]}}`` of the entailment runs at every candidate rate
        of ``lr_choices``, ``lr`` first (:mod:`urnlib.chapters.tpru.lr`)."""
        return tpru_lr.plan(self.encoders(), self.lr_choices, self.lr, list(self.seeds),
                            self._entailment_spec)

    def ablation_plan(self) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed]}`` of ``ablations``, trained as the main encoders but for what an
        entry changes; an entry at the original setting names the main runs of its model for the seeds they
        share."""
        return {label: [self._entailment_spec(label, setting.spec, seed, setting) for seed in setting.seeds]
                for label, setting in self.ablation_specs().items()}

    def scaled_plan(self) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed]}`` of the scaled group (``{}``: none), as the main encoders'."""
        group = self.scaled_group()
        return {} if group is None else group.plan(self._entailment_spec)

    def lm_plan(self, setup: lm.LMSetup | None = None) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed of lm_seeds]}`` of the language models of ``lm_models`` (``setup``:
        another than the chapter's, :meth:`lm_size_plan`)."""
        task, setup = asdict(self.lm_task()), setup or self.lm_setup()
        return {lm.lm_label(kind, setup): [
            RunSpec.of(lm.EXPERIMENT, lm.lm_label(kind, setup),
                       {"task": task, "setup": asdict(setup), "kind": kind,
                        "train": self.lm_train_config(seed).params(), "pmi_min_joint": self.pmi_min_joint},
                       lm.COMPONENTS, lm.train_run, seed=seed, model=lm.lm_label(kind, setup))
            for seed in self.lm_seeds]
            for kind in self.lm_models}

    def lm_size_plan(self) -> dict[int, dict[str, list[RunSpec]]]:
        """``{d: lm_plan}`` of each dimension of ``lm_sizes``: the language models trained again at that
        dimension, the TPRU's roles scaled with it (:func:`urnlib.chapters.tpru.lm.resized`)."""
        return {d: self.lm_plan(lm.resized(self.lm_setup(), d)) for d in self.lm_sizes}

    def plan(self) -> list[RunSpec]:
        """Every run: each entailment encoder of ``models`` once per seed of ``seeds``, each language model
        of ``lm_models`` once per seed of ``lm_seeds``, then the ablation's runs that are not main runs
        already, then the encoders' runs at the other rates of ``lr_choices``, then the scaled group's."""
        other_rates = [specs for rates in self.lr_plan().values()
                       for lr, specs in rates.items() if lr != self.lr]
        sized = [specs for group in self.lm_size_plan().values() for specs in group.values()]
        groups = [*self.entailment_plan().values(), *self.lm_plan().values(), *sized,
                  *self.ablation_plan().values(), *other_rates]
        out: dict[str, RunSpec] = {}
        for spec in (s for specs in groups for s in specs):
            if spec.name in out and out[spec.name].key != spec.key:
                raise ParameterError(f"two different runs are named {spec.name!r}: rename an ablation entry")
            out.setdefault(spec.name, spec)
        return tpru_scaled.merge(list(out.values()), self.scaled_plan())

    def summary(self) -> str:
        def until(cap: int, patience: int | None, what: str, least: int = 0) -> str:
            stop = f", stopped after {patience} without a better {what}" if patience else ""
            stop += f" but never before {least}" if patience and least else ""
            return f"at most {cap} epochs{stop}"

        return (f"Built at {self.describe()}: entailment encoders {', '.join(self.encoders())} "
                f"(initialisation seeds {list(self.seeds)}), {self.train_size:,} training pairs, "
                f"{until(self.epochs, self.patience, 'validation accuracy', self.min_epochs)}; language "
                "models "
                f"{', '.join(self.lm_plan())} (seeds {list(self.lm_seeds)}) on {self.lm_train_tokens:,} "
                f"Brown tokens, {until(self.lm_epochs, self.lm_patience, 'validation perplexity')}; gradient "
                f"checks on {self.check_trials} random steps per setting"
                + tpru_scaled.summary(self.scaled_group()) + f" ({len(self.plan())} runs).")


@dataclass
class TpruRuns:
    """What the chapter shows: the stored runs and the checks computed without training.

    Iterating over it gives every stored run (so ``display(*provenance(results))`` lists them all).
    """

    entailment: dict[str, Seeds]  # encoder label -> its runs at its chosen rate, one per seed of seeds
    own: dict[str, Seeds]  # encoder label -> its runs at the chapter's lr (the ablation's original setting)
    lr_choice: list[RateChoice]  # per encoder, its runs at every rate of lr_choices and the rate chosen
    lm: dict[str, Seeds]  # language-model label -> its runs, one per seed of lm_seeds
    gradient: list[dict[str, Any]]  # rows of urnlib.chapters.tpru.checks.gradient_checks
    table1: list[dict[str, Any]]  # rows of urnlib.chapters.tpru.checks.table1_check
    features: list[dict[str, Any]]  # rows of urnlib.chapters.tpru.features.feature_spread
    released: tpru_released.Released  # the entailment runs on Evans et al.'s released files (Table 2)
    ablations: dict[str, Seeds]  # ablation label -> its runs (:meth:`Config.ablation_plan`)
    roles: list[dict[str, Any]]  # rows of tpru_features.filler_use: the ablated encoders' use of their roles
    scaled: dict[str, Seeds]  # the scaled group: label -> its runs (:meth:`Config.scaled_plan`; {}: none)
    lm_sizes: dict[int, dict[str, Seeds]] = field(default_factory=dict)  # d -> the language models at it

    def __iter__(self) -> Iterator[Run]:
        seen: set[str] = set()
        at_rates = [seeds for c in self.lr_choice for seeds in c.runs.values() if seeds]
        sized = [seeds for group in self.lm_sizes.values() for seeds in group.values()]
        for runs in [*self.entailment.values(), *at_rates, *self.lm.values(), *sized,
                     *self.ablations.values(), *self.scaled.values()]:
            for r in runs:
                if r.name not in seen:  # an ablation and the rate choice share main runs
                    seen.add(r.name)
                    yield r


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> TpruRuns:
    """The stored runs of every planned model (trained first where ``mode`` asks for it) and the checks.

    Args:
        config: the chapter's parameters.
        store: the run store (default: ``config.store``, relative to ``notebooks/``).
        mode: ``load``, ``train`` or ``retrain`` (default: ``config.mode``); see :mod:`urnlib.runner`.
    """
    groups, lm_groups, ablations = config.entailment_plan(), config.lm_plan(), config.ablation_plan()
    runs = run_config(config, config.plan(), store=store, mode=mode)

    def seeds(label: str, specs: list[RunSpec]) -> Seeds:
        return Seeds(label, [runs[s.name] for s in specs], [s.params["train"]["seed"] for s in specs])
    own = {label: seeds(label, group) for label, group in groups.items()}
    choice = tpru_lr.choices(config.lr_plan(), runs, config.lr, len(config.seeds))
    entailment = {c.label: c.picked for c in choice}
    scaled = {label: seeds(label, group) for label, group in config.scaled_plan().items()}
    root = store or config.store_path()  # Table 2 on the released files, from the cache beside the runs
    command = tpru_released.fill_command(config.scale, root if store or "store" in config.overrides else None)
    released = tpru_released.released_results({**entailment, **scaled}, root, mode or config.mode, command)
    ablated = {label: seeds(label, group) for label, group in ablations.items()}
    encoders = {ent.model_label(config.ablation_specs()[label].spec) for label in ablated}
    # how the ablated encoders use their roles: the main runs at the chapter's rate and every ablation setting
    measured = {**{k: v for k, v in own.items() if k in encoders}, **ablated}
    return TpruRuns(entailment=entailment, own=own, lr_choice=choice,
                    lm={label: seeds(label, group) for label, group in lm_groups.items()},
                    gradient=tpru_checks.gradient_checks(trials=config.check_trials, seed=config.seed),
                    table1=tpru_checks.table1_check(),
                    features=tpru_features.feature_spread(entailment, seed=config.seed), released=released,
                    ablations=ablated, roles=tpru_features.filler_use(measured, seed=config.seed),
                    scaled=scaled, lm_sizes={d: {label: seeds(label, group) for label, group in plan.items()}
                                             for d, plan in config.lm_size_plan().items()})
