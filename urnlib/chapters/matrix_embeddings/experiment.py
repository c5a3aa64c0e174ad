"""The matrix-embedding experiment (paper 003, sec. 4-5): language models whose words are d x d matrices,
trained on what is reachable offline (Brown and the State of the Union addresses; not the paper's UMBC)::

    runs = matrix_embeddings.run(matrix_embeddings.Config.paper())   # every stored run, by name; never trains

:meth:`Config.plan`: every matrix model of ``models`` per seed (``"4.2 dense 10 seed 1"``), and the baselines
on the same split and vocabulary (:mod:`urnlib.chapters.matrix_embeddings.urn_lm`; the data and the analogy
test: :mod:`urnlib.tasks.matrix_lm`). A matrix model trains in
:mod:`urnlib.train` with the loss :func:`token_nll` (``exp(test loss)``: the per-word perplexity) until its
validation loss (``val_loss``, on the ``valid_fraction`` sentences carved from the training side, drawn like
the training ones) stops improving, and keeps its best epoch; the test loss is only reported.
``optimizer`` (Adam, or the authors' Adagrad) and ``train_fraction`` (train on a share of the training
sentences, same vocabulary and held-out sentences) are options whose defaults keep the stored runs' keys.
``ablations`` (:meth:`Config.ablation_plan`, :mod:`urnlib.chapters.matrix_embeddings.ablation`) trains a model
of ``models`` again with another optimiser, learning rate or share of the training sentences (not in the
paper). Analogies (3CosAdd, the Google set) are scored in two representations (:data:`REPRESENTATIONS`):
``exp`` after every epoch (the history's ``analogies_correct``), both at the best epoch when a run ends (its
final metrics), and both again from a run's weights where it stored them by :func:`analogy_scores` (scoring,
not training: it changes no run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora.analogy import evaluate_3cosadd, google_analogy_path
from urnlib.chapters.matrix_embeddings import ablation as matrix_ablation
from urnlib.chapters.matrix_embeddings import resources as matrix_resources
from urnlib.chapters.matrix_embeddings import urn_lm
from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.experiments.training import kept_weights
from urnlib.models import build_model
from urnlib.models.matrix_embedding import ProbabilisticMatrixLM, check_algebra
from urnlib.models.registry import component_of, parse_spec, spec_string
from urnlib.params import ParameterError, check_choice, check_float, check_int
from urnlib.results import Run, RunSpec, Trained
from urnlib.seeds import Seeds, by_label, check_seeds, coords_of
from urnlib.tasks.matrix_lm import LMTask, analogies, analogy_numbers, make_data
from urnlib.tokens import IGNORE
from urnlib.train import TrainConfig, fit, seed_everything

#: LMTask, make_data and analogies are urnlib.tasks.matrix_lm's, named here for the tests
__all__ = ["Config", "LMTask", "make_data", "token_nll", "train_run", "run", "analogies", "embedding_vectors",
           "analogy_vectors", "analogy_scores", "probabilistic_properties", "EXPERIMENT", "MATRIX_KINDS",
           "REPRESENTATIONS"]

EXPERIMENT = "matrix_embeddings"
#: the epoch metrics this chapter's runs may select on (early stopping, kept weights): ``val_loss``, the loss
#: on the ``valid_fraction`` sentences carved from the training side (drawn like the training sentences)
VALIDATION_MONITORS = ("val_loss",)
#: the optimisers the matrix models may train with (``optimizer``): Adam (ours) or Adagrad (the authors' code,
#: learning rate 1.0), each at ``lr``; their display names
MATRIX_OPTIMIZERS = {"adam": "Adam", "adagrad": "Adagrad"}
MATRIX_KINDS = ("4.1", "4.2", "4.3")  #: paper 003 sec. 4.1-4.3
_DATA = ("data.text_corpus", "data.analogy")
_BASELINES = urn_lm.train_run  # word2vec, Kneser-Ney and the URN language model
#: how a word's matrix becomes the vector of the analogy test (flattened allowed entries, 3CosAdd)
REPRESENTATIONS = {
    "log": "the logarithms of the entries: what the authors' code keeps as its parameters (log2) and writes "
           "to the model file its evaluation reads (the log's base changes no cosine)",
    "exp": "the entries themselves (probabilities for 4.2 and 4.3)",
}


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/matrix_embeddings.<scale>.yaml`` says where each value
    comes from). ``seeds``: one run of every trained model per seed (initialisation, data order, dropout,
    word2vec's seed); ``split_seed`` fixes the held-out sentences and the vocabulary of every run. ``epochs``
    and ``urn_epochs`` are caps (see :meth:`train_config`). ``word2vec_size``, ``ngram_order`` or
    ``urn_units`` of 0 leaves that baseline out.

    ``valid_fraction`` (> 0): the share of all sentences, carved from the training side, that every trained
    run selects its epoch on. Options left out of a run's parameters at their defaults: ``optimizer``
    (``"adam"``; ``"adagrad"``, the authors', for the matrix models at ``lr``) and ``train_fraction`` (1:
    every training sentence; less: the first share of them, for every run).
    ``ablations``: extra runs of a model of ``models`` (:meth:`ablation_plan`; none by default)."""

    CHAPTER = "matrix_embeddings"

    seeds: list
    split_seed: int
    corpus: str
    lower: bool
    min_count: int
    max_length: int
    max_sentences: int
    test_fraction: float
    valid_fraction: float
    train_fraction: float
    models: list
    epochs: int
    patience: int
    batch_size: int
    lr: float
    optimizer: str
    word2vec_size: int
    word2vec_epochs: int
    ngram_order: int
    urn_units: int
    urn_dropout: float
    urn_epochs: int
    urn_batch_size: int
    urn_lr: float
    ablations: list  # extra runs of the matrix models, changed (not in the paper): :meth:`ablation_plan`

    def validate(self) -> None:
        check_seeds(self.seeds)
        self.task()
        if not self.valid_fraction > 0:
            raise ParameterError(f"valid_fraction={self.valid_fraction!r} must be > 0 (e.g. 0.05): every run "
                                 "keeps the epoch of its lowest loss on these validation sentences; the test "
                                 "sentences are only reported, never selected on")
        self.model_specs()
        for prefix in ("", "urn_"):
            check_int(f"{prefix}epochs", getattr(self, f"{prefix}epochs"), minimum=1, maximum=100_000)
            check_int(f"{prefix}batch_size", getattr(self, f"{prefix}batch_size"), minimum=1,
                      maximum=1_000_000)
            check_float(f"{prefix}lr", getattr(self, f"{prefix}lr"), minimum=0.0, strict_min=True)
        check_int("patience", self.patience, minimum=1, maximum=100_000)
        if self.optimizer not in MATRIX_OPTIMIZERS:
            raise ParameterError(f"optimizer={self.optimizer!r} is not one the matrix models train with: "
                                 f"write one of {list(MATRIX_OPTIMIZERS)} (adam: ours; adagrad: the authors' "
                                 "code, at lr 1.0)")
        check_int("word2vec_size", self.word2vec_size, minimum=0, maximum=100_000)
        check_int("word2vec_epochs", self.word2vec_epochs, minimum=1, maximum=100_000)
        check_int("ngram_order", self.ngram_order, minimum=0, maximum=5)
        check_int("urn_units", self.urn_units, minimum=0, maximum=4096)
        if self.urn_units % 2:
            raise ParameterError(f"urn_units={self.urn_units}: a URN needs an even number of units (its "
                                 "rotations act on planes), or 0 to leave the URN language model out")
        check_float("urn_dropout", self.urn_dropout, minimum=0.0, maximum=0.99)
        self.ablation_settings()
        matrix_resources.check_corpus(self.corpus)
        google_analogy_path()  # gensim and its questions-words.txt: all runs but Kneser-Ney's score analogies
        matrix_resources.check_memory(self)

    def task(self) -> LMTask:
        """The data of every run: one split (``split_seed``), whatever the run's seed."""
        try:
            return LMTask(self.corpus, self.lower, self.min_count, self.max_length, self.max_sentences,
                          self.test_fraction, self.split_seed, self.valid_fraction, self.train_fraction)
        except ParameterError as err:
            raise ParameterError(str(err).replace("seed=", "split_seed=", 1)) from None

    def model_specs(self) -> list[dict[str, Any]]:
        """The parsed ``models``: ``"4.2 dense 10"`` -> ``{"kind": "4.2", "algebra": "dense", "d": 10}``."""
        if not isinstance(self.models, (list, tuple)) or not self.models:
            raise ParameterError(f"models={self.models!r}: give a non-empty list of 'MODEL ALGEBRA d' with "
                                 f"MODEL in {list(MATRIX_KINDS)}, e.g. ['4.2 diagonal 100', '4.2 dense 10']")
        specs = []
        for model in self.models:
            words = model.split() if isinstance(model, str) else []
            if len(words) == 3 and words[0] in MATRIX_KINDS:
                check_algebra(words[1])  # says why symmetric or skew matrices are no algebra
            spec = parse_spec(model)
            if spec["kind"] not in MATRIX_KINDS:
                raise ParameterError(f"models contains {model!r}, which is not a matrix model: write 'MODEL "
                                     f"ALGEBRA d' with MODEL in {list(MATRIX_KINDS)}, e.g. '4.2 dense 10'")
            if spec in specs:
                raise ParameterError(f"models names {spec_string(spec)!r} twice; every model is trained once")
            specs.append(spec)
        return specs

    @property
    def monitor(self) -> str:
        """The loss every trained run selects on: the validation loss."""
        return "val_loss"

    def train_config(self, seed: int, urn: bool = False) -> TrainConfig:
        """A matrix model's (or the URN language model's) training: up to ``epochs`` epochs, stopped after
        ``patience`` without a lower validation loss (:attr:`monitor`), ending with the best epoch's weights.
        The matrix models train with ``optimizer``; the URN language model with Adam (paper 000's)."""
        epochs, batch, lr, optimizer = ((self.urn_epochs, self.urn_batch_size, self.urn_lr, "adam") if urn
                                        else (self.epochs, self.batch_size, self.lr, self.optimizer))
        return TrainConfig(epochs, batch, lr, seed, optimizer=optimizer, monitor=self.monitor, keep_best=True,
                           patience=self.patience)

    def ablation_settings(self) -> dict[str, matrix_ablation.Ablation]:
        """``{label: Ablation}`` of ``ablations`` (:func:`.matrix_ablation.ablation_settings`: the chapter's
        ``optimizer``, ``lr``, ``batch_size``, ``epochs``, ``train_fraction`` and ``seeds`` are an entry's
        defaults)."""
        chapter = {"optimizer": self.optimizer, "lr": self.lr, "batch_size": self.batch_size,
                   "epochs": self.epochs, "train_fraction": self.train_fraction}
        return matrix_ablation.ablation_settings(self.ablations, models=self.model_specs(), chapter=chapter,
                                                 seeds=self.seeds, optimizers=MATRIX_OPTIMIZERS)

    def _matrix_spec(self, m: dict[str, Any], seed: int, ablation=None) -> RunSpec:
        """The run of matrix model ``m`` under ``seed``: the chapter's, or trained as ``ablation`` says (its
        coordinate ``ablation``: what it changes, ``""`` at the chapter's values)."""
        task, train, label, coords = self.task(), self.train_config(seed), spec_string(m), {}
        if ablation is not None:
            task = replace(task, train_fraction=ablation.train_fraction)
            train = replace(train, optimizer=ablation.optimizer, lr=ablation.lr,
                            batch_size=ablation.batch_size, epochs=ablation.epochs)
            label, coords = ablation.label, {"ablation": ablation.setting}
        return RunSpec.of(EXPERIMENT, label, {"task": task.params(), "model": m, "train": train.params()},
                          ("train.loop", *_DATA, "experiment.matrix_embeddings", component_of(m)),
                          train_run, seed=seed, model=spec_string(m), **coords)

    def ablation_plan(self) -> dict[str, list[RunSpec]]:
        """``{label: [one RunSpec per seed]}`` of ``ablations``, each trained exactly as the chapter's runs of
        its model but for what it changes; an entry at the chapter's values names the chapter's runs."""
        return {label: [self._matrix_spec(a.model, s, a) for s in a.seeds]
                for label, a in self.ablation_settings().items()}

    def plan(self) -> list[RunSpec]:
        """Each matrix model of ``models`` per seed, then word2vec per seed, Kneser-Ney once (count-based and
        deterministic: it depends on the split only), the URN language model per seed, and the runs of
        ``ablations`` that are not the chapter's already (:meth:`ablation_plan`)."""
        task, baseline = self.task().params(), _BASELINES
        specs = [self._matrix_spec(m, s) for m in self.model_specs() for s in self.seeds]
        if self.word2vec_size:
            model = {"kind": "word2vec", "size": self.word2vec_size, "epochs": self.word2vec_epochs}
            specs += [RunSpec.of(EXPERIMENT, f"word2vec {self.word2vec_size}",
                                 {"task": task, "model": model, "seed": s},
                                 (*_DATA, "experiment.matrix_embeddings", "model.word2vec"), baseline,
                                 seed=s, model=f"word2vec {self.word2vec_size}")
                      for s in self.seeds]
        if self.ngram_order:  # "seed": the split's, the only one it depends on
            model = {"kind": "kneser-ney", "order": self.ngram_order}
            specs.append(RunSpec.of(EXPERIMENT, f"Kneser-Ney {self.ngram_order}-gram",
                                    {"task": task, "model": model, "seed": self.split_seed},
                                    ("data.text_corpus", "experiment.matrix_embeddings", "model.kneser_ney"),
                                    baseline, model=f"Kneser-Ney {self.ngram_order}-gram"))
        if self.urn_units:
            model = {"kind": "urn", "n": self.urn_units, "k": None, "dropout": self.urn_dropout}
            specs += [RunSpec.of(EXPERIMENT, f"URN {self.urn_units}",
                                 {"task": task, "model": model,
                                  "train": self.train_config(s, urn=True).params()},
                                 ("train.loop", *_DATA, "experiment.urn_lm", "model.urn"), baseline,
                                 seed=s, model=f"URN {self.urn_units}")
                      for s in self.seeds]
        out = {s.name: s for s in specs}
        for spec in (s for group in self.ablation_plan().values() for s in group):
            if spec.name in out and out[spec.name].key != spec.key:
                raise ParameterError(f"two different runs are named {spec.name!r}: change an ablation entry")
            out.setdefault(spec.name, spec)
        return list(out.values())

    def view(self, runs: dict[str, Run]) -> dict[str, Seeds]:  # Kneser-Ney: one run
        """The chapter's runs by model (``{label: Seeds}``), without the ablations' own."""
        return by_label({n: r for n, r in runs.items() if "ablation" not in coords_of(r)})

    def ablation_view(self, runs: dict[str, Run]) -> dict[str, Seeds]:
        """``{label: Seeds}`` of every setting of ``ablations`` (:meth:`ablation_plan`), the chapter's own
        runs included where an entry names them."""
        return {label: Seeds(label, [runs[s.name] for s in specs], [s.coords["seed"] for s in specs])
                for label, specs in self.ablation_plan().items()}

    def summary(self) -> str:
        limit = (f"the first {self.max_sentences:,} sentences of each source" if self.max_sentences
                 else "all sentences")
        labels = list(self.view({s.name: s for s in self.plan()}))
        held = f"{self.test_fraction:.0%} held out for testing, {self.valid_fraction:.0%} for validation"
        if self.train_fraction < 1:
            held += f", trained on the first {self.train_fraction:.0%} of the training sentences"
        extra = "".join(f"; ablation {k}{'' if a.setting else ' (as the chapter)'}, seeds {list(a.seeds)}"
                        for k, a in self.ablation_settings().items())
        return (f"Built at {self.describe()}: corpus {self.corpus} ({limit} of 1 to {self.max_length} words, "
                f"{'lower-cased, ' if self.lower else ''}words seen fewer than {self.min_count} times -> "
                f"`<unk>`, {held}); seeds {list(self.seeds)}; matrix models "
                f"{', '.join(map(str, self.models))}: {MATRIX_OPTIMIZERS[self.optimizer]} lr {self.lr}, "
                f"batch {self.batch_size}, until the validation loss has not improved for {self.patience} "
                f"epoch{'s' * (self.patience > 1)} (at most {self.epochs}); models: "
                + ", ".join(labels) + extra + f" ({len(self.plan())} runs).")


