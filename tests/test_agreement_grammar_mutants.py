"""urnlib.languages.agreement_grammar at the edges that mutants of the module survived
(benchmarks/mutation.py, issue 48): the length budget (a relative clause is drawn wherever it still fits in
MAX_LENGTH tokens, and only there), the symmetric draw of attractors and extra nouns (its redraws), the
bounds of the counts, the sentence-initial prepositions, count_attractors' span, and build_sentence's
defaults. Fast: the mutation run puts this file first."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from urnlib.languages.agreement_grammar import (MAX_INTERVENING, MAX_LENGTH, MAX_PREAMBLE, PREAMBLES,
                                                PREPOSITIONS, build_sentence, count_attractors, generate)
from urnlib.params import ParameterError


def _relatives(ex) -> list[str]:
    """The relative clauses between the subject and its verb, in order: 'src' (that V the N) or 'orc'
    (that the N ... V)."""
    words = ex.words[ex.subj_index + 1: ex.verb_index]
    return ["orc" if words[i + 1] == "the" else "src" for i, w in enumerate(words) if w == "that"]


def _last_noun_by_a_relative(ex) -> bool:
    last = max(i for i in range(ex.subj_index + 1, ex.verb_index) if ex.pos[i] in ("NN", "NNS"))
    return ex.words[last - 2] == "that" or ex.words[last - 3] == "that"


def test_fifteen_nouns_fill_the_sixty_tokens_with_relative_clauses_wherever_they_fit():
    """Without a preamble, 15 intervening nouns take 2 + 3 * 15 + 4 = 51 tokens as PPs; each relative
    clause adds one (4 tokens, not 3): at most 9 of them fit in 60 tokens, and a relative clause is drawn
    wherever one still fits, at any noun, of either kind."""
    rng = np.random.default_rng(0)
    examples = [build_sentence(5, extra_nouns=10, preamble="none", rng=rng) for _ in range(300)]
    assert all(len(ex.words) == 51 + len(_relatives(ex)) <= MAX_LENGTH for ex in examples)
    full = [ex for ex in examples if len(ex.words) == MAX_LENGTH]
    assert full and any("orc" in _relatives(ex) for ex in full) and any(
        _relatives(ex).count("src") >= 7 for ex in full)
    assert any(_last_noun_by_a_relative(ex) for ex in examples)  # the 15th noun: a relative still fits
    assert any(ex.words[ex.subj_index + 1] == "that" for ex in examples)


def test_the_longest_preamble_is_max_preamble_tokens():
    """'IN the N IN the N ,' and 'SUB the N V the N ,': 7 tokens before 'the' of the subject."""
    examples = generate(400, attractor_counts=[2], rng=1, preambles=["pp", "clause"])
    assert max(ex.subj_index - 1 for ex in examples) == MAX_PREAMBLE == 7


def test_a_sentence_initial_pp_opens_with_any_preposition_but_of():
    examples = generate(600, attractor_counts=[1], rng=2, preambles=["pp"])
    assert {ex.words[0] for ex in examples} == set(PREPOSITIONS) - {"of"}


def test_symmetric_draws_redraw_pairs_over_the_limit_uniformly():
    """Counts 0, 8 and 15 drawn independently for the attractors and the extra nouns; the pairs over 15 nouns
    ((8, 8), (8, 15), (15, 8), (15, 15)) are drawn again, so the five pairs that fit are equally likely."""
    n = 1500
    examples = generate(n, attractor_counts=[0, 8, 15], rng=3, symmetric=True)
    pairs = Counter((ex.n_attractors, ex.n_intervening - ex.n_attractors) for ex in examples)
    assert set(pairs) == {(0, 0), (0, 8), (0, 15), (8, 0), (15, 0)}
    sd = math.sqrt(n * 0.2 * 0.8)
    assert all(abs(c - n / 5) < 5 * sd for c in pairs.values()), pairs


def test_counts_up_to_the_limit_are_accepted():
    examples = generate(20, attractor_counts=[13], extra_nouns=[2], rng=4)
    assert {(ex.n_attractors, ex.n_intervening) for ex in examples} == {(13, MAX_INTERVENING)}


def test_symmetric_leaves_out_extra_nouns_and_stratified_each_on_its_own():
    with pytest.raises(ParameterError, match="symmetric"):
        generate(10, attractor_counts=[1, 2], rng=0, symmetric=True, extra_nouns=[1])
    with pytest.raises(ParameterError, match="symmetric"):
        generate(10, attractor_counts=[1, 2], rng=0, symmetric=True, stratified=True)


def test_build_sentence_defaults_to_a_singular_subject_without_extra_nouns_from_seed_0():
    ex = build_sentence(3)
    assert ex == build_sentence(3, extra_nouns=0, plural=False, preamble=PREAMBLES, rng=0)
    assert (ex.n_attractors, ex.n_intervening, ex.verb_pos) == (3, 3, "VBZ")


def test_count_attractors_counts_every_noun_strictly_between():
    # tags alone: the noun right after the subject (index 0) lies between it and its verb
    assert count_attractors(["NN", "NNS", "VBZ"], 0, 2) == (1, 1)
    assert count_attractors(["DT", "NN", "NN", "NNS", "VBZ"], 1, 4) == (2, 1)
    with pytest.raises(ParameterError):
        count_attractors(["DT", "NN", "VBZ"], 3, 2)  # past the end: rejected, not an IndexError
