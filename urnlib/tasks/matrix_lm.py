"""The sentences of the matrix-embedding chapter's corpora (paper 003 sec. 4-5; Brown and the State of the
Union addresses, the stand-ins for UMBC) and the analogy test its word representations answer: its data and
its evaluation.

:func:`make_data` reads the corpus, keeps the sentences of 1 .. ``max_length`` words, holds out
``test_fraction`` of them (a seeded shuffle), builds the vocabulary of the training part (rarer words
``<unk>``) and pads the sentences with :data:`PAD`; :func:`lm_data` makes next-word data of them. A run's
word vectors answer the Google analogy questions by 3CosAdd (:func:`analogy_numbers`, with the
:func:`neighbours` of a few probe words). Used by :mod:`urnlib.experiments.matrix_embeddings` and its
baselines, :mod:`urnlib.experiments.urn_lm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.corpora.analogy import evaluate_3cosadd, google_analogy_path, read_analogies
from urnlib.params import ParameterError, check_bool, check_choice, check_float, check_int
from urnlib.tokens import IGNORE, TokenData

__all__ = ["LMTask", "LMData", "make_data", "lm_data", "analogies", "analogy_numbers", "neighbours", "PROBES",
           "PAD"]

PAD = -1  #: padding id of (N, T) token tensors of sentences (no word: never a vocabulary id)
_MAX_SENTENCES = 10_000_000  # a bound on max_sentences (both corpora have about 120k sentences)


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

    def __post_init__(self):
        check_choice("corpus", self.corpus, list(text.CORPORA))
        check_bool("lower", self.lower)
        check_int("min_count", self.min_count, minimum=1, maximum=_MAX_SENTENCES)
        check_int("max_length", self.max_length, minimum=2, maximum=1000)
        check_int("max_sentences", self.max_sentences, minimum=0, maximum=_MAX_SENTENCES)
        check_float("test_fraction", self.test_fraction, minimum=0.0, maximum=0.5, strict_min=True)
        check_int("seed", self.seed, minimum=0)


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
