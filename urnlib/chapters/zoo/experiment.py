"""The zoo: every recurrent cell of urnlib on every synthetic task, at matched parameter budgets, over seeds.

No paper makes this comparison: each compares a few cells on its own tasks. Here the SRN and GRU of the
lecture (004), the paper LSTM (001), the URN and k-TURN (000), the unconstrained matrix RNN ("arbitrary",
000) and the TPRU (002) are each trained on Dyck, cross-serial, a^n b^n and the synthetic agreement grammar
(:mod:`urnlib.chapters.zoo.tasks`), at every parameter budget of ``budgets`` (each cell's size chosen so
that its parameter count is nearest the budget, :mod:`urnlib.chapters.zoo.cells`), once per seed.

    from urnlib.chapters.zoo import experiment as zoo
    config = zoo.Config.paper()
    runs = zoo.run(config)          # the stored runs by name ("LSTM, dyck, budget 1500 seed 0"); never trains
    views = config.views(runs)      # {task: {budget: {cell label: Seeds}}}

Every run trains with Adam at its task's ``lr`` and ``batch_size`` for at most ``epochs`` epochs, stops after
``patience`` epochs without a lower validation loss, and keeps the weights and final metrics of its best
epoch. With several ``lr_choices``, every (task, budget, cell) and seed trains once per rate (the runs at the
task's ``lr`` named as without them, the others ``"LSTM, dyck, budget 1500, lr 0.001 seed 0"``), and the views
hold the rate whose runs reach the lower mean validation loss (:mod:`urnlib.chapters.zoo.lr`).
:func:`train_run` trains one run (a module-level function, so that any worker process can run it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.chapters.zoo.cells import CELLS, Match, Shapes, cell_label, cell_model, match_size
from urnlib.chapters.zoo.lr import LrChoice, candidates, check_lr_choices, lr_text
from urnlib.chapters.zoo.tasks import TASKS, TRAINING_KEYS, TaskKind
from urnlib.models import build_model, count_parameters
from urnlib.models.registry import accepts, components_of
from urnlib.params import ParameterError, check_choice, check_float, check_int, check_list
from urnlib.results import Run, RunSpec, Trained
from urnlib.seeds import Seeds, by_label, check_seeds
from urnlib.train import TrainConfig, fit, seed_everything

__all__ = ["Config", "Planned", "train_run", "run", "EXPERIMENT", "CELLS",
           "TASKS", "MONITOR"]

EXPERIMENT = "zoo"
#: the epoch metrics this chapter's runs may select on (early stopping, kept weights): the zoo hands the loop
#: its validation data as the per-epoch set (fit(..., data.valid)), drawn like the training data, so its
#: "test_loss" is a validation loss
VALIDATION_MONITORS = ("test_loss",)
COMPONENTS = ("train.loop", "experiment.zoo")
#: the validation loss (fit calls the loss on its held-out data test_loss): picks a run's best epoch, stops it
MONITOR = "test_loss"


@dataclass(frozen=True)
class Planned:
    """One (task, budget, cell) of the plan: the cell's label, matched size and spec (its seeds share it)."""

    task: str
    budget: int
    cell: str
    label: str
    match: Match
    model: dict[str, Any]

    @property
    def run_label(self) -> str:
        """``"LSTM, dyck, budget 1500"`` (the run names add ``" seed <s>"``)."""
        return f"{self.label}, {self.task}, budget {self.budget}"


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/zoo.<scale>.yaml`` says where each value comes from).

    Args:
        seeds: the seeds of every (task, budget, cell); a seed fixes a run's data (where the task draws it),
            initialisation, data order and dropout masks.
        cells: the cells compared, keys of :data:`CELLS` (every recurrent cell of the model registry, and
            ``turn``, the k-TURN).
        tasks: ``{task: settings}``, a key of :data:`TASKS` each, with its data settings and its training's
            ``lr`` and ``batch_size``.
        lr_choices: the candidate learning rates of every task (``None``: each task's ``lr`` alone); each must
            hold every task's ``lr``. Every (task, budget, cell) trains at each, and is read at the rate whose
            runs reach the lower mean validation loss over seeds (a tie: the task's ``lr``).
        budgets: the parameter budgets; each cell is sized to the nearest count on each task.
        budget_tolerance: the largest relative gap between a cell's count and the budget.
        truncation_k: k of the k-TURN. lstm_embedding: the LSTM's embedding size. tpru_roles: the TPRU's
            role vectors. max_units: the largest size tried.
        dropout: the dropout rate of every cell (on what each cell drops: inputs or parameters, and outputs;
            the URNs get none on their state).
        epochs: the cap on epochs. patience: stop after this many epochs without a lower validation loss.
        clip: the largest gradient norm of every cell (``None``: no clipping).
        min_bucket: attractor counts (or lengths) with fewer test predictions on a seed are left out of the
            curves and claims.
    """

    CHAPTER = "zoo"

    seeds: list
    cells: list
    tasks: dict
    lr_choices: list | None
    budgets: list
    budget_tolerance: float
    truncation_k: int
    lstm_embedding: int
    tpru_roles: int
    max_units: int
    dropout: float
    epochs: int
    patience: int
    clip: float | None
    min_bucket: int

    def validate(self) -> None:
        check_seeds(self.seeds)
        check_list("cells", self.cells, example=str(list(CELLS)),
                   each=lambda name, cell: check_choice(name, cell, list(CELLS)))
        if not isinstance(self.tasks, dict) or not self.tasks:
            raise ParameterError(f"tasks={self.tasks!r} must be a non-empty mapping of task names to their "
                                 f"settings; the tasks are {list(TASKS)}")
        for name, settings in self.tasks.items():
            check_choice("each task of tasks", name, list(TASKS))
            for seed in self.seeds:
                TASKS[name].task(settings, seed)
            check_float(f"tasks[{name!r}].lr", settings["lr"], minimum=0.0, maximum=10.0, strict_min=True)
            check_int(f"tasks[{name!r}].batch_size", settings["batch_size"], minimum=1, maximum=1_000_000)
        check_lr_choices(self.lr_choices, self.tasks)
        check_list("budgets", self.budgets, example="[1500, 5000]",
                   each=lambda name, b: check_int(name, b, minimum=1, maximum=100_000_000))
        check_float("budget_tolerance", self.budget_tolerance, minimum=0.0, maximum=1.0, strict_min=True)
        self.shapes()
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        check_int("epochs", self.epochs, minimum=1, maximum=100_000)
        check_int("patience", self.patience, minimum=0, maximum=100_000)
        if self.clip is not None:
            check_float("clip", self.clip, minimum=0.0, strict_min=True)
        check_int("min_bucket", self.min_bucket, minimum=1)
        self.planned()  # every cell sized on every task at every budget (raises at the first that cannot be)

    # ------------------------------------------------------------------ what is run
    def shapes(self) -> Shapes:
        return Shapes(self.truncation_k, self.lstm_embedding, self.tpru_roles, self.max_units)

    @property
    def turn(self) -> str:
        """The k-TURN's label, ``"3-TURN"``."""
        return cell_label("turn", self.shapes())

    def labels(self) -> list[str]:
        """The cells' labels, in the order of ``cells``."""
        return [cell_label(c, self.shapes()) for c in self.cells]

    def model_spec(self, cell: str, size: int, kind: TaskKind) -> dict[str, Any]:
        """The registry spec of ``cell`` at ``size`` for ``kind``'s models, with the chapter's dropout (and,
        for a classifier task, its ``n_out``)."""
        spec = {**cell_model(cell, size, self.shapes()), "dropout": self.dropout}
        if accepts(spec, "state_dropout"):  # no cell drops its state (the URNs: paper 000's choice)
            spec["state_dropout"] = False
        if kind.n_out is not None:
            spec["n_out"] = kind.n_out
        return spec

    def planned(self) -> list[Planned]:
        """Every (task, budget, cell), its size matched to the budget."""
        shapes, out = self.shapes(), []
        for task in self.tasks:
            kind = TASKS[task]
            for budget in self.budgets:
                for cell in self.cells:
                    match = match_size(cell, budget, kind.vocab_size, kind.n_out, shapes,
                                       self.budget_tolerance, where=f"on {task}")
                    out.append(Planned(task, budget, cell, cell_label(cell, shapes), match,
                                       self.model_spec(cell, match.size, kind)))
        return out

    def train_config(self, task: str, seed: int, lr: float | None = None) -> TrainConfig:
        """The training of ``task``'s runs under ``seed``, at ``lr`` (default: the task's ``lr``)."""
        settings = self.tasks[task]
        return TrainConfig(self.epochs, settings["batch_size"], settings["lr"] if lr is None else lr, seed,
                           clip=self.clip, monitor=MONITOR, minimize=True, keep_best=True,
                           patience=self.patience or None)

    def lrs(self, task: str) -> list[float]:
        """``task``'s candidate learning rates: its ``lr`` first, then the other ``lr_choices``."""
        return candidates(self.lr_choices, self.tasks[task]["lr"])

    def lr_label(self, p: Planned, lr: float) -> str:
        """The label of ``p``'s runs at ``lr``: ``p.run_label`` at the task's ``lr`` (the names the runs had
        before there was a choice), else with ``", lr 0.001"``."""
        return p.run_label if lr == self.tasks[p.task]["lr"] else f"{p.run_label}, lr {lr_text(lr)}"

    def plan(self) -> list[RunSpec]:
        """One run per (task, budget, cell), candidate rate and seed, named
        ``"LSTM, dyck, budget 1500 seed 0"`` (at another rate than the task's
        ``"LSTM, dyck, budget 1500, lr 0.001 seed 0"``), stored under ``zoo/<task>/``: the runs at each task's
        ``lr`` first."""
        specs, planned = [], self.planned()
        for i in range(max(len(self.lrs(task)) for task in self.tasks)):
            for p in planned:
                if i >= len(self.lrs(p.task)):
                    continue
                lr, kind = self.lrs(p.task)[i], TASKS[p.task]
                components = (*COMPONENTS, *kind.components, *components_of(p.model))
                for seed in self.seeds:
                    task = kind.task(self.tasks[p.task], seed)
                    specs.append(RunSpec.of(f"{EXPERIMENT}/{p.task}", self.lr_label(p, lr),
                                            {"task_kind": p.task, "task": asdict(task), "budget": p.budget,
                                             "cell": p.cell, "model": p.model,
                                             "train": self.train_config(p.task, seed, lr).params()},
                                            components, train_run, seed=seed, task=p.task,
                                            cell=p.cell, budget=p.budget, lr=lr))
        return specs

    def lr_choice(self, runs: dict[str, Run]) -> list[LrChoice]:
        """Per (task, budget, cell) of the plan: its runs at every candidate rate (those stored in ``runs``)
        and the rate with the lower mean validation loss over seeds (:mod:`urnlib.chapters.zoo.lr`)."""
        grouped = by_label(runs)
        return [LrChoice.of(p.task, p.budget, p.label, self.tasks[p.task]["lr"], len(self.seeds),
                            {lr: grouped.get(self.lr_label(p, lr)) for lr in self.lrs(p.task)})
                for p in self.planned()]

    def views(self, runs: dict[str, Run], chosen: bool = True) -> dict[str, dict[int, dict[str, Seeds]]]:
        """The runs as ``{task: {budget: {cell label: Seeds}}}``, in the order of the parameters: each cell's
        runs at its chosen rate (:meth:`lr_choice`); ``chosen=False``: at every candidate rate, those at
        another rate than the task's labelled ``"LSTM (lr 0.001)"`` (what the runs cost)."""
        out: dict[str, dict[int, dict[str, Seeds]]] = {}
        for c in self.lr_choice(runs):
            cells = {c.cell: c.picked} if chosen else {
                c.cell if lr == c.own else f"{c.cell} (lr {lr_text(lr)})": seeds
                for lr, seeds in c.runs.items()}
            for label, seeds in cells.items():
                if seeds:
                    out.setdefault(c.task, {}).setdefault(c.budget, {})[label] = seeds
        return out

    def sizes(self) -> list[dict[str, Any]]:
        """Each cell's matched size and parameter count per task and budget (what the plan trains)."""
        return [{"task": p.task, "budget": p.budget, "cell": p.label, "size": p.match.size,
                 "parameters": p.match.count, "gap": p.match.gap} for p in self.planned()]

    def task_titles(self) -> dict[str, str]:
        return {task: TASKS[task].title for task in self.tasks}

    def summary(self) -> str:
        tasks = "; ".join(f"*{TASKS[t].title}*: " + ", ".join(f"{k} {v}" for k, v in s.items()
                                                              if k not in TRAINING_KEYS)
                          + f" (Adam {self._lr_summary(t)}, batch {s['batch_size']})"
                          for t, s in self.tasks.items())
        stop = (f", stopped after {self.patience} epoch{'s' if self.patience != 1 else ''} without a lower "
                "validation loss" if self.patience else "")
        clip = f", gradients clipped at norm {self.clip}" if self.clip else ""
        return (f"Built at {self.describe()}: cells {', '.join(self.labels())}; parameter budgets "
                f"{', '.join(f'{b:,}' for b in self.budgets)} (each count within "
                f"{self.budget_tolerance:.0%}); seeds {list(self.seeds)}; at most {self.epochs} "
                f"epochs{stop}, every run read at its best epoch{clip}; dropout {self.dropout}; tasks: "
                f"{tasks} ({len(self.plan())} runs).")

    def _lr_summary(self, task: str) -> str:
        lrs = [lr_text(lr) for lr in self.lrs(task)]
        if len(lrs) == 1:
            return f"lr {lrs[0]}"
        return (f"lr {', '.join(lrs[:-1])} or {lrs[-1]}, chosen per cell and budget by the lower validation "
                "loss")


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train one run of :meth:`Config.plan`: its final metrics and weights are those of the best epoch by the
    validation loss, with ``best_epoch``, ``stopped_early`` and the parameter count."""
    kind = TASKS[spec.params["task_kind"]]
    data = kind.data(kind.task_of(spec.params["task"]))
    cfg = TrainConfig(**spec.params["train"])
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], kind.vocab_size)
    history, _ = fit(model, data.train, data.valid, cfg, evaluate=data.evaluate, checkpoint=checkpoint,
                     desc=spec.name)
    final = {**history.best_row, "best_epoch": history.best_epoch or len(history.rows),
             "stopped_early": history.stopped_early, "n_params": count_parameters(model)}
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned (task, budget, cell) and seed, by run name (group them with
    :meth:`Config.views`); ``store`` and ``mode`` default to the config's."""
    return run_config(config, store=store, mode=mode)