def token_nll(model, tokens: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The loss of :func:`urnlib.train.fit` for the matrix models: ``-log P(w_t | context)`` of every word,
    averaged over the words (``targets != IGNORE``), and their count. 4.2 and 4.3 give the probability of each
    observed word directly (their constraints normalise them), 4.1 by a softmax over the vocabulary."""
    mask = targets != IGNORE
    count = int(mask.sum())
    logp = model.token_log_probs(tokens.masked_fill(~mask, 0), mask)  # (B, T), 0 outside the mask
    return -logp.sum() / max(count, 1), count


def analogy_vectors(model, representation: str = "exp") -> np.ndarray:
    """``(V, n_free)`` float64: every word's matrix, flattened to its allowed entries (3CosAdd on flattened
    matrices, paper 003 sec. 5; the entries outside the algebra are 0 for every word and change no cosine),
    in one of :data:`REPRESENTATIONS`. 4.1's matrices (its parameters, of any sign) have no ``log``."""
    check_choice("representation", representation, list(REPRESENTATIONS))
    with torch.no_grad():
        if representation == "exp":
            return model.free_entries().detach().cpu().double().numpy()
        if not hasattr(model, "log_free_entries"):
            raise ParameterError(f"representation='log': a {type(model).__name__}'s entries are not "
                                 "probabilities (they may be <= 0); only 4.2 and 4.3 have log entries")
        return model.log_free_entries().detach().cpu().double().numpy()


