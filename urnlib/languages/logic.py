"""Propositional logical entailment (Evans et al. 2018, "Can neural networks understand logical
entailment?"; paper 002 sec. 5 and appendices B.1, C.1).

A model reads a premise A and a hypothesis B and predicts whether A |= B. Evans et al.'s dataset
(github.com/google-deepmind/logical-entailment-dataset) is not reachable offline, so this module
generates an equivalent one by their published procedure and keeps a reader for their files.

Format (reference-facts, and the released files): one example per line ``A,B,E,H1,H2,H3``; formulas
over single lowercase letters with ``~`` (not), ``&``, ``|``, ``>`` (implies), every binary operation
in parentheses and every negated formula in parentheses too (``~(a)``, ``~((a&b))``); ``E`` = 1 iff
A |= B; ``H1`` = length(A) >= length(B), ``H2`` = vars(B) subset of vars(A), ``H3`` = literals of the
negation normal form of B subset of those of A (the three heuristic baselines of the released README).

Generation (:func:`generate_split`, :func:`generate_dataset`). From Evans et al. and their released
generator (``Main.hs``), re-implemented here (no code copied):

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

Split characteristics. Evans et al.'s Table 1 (reproduced as the "Mean 2^#Vars" row of paper 002's
Table 2) gives the mean number of truth-table rows 2^#vars of each split: valid 75.7, easy 81.0,
hard 184.4, big 3310.8, massive 848,570.0, exam 5.8 (:data:`PAPER_MEAN_WORLDS`). train/valid/easy
come from one distribution; hard has larger formulas; big larger still; massive many more variables;
exam is 100 hand-picked textbook examples. The ranges in :data:`SPLITS` are OUR reconstruction:
operator ranges follow the released files (validation formulas have roughly 3-12 operators, hard
and big ones roughly 10-40) and the [k // 3, k] rule; variable-pool ranges were tuned so that our mean
2^#vars lands near the values above (see :func:`split_statistics`). ``hard`` additionally keeps only
four-tuples on which each heuristic H1-H3 is right on exactly 2 of the 4 lines (our reading of
"constructed so that the heuristics fail"); ``massive`` uses ``method="swap"``; ``exam`` is written
by hand here (:data:`EXAM_PAIRS`; their file is not shipped), labels checked by truth table.

Tokens (:data:`VOCAB`): ``<pad>`` (0), ``<sep>``, ``(``, ``)``, ``~``, ``&``, ``|``, ``>``, ``a``..``z``;
formulas are read character by character as written. :func:`permute_variables` is the symbolic
vocabulary permutation of appendix C.1, drawn as a true permutation of the 26 variable symbols (the
original code sampled with replacement, which can merge two variables and change the label).
"""

from __future__ import annotations

import itertools
import random
import string
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Union

import numpy as np
import torch

from urnlib.params import ParameterError, check_choice, check_int

__all__ = [
    "Var", "Not", "Bin", "Formula", "FormulaSyntaxError", "parse", "to_string", "variables",
    "num_variables", "num_operators", "length", "evaluate", "entails", "alpha_key",
    "Entailment", "heuristics", "make_example",
    "SplitSpec", "SPLITS", "SPLIT_NAMES", "PAPER_MEAN_WORLDS", "PAPER_SIZES", "EXAM_PAIRS",
    "random_formula", "generate_split", "generate_dataset", "exam_examples",
    "split_statistics", "heuristic_accuracy", "surface_features", "surface_baseline", "SURFACE_FEATURES",
    "STYLES", "METHODS",
    "EntailmentFileError", "load_entailment_file", "write_entailment_file", "ORIGINAL_FILES",
    "load_original_split",
    "VOCAB", "PAD_ID", "SEP_ID", "TOKEN_ID", "variable_ids", "tokenize", "encode_pairs",
    "encode_packed", "encode_labels", "decode", "permute_variables",
]

ALPHABET = string.ascii_lowercase
OPERATORS = ("&", "|", ">")
STYLES = ("evans", "compact")

# ----------------------------------------------------------------------------------------------
# Formulas
# ----------------------------------------------------------------------------------------------


class Var(NamedTuple):
    """A propositional variable (one lowercase letter)."""

    name: str


class Not(NamedTuple):
    """Negation ``~arg``."""

    arg: "Formula"


class Bin(NamedTuple):
    """Binary operation: ``op`` is ``&`` (and), ``|`` (or) or ``>`` (implies)."""

    op: str
    left: "Formula"
    right: "Formula"


Formula = Union[Var, Not, Bin]


class FormulaSyntaxError(ValueError):
    """A formula string does not parse; ``line`` and ``column`` (1-based) locate the problem."""

    def __init__(self, message: str, text: str, line: int, column: int):
        self.text, self.line, self.column, self.reason = text, line, column, message
        pointer = " " * (column - 1) + "^"
        super().__init__(f"line {line}, column {column}: {message}\n  {text}\n  {pointer}")


_PRECEDENCE = {"&": 3, "|": 2, ">": 1}  # ~ binds tightest; > is right-associative


