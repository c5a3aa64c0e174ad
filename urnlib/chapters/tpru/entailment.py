"""Logical entailment with the TPRU, GRU and LSTM (paper 002 sec. 5-6: Table 2, Figs. 1 and 2): the data, the
encoders and the training of one run.

Paper 002 trains two-layer recurrent encoders of dimension 64 in a siamese classifier (appendix C.1,
:class:`urnlib.models.entailment.EntailmentModel`: max-pool over time, ``[u; v; |u - v|; u (.) v]``, an MLP
with one ReLU layer) on Evans et al.'s logical entailment data (about 100k training pairs, variables renamed
by a random permutation in training) and reports the accuracy on the validation split and the five test splits
(easy, hard, big, massive, exam), Table 2; Fig. 1 shows training curves of the TPRU for several numbers of
roles N, Fig. 2 for one slice against eight (appendix E).

Evans et al.'s files are not reachable offline: the data come from
:func:`urnlib.languages.logic.generate_dataset`, our re-implementation of their generator (the exam split is
our own hand-made set of textbook pairs). Every model trains in the one loop :func:`urnlib.train.fit` (Adam,
gradients clipped where the run's ``train.clip`` says: the paper clips, by an unstated norm); after every
epoch the callback measures the accuracy on the validation split and on a fixed slice of the training split
(eval mode: no renaming), the curves of Figs. 1 and 2. The chapter's runs watch the validation accuracy
(``train.monitor = "valid_acc"``, ``keep_best``, ``patience``): they stop when it no longer improves and end
with the weights of its best epoch. A run stores its history, the accuracy on every split of the weights it
ends with (the best epoch's; the last epoch's for a run without a monitor), its parameter counts and its
weights.

Encoders are written in the registry's grammar (:func:`urnlib.models.registry.parse_spec`): ``"gru 64"``,
``"lstm 64"``, ``"tpru 64 N64"`` (64 roles, one slice) and ``"tpru 64 N4 s8"`` (4 roles, eight slices,
appendix E); :func:`encoder_spec` maps the parsed spec to the encoder's arguments ``{"kind", "d", "n_roles",
"slices"}`` (the GRU and LSTM here are ``torch.nn`` layers in a
:class:`~urnlib.models.tpru_stack.RecurrentStack`, not the registry's lecture GRU or paper LSTM). Labels:
``"GRU 64"``, ``"TPRU 64 N=64"``, ``"TPRU 64 N=4 s=8"``. The chapter's config
(:mod:`urnlib.chapters.tpru.experiment`) plans one run per encoder and initialisation seed; the seed fixes the
initialisation (and the TPRU's basis E), the data order and the renaming; the data have their own seed
(:class:`EntailmentTask`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from urnlib.callbacks import stopping_callbacks
from urnlib.languages import logic
from urnlib.models.entailment import EntailmentModel, entailment_accuracy, pack_targets
from urnlib.models.registry import parse_spec
from urnlib.models.tpru_counts import weight_matrix_count
from urnlib.models.tpru_stack import BothWays, RecurrentStack
from urnlib.params import ParameterError, check_bool, check_float, check_int
from urnlib.results import Run, RunSpec, Trained
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

__all__ = ["EXPERIMENT", "COMPONENTS", "TEST_SPLITS", "EVAL_SPLITS", "ENCODER_FORMS", "EntailmentTask",
           "Architecture", "EntailmentData", "check_pairs", "make_data", "encoder_spec", "model_label",
           "ablation_label", "build_classifier", "train_run", "rebuild_classifier"]

EXPERIMENT = "tpru_entailment"
#: what a run computes depends on: the classifier and its encoders (model.entailment; the stacks live with the
#: TPRU, model.tpru), the generated data, the loop and this module's evaluation
COMPONENTS = ("experiment.tpru_entailment", "data.logic", "model.entailment", "model.tpru", "train.loop")
TEST_SPLITS = ("easy", "hard", "big", "massive", "exam")  # paper 002 Table 2, Evans et al.'s test files
EVAL_SPLITS = ("valid", *TEST_SPLITS)
GENERATED = ("train", "valid", "easy", "hard", "big", "massive")  # the splits the generator draws
TRAIN_PROBE = 2000  # training examples scored after every epoch (the training accuracy of Figs. 1-2)
#: how an entailment encoder is written
ENCODER_FORMS = ("'gru D', 'lstm D' (e.g. 'gru 64'), 'tpru D N<number of role vectors>' (e.g. 'tpru 64 N64') "
                 "or 'tpru D N<roles> s<slices>' (e.g. 'tpru 64 N4 s8', appendix E)")


def check_pairs(name: str, n: Any) -> int:
    """``n`` pairs of a generated split: an integer, at least 4 and a multiple of 4 (each four-tuple of the
    generator gives two positive and two negative pairs); else a ParameterError naming ``name`` and the
    nearest sizes to write."""
    check_int(name, n, minimum=4)
    if n % 4:
        raise ParameterError(f"{name}={n} must be a multiple of 4 (each four-tuple of the generator gives 2 "
                             f"positive and 2 negative pairs): e.g. {n - n % 4 or 4} or {n + 4 - n % 4}")
    return n


@dataclass(frozen=True)
class EntailmentTask:
    """Sizes of the generated splits (multiples of 4: each four-tuple gives two positive and two negative
    pairs) and the data seed. The exam split is the fixed hand-made set
    (:func:`urnlib.languages.logic.exam_examples`). The values come from the chapter's config.

    Each split is drawn from a random stream of its own, so a larger ``train`` leaves the validation and test
    pairs as they were, but for a group alpha-equivalent to a new training pair, which is replaced by the next
    one drawn (none was, at 400 against 4,000 training pairs); another ``profile`` draws every split from
    other ranges (no pair in common)."""

    train: int
    valid: int
    easy: int
    hard: int
    big: int
    massive: int
    seed: int  # generator seed (the same data for every model and initialisation seed)
    #: which table of split ranges generates the data (:data:`urnlib.languages.logic.PROFILES`): our
    #: reconstruction, or the ranges measured on Evans et al.'s released files
    profile: str = "reconstruction"

    def __post_init__(self):
        for name in GENERATED:
            check_pairs(f"{name} size", getattr(self, name))
        check_int("seed", self.seed, minimum=0)
        logic.split_table(self.profile)  # an unknown profile stops here, naming the known ones

    def params(self) -> dict[str, Any]:
        """The task as a run's parameters: the profile only where it is not the default, so that the runs
        generated from the reconstruction keep their keys."""
        out = asdict(self)
        if out["profile"] == "reconstruction":
            del out["profile"]
        return out

    def counts(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in GENERATED}


@dataclass(frozen=True)
class Architecture:
    """The siamese classifier around the encoder (paper 002 appendix C.1); the values come from the config."""

    layers: int  # encoder layers
    embedding_size: int  # symbol embedding, the first layer's input
    hidden: int  # hidden units of the one-hidden-layer MLP
    dropout: float  # in the encoder (between layers) and the MLP
    permute: bool  # symbolic vocabulary permutation in training (a true permutation)

    def __post_init__(self):
        check_int("layers", self.layers, minimum=1)
        check_int("embedding_size", self.embedding_size, minimum=1)
        check_int("hidden", self.hidden, minimum=1)
        check_float("dropout", self.dropout, minimum=0.0)
        if self.dropout >= 1:
            raise ParameterError(f"dropout={self.dropout} must be < 1")
        check_bool("permute", self.permute)


@dataclass
class EntailmentData:
    splits: dict[str, tuple[torch.Tensor, torch.Tensor]]  # name -> (packed inputs (N, T), labels (N,))
    stats: dict[str, dict[str, Any]]  # name -> logic.split_statistics (+ the train size)

    def train_data(self) -> TokenData:
        x, y = self.splits["train"]
        return TokenData(x, pack_targets(y, x.shape[1]))


@lru_cache(maxsize=2)
def make_data(task: EntailmentTask) -> EntailmentData:
    """Generate every split (:func:`urnlib.languages.logic.generate_dataset`), pack each pair as ``premise
    <sep> hypothesis`` and measure the evaluation splits (:func:`urnlib.languages.logic.split_statistics`:
    mean 2^#vars, the "Mean 2^#Vars" row of Table 2, operators, heuristic baselines; and ``acc_surface``,
    :func:`urnlib.languages.logic.surface_baseline` fit on the training pairs)."""
    raw = logic.generate_dataset(task.counts(), seed=task.seed, specs=logic.split_table(task.profile))
    splits = {name: (logic.encode_packed(examples),
                     torch.tensor([e.label for e in examples], dtype=torch.long))
              for name, examples in raw.items()}
    train = raw["train"]
    # the surface baseline: a linear classifier on lengths, variables and overlap, fit on the training pairs
    stats = {name: {**logic.split_statistics(raw[name]),
                    "acc_surface": logic.surface_baseline(train, raw[name])} for name in EVAL_SPLITS}
    stats["train"] = {"count": len(train), "positive": sum(e.label for e in train) / len(train)}
    return EntailmentData(splits, stats)


def encoder_spec(text: str) -> dict[str, Any]:
    """An encoder written in the registry's grammar -> ``{"kind", "d", "n_roles", "slices"}`` (``n_roles`` and
    ``slices`` None for the GRU and LSTM), the arguments of :class:`~urnlib.models.tpru_stack.RecurrentStack`.

    Raises:
        ParameterError: not a spec of the registry, or not one of :data:`ENCODER_FORMS`; the message names the
            spec and says what to write.
    """
    try:
        spec = parse_spec(text)
    except ParameterError as err:
        raise ParameterError(f"{err}. An entailment encoder is written {ENCODER_FORMS}") from None
    kind = spec["kind"]
    if kind == "tpru":
        return {"kind": "tpru", "d": spec["d"], "n_roles": spec["n_roles"], "slices": spec["slices"]}
    if kind in ("gru", "lstm"):
        if spec.get("embedding_size") is not None:
            raise ParameterError(f"model {text!r}: the encoder reads the symbol embeddings, whose size is "
                                 f"the parameter embedding_size; write '{kind} {spec['n']}'")
        return {"kind": kind, "d": spec["n"], "n_roles": None, "slices": None}
    raise ParameterError(f"model {text!r}: a {kind!r} model is not an entailment encoder; an encoder is "
                         f"written {ENCODER_FORMS}")


def model_label(spec: dict[str, Any]) -> str:
    """``"GRU 64"``, ``"TPRU 64 N=64"``, ``"TPRU 64 N=4 s=8"``, ``"LSTM 64 bidirectional"``."""
    label = f"{spec['kind'].upper()} {spec['d']}"
    if spec["kind"] == "tpru":
        label += f" N={spec['n_roles']}" + (f" s={spec['slices']}" if spec["slices"] > 1 else "")
    return label + (" bidirectional" if spec.get("directions", 1) == 2 else "")


def ablation_label(spec: dict[str, Any], train: dict[str, Any] | None = None) -> str:
    """:func:`model_label` and what the ablation changed: ``"TPRU 64 N=4, b=0"``, ``"TPRU 64 N=4 s=8, scores
    x2.83"``, ``"TPRU 64 N=4, mod3"`` (a spec at the original setting: its model's label); then the training
    settings ``train`` changes from the chapter's (``{optimizer, lr, clip, clip_value}``, ``None``: off), in
    words: ``"TPRU 64 N=4, Adam with AMSGrad, gradient values clipped at 10, no norm clip"``, ``"TPRU 64 N=4,
    lr 0.003"``. The stored runs are named by these labels: the words never change."""
    label = model_label(spec)
    if spec.get("bias_init", 1.0) != 1.0:
        label += f", b={spec['bias_init']:g}"
    if spec.get("score_scale", 1.0) != 1.0:
        label += f", scores x{spec['score_scale']:.3g}"
    if spec.get("variant", "tpru") != "tpru":
        label += f", {spec['variant']}"
    train = train or {}
    optimizer = {"adam": "Adam", "amsgrad": "Adam with AMSGrad", "adagrad": "Adagrad", "sgd": "SGD"}
    words = [optimizer.get(train["optimizer"], train["optimizer"])] if "optimizer" in train else []
    words += [f"lr {train['lr']:g}"] if "lr" in train else []
    for key, what, off in (("clip_value", "gradient values", "value"), ("clip", "gradient norm", "norm")):
        if key in train:
            words.append(f"no {off} clip" if train[key] is None else f"{what} clipped at {train[key]:g}")
    return ", ".join([label, *words])