def embedding_vectors(model) -> np.ndarray:
    """The vectors of the per-epoch analogy score: :func:`analogy_vectors` in representation ``exp``."""
    return analogy_vectors(model, "exp")


def probabilistic_properties(model: ProbabilisticMatrixLM, rng: np.random.Generator) -> dict[str, Any]:
    """Sec. 4.2 on trained matrices (float64): the rows of M_*, (1/d) 1^T M_*^n 1, the sum of P over all
    strings of length 1 and 2 (enumerated: V and V^2 strings), and where inserting M_* keeps a probability."""
    with torch.no_grad():
        free = model.free_entries().double()  # (V, n_free)
        V, d = free.shape[0], model.d
        one = torch.ones(d, dtype=torch.float64, device=free.device)
        if model.elementwise:  # diagonal: never form the (V, d, d) tensor (1.4 GB at V = 18k, d = 100)
            matrix = lambda w: torch.diag(free[w])  # noqa: E731
            star, a, b = torch.diag(free.sum(0)), free / d, free
        else:
            M = model._dense(free)  # (V, d, d)
            matrix = lambda w: M[w]  # noqa: E731
            star, a, b = M.sum(0), (one @ M) / d, M @ one  # a: (1/d) 1^T M_w, b: M_w 1, both (V, d)
        power = [float(one @ torch.linalg.matrix_power(star, n) @ one / d) for n in range(1, 6)]
        length1 = float(a.sum())  # sum over the V strings w of (1/d) 1^T M_w 1
        length2 = sum(float((a[i : i + 512] @ b.T).sum()) for i in range(0, V, 512))  # all V^2 pairs
        eye = torch.eye(d, dtype=torch.float64, device=free.device)
        p = lambda mats: float(one @ torch.linalg.multi_dot([*mats, eye]) @ one / d)  # noqa: E731
        end, middle = [], []
        for _ in range(20):
            w1, w2 = (int(x) for x in rng.integers(0, V, 2))
            m1, m2 = matrix(w1), matrix(w2)
            end.append(abs(p([m1, m2, star]) / p([m1, m2]) - 1))
            middle.append(abs(p([m1, star, m2]) / p([m1, m2]) - 1))
        return {"row_sum_error": float((star.sum(1) - 1).abs().max()), "one_star_power": power,
                "sum_length1": length1, "sum_length2": length2,
                "star_at_end_change": max(end), "star_in_middle_change": float(np.median(middle))}


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train one matrix-model run of :meth:`Config.plan` (the baselines' runs are
    :func:`urnlib.chapters.matrix_embeddings.urn_lm.train_run`'s)."""
    task, cfg = LMTask(**spec.params["task"]), TrainConfig(**spec.params["train"])
    d = make_data(task)
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], len(d.vocab.tokens))
    evaluate = lambda m: {"analogies_correct": evaluate_3cosadd(  # noqa: E731
        embedding_vectors(m), d.vocab.tokens, analogies()).correct}
    # every epoch's row: train_loss, test_loss (reported), val_loss (with validation sentences: what the
    # monitor watches) and analogies_correct (entries, exp)
    history, _ = fit(model, d.train, d.test, cfg, valid=d.valid, loss=token_nll, evaluate=evaluate,
                     checkpoint=checkpoint, desc=spec.name, eval_batch_size=cfg.batch_size)
    final = dict(history.best_row)  # the monitor's best epoch, whose weights the model ends with
    numbers = analogy_numbers(embedding_vectors(model), d)
    sections = numbers.pop("sections")
    counts = ("correct", "answered", "questions")
    final.update(numbers, perplexity=math.exp(final["test_loss"]), n_params=model.parameter_count,
                 analogy_sections={s: {c: int(sections.loc[s, c]) for c in counts} for s in sections.index})
    if "val_loss" in final:
        final["val_perplexity"] = math.exp(final["val_loss"])
    if spec.params["model"]["kind"] == "4.2":
        final["properties"] = probabilistic_properties(model, np.random.default_rng(cfg.seed))
    if spec.params["model"]["kind"] != "4.1":  # the log entries (what the authors' code writes out)
        final["analogy_log_sections"] = _sections(evaluate_3cosadd(analogy_vectors(model, "log"),
                                                                   d.vocab.tokens, analogies()))
    weights, final["weights_stored"] = kept_weights(model)  # both scores are in final: weights optional
    return Trained(history.rows, final, weights, history.wall_time, history.cpu_time)