class _Parser:
    def __init__(self, text: str, line: int, column_offset: int):
        self.text, self.line, self.offset = text, line, column_offset
        self.pos = 0

    def error(self, message: str, pos: int | None = None):
        pos = self.pos if pos is None else pos
        raise FormulaSyntaxError(message, self.text, self.line, pos + 1 + self.offset)

    def peek(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def found(self) -> str:
        c = self.peek()
        return repr(c) if c else "the end of the formula"

    def formula(self, min_prec: int = 1) -> Formula:
        left = self.unary()
        while True:
            op = self.peek()
            if op not in _PRECEDENCE or _PRECEDENCE[op] < min_prec:
                return left
            self.pos += 1
            # left-associative & and |, right-associative >
            right = self.formula(_PRECEDENCE[op] + (op != ">"))
            left = Bin(op, left, right)

    def unary(self) -> Formula:
        c = self.peek()
        if c == "~":
            self.pos += 1
            return Not(self.unary())
        if c == "(":
            start = self.pos
            self.pos += 1
            inner = self.formula()
            if self.peek() != ")":
                self.error(f"expected an operator (&, |, >) or ')' closing the '(' at column "
                           f"{start + 1 + self.offset}, but found {self.found()}")
            self.pos += 1
            return inner
        if c and c in ALPHABET:
            self.pos += 1
            return Var(c)
        if c and c.isalpha():
            self.error(f"variables are single lowercase letters a-z; found {c!r}")
        self.error(f"expected a variable (a-z), '~' or '(' but found {self.found()}")


def parse(text: str, *, line: int = 1, column_offset: int = 0) -> Formula:
    """Parse a formula.

    Accepts the fully parenthesised format of Evans et al.'s files (``(a&(b>~(c)))``) and, more
    leniently, ``~c`` without parentheses, redundant parentheses, spaces and unparenthesised infix
    with the usual precedence (``~`` > ``&`` > ``|`` > ``>``; ``&``/``|`` left-, ``>``
    right-associative), e.g. ``(a>b)&a``. Fully parenthesised input parses the same under any
    precedence.

    Args:
        text: the formula.
        line, column_offset: where ``text`` sits in a larger file, for error messages.

    Raises:
        FormulaSyntaxError: with the line and column of the problem.
    """
    if not isinstance(text, str):
        raise ParameterError(f"formula must be a string, got {type(text).__name__}")
    p = _Parser(text, line, column_offset)
    if not p.peek():
        p.error("empty formula")
    f = p.formula()
    if p.peek():
        c = p.peek()
        extra = " (unbalanced ')')" if c == ")" else ""
        p.error(f"unexpected {c!r} after a complete formula{extra}")
    return f


def _as_formula(f) -> Formula:
    if isinstance(f, str):
        return parse(f)
    if isinstance(f, (Var, Not, Bin)):
        return f
    raise ParameterError(f"expected a formula (string or Var/Not/Bin), got {type(f).__name__}")


def to_string(f, style: str = "evans") -> str:
    """Print a formula.

    Args:
        f: a formula (or a string, which is parsed first).
        style: ``"evans"`` (default; the released files' format: ``~(a)``, ``~((a&b))``) or
            ``"compact"`` (``~a``, ``~(a&b)``). Binary operations are always parenthesised.
    """
    check_choice("style", style, STYLES)
    f = _as_formula(f)
    out: list[str] = []
    evans = style == "evans"

    def walk(g):
        if type(g) is Var:
            out.append(g.name)
        elif type(g) is Not:
            out.append("~(" if evans else "~")
            walk(g.arg)
            if evans:
                out.append(")")
        else:
            out.append("(")
            walk(g.left)
            out.append(g.op)
            walk(g.right)
            out.append(")")

    walk(f)
    return "".join(out)


def _vars_into(f, acc: set):
    stack = [f]
    while stack:
        g = stack.pop()
        t = type(g)
        if t is Var:
            acc.add(g.name)
        elif t is Not:
            stack.append(g.arg)
        else:
            stack.append(g.left)
            stack.append(g.right)
    return acc


def variables(f) -> list[str]:
    """Sorted distinct variable names of a formula."""
    return sorted(_vars_into(_as_formula(f), set()))


def num_variables(f) -> int:
    """Number of distinct variables."""
    return len(_vars_into(_as_formula(f), set()))


def num_operators(f) -> int:
    """Number of operators (``~``, ``&``, ``|``, ``>``), the "complexity" of Evans et al.'s generator."""
    n, stack = 0, [_as_formula(f)]
    while stack:
        g = stack.pop()
        t = type(g)
        if t is Not:
            n += 1
            stack.append(g.arg)
        elif t is Bin:
            n += 1
            stack.append(g.left)
            stack.append(g.right)
    return n


def length(f) -> int:
    """Number of variable occurrences plus operators (``prop_length`` of the released code; H1)."""
    f = _as_formula(f)
    return num_operators(f) + _count_leaves(f)


def _count_leaves(f) -> int:
    n, stack = 0, [f]
    while stack:
        g = stack.pop()
        t = type(g)
        if t is Var:
            n += 1
        elif t is Not:
            stack.append(g.arg)
        else:
            stack.append(g.left)
            stack.append(g.right)
    return n


def evaluate(f, assignment: dict) -> bool:
    """Truth value of ``f`` under ``assignment`` (variable name -> bool)."""
    f = _as_formula(f)
    t = type(f)
    if t is Var:
        return bool(assignment[f.name])
    if t is Not:
        return not evaluate(f.arg, assignment)
    a = evaluate(f.left, assignment)
    b = evaluate(f.right, assignment)
    return (a and b) if f.op == "&" else (a or b) if f.op == "|" else ((not a) or b)


# Truth tables as Python ints: bit r of a table is the formula's value in row r; variable i of n is
# bit i of r. Large tables are evaluated in chunks of 2^_CHUNK rows (higher variables held constant).
_CHUNK = 16


@lru_cache(maxsize=32)
def _columns(n: int) -> tuple[int, ...]:
    """Truth-table columns of variables 0..n-1 over 2^n rows."""
    size = 1 << n
    cols = []
    for i in range(n):
        half = 1 << i
        block = ((1 << half) - 1) << half  # 2^(i+1) bits: lower half 0, upper half 1
        reps = size // (2 * half)
        # replicate the block reps times: multiply by sum_k 2^(k * 2^(i+1))
        cols.append(block * (((1 << (2 * half * reps)) - 1) // ((1 << (2 * half)) - 1)))
    return tuple(cols)


def _table(f, cols: dict, full: int) -> int:
    t = type(f)
    if t is Var:
        return cols[f.name]
    if t is Not:
        return full ^ _table(f.arg, cols, full)
    a = _table(f.left, cols, full)
    b = _table(f.right, cols, full)
    op = f.op
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    return (full ^ a) | b


def _chunks(names: list[str]):
    """Yield ``(cols, full)`` covering all rows over ``names``, 2^_CHUNK rows at a time."""
    low, high = names[:_CHUNK], names[_CHUNK:]
    base = _columns(len(low))
    full = (1 << (1 << len(low))) - 1
    cols = dict(zip(low, base))
    for bits in itertools.product((0, full), repeat=len(high)):
        cols.update(zip(high, bits))
        yield cols, full


def entails(premise, hypothesis) -> bool:
    """Whether ``premise |= hypothesis``: every row of the truth table over the union of their
    variables that makes the premise true makes the hypothesis true (brute force, exact).

    Args:
        premise, hypothesis: formulas or strings.
    """
    a, b = _as_formula(premise), _as_formula(hypothesis)
    names = sorted(_vars_into(b, _vars_into(a, set())))
    for cols, full in _chunks(names):
        if _table(a, cols, full) & (full ^ _table(b, cols, full)):
            return False
    return True


def _satisfiable(f) -> bool:
    return any(_table(f, cols, full) for cols, full in _chunks(sorted(_vars_into(f, set()))))


def alpha_key(premise, hypothesis) -> str:
    """The pair with variables renamed in order of first occurrence (A, then B): alpha-equivalent
    pairs (equal up to a renaming of variables) have the same key (de Bruijn renaming of the
    released code)."""
    names: dict[str, str] = {}

    def rename(g):
        t = type(g)
        if t is Var:
            if g.name not in names:
                names[g.name] = ALPHABET[len(names)]
            return Var(names[g.name])
        if t is Not:
            return Not(rename(g.arg))
        return Bin(g.op, rename(g.left), rename(g.right))

    a = rename(_as_formula(premise))
    b = rename(_as_formula(hypothesis))
    return to_string(a) + "," + to_string(b)


# ----------------------------------------------------------------------------------------------
# Examples and heuristics
# ----------------------------------------------------------------------------------------------


class Entailment(NamedTuple):
    """One line ``A,B,E,H1,H2,H3`` of an entailment file; formulas as strings."""

    premise: str
    hypothesis: str
    label: int
    h1: int
    h2: int
    h3: int


def _nnf(f, positive: bool = True):
    """Negation normal form with ``a > b`` rewritten as ``~a | b``; literals are ``(name, sign)``."""
    t = type(f)
    if t is Var:
        return ("lit", f.name, positive)
    if t is Not:
        return _nnf(f.arg, not positive)
    if f.op == ">":
        left, right = _nnf(f.left, not positive), _nnf(f.right, positive)
        return ("|" if positive else "&", left, right)
    op = f.op if positive else ("|" if f.op == "&" else "&")
    return (op, _nnf(f.left, positive), _nnf(f.right, positive))


def _literals(f) -> set:
    acc, stack = set(), [_nnf(f)]
    while stack:
        g = stack.pop()
        if g[0] == "lit":
            acc.add((g[1], g[2]))
        else:
            stack.append(g[1])
            stack.append(g[2])
    return acc


def heuristics(premise, hypothesis) -> tuple[int, int, int]:
    """The released files' heuristic columns (README of Evans et al.'s repository).

    Returns:
        ``(H1, H2, H3)``: length(A) >= length(B); vars(B) subset of vars(A); literals(NNF(B)) subset of
        literals(NNF(A)), each 0/1.
    """
    a, b = _as_formula(premise), _as_formula(hypothesis)
    h1 = int(length(a) >= length(b))
    h2 = int(_vars_into(b, set()) <= _vars_into(a, set()))
    h3 = int(_literals(b) <= _literals(a))
    return h1, h2, h3


def make_example(premise, hypothesis, label: int | None = None) -> Entailment:
    """An :class:`Entailment` with the label (computed by truth table if not given) and heuristics;
    formulas printed in the files' format."""
    a, b = _as_formula(premise), _as_formula(hypothesis)
    if label is None:
        label = int(entails(a, b))
    return Entailment(to_string(a), to_string(b), int(label), *heuristics(a, b))


# ----------------------------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------------------------

METHODS = ("quadruple", "swap")


@dataclass(frozen=True)
class SplitSpec:
    """How one split is generated.

    Attributes:
        name: split name.
        count: number of examples (a multiple of 4; half positive).
        min_vars, max_vars: size of each group's variable pool, uniform in [min_vars, max_vars]
            (Evans et al.: uniform in [1, v]). The formulas need not use every pool variable.
        min_ops, max_ops: operators per formula, uniform in [min_ops, max_ops] (Evans et al.:
            [k // 3, k]).
        method: ``"quadruple"`` (four-tuples, Evans et al. sec. 3) or ``"swap"`` (positive pair plus
            the same premise with a subformula-swapped hypothesis, as in the released massive file).
        heuristic_neutral: keep only four-tuples on which each heuristic H1-H3 is right on exactly 2
            of 4 lines (our construction of "hard").
        pool_size: entailing pairs drawn per variable pool before four-tuples are matched (our choice).
    """

    name: str
    count: int
    min_vars: int
    max_vars: int
    min_ops: int
    max_ops: int
    method: str = "quadruple"
    heuristic_neutral: bool = False
    pool_size: int = 8

    def validate(self) -> "SplitSpec":
        check_int(f"{self.name}.count", self.count, minimum=0)
        if self.count % 4:
            raise ParameterError(
                f"{self.name}.count={self.count} must be a multiple of 4 (each four-tuple gives 2 "
                f"positive and 2 negative examples); e.g. {self.count - self.count % 4} or "
                f"{self.count + 4 - self.count % 4}")
        check_int(f"{self.name}.min_vars", self.min_vars, minimum=1, maximum=26)
        check_int(f"{self.name}.max_vars", self.max_vars, minimum=self.min_vars, maximum=26)
        check_int(f"{self.name}.min_ops", self.min_ops, minimum=0, maximum=200)
        check_int(f"{self.name}.max_ops", self.max_ops, minimum=self.min_ops, maximum=200)
        check_choice(f"{self.name}.method", self.method, METHODS)
        check_int(f"{self.name}.pool_size", self.pool_size, minimum=2)
        if not isinstance(self.heuristic_neutral, bool):
            raise ParameterError(f"{self.name}.heuristic_neutral must be True or False")
        return self


# Evans et al. Table 1 as quoted in paper 002 Table 2 ("Mean 2^#Vars"); train is from valid's
# distribution. Our generator is tuned towards these (split_statistics reports ours).
PAPER_MEAN_WORLDS = {"valid": 75.7, "easy": 81.0, "hard": 184.4, "big": 3310.8, "massive": 848570.0,
                     "exam": 5.8}
# Paper-scale sizes: train ~100k pairs (Evans et al.), valid/easy/hard ~5,000 (estimated from the
# released files' sizes), big/massive smaller files (~1.2k-1.7k lines by the same estimate), exam
# 100 lines. Rounded to multiples of 4; pass counts=PAPER_SIZES to generate_dataset for the full size.
PAPER_SIZES = {"train": 100000, "valid": 5000, "easy": 5000, "hard": 5000, "big": 1300,
               "massive": 1600, "exam": 100}

# Our reconstruction (see the module docstring); counts are tiny defaults for CI.
SPLITS: dict[str, SplitSpec] = {
    "train": SplitSpec("train", 400, 1, 10, 4, 12),
    "valid": SplitSpec("valid", 200, 1, 10, 4, 12),
    "easy": SplitSpec("easy", 200, 1, 10, 4, 12),
    "hard": SplitSpec("hard", 200, 1, 10, 10, 30, heuristic_neutral=True),
    "big": SplitSpec("big", 200, 7, 14, 13, 40),
    "massive": SplitSpec("massive", 200, 20, 24, 13, 40, method="swap"),
}
SPLIT_NAMES = ("train", "valid", "easy", "hard", "big", "massive", "exam")


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
            self.cols = dict(zip(letters, _columns(self.n)))
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
        return _table(f, self.cols, self.full)


def _draw_positive(pool: _Pool, spec: SplitSpec, rnd: random.Random, attempts: int):
    """An entailing pair (A, B) with A satisfiable and B not valid, or None after ``attempts``."""
    for _ in range(attempts):
        a, ta = pool.formula(spec.min_ops, spec.max_ops, rnd)
        if not ta:
            continue  # unsatisfiable on the rows seen
        b, tb = pool.formula(spec.min_ops, spec.max_ops, rnd)
        if tb == pool.full and (pool.exact or not _satisfiable(Not(b))):
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


# Hand-made textbook pairs (ours; Evans et al.'s exam file is not shipped): (premise, hypothesis,
# label). Each law comes with a nearby fallacy, so the set is balanced. Labels are re-checked by
# truth table in exam_examples().
EXAM_PAIRS: tuple[tuple[str, str, int], ...] = (
    ("(p>q)&p", "q", 1),                                   # modus ponens
    ("(p>q)&q", "p", 0),                                   # affirming the consequent
    ("(p>q)&~q", "~p", 1),                                 # modus tollens
    ("(p>q)&~p", "~q", 0),                                 # denying the antecedent
    ("(p>q)&(q>r)", "p>r", 1),                             # hypothetical syllogism
    ("p>r", "(p>q)&(q>r)", 0),
    ("(p|q)&~p", "q", 1),                                  # disjunctive syllogism
    ("(p|q)&p", "~q", 0),                                  # affirming a disjunct
    ("p>q", "~q>~p", 1),                                   # contraposition
    ("p>q", "q>p", 0),                                     # converse
    ("p>q", "~p>~q", 0),                                   # inverse
    ("~q>~p", "p>q", 1),
    ("~(p&q)", "~p|~q", 1),                                # De Morgan
    ("~(p&q)", "~p&~q", 0),
    ("~(p|q)", "~p&~q", 1),                                # De Morgan
    ("~p|~q", "~(p|q)", 0),
    ("~~p", "p", 1),                                       # double negation
    ("p", "~~p", 1),
    ("p", "~p", 0),
    ("p", "p|q", 1),                                       # addition
    ("p|q", "p", 0),
    ("p&q", "p", 1),                                       # simplification
    ("p", "p&q", 0),
    ("p&q", "q&p", 1),                                     # commutativity
    ("p|q", "p&q", 0),
    ("((p>q)&(r>s))&(p|r)", "q|s", 1),                     # constructive dilemma
    ("((p>q)&(r>s))&(p|r)", "q&s", 0),
    ("((p>q)&(r>s))&(~q|~s)", "~p|~r", 1),                 # destructive dilemma
    ("((p>q)&(r>s))&(~q|~s)", "~p&~r", 0),
    ("(p&q)>r", "p>(q>r)", 1),                             # exportation
    ("p>(q>r)", "(p&q)>r", 1),                             # importation
    ("p>(q>r)", "(p>q)>r", 0),
    ("p>q", "~p|q", 1),                                    # material implication
    ("p>q", "p|~q", 0),
    ("p&(q|r)", "(p&q)|(p&r)", 1),                         # distribution
    ("p|(q&r)", "(p|q)&r", 0),
    ("p|(q&r)", "(p|q)&(p|r)", 1),
    ("(p&q)|r", "p&(q|r)", 0),
    ("p|(p&q)", "p", 1),                                   # absorption
    ("p&(p|q)", "q", 0),
    ("p&~p", "q", 1),                                      # explosion
    ("p|~p", "q", 0),
    ("q", "p|~p", 1),                                      # anything entails a tautology
    ("q", "p&~p", 0),
    ("r", "((p>q)>p)>p", 1),                               # Peirce's law
    ("(p>q)>p", "q", 0),
    ("(p|q)&(~p|r)", "q|r", 1),                            # resolution
    ("(p|q)&(~p|r)", "q&r", 0),
    ("(p>r)&(q>r)", "(p|q)>r", 1),                         # proof by cases
    ("(p>r)|(q>r)", "(p|q)>r", 0),
    ("(p>q)&(p>r)", "p>(q&r)", 1),
    ("(p>q)|(p>r)", "p>(q&r)", 0),
    ("(p>q)&(p>~q)", "~p", 1),                             # reductio
    ("(p>q)&(~p>q)", "p", 0),
    ("(p>q)&(~p>q)", "q", 1),
    ("~p>p", "p", 1),                                      # consequentia mirabilis
    ("p>~p", "p", 0),
    ("p", "q>p", 1),                                       # weakening
    ("p", "p>q", 0),
    ("~p", "p>q", 1),
    ("~p", "q>p", 0),
    ("~p>q", "~q>p", 1),
    ("~p>q", "p>~q", 0),
    ("p>(q&r)", "p>q", 1),
    ("p>(q|r)", "p>q", 0),
    ("(p|q)>r", "p>r", 1),
    ("(p&q)>r", "p>r", 0),
    ("~(p>q)", "p&~q", 1),                                 # negated conditional
    ("~(p>q)", "q", 0),
    ("(p>q)&(q>p)", "(p&q)|(~p&~q)", 1),                   # biconditional
    ("(p>q)&(q>p)", "p&q", 0),
    ("(p|q)|r", "p|(q|r)", 1),                             # associativity
    ("(p&q)&r", "p&(q&s)", 0),
    ("p>(q>r)", "q>(p&r)", 0),
    ("(p&q)>r", "(p>r)&(q>r)", 0),
    ("p|q", "p>q", 0),
)


def exam_examples() -> list[Entailment]:
    """Our hand-made textbook examples (:data:`EXAM_PAIRS`) as :class:`Entailment` lines.

    Raises:
        AssertionError: if a stated label disagrees with the truth table (it does not).
    """
    out = []
    for a, b, e in EXAM_PAIRS:
        ex = make_example(a, b)
        if ex.label != e:
            raise AssertionError(f"exam pair {a!r} |= {b!r}: stated {e}, truth table {ex.label}")
        out.append(ex)
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


# ----------------------------------------------------------------------------------------------
# Statistics and heuristic baselines
# ----------------------------------------------------------------------------------------------


def split_statistics(examples) -> dict:
    """Size, positive fraction, mean #vars of A and B together, mean 2^#vars (Evans et al.'s
    "Mean 2^#Vars"), mean operators per formula, and the heuristics' accuracies."""
    if not examples:
        raise ParameterError("examples must not be empty")
    nv, ops = [], []
    for ex in examples:
        a, b = parse(ex[0]), parse(ex[1])
        nv.append(len(_vars_into(b, _vars_into(a, set()))))
        ops.extend((num_operators(a), num_operators(b)))
    nv = np.array(nv)
    return {
        "count": len(examples),
        "positive": float(np.mean([ex[2] for ex in examples])),
        "mean_vars": float(nv.mean()),
        "max_vars": int(nv.max()),
        "mean_worlds": float(np.mean(2.0 ** nv)),
        "mean_ops": float(np.mean(ops)),
        "max_ops": int(max(ops)),
        **{f"acc_{k}": v for k, v in heuristic_accuracy(examples).items()},
    }


def heuristic_accuracy(examples) -> dict[str, float]:
    """Accuracy of predicting the label by H1, H2, H3 (recomputed from the formulas).

    Returns:
        ``{"h1": ..., "h2": ..., "h3": ...}``.
    """
    if not examples:
        raise ParameterError("examples must not be empty")
    hits = np.zeros(3)
    for ex in examples:
        hits += np.array(heuristics(ex[0], ex[1])) == int(ex[2])
    return dict(zip(("h1", "h2", "h3"), (hits / len(examples)).tolist()))


SURFACE_FEATURES = ("len_a", "len_b", "len_a-len_b", "vars_a", "vars_b", "shared_vars", "new_vars_b",
                    "ops_a", "ops_b", "neg_a", "neg_b", "h1", "h2", "h3")


def surface_features(examples) -> np.ndarray:
    """``(N, 14)`` surface features per pair (:data:`SURFACE_FEATURES`): lengths, variable counts
    and overlap, operator and negation counts, and H1-H3."""
    rows = []
    for ex in examples:
        a, b = _as_formula(ex[0]), _as_formula(ex[1])
        va, vb = _vars_into(a, set()), _vars_into(b, set())
        sa, sb = to_string(a), to_string(b)
        rows.append([length(a), length(b), length(a) - length(b), len(va), len(vb), len(va & vb),
                     len(vb - va), num_operators(a), num_operators(b), sa.count("~"), sb.count("~"),
                     *heuristics(a, b)])
    return np.array(rows, dtype=np.float64)


def surface_baseline(train, test) -> float:
    """Test accuracy of a linear classifier (least squares on standardised
    :func:`surface_features`, with pairwise products) fit on ``train``: a length/variable-overlap
    heuristic that should be near chance (0.5) on well-built data."""
    def design(x, mu=None, sd=None):
        if mu is None:
            mu, sd = x.mean(0), x.std(0) + 1e-9
        z = (x - mu) / sd
        i, j = np.triu_indices(z.shape[1])
        return np.hstack([np.ones((len(z), 1)), z, z[:, i] * z[:, j]]), mu, sd

    xtr, mu, sd = design(surface_features(train))
    ytr = 2.0 * np.array([ex[2] for ex in train]) - 1
    w = np.linalg.lstsq(xtr, ytr, rcond=None)[0]
    xte, _, _ = design(surface_features(test), mu, sd)
    yte = np.array([ex[2] for ex in test])
    return float(np.mean((xte @ w > 0) == (yte == 1)))


# ----------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------


class EntailmentFileError(ValueError):
    """A line of an entailment file is malformed; the message names the file and line."""


# Names of the released files (github.com/google-deepmind/logical-entailment-dataset, data/).
ORIGINAL_FILES = {
    "train": ("train.txt",),
    "valid": ("validate.txt",),
    "easy": ("test_easy.txt",),
    "hard": ("test_hard.txt",),
    "big": ("test_big.txt", "big_20_test_big.txt"),
    "massive": ("test_massive.txt",),
    "exam": ("test_exam.txt",),
}

_NOT_SHIPPED = (
    "Evans et al.'s logical entailment data (github.com/google-deepmind/logical-entailment-dataset) "
    "is not shipped with urnlib and cannot be downloaded offline. Generate an equivalent dataset "
    "instead: urnlib.languages.logic.generate_dataset(seed=0) (and write_entailment_file to save it)."
)


def load_entailment_file(path, *, check_labels: bool = False) -> list[Entailment]:
    """Read a file of ``A,B,E,H1,H2,H3`` lines (Evans et al.'s format; blank lines skipped).

    Args:
        path: the file.
        check_labels: also verify each E by truth table (slow for the massive split).

    Raises:
        FileNotFoundError: the file is missing (the message says how to generate data instead).
        EntailmentFileError: a bad line, naming the file, the line number and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file. {_NOT_SHIPPED}")
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            where = f"{path}, line {n}"
            fields = line.split(",")
            if len(fields) != 6:
                raise EntailmentFileError(
                    f"{where}: expected 6 comma-separated fields A,B,E,H1,H2,H3, found {len(fields)}: "
                    f"{line[:120]!r}")
            col = 0
            formulas = []
            for what, text in (("premise A", fields[0]), ("hypothesis B", fields[1])):
                try:
                    formulas.append(parse(text, line=n, column_offset=col))
                except FormulaSyntaxError as err:
                    raise EntailmentFileError(f"{path}: {what}: {err}") from None
                col += len(text) + 1
            ints = []
            for name, text in zip(("E", "H1", "H2", "H3"), fields[2:]):
                if text.strip() not in ("0", "1"):
                    raise EntailmentFileError(f"{where}: {name} must be 0 or 1, found {text!r}")
                ints.append(int(text))
            a, b = formulas
            if check_labels and int(entails(a, b)) != ints[0]:
                raise EntailmentFileError(
                    f"{where}: E={ints[0]} but the truth table says {int(entails(a, b))}")
            out.append(Entailment(fields[0].strip(), fields[1].strip(), *ints))
    return out


def write_entailment_file(path, examples) -> Path:
    """Write examples as ``A,B,E,H1,H2,H3`` lines (formulas in the files' format).

    Args:
        path: output file (parent directories are created).
        examples: :class:`Entailment` lines, or ``(A, B, E)`` triples (heuristics are computed).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for ex in examples:
        if len(ex) == 6:
            a, b = to_string(ex[0]), to_string(ex[1])
            vals = [int(v) for v in ex[2:]]
        elif len(ex) == 3:
            e = make_example(ex[0], ex[1], ex[2])
            a, b, vals = e.premise, e.hypothesis, list(e[2:])
        else:
            raise ParameterError(f"each example must be an Entailment or (A, B, E); got {ex!r}")
        if any(v not in (0, 1) for v in vals):
            raise ParameterError(f"E, H1..H3 must be 0/1; got {vals} for {a},{b}")
        lines.append(",".join([a, b, *map(str, vals)]))
    path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return path


def load_original_split(root, split: str, **kwargs) -> list[Entailment]:
    """Load one split of the released dataset from directory ``root`` (see :data:`ORIGINAL_FILES`).

    Raises:
        FileNotFoundError: none of the split's file names is in ``root``.
    """
    check_choice("split", split, SPLIT_NAMES)
    root = Path(root)
    for name in ORIGINAL_FILES[split]:
        if (root / name).is_file():
            return load_entailment_file(root / name, **kwargs)
    raise FileNotFoundError(f"{root}: none of {list(ORIGINAL_FILES[split])} found. {_NOT_SHIPPED}")


# ----------------------------------------------------------------------------------------------
# Tokens
# ----------------------------------------------------------------------------------------------

VOCAB: tuple[str, ...] = ("<pad>", "<sep>", "(", ")", "~", "&", "|", ">", *ALPHABET)
TOKEN_ID = {s: i for i, s in enumerate(VOCAB)}
PAD_ID, SEP_ID = TOKEN_ID["<pad>"], TOKEN_ID["<sep>"]
_FIRST_VAR = TOKEN_ID["a"]


def variable_ids() -> torch.Tensor:
    """Ids of the 26 variable symbols ``a``..``z`` (a long tensor)."""
    return torch.arange(_FIRST_VAR, _FIRST_VAR + 26, dtype=torch.long)


def tokenize(formula) -> list[int]:
    """Token ids of a formula read character by character (spaces dropped). Formula objects are
    printed in the files' format first; strings are taken as written."""
    text = to_string(formula) if isinstance(formula, (Var, Not, Bin)) else formula
    if not isinstance(text, str):
        raise ParameterError(f"expected a formula string, got {type(formula).__name__}")
    ids = []
    for i, c in enumerate(text):
        if c in " \t":
            continue
        if c not in TOKEN_ID:
            raise ParameterError(f"{text!r}: character {c!r} at column {i + 1} is not in VOCAB")
        ids.append(TOKEN_ID[c])
    if not ids:
        raise ParameterError("empty formula")
    return ids


def _pad(seqs: list[list[int]], max_len: int | None, what: str) -> torch.Tensor:
    longest = max(len(s) for s in seqs)
    if max_len is not None:
        check_int("max_len", max_len, minimum=1)
        if longest > max_len:
            raise ParameterError(f"max_len={max_len} is shorter than the longest {what} ({longest} tokens)")
    T = longest if max_len is None else max_len
    out = torch.full((len(seqs), T), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def _check_pairs(pairs):
    if not len(pairs):
        raise ParameterError("pairs must not be empty")
    for p in pairs:
        if len(p) < 2:
            raise ParameterError(f"each pair must be (premise, hypothesis, ...); got {p!r}")


def encode_pairs(pairs, max_len: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Premises and hypotheses as two padded id tensors (padding 0).

    Args:
        pairs: :class:`Entailment` lines or ``(A, B, ...)`` tuples (strings or formulas).
        max_len: pad both to this length (default: each to its own longest); longer sequences raise.

    Returns:
        ``(premise_ids (N, Tp), hypothesis_ids (N, Th))`` long tensors.
    """
    _check_pairs(pairs)
    prem = _pad([tokenize(p[0]) for p in pairs], max_len, "premise")
    hyp = _pad([tokenize(p[1]) for p in pairs], max_len, "hypothesis")
    return prem, hyp


def encode_packed(pairs, max_len: int | None = None) -> torch.Tensor:
    """``premise <sep> hypothesis`` per row, padded with 0: an ``(N, T)`` long tensor."""
    _check_pairs(pairs)
    return _pad([tokenize(p[0]) + [SEP_ID] + tokenize(p[1]) for p in pairs], max_len, "packed pair")


def encode_labels(pairs) -> torch.Tensor:
    """The labels E as an ``(N,)`` float tensor (for binary cross-entropy)."""
    _check_pairs(pairs)
    return torch.tensor([float(p[2]) for p in pairs])


def decode(ids) -> str:
    """Token ids back to text (padding dropped, ``<sep>`` printed as ``,``)."""
    out = []
    for i in torch.as_tensor(ids).tolist():
        if i == PAD_ID:
            continue
        out.append("," if i == SEP_ID else VOCAB[i])
    return "".join(out)


def permute_variables(tokens, variable_ids=None, generator: torch.Generator | None = None):
    """Symbolic vocabulary permutation (Evans et al.; paper 002 appendix C.1): rename the variables
    of each example by a random permutation of the variable symbols.

    Each row gets its own uniformly random permutation (a bijection: distinct variables stay
    distinct, so entailment labels are unchanged). Non-variable ids, including padding, are kept.
    Passing several tensors (premise and hypothesis ids) applies the SAME permutation to row i of
    each; in the packed layout the whole row is one example.

    Args:
        tokens: an ``(N, T)`` (or ``(T,)``) long tensor, or a tuple/list of such tensors with equal N.
        variable_ids: the ids to permute (default :func:`variable_ids`).
        generator: a ``torch.Generator`` for reproducibility.

    Returns:
        The permuted tensor(s), in the same structure.
    """
    single = isinstance(tokens, torch.Tensor)
    parts = [tokens] if single else list(tokens)
    if not parts or not all(isinstance(p, torch.Tensor) for p in parts):
        raise ParameterError("tokens must be a tensor or a non-empty tuple/list of tensors")
    squeeze = [p.dim() == 1 for p in parts]
    parts = [p.unsqueeze(0) if s else p for p, s in zip(parts, squeeze)]
    if any(p.dim() != 2 or p.dtype != torch.long for p in parts):
        raise ParameterError("token tensors must be (N, T) or (T,) long tensors")
    n = parts[0].shape[0]
    if any(p.shape[0] != n for p in parts):
        raise ParameterError(f"all token tensors must have the same number of rows; got "
                             f"{[p.shape[0] for p in parts]}")
    if variable_ids is None:
        vids = torch.arange(_FIRST_VAR, _FIRST_VAR + 26, dtype=torch.long)
    else:
        vids = torch.as_tensor(variable_ids, dtype=torch.long)
    if vids.dim() != 1 or len(vids) == 0 or len(torch.unique(vids)) != len(vids) or (vids < 0).any():
        raise ParameterError("variable_ids must be distinct non-negative ids")
    k = len(vids)
    device = generator.device if generator is not None else torch.device("cpu")
    perm = torch.argsort(torch.rand(n, k, generator=generator, device=device), dim=1).cpu()
    size = int(max(int(vids.max()), *(int(p.max()) if p.numel() else 0 for p in parts))) + 1
    table = torch.arange(size).repeat(n, 1)
    table[:, vids] = vids[perm]
    out = []
    for p, s in zip(parts, squeeze):
        if (p < 0).any():
            raise ParameterError("token ids must be non-negative")
        q = table.to(p.device).gather(1, p)
        out.append(q.squeeze(0) if s else q)
    return out[0] if single else type(tokens)(out) if isinstance(tokens, tuple) else out
