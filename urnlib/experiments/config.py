"""One validated config per chapter, loaded from the chapter's parameter file.

The papers' values are written once: in ``notebooks/params/<chapter>.<scale>.yaml``, each with a
comment saying where it comes from. A chapter's config is a dataclass (a subclass of
:class:`ChapterConfig`) whose fields are exactly that file's keys; :meth:`ChapterConfig.load` reads a
preset, applies overrides (what a user passed to papermill, or to Python), validates everything before
any work, and remembers what was overridden, so the page can say "scale tiny, with epochs=5" and never
label paper values tiny (or the other way round).

    from urnlib.chapters.dyck import experiment as dyck
    config = dyck.Config.load("paper")                 # the committed book's values
    config = dyck.Config.load("tiny", epochs=5)        # a preset with an override
    dyck.run(config)                                   # loads the stored runs (never trains by default)

A notebook's parameters cell declares ``scale`` and every field with the value ``None`` ("from the
preset"); its next cell is ``config = dyck.Config.from_namespace(globals())``.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any, ClassVar

import yaml

import urnlib
from urnlib.experiments import provenance
from urnlib.params import ParameterError, check_choice, check_notebook_parameters
from urnlib.results import RunStore
from urnlib.runner import MODES, run_plan

__all__ = ["ChapterConfig", "REPO", "PARAMS_DIR", "MODES", "MEMORY_BUDGET", "EXECUTION", "scales_of",
           "run_config"]

REPO = Path(urnlib.__file__).resolve().parents[1]
PARAMS_DIR = REPO / "notebooks" / "params"
MEMORY_BUDGET = 24 * 2**30  #: bytes a configuration may need (this machine's memory: 24 GiB)
#: fields that say where and how runs are obtained, not what they compute: never called overrides of a preset
EXECUTION = frozenset({"store", "mode", "on_stale", "workers", "scheduler", "device"})


def scales_of(chapter: str, params_dir: Path = PARAMS_DIR) -> list[str]:
    """The presets that exist for ``chapter`` (``<chapter>.<scale>.yaml`` files)."""
    return sorted(p.name[len(chapter) + 1 : -len(".yaml")] for p in params_dir.glob(f"{chapter}.*.yaml"))


def _type_ok(value: Any, hint: Any) -> bool:
    """A light check of a YAML value against a field's annotation (int, float, str, bool, list, dict,
    X | None)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_type_ok(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list or hint is list:
        return isinstance(value, (list, tuple))
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return True


@dataclasses.dataclass(kw_only=True)
class ChapterConfig:
    """Fields every chapter has; subclasses add theirs (``kw_only`` dataclasses, no defaults for the papers'
    values: they come from the parameter file).

    Args:
        scale: the preset the values come from (``tiny``, ``paper``, ...).
        store: folder of the stored runs; relative paths are relative to ``notebooks/`` (so the same value
            works from any working directory).
        mode: ``load`` (never train: the book), ``train`` (train missing or stale runs), ``retrain`` (all).
        on_stale: a stale stored run in mode ``load``: ``warn`` (use it, flagged) or ``error``.
        workers: where runs that must be trained train: ``None`` (this process, one after another), N (a local
            Dask cluster of N single-threaded worker processes) or ``"auto"`` (one per core).
        scheduler: ``""`` (none), ``"tcp://host:8786"`` (a running Dask scheduler) or ``"slurm:FILE"`` /
            ``"pbs:FILE"`` ... (a batch-queue cluster described by FILE; see
            notebooks/params/cluster.example.yaml).
        device: ``"cpu"``, ``"cuda"`` or ``"auto"`` (a GPU where the machine that trains has one).
        workers, scheduler and device say where runs train, not what they compute: they are not part of a run.
    """

    CHAPTER: ClassVar[str] = ""

    scale: str
    store: str
    mode: str = "load"
    on_stale: str = "warn"
    workers: int | str | None = None
    scheduler: str = ""
    device: str = "cpu"
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        check_choice("mode", self.mode, list(MODES))
        check_choice("on_stale", self.on_stale, ["warn", "error"])
        from urnlib import cluster

        cluster.check_workers(self.workers)
        cluster.check_scheduler(self.scheduler or None)
        cluster.check_device(self.device)
        hints = typing.get_type_hints(type(self))
        for f in self.fields():
            value = getattr(self, f)
            if not _type_ok(value, hints[f]):
                raise ParameterError(f"{f}={value!r} must be of type "
                                     f"{getattr(hints[f], '__name__', hints[f])}")
        self.validate()
        self.check_memory()

    def validate(self) -> None:
        """Chapter-specific checks (every list parameter, every spec, sizes, data files); raise
        ParameterError."""

    def memory_estimate(self) -> dict[str, tuple[float, str]]:
        """The configuration's largest memory needs: ``{what: (bytes, the parameters to lower)}``."""
        return {}

    def check_memory(self) -> None:
        """Refuse a configuration whose :meth:`memory_estimate` exceeds :data:`MEMORY_BUDGET`, naming the
        largest part and the parameters that shrink it."""
        parts = self.memory_estimate()
        total = sum(b for b, _ in parts.values())
        if total > MEMORY_BUDGET:
            name, (largest, lower) = max(parts.items(), key=lambda item: item[1][0])
            raise ParameterError(f"this configuration needs about {total / 2**30:,.0f} GiB, more than the "
                                 f"{MEMORY_BUDGET / 2**30:.0f} GiB of this machine; most of it is {name} "
                                 f"(about {largest / 2**30:,.0f} GiB): lower {lower}")

    # ------------------------------------------------------------------ construction
    @classmethod
    def fields(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if f.name != "overrides"]

    @classmethod
    def preset(cls, scale: str, params_dir: Path = PARAMS_DIR) -> dict[str, Any]:
        """The values of ``<chapter>.<scale>.yaml``, checked to name exactly this config's fields."""
        scales = scales_of(cls.CHAPTER, params_dir)
        check_choice("scale", scale, scales)
        path = params_dir / f"{cls.CHAPTER}.{scale}.yaml"
        try:
            values = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as err:
            raise ParameterError(f"{path} is not valid YAML: {err}") from None
        if not isinstance(values, dict):
            raise ParameterError(f"{path} must hold a mapping of parameter names to values")
        if values.get("scale", scale) != scale:
            raise ParameterError(f"{path} says scale: {values['scale']!r} but is the file of scale {scale!r}")
        values["scale"] = scale
        unknown = sorted(set(values) - set(cls.fields()))
        missing = sorted(set(cls.fields()) - set(values) - {f.name for f in dataclasses.fields(cls)
                                                               if f.default is not dataclasses.MISSING})
        if unknown or missing:
            raise ParameterError(f"{path}: " + "; ".join(
                ([f"unknown parameter(s) {unknown}"] if unknown else [])
                + ([f"missing parameter(s) {missing}"] if missing else []))
                + f"; {cls.__name__} has {cls.fields()}")
        return values

    @classmethod
    def setting_fields(cls) -> list[str]:
        """The fields that say what the runs compute: all but ``scale`` and those of :data:`EXECUTION`."""
        return [f for f in cls.fields() if f not in EXECUTION and f != "scale"]

    @classmethod
    def where_from(cls, scale: str = "paper", params_dir: Path = PARAMS_DIR) -> dict[str, str]:
        """Where each value of the preset ``scale`` comes from: the comment beside its key in
        ``<chapter>.<scale>.yaml`` (with the comment lines just above the key and those continuing it below),
        ``""`` for a key without one (:func:`urnlib.experiments.provenance.where_from`). The files say "ours"
        where a value is not the papers'."""
        check_choice("scale", scale, scales_of(cls.CHAPTER, params_dir))
        return provenance.where_from(params_dir / f"{cls.CHAPTER}.{scale}.yaml")

    @classmethod
    def load(cls, scale: str = "paper", params_dir: Path = PARAMS_DIR, **overrides):
        """The preset ``scale`` with ``overrides`` (``None`` values mean "from the preset")."""
        values = cls.preset(scale, params_dir)
        unknown = sorted(set(overrides) - set(cls.fields()))
        if unknown:
            raise ParameterError(f"unknown parameter(s) {unknown} for the {cls.CHAPTER} chapter; "
                                 f"its parameters are {cls.fields()}")
        changed = {k: v for k, v in overrides.items()
                   if v is not None and k != "scale" and values.get(k) != v}
        return cls(**{**values, **changed}, overrides={k: (values.get(k), v) for k, v in changed.items()})

    @classmethod
    def from_namespace(cls, namespace: dict[str, Any], params_dir: Path = PARAMS_DIR):
        """The config of a notebook: its ``scale`` and every field it defines that is not ``None``.

        A parameter passed to papermill that the notebook does not declare stops here, named with the nearest
        known name (:func:`urnlib.params.check_notebook_parameters`), before any value is read."""
        check_notebook_parameters(namespace, cls.fields())
        return cls.load(namespace.get("scale") or "paper", params_dir,
                        **{k: namespace[k] for k in cls.fields() if k in namespace and k != "scale"})

    @classmethod
    def paper(cls):
        return cls.load("paper")

    @classmethod
    def tiny(cls):
        return cls.load("tiny")

    # ------------------------------------------------------------------ use
    def store_path(self) -> Path:
        """The store's absolute path (relative values are relative to ``notebooks/``)."""
        path = Path(self.store).expanduser()
        return path if path.is_absolute() else (REPO / "notebooks" / path).resolve()

    def describe(self) -> str:
        """``scale **tiny**`` and what was overridden, for the page's first lines (Markdown)."""
        text = f"scale **{self.scale}**"
        if self.overrides:
            text += ", with " + ", ".join(f"`{k}={new!r}` (preset: `{old!r}`)"
                                          for k, (old, new) in self.overrides.items())
        return text

    def rebuild_command(self) -> str:
        """The command that trains this chapter's missing or stale runs into its store."""
        extra = " ".join(f"-p {k} {v!r}" for k, (_, v) in self.overrides.items())
        return (f"python -m urnlib.cli notebooks --scale {self.scale} --only {self.CHAPTER} --train"
                + (f"  (with {extra})" if extra else ""))


def run_config(config: ChapterConfig, specs=None, *, store: str | Path | None = None,
               mode: str | None = None):
    """The stored run of every spec of ``config``'s plan (default ``config.plan()``), by name, trained first
    where the mode asks for it (:mod:`urnlib.runner`).

    Args:
        config: a chapter's config.
        specs: the run specs (default: ``config.plan()``).
        store: the run store (default: ``config.store``, relative to ``notebooks/``).
        mode: ``load``, ``train`` or ``retrain`` (default: ``config.mode``).
    """
    store = RunStore(store if store is not None else config.store_path(), rebuild=config.rebuild_command())
    return run_plan(config.plan() if specs is None else specs, store, mode=mode or config.mode,
                    on_stale=config.on_stale, workers=config.workers, scheduler=config.scheduler or None,
                    device=config.device)
