"""Interpolated Kneser-Ney n-gram language model: the count-based baseline of lecture 004 and paper 003.

Bengio et al. (2003, lecture 004) compare their neural model with Kneser-Ney n-gram models of order 3 to 5;
paper 003 compares perplexities with the same kind of baseline. This is interpolated Kneser-Ney as in
Chen & Goodman (1998), plain by default (one discount per order), modified (three) on request.

The model, for order n and a history h of n-1 tokens (h' is h without its first token)::

    p_k(w | h) = max(a_k(h w) - D_k(a), 0) / a_k(h .)  +  gamma_k(h) * p_{k-1}(w | h')
    gamma_k(h) = (D_k1 N_1(h .) + D_k2 N_2(h .) + D_k3 N_3+(h .)) / a_k(h .)
    p_0(w)     = 1 / V                                  (uniform: no word has probability zero)

with ``a_k(h .) = sum_w a_k(h w)``, ``N_r(h .)`` the number of words w with ``a_k(h w) = r`` (``3+``: at
least 3) and ``D_k(a)`` the discount for a count a (``D_k1``, ``D_k2`` or ``D_k3``). Plain KN uses one
discount, so ``gamma_k(h) = D_k N_1+(h .) / c(h)``. A history never seen at order k (``a_k(h .) = 0``)
gives ``p_k(w | h) = p_{k-1}(w | h')``. The counts ``a_k``:

* order n: the raw counts ``c(h w)``;
* orders k < n: continuation counts ``N_1+(. h w)``, the number of distinct words seen before ``h w``
  (a word that follows one word only, like "Francisco" after "San", gets little lower-order mass);
  except that k-grams starting with ``<s>`` keep their raw counts (as in KenLM and SRILM: only padding
  precedes them).

Default discounts, estimated per order k from the count-of-counts n_r (the number of k-grams with
``a_k = r``): plain ``D = n1 / (n1 + 2 n2)``; modified ``Y = n1 / (n1 + 2 n2)``, ``D1 = 1 - 2Y n2/n1``,
``D2 = 2 - 3Y n3/n2``, ``D3+ = 3 - 4Y n4/n3`` clipped into ``[0.1, r]``. When a count-of-counts they need is
zero (tiny corpora), D = 0.5 (plain) or the plain estimate for all three (modified).

Sentences are padded with n-1 ``<s>`` and end with ``</s>``: the model predicts every word and ``</s>``,
never ``<s>``, over the *prediction vocabulary* ``vocabulary`` (the words, then ``</s>``; size V).
Counting and scoring are vectorised with numpy: a k-gram is numbered by the pair (number of its first
k-1 tokens as a (k-1)-gram, last token), so 1M tokens fit in a few seconds for n = 3 to 5.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from urnlib.params import ParameterError, check_bool, check_float, check_int

__all__ = ["KneserNey", "BOS", "EOS", "UNK"]

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


class _Level(NamedTuple):
    keys: np.ndarray  # sorted: (index of the (k-1)-gram context) * base + last token, one per k-gram seen
    disc: np.ndarray  # per k-gram: max(a - D(a), 0)
    total: np.ndarray  # per context ((k-1)-gram of the level below): a_k(h .)
    gamma: np.ndarray  # per context: weight of the lower order (0 where the context is unseen)


class KneserNey:
    """Interpolated Kneser-Ney n-gram language model (Chen & Goodman 1998); see the module docstring.

    Args:
        order: n, the number of tokens in an n-gram (1: unigram, 3: trigram); at least 1.
        discount: one discount in (0, 1) for every order (plain KN); None (the default) estimates
            D = n1 / (n1 + 2 n2) per order from the counts.
        modified: modified KN with three estimated discounts per order (D1, D2, D3+); needs
            ``discount=None``.

    Attributes (after :meth:`fit`):
        vocabulary: the prediction vocabulary, the words then ``</s>``; ``distribution`` follows its order.
        index: word -> its position in ``vocabulary``.
        discounts: per order k = 1..n, the discounts (D1, D2, D3+) used (all equal for plain KN).
    """

    def __init__(self, order: int, discount: float | None = None, *, modified: bool = False):
        self.order = check_int("order", order, minimum=1)
        self.modified = check_bool("modified", modified)
        if discount is not None:
            discount = check_float("discount", discount)
            if not 0 < discount < 1:
                raise ParameterError(f"discount={discount} must be in (0, 1), e.g. 0.75; "
                                     "or pass None to estimate it from the counts")
            if modified:
                raise ParameterError("modified=True estimates its three discounts; "
                                     "pass discount=None with it")
        self.discount = discount
        self._levels: list[_Level] = []

    def fit(self, sentences: Iterable[Sequence[str]], vocabulary: Sequence[str]) -> KneserNey:
        """Count the n-grams of ``sentences`` and set up the model; returns ``self``.

        Args:
            sentences: token lists (not strings), already mapped to the vocabulary (out-of-vocabulary words
                as ``"<unk>"``), without ``<s>`` / ``</s>``: the model adds them.
            vocabulary: the word types, ``"<unk>"`` included (``<s>`` and ``</s>``, if present, are ignored).
        """
        if isinstance(vocabulary, str) or not isinstance(vocabulary, Iterable):
            raise ParameterError(f"vocabulary={vocabulary!r} must be a list of word types, '<unk>' included")
        words = [w for w in vocabulary if w not in (BOS, EOS)]
        if not words:
            raise ParameterError("vocabulary is empty; pass the list of word types, '<unk>' included")
        if len(set(words)) != len(words):
            dup = sorted(w for w, c in Counter(words).items() if c > 1)[:5]
            raise ParameterError(f"vocabulary lists {dup} more than once; pass each word type once")
        self.vocabulary = words + [EOS]
        self.index = {w: i for i, w in enumerate(self.vocabulary)}
        self._levels = []
        tok = self._stream(sentences)
        n, base, bos = self.order, len(self.vocabulary) + 1, len(self.vocabulary)
        keys, ids, prev = [], [], np.zeros(len(tok), np.int64)
        for _ in range(n):  # number the k-grams ending at every position, k = 1..n
            uniq, inv = np.unique(prev * base + tok, return_inverse=True)
            keys.append(uniq)
            ids.append(inv.reshape(-1))
            prev = np.concatenate([[0], ids[-1][:-1]])  # position 0's windows are padding, never used
        pred = np.flatnonzero(tok != bos)
        self.discounts = []
        for k in range(1, n + 1):
            gid, size = ids[k - 1][pred], len(keys[k - 1])
            raw = np.bincount(gid, minlength=size)
            if k == n:
                a = raw
            else:  # continuation counts: the distinct (k+1)-grams that end in each k-gram
                _, first = np.unique(ids[k][pred], return_index=True)
                a = np.bincount(gid[first], minlength=size)
                if k > 1:
                    at_start = gid[tok[pred - k + 1] == bos]
                    a[at_start] = raw[at_start]
            d = self._estimate(a)
            self.discounts.append(d)
            dk = np.array([0.0, *d])[np.minimum(a, 3)]  # D(a); 0 for the k-grams never predicted
            ctx, n_ctx = keys[k - 1] // base, (len(keys[k - 2]) if k > 1 else 1)
            total = np.bincount(ctx, weights=a, minlength=n_ctx)
            gamma = np.divide(np.bincount(ctx, weights=dk, minlength=n_ctx), total,
                              out=np.zeros(n_ctx), where=total > 0)
            self._levels.append(_Level(keys[k - 1], np.maximum(a - dk, 0.0), total, gamma))
        return self

    def _estimate(self, a: np.ndarray) -> tuple[float, float, float]:
        if self.discount is not None:
            return (self.discount,) * 3
        n1, n2, n3, n4 = (int(x) for x in np.bincount(a[(a >= 1) & (a <= 4)], minlength=5)[1:])
        plain = n1 / (n1 + 2 * n2) if n1 and n2 else 0.5
        if not (self.modified and n1 and n2 and n3 and n4):
            return (plain,) * 3
        d = (1 - 2 * plain * n2 / n1, 2 - 3 * plain * n3 / n2, 3 - 4 * plain * n4 / n3)
        return tuple(float(min(max(x, 0.1), r)) for r, x in enumerate(d, start=1))

    def _check_fitted(self) -> None:
        if not self._levels:
            raise ParameterError("the model is not fitted; call fit(sentences, vocabulary) first")

    def _stream(self, sentences: Iterable[Sequence[str]]) -> np.ndarray:
        """The token ids of the padded sentences, one after another."""
        if isinstance(sentences, str) or not isinstance(sentences, Iterable):
            raise ParameterError("sentences must be an iterable of token lists, e.g. [['the', 'dog'], ...]")
        index, bos, eos = self.index, len(self.vocabulary), self.index[EOS]
        pad, stream, count = [bos] * (self.order - 1), [], 0
        for count, sentence in enumerate(sentences, start=1):
            if isinstance(sentence, str):
                raise ParameterError(f"sentence {count} is the string {sentence[:40]!r}; pass token lists "
                                     "(e.g. sentence.split())")
            try:
                ids = [index[w] for w in sentence]
            except KeyError:
                bad = next(w for w in sentence if w not in index)
                raise ParameterError(
                    f"sentence {count}: token {bad!r} is not in the vocabulary; map out-of-vocabulary words "
                    f"to '{UNK}' (and leave out '<s>'/'</s>': the model adds them)") from None
            if eos in ids:
                raise ParameterError(f"sentence {count} contains '{EOS}'; pass sentences without boundary "
                                     "markers: the model adds them")
            stream += pad
            stream += ids
            stream.append(eos)
        if not count:
            raise ParameterError("no sentences; pass at least one token list")
        return np.array(stream, dtype=np.int64)

    def _ids(self, tok: np.ndarray) -> list[np.ndarray]:
        """Per k = 0..n, the number of the fitted k-gram ending at each position of ``tok`` (-1: unseen)."""
        base, out = len(self.vocabulary) + 1, [np.zeros(len(tok), np.int64)]
        for k, level in enumerate(self._levels, start=1):
            prev = out[0] if k == 1 else np.concatenate([[-1], out[-1]])[: len(tok)]
            keys = prev * base + tok
            j = np.minimum(np.searchsorted(level.keys, keys), len(level.keys) - 1)
            out.append(np.where((prev >= 0) & (tok >= 0) & (level.keys[j] == keys), j, -1))
        return out

    def _probs(self, tok: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """p(tok[i] | the tokens before it) for each i in ``pos`` (at most n-1 tokens of history)."""
        ids = self._ids(tok)
        p = np.full(len(pos), 1.0 / len(self.vocabulary))
        for k, level in enumerate(self._levels, start=1):
            ctx = np.where(pos > 0, ids[k - 1][pos - 1], -1) if k > 1 else ids[0][pos]  # history of k-1
            gram = ids[k][pos]
            seen = ctx >= 0
            seen[seen] = level.total[ctx[seen]] > 0
            c = np.where(seen, ctx, 0)
            num = np.where(gram >= 0, level.disc[np.maximum(gram, 0)], 0.0)
            p = np.where(seen, num / np.where(seen, level.total[c], 1.0) + level.gamma[c] * p, p)
        return p

    def _context(self, context: Sequence[str]) -> list[int]:
        """The last n-1 tokens of ``context`` as ids: ``<s>`` -> V, words not in the vocabulary -> -1."""
        self._check_fitted()
        if isinstance(context, str):
            raise ParameterError(f"context={context!r} must be a token list, e.g. ['<s>', 'the']")
        context = list(context)[max(0, len(context) - (self.order - 1)):] if self.order > 1 else []
        bos = len(self.vocabulary)
        return [bos if w == BOS else self.index.get(w, -1) for w in context]

    def distribution(self, context: Sequence[str]) -> np.ndarray:
        """p(. | context) over ``vocabulary`` (sums to 1): float64 array of length V.

        Args:
            context: the preceding tokens; the last n-1 are used. Pass ``<s>`` for a sentence start (a
                shorter context gives the lower-order KN distribution). Unseen histories and words outside
                the vocabulary fall back to lower orders.
        """
        tok = self._context(context)
        m, base, ids = len(tok), len(self.vocabulary) + 1, self._ids(np.array(tok, np.int64))
        p = np.append(np.full(len(self.vocabulary), 1.0 / len(self.vocabulary)), 0.0)  # last slot: <s>
        for k, level in enumerate(self._levels[: m + 1], start=1):
            c = int(ids[k - 1][-1]) if k > 1 else 0
            if c < 0 or level.total[c] == 0:
                continue
            lo, hi = np.searchsorted(level.keys, [c * base, (c + 1) * base])
            p *= level.gamma[c]
            p[level.keys[lo:hi] - c * base] += level.disc[lo:hi] / level.total[c]
        return p[:-1]

    def prob(self, word: str, context: Sequence[str]) -> float:
        """p(word | context); ``word`` is a vocabulary word or ``</s>``. See :meth:`distribution`."""
        tok = self._context(context)
        if word not in self.index:
            raise ParameterError(f"word={word!r} is not in the prediction vocabulary; "
                                 f"pass a vocabulary word, '{UNK}' or '{EOS}'")
        tok.append(self.index[word])
        return float(self._probs(np.array(tok, np.int64), np.array([len(tok) - 1]))[0])

    def stream_probs(self, words: Sequence[str]) -> np.ndarray:
        """p(token | up to n-1 tokens before it) for every token of ``words``, read as one stream.

        The stream is scored as one sentence: the history of its first tokens is padded with ``<s>``,
        and its closing ``</s>`` is not scored. Entry i equals
        ``prob(words[i], ["<s>"] * (n - 1) + words[:i])`` (which uses the last n-1 tokens of that
        context), computed for all i at once.

        Args:
            words: a token list mapped to the vocabulary (out-of-vocabulary words as ``"<unk>"``),
                without ``<s>`` / ``</s>``.

        Returns:
            float64 array of length ``len(words)``.
        """
        self._check_fitted()
        tok = self._stream([words])  # [<s>] * (n-1) + ids + [</s>]
        return self._probs(tok, np.arange(self.order - 1, len(tok) - 1))

    def logprob(self, word: str, context: Sequence[str]) -> float:
        """Natural log of :meth:`prob`."""
        return float(np.log(self.prob(word, context)))

    def cross_entropy(self, sentences: Iterable[Sequence[str]]) -> float:
        """Mean of -ln p over the predicted tokens (every word and each sentence's ``</s>``), in nats.

        Args:
            sentences: token lists mapped to the vocabulary like those of :meth:`fit`.
        """
        self._check_fitted()
        tok = self._stream(sentences)
        pos = np.flatnonzero(tok != len(self.vocabulary))
        return float(-np.log(self._probs(tok, pos)).mean())

    def perplexity(self, sentences: Iterable[Sequence[str]]) -> float:
        """exp(:meth:`cross_entropy`): per predicted token, ``</s>`` included and ``<s>`` not (V for a
        uniform model)."""
        return float(np.exp(self.cross_entropy(sentences)))
