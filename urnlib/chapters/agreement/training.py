"""Training one run of the agreement chapter, and rebuilding its trained classifier (the functions a worker
process imports by name; :mod:`urnlib.chapters.agreement.experiment` plans the runs and reads them back)."""

from __future__ import annotations

from pathlib import Path

import torch

from urnlib.callbacks import stopping_callbacks
from urnlib.chapters.agreement.data import run_extras
from urnlib.models import build_model, count_parameters
from urnlib.results import Run, RunSpec, Trained
from urnlib.tasks.agreement import evaluate_agreement, make_data, task_of
from urnlib.tasks.agreement_linzen import POOL_PARAM
from urnlib.train import TrainConfig, fit, seed_everything

__all__ = ["ANALYSIS_WORDS", "train_run", "rebuild_model"]

#: a run stores the training tags of this many most frequent words and, for a URN, their generator
#: parameters (what Tables 1-2 and the phrases read): part of what component experiment.agreement stores
ANALYSIS_WORDS = 300


def train_run(spec: RunSpec, checkpoint: Path | None, *, analysis_words: int = ANALYSIS_WORDS) -> Trained:
    """Train the classifier of one run of :meth:`Config.plan`; its final metrics and weights are those of the
    best epoch by the training config's monitor (the last epoch without one), with ``best_epoch``,
    ``stopped_early``, the parameter count and the data statistics (the heuristics' accuracy included).

    Its weights are the model's ``state_dict`` and, for a URN, ``head_embedding``: the generator
    parameters of the ``analysis_words`` most frequent words (rows 1 .. analysis_words of ``embedding``).
    """
    task, cfg = task_of(spec.params["task"]), TrainConfig(**spec.params["train"])
    validating = cfg.monitor == "val_loss"  # the protocol: select on validation sentences, read test ones
    data = make_data(task, validating, spec.params.get("train_fraction", 1.0),  # < 1: the size trend's
                     spec.params.get(POOL_PARAM, 0.0))  # > 0: the pooled size trend's (.sizes)
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], len(data.vocab))
    history, _ = fit(model, data.train, data.test, cfg, valid=data.valid,
                     evaluate=lambda m: evaluate_agreement(m, data), checkpoint=checkpoint, desc=spec.name,
                     callbacks=stopping_callbacks(spec.params.get("stop")))
    extras, head = run_extras(model, data, analysis_words)
    final = {**history.best_row, "best_epoch": history.best_epoch or len(history.rows),
             "stopped_early": history.stopped_early, "n_params": count_parameters(model), **extras}
    return Trained(history.rows, final, {**model.state_dict(), **head}, history.wall_time, history.cpu_time)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained classifier of a stored run, in eval mode (:meth:`Run.model` of its weights without
    ``head_embedding``, which is no parameter of the model: a run stored with only that cannot be rebuilt)."""
    return run.model(run.final["data"]["vocabulary"], extra=("head_embedding",))
