"""Propositional formulas: their syntax tree, parser, printer and syntactic measures.

Formulas are over single lowercase letters with ``~`` (not), ``&``, ``|``, ``>`` (implies). Evans et al.'s
files write every binary operation in parentheses and every negated formula in parentheses too (``~(a)``,
``~((a&b))``): the ``"evans"`` style of :func:`to_string`; :func:`parse` also reads a more lenient infix.
"""

from __future__ import annotations

import string
from typing import NamedTuple, Union

from urnlib.params import ParameterError, check_choice

__all__ = [
    "ALPHABET", "OPERATORS", "STYLES", "Var", "Not", "Bin", "Formula", "FormulaSyntaxError", "parse",
    "as_formula", "to_string", "collect_variables", "variables", "num_variables", "num_operators", "length",
    "alpha_key",
]

ALPHABET = string.ascii_lowercase
OPERATORS = ("&", "|", ">")
STYLES = ("evans", "compact")


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


def as_formula(f) -> Formula:
    """``f`` as a formula tree: strings are parsed, trees returned as they are."""
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
    f = as_formula(f)
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


def _nodes(f: Formula):
    """Every node of the tree ``f`` (depth first, iteratively: deep formulas need no recursion)."""
    stack = [f]
    while stack:
        g = stack.pop()
        yield g
        t = type(g)
        if t is Not:
            stack.append(g.arg)
        elif t is not Var:
            stack.append(g.left)
            stack.append(g.right)


def collect_variables(f: Formula, acc: set) -> set:
    """Add the variable names of the tree ``f`` to ``acc``; returns ``acc``."""
    acc.update(g.name for g in _nodes(f) if type(g) is Var)
    return acc


def variables(f) -> list[str]:
    """Sorted distinct variable names of a formula."""
    return sorted(collect_variables(as_formula(f), set()))


def num_variables(f) -> int:
    """Number of distinct variables."""
    return len(collect_variables(as_formula(f), set()))


def num_operators(f) -> int:
    """Number of operators (``~``, ``&``, ``|``, ``>``), the "complexity" of Evans et al.'s generator."""
    return sum(type(g) is not Var for g in _nodes(as_formula(f)))


def length(f) -> int:
    """Number of variable occurrences plus operators (``prop_length`` of the released code; H1)."""
    return sum(1 for _ in _nodes(as_formula(f)))  # every node is an operator or a variable occurrence


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

    a = rename(as_formula(premise))
    b = rename(as_formula(hypothesis))
    return to_string(a) + "," + to_string(b)
