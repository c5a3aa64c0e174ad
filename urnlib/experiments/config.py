"""One validated config per chapter, loaded from the chapter's parameter file.

The papers' values are written once: in ``notebooks/params/<chapter>.<scale>.yaml``, each with a
comment saying where it comes from. A chapter's config is a dataclass (a subclass of
:class:`ChapterConfig`) whose fields are exactly that file's keys; :meth:`ChapterConfig.load` reads a
preset, applies overrides (what a user passed to papermill, or to Python), validates everything before
any work, and remembers what was overridden, so the page can say "scale tiny, with epochs=5" and never
label paper values tiny (or the other way round).

    from urnlib.experiments import dyck
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
from urnlib.params import ParameterError, check_choice

__all__ = ["ChapterConfig", "REPO", "PARAMS_DIR", "MODES", "scales_of", "run_config"]

REPO = Path(urnlib.__file__).resolve().parents[1]
PARAMS_DIR = REPO / "notebooks" / "params"
MODES = ("load", "train", "retrain")


def scales_of(chapter: str, params_dir: Path = PARAMS_DIR) -> list[str]:
    """The presets that exist for ``chapter`` (``<chapter>.<scale>.yaml`` files)."""
    return sorted(p.name[len(chapter) + 1 : -len(".yaml")] for p in params_dir.glob(f"{chapter}.*.yaml"))


def _type_ok(value: Any, hint: Any) -> bool:
    """A light check of a YAML value against a field's annotation (int, float, str, bool, list, dict, X | None)."""
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
    """

    CHAPTER: ClassVar[str] = ""

    scale: str
    store: str
    mode: str = "load"
    on_stale: str = "warn"
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        check_choice("mode", self.mode, list(MODES))
        check_choice("on_stale", self.on_stale, ["warn", "error"])
        hints = typing.get_type_hints(type(self))
        for f in self.fields():
            value = getattr(self, f)
            if not _type_ok(value, hints[f]):
                raise ParameterError(f"{f}={value!r} must be of type {getattr(hints[f], '__name__', hints[f])}")
        self.validate()

    def validate(self) -> None:
        """Chapter-specific checks (every list parameter, the memory estimate, ...); raise ParameterError."""

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
                + ([f"missing parameter(s) {missing}"] if missing else [])) + f"; {cls.__name__} has {cls.fields()}")
        return values

    @classmethod
    def load(cls, scale: str = "paper", params_dir: Path = PARAMS_DIR, **overrides):
        """The preset ``scale`` with ``overrides`` (``None`` values mean "from the preset")."""
        values = cls.preset(scale, params_dir)
        unknown = sorted(set(overrides) - set(cls.fields()))
        if unknown:
            raise ParameterError(f"unknown parameter(s) {unknown} for the {cls.CHAPTER} chapter; its parameters are "
                                 f"{cls.fields()}")
        changed = {k: v for k, v in overrides.items() if v is not None and k != "scale" and values.get(k) != v}
        return cls(**{**values, **changed}, overrides={k: (values.get(k), v) for k, v in changed.items()})

    @classmethod
    def from_namespace(cls, namespace: dict[str, Any], params_dir: Path = PARAMS_DIR):
        """The config of a notebook: its ``scale`` and every field it defines that is not ``None``."""
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
            text += ", with " + ", ".join(f"`{k}={new!r}` (preset: `{old!r}`)" for k, (old, new) in self.overrides.items())
        return text

    def rebuild_command(self) -> str:
        """The command that trains this chapter's missing or stale runs into its store."""
        extra = " ".join(f"-p {k} {v!r}" for k, (_, v) in self.overrides.items())
        return (f"python -m urnlib.cli notebooks --scale {self.scale} --only {self.CHAPTER} --train"
                + (f"  (with {extra})" if extra else ""))


def run_config(config: ChapterConfig, specs=None, *, store: str | Path | None = None, mode: str | None = None):
    """The stored run of every spec of ``config``'s plan (default ``config.plan()``), by name, trained first
    where the mode asks for it (:mod:`urnlib.runner`).

    Args:
        config: a chapter's config.
        specs: the run specs (default: ``config.plan()``).
        store: the run store (default: ``config.store``, relative to ``notebooks/``).
        mode: ``load``, ``train`` or ``retrain`` (default: ``config.mode``).
    """
    from urnlib.results import RunStore
    from urnlib.runner import run_plan

    store = RunStore(store if store is not None else config.store_path(), rebuild=config.rebuild_command())
    return run_plan(config.plan() if specs is None else specs, store, mode=mode or config.mode,
                    on_stale=config.on_stale)
