"""A synthetic English-like grammar for subject-verb agreement with a controlled number of attractors.

Paper 000 sec. 4 (after Linzen, Dupoux & Goldberg 2016) reads a sentence up to the word before a
present-tense verb and classifies the verb's number, reporting accuracy by number of attractors. Real
text has few sentences with many attractors, so this grammar generates sentences with exactly the
requested count, 0 to 12 and beyond. It is synthetic: which figure of the chapter uses it is decided there.

Definitions (Linzen et al. 2016): the *intervening nouns* are the nouns (PTB tags ``NN``/``NNS``) strictly
between the subject head noun and its verb; the *attractors* are those whose number differs from the
subject's. The verb is present tense: ``VBZ`` for a singular subject, ``VBP`` for a plural one. Only
nouns are counted; verbs of relative clauses are never attractors.

Sentences (lower case, one PTB tag per token)::

    S    -> Pre the N Tail V the N .
    Pre  -> (empty) | IN the N [IN the N] [,] | SUB the N V the N ,
    Tail -> (empty) | IN the N Tail | that V the N Tail | that the N Tail V

* ``Pre`` puts material before the subject, so that the subject is not always the first noun: nothing, a
  prepositional phrase of one or two nouns (``near the doors of the house , the cat ...``; the comma is
  optional), or an adverbial clause with its own subject and object (``when the dogs see the cat , the man
  ...``; its verb agrees with its own subject). Each kind is drawn with equal probability, and the numbers
  of its nouns uniformly and independently of the subject's: the first noun of a sentence with a ``Pre``
  has the subject's number only half the time. Its nouns precede the subject, so they are never attractors.
* PP ``IN the N`` and subject relative ``that V the N`` attach to the immediately preceding noun; the
  relative's verb agrees with that noun, and the tail continues from the new noun (right branching).
* Object relative ``that the N Tail V``: its verb agrees with its own subject N (the noun right after
  ``that the``). It closes its tail, so object relatives nest by center embedding
  (``that the N that the N V V``), at most :data:`MAX_ORC_DEPTH` deep.

Every ``Tail`` construction brings exactly one noun; the intervening nouns' numbers are fixed first
(attractors at random positions) and each construction is drawn uniformly among those allowed, so the noun
nearest to the verb, or the nearest preceding verb, is often of the wrong number. Determiners carry no
number (only ``the``). Neither the first noun of the sentence nor the noun nearest the verb is therefore a
reliable cue (the chapter reports both heuristics beside the models); the subject is the first noun after
``Pre``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from urnlib.corpora.linzen import AgreementExample
from urnlib.params import ParameterError, check_bool, check_float, check_int

__all__ = ["NOUNS", "VERBS", "PREPOSITIONS", "INTRO_PREPOSITIONS", "SUBORDINATORS", "PREAMBLES", "LEXICON",
           "TAGS", "MAX_ATTRACTORS", "MAX_INTERVENING", "MAX_LENGTH", "MAX_PREAMBLE", "MAX_ORC_DEPTH",
           "count_attractors", "build_sentence", "generate"]

#: (singular NN, plural NNS); regular, spelling-changing and irregular plurals; no form is also a verb
NOUNS = (
    ("key", "keys"), ("cabinet", "cabinets"), ("door", "doors"), ("house", "houses"), ("dog", "dogs"),
    ("cat", "cats"), ("teacher", "teachers"), ("student", "students"), ("doctor", "doctors"),
    ("farmer", "farmers"), ("author", "authors"), ("pilot", "pilots"), ("window", "windows"),
    ("table", "tables"), ("picture", "pictures"), ("garden", "gardens"), ("bird", "birds"), ("king", "kings"),
    ("box", "boxes"), ("city", "cities"), ("baby", "babies"), ("man", "men"), ("woman", "women"),
    ("child", "children"), ("person", "people"), ("mouse", "mice"), ("wolf", "wolves"), ("knife", "knives"),
    ("goose", "geese"),
)
#: transitive verbs (VBZ, VBP)
VERBS = (
    ("sees", "see"), ("likes", "like"), ("knows", "know"), ("finds", "find"), ("follows", "follow"),
    ("helps", "help"), ("watches", "watch"), ("meets", "meet"), ("hears", "hear"), ("admires", "admire"),
    ("visits", "visit"), ("remembers", "remember"), ("carries", "carry"), ("chases", "chase"),
)
PREPOSITIONS = ("of", "near", "behind", "beside", "with", "from", "under", "above", "on", "for", "in")  # IN
#: prepositions that open a sentence-initial PP ("of the dogs , ..." is not English)
INTRO_PREPOSITIONS = tuple(p for p in PREPOSITIONS if p != "of")
#: subordinating conjunctions of a sentence-initial clause (PTB: "when" WRB, the others IN)
SUBORDINATORS = ("when", "while", "because", "if", "although")
#: what precedes the subject: nothing, a prepositional phrase, an adverbial clause (module docstring)
PREAMBLES = ("none", "pp", "clause")
TAGS = ("DT", "NN", "NNS", "VBZ", "VBP", "IN", "WDT", "WRB", ",", ".")
#: every word -> its (only) tag
LEXICON: dict[str, str] = {
    "the": "DT", "that": "WDT", ".": ".", ",": ",",
    **{p: "IN" for p in PREPOSITIONS}, **{c: "IN" for c in SUBORDINATORS}, "when": "WRB",
    **{s: "NN" for s, _ in NOUNS}, **{p: "NNS" for _, p in NOUNS},
    **{s: "VBZ" for s, _ in VERBS}, **{p: "VBP" for _, p in VERBS},
}
MAX_LENGTH = 60  # tokens, the period included
MAX_PREAMBLE = 7  # tokens: "IN the N IN the N ," or "SUB the N V the N ,"
#: 15: a preamble, "the N" and "V the N ." leave 47 tokens, a PP costs 3
MAX_INTERVENING = (MAX_LENGTH - MAX_PREAMBLE - 6) // 3
MAX_ATTRACTORS = MAX_INTERVENING
MAX_ORC_DEPTH = 3  # object relatives nested at most this deep
NOUN_TAGS = ("NN", "NNS")
_COST = {"pp": 3, "src": 4, "orc": 4}
_NUMBERS = (False, True)  # plural?


def count_attractors(pos: Sequence[str], subj_index: int, verb_index: int) -> tuple[int, int]:
    """``(n_intervening, n_attractors)`` from POS tags alone (Linzen et al. 2016).

    Args:
        pos: PTB tags of the sentence.
        subj_index: 0-based position of the subject head noun (tag ``NN`` or ``NNS``).
        verb_index: 0-based position of its verb, after the subject.

    Returns:
        The number of nouns (``NN``/``NNS``) strictly between the two, and how many of them have the
        other tag than the subject (the attractors).
    """
    check_int("subj_index", subj_index, minimum=0, maximum=len(pos) - 1)
    check_int("verb_index", verb_index, minimum=0, maximum=len(pos) - 1)
    subject = pos[subj_index]
    if subject not in NOUN_TAGS:
        raise ParameterError(f"subj_index={subj_index} points at a {subject!r}; pass the index of the "
                             f"subject head noun (tag NN or NNS)")
    if verb_index <= subj_index:
        raise ParameterError(f"verb_index={verb_index} must come after subj_index={subj_index}")
    between = [t for t in pos[subj_index + 1: verb_index] if t in NOUN_TAGS]
    return len(between), sum(t != subject for t in between)


class _Builder:
    """Emits one sentence; ``draws`` are uniform floats consumed in order (one numpy call per sentence)."""

    def __init__(self, draws: list[float], numbers: list[bool]):
        self.draws, self.next_draw = draws, 0
        self.numbers = iter(numbers)  # plural? of each intervening noun, in surface order
        self.remaining = len(numbers)
        self.budget = MAX_LENGTH - 6  # tokens left for the tail (less the preamble's, see preamble())
        self.words: list[str] = []
        self.pos: list[str] = []
        self.has_rel = False

    def pick(self, options: Sequence):
        u = self.draws[self.next_draw]
        self.next_draw += 1
        return options[int(u * len(options))]

    def emit(self, word: str) -> None:
        self.words.append(word)
        self.pos.append(LEXICON[word])

    def noun(self, plural: bool) -> None:
        self.emit("the")
        self.emit(self.pick(NOUNS)[plural])

    def verb(self, plural: bool) -> None:
        self.emit(self.pick(VERBS)[plural])

    def preamble(self, kind: str) -> None:
        """``Pre``: nothing, ``IN the N [IN the N] [,]`` or ``SUB the N V the N ,`` (nouns of any number)."""
        if kind == "pp":
            self.emit(self.pick(INTRO_PREPOSITIONS))
            self.noun(self.pick(_NUMBERS))
            if self.pick((False, True)):  # a second PP, attached to the first noun
                self.emit(self.pick(PREPOSITIONS))
                self.noun(self.pick(_NUMBERS))
            if self.pick((False, True)):
                self.emit(",")
        elif kind == "clause":  # its verb agrees with its own subject
            self.emit(self.pick(SUBORDINATORS))
            plural = self.pick(_NUMBERS)
            self.noun(plural)
            self.verb(plural)
            self.noun(self.pick(_NUMBERS))
            self.emit(",")
        self.budget -= len(self.words)

    def tail(self, host_plural: bool, depth: int) -> None:
        """``Tail`` after a noun of number ``host_plural``, with ``depth`` object relatives open."""
        while self.remaining > 0:
            kinds = ["pp"]
            if 4 + 3 * (self.remaining - 1) <= self.budget:  # a 4-token construction still fits
                kinds.append("src")
                if depth < MAX_ORC_DEPTH:
                    kinds.append("orc")
            kind = self.pick(kinds)
            self.remaining -= 1
            self.budget -= _COST[kind]
            plural = next(self.numbers)
            if kind == "pp":
                self.emit(self.pick(PREPOSITIONS))
                self.noun(plural)
            elif kind == "src":  # that V the N: V agrees with the host noun
                self.has_rel = True
                self.emit("that")
                self.verb(host_plural)
                self.noun(plural)
            else:  # that the N Tail V: V agrees with N; closes this tail
                self.has_rel = True
                self.emit("that")
                self.noun(plural)
                self.tail(plural, depth + 1)
                self.verb(plural)
                return
            host_plural = plural


def _rng(rng: np.random.Generator | int) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _build(n_attractors: int, extra_nouns: int, plural: bool, preambles: Sequence[str],
           rng: np.random.Generator) -> AgreementExample:
    k = n_attractors + extra_nouns
    draws = rng.random(5 * k + 20).tolist()  # k for the order, <= 4 per tail noun, <= 10 for Pre, 4 after
    order = sorted(range(k), key=draws.__getitem__)  # a uniform random permutation of the noun slots
    attractors = set(order[:n_attractors])
    b = _Builder(draws[k:], [plural != (i in attractors) for i in range(k)])
    b.preamble(b.pick(preambles))
    subj_index = len(b.words) + 1
    b.noun(plural)
    b.tail(plural, 0)
    verb_index = len(b.words)
    b.verb(plural)
    b.noun(b.pick(_NUMBERS))
    b.emit(".")
    counts = count_attractors(b.pos, subj_index, verb_index)
    if counts != (k, n_attractors) or len(b.words) > MAX_LENGTH:  # cannot happen; guards the construction
        raise AssertionError(f"built {counts} (intervening, attractors), {len(b.words)} tokens; "
                             f"intended {(k, n_attractors)}: {' '.join(b.words)}")
    return AgreementExample(tuple(b.words), tuple(b.pos), subj_index, verb_index,
                            "VBP" if plural else "VBZ", n_attractors, k, {"has_rel": str(b.has_rel)})


def _preambles(values) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    values = tuple(values) if isinstance(values, (list, tuple)) else ()
    if not values or any(v not in PREAMBLES for v in values):
        raise ParameterError(f"preambles={values!r} must be a non-empty list drawn from {list(PREAMBLES)} "
                             "(what precedes the subject; repeat a kind to weight it)")
    return values


def build_sentence(
    n_attractors: int, *, extra_nouns: int = 0, plural: bool = False,
    preamble: str | Sequence[str] = PREAMBLES, rng: np.random.Generator | int = 0
) -> AgreementExample:
    """One sentence with exactly ``n_attractors`` attractors and ``extra_nouns`` other intervening nouns.

    Args:
        n_attractors: intervening nouns of the other number than the subject, 0 to :data:`MAX_ATTRACTORS`.
        extra_nouns: intervening nouns of the subject's number; ``n_attractors + extra_nouns`` is at most
            :data:`MAX_INTERVENING` (so that the sentence has at most :data:`MAX_LENGTH` tokens).
        plural: the subject's number (``NNS`` and a ``VBP`` verb when True).
        preamble: what precedes the subject, one of :data:`PREAMBLES`, or a list to draw it from uniformly.
        rng: a numpy Generator or a seed.

    Returns:
        An :class:`AgreementExample`: ``subj_index`` the subject (1 without a preamble), ``verb_index`` the
        main verb, ``n_intervening = n_attractors + extra_nouns``; ``extra["has_rel"]`` says whether a
        relative clause intervenes.
    """
    check_int("n_attractors", n_attractors, minimum=0, maximum=MAX_ATTRACTORS)
    most = MAX_INTERVENING - n_attractors
    check_int("extra_nouns", extra_nouns, minimum=0, maximum=most,
              message=f"must be an integer in [0, {most}]: at most {MAX_INTERVENING} intervening nouns in "
                      f"all keep a sentence within {MAX_LENGTH} tokens")
    check_bool("plural", plural)
    return _build(n_attractors, extra_nouns, plural, _preambles(preamble), _rng(rng))


def _int_list(name: str, values, maximum: int) -> list[int]:
    values = [values] if isinstance(values, int) and not isinstance(values, bool) else list(values)
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= maximum
                         for v in values):
        raise ParameterError(f"{name}={values!r} must be a non-empty list of integers in [0, {maximum}]")
    return [int(v) for v in values]


def generate(
    size: int,
    *,
    attractor_counts: Sequence[int],
    rng: np.random.Generator | int,
    extra_nouns: int | Sequence[int] | None = None,
    stratified: bool = False,
    p_plural: float = 0.5,
    preambles: Sequence[str] = PREAMBLES,
    symmetric: bool = False,
) -> list[AgreementExample]:
    """Draw ``size`` sentences of the grammar (see the module docstring).

    Args:
        size: number of examples.
        attractor_counts: the attractor counts to draw from, each in ``[0, MAX_ATTRACTORS]``.
        rng: a numpy Generator or a seed; the output is a function of it.
        extra_nouns: intervening nouns of the subject's number, drawn uniformly from this list per example
            (or fixed, given an int; default ``(0, 1, 2)``); ``max(attractor_counts) + max(extra_nouns) <=
            MAX_INTERVENING``.
        stratified: False: each example's count is drawn uniformly from ``attractor_counts``; True: exactly
            ``size / len(attractor_counts)`` examples per count (distinct counts, ``size`` a multiple),
            in random order.
        p_plural: probability of a plural subject (0.5: balanced labels).
        preambles: what may precede the subject, drawn uniformly per sentence (``["none"]``: the subject is
            always the first noun, as in version 1 of this grammar).
        symmetric: draw the extra nouns like the attractors, from ``attractor_counts`` (``extra_nouns`` left
            out), independently, redrawing both where together they exceed :data:`MAX_INTERVENING`. The
            pair (attractors, extra nouns) is then exchangeable: the intervening nouns have the subject's
            number as often as the other one, so their numbers say nothing about the verb's. Without it,
            many attractors and few extra nouns make "the other number than most nouns" a shortcut (what a
            training set needs; a test set stratified by attractors keeps the default extra nouns).

    Returns:
        A list of :class:`AgreementExample` (write it with :func:`urnlib.corpora.linzen.write_tsv`).
    """
    check_int("size", size, minimum=0)
    counts = _int_list("attractor_counts", attractor_counts, MAX_ATTRACTORS)
    check_bool("symmetric", symmetric)
    check_bool("stratified", stratified)
    if symmetric and (extra_nouns is not None or stratified):
        raise ParameterError(f"symmetric=True draws the extra nouns like the attractors: leave out "
                             f"extra_nouns (given {extra_nouns!r}) and stratified (given {stratified!r})")
    extras = counts if symmetric else _int_list("extra_nouns", (0, 1, 2) if extra_nouns is None
                                                 else extra_nouns, MAX_INTERVENING)
    most = max(counts) + (min(extras) if symmetric else max(extras))
    if most > MAX_INTERVENING:
        raise ParameterError(
            f"max(attractor_counts) + {'min' if symmetric else 'max'}(extra_nouns) = {most} > "
            f"{MAX_INTERVENING} intervening nouns (the most that fit in {MAX_LENGTH} tokens); lower "
            "extra_nouns or the counts")
    check_float("p_plural", p_plural, minimum=0.0, maximum=1.0)
    kinds = _preambles(preambles)
    rng = _rng(rng)
    if stratified:
        if len(set(counts)) != len(counts):
            raise ParameterError(f"attractor_counts={counts} has repeated values; stratified=True needs "
                                 f"distinct counts (repeat a count only to weight it, with stratified=False)")
        if size % len(counts):
            raise ParameterError(f"size={size} must be a multiple of {len(counts)} (the number of "
                                 f"attractor_counts) with stratified=True, e.g. {size - size % len(counts)}")
        chosen = rng.permutation(np.repeat(counts, size // len(counts)))
    else:
        chosen = np.asarray(counts)[rng.integers(0, len(counts), size)]
    chosen_extra = np.asarray(extras)[rng.integers(0, len(extras), size)]
    while symmetric and (over := chosen + chosen_extra > MAX_INTERVENING).any():  # redraw both: symmetric
        chosen[over] = np.asarray(counts)[rng.integers(0, len(counts), int(over.sum()))]
        chosen_extra[over] = np.asarray(extras)[rng.integers(0, len(extras), int(over.sum()))]
    plural = rng.random(size) < p_plural
    return [_build(int(a), int(e), bool(p), kinds, rng) for a, e, p in zip(chosen, chosen_extra, plural)]
