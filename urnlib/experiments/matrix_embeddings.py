"""The matrix-embedding experiment (paper 003, sec. 4-5): language models whose words are d x d matrices.

The paper trains the direct probabilistic model (4.2) with 100 x 100 diagonal matrices ("commutative", a
fallback to word vectors) and with 10 x 10 dense ones on 3.3G words of the UMBC corpus, and counts the Google
analogy questions each answers by 3CosAdd on the flattened matrices (555 and 81 correct); the continuous WFSA
(4.3) answered 1 or 2. Here the corpus is what is reachable offline: the Brown corpus and the State of the
Union addresses (:mod:`urnlib.corpora.text`), about 3M words, a thousand times fewer.

The chapter's protocol, callable without a notebook::

    from urnlib.experiments import matrix_embeddings
    runs = matrix_embeddings.run(matrix_embeddings.Config.paper())   # every stored run, by name; never trains

:meth:`Config.plan` has one run per matrix model of ``models``, and the baselines on the same sentences and
vocabulary: word2vec, an interpolated Kneser-Ney n-gram and a URN language model
(:mod:`urnlib.experiments.urn_lm`). Every matrix model trains in the one loop of :mod:`urnlib.train` with the
loss :func:`token_nll`, the models' own negative log-likelihood per word (``exp(test loss)`` is the per-word
perplexity, no end-of-sentence symbol); the analogy score is measured after every epoch. A run stores its
weights, and the numbers the chapter shows: the analogy counts per section, the nearest neighbours of a few
probe words, and the probabilistic properties of sec. 4.2 measured on the trained matrices.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.corpora.analogy import evaluate_3cosadd, google_analogy_path, read_analogies
from urnlib.experiments import matrix_resources
from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.models import build_model
from urnlib.models.matrix_embedding import PAD, ProbabilisticMatrixLM, check_algebra
from urnlib.models.registry import component_of, parse_spec, spec_string
from urnlib.params import ParameterError, check_bool, check_choice, check_float, check_int
from urnlib.results import Run, RunSpec, Trained
from urnlib.tokens import IGNORE, TokenData
from urnlib.train import TrainConfig, fit, seed_everything

__all__ = ["Config", "LMTask", "LMData", "make_data", "token_nll", "train_run", "run", "analogies",
           "neighbours", "embedding_vectors", "probabilistic_properties", "EXPERIMENT", "MATRIX_KINDS",
           "PROBES"]

EXPERIMENT = "matrix_embeddings"
MATRIX_KINDS = ("4.1", "4.2", "4.3")  #: paper 003 sec. 4.1-4.3
#: words whose nearest neighbours a run stores
PROBES = ("king", "france", "good", "war", "president", "three", "america", "money")
_DATA = ("data.text_corpus", "data.analogy")
_MAX_SENTENCES = 10_000_000  # a bound on max_sentences (both corpora have about 120k sentences)


@dataclass(frozen=True)
class LMTask:
    """The corpus and its preparation (the values come from :class:`Config`)."""

    corpus: str  # "brown", "sotu" or "brown+sotu"
    lower: bool  # lower-case every token
    min_count: int  # training words seen fewer times become <unk>
    max_length: int  # longer sentences are dropped
    max_sentences: int  # the first this many sentences of each source (0: all)
    test_fraction: float  # held-out sentences for the perplexity (seeded shuffle)
    seed: int

    def __post_init__(self):
        check_choice("corpus", self.corpus, list(text.CORPORA))
        check_bool("lower", self.lower)
        check_int("min_count", self.min_count, minimum=1, maximum=_MAX_SENTENCES)
        check_int("max_length", self.max_length, minimum=2, maximum=1000)
        check_int("max_sentences", self.max_sentences, minimum=0, maximum=_MAX_SENTENCES)
        check_float("test_fraction", self.test_fraction, minimum=0.0, maximum=0.5, strict_min=True)
        check_int("seed", self.seed, minimum=0)


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/matrix_embeddings.<scale>.yaml`` says where each value
    comes from). ``word2vec_size``, ``ngram_order`` or ``urn_units`` of 0 leaves that baseline out."""

    CHAPTER = "matrix_embeddings"

    seed: int
    corpus: str
    lower: bool
    min_count: int
    max_length: int
    max_sentences: int
    test_fraction: float
    models: list
    epochs: int
    batch_size: int
    lr: float
    word2vec_size: int
    word2vec_epochs: int
    ngram_order: int
    urn_units: int
    urn_dropout: float
    urn_epochs: int
    urn_batch_size: int
    urn_lr: float

    def validate(self) -> None:
        self.task()
        self.model_specs()
        for prefix in ("", "urn_"):
            check_int(f"{prefix}epochs", getattr(self, f"{prefix}epochs"), minimum=1, maximum=100_000)
            check_int(f"{prefix}batch_size", getattr(self, f"{prefix}batch_size"), minimum=1,
                      maximum=1_000_000)
            check_float(f"{prefix}lr", getattr(self, f"{prefix}lr"), minimum=0.0, strict_min=True)
        check_int("word2vec_size", self.word2vec_size, minimum=0, maximum=100_000)
        check_int("word2vec_epochs", self.word2vec_epochs, minimum=1, maximum=100_000)
        check_int("ngram_order", self.ngram_order, minimum=0, maximum=5)
        check_int("urn_units", self.urn_units, minimum=0, maximum=4096)
        if self.urn_units % 2:
            raise ParameterError(f"urn_units={self.urn_units}: a URN needs an even number of units (its "
                                 "rotations act on planes), or 0 to leave the URN language model out")
        check_float("urn_dropout", self.urn_dropout, minimum=0.0, maximum=0.99)
        matrix_resources.check_corpus(self.corpus)
        google_analogy_path()  # gensim and its questions-words.txt: all runs but Kneser-Ney's score analogies
        matrix_resources.check_memory(self)

    def task(self) -> LMTask:
        return LMTask(self.corpus, self.lower, self.min_count, self.max_length, self.max_sentences,
                      self.test_fraction, self.seed)

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

    def train_config(self) -> TrainConfig:
        return TrainConfig(self.epochs, self.batch_size, self.lr, self.seed)

    def plan(self) -> list[RunSpec]:
        """The matrix models of ``models``, then word2vec, Kneser-Ney and the URN language model."""
        task, cfg = asdict(self.task()), asdict(self.train_config())
        train = f"{__name__}:train_run"
        specs = [RunSpec(EXPERIMENT, spec_string(m), {"task": task, "model": m, "train": cfg},
                         ("train.loop", *_DATA, "experiment.matrix_embeddings", component_of(m)), train)
                 for m in self.model_specs()]
        if self.word2vec_size:
            model = {"kind": "word2vec", "size": self.word2vec_size, "epochs": self.word2vec_epochs}
            specs.append(RunSpec(EXPERIMENT, f"word2vec {self.word2vec_size}",
                                 {"task": task, "model": model, "seed": self.seed},
                                 (*_DATA, "experiment.matrix_embeddings", "model.word2vec"), train))
        if self.ngram_order:
            model = {"kind": "kneser-ney", "order": self.ngram_order}
            specs.append(RunSpec(EXPERIMENT, f"Kneser-Ney {self.ngram_order}-gram",
                                 {"task": task, "model": model, "seed": self.seed},
                                 ("data.text_corpus", "experiment.matrix_embeddings", "model.kneser_ney"),
                                 train))
        if self.urn_units:
            model = {"kind": "urn", "n": self.urn_units, "k": None, "dropout": self.urn_dropout}
            urn_cfg = asdict(TrainConfig(self.urn_epochs, self.urn_batch_size, self.urn_lr, self.seed))
            specs.append(RunSpec(EXPERIMENT, f"URN {self.urn_units}",
                                 {"task": task, "model": model, "train": urn_cfg},
                                 ("train.loop", *_DATA, "experiment.urn_lm", "model.urn"),
                                 "urnlib.experiments.urn_lm:train_run"))
        return specs

    def summary(self) -> str:
        limit = (f"the first {self.max_sentences:,} sentences of each source" if self.max_sentences
                 else "all sentences")
        return (f"Built at {self.describe()}: corpus {self.corpus} ({limit} of 1 to {self.max_length} words, "
                f"{'lower-cased, ' if self.lower else ''}words seen fewer than {self.min_count} times -> "
                "`<unk>`, "
                f"{self.test_fraction:.0%} held out); matrix models {', '.join(map(str, self.models))}: "
                f"{self.epochs} epochs, Adam lr {self.lr}, batch {self.batch_size}; runs: "
                + ", ".join(s.name for s in self.plan()) + ".")


