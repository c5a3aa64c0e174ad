"""Generation of the entailment splits by Evans et al.'s published procedure.

From Evans et al. and their released generator (``Main.hs``), re-implemented here (no code copied):

* a formula with n operators ("complexity") is a variable if n = 0, else one of ``~``, ``&``, ``|``,
  ``>`` chosen uniformly; a binary node splits the remaining n - 1 operators uniformly between its
  two sides; leaves are drawn uniformly from a variable pool (a random subset of a..z);
* each formula's operator count is uniform in [k // 3, k] (k = the "max complexity" argument);
  the pool's size is uniform in [1, v] (v = the "max variables" argument). The released code draws
  one pool per program run; we draw one per small group of pairs (``SplitSpec.pool_size``), so a
  split mixes many pools;
* pairs (A, B) over the same pool are kept when A |= B; two kept pairs (A1, B1), (A2, B2) with
  A1 |/= B2 and A2 |/= B1 form a four-tuple giving the lines (A1,B1,1), (A2,B2,1), (A1,B2,0),
  (A2,B1,0): every formula is premise (or hypothesis) of one positive and one negative example, so
  nothing computed from the premise alone or the hypothesis alone predicts the label, and every split
  is exactly 50/50;
* test examples alpha-equivalent (equal up to renaming variables) to a training example are removed
  (``filter_alpha_equivalences`` in the released code); here whole four-tuples are rejected, which
  keeps the balance;
* the released ``test_massive`` file is built differently: lines come in pairs (A,B,1), (A,B',0)
  where B' is B with two disjoint subformulas swapped (so B' has B's length and variables: H1 and H2
  cannot tell the two lines apart). ``method="swap"`` does this.

The splits' parameters are in :mod:`urnlib.languages.logic.splits`.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from urnlib.languages.logic.exam import exam_examples
from urnlib.languages.logic.examples import Entailment, heuristics
from urnlib.languages.logic.formulas import ALPHABET, Bin, Formula, Not, Var, alpha_key, to_string
from urnlib.languages.logic.semantics import entails, satisfiable, truth_columns, truth_table
from urnlib.languages.logic.splits import SPLIT_NAMES, SPLITS, SplitSpec
from urnlib.params import ParameterError, check_choice, check_int

__all__ = ["random_formula", "generate_split", "generate_dataset"]

def _gen(n: int, letters, cols: dict, full: int, rnd: random.Random):
    """Random formula with exactly n operators over ``letters`` (Evans et al.'s recursion) and its
    truth table over ``cols``."""
    if n == 0:
        v = letters[int(rnd.random() * len(letters))]
        return Var(v), cols[v]
    k = int(rnd.random() * 4)
    if k == 0:
        f, t = _gen(n - 1, letters, cols, full, rnd)
        return Not(f), full ^ t
    na = int(rnd.random() * n)  # uniform in 0..n-1
    fa, ta = _gen(na, letters, cols, full, rnd)
    fb, tb = _gen(n - 1 - na, letters, cols, full, rnd)
    if k == 1:
        return Bin("&", fa, fb), ta & tb
    if k == 2:
        return Bin("|", fa, fb), ta | tb
    return Bin(">", fa, fb), (full ^ ta) | tb


def random_formula(n_ops: int, letters: str = "abcde", rng: random.Random | int = 0) -> Formula:
    """A random formula with exactly ``n_ops`` operators over ``letters`` (Evans et al.'s generator:
    uniform over ``~ & | >``, binary nodes split the remaining operators uniformly, leaves uniform).

    Args:
        n_ops: number of operators.
        letters: the variable pool.
        rng: a ``random.Random`` or a seed.
    """
    check_int("n_ops", n_ops, minimum=0, maximum=1000)
    if not letters or any(c not in ALPHABET for c in letters):
        raise ParameterError(f"letters={letters!r} must be a non-empty string of lowercase letters")
    rnd = rng if isinstance(rng, random.Random) else random.Random(check_int("rng", rng))
    cols = {c: 0 for c in letters}
    return _gen(n_ops, list(letters), cols, 0, rnd)[0]


def _correct(h, e) -> int:
    return int(h == e)


def _subtrees(f, path=()):
    """(path, subtree) of every node, pre-order; a path is a tuple of child indices."""
    yield path, f
    t = type(f)
    if t is Not:
        yield from _subtrees(f.arg, path + (0,))
    elif t is Bin:
        yield from _subtrees(f.left, path + (1,))
        yield from _subtrees(f.right, path + (2,))


def _replace(f, path, new):
    if not path:
        return new
    i, rest = path[0], path[1:]
    if i == 0:
        return Not(_replace(f.arg, rest, new))
    if i == 1:
        return Bin(f.op, _replace(f.left, rest, new), f.right)
    return Bin(f.op, f.left, _replace(f.right, rest, new))


def _swap(f, rnd: random.Random, tries: int = 20):
    """``f`` with two disjoint, different subformulas exchanged (None if there is no such pair)."""
    nodes = list(_subtrees(f))
    for _ in range(tries):
        (p, s), (q, t) = rnd.sample(nodes, 2) if len(nodes) >= 2 else (nodes[0], nodes[0])
        if s == t or p == q or p[: len(q)] == q or q[: len(p)] == p:
            continue
        return _replace(_replace(f, p, t), q, s)
    return None


class _Pool:
    """A variable pool and fast truth tables over it (random-assignment screen for large pools)."""

    SCREEN = 256  # rows of the random screen

    def __init__(self, letters: list[str], rnd: random.Random):
        self.letters = letters
        self.n = len(letters)
        self.exact = self.n <= 12
        if self.exact:
            self.full = (1 << (1 << self.n)) - 1
            self.cols = dict(zip(letters, truth_columns(self.n)))
        else:  # tables over SCREEN random rows; exact checks later by entails()
            self.full = (1 << self.SCREEN) - 1
            self.cols = {c: rnd.getrandbits(self.SCREEN) for c in letters}

    def formula(self, lo: int, hi: int, rnd: random.Random):
        n = lo + int(rnd.random() * (hi - lo + 1))
        return _gen(n, self.letters, self.cols, self.full, rnd)

    def entails(self, a, ta, b, tb) -> bool:
        if ta & (self.full ^ tb):
            return False
        return True if self.exact else entails(a, b)

    def table(self, f) -> int:
        return truth_table(f, self.cols, self.full)


def _draw_positive(pool: _Pool, spec: SplitSpec, rnd: random.Random, attempts: int):
    """An entailing pair (A, B) with A satisfiable and B not valid, or None after ``attempts``."""
    for _ in range(attempts):
        a, ta = pool.formula(spec.min_ops, spec.max_ops, rnd)
        if not ta:
            continue  # unsatisfiable on the rows seen
        b, tb = pool.formula(spec.min_ops, spec.max_ops, rnd)
        if tb == pool.full and (pool.exact or not satisfiable(Not(b))):
            continue  # valid hypothesis
        if pool.entails(a, ta, b, tb):  # ta != 0 on real rows: A is satisfiable
            return a, ta, b, tb
    return None


def _quadruples(spec: SplitSpec, pool: _Pool, rnd: random.Random):
    """Four-tuples from one pool: draw up to pool_size entailing pairs, match greedily."""
    pairs = []
    for _ in range(spec.pool_size):
        p = _draw_positive(pool, spec, rnd, attempts=400)
        if p is None:
            break
        pairs.append(p)
    used = [False] * len(pairs)
    for i, (a1, ta1, b1, tb1) in enumerate(pairs):
        if used[i]:
            continue
        for j in range(i + 1, len(pairs)):
            if used[j]:
                continue
            a2, ta2, b2, tb2 = pairs[j]
            if not pool.entails(a1, ta1, b2, tb2) and not pool.entails(a2, ta2, b1, tb1):
                used[i] = used[j] = True
                yield [(a1, b1, 1), (a2, b2, 1), (a1, b2, 0), (a2, b1, 0)]
                break


def _swap_pairs(spec: SplitSpec, pool: _Pool, rnd: random.Random):
    """(A,B,1), (A,B',0) with B' = B with two subformulas swapped and A |/= B'."""
    p = _draw_positive(pool, spec, rnd, attempts=4000)
    if p is None:
        return
    a, ta, b, tb = p
    for _ in range(20):
        b2 = _swap(b, rnd)
        if b2 is None:
            return
        if b2 != b and not pool.entails(a, ta, b2, pool.table(b2)):
            yield [(a, b, 1), (a, b2, 0)]
            return


def _rng_for(seed: int, name: str) -> random.Random:
    key = sum((i + 1) * ord(c) for i, c in enumerate(name))
    return random.Random(int(np.random.SeedSequence([seed, key]).generate_state(1, np.uint64)[0]))


def generate_split(spec: SplitSpec, seed: int = 0, exclude: set | None = None,
                   max_groups: int | None = None) -> list[Entailment]:
    """Generate one split by the procedure of the module docstring.

    Args:
        spec: the split's :class:`SplitSpec` (e.g. ``SPLITS["hard"]`` or ``replace(SPLITS["hard"],
            count=1000)``).
        seed: the same seed (and spec) gives the same examples.
        exclude: alpha-equivalence keys (:func:`alpha_key`) that must not occur (e.g. the training
            set's); groups containing one are dropped whole, keeping the balance. Updated in place
            with this split's keys when given.
        max_groups: give up (ParameterError) after this many variable pools (default 50 * count + 1000).

    Returns:
        ``spec.count`` examples, exactly half with label 1, shuffled.
    """
    spec.validate()
    check_int("seed", seed)
    rnd = _rng_for(seed, spec.name)
    seen = set() if exclude is None else exclude
    own: set = set()
    out: list[Entailment] = []
    limit = 50 * spec.count + 1000 if max_groups is None else check_int("max_groups", max_groups, minimum=1)
    groups = 0
    while len(out) < spec.count:
        groups += 1
        if groups > limit:
            raise ParameterError(
                f"split {spec.name!r}: only {len(out)} of {spec.count} examples after {limit} variable "
                f"pools; widen the operator/variable ranges or lower count")
        k = spec.min_vars + int(rnd.random() * (spec.max_vars - spec.min_vars + 1))
        pool = _Pool(rnd.sample(ALPHABET, k), rnd)
        maker = _quadruples if spec.method == "quadruple" else _swap_pairs
        for group in maker(spec, pool, rnd):
            lines = [(a, b, e, heuristics(a, b)) for a, b, e in group]
            if spec.heuristic_neutral and any(
                sum(_correct(h[i], e) for _, _, e, h in lines) != len(lines) // 2 for i in range(3)
            ):
                continue
            keys = [alpha_key(a, b) for a, b, _, _ in lines]
            if len(set(keys)) < len(keys) or any(k in seen or k in own for k in keys):
                continue
            own.update(keys)
            out.extend(Entailment(to_string(a), to_string(b), e, *h) for a, b, e, h in lines)
            if len(out) >= spec.count:
                break
    if exclude is not None:
        exclude.update(own)
    rnd.shuffle(out)
    out = out[: spec.count]
    return _rebalance(out, spec.count)


def _rebalance(out: list[Entailment], count: int) -> list[Entailment]:
    pos = sum(e.label for e in out)
    if len(out) != count or pos * 2 != count:  # cannot happen: groups are balanced, count % 4 == 0
        raise RuntimeError(f"internal error: {len(out)} examples, {pos} positive, wanted {count}")
    return out



def generate_dataset(counts: dict | None = None, seed: int = 0,
                     specs: dict | None = None) -> dict[str, list[Entailment]]:
    """All splits: train, valid, easy, hard, big, massive (generated) and exam (hand-made).

    Test and validation examples alpha-equivalent to a training example (or to an earlier split's)
    are not generated, as in the released code.

    Args:
        counts: split name -> count, overriding :data:`SPLITS` (e.g. :data:`PAPER_SIZES`; ``exam`` is
            ignored). Splits given a count of 0 are empty.
        seed: master seed; each split has its own stream, so changing one count leaves the others.
        specs: split name -> :class:`SplitSpec`, replacing entries of :data:`SPLITS`.
    """
    check_int("seed", seed)
    table = dict(SPLITS)
    for name, spec in (specs or {}).items():
        check_choice("specs key", name, list(SPLITS))
        if not isinstance(spec, SplitSpec):
            raise ParameterError(f"specs[{name!r}] must be a SplitSpec")
        table[name] = spec
    for name, n in (counts or {}).items():
        check_choice("counts key", name, SPLIT_NAMES)
        if name != "exam":
            table[name] = replace(table[name], count=check_int(f"counts[{name!r}]", n, minimum=0))
    seen: set = set()
    out = {}
    for name in SPLIT_NAMES[:-1]:
        out[name] = generate_split(table[name], seed=seed, exclude=seen)
    out["exam"] = exam_examples()
    return out
