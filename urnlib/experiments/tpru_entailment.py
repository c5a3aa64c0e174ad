"""Logical entailment with the TPRU, GRU and LSTM (paper 002 sec. 5-6: Table 2, Figs. 1 and 2).

Paper 002 trains two-layer recurrent encoders of dimension 64 in a siamese classifier (appendix C.1,
:class:`urnlib.models.entailment.EntailmentModel`: max-pool over time, ``[u; v; |u - v|; u (.) v]``, an MLP with
one ReLU layer) on Evans et al.'s logical entailment data (about 100k training pairs, variables renamed by a random
permutation in training) and reports the accuracy on the validation split and the five test splits (easy, hard,
big, massive, exam), Table 2; Fig. 1 shows training curves of the TPRU for several numbers of roles N, Fig. 2 for
one slice against eight (appendix E).

Evans et al.'s files are not reachable offline: the data come from :func:`urnlib.languages.logic.generate_dataset`,
our re-implementation of their generator (the exam split is our own hand-made set of textbook pairs). Every model
trains in the one loop :func:`urnlib.train.fit` (Adam, no gradient clipping: the paper clips, by an unstated norm);
after every epoch the callback measures the accuracy on the validation split and on a fixed slice of the training
split (eval mode: no renaming), the curves of Figs. 1 and 2. A run stores numbers only: its history, the final
accuracy on every split (the weights after the last epoch; the paper does not say how it picked its models here),
and its parameter counts.

Model strings (:func:`parse_model`): ``"gru 64"``, ``"lstm 64"``, ``"tpru 64 N64"`` (64 roles, one slice) and
``"tpru 64 N4 s8"`` (4 roles, eight slices, appendix E); labels ``"GRU 64"``, ``"TPRU 64 N=64"``,
``"TPRU 64 N=4 s=8"``. Each is trained once per seed of ``seeds``; the seed fixes the initialisation (and the
TPRU's basis E), the data order and the renaming; the data have their own seed (:class:`EntailmentTask`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from urnlib.languages import logic
from urnlib.models.entailment import EntailmentModel, entailment_accuracy, pack_targets
from urnlib.models.tpru import RecurrentStack, weight_matrix_count
from urnlib.params import ParameterError, check_bool, check_float, check_int
from urnlib.results import Run, RunStore
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

__all__ = ["EXPERIMENT", "TEST_SPLITS", "EVAL_SPLITS", "EntailmentTask", "Architecture", "EntailmentData",
           "make_data", "parse_model", "model_label", "plan_runs", "build_model", "run_all"]

EXPERIMENT = "tpru_entailment"
TEST_SPLITS = ("easy", "hard", "big", "massive", "exam")  # paper 002 Table 2, Evans et al.'s test files
EVAL_SPLITS = ("valid", *TEST_SPLITS)
TRAIN_PROBE = 2000  # training examples scored after every epoch (the training accuracy of Figs. 1-2)
_SPEC = re.compile(r"^(gru|lstm|tpru)\s+(\d+)(?:\s+N\s*=?\s*(\d+))?(?:\s+s\s*=?\s*(\d+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class EntailmentTask:
    """Sizes of the generated splits (multiples of 4: each four-tuple gives two positive and two negative pairs)
    and the data seed. The exam split is the fixed hand-made set (:func:`urnlib.languages.logic.exam_examples`)."""

    train: int = 16_000  # Evans et al.: ~100k (logic.PAPER_SIZES); scaled down to fit the CPU budget
    valid: int = 2_000  # Evans et al.: ~5k
    easy: int = 1_000  # each test split; Evans et al.: ~5k (big, massive ~1.3-1.6k)
    hard: int = 1_000
    big: int = 1_000
    massive: int = 1_000
    seed: int = 0  # generator seed (the same data for every model and initialisation seed)

    def __post_init__(self):
        for name in ("train", "valid", "easy", "hard", "big", "massive"):
            n = getattr(self, name)
            check_int(f"{name} size", n, minimum=4)
            if n % 4:
                raise ParameterError(f"{name} size={n} must be a multiple of 4 (each four-tuple of the generator "
                                     f"gives 2 positive and 2 negative pairs): e.g. {n - n % 4 or 4} or "
                                     f"{n + 4 - n % 4}")
        check_int("seed", self.seed, minimum=0)

    def counts(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in ("train", "valid", "easy", "hard", "big", "massive")}


@dataclass(frozen=True)
class Architecture:
    """The siamese classifier around the encoder (paper 002 appendix C.1)."""

    layers: int = 2  # C.1: "two-layer recurrent networks"
    embedding_size: int = 64  # ours (the paper's counts in Table 2 fit d' = d = 64)
    hidden: int = 64  # hidden units of the one-hidden-layer MLP (not given in the paper)
    dropout: float = 0.0  # Figs. 1-2: "trained without dropout layers"
    permute: bool = True  # C.1: symbolic vocabulary permutation in training (a true permutation)

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
    """Generate every split (:func:`urnlib.languages.logic.generate_dataset`), pack each pair as
    ``premise <sep> hypothesis`` and measure the evaluation splits (:func:`urnlib.languages.logic.split_statistics`:
    mean 2^#vars, the "Mean 2^#Vars" row of Table 2, operators, heuristic baselines)."""
    raw = logic.generate_dataset(task.counts(), seed=task.seed)
    splits = {name: (logic.encode_packed(examples), torch.tensor([e.label for e in examples], dtype=torch.long))
              for name, examples in raw.items()}
    stats = {name: logic.split_statistics(raw[name]) for name in EVAL_SPLITS}
    stats["train"] = {"count": len(raw["train"]), "positive": sum(e.label for e in raw["train"]) / len(raw["train"])}
    return EntailmentData(splits, stats)


def parse_model(spec: str) -> dict[str, Any]:
    """``"gru 64"`` / ``"lstm 64"`` / ``"tpru 64 N64"`` / ``"tpru 64 N4 s8"`` (or ``N=64``, ``s=8``: a notebook's
    parameters cell cannot hold a second ``=`` on a line, so ``N64`` is the form for notebooks) -> ``{"kind", "d",
    "n_roles", "slices"}`` (``n_roles``/``slices`` None for gru and lstm)."""
    m = _SPEC.match(spec.strip()) if isinstance(spec, str) else None
    example = "write 'gru 64', 'lstm 64', 'tpru 64 N64' (64 role vectors) or 'tpru 64 N4 s8' (4 roles, 8 slices)"
    if m is None:
        raise ParameterError(f"model {spec!r} is not understood: {example}")
    kind, d, n, s = m.group(1).lower(), int(m.group(2)), m.group(3), m.group(4)
    check_int(f"d of {spec!r}", d, minimum=1)
    if kind != "tpru":
        if n is not None or s is not None:
            raise ParameterError(f"model {spec!r}: N (roles) and s (slices) are for the TPRU only; {example}")
        return {"kind": kind, "d": d, "n_roles": None, "slices": None}
    if n is None:
        raise ParameterError(f"model {spec!r}: a TPRU needs its number of role vectors, e.g. 'tpru {d} N64'")
    n, s = int(n), 1 if s is None else int(s)
    check_int(f"N of {spec!r}", n, minimum=1)
    check_int(f"s of {spec!r}", s, minimum=1)
    if d % s:
        raise ParameterError(f"model {spec!r}: the slices s={s} must divide d={d} (appendix E splits the binding "
                             f"complex into equal slices); choose s in {[k for k in range(1, d + 1) if d % k == 0]}")
    return {"kind": "tpru", "d": d, "n_roles": n, "slices": s}


def model_label(spec: dict[str, Any]) -> str:
    """``"GRU 64"``, ``"TPRU 64 N=64"``, ``"TPRU 64 N=4 s=8"``."""
    label = f"{spec['kind'].upper()} {spec['d']}"
    if spec["kind"] == "tpru":
        label += f" N={spec['n_roles']}" + (f" s={spec['slices']}" if spec["slices"] > 1 else "")
    return label


def plan_runs(models: list[str], seeds: list[int]) -> dict[str, dict[str, Any]]:
    """Label -> spec for every model string, checking the seeds."""
    if not isinstance(models, (list, tuple)) or not models:
        raise ParameterError(f"models={models!r}: give a non-empty list such as ['gru 64', 'tpru 64 N64', 'lstm 64']")
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ParameterError(f"seeds={seeds!r}: give a non-empty list of initialisation seeds, e.g. [0] or [0, 1, 2]")
    for s in seeds:
        check_int("each seed", s, minimum=0)
    if len(set(seeds)) != len(seeds):
        raise ParameterError(f"seeds={list(seeds)} repeats a seed")
    plan = {}
    for m in models:
        spec = parse_model(m)
        label = model_label(spec)
        if label in plan:
            raise ParameterError(f"models lists {label!r} twice")
        plan[label] = spec
    return plan


def build_model(spec: dict[str, Any], arch: Architecture, seed: int) -> EntailmentModel:
    """The siamese classifier with a ``layers``-layer encoder of ``spec``'s kind, initialised from ``seed``."""
    seed_everything(seed)
    encoder = RecurrentStack(spec["kind"], arch.embedding_size, spec["d"], arch.layers, n_roles=spec["n_roles"],
                             slices=spec["slices"] or 1, dropout=arch.dropout, seed=seed)
    return EntailmentModel(len(logic.VOCAB), arch.embedding_size, encoder, spec["d"], arch.hidden,
                           sep_id=logic.SEP_ID, pad_id=logic.PAD_ID,
                           variable_ids=logic.variable_ids().tolist() if arch.permute else None, dropout=arch.dropout)


def _train_one(spec, arch, task, cfg, label):
    def train(checkpoint):
        data = make_data(task)
        model = build_model(spec, arch, cfg.seed)
        probe = min(TRAIN_PROBE, len(data.splits["train"][1]))
        tx, ty = (t[:probe] for t in data.splits["train"])
        vx, vy = data.splits["valid"]

        def evaluate(m):  # eval mode: no renaming, no dropout
            return {"train_acc": entailment_accuracy(m, tx, ty), "valid_acc": entailment_accuracy(m, vx, vy)}

        history, wall = fit(model, data.train_data(), None, cfg, evaluate=evaluate, checkpoint=checkpoint, desc=label)
        accuracy = {name: entailment_accuracy(model, *data.splits[name], batch_size=256) for name in EVAL_SPLITS}
        final = {
            "accuracy": accuracy,
            "train_loss": history.rows[-1]["train_loss"],
            "n_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "encoder_params": sum(p.numel() for p in model.encoder.parameters() if p.requires_grad),
            "encoder_weights": weight_matrix_count(model.encoder),
            "data": data.stats,
        }
        return history.rows, final, {}, wall

    return train


def run_all(plan: dict[str, dict[str, Any]], seeds: list[int], task: EntailmentTask, arch: Architecture,
            cfg: TrainConfig, store_dir: str | Path, *, retrain: bool = False,
            on_stale: str = "warn") -> dict[str, list[Run]]:
    """Load or train every planned model once per seed; label -> runs (in the order of ``seeds``). The data are
    generated only when something has to be trained. ``cfg.seed`` is replaced by each seed."""
    store = RunStore(store_dir, code_module=__name__)
    runs: dict[str, list[Run]] = {}
    for label, spec in plan.items():
        runs[label] = []
        for seed in seeds:
            run_cfg = TrainConfig(cfg.epochs, cfg.batch_size, cfg.lr, seed)
            params = {"task": asdict(task), "architecture": asdict(arch), "model": spec, "train": asdict(run_cfg)}
            name = f"{label} seed {seed}"
            runs[label].append(store.get_or_train(EXPERIMENT, name, params, _train_one(spec, arch, task, run_cfg, name),
                                                  retrain=retrain, on_stale=on_stale))
    return runs
