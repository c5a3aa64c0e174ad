"""Linzen, Dupoux & Goldberg's (2016) released number-prediction files as the ``"linzen"`` source of the
agreement task: the distribution paper 000 sec. 4 evaluates on (Fig. 2), in the simplified form that ships
in ``notebooks/data/linzen-agreement`` (:mod:`urnlib.corpora.numpred`).

Only the authors' validation file and their test files with 1 to 5 attractors are released; their training
split is not. The source therefore divides the files so:

* ``numpred.val`` (15,772 sentences, every attractor count mixed, mostly 0) is shuffled by sentence with the
  task's seed; ``test_fraction`` of it is held out for testing, the rest trains (and the chapter's protocol
  carves its validation sentences from that rest, :func:`urnlib.tasks.agreement.make_data`);
* ``numpred.test.1`` ... ``numpred.test.5`` are the test buckets of 1 to 5 attractors, read whole;
* the held-out validation sentences form the bucket of 0 attractors only where that is certain: no noun of
  the other number than the verb anywhere in the sentence (so none between subject and verb). It is an
  easier set than Linzen et al.'s 0-attractor bucket, which may hold such nouns before the subject; the
  other held-out sentences are scored in no bucket (:func:`zero_attractor`).

With a ``pool`` share p (0 < p < 1; the agreement chapter's pooled size trend, issue 50), each test file is
split by sentence with a fixed stream (:data:`POOL_STREAM`, the same for every run's seed, so every pooled
run is tested on the same sentences, and a smaller pool lies inside a larger one): share p of its sentences
joins the training sentences, share 1 - p is the bucket tested (:func:`pooled_buckets`). A training sentence
(of the validation file or of a bucket's trained share) whose words are those of a tested sentence (a held-out
one of the validation file or a bucket's tested one) is dropped from training: no sentence is both trained
on and tested.

The files carry no tags, only the words (lower-cased) with the words outside the 10,000 most frequent
replaced by their tag (``NN``, ``NNS``, ``VBG``, ...). A word's number comes from the tagged Brown corpus
(:func:`noun_lexicon`: its most frequent Brown tag, ``nn`` or ``nns``), a placeholder's from its tag. These
tags decide the 0 bucket above and the two heuristics (first noun, nearest noun); how well they find nouns
is measured on the test buckets, where a sentence with N attractors has at least N nouns of the other
number (:func:`lexicon_recall`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import lru_cache

import numpy as np

from urnlib.corpora.brown import brown_sentences, normalise_tag
from urnlib.corpora.linzen import AgreementExample, split_sentences
from urnlib.corpora.numpred import NumpredExample, load_numpred

__all__ = ["SOURCE", "NOUN_NUMBER", "OTHER", "UNKNOWN", "POOL_STREAM", "POOL_PARAM",
           "noun_lexicon", "tag_of", "to_example",
           "zero_attractor", "lexicon_recall", "pooled_buckets", "validation_share", "linzen_split"]

#: the source's name in a chapter's ``sources``
SOURCE = "linzen"
#: Brown noun tags -> Linzen et al.'s (Penn Treebank) noun tags; only these nouns are counted
NOUN_NUMBER = {"nn": "NN", "nns": "NNS"}
#: the tag of a word that is neither a noun by the lexicon nor a tag placeholder
OTHER = "W"
#: the attractor count of a sentence of the validation file, which mixes them (training sentences)
UNKNOWN = -1
#: the stream that splits each test file for a pool (``[POOL_STREAM, N]`` for ``numpred.test.N``): fixed,
#: never the run's seed (issue 50 asked for the pooled trend)
POOL_STREAM = 50
#: the run parameter that gives a run's pool (the agreement chapter's pooled size trend; absent: none)
POOL_PARAM = "pool"


@lru_cache(maxsize=1)
def noun_lexicon() -> dict[str, str]:
    """Word (lower case) -> ``"NN"`` or ``"NNS"`` for every word of the tagged Brown corpus whose most
    frequent tag is a common noun, singular (``nn``) or plural (``nns``); ties go to the tag seen first."""
    counts: dict[str, Counter] = {}
    for sentence in brown_sentences():
        for word, tag in sentence:
            counts.setdefault(word.lower(), Counter())[normalise_tag(tag)] += 1
    lexicon = {}
    for word, tags in counts.items():
        top = tags.most_common(1)[0][0]
        if top in NOUN_NUMBER:
            lexicon[word] = NOUN_NUMBER[top]
    return lexicon


def tag_of(token: str, lexicon: dict[str, str]) -> str:
    """A token's tag: a placeholder (``NN``, ``VBG``, ... : upper case in the lower-cased files) is its own
    tag; a word is ``NN``/``NNS`` by the lexicon, else :data:`OTHER`."""
    if token.isupper():
        return token
    return lexicon.get(token, OTHER)


def to_example(example: NumpredExample, n_attractors: int, lexicon: dict[str, str]) -> AgreementExample:
    """A preamble as an :class:`AgreementExample` whose verb follows the last word (the files end before
    it); the subject's position is unknown (``-1``)."""
    words = example.words
    return AgreementExample(words, tuple(tag_of(w, lexicon) for w in words), -1, len(words), example.label,
                            n_attractors)


