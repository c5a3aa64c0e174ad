"""The Dyck experiment (paper 000 sec. 5 / Fig. 3; paper 001 sec. 4 / Fig. 3, Table 2).

Train next-symbol language models on Dyck strings of depth <= ``train_max_depth``, test them on
unconstrained (deeper) strings, and score only the closing brackets, by number of attractors.

The chapter's protocol, callable without a notebook::

    from urnlib.chapters.dyck import experiment as dyck
    runs = dyck.run(dyck.Config.paper())   # the stored runs, by label; never trains

:class:`Config` holds the parameters of ``notebooks/params/dyck.<scale>.yaml``; :meth:`Config.plan` expands
them to one :class:`~urnlib.results.RunSpec` per model, setting and seed: paper 000's k-TURN, Full URN and
arbitrary-embedding RNN, paper 001's comparison (each kind of ``models_001`` at each size of ``units_001``)
and, with ``variants``, the k-TURN changed in one way (:data:`VARIANTS`, not in the papers: without state
dropout; with one parameter-dropout mask shared by every symbol), under each training setting
(``settings``: the papers' printed learning rate, the authors' code's, the authors' generator) and each seed
of ``seeds``. :meth:`Config.view` gives one setting's runs as ``{model: Seeds}``. :func:`train_run` trains
one run (a module-level function, so that any worker process can run it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.experiments.training import train_token_model
from urnlib.languages import dyck
from urnlib.models.registry import component_of, parse_spec
from urnlib.models.recurrent import AUTHORS_CELL, AUTHORS_LSTM
from urnlib.models.registry import label as model_label
from urnlib.params import ParameterError, check_choice, check_float, check_int, check_list
from urnlib.results import Run, RunSpec, Trained
from urnlib.seeds import Seeds, by_label, check_seeds, split_setting
from urnlib.tasks.dyck import VOCAB_SIZE, DyckTask, evaluate_closing, make_data
from urnlib.train import TrainConfig

#: DyckTask, make_data and evaluate_closing are urnlib.tasks.dyck's, named here for the notebook and the tests
__all__ = ["Config", "Setting", "DyckTask", "make_data", "evaluate_closing", "train_run", "run",
           "rebuild_model", "EXPERIMENT", "COMPARISON_KINDS", "VARIANTS"]

EXPERIMENT = "dyck"
#: the epoch metrics this chapter's runs may select on (early stopping, kept weights): none: the runs train
#: the papers' 100 epochs, no selection
VALIDATION_MONITORS = ()
COMPONENTS = ("train.loop", "data.dyck", "experiment.dyck")
#: model kinds of the paper 001 comparison, in the notebook's order (their runs' labels are the registry's)
COMPARISON_KINDS = ("urn", "lstm", "arbitrary")
MAX_UNITS = 4096
#: the k-TURN's variants (ours, not in the papers): each name, and what it changes in the k-TURN's spec
VARIANTS = {
    "no state dropout": {"state_dropout": False},  # dropout on parameters and output only
    # one parameter-dropout mask per batch shared by every symbol (the book's: one per symbol), so that a
    # matched pair whose generators are exact negatives stays an exact inverse under dropout, as under the
    # authors' mask (one per sequence, shared by its symbols: orn_lm.py) -- Table 4's pair effects
    "shared parameter mask": {"param_mask": "shared"},
    # the authors' mask itself: one per sequence, shared by its symbols (each sequence its own V matrices; a
    # training batch costs about 11 times the book's on the CPU)
    "sequence parameter mask": {"param_mask": "sequence"},
}


#: the model families a setting trains: every model, or paper 000's three
SETTING_MODELS = ("all", "000")


@dataclass(frozen=True)
class Setting:
    """One training setting of the chapter: a learning rate and a data generator, applied to every model
    (``models: all``) or to paper 000's three (``models: "000"``); ``more_seeds``: ``{model label: [seed,
    ...]}``, seeds some models of this setting train on beside the chapter's ``seeds`` (where a claim needs
    more seeds to be decided than the whole chapter has); ``variants``: the k-TURN's variants this setting
    trains (names of :data:`VARIANTS`; ``None``: the chapter's ``variants``); ``authors_lstm``: sizes of
    paper 001's LSTM this setting also trains as the authors' code builds it (``AUTHORS_LSTM``: dropout 0.10
    with an output mask of its own, orthogonal recurrent weights), labelled e.g. ``"LSTM 8, the authors'
    cell"``."""

    name: str
    lr: float
    generator: str
    models: str = "all"
    more_seeds: dict | None = None
    variants: list | None = None
    authors_lstm: list | None = None

    def __post_init__(self):
        where = f"settings[{self.name!r}]"
        if not self.name or not isinstance(self.name, str):
            raise ParameterError(f"settings: {self.name!r} is not a usable setting name (a non-empty text)")
        check_float(f"{where}.lr", self.lr, minimum=0.0, strict_min=True)
        check_choice(f"{where}.generator", self.generator, list(dyck.GENERATORS))
        check_choice(f"{where}.models", self.models, list(SETTING_MODELS))
        if self.more_seeds is not None:
            if not isinstance(self.more_seeds, dict) or not self.more_seeds:
                raise ParameterError(f"{where}.more_seeds={self.more_seeds!r} must be a non-empty mapping of "
                                     "model label to seeds, e.g. {'3-TURN': [3, 4]}")
            for label, seeds in self.more_seeds.items():
                check_seeds(seeds, name=f"{where}.more_seeds[{label!r}]")
        if self.authors_lstm is not None:
            check_list(f"{where}.authors_lstm", self.authors_lstm, example="[8, 16, 32]",
                       each=lambda name, n: check_int(name, n, minimum=1, maximum=MAX_UNITS))


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/dyck.<scale>.yaml`` says where each value comes from).

    Args:
        seeds: the seeds of every model; one seed fixes a run's data, initialisation, data order and dropout
            masks.
        n_pairs, train_size, test_size, train_max_depth: the data (:class:`DyckTask`).
        settings: ``{name: {lr, generator, models}}``: every model (``models: all``) or paper 000's three
            (``models: "000"``) is trained under each setting (Adam's learning rate, the string generator).
        epochs, batch_size: training.
        dropout: dropout rate of every model.
        units_000, truncation_k: size of paper 000's models, and the k of its k-TURN.
        units_001, models_001: sizes and kinds (``urn``, ``lstm``, ``arbitrary``) of paper 001's comparison.
        lstm_embedding: the LSTM's embedding size.
        variants: also the k-TURN changed as each named variant of :data:`VARIANTS` says, in every setting
            of all models (``True``: ``["no state dropout"]``; ``False`` or ``[]``: none).
        min_bucket: attractor counts with fewer scored test predictions (on any seed) are left out of the
            claims.
    """

    CHAPTER = "dyck"

    seeds: list
    n_pairs: int
    train_size: int
    test_size: int
    train_max_depth: int
    settings: dict
    epochs: int
    batch_size: int
    dropout: float
    units_000: int
    truncation_k: int
    units_001: list
    models_001: list
    lstm_embedding: int
    variants: bool | list
    min_bucket: int

    def validate(self) -> None:
        check_seeds(self.seeds)
        self.settings_()
        for seed in self.seeds:
            for setting in self.settings_().values():
                self.task(setting, seed)
        check_int("epochs", self.epochs, minimum=1, maximum=100_000)
        check_int("batch_size", self.batch_size, minimum=1, maximum=1_000_000)
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        check_int("units_000", self.units_000, minimum=2, maximum=MAX_UNITS)
        check_int("truncation_k", self.truncation_k, minimum=1)
        check_int("lstm_embedding", self.lstm_embedding, minimum=1, maximum=MAX_UNITS)
        self.variant_names()
        check_int("min_bucket", self.min_bucket, minimum=1)
        check_list("units_001", self.units_001, example="[8, 16, 32]",
                   each=lambda name, n: check_int(name, n, minimum=1, maximum=MAX_UNITS))
        check_list("models_001", self.models_001, example=f"{list(COMPARISON_KINDS)}",
                   each=lambda name, kind: check_choice(name, kind, list(COMPARISON_KINDS)))
        if self.variant_names() and self.dropout == 0:
            raise ParameterError(f"dropout=0 with variants={self.variants!r}: every variant changes the "
                                 f"{self.turn}'s dropout, so each would repeat it; set variants=False")
        self.models()  # every model spec through the registry's grammar and checks
        for setting in self.settings_().values():
            if setting.authors_lstm and setting.models != "all":
                raise ParameterError(f"settings[{setting.name!r}].authors_lstm: the setting trains paper "
                                     "000's models only (models: \"000\"), no LSTM; set models: all, or "
                                     "drop it")
            self.models(setting)
        self._check_more_seeds()

    # ------------------------------------------------------------------ what is run
    def settings_(self) -> dict[str, Setting]:
        """The settings, checked: ``{name: Setting}``."""
        example = "{'lr 0.01': {'lr': 0.01, 'generator': 'walk', 'models': 'all'}}"
        if not isinstance(self.settings, dict) or not self.settings:
            raise ParameterError(f"settings={self.settings!r} must be a non-empty mapping, e.g. {example}")
        out = {}
        for name, values in self.settings.items():
            if not isinstance(values, dict) or not {"lr", "generator"} <= set(values) \
                    or set(values) - {"lr", "generator", "models", "more_seeds", "variants", "authors_lstm"}:
                raise ParameterError(f"settings[{name!r}]={values!r} must give lr, generator and optionally "
                                     f"models, more_seeds, variants and authors_lstm, e.g. {example}")
            out[name] = Setting(name, **values)
        return out

    def seeds_of(self, setting: Setting, label: str) -> list[int]:
        """The seeds ``label`` trains on under ``setting``: ``seeds``, then the setting's ``more_seeds``."""
        return [*self.seeds, *(setting.more_seeds or {}).get(label, [])]

    def _check_more_seeds(self) -> None:
        """Each setting's ``more_seeds``: where the reader passed ``settings``, a model it names must be
        trained in the setting (a typo stops here); the preset's own ``more_seeds`` may name a model that
        another change (``truncation_k``, ``units_001``, ``variants``...) removed: that entry is left out, and
        :meth:`summary` says so (the plan tests pin the preset's runs, so a typo there fails them)."""
        for setting in self.settings_().values():
            labels = list(self.models(setting))
            for label, seeds in (setting.more_seeds or {}).items():
                where = f"settings[{setting.name!r}].more_seeds[{label!r}]"
                if label not in labels:
                    if "settings" not in self.overrides:
                        continue  # the preset's extra seeds for a model the reader's overrides removed
                    raise ParameterError(f"{where}: no model {label!r} in this setting; its models are "
                                         f"{labels}")
                twice = sorted(set(seeds) & set(self.seeds))
                if twice:
                    raise ParameterError(f"{where}={seeds} repeats seeds of `seeds` ({twice}): list only the "
                                         "seeds beside them")
                for seed in seeds:
                    self.task(setting, seed)

    def task(self, setting: Setting, seed: int) -> DyckTask:
        return DyckTask(self.n_pairs, self.train_size, self.test_size, self.train_max_depth,
                        setting.generator, seed)

    def train_config(self, setting: Setting, seed: int) -> TrainConfig:
        return TrainConfig(self.epochs, self.batch_size, setting.lr, seed)

    @property
    def turn(self) -> str:
        """The label of paper 000's truncated model, e.g. ``"3-TURN"``."""
        return model_label({"kind": "urn", "k": self.truncation_k}, sized=False)

    def paper000_labels(self) -> list[str]:
        """The models of paper 000 Fig. 3."""
        return [self.turn, "Full URN", "Arbitrary"]

    def comparison_labels(self) -> list[str]:
        """The models of paper 001 Fig. 3, family by family (the notebook's order: URNs, LSTMs, arbitrary)."""
        return [model_label({"kind": kind, "n": n}) for kind in COMPARISON_KINDS if kind in self.models_001
                for n in self.units_001]

    def variant_names(self, setting: Setting | None = None) -> list[str]:
        """The variants ``setting`` trains (its own ``variants``, else the chapter's; none in any setting
        where the chapter's ``variants`` is False or empty), checked (:data:`VARIANTS`); without ``setting``,
        those any setting of all models trains."""
        if setting is None:
            every = [self.variant_names(s) for s in self.settings_().values() if s.models == "all"]
            return list(dict.fromkeys(name for names in every for name in names))
        if self.variants is False or self.variants == []:
            return []  # the chapter's switch: no variant in any setting
        given, where = ((setting.variants, f"settings[{setting.name!r}].variants")
                        if setting.variants is not None else (self.variants, "variants"))
        if isinstance(given, bool):
            return ["no state dropout"] if given else []
        check_list(where, given, example=f"{list(VARIANTS)}",
                   each=lambda name, v: check_choice(name, v, list(VARIANTS)))
        return list(dict.fromkeys(given))

    def variant_labels(self, setting: Setting | None = None) -> list[str]:
        """The k-TURN variants' labels, e.g. ``"3-TURN, no state dropout"``, of ``setting`` (or of any)."""
        return [f"{self.turn}, {name}" for name in self.variant_names(setting)]

    def models(self, setting: Setting | None = None) -> dict[str, dict[str, Any]]:
        """``{label: model spec}`` of the models ``setting`` trains (default: every model), each spec read by
        the model registry."""
        n, k = self.units_000, self.truncation_k
        out = {self.turn: self._spec(f"urn {n} k{k}", f"units_000={n}, truncation_k={k}"),
               "Full URN": self._spec(f"urn {n}", f"units_000={n}"),
               "Arbitrary": self._spec(f"arbitrary {n}", f"units_000={n}")}
        if setting is not None and setting.models == "000":
            return out
        for n in self.units_001:
            for kind in self.models_001:
                text = f"lstm {n} e{self.lstm_embedding}" if kind == "lstm" else f"{kind} {n}"
                spec = self._spec(text, f"units_001 contains {n}")
                out[model_label(spec)] = spec
        for name, label in zip(self.variant_names(setting), self.variant_labels(setting)):
            out[label] = {**out[self.turn], **VARIANTS[name]}
        for n in self._authors_sizes(setting):
            if f"LSTM {n}" not in out and (setting is None or "settings" not in self.overrides):
                continue  # the preset's sizes for an LSTM the reader's overrides removed (a typo in the
                # preset fails the plan tests); sizes the reader passes in `settings` are checked here
            if f"LSTM {n}" not in out:
                raise ParameterError(f"settings[{setting.name!r}].authors_lstm names {n} units, but the "
                                     f"setting trains no LSTM {n}: list sizes of units_001 "
                                     f"({self.units_001}) in a setting of all models with lstm in models_001")
            out[f"LSTM {n}, {AUTHORS_CELL}"] = {**out[f"LSTM {n}"], **AUTHORS_LSTM}
        return out

    def _authors_sizes(self, setting: Setting | None) -> list[int]:
        """The LSTM sizes ``setting`` also trains with the authors' cell; without ``setting``, any setting of
        all models does."""
        if setting is not None:
            return list(setting.authors_lstm or [])
        every = [s.authors_lstm or [] for s in self.settings_().values() if s.models == "all"]
        return sorted({n for sizes in every for n in sizes})

    def _spec(self, text: str, source: str) -> dict[str, Any]:
        try:
            spec = parse_spec(text)
        except ParameterError as err:
            raise ParameterError(f"{source}: {err}") from None
        return {**spec, "dropout": self.dropout}

    def plan(self) -> list[RunSpec]:
        """Every run of the chapter: each setting's models, once per seed (``seeds``, and a setting's
        ``more_seeds`` of a model), named ``"<model>, <setting> seed <s>"``."""
        return [RunSpec.of(EXPERIMENT, f"{label}, {setting.name}",
                           {"task": asdict(self.task(setting, seed)), "model": model,
                            "train": self.train_config(setting, seed).params()},
                           (*COMPONENTS, component_of(model)), train_run,
                           seed=seed, model=label, setting=setting.name)
                for setting in self.settings_().values() for label, model in self.models(setting).items()
                for seed in self.seeds_of(setting, label)]

    def views(self, runs: dict[str, Run]) -> dict[str, dict[str, Seeds]]:
        """``{setting: {model label: Seeds}}`` of every setting."""
        return {name: self.view(runs, name) for name in self.settings_()}

    def setting_texts(self) -> dict[str, str]:
        """``{setting: what it trains}``, in words (for the verdicts by setting)."""
        return {name: f"Adam lr {s.lr:g}, the {s.generator} generator, "
                      + ("every model" if s.models == "all" else "paper 000's three models")
                for name, s in self.settings_().items()}

    def full_settings(self) -> list[str]:
        """The settings that train every model (paper 001's comparison and the variants included)."""
        return [name for name, s in self.settings_().items() if s.models == "all"]

    def data_tasks(self) -> dict[str, DyckTask]:
        """The data of the first seed under each generator the settings use: ``{generator: task}``."""
        return {s.generator: self.task(s, self.seeds[0]) for s in self.settings_().values()}

    def view(self, runs: dict[str, Run], setting: str) -> dict[str, Seeds]:
        """The runs of one setting, ``{model label: Seeds}`` (labels as in :meth:`models`)."""
        return split_setting(by_label(runs), setting)[0]

    def summary(self) -> str:
        def more(s: Setting) -> str:
            labels = list(self.models(s))
            extra = (s.more_seeds or {}).items()
            left = ", ".join(f"`{label}`" for label, _ in extra if label not in labels)
            return ("".join(f", {label} also seeds {seeds}" for label, seeds in extra if label in labels)
                    + (f"; the preset's more_seeds for {left} left out: no such model under the overrides"
                       if left else ""))

        settings = "; ".join(f"*{s.name}* (Adam lr {s.lr}, {s.generator} generator, "
                             + ("all models" if s.models == "all" else "paper 000's models") + more(s) + ")"
                             for s in self.settings_().values())
        return (f"Built at {self.describe()}: {self.train_size:,} training strings of {self.n_pairs} bracket "
                f"pairs (depth <= {self.train_max_depth}), {self.test_size:,} test strings of any depth, "
                f"{self.epochs} epochs, seeds {list(self.seeds)}; settings: {settings}; models: "
                + ", ".join(self.models()) + f" ({len(self.plan())} runs).")

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
    return run.model(VOCAB_SIZE)
