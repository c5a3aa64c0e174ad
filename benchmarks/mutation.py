"""Mutation testing of the core: does a small change of the code fail a test? (issue 48; not in CI)

    nice -n 19 .venv/bin/python benchmarks/mutation.py                  # every core module (about an hour)
    nice -n 19 .venv/bin/python benchmarks/mutation.py --only rules     # one module
    .venv/bin/python benchmarks/mutation.py --list --only records       # the mutants, not run
    .venv/bin/python benchmarks/mutation.py --quick                     # 5 mutants of each module, no files

A *mutant* is a copy of one module with one small change: a comparison, arithmetic or boolean operator
swapped, a number moved by one, ``True`` and ``False`` swapped, ``not`` dropped, a returned value replaced
by ``None``, one positional argument of a call dropped, ``break`` and ``continue`` swapped. A mutant is
*killed* when the tests that target its module fail on it (a failure, an error or a hang past the time
limit); a mutant that survives either reveals a gap in the tests, or is *equivalent*: it computes what the
module computes (listed in :data:`EQUIVALENT`, each with its reason). Docstrings, messages (f-strings, the
arguments of ``raise`` and ``warnings.warn``), annotations and ``__all__`` are not mutated: wording is not
behaviour.

**Why not mutmut.** mutmut 3 (a dependency) copies the whole tree into ``mutants/`` and first runs the
whole suite to map tests to functions: on this 2-core machine, shared with other work, that is hours, and it
mutates functions only (not module-level tables or dataclass defaults). This runner uses mutmut's operators
on the AST, one module at a time against the tests that target it (:data:`MODULES`), and makes each mutant
cheap: the parent process imports torch, pytest and every urnlib module once; each mutant runs in a forked
child that drops the mutated module, the urnlib modules that import it and the test modules from
``sys.modules``, serves the mutated module's code in place of its file (an import hook: the tree on disk is
never changed) and runs ``pytest -x`` on the targeted tests.

Writes ``benchmarks/results/mutation.json``: per module, the mutants, killed, equivalent and surviving (each
survivor with its line and change), the seconds it took, and the machine. ``book/testing.md`` shows the table.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import importlib.abc
import importlib.util
import json
import os
import platform
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # no OpenMP pool in the parent: forking stays safe
os.environ.setdefault("URNLIB_QUIET", "1")

REPO = Path(__file__).resolve().parents[1]
JSON = REPO / "benchmarks" / "results" / "mutation.json"
PAGE = REPO / "book" / "testing" / "mutation.md"  #: the table book/testing.md includes

#: tests that start other interpreters, which import the module from its file, not the mutant: left out
_NOT_SUBPROCESS = "not comment_in_every_module and not as_a_command and not two_processes"
def _properties(word: str) -> tuple[str, ...]:
    """The tests of ``tests/test_properties.py`` whose code names ``word`` (e.g. ``"dyck."``), as node ids."""
    path = REPO / "tests" / "test_properties.py"
    if not path.is_file():
        return ()
    text = path.read_text()
    return tuple(f"tests/test_properties.py::{node.name}" for node in ast.parse(text).body
                 if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
                 and word in (ast.get_source_segment(text, node) or ""))


#: module -> the tests that target it (pytest arguments; slow tests that train or start interpreters left
#: out).
#: A first file ``tests/test_<module>_mutants.py`` (fast tests written against survivors) runs alone first:
#: most mutants fail there, without collecting the other files (seconds per mutant, not the suite's)
MODULES: dict[str, tuple[str, ...]] = {
    "urnlib.rules": ("tests/test_rules_mutants.py", "tests/test_rules.py", "tests/test_claims.py",
                     *_properties("rules.")),
    "urnlib.claims": ("tests/test_claims_mutants.py", "tests/test_claims.py", "tests/test_rules.py",
                      *_properties("rules.")),
    "urnlib.declare": ("tests/test_declare_mutants.py", "tests/test_declare.py", "tests/test_statements.py"),
    "urnlib.statements": ("tests/test_statements_mutants.py", "tests/test_statements.py",
                          "tests/test_declare.py", "tests/test_rules.py"),
    "urnlib.artefacts": ("tests/test_artefacts_mutants.py", "tests/test_statements.py",
                         "tests/test_scorecard.py", "tests/test_landing.py"),
    "urnlib.records": ("tests/test_results.py", "tests/test_stale_runs.py", "-k", _NOT_SUBPROCESS),
    "urnlib.results": ("tests/test_results.py", "tests/test_stale_runs.py", "-k", _NOT_SUBPROCESS),
    "urnlib.languages.dyck": ("tests/test_dyck_language.py", *_properties("dyck.")),
    "urnlib.languages.cross_serial": ("tests/test_cross_serial_language_mutants.py",
                                      "tests/test_cross_serial_language.py", *_properties("cross_serial.")),
    "urnlib.languages.anbn": ("tests/test_anbn_mutants.py", "tests/test_anbn.py", *_properties("anbn.")),
    "urnlib.languages.elman": ("tests/test_elman.py", *_properties("elman."), "-k", "not stored"),
    "urnlib.languages.agreement_grammar": ("tests/test_agreement_grammar_mutants.py",
                                           "tests/test_agreement_grammar.py", *_properties("grammar.")),
    "urnlib.models.unitary": ("tests/test_unitary_mutants.py", "tests/test_models.py", "tests/test_scan.py",
                              "tests/test_param_mask.py", "tests/test_param_mask_sequence.py",
                              *_properties("URN(")),
}

#: mutants that compute what the module computes: "<module>" -> {mutant id: reason}; a mutant's id is its
#: line's text, its change and the occurrence of that change on lines of that text (see :class:`Mutant`)
_AT_CRIT = ("differs only where a difference equals the t-test's critical value exactly: a t quantile times "
            "a standard error, which no seeds' values reach but by a coincidence of the last bit")
EQUIVALENT: dict[str, dict[str, str]] = {
    "urnlib.rules": {
        "if diff - margin > crit: | > -> >= #1": _AT_CRIT,
        "if -diff > crit: | > -> >= #1": _AT_CRIT,
        "if size > crit: | > -> >= #1": _AT_CRIT,
        "if -size > crit: | > -> >= #1": _AT_CRIT,
        "if abs(size) > _t(sides * (n - 1)) * math.sqrt(sides * variance / n): | > -> >= #1": _AT_CRIT,
        "if _sign_test(k, n) < LEVEL: | < -> <= #1":
            "a sign test's p-value is a multiple of 2^-n, never exactly 0.05",
        "if _fisher(a, n_a, b, n_b) < LEVEL: | < -> <= #1":
            "differs only where Fisher's exact p-value is exactly 0.05 (a sum of hypergeometric "
            "probabilities)",
        "return next((n for n in range(start, MAX_SEEDS + 1) if p_value(n) < LEVEL), None) | < -> <= #1":
            "differs only where a sign test's or Fisher's p-value is exactly 0.05 (see above)",
        "return Decision(size > 0, direction, size) | > -> >= #2":
            "Fisher's test never decides equal rates (size 0 gives p = 1), so size is never 0 there",
        "return float(_stats.t.ppf(1 - LEVEL / 2, df)) if df > 0 else math.inf | > -> >= #1":
            "df is never 0 here: one-sample tests run from 2 seeds (df >= 1), seeds_to_decide from n = 2 "
            "(df >= 2), Welch's df is positive whenever the standard error is",
        "return float(_stats.binomtest(k, n, 0.5).pvalue) | call drops argument 3 #1":
            "binomtest's p defaults to 0.5",
        "return Decision(share > 0.5, direction, share - 0.5) | > -> >= #1":
            "a share of exactly one half has a sign-test p-value of 1, so it never reaches this line",
        "more = _seeds_until(n + 1, lambda m: _sign_test(round(share * m), m)) if share != 0.5 else None "
        "| 0.5 -> 1.5 #1":
            "a share of one half searched anyway: round(m / 2) of m seeds has a sign-test p-value of 1 at "
            "every m, so the search finds none (None, as before, only slower)",
        "more = _seeds_until(n + 1, lambda m: _sign_test(round(share * m), m)) if share != 0.5 else None "
        "| + -> - #1":
            "searching from n - 1 adds n - 1 and n: k of n is undecided (else no search), and at n - 1 the "
            "share's count is k - 1 (share above one half; below it, mirrored), never decided when k of n is "
            "not: P(X_n >= j + 1) = P(X_(n-1) >= j + 1) + P(X_(n-1) = j) / 2 <= P(X_(n-1) >= j)",
        **{"return Decision(d.holds, compare(a, b, names=names).direction, d.size, d.seeds_needed, "
           f"\"matches\", d.cause) | call drops argument {k} #1":
           "within's Decision never carries a cause (it passes holds, direction, size and seeds only), so "
           "d.cause is None, and the decides wrapper stamps 'matches' on a Decision whose kind is empty"
           for k in (5, 6)},
        **{"df = se2 ** 2 / sum((v / n) ** 2 / (n - 1) for v, n in ((va, a.n), (vb, b.n)) "
           f"if n > 1 and v > 0) | {change}":
           "a side of one seed has sd 0 (Stat), so v > 0 alone leaves it out, and a side with v = 0 adds 0 "
           "to the sum: the condition is v > 0 either way"
           for change in ("and -> or #1", "> -> >= #1", "> -> >= #2")},
    },
    "urnlib.claims": {
        'return "inf" if x > 0 else "-inf" | > -> >= #1': "x is infinite on this line: never 0",
        'return "inf" if x > 0 else "-inf" | 0 -> 1 #1': "x is infinite on this line: above 1 exactly when "
        "above 0",
        'holds, partly, cause = None, False, "untrained" | False -> True #1':
            "partly is read only when holds is False, and holds is None here",
    },
    "urnlib.statements": {
        "return Decision(None, direction, margin - drop, None if more is None else max(more, have + 1)) "
        "| + -> - #1":
            "the floor never binds, more >= have + 1: seeds_to_decide's threshold t(df) sqrt(sides var / "
            "n) falls with n, and at n = have = min(n_a, n_b) it is no lower than the bounds that left the "
            "claim undecided (sqrt(2 var / have) >= Welch's se, df 2 (have - 1) <= n_a + n_b - 2, its "
            "two-sided t >= the one-sided bound's; one sample: the same se and df)",
    },
    "urnlib.artefacts": {
        **{'RANK = {"not reproduced": 0, "inconclusive": 1, "not run here": 1, "partly reproduced": 2, '
           f'"reproduced": 3}} | {change}': why for change, why in (
            ("1 -> 2 #2", "the rank of 'not run here' is compared only with itself: the deciding claim "
             "leaves claims not run out unless every claim is not run"),
            ("3 -> 4 #1", "only the ranks' order is read (min, >=), and 4 keeps it"))},
    },
    "urnlib.languages.cross_serial": {
        **{f"@lru_cache(maxsize=32) | 32 -> 33 #{k}": "a cache's size changes what is kept, not what "
           "language() and _prefixes() return: pure functions of their arguments" for k in (1, 2)},
        "chosen = rng.integers(0, len(lengths), size=count)  # (count,) the pattern lengths "
        "| call drops argument 1 #1": "integers(n) draws from [0, n) as integers(0, n) does, from the same "
        "stream",
        "return [pairs[i] for i in rng.integers(0, len(pairs), size=count)] | call drops argument 1 #1":
            "integers(n) draws from [0, n) as integers(0, n) does, from the same stream",
        "and symbols[pred[row][i]] in valid_next(s[:i], k_eval, min_block, vocab.STOP) "
        "| call drops argument 4 #1": "valid_next's stop defaults to '$', which is CrossSerialVocab.STOP (a "
        "class constant)",
        **{"return frozenset(string(m, n)[:i] for m, n in language(k, min_block) for i in range(2 * (m + n) "
           f"+ 1)) | {change} #1": "a slice past a string's end is the whole string, already in the set "
           "(i = 2 (m + n))" for change in ("1 -> 2", "2 -> 3")},
    },
    "urnlib.languages.agreement_grammar": {
        "if counts != (k, n_attractors) or len(b.words) > MAX_LENGTH:  # cannot happen; guards the "
        "construction | or -> and #1":
            "a guard that never fires (the tests count every sentence's nouns and tokens themselves): "
            "weakened, it still never fires",
        "plural = rng.random(size) < p_plural | < -> <= #1":
            "differs only when a uniform draw equals p_plural exactly (probability 2^-53 a sentence)",
        "MAX_INTERVENING = (MAX_LENGTH - MAX_PREAMBLE - 6) // 3 | 6 -> 7 #1":
            "(60 - 7 - 7) // 3 = 46 // 3 = 15, as (60 - 7 - 6) // 3 = 47 // 3",
        'check_int("verb_index", verb_index, minimum=0, maximum=len(pos) - 1) | 0 -> 1 #1':
            "a verb at index 0 cannot come after the subject: rejected with a ParameterError either way "
            "(only its message differs)",
        'check_int("subj_index", subj_index, minimum=0, maximum=len(pos) - 1) | 1 -> 2 #1':
            "a subject at the last index has no verb after it: rejected with a ParameterError either way "
            "(only its message differs)",
        "chosen = rng.permutation(np.repeat(counts, size // len(counts))) | // -> / #1":
            "size is a multiple of len(counts) here (checked above): size / len(counts) is the same whole "
            "number, which np.repeat takes as such",
    },
    "urnlib.models.unitary": {
        "k = n - 1 if k is None else k | - -> + #2":
            "the strict upper triangle's rows are 0 .. n - 2: rows < n + 1 keeps them all, as rows < n - 1",
        "if present is not None and not bool(present.all()):  # only the symbols this batch reads "
        "| call drops argument 1 #1":
            "bool() is False: the subset path always; with every symbol present it reads arange(V), the same "
            "parameters, the same mask shape (V, l) and draws, the identity renumbering",
        "symbol_rows, mask_rows = self.truncated_rows(self.embedding), self.truncated_rows(masks)  "
        "# (V|B,k,n) | call drops argument 1 #1": "truncated_rows() without parameters reads self.embedding",
        "M = self.matrices(present.nonzero().squeeze(1))  # (V', n, n), symbols in increasing order "
        "| call drops argument 1 #2":
            "nonzero() is (V', 1): squeeze() drops only its column, but for V' = 1, where the scalar index "
            "reads a (l,) row that the generators broadcast into l copies of that symbol's matrix (its mask "
            "the same l draws), and the renumbered tokens (all 0) read the first: the same states",
        "h, out = self.h0.to(masks.dtype).expand(B, self.n), [] | call drops argument 1 #2":
            "h0 (a buffer) and the masks (drawn like the embedding) have the model's dtype: .to() is a no-op",
    },
    "urnlib.languages.dyck": {
        "types = rng.integers(0, len(PAIRS), size=len(skeleton)) | call drops argument 1 #1":
            "integers(5) draws from [0, 5) as integers(0, 5) does, from the same stream",
        "closer_ids = vocab.closer_ids.to(targets.device) | call drops argument 1 #1":
            "on the CPU .to() returns the same tensor; only a second device tells them apart "
            "(tests/test_device.py, not among the targeted tests)",
        "coin = rng.random(count) < 0.5 | < -> <= #1":
            "differs only when a uniform draw is exactly 0.5 (probability 2^-53 a step)",
    },
}
_OTHER_DRAWS = ("open: draws another sentence from the same distribution (the uniform draws are read at "
                "other places, or more of the stream is taken per sentence): only a pin of a seed's exact "
                "sentences would see it, and no document promises a seed's sentences across versions")
#: surviving mutants that are gaps left open, with why: "<module>" -> {mutant id: reason}
SURVIVING: dict[str, dict[str, str]] = {
    "urnlib.models.unitary": {
        **{key: "open: the full vocabulary's path where the batch reads only some symbols (or the reverse): "
           "the same states in evaluation (test_states_of_a_batch_using_few_symbols_match_the_full_"
           "vocabulary_path); in training the per-symbol mask is drawn for V symbols, not the V' read "
           "(another draw of the same distribution): only a pin of a seed's training states would see it"
           for key in (
               "present = None if present is None else present > 0 | > -> >= #1",
               "if present is not None and not bool(present.all()):  # only the symbols this batch reads "
               "| not x -> x #1")},
    },
    "urnlib.languages.agreement_grammar": {
        **{key: _OTHER_DRAWS for key in (
            "self.next_draw += 1 | + -> - #1", "self.draws, self.next_draw = draws, 0 | 0 -> 1 #1",
            *(f"draws = rng.random(5 * k + 20).tolist()  # k for the order, <= 4 per tail noun, <= 10 for "
              f"Pre, 4 after | {change} #1" for change in ("20 -> 21", "5 -> 6")))},
    },
    "urnlib.rules": {
        "if (a.mean < b.mean) == higher: | < -> <= #1":
            "open, a convention: at exactly equal means either side is 'behind'; the two choices differ "
            "only in seeds_needed under a relative tolerance (the moved side's spread is scaled), and no "
            "test pins which side the code takes",
    },
}

_SWAP_CMP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
             ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_SWAP_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
             ast.Mod: ast.Div, ast.Pow: ast.Mult, ast.MatMult: ast.Mult, ast.BitAnd: ast.BitOr,
             ast.BitOr: ast.BitAnd, ast.LShift: ast.RShift, ast.RShift: ast.LShift}
_SYMBOL = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-",
           ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@",
           ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<", ast.RShift: ">>", ast.And: "and", ast.Or: "or"}


@dataclass(frozen=True)
class Mutant:
    """One change: the ``index``-th mutation point of the module (in :func:`points` order)."""

    module: str
    index: int
    line: int
    change: str
    ident: str  # "<line text> | <change> #<occurrence>": stable while that line is unchanged

    def as_dict(self) -> dict:
        return {"line": self.line, "change": self.change, "id": self.ident}


def _skipped(tree: ast.Module) -> set[int]:
    """ids of the nodes not mutated: docstrings, messages, annotations, ``__all__`` (and all below them)."""
    skip: set[int] = set()

    def below(node):
        skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            below(body[0])
        if isinstance(node, ast.JoinedStr | ast.Raise | ast.Assert):
            below(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warn":
            below(node)
        if isinstance(node, ast.arg) and node.annotation is not None:
            below(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            below(node.returns)
        if isinstance(node, ast.AnnAssign):
            below(node.annotation)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            below(node)
    return skip


def _points(tree: ast.Module):
    """Every mutation point: ``(node, parent, field, position, kind, new, change)``, in a fixed order."""
    skip = _skipped(tree)
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            children = value if isinstance(value, list) else [value]
            for pos, node in enumerate(children):
                if not isinstance(node, ast.AST) or id(node) in skip:
                    continue
                yield from _node_points(node, parent, field, pos if isinstance(value, list) else None)


def _node_points(node, parent, field, pos):
    here = (node, parent, field, pos)
    if isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            new = _SWAP_CMP[type(op)]
            yield (*here, ("cmp", k), new, f"{_SYMBOL[type(op)]} -> {_SYMBOL[new]}")
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _SWAP_BIN:
        new = _SWAP_BIN[type(node.op)]
        yield (*here, ("op",), new, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[new]}")
    elif isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield (*here, ("op",), new, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[new]}")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield (*here, ("unwrap",), None, "not x -> x")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield (*here, ("unwrap",), None, "-x -> x")
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield (*here, ("const",), not node.value, f"{node.value} -> {not node.value}")
    elif isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value,
                                                                                                bool):
        yield (*here, ("const",), node.value + 1, f"{node.value!r} -> {node.value + 1!r}")
    elif isinstance(node, ast.Return) and node.value is not None \
            and not (isinstance(node.value, ast.Constant) and node.value.value is None):
        yield (*here, ("return_none",), None, "return x -> return None")
    elif isinstance(node, ast.Break | ast.Continue):
        yield (*here, ("flow",), None, "break <-> continue")
    if isinstance(node, ast.Call):
        for k in range(len(node.args)):
            if not isinstance(node.args[k], ast.Starred):
                yield (*here, ("drop_arg", k), None, f"call drops argument {k + 1}")


def _apply(point) -> None:
    node, parent, field, pos, kind, new, _ = point
    if kind[0] == "cmp":
        node.ops[kind[1]] = new()
    elif kind[0] == "op":
        node.op = new()
    elif kind[0] == "const":
        node.value = new
    elif kind[0] == "drop_arg":
        del node.args[kind[1]]
    else:
        flow = ast.Continue if isinstance(node, ast.Break) else ast.Break
        replacement = {"unwrap": lambda: node.operand,
                       "return_none": lambda: ast.Return(value=ast.Constant(None)),
                       "flow": flow}[kind[0]]()
        ast.copy_location(replacement, node)
        if pos is None:
            setattr(parent, field, replacement)
        else:
            getattr(parent, field)[pos] = replacement


def source_of(module: str) -> Path:
    return REPO / (module.replace(".", "/") + ".py")


def mutants(module: str, text: str | None = None) -> list[Mutant]:
    text = source_of(module).read_text() if text is None else text
    lines = text.splitlines()
    seen: dict[str, int] = {}
    out = []
    for index, point in enumerate(_points(ast.parse(text))):
        line = getattr(point[0], "lineno", 0)
        base = f"{lines[line - 1].strip() if line else ''} | {point[6]}"
        seen[base] = seen.get(base, 0) + 1
        out.append(Mutant(module, index, line, point[6], f"{base} #{seen[base]}"))
    return out


def mutated_code(module: str, index: int, text: str):
    """The code of mutant ``index`` of ``module`` whose source was ``text`` (read once per run: an edit of
    the file meanwhile changes nothing)."""
    path = source_of(module)
    tree = ast.parse(text)
    point = next(p for i, p in enumerate(_points(tree)) if i == index)
    _apply(point)
    return compile(ast.fix_missing_locations(tree), str(path), "exec")


class _Serve(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``code`` as module ``name`` (its file's path kept, so tracebacks and ``__file__`` are right)."""

    def __init__(self, name: str, code):
        self.name, self.code = name, code

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, source_of(fullname), loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code, module.__dict__)


