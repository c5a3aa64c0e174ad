"""Properties of the core on random inputs (hypothesis; issue 48): each brute-force definition here is written
from the papers' text and the module docstrings, not from the implementation.

* Dyck (paper 000 sec. 5: "An attractor is an opening parenthesis occurring between the pair, but of a
  different kind"; "The depth of the string is the maximum nesting level reached within it"): attractor counts
  and depths against brute force on random Dyck strings, membership against reduction of matched pairs;
* every generator's strings belong to its language (Dyck, cross-serial, a^n b^n, Elman's templates, the
  agreement grammar with its attractors);
* a URN's state keeps its norm for any token sequence (the transition matrices are orthogonal);
* the verdict rules are invariant to the order of the seeds and flip when the claim's direction flips.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from urnlib import rules
from urnlib.languages import agreement_grammar as grammar
from urnlib.languages import anbn, cross_serial, dyck, elman
from urnlib.models.unitary import URN
from urnlib.seeds import Stat

_QUIET = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}
SETTINGS = settings(max_examples=60, **_QUIET)
RULES = settings(max_examples=25, **_QUIET)  # the rules' seed searches run scipy's tests up to 1,000 times
FEW = settings(max_examples=15, **_QUIET)

# --------------------------------------------------------------------------- #
# Dyck: brute force from the definitions
# --------------------------------------------------------------------------- #
OPEN, CLOSE = "([{<+", ")]}>-"  # the five pairs of paper 001 Table 2 (reference-facts: ( ) [ ] { } < > + -)


def test_the_brackets_are_the_papers():
    assert dyck.PAIRS == tuple(zip(OPEN, CLOSE))


def partner(s: str, j: int) -> int:
    """The position of the opener that the closer at ``j`` closes: the nearest one to its left whose span
    holds as many openers as closers."""
    level = 0
    for i in range(j - 1, -1, -1):
        if s[i] in CLOSE:
            level += 1
        elif level == 0:
            return i
        else:
            level -= 1
    raise AssertionError(f"{s!r}: the closer at {j} closes nothing")


def brute_attractors(s: str) -> list[int | None]:
    """Per position: None at an opener; at a closer, the openers of another kind between its pair's two
    brackets (each counted, closed again or not)."""
    out = []
    for j, ch in enumerate(s):
        if ch in OPEN:
            out.append(None)
            continue
        i = partner(s, j)
        out.append(sum(1 for c in s[i + 1:j] if c in OPEN and c != s[i]))
    return out


def brute_depth(s: str) -> int:
    return max([s[:t].count("(") + sum(s[:t].count(o) for o in OPEN[1:]) - sum(s[:t].count(c) for c in CLOSE)
                for t in range(len(s) + 1)])


def brute_is_dyck(s: str) -> bool:
    """Delete matched adjacent pairs until none is left: a Dyck string is erased."""
    pairs = [o + c for o, c in zip(OPEN, CLOSE)]
    while any(p in s for p in pairs):
        for p in pairs:
            s = s.replace(p, "")
    return s == ""


def _dyck_from(steps: list[tuple[bool, int]]) -> str:
    """A Dyck string from coin flips and kinds: open on heads (or when nothing is open), else close."""
    stack, out = [], []
    for heads, kind in steps:
        if heads or not stack:
            stack.append(kind)
            out.append(OPEN[kind])
        else:
            out.append(CLOSE[stack.pop()])
    return "".join(out) + "".join(CLOSE[k] for k in reversed(stack))


DYCK = st.lists(st.tuples(st.booleans(), st.integers(0, 4)), max_size=24).map(_dyck_from)


def test_two_attractors_of_one_kind_count_twice():
    assert dyck.attractors("{(())}") == [None, None, None, 0, 0, 2]
    assert dyck.attractors("{()()[]}") == [None, None, 0, None, 0, None, 0, 3]
    assert brute_attractors("{(())}") == dyck.attractors("{(())}")


@SETTINGS
@given(DYCK)
def test_dyck_attractors_and_depth_match_brute_force(s):
    assert dyck.is_dyck(s) and brute_is_dyck(s)
    assert dyck.attractors(s) == brute_attractors(s)
    assert dyck.depth(s) == brute_depth(s)


@SETTINGS
@given(st.text(alphabet=OPEN + CLOSE, max_size=10))
def test_dyck_membership_matches_reduction(s):
    assert dyck.is_dyck(s) == brute_is_dyck(s)


@SETTINGS
@given(DYCK, st.sampled_from("ab ^_"))
def test_a_symbol_outside_the_brackets_is_not_dyck(s, other):
    assert not dyck.is_dyck(s + other)


@FEW
@given(n_pairs=st.integers(1, 10), cap=st.integers(1, 10), method=st.sampled_from(dyck.GENERATORS),
       seed=st.integers(0, 2 ** 16), capped=st.booleans())
def test_dyck_generators_draw_dyck_strings_within_their_depth(n_pairs, cap, method, seed, capped):
    cap = min(cap, n_pairs) if capped else None
    strings = dyck.generate(20, n_pairs, max_depth=cap, method=method, rng=seed)
    assert len(strings) == 20
    for s in strings:
        assert len(s) == 2 * n_pairs and brute_is_dyck(s)
        if cap is not None:
            assert brute_depth(s) <= cap
            if method == "midpoint":
                assert brute_depth(s) == cap  # the authors' generator reaches the cap exactly


def test_dyck_defaults_are_the_papers_ten_pairs_from_seed_0():
    assert dyck.generate(4) == dyck.generate(4, 10, rng=0, method="walk")
    assert all(len(s) == 20 for s in dyck.generate(4)) and dyck.generate(0) == []


# --------------------------------------------------------------------------- #
# the other languages' generators
# --------------------------------------------------------------------------- #
def brute_cross_serial(s: str, k: int, min_block: int) -> bool:
    """a^m b^n c^m d^n with min_block <= m, n and m + n < k (paper 001 sec. 3)."""
    found = re.fullmatch(r"(a*)(b*)(c*)(d*)", s)
    if not found:
        return False
    m, n, m2, n2 = (len(g) for g in found.groups())
    return m == m2 and n == n2 and min(m, n) >= min_block and m + n < k


@SETTINGS
@given(st.text(alphabet="abcd", max_size=14), st.integers(2, 10), st.integers(0, 1))
def test_cross_serial_membership_matches_brute_force(s, k, min_block):
    assume(k > 2 * min_block)
    assert cross_serial.is_member(s, k, min_block) == brute_cross_serial(s, k, min_block)


@FEW
@given(k=st.integers(3, 12), min_block=st.integers(0, 1), sampler=st.sampled_from(cross_serial.SAMPLERS),
       seed=st.integers(0, 2 ** 16))
def test_cross_serial_generator_draws_members(k, min_block, sampler, seed):
    pairs = cross_serial.generate(30, k, min_block=min_block, rng=seed, sampler=sampler)
    assert len(pairs) == 30
    for m, n in pairs:
        s = cross_serial.string(m, n)
        assert s == "a" * m + "b" * n + "c" * m + "d" * n and brute_cross_serial(s, k, min_block)
    every = {(m, n) for m in range(k) for n in range(k)}
    assert set(cross_serial.language(k, min_block)) == {
        (m, n) for m, n in every if brute_cross_serial(cross_serial.string(m, n), k, min_block)}


@SETTINGS
@given(st.lists(st.integers(0, 30), max_size=8))
def test_anbn_strings_are_a_n_b_n(ns):
    for n, s in zip(ns, anbn.strings(ns)):
        assert re.fullmatch(r"(a*)(b*)", s) and s.count("a") == s.count("b") == n and len(s) == 2 * n


@SETTINGS
@given(st.integers(1, 12), st.integers(0, 1))
def test_anbn_next_symbols_are_those_that_continue_a_string_of_the_language(n, min_n):
    """After each prefix of a^n b^n: the symbols that extend it to a prefix of some a^m b^m, m >= min_n
    (``</s>`` where the prefix is itself such a string), brute force over m up to n + 2."""
    s, stop = "a" * n + "b" * n, anbn.AnbnVocab.STOP
    members = ["a" * m + "b" * m for m in range(min_n, n + 3)]
    sets = anbn.next_symbol_sets(n, min_n)
    assert len(sets) == 2 * n + 1
    for t in range(2 * n + 1):
        prefix = s[:t]
        allowed = {c for c in "ab" if any(w.startswith(prefix + c) for w in members)}
        allowed |= {stop} if prefix in members else set()
        assert sets[t] == allowed, (t, prefix)
    assert anbn.deterministic_positions(n, min_n) == [t for t in range(2 * n + 1) if len(sets[t]) == 1]


@FEW
@given(st.integers(0, 40), st.integers(0, 2 ** 16))
def test_elman_sentences_fill_a_template_of_table_4_with_words_of_table_3(count, seed):
    sentences = elman.generate(count, np.random.default_rng(seed))
    assert len(sentences) == count
    for words in sentences:
        assert any(len(t) == len(words) and all(w in elman.CATEGORIES[c] for w, c in zip(words, t))
                   for t in elman.TEMPLATES), words
        assert elman.is_template_sentence(words)


_SING = {s: p for s, p in grammar.NOUNS}
_PLUR = {p: s for s, p in grammar.NOUNS}
_VSING = {s for s, _ in grammar.VERBS}
_VPLUR = {p for _, p in grammar.VERBS}


def _noun(words, tags, i) -> bool | None:
    """The number (plural?) of a noun phrase ``the N`` at ``i``, or None when there is none."""
    if i + 1 >= len(words) or words[i] != "the" or tags[i] != "DT":
        return None
    w, t = words[i + 1], tags[i + 1]
    if t == "NN" and w in _SING:
        return False
    if t == "NNS" and w in _PLUR:
        return True
    return None


def _verb(words, tags, i, plural) -> bool:
    """A present-tense verb at ``i`` agreeing with a subject of number ``plural``."""
    if i >= len(words):
        return False
    return (tags[i], words[i] in (_VPLUR if plural else _VSING)) == ("VBP" if plural else "VBZ", True)


def _tails(words, tags, i, plural, depth=0) -> set[int]:
    """Where a ``Tail`` after a noun of number ``plural`` may end (the module docstring's grammar):
    Tail -> (empty) | IN the N Tail | that V the N Tail | that the N Tail V."""
    ends = {i}
    if i < len(words) and tags[i] == "IN" and words[i] in grammar.PREPOSITIONS:
        n = _noun(words, tags, i + 1)
        if n is not None:
            ends |= _tails(words, tags, i + 3, n, depth)
    if i < len(words) and words[i] == "that" and tags[i] == "WDT":
        if _verb(words, tags, i + 1, plural) and (n := _noun(words, tags, i + 2)) is not None:
            ends |= _tails(words, tags, i + 4, n, depth)
        if (n := _noun(words, tags, i + 1)) is not None and depth < grammar.MAX_ORC_DEPTH:
            ends |= {j + 1 for j in _tails(words, tags, i + 3, n, depth + 1) if _verb(words, tags, j, n)}
    return ends


def parses(words, tags) -> set[tuple[int, int]]:
    """Every (subject, verb) position of a parse of S -> Pre the N Tail V the N . (module docstring)."""
    starts = {0}
    if tags and tags[0] in ("IN", "WRB") and (n := _noun(words, tags, 1)) is not None:
        if words[0] in grammar.INTRO_PREPOSITIONS and tags[0] == "IN":  # Pre -> IN the N [IN the N] [,]
            after = {3}
            if len(tags) > 3 and tags[3] == "IN" and _noun(words, tags, 4) is not None:
                after.add(6)
            starts |= after | {j + 1 for j in after if j < len(words) and words[j] == ","}
        if words[0] in grammar.SUBORDINATORS and _verb(words, tags, 3, n) \
                and _noun(words, tags, 4) is not None and words[6:7] == (",",):  # SUB the N V the N ,
            starts.add(7)
    found = set()
    for s in starts:
        if (subject := _noun(words, tags, s)) is None:
            continue
        for j in _tails(words, tags, s + 2, subject):
            if _verb(words, tags, j, subject) and _noun(words, tags, j + 1) is not None \
                    and words[j + 3:] == (".",) and tags[j + 3:] == (".",):
                found.add((s + 1, j))
    return found


@FEW
@given(attractors=st.integers(0, 6), extra=st.integers(0, 3), plural=st.booleans(),
       preamble=st.sampled_from(grammar.PREAMBLES), seed=st.integers(0, 2 ** 16))
def test_agreement_sentences_parse_and_have_the_attractors_asked_for(attractors, extra, plural, preamble,
                                                                     seed):
    e = grammar.build_sentence(attractors, extra_nouns=extra, plural=plural, preamble=preamble, rng=seed)
    assert (e.subj_index, e.verb_index) in parses(e.words, e.pos), " ".join(e.words)
    assert len(e.words) == len(e.pos) <= grammar.MAX_LENGTH
    between = [t for t in e.pos[e.subj_index + 1:e.verb_index] if t in ("NN", "NNS")]
    assert len(between) == e.n_intervening == attractors + extra
    assert sum(t != e.pos[e.subj_index] for t in between) == e.n_attractors == attractors
    assert e.pos[e.subj_index] == ("NNS" if plural else "NN") and e.verb_pos == ("VBP" if plural else "VBZ")
    assert e.pos[e.verb_index] == e.verb_pos
    assert (e.subj_index == 1) == (preamble == "none")


@FEW
@given(st.lists(st.integers(0, 5), min_size=1, max_size=3), st.integers(1, 12), st.integers(0, 2 ** 16),
       st.booleans())
def test_agreement_generator_draws_sentences_of_the_grammar(counts, size, seed, symmetric):
    for e in grammar.generate(size, attractor_counts=counts, rng=seed, symmetric=symmetric):
        assert (e.subj_index, e.verb_index) in parses(e.words, e.pos), " ".join(e.words)
        assert e.n_attractors in counts
        counted = grammar.count_attractors(e.pos, e.subj_index, e.verb_index)
        assert counted == (e.n_intervening, e.n_attractors)


# --------------------------------------------------------------------------- #
# the URN keeps the state's norm
# --------------------------------------------------------------------------- #
@FEW
@given(n=st.sampled_from([2, 4, 6, 8]), truncated=st.booleans(), k=st.integers(1, 3), seed=st.integers(0, 99),
       tokens=st.lists(st.integers(0, 4), min_size=1, max_size=30), scale=st.sampled_from([0.05, 1.0, 5.0]))
def test_urn_state_norm_is_preserved_for_any_sequence(n, truncated, k, seed, tokens, scale):
    torch.manual_seed(seed)
    model = URN(5, n, k=min(k, n // 2) if truncated else None, init_scale=scale).double().eval()
    states = model.states(torch.tensor([tokens]))  # (1, T, n)
    assert states.shape == (1, len(tokens), n)
    torch.testing.assert_close(states.norm(dim=-1), torch.ones(1, len(tokens), dtype=torch.float64))
    Q = model.matrices()
    torch.testing.assert_close(Q @ Q.transpose(1, 2), torch.eye(n, dtype=torch.float64).expand(5, n, n))
    h = model.h0
    for t, x in enumerate(tokens):  # h_t = h_{t-1} Q(x_t), paper 000 sec. 2
        h = h @ Q[x]
        torch.testing.assert_close(states[0, t], h)


# --------------------------------------------------------------------------- #
# the verdict rules: order of the seeds, direction of the claim
# --------------------------------------------------------------------------- #
# values on a grid of quarters: their sums are exact, so no order of the seeds changes a mean
VALUES = st.lists(st.integers(-40, 40).map(lambda v: v / 4), min_size=1, max_size=7)
FLIP = {True: False, False: True, None: None}


def shuffled(values, data):
    return Stat.of(data.draw(st.permutations(values)))


def neg(values):
    return Stat.of(-v for v in values)


@RULES
@given(VALUES, VALUES, st.data())
def test_compare_ignores_seed_order_and_flips_with_its_direction(a, b, data):
    d = rules.compare(Stat.of(a), Stat.of(b))
    assert rules.compare(shuffled(a, data), shuffled(b, data)).holds == d.holds
    assert rules.compare(Stat.of(a), Stat.of(b), higher=False).holds == FLIP[d.holds]
    assert rules.compare(Stat.of(b), Stat.of(a)).holds == FLIP[d.holds]  # the sides swapped
    assert rules.compare(neg(a), neg(b), higher=False).holds == d.holds  # the mirror image
    assert rules.beats(Stat.of(a), Stat.of(b)) == d.holds


@RULES
@given(VALUES, st.integers(-40, 40).map(lambda v: v / 4), st.data())
def test_threshold_and_paired_ignore_seed_order_and_flip_with_their_direction(s, value, data):
    d = rules.threshold(Stat.of(s), value)
    assert rules.threshold(shuffled(s, data), value).holds == d.holds
    assert rules.paired(shuffled(s, data)).holds == rules.paired(Stat.of(s)).holds
    if all(v == value for v in s):  # exactly at the bound, no spread: past it on neither side
        assert d.holds is False and rules.threshold(Stat.of(s), value, above=False).holds is False
        return
    assert rules.threshold(Stat.of(s), value, above=False).holds == FLIP[d.holds]
    assert rules.at_least(Stat.of(s), value) == d.holds
    assert rules.at_most(Stat.of(s), value) == FLIP[d.holds]
    assert rules.threshold(neg(s), -value, above=False).holds == d.holds
    if any(v != 0 for v in s):
        assert rules.paired(neg(s)).holds == FLIP[rules.paired(Stat.of(s)).holds]
        assert rules.positive(Stat.of(s)) == rules.paired(Stat.of(s)).holds


@RULES
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.data())
def test_every_seed_ignores_seed_order_and_flips_with_the_property(flags, data):
    d = rules.every_seed(flags)
    assert rules.every_seed(data.draw(st.permutations(flags))).holds == d.holds
    assert rules.every_seed([not f for f in flags]).holds == FLIP[d.holds]
    assert rules.on_every_seed(flags) == d.holds
    assert d.holds is (True if all(flags) else False if not any(flags) else d.holds)


@RULES
@given(st.integers(1, 30), st.integers(1, 30), st.data())
def test_rates_flip_when_the_sides_swap(n_a, n_b, data):
    a, b = data.draw(st.integers(0, n_a)), data.draw(st.integers(0, n_b))
    d = rules.rates(a, n_a, b, n_b)
    assert rules.rates(b, n_b, a, n_a).holds == FLIP[d.holds]
    assert rules.rates(n_a - a, n_a, n_b - b, n_b).holds == FLIP[d.holds]  # the property negated
    if d.holds is not None:
        assert d.holds == (a / n_a > b / n_b)


@RULES
@given(VALUES, VALUES, st.integers(0, 8).map(lambda v: v / 4), st.booleans(), st.data())
def test_within_and_matches_ignore_seed_order_and_mirror_with_their_direction(a, b, tolerance, higher, data):
    for rule in (rules.within, rules.matches):
        d = rule(Stat.of(a), Stat.of(b), tolerance, higher=higher)
        assert rule(shuffled(a, data), shuffled(b, data), tolerance, higher=higher).holds == d.holds
        assert rule(neg(a), neg(b), tolerance, higher=not higher).holds == d.holds
    m = rules.matches(Stat.of(a), Stat.of(b), tolerance, higher=higher)
    assert rules.matches(Stat.of(b), Stat.of(a), tolerance, higher=higher).holds == m.holds  # symmetric


@pytest.mark.parametrize("rule", [rules.compare, rules.within, rules.matches])
def test_a_side_without_values_decides_nothing(rule):
    args = (0.1,) if rule is not rules.compare else ()
    assert rule(Stat.of([]), Stat.of([1.0, 2.0]), *args).holds is None
    assert rule(Stat.of([1.0, 2.0]), Stat.of([]), *args).holds is None


def test_a_measure_without_values_decides_nothing():
    for d in (rules.threshold(Stat.of([]), 0.5), rules.paired(Stat.of([])), rules.every_seed([])):
        assert d.holds is None and np.isnan(d.size) and "0 of 0" in d.direction or "no value" in d.direction


def test_a_higher_value_is_better_unless_said_otherwise():
    a, b = Stat.of([0.85, 0.86, 0.84]), Stat.of([1.0, 1.01, 0.99])  # A clearly below B
    assert rules.compare(a, b).holds is False and rules.compare(a, b, higher=False).holds is True
    assert rules.within(a, b, 0.1).holds is False and rules.within(a, b, 0.1, higher=False).holds is True
    # a relative tolerance: 0.85 is within 20% of 1.0 below it, not within 1/1.2 of it
    assert rules.matches(a, b, 0.2, relative=True).holds is True
    assert rules.matches(a, b, 0.2, relative=True, higher=False).holds is None
    assert rules.threshold(a, 0.9).holds is False and rules.threshold(a, 0.9, above=False).holds is True


# edges that mutants of urnlib/rules.py found untested (benchmarks/mutation.py)
def test_a_share_too_close_to_one_half_for_a_thousand_seeds_names_no_seed_count():
    d = rules.every_seed([True] * 51 + [False] * 49)
    assert d.holds is None and d.seeds_needed is None and "more than 1,000 seeds" in d.undecided
    assert rules.rates(51, 100, 49, 100).seeds_needed is None


def test_beyond_and_not_beyond_the_training_range():
    above, within_range = Stat.of([25, 30, 28]), Stat.of([15, 18])
    assert rules.beyond(above, 20).holds is True and rules.not_beyond(above, 20).holds is False
    assert rules.beyond(within_range, 20).holds is None  # two seeds, 3.5 below: undecided by the t-test ...
    assert rules.not_beyond(within_range, 20).holds is True  # ... but no seed goes past 20
    assert rules.not_beyond(Stat.of([20, 20]), 20).holds is True  # no seed past n: nothing to decide
    assert "the largest n accepted 27.7, above 20" == rules.beyond(above, 20).direction


def test_seeds_to_decide_counts_from_two_up_to_max_seeds():
    from scipy import stats

    assert rules.seeds_to_decide(10.0, 0.01) == 2  # a clear difference: the fewest seeds that have a spread
    assert rules.seeds_to_decide(0.1, 0.0) is None and rules.seeds_to_decide(0.0, 1.0) is None

    def crit(n):  # the difference that n seeds per side decide at variance 1
        return stats.t.ppf(1 - rules.LEVEL / 2, 2 * (n - 1)) * (2 / n) ** 0.5

    last = rules.MAX_SEEDS
    assert rules.seeds_to_decide((crit(last - 1) + crit(last)) / 2, 1.0) == last
    assert rules.seeds_to_decide(crit(last) * 0.99, 1.0) is None


def test_a_decision_is_frozen():
    import dataclasses

    d = rules.compare(Stat.of([1.0, 2.0]), Stat.of([0.0, 0.5]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.holds = None
    assert hash(d) == hash(dataclasses.replace(d))


def test_a_margin_must_be_passed_on_top_of_the_noise():
    a, b = Stat.of([2.0, 2.1, 1.9]), Stat.of([1.0, 1.1, 0.9])  # A above B by 1.0, little spread
    assert rules.compare(a, b, margin=0.5).holds is True
    at, past = rules.compare(a, b, margin=1.0), rules.compare(a, b, margin=1.5)
    assert at.holds is None and past.holds is None  # not beyond the margin, nor significantly behind
    assert at.seeds_needed == past.seeds_needed == 4  # the seeds that would decide the difference itself
    wide = rules.compare(Stat.of([2.0, 3.0, 1.0]), Stat.of([1.0, 2.0, 0.0]), margin=0.5)  # spread 1
    assert wide.holds is None and wide.seeds_needed == rules.seeds_to_decide(1.0 - 0.5, 1.0) == 32


def test_equal_sides_without_spread_are_a_tie_not_a_win():
    d = rules.compare(Stat.of([0.5, 0.5]), Stat.of([0.5, 0.5]))
    assert (d.holds, d.cause, d.direction) == (None, "tie", "A equal to B on every seed")
    once = rules.compare(Stat.of([0.5]), Stat.of([0.5]))  # one seed a side: no tie on every seed, undecided
    assert (once.holds, once.cause, once.direction) == (None, None, "A equal to B")
    assert rules.compare(Stat.of([0.6]), Stat.of([0.5]), margin=0.1).holds is None  # not past the margin


def test_rates_take_counts_of_seeds_from_one_seed_on():
    assert rules.rates(1, 1, 0, 1).holds is None  # one seed a side: a count, undecided
    for args, side in (((5, 3, 1, 2), "A: 5 of 3"), ((1, 2, 1, 0), "B: 1 of 0"), ((0, 0, 0, 1), "A: 0 of 0")):
        with pytest.raises(ValueError, match=side):
            rules.rates(*args)


def test_an_undecided_threshold_names_the_seeds_of_a_one_sample_test():
    s = Stat.of([0.52, 0.58, 0.49])  # 0.53 on average, above 0.5 but not significantly
    d = rules.threshold(s, 0.5)
    assert d.holds is None and d.seeds_needed == rules.seeds_to_decide(d.size, s.sd ** 2, sides=1) == 12


def test_undecided_rates_name_the_seeds_at_which_fishers_test_would_decide_them():
    from scipy import stats

    d = rules.rates(3, 6, 5, 6)  # 50% against 83%: undecided at six seeds a side
    assert d.holds is None and d.size == pytest.approx(0.5 - 5 / 6)
    p = [stats.fisher_exact([[round(n / 2), n - round(n / 2)], [round(5 * n / 6), n - round(5 * n / 6)]])[1]
         for n in range(7, 200)]
    assert d.seeds_needed == 7 + next(i for i, value in enumerate(p) if value < rules.LEVEL)
    assert rules.rates(0, 6, 6, 6).holds is False and rules.rates(6, 6, 0, 6).holds is True


def test_matches_reports_the_side_behind_whichever_it_is():
    ahead, behind = Stat.of([1.0, 1.3, 0.8]), Stat.of([0.9, 1.2, 0.6])
    for a, b in ((ahead, behind), (behind, ahead)):
        m = rules.matches(a, b, 0.05)
        w = rules.within(behind, ahead, 0.05)
        assert (m.holds, m.size, m.seeds_needed) == (w.holds, w.size, w.seeds_needed) and m.seeds_needed
        assert m.direction == rules.compare(a, b).direction