def _other_number_nouns(example: AgreementExample) -> int:
    other = "NN" if example.plural else "NNS"
    return sum(t == other for t in example.pos[: example.verb_index])


def zero_attractor(example: AgreementExample) -> bool:
    """True when no noun of the prefix has the other number than the verb: then none can stand between
    the subject and the verb (by the tags of :func:`tag_of`)."""
    return _other_number_nouns(example) == 0


def lexicon_recall(tests: dict[int, list[AgreementExample]]) -> dict[str, float]:
    """For each test bucket N, the share of its sentences in which the tags find at least N nouns of the
    other number than the verb (each of the N attractors is one): how many attractors the tags see."""
    return {str(n): float(np.mean([_other_number_nouns(ex) >= n for ex in examples]))
            for n, examples in tests.items() if examples}


def _limited(split: str, limit: int) -> list[NumpredExample]:
    examples = load_numpred(split)
    return examples[:limit] if limit else examples


def pooled_buckets(pool: float, max_examples: int = 0
                   ) -> tuple[dict[int, list[NumpredExample]], dict[int, list[NumpredExample]]]:
    """``(trained, tested)``: each test file's sentences split by sentence with the fixed stream
    ``[POOL_STREAM, N]`` (:func:`~urnlib.corpora.linzen.split_sentences`), share ``pool`` to train and the
    rest tested, by attractor count N; ``pool`` 0: nothing trains, every file is tested whole. The split does
    not depend on any run's seed, and a smaller pool's trained share lies inside a larger one's."""
    trained, tested = {}, {}
    for n in range(1, 6):
        examples = _limited(f"test.{n}", max_examples)
        tested[n], trained[n] = split_sentences(examples, pool, [POOL_STREAM, n]) if pool else (examples, [])
    return trained, tested


def _sides(seed: int, test_fraction: float, max_examples: int, pool: float):
    """``(train, held_out, tested, dropped)`` of the raw files: the validation file's split under ``seed``,
    with a ``pool`` the buckets' trained shares after its training side (each example with its count:
    ``UNKNOWN`` for the validation file's), less every training sentence whose words are tested
    (``dropped`` of them)."""
    val = _limited("val", max_examples)
    train, held_out = split_sentences(val, test_fraction, seed)
    trained, tested = pooled_buckets(pool, max_examples)
    train = [(ex, UNKNOWN) for ex in train] + [(ex, n) for n in sorted(trained) for ex in trained[n]]
    if not pool:
        return train, held_out, tested, 0
    seen = {ex.words for ex in held_out} | {ex.words for examples in tested.values() for ex in examples}
    kept = [(ex, n) for ex, n in train if ex.words not in seen]
    return kept, held_out, tested, len(train) - len(kept)


@lru_cache(maxsize=64)
def validation_share(seed: int, test_fraction: float, max_examples: int = 0, pool: float = 0.0) -> float:
    """The share of plural verbs among the validation sentences a run of the ``linzen`` source held out
    (the same shuffles as :func:`linzen_split` and :func:`urnlib.tasks.agreement.make_data`; no tags
    needed): the class prior its validation loss is measured against (the training guard)."""
    train, _, _, _ = _sides(seed, test_fraction, max_examples, pool)
    _, valid = split_sentences([ex for ex, _ in train], test_fraction, [seed, 2])
    return float(np.mean([ex.plural for ex in valid]))


def linzen_split(seed: int, test_fraction: float, max_examples: int = 0, pool: float = 0.0
                 ) -> tuple[list[AgreementExample], list[AgreementExample], dict]:
    """Training and test examples of the ``"linzen"`` source under ``seed``, and what the split did.

    Args:
        seed: the shuffle of ``numpred.val``'s sentences.
        test_fraction: the share of those sentences held out for testing.
        max_examples: read only the first this many lines of each file (0: all; the tiny preset).
        pool: the share of each test file's sentences that trains (:func:`pooled_buckets`; 0: none).

    Returns:
        ``(train, test, info)``: ``train``'s attractor counts are unknown (:data:`UNKNOWN`) for the
        validation file's sentences, N for a pooled sentence of ``numpred.test.N``; ``test`` holds the
        held-out validation sentences with no attractor (:func:`zero_attractor`, count 0) and every tested
        sentence of the test files (count N); ``info`` gives the held-out sentences, how many entered the 0
        bucket, and :func:`lexicon_recall`; with a pool also the pool, the sentences each bucket gave to
        training and the training sentences dropped because a tested sentence has their words.
    """
    lexicon = noun_lexicon()
    raw, held, tested, dropped = _sides(seed, test_fraction, max_examples, pool)
    train = [to_example(ex, n, lexicon) for ex, n in raw]
    held_out = [to_example(ex, UNKNOWN, lexicon) for ex in held]
    zero = [replace(ex, n_attractors=0) for ex in held_out if zero_attractor(ex)]
    tests = {n: [to_example(ex, n, lexicon) for ex in tested[n]] for n in range(1, 6)}
    info = {"held_out": len(held_out), "zero_bucket": len(zero), "lexicon_words": len(lexicon),
            "lexicon_recall": lexicon_recall(tests)}
    if pool:
        info |= {"pool": pool, "pooled": {str(n): sum(c == n for _, c in raw) for n in range(1, 6)},
                 "dropped": dropped}
    return train, zero + [ex for n in sorted(tests) for ex in tests[n]], info