@dataclass
class LMData:
    vocab: text.Vocabulary
    train: TokenData  # (N, T) word ids padded with PAD; targets 0 at the words (scored), IGNORE at padding
    test: TokenData
    train_ids: list[list[int]]
    test_ids: list[list[int]]
    stats: dict[str, Any]


def _encode(sentences: list[list[int]]) -> TokenData:
    """The models score their own input words: the targets only mark them (0) and the padding (IGNORE)."""
    T = max(len(s) for s in sentences)
    x = torch.full((len(sentences), T), PAD, dtype=torch.long)
    for i, s in enumerate(sentences):
        x[i, : len(s)] = torch.tensor(s)
    return TokenData(x, torch.where(x == PAD, IGNORE, 0))


@lru_cache(maxsize=2)
def make_data(task: LMTask) -> LMData:
    """Sentences of the corpus (length 1..max_length), split, vocabulary of the training part, ids."""
    sentences = [s for s in text.corpus(task.corpus, lower=task.lower,
                                        max_sentences=task.max_sentences or None)
                 if 0 < len(s) <= task.max_length]
    if len(sentences) < 20:
        raise ParameterError(f"only {len(sentences)} sentences of {task.corpus!r} with 1..{task.max_length} "
                             "words: raise max_sentences or max_length")
    fractions = (1 - task.test_fraction, 0.0, task.test_fraction)
    split = text.split_by_fraction(sentences, fractions, seed=task.seed)
    vocab = text.build_vocabulary(split.train, min_count=task.min_count)
    ids = lambda part: [[vocab.index.get(w, 0) for w in s] for s in part]  # noqa: E731 - 0 is <unk>
    train, test = ids(split.train), ids(split.test)
    n_tokens = sum(map(len, train))
    stats = {"corpus": task.corpus, "train_sentences": len(train), "test_sentences": len(test),
             "train_tokens": n_tokens, "test_tokens": sum(map(len, test)), "vocabulary": len(vocab.tokens),
             "unk_share_train": sum(w == 0 for s in train for w in s) / n_tokens}
    return LMData(vocab, _encode(train), _encode(test), train, test, stats)


