"""Sentence generator of Elman (1990), "Finding structure in time" (lecture 004, Tables 3 and 4).

Source: lecture 004 ("Learning with artificial language input"), which reprints Elman (1990)
Table 3 ("Categories of Lexical Items Used in Sentence Simulation") and Table 4 ("Templates for
Sentence Generator"). ``CATEGORIES`` and ``TEMPLATES`` reproduce those tables: 12 categories with
23 category entries over 21 distinct words (``see`` and ``break`` are in two categories each), and
16 templates (12 of three words, 4 of two).

The lecture's text extraction garbled some cells; they were restored from Elman (1990)'s published
tables: category names cut across cells (``NOUN-ANIM A``, ``NOUN-INAN IIM``, ``NOUN-AGRE ESS``,
``NOUN-FOOI ID``, ``VERB-INTRA N``, ``VERB-AGPA T``, ``VERB-PERCE PT``, ``VERB-DESTRO OY``), the
NOUN-FOOD words printed as "cookie, break" (Elman: "cookie, bread"; the lecture's own localist
example also shows "bread"), and reversed or mangled names in Table 4 (``MUH-NUON``, ``MUH-HUM``,
``MOUH-HUM`` -> NOUN-HUM; ``MINA-NUON`` -> NOUN-ANIM; ``NOUN-INANIA``, ``MOUN-INANIA``,
``MINANI-NUON`` -> NOUN-INANIM).

Table 3 lists *examples* per category; Elman's full lexicon had 29 words (e.g. boy, girl, dog,
lion, car, sandwich, exist, like in his Fig. 7), whose category assignment is not printed in the
tables, so only the tables' words are used here. Elman trained on one long stream of words without
sentence boundaries: see :func:`stream`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from urnlib.params import ParameterError, check_int

__all__ = ["CATEGORIES", "TEMPLATES", "generate", "word_classes", "is_template_sentence", "stream"]

CATEGORIES: dict[str, tuple[str, ...]] = {
    "NOUN-HUM": ("man", "woman"),
    "NOUN-ANIM": ("cat", "mouse"),
    "NOUN-INANIM": ("book", "rock"),
    "NOUN-AGRESS": ("dragon", "monster"),
    "NOUN-FRAG": ("glass", "plate"),
    "NOUN-FOOD": ("cookie", "bread"),
    "VERB-INTRAN": ("think", "sleep"),
    "VERB-TRAN": ("see", "chase"),
    "VERB-AGPAT": ("move", "break"),
    "VERB-PERCEPT": ("smell", "see"),
    "VERB-DESTROY": ("break", "smash"),
    "VERB-EAT": ("eat",),
}

TEMPLATES: tuple[tuple[str, ...], ...] = (
    ("NOUN-HUM", "VERB-EAT", "NOUN-FOOD"),
    ("NOUN-HUM", "VERB-PERCEPT", "NOUN-INANIM"),
    ("NOUN-HUM", "VERB-DESTROY", "NOUN-FRAG"),
    ("NOUN-HUM", "VERB-INTRAN"),
    ("NOUN-HUM", "VERB-TRAN", "NOUN-HUM"),
    ("NOUN-HUM", "VERB-AGPAT", "NOUN-INANIM"),
    ("NOUN-HUM", "VERB-AGPAT"),
    ("NOUN-ANIM", "VERB-EAT", "NOUN-FOOD"),
    ("NOUN-ANIM", "VERB-TRAN", "NOUN-ANIM"),
    ("NOUN-ANIM", "VERB-AGPAT", "NOUN-INANIM"),
    ("NOUN-ANIM", "VERB-AGPAT"),
    ("NOUN-INANIM", "VERB-AGPAT"),
    ("NOUN-AGRESS", "VERB-DESTROY", "NOUN-FRAG"),
    ("NOUN-AGRESS", "VERB-EAT", "NOUN-HUM"),
    ("NOUN-AGRESS", "VERB-EAT", "NOUN-ANIM"),
    ("NOUN-AGRESS", "VERB-EAT", "NOUN-FOOD"),
)


def generate(n_sentences: int, rng: np.random.Generator) -> list[list[str]]:
    """Draw sentences: a template uniformly at random, then each word uniformly within its category.

    Args:
        n_sentences: number of sentences, an int >= 0.
        rng: a ``numpy.random.Generator``; the same seed gives the same sentences.

    Returns:
        A list of sentences, each a list of 2 or 3 words.
    """
    check_int("n_sentences", n_sentences, minimum=0)
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng={rng!r} must be a numpy.random.Generator")
    sentences = []
    for t in rng.integers(len(TEMPLATES), size=n_sentences):
        words = []
        for cat in TEMPLATES[int(t)]:
            choices = CATEGORIES[cat]
            words.append(choices[int(rng.integers(len(choices)))])
        sentences.append(words)
    return sentences


def word_classes() -> dict[str, tuple[str, ...]]:
    """Map each word to the categories it belongs to, in ``CATEGORIES`` order.

    Per the tables, ``see`` is VERB-TRAN and VERB-PERCEPT, ``break`` is VERB-AGPAT and VERB-DESTROY;
    every other word has one category.

    Returns:
        A dict word -> tuple of category names.
    """
    classes: dict[str, tuple[str, ...]] = {}
    for cat, words in CATEGORIES.items():
        for w in words:
            classes[w] = classes.get(w, ()) + (cat,)
    return classes


def _check_words(name: str, words: object) -> list[str]:
    if (isinstance(words, str) or not isinstance(words, Sequence)
            or not all(isinstance(w, str) for w in words)):
        raise ParameterError(f"{name}={words!r} must be a sequence of word strings")
    return list(words)


def is_template_sentence(words: Sequence[str]) -> bool:
    """Whether some template's categories match ``words`` word by word (and in length).

    Args:
        words: a sentence as a sequence of word strings (not one string).

    Returns:
        True iff for some template each word belongs to the template's category at its position.
        Unknown words and wrong lengths give False.
    """
    words = _check_words("words", words)
    classes = word_classes()
    return any(
        len(t) == len(words) and all(cat in classes.get(w, ()) for cat, w in zip(t, words))
        for t in TEMPLATES
    )


def stream(sentences: Sequence[Sequence[str]]) -> list[str]:
    """Concatenate sentences into one word stream without boundaries, as Elman trained.

    Args:
        sentences: sentences as sequences of word strings, e.g. from :func:`generate`.

    Returns:
        A flat list of all words in order.
    """
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise ParameterError(f"sentences={sentences!r} must be a sequence of sentences")
    return [w for i, s in enumerate(sentences) for w in _check_words(f"sentences[{i}]", s)]