def _module_names() -> dict[str, Path]:
    """Every module of the urnlib package by name, with its file."""
    out = {}
    for path in sorted((REPO / "urnlib").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def dependents(module: str) -> set[str]:
    """``module`` and every urnlib module that imports it, directly or not: those the child imports afresh
    (the others hold no reference to the mutated module, so they stay imported)."""
    names = _module_names()
    imports: dict[str, set[str]] = {}
    for name, path in names.items():
        found = imports.setdefault(name, set())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                    + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
    out, todo = {module}, [module]
    while todo:
        target = todo.pop()
        for name, found in imports.items():
            if name not in out and target in found:
                out.add(name)
                todo.append(name)
    return out


def _preload() -> None:
    """Import every urnlib module and what the tests import, so that each forked child imports afresh only
    the mutated module, the modules that import it, and the tests."""
    import hypothesis  # noqa: F401
    import pytest  # noqa: F401

    for name in _module_names():
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that needs data or a device: the child imports it
            pass


def run_tests(tests: tuple[str, ...], module: str | None, code, timeout: float) -> tuple[str, float]:
    """``("passed" | "failed" | "timeout", seconds)`` of the targeted tests, ``code`` serving ``module``."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: fresh urnlib and tests, the mutant in place of the module's file
        try:
            fresh = dependents(module) if module is not None else set()
            for name in [n for n in sys.modules if n in fresh or n.split(".")[0] in ("tests", "conftest")
                         or n.startswith("test_")]:
                del sys.modules[name]
                package, _, leaf = name.rpartition(".")  # `from package import leaf` reads the attribute
                if package in sys.modules and leaf in vars(sys.modules[package]):
                    delattr(sys.modules[package], leaf)
            if module is not None:
                sys.meta_path.insert(0, _Serve(module, code))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import pytest

            rc = pytest.main(["-x", "-q", "-p", "no:cacheprovider", "--timeout", str(int(timeout)),
                              "-o", "addopts=", *tests])
        except BaseException:  # noqa: BLE001 - anything the mutant breaks is a failure
            rc = 3
        os._exit(int(rc))
    deadline = start + timeout + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.perf_counter() - start
        time.sleep(0.05)
    code_ = os.waitstatus_to_exitcode(status)
    return ("passed" if code_ == 0 else "failed"), time.perf_counter() - start


def machine() -> dict:
    flags = set()
    try:
        for word in Path("/proc/cpuinfo").read_text().split():
            if word in ("avx2", "avx512f"):
                flags.add(word)
    except OSError:
        pass
    return {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "simd": sorted(flags), "python": platform.python_version()}


def run_module(module: str, limit: int | None, log, before: dict | None = None) -> dict:
    """Run the mutants of ``module`` (the first ``limit``); with ``before`` (this module's last result), only
    its survivors and equivalents are run again and its killed ones are counted as they were."""
    tests = tuple(t for t in MODULES[module] if not t.endswith(".py") or (REPO / t).is_file())
    text = source_of(module).read_text()
    found = mutants(module, text)[:limit] if limit else mutants(module, text)
    carried = 0
    if before is not None:
        if before.get("source_sha256") != hashlib.sha256(text.encode()).hexdigest()[:12]:
            raise SystemExit(f"{module} changed since its stored run (its mutants are others): run it whole")
        again = {m["id"] for m in before["survivors"] + before["equivalents"]}
        carried = len(found) - len([m for m in found if m.ident in again])
        found = [m for m in found if m.ident in again]
    started = time.perf_counter()
    outcome, base = run_tests(tests, None, None, 600)
    if outcome != "passed":
        raise SystemExit(f"{module}: the targeted tests fail unmutated ({tests}); fix them first")
    timeout = max(20.0, 4 * base)
    log(f"== {module}: {len(found)} mutants, tests {base:.1f} s unmutated")
    equivalent = EQUIVALENT.get(module, {})
    first = tests[:1] if tests and tests[0].endswith("_mutants.py") else ()
    killed, eq, surviving, timeouts = carried, [], [], 0
    for done, m in enumerate(found):
        if done and not done % 25:
            log(f"   {done}/{len(found)} mutants, {time.perf_counter() - started:.0f} s")
        try:
            code = mutated_code(module, m.index, text)
        except (SyntaxError, ValueError, TypeError):
            killed += 1  # it does not compile: no test needed
            continue
        outcome, seconds = run_tests(first, module, code, timeout) if first else ("passed", 0.0)
        if outcome == "passed":  # the quick file alone did not kill it: every targeted test
            outcome, seconds = run_tests(tests, module, code, timeout)
        if outcome != "passed":
            killed += 1
            timeouts += outcome == "timeout"
        elif m.ident in equivalent:
            eq.append({**m.as_dict(), "reason": equivalent[m.ident]})
        else:
            surviving.append(m.as_dict())
            log(f"  survived: line {m.line}: {m.change}   [{m.ident}]")
    seconds = time.perf_counter() - started + (before["seconds"] if before else 0)
    live = len(found) + carried - len(eq)
    result = {"mutants": len(found) + carried, "killed": killed, "equivalent": len(eq),
              "surviving": len(surviving),
              "killed_share": round(killed / live, 4) if live else 1.0, "timeouts": timeouts,
              "source_sha256": hashlib.sha256(text.encode()).hexdigest()[:12],
              "tests": list(tests), "tests_seconds": round(base, 1), "seconds": round(seconds, 1),
              "survivors": surviving, "equivalents": eq}
    log(f"   {module}: {killed}/{live} killed ({result['killed_share']:.1%}), {len(eq)} equivalent, "
        f"{len(surviving)} surviving, {seconds:.0f} s")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="+", choices=sorted(MODULES), metavar="MODULE",
                   help="modules to mutate (default: every core module)")
    p.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    p.add_argument("--survivors", action="store_true",
                   help="run only the last run's survivors and equivalents again (after new tests)")
    p.add_argument("--page", action="store_true", help="write the book's table from the stored results only")
    p.add_argument("--quick", action="store_true", help="5 mutants of each module; write nothing")
    args = p.parse_args(argv)
    chosen = args.only or list(MODULES)
    if args.page:
        write_page(_stored())
        return 0
    if args.list:
        for module in chosen:
            for m in mutants(module):
                print(f"{module}:{m.line}: {m.change}   [{m.ident}]")
        return 0
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    _preload()
    for module in chosen:
        before = _stored().get("modules", {}).get(module) if args.survivors else None
        result = run_module(module, 5 if args.quick else None, lambda s: print(s, flush=True), before)
        if not args.quick:  # read again and merge: another run may have written other modules meanwhile
            results = _stored()
            results.setdefault("modules", {})[module] = result
            results["machine"] = machine()
            results["date"] = time.strftime("%Y-%m-%d")
            JSON.write_text(json.dumps(results, indent=1) + "\n")
            write_page(results)
    return 0


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def write_page(results: dict) -> str:
    """The table of ``results`` (per module, then every survivor and equivalent mutant with its reason),
    as Markdown: written to :data:`PAGE`, which ``book/testing.md`` includes."""
    done = results.get("modules", {})
    rows = ["| module | mutants | killed | equivalent | surviving | killed (%) | min |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for module in MODULES:
        r = done.get(module)
        if r is None:
            rows.append(f"| `{module}` | {len(mutants(module))} | not run | | | | |")
            continue
        run = f" ({r['run']} run, unfinished)" if r.get("run", r["mutants"]) < r["mutants"] else ""
        rows.append(f"| `{module}` | {r['mutants']}{run} | {r['killed']} | {r['equivalent']} | "
                    f"{r['surviving']} | {r['killed_share']:.1%} | {r['seconds'] / 60:.0f} |")
    lines = [*rows, ""]
    machine_ = results.get("machine", {})
    simd = ", ".join(machine_.get("simd", [])) or "no AVX"
    lines.append(f"Measured {results.get('date', '')} on {machine_.get('cores', '?')} cores ({simd}), niced, "
                 "beside other work: minutes are wall time, each mutant's tests in a forked process.")
    for title, key in (("Surviving mutants", "survivors"), ("Equivalent mutants", "equivalents")):
        listed = [(module, m) for module in MODULES for m in done.get(module, {}).get(key, [])]
        if not listed:
            continue
        lines += ["", f"**{title}** ({len(listed)}; listed, the code does not fit a table column):", ""]
        for module, m in listed:
            code = m["id"].rsplit(" | ", 1)[0]
            why = m.get("reason", SURVIVING.get(module, {}).get(m["id"], ""))
            lines.append(f"- `{module.removeprefix('urnlib.')}` line {m['line']}, {_cell(m['change'])} in "
                         f"`{_cell(code)}`" + (f": {_cell(why)}" if why else ": no reason yet"))
    text = "\n".join(lines) + "\n"
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text)
    return text


def _stored() -> dict:
    return json.loads(JSON.read_text()) if JSON.is_file() else {}


if __name__ == "__main__":
    sys.exit(main())