def token_nll(model, tokens: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The loss of :func:`urnlib.train.fit` for the matrix models: ``-log P(w_t | context)`` of every word,
    averaged over the words (``targets != IGNORE``), and their count. 4.2 and 4.3 give the probability of each
    observed word directly (their constraints normalise them), 4.1 by a softmax over the vocabulary."""
    mask = targets != IGNORE
    count = int(mask.sum())
    logp = model.token_log_probs(tokens.masked_fill(~mask, 0), mask)  # (B, T), 0 outside the mask
    return -logp.sum() / max(count, 1), count


@lru_cache(maxsize=1)
def analogies():
    """The Google analogy questions (gensim's questions-words.txt), lower-cased."""
    return read_analogies(google_analogy_path(), lower=True)


def embedding_vectors(model) -> np.ndarray:
    """``(V, n_free)`` the word matrices' allowed entries, flattened (3CosAdd on flattened matrices, paper 003
    sec. 5; the entries outside the algebra are 0 for every word, so they change no cosine)."""
    with torch.no_grad():
        return model.free_entries().detach().cpu().double().numpy()


def neighbours(vectors: np.ndarray, words: list[str], probes=PROBES, k: int = 5) -> dict[str, list[str]]:
    """The ``k`` nearest words by cosine of each probe word in the vocabulary."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-300)
    index = {w: i for i, w in enumerate(words)}
    out = {}
    for p in probes:
        if p in index:
            sims = unit @ unit[index[p]]
            sims[index[p]] = -np.inf
            out[p] = [words[j] for j in np.argsort(-sims, kind="stable")[:k]]
    return out


def probabilistic_properties(model: ProbabilisticMatrixLM, rng: np.random.Generator) -> dict[str, Any]:
    """Sec. 4.2 on trained matrices (float64): the rows of M_*, (1/d) 1^T M_*^n 1, the sum of P over all
    strings of length 1 and 2 (enumerated: V and V^2 strings), and where inserting M_* keeps a probability."""
    with torch.no_grad():
        free = model.free_entries().double()  # (V, n_free)
        V, d = free.shape[0], model.d
        one = torch.ones(d, dtype=torch.float64)
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
        eye = torch.eye(d, dtype=torch.float64)
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


def _analogy_numbers(vectors: np.ndarray, d: LMData) -> dict[str, Any]:
    result = evaluate_3cosadd(vectors, d.vocab.tokens, analogies())
    return {"analogies_correct": result.correct, "analogies_answered": result.answered,
            "analogies_skipped": result.skipped, "neighbours": neighbours(vectors, d.vocab.tokens),
            "data": d.stats, "sections": result.per_section()}


def _train_matrix(spec: RunSpec, checkpoint: Path | None) -> Trained:
    task, cfg = LMTask(**spec.params["task"]), TrainConfig(**spec.params["train"])
    d = make_data(task)
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], len(d.vocab.tokens))
    evaluate = lambda m: {"analogies_correct": evaluate_3cosadd(  # noqa: E731
        embedding_vectors(m), d.vocab.tokens, analogies()).correct}
    history, _ = fit(model, d.train, d.test, cfg, loss=token_nll, evaluate=evaluate, checkpoint=checkpoint,
                     desc=spec.name, eval_batch_size=cfg.batch_size)
    final = dict(history.rows[-1])
    numbers = _analogy_numbers(embedding_vectors(model), d)
    sections = numbers.pop("sections")
    counts = ("correct", "answered", "questions")
    final.update(numbers, perplexity=math.exp(final["test_loss"]), n_params=model.parameter_count,
                 analogy_sections={s: {c: int(sections.loc[s, c]) for c in counts} for s in sections.index})
    if spec.params["model"]["kind"] == "4.2":
        final["properties"] = probabilistic_properties(model, np.random.default_rng(cfg.seed))
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def _word2vec(d: LMData, size: int, epochs: int, seed: int) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """gensim's CBOW on the training sentences; its vectors (V, size) in vocabulary order are the weights."""
    from gensim.models import Word2Vec

    sentences = [[d.vocab.tokens[w] for w in s] for s in d.train_ids]
    model = Word2Vec(sentences, vector_size=size, window=5, min_count=1, workers=1, seed=seed, epochs=epochs)
    vectors = np.stack([model.wv[w] if w in model.wv else np.zeros(size, np.float32) for w in d.vocab.tokens])
    final = _analogy_numbers(vectors.astype(np.float64), d)
    del final["sections"]
    final["n_params"] = 2 * size * len(d.vocab.tokens)
    return final, {"vectors": torch.from_numpy(vectors)}


def _kneser_ney(d: LMData, order: int) -> dict[str, Any]:
    """Interpolated Kneser-Ney on the same split; the per-word perplexity leaves the end-of-sentence
    prediction out, like the matrix models, which have none (``perplexity_with_end`` keeps it)."""
    from urnlib.models.ngram import KneserNey

    words = lambda part: [[d.vocab.tokens[w] for w in s] for s in part]  # noqa: E731
    lm = KneserNey(order).fit(words(d.train_ids), d.vocab.tokens)
    total, count = 0.0, 0
    for s in words(d.test_ids):
        context = ["<s>"] * (order - 1)
        for w in s:
            total -= lm.logprob(w, context)
            count += 1
            context = context[1:] + [w]
    return {"perplexity": math.exp(total / count), "perplexity_with_end": lm.perplexity(words(d.test_ids)),
            "order": order, "data": d.stats}


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train one run of :meth:`Config.plan`: a matrix model, word2vec or Kneser-Ney. The baselines store one
    history row (their final numbers); Kneser-Ney's counts are Python dicts, not tensors: it stores no weights
    (refitting it from the corpus takes seconds and gives the same model)."""
    model = spec.params["model"]
    if model["kind"] in MATRIX_KINDS:
        return _train_matrix(spec, checkpoint)
    d = make_data(LMTask(**spec.params["task"]))
    t0, c0 = time.perf_counter(), time.process_time()
    if model["kind"] == "word2vec":
        final, weights = _word2vec(d, model["size"], model["epochs"], spec.params["seed"])
    else:
        final, weights = _kneser_ney(d, model["order"]), {}
    return Trained([dict(final, epoch=1)], final, weights, time.perf_counter() - t0, time.process_time() - c0)


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> dict[str, Run]:
    """The stored run of every planned model and baseline, by name (trained first where ``mode`` asks for it).

    Args:
        config: the chapter's parameters.
        store: the run store (default: ``config.store``, relative to ``notebooks/``).
        mode: ``load``, ``train`` or ``retrain`` (default: ``config.mode``); see :mod:`urnlib.runner`.
    """
    return run_config(config, store=store, mode=mode)