def _sections(result) -> dict[str, dict[str, int]]:
    """``{section: {"correct", "answered"}}`` of an analogy result, with ``"total"``."""
    table = result.per_section()
    return {s: {c: int(table.loc[s, c]) for c in ("correct", "answered")} for s in table.index}


def analogy_scores(runs: dict[str, Run]) -> dict[str, dict[str, dict | None]]:
    """Both representations' analogy answers of every matrix-model run, from its stored weights (scoring, not
    training: nothing is stored). ``{run name: {"exp": sections, "log": sections or None}}``, sections as
    ``{section: {"correct", "answered"}}`` with ``"total"``; ``log`` is None for 4.1 (no log entries). A run
    stored without weights (over the store's size limit) gives the answers it recorded at training time."""
    out: dict[str, dict[str, dict | None]] = {}
    for name, run in runs.items():
        spec = run.params["model"]
        if spec["kind"] not in MATRIX_KINDS:
            continue
        if not run.weights:  # scored at training time (a legacy run has no log score)
            out[name] = {"exp": {s: {c: v[c] for c in ("correct", "answered")}
                                 for s, v in run.final["analogy_sections"].items()},
                         "log": run.final.get("analogy_log_sections")}
            continue
        d = make_data(LMTask(**run.params["task"]))
        model = run.model(len(d.vocab.tokens))
        score = lambda rep: _sections(evaluate_3cosadd(  # noqa: E731
            analogy_vectors(model, rep), d.vocab.tokens, analogies()))
        out[name] = {rep: None if rep == "log" and spec["kind"] == "4.1" else score(rep)
                     for rep in REPRESENTATIONS}
    return out


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned model and baseline, by name (trained first where ``mode`` asks for it);
    ``store`` and ``mode`` default to the config's (see :func:`urnlib.experiments.config.run_config`)."""
    return run_config(config, store=store, mode=mode)