def build_classifier(spec: dict[str, Any], arch: Architecture, seed: int) -> EntailmentModel:
    """The siamese classifier with a ``layers``-layer encoder of ``spec``'s kind, initialised from
    ``seed``; a TPRU's scalar biases start at ``spec["bias_init"]``, its unbinding scores are multiplied by
    ``spec["score_scale"]`` and it is sec. 4's modification ``spec["variant"]`` where the spec has them (the
    ablation; otherwise 1, 1 and the TPRU itself, as in the specs of the chapter's main runs). A spec with
    ``directions: 2`` reads each row both ways (:class:`~urnlib.models.tpru_stack.BothWays`: a second stack,
    its TPRU bases seeded after the first's), the MLP reading the 2 d states."""
    seed_everything(seed)

    def stack(first: int) -> RecurrentStack:  # ``first``: the seed of its first TPRU layer's basis
        return RecurrentStack(spec["kind"], arch.embedding_size, spec["d"], arch.layers,
                              n_roles=spec["n_roles"], slices=spec["slices"] or 1, dropout=arch.dropout,
                              seed=first, bias_init=spec.get("bias_init", 1.0),
                              variant=spec.get("variant", "tpru"), score_scale=spec.get("score_scale", 1.0))

    directions = spec.get("directions", 1)
    encoder = stack(seed) if directions == 1 else BothWays(stack(seed), stack(seed + arch.layers))
    width = directions * spec["d"]  # the states the MLP reads
    return EntailmentModel(len(logic.VOCAB), arch.embedding_size, encoder, width, arch.hidden,
                           sep_id=logic.SEP_ID, pad_id=logic.PAD_ID,
                           variable_ids=logic.variable_ids().tolist() if arch.permute else None,
                           permute=logic.permute_variables if arch.permute else None,
                           dropout=arch.dropout)


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the classifier of one planned run (``params``: ``task``, ``architecture``, ``model``, ``train``).

    Per epoch the history gains ``train_acc`` (the first :data:`TRAIN_PROBE` training pairs, no renaming) and
    ``valid_acc``; the final metrics are the accuracy on every split of :data:`EVAL_SPLITS` of the weights the
    loop ends with (the monitor's best epoch when ``train`` keeps it, else the last), the last epoch's
    training loss, parameter counts and the data statistics."""
    params = spec.params
    task, arch = EntailmentTask(**params["task"]), Architecture(**params["architecture"])
    cfg = TrainConfig(**params["train"])
    data = make_data(task)
    model = build_classifier(params["model"], arch, cfg.seed)
    probe = min(TRAIN_PROBE, len(data.splits["train"][1]))
    tx, ty = (t[:probe] for t in data.splits["train"])
    vx, vy = data.splits["valid"]

    def evaluate(m):  # eval mode: no renaming, no dropout
        return {"train_acc": entailment_accuracy(m, tx, ty), "valid_acc": entailment_accuracy(m, vx, vy)}

    callbacks = stopping_callbacks(params.get("stop"))
    history, _ = fit(model, data.train_data(), None, cfg, evaluate=evaluate, checkpoint=checkpoint,
                     desc=spec.name, callbacks=callbacks)
    accuracy = {name: entailment_accuracy(model, *data.splits[name], batch_size=256) for name in EVAL_SPLITS}
    final = {
        "accuracy": accuracy,
        "train_loss": history.rows[-1]["train_loss"],
        "n_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "encoder_params": sum(p.numel() for p in model.encoder.parameters() if p.requires_grad),
        "encoder_weights": weight_matrix_count(model.encoder),
        "data": data.stats,
    }
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def rebuild_classifier(run: Run) -> EntailmentModel:
    """The trained classifier of a stored run (one that stored its weights), in eval mode."""
    return run.model(build=lambda p: build_classifier(p["model"], Architecture(**p["architecture"]),
                                                      p["train"]["seed"]))
