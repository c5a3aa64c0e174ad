"""The sentences of the matrix-embedding chapter's corpora (paper 003 sec. 4-5; Brown and the State of the
Union addresses, the stand-ins for UMBC) and the analogy test its word representations answer: its data and
its evaluation.

:func:`make_data` reads the corpus, keeps the sentences of 1 .. ``max_length`` words, holds out
``test_fraction`` of them (a seeded shuffle), optionally carves ``valid_fraction`` validation sentences from
the training side (a second seeded shuffle: drawn like the training sentences, disjoint from them and from the
test), builds the vocabulary of the training part (rarer words ``<unk>``), optionally keeps only the first
``train_fraction`` of the training sentences to train on (same vocabulary, same test and validation
sentences) and pads the sentences with :data:`PAD`; :func:`lm_data` makes next-word data of them. A run's
word vectors answer the Google analogy questions by 3CosAdd (:func:`analogy_numbers`, with the
:func:`neighbours` of a few probe words). Used by :mod:`urnlib.chapters.matrix_embeddings.experiment` and its
baselines, :mod:`urnlib.chapters.matrix_embeddings.urn_lm`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.corpora.analogy import evaluate_3cosadd, google_analogy_path, read_analogies
from urnlib.params import ParameterError, check_bool, check_choice, check_float, check_int
from urnlib.tokens import IGNORE, TokenData

__all__ = ["LMTask", "LMData", "make_data", "split_sentences", "lm_data", "analogies", "analogy_numbers",
           "neighbours", "PROBES", "PAD", "OPTION_DEFAULTS"]

PAD = -1  #: padding id of (N, T) token tensors of sentences (no word: never a vocabulary id)
_MAX_SENTENCES = 10_000_000  # a bound on max_sentences (both corpora have about 120k sentences)


def _share(name: str, value: Any, maximum: float, strict_min: bool, what: str) -> None:
    """``value`` is a number in ``[0, maximum]`` (``(0, maximum]`` with ``strict_min``), else a ParameterError
    naming ``name`` and saying what to write."""
    try:
        check_float(name, value, minimum=0.0, maximum=maximum, strict_min=strict_min)
    except ParameterError as err:
        raise ParameterError(f"{err}: write {what}") from None


#: the options whose default leaves a run's task parameters as they were before they existed (see
#: :meth:`LMTask.params`): ``valid_fraction`` 0 (no validation sentences), ``train_fraction`` 1 (all)
OPTION_DEFAULTS = {"valid_fraction": 0.0, "train_fraction": 1.0}


@dataclass(frozen=True)
class LMTask:
    """The corpus and its preparation (the values come from a chapter's Config)."""

    corpus: str  # "brown", "sotu" or "brown+sotu"
    lower: bool  # lower-case every token
    min_count: int  # training words seen fewer times become <unk>
    max_length: int  # longer sentences are dropped
    max_sentences: int  # the first this many sentences of each source (0: all)
    test_fraction: float  # held-out sentences for the perplexity (seeded shuffle)
    seed: int
    valid_fraction: float = 0.0  # validation sentences carved from the training side (share of all; 0: none)
    train_fraction: float = 1.0  # train on the first this share of the training sentences (1: all)

    def __post_init__(self):
        check_choice("corpus", self.corpus, list(text.CORPORA))
        check_bool("lower", self.lower)
        check_int("min_count", self.min_count, minimum=1, maximum=_MAX_SENTENCES)
        check_int("max_length", self.max_length, minimum=2, maximum=1000)
        check_int("max_sentences", self.max_sentences, minimum=0, maximum=_MAX_SENTENCES)
        check_float("test_fraction", self.test_fraction, minimum=0.0, maximum=0.5, strict_min=True)
        check_int("seed", self.seed, minimum=0)
        _share("valid_fraction", self.valid_fraction, 0.5, False,
               "a share of all sentences in [0, 0.5] (0: no validation sentences), e.g. valid_fraction: 0.05")
        if self.test_fraction + self.valid_fraction > 0.9:
            raise ParameterError(f"valid_fraction={self.valid_fraction} with test_fraction="
                                 f"{self.test_fraction} leaves under a tenth of the sentences to train on: "
                                 "lower valid_fraction (e.g. valid_fraction: 0.05)")
        _share("train_fraction", self.train_fraction, 1.0, True,
               "a share of the training sentences in (0, 1] (1: all of them), e.g. train_fraction: 0.5")

    def params(self) -> dict[str, Any]:
        """The task as a run's parameters: ``valid_fraction`` and ``train_fraction`` only where they are not
        their defaults (:data:`OPTION_DEFAULTS`), so that the runs stored before these options existed keep
        their keys."""
        out = asdict(self)
        for name, default in OPTION_DEFAULTS.items():
            if out[name] == default:
                del out[name]
        return out


@dataclass
class LMData:
    vocab: text.Vocabulary
    train: TokenData  # (N, T) word ids padded with PAD; targets 0 at the words (scored), IGNORE at padding
    test: TokenData
    train_ids: list[list[int]]
    test_ids: list[list[int]]
    stats: dict[str, Any]
    valid: TokenData | None = None  # the validation sentences (None: valid_fraction 0)
    valid_ids: list[list[int]] = field(default_factory=list)


def _encode(sentences: list[list[int]]) -> TokenData:
    """The models score their own input words: the targets only mark them (0) and the padding (IGNORE)."""
    T = max(len(s) for s in sentences)
    x = torch.full((len(sentences), T), PAD, dtype=torch.long)
    for i, s in enumerate(sentences):
        x[i, : len(s)] = torch.tensor(s)
    return TokenData(x, torch.where(x == PAD, IGNORE, 0))


def split_sentences(sentences: list[list[str]], task: LMTask) -> tuple[list, list, list]:
    """``(train, valid, test)`` sentences. The test sentences are ``test_fraction`` of them by a shuffle
    seeded by ``task.seed`` (the same whatever ``valid_fraction``); the validation sentences
    (``valid_fraction`` of all sentences, at least one; none at 0) are drawn from the rest by a second
    shuffle, seeded by ``[seed, 1]``; the training sentences are what is left, in the first shuffle's
    order (so that their first ``train_fraction`` is a random share of them)."""
    split = text.split_by_fraction(sentences, (1 - task.test_fraction, 0.0, task.test_fraction),
                                   seed=task.seed)
    train, valid = split.train, []
    if task.valid_fraction > 0:
        n_valid = max(1, int(round(task.valid_fraction * len(sentences))))
        if n_valid >= len(train):
            raise ParameterError(f"valid_fraction={task.valid_fraction} takes all {len(train)} training "
                                 "sentences: lower valid_fraction or raise max_sentences")
        order = np.random.default_rng([task.seed, 1]).permutation(len(train))
        held = set(order[:n_valid].tolist())
        valid = [train[i] for i in order[:n_valid]]
        train = [s for i, s in enumerate(train) if i not in held]
    return train, valid, split.test


@lru_cache(maxsize=2)
def make_data(task: LMTask) -> LMData:
    """Sentences of the corpus (length 1..max_length), split (:func:`split_sentences`), vocabulary of the
    training part, its first ``train_fraction`` kept, ids."""
    sentences = [s for s in text.corpus(task.corpus, lower=task.lower,
                                        max_sentences=task.max_sentences or None)
                 if 0 < len(s) <= task.max_length]
    if len(sentences) < 20:
        raise ParameterError(f"only {len(sentences)} sentences of {task.corpus!r} with 1..{task.max_length} "
                             "words: raise max_sentences or max_length")
    train_side, valid_words, test_words = split_sentences(sentences, task)
    vocab = text.build_vocabulary(train_side, min_count=task.min_count)  # all training sentences' words
    ids = lambda part: [[vocab.index.get(w, 0) for w in s] for s in part]  # noqa: E731 - 0 is <unk>
    kept = len(train_side) if task.train_fraction == 1 else max(1, int(round(task.train_fraction
                                                                                * len(train_side))))
    train, test, valid = ids(train_side[:kept]), ids(test_words), ids(valid_words)
    n_tokens = sum(map(len, train))
    stats = {"corpus": task.corpus, "train_sentences": len(train), "test_sentences": len(test),
             "train_tokens": n_tokens, "test_tokens": sum(map(len, test)), "vocabulary": len(vocab.tokens),
             "unk_share_train": sum(w == 0 for s in train for w in s) / n_tokens}
    if valid:  # the options' numbers only where they are used: a default run's stats are as they were
        stats.update(valid_sentences=len(valid), valid_tokens=sum(map(len, valid)))
    if task.train_fraction != 1:
        stats.update(train_fraction=task.train_fraction, vocabulary_sentences=len(train_side))
    return LMData(vocab, _encode(train), _encode(test), train, test, stats,
                  _encode(valid) if valid else None, valid)


def lm_data(data: TokenData, start: int) -> TokenData:
    """Next-word data: inputs ``<s> w_1 .. w_{n-1}``, targets ``w_1 .. w_n`` (padding ignored)."""
    words = data.inputs  # (N, T) word ids, PAD after the sentence
    inputs = torch.cat([torch.full((len(words), 1), start), words[:, :-1]], dim=1)
    inputs = inputs.masked_fill(inputs == PAD, 0)
    targets = words.masked_fill(words == PAD, IGNORE)
    return TokenData(inputs, targets)


@lru_cache(maxsize=1)
def analogies():
    """The Google analogy questions (gensim's questions-words.txt), lower-cased."""
    return read_analogies(google_analogy_path(), lower=True)


def analogy_numbers(vectors: np.ndarray, d: LMData) -> dict[str, Any]:
    """What a run stores of its vectors' analogy answers and neighbours (``sections``: a DataFrame)."""
    result = evaluate_3cosadd(vectors, d.vocab.tokens, analogies())
    return {"analogies_correct": result.correct, "analogies_answered": result.answered,
            "analogies_skipped": result.skipped, "neighbours": neighbours(vectors, d.vocab.tokens),
            "data": d.stats, "sections": result.per_section()}


#: the words whose nearest neighbours a run stores
PROBES = ("king", "france", "good", "war", "president", "three", "america", "money")


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
