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

__all__ = ["ChapterConfig", "REPO", "PARAMS_DIR", "MODES", "MEMORY_BUDGET", "scales_of", "run_config",
           "run_chapters", "train_token_model", "kept_weights", "WEIGHTS_LIMIT"]

REPO = Path(urnlib.__file__).resolve().parents[1]
PARAMS_DIR = REPO / "notebooks" / "params"
MODES = ("load", "train", "retrain")
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
        ``""`` for a key without one. The files say "ours" where a value is not the papers'."""
        check_choice("scale", scale, scales_of(cls.CHAPTER, params_dir))
        out: dict[str, str] = {}
        above: list[str] = []
        last = None
        header = True  # the file's opening comment block is about the whole preset, not its first key
        for line in (params_dir / f"{cls.CHAPTER}.{scale}.yaml").read_text().splitlines():
            stripped = line.strip()
            if not stripped:
                above, last, header = [], None, False
                continue
            if stripped.startswith("#"):
                text = stripped.lstrip("#").strip()
                if line[0].isspace() and last is not None:   # an indented comment continues the key above
                    out[last] = f"{out[last]} {text}".strip()
                elif not header:
                    above.append(text)
                continue
            header = False
            key, _, rest = line.partition(":")
            if line[0].isspace() or not key.isidentifier():   # a value continued on the next line
                if " #" in line and last is not None:          # with a comment of its own (a nested key's)
                    before, _, note = line.partition(" #")
                    sub = before.strip()   # "dyck:" (a nested key, its value below) names the note's subject
                    label = sub if sub.endswith(":") and sub[:-1].isidentifier() else ""
                    out[last] = " ".join(filter(None, [out[last], label, note.strip()]))
                continue
            comment = rest.partition(" #")[2].strip() if " #" in rest else ""
            out[key] = " ".join([*above, comment]).strip()
            above, last = [], key
        return out

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
    from urnlib.results import RunStore
    from urnlib.runner import run_plan

    store = RunStore(store if store is not None else config.store_path(), rebuild=config.rebuild_command())
    return run_plan(config.plan() if specs is None else specs, store, mode=mode or config.mode,
                    on_stale=config.on_stale, workers=config.workers, scheduler=config.scheduler or None,
                    device=config.device)


def run_chapters(chapters: list[str], scale: str, *, workers: int | str | None = None, scheduler: str = "",
                 each: dict[str, dict] | None = None, **overrides) -> dict[str, dict | Exception]:
    """Every run of every chapter's plan (its ``Config.load(scale, **overrides, **each[chapter])``: ``mode``
    ``train`` trains what is missing or stale), on one Dask backend at once: a local cluster of ``workers``
    processes, a batch-queue cluster or a running ``scheduler``, to which each chapter submits its plan from
    a thread of its own (its module's ``run``, one progress bar per chapter). The scheduler gives every free
    worker the next run of any chapter (of the first listed that has one waiting; a chapter submits after the
    ones listed before it have), so no worker waits for another chapter's last runs. Without
    ``workers`` or ``scheduler`` the chapters train here, one after another.

    Every config is loaded (and so validated) before anything trains: a bad parameter stops them all.

    Returns:
        ``{chapter: what its module's run returns}`` (its runs, by name or grouped), or the exception that
        stopped a chapter's plan (the other chapters go on, and whatever it stored stays stored).
    """
    import contextlib
    import importlib
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from urnlib import cluster
    from urnlib.cluster_runs import PRIORITY, SUBMITTED
    from urnlib.progress import RUNS_LABEL

    n_workers, where = cluster.check_workers(workers), cluster.check_scheduler(scheduler or None)
    modules = {name: importlib.import_module(f"urnlib.experiments.{name}") for name in chapters}
    with contextlib.ExitStack() as stack:
        if where is not None and where[0] == "address":
            address = where[1]
        elif where is not None or n_workers not in (None, 1):
            address = stack.enter_context(cluster.connect(n_workers, where)).scheduler.address
        else:
            address = ""
        configs = {name: module.Config.load(scale, **{**overrides, **(each or {}).get(name, {})},
                                            scheduler=address or None) for name, module in modules.items()}

        names = list(configs)
        submitted = {name: threading.Event() for name in names}

        def one(name: str):
            i = names.index(name)
            if i:  # idle workers take what is submitted first: the chapters listed before this one
                submitted[names[i - 1]].wait()
            RUNS_LABEL.set(name)  # this thread's bars, and its runs' rank: the chapters listed first go first
            PRIORITY.set(len(names) - i)
            SUBMITTED.set(submitted[name])
            try:
                return modules[name].run(configs[name])
            except Exception as exc:  # noqa: BLE001 - reported with the chapter's name, the others go on
                return exc
            finally:
                submitted[name].set()  # also when it had nothing to train, or failed before submitting

        with ThreadPoolExecutor(max(1, len(configs)) if address else 1) as pool:
            done = dict(zip(configs, pool.map(one, configs)))
    return done


WEIGHTS_LIMIT = 2 * 2**20  #: bytes: a run's weights are stored up to this size (see :func:`kept_weights`)


def kept_weights(model) -> tuple[dict, bool]:
    """``(weights to store, whether they are stored)``: the model's ``state_dict`` up to
    :data:`WEIGHTS_LIMIT` bytes, else nothing (a language model over an 18k-word vocabulary has 9-24 MB; a
    chapter whose runs are that large computes every number it shows at training time instead)."""
    weights = model.state_dict()
    stored = sum(t.numel() * t.element_size() for t in weights.values()) <= WEIGHTS_LIMIT
    return (weights if stored else {}), stored


def train_token_model(spec, checkpoint, train, test, vocab_size: int, evaluate=None, callbacks=(), **context):
    """The training function shared by the chapters whose runs are one next-symbol model each: build the run's
    model (seeded by its training seed), :func:`urnlib.train.fit` it with the chapter's ``evaluate`` callback,
    and keep the row of the epoch whose weights it keeps (the monitor's best with ``keep_best``, else the
    last) with the parameter count as its final metrics (and, with a monitor, its best epoch and whether
    patience stopped it).

    Args:
        spec: the run (its params hold ``model`` and ``train``).
        checkpoint: where the loop checkpoints (a path or a sink, see :func:`urnlib.train.fit`).
        train, test: :class:`~urnlib.tokens.TokenData`.
        vocab_size: V.
        evaluate: the per-epoch metrics of the chapter.
        callbacks: :class:`~urnlib.callbacks.Callback` objects of the loop (e.g. a chapter's stopping rule).
        **context: keyword arguments of the model (see :func:`urnlib.models.build_model`).
    """
    from urnlib.models import build_model, count_parameters
    from urnlib.results import Trained
    from urnlib.train import TrainConfig, fit, seed_everything

    cfg = TrainConfig(**spec.params["train"])
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], vocab_size, **context)
    history, _ = fit(model, train, test, cfg, evaluate=evaluate, checkpoint=checkpoint, desc=spec.name,
                     callbacks=callbacks)
    # the row of the weights kept: the monitor's best epoch with keep_best, else the last epoch
    row = history.best_row if cfg.keep_best else history.rows[-1]
    final = {**row, "n_params": count_parameters(model)}
    if cfg.monitor:
        final |= {"best_epoch": history.best_epoch, "stopped_early": history.stopped_early}
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)
