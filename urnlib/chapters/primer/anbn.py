"""Counting with recurrent units: a^n b^n (Weiss, Goldberg & Yahav 2018; lecture 004, "Training recurrent
architectures on a^nb^n" and "Hidden & cell state contents").

A language model reads ``<s> a^n b^n`` and predicts every next symbol; it is trained on n = 1 .. N and a
string is *accepted* when, at every position where the next symbol is forced, the model gives that symbol
probability above a threshold (:mod:`urnlib.languages.anbn`). The largest n such that every a^m b^m with
m <= n is accepted measures how far a model counts beyond its training range. The lecture shows the LSTM
counting past N and the GRU and SRN not, and plots the LSTM's cell state rising over the a's and falling over
the b's.

Models, written in the registry's grammar (``"srn 10"``, ``"gru 10"``, ``"lstm 10"``, ``"urn 10"``):
:class:`~urnlib.models.cells.SRN` and :class:`~urnlib.models.cells.GRU` (localist input),
:class:`~urnlib.models.recurrent.PaperLSTM` (an embedding as wide as the vocabulary unless ``eE`` says
otherwise) and the unitary :class:`~urnlib.models.unitary.URN` (paper 000's cell, a rotation per symbol: can a
norm-preserving state count?), all trained by the one loop of :mod:`urnlib.train` without dropout. A run
stores, per model and seed, which n are accepted, the hidden (and LSTM cell) states along one long string for
the state plots, and its weights.

The chapter's :class:`~urnlib.chapters.primer.experiment.Config` plans the runs with :func:`specs`;
:func:`train_run` trains one.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from urnlib.languages import anbn
from urnlib.models import build_model, count_parameters
from urnlib.models.registry import accepts, component_of, parse_spec, spec_string
from urnlib.params import ParameterError
from urnlib.results import Run, RunSpec, Trained
from urnlib.tasks.anbn import VOCAB_SIZE, AnbnTask, acceptance, largest, training_data
from urnlib.tokens import device_of
from urnlib.train import TrainConfig, fit, seed_everything

#: AnbnTask, training_data, acceptance and largest are urnlib.tasks.anbn's, named here for the tests
__all__ = ["AnbnTask", "KINDS", "model_spec", "build", "training_data", "acceptance", "largest", "specs",
           "train_run", "rebuild_model", "EXPERIMENT"]

EXPERIMENT = "primer_anbn"
KINDS = ("srn", "gru", "lstm", "urn")
COMPONENTS = ("train.loop", "data.anbn", "experiment.primer_anbn")


def model_spec(text: str) -> dict[str, Any]:
    """``"lstm 10"`` -> ``{"kind": "lstm", "n": 10}``: a spec of the registry's grammar with KIND one of
    :data:`KINDS`, as it is stored (options left at their defaults are left out)."""
    spec = parse_spec(text)
    if spec["kind"] not in KINDS:
        raise ParameterError(f"model {text!r}: the a^n b^n models are {list(KINDS)}, written 'KIND UNITS', "
                             "e.g. 'lstm 10' (see urnlib.models.registry for their options)")
    return {k: v for k, v in spec.items() if v is not None}


def build(spec: dict[str, Any]) -> torch.nn.Module:
    """The model of a spec over the a^n b^n vocabulary (V = 5), without dropout."""
    if spec["kind"] == "lstm" and spec.get("embedding_size") is None:
        spec = {**spec, "embedding_size": VOCAB_SIZE}  # an embedding of the 5 symbols, as wide as V
    if accepts(spec, "state_dropout"):  # the URN: none on its state either
        return build_model(spec, VOCAB_SIZE, dropout=0.0, state_dropout=False)
    return build_model(spec, VOCAB_SIZE, dropout=0.0)


def _trace(model: torch.nn.Module, spec: dict[str, Any], n: int) -> dict[str, list]:
    """The hidden states (and the LSTM's cell states) along ``<s> a^n b^n``, in eval mode."""
    inputs, _ = anbn.encode(anbn.strings([n]), anbn.AnbnVocab())
    inputs = inputs.to(device_of(model))
    model.eval()
    with torch.no_grad():
        if spec["kind"] == "lstm":
            h, c = model.states(inputs, cells=True)
            return {"hidden": h[0].tolist(), "cell": c[0].tolist()}
        return {"hidden": model.states(inputs)[0].tolist()}


def specs(task: AnbnTask, models: list[dict[str, Any]], seeds: list[int], cfg: TrainConfig) -> list[RunSpec]:
    """One run per model of :func:`model_spec` and seed, named ``"lstm 10 seed 0"``
    (coordinates ``model``, ``seed``). The seed of a run (``params["seed"]``) seeds its initialisation
    and data order; ``cfg`` gives the epochs, batch size and learning rate (its own ``seed`` is stored as
    given, the same for every run, and not used)."""
    return [RunSpec.of(EXPERIMENT, spec_string(m), {"task": asdict(task), "model": m, "seed": seed,
                                                    "train": cfg.params()},
                       (*COMPONENTS, component_of(m)), train_run, seed=seed,
                       model=spec_string(m))
            for m in models for seed in seeds]


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train one model of :func:`specs`; final metrics are the last epoch's, which n are accepted and the
    states along a^trace_n b^trace_n."""
    task, seed, model_spec_ = AnbnTask(**spec.params["task"]), spec.params["seed"], spec.params["model"]
    cfg = replace(TrainConfig(**spec.params["train"]), seed=seed)
    seed_everything(seed)
    model = build(model_spec_)
    history, _ = fit(model, training_data(task), None, cfg, checkpoint=checkpoint, desc=spec.name)
    accepted = acceptance(model, task)
    final = {**history.rows[-1], "accepted": accepted, "largest_accepted": largest(accepted),
             "trace": _trace(model, model_spec_, task.trace_n), "n_params": count_parameters(model)}
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored run (one stored with its weights), in eval mode."""
    return run.model(build=lambda params: build(params["model"]))
