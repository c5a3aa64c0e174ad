"""Word analogy questions (``a : b :: c : d``) and the 3CosAdd evaluation of paper 003.

Paper 003 sec. 5 measures its matrix embeddings on the Google analogy questions of Mikolov et al. (2013a),
with the authors' evaluation code (reference-facts, "Matrix embeddings"): each word's matrix is flattened
to a vector, rows are normalised to unit length, and a question is answered by 3CosAdd (Mikolov et al.
2013; named by Levy & Goldberg 2014): the word ``x`` maximising ``cos(x, b) - cos(x, a) + cos(x, c)``,
the three question words excluded; top-1 accuracy. The paper counts the correct answers: 555 for the
commutative (100 x 100 diagonal) and 81 for the dense (10 x 10) model 4.2, 1-2 for model 4.3.

The question set is gensim's test data ``questions-words.txt`` (19,544 questions in 14 sections): lines
``: section-name`` open a section, every other line holds four words ``a b c d`` (a is to b as c is to d).
"""

from __future__ import annotations

import importlib.util
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from urnlib.corpora.files import read_text
from urnlib.params import DataError, ParameterError, check_int

__all__ = ["Analogy", "AnalogyFormatError", "AnalogyResult", "google_analogy_path", "read_analogies",
           "evaluate_3cosadd", "INSTALL_HINT", "FIX_HINT"]

INSTALL_HINT = ("The Google analogy questions come with gensim (a core dependency of urnlib): "
                "`pip install gensim`, or reinstall urnlib with `pip install -e .`.")
#: what to do about a damaged or malformed analogy file
FIX_HINT = ("Fix the file (UTF-8 text: ': section' headers and 'a b c d' question lines), or use gensim's "
            "questions-words.txt (urnlib.corpora.analogy.google_analogy_path()); if that one is damaged, "
            "reinstall gensim: `pip install --force-reinstall gensim`.")


class AnalogyFormatError(DataError):
    """An analogy file that is missing, damaged or not in the questions-words format; the message names the
    file and line and says what to do (a :class:`~urnlib.errors.DataError`)."""


@dataclass(frozen=True)
class Analogy:
    """One question ``a : b :: c : d`` of section ``section`` (e.g. ``athens greece baghdad iraq``)."""

    section: str
    a: str
    b: str
    c: str
    d: str

    @property
    def words(self) -> tuple[str, str, str, str]:
        return (self.a, self.b, self.c, self.d)


def google_analogy_path() -> Path:
    """The path of ``questions-words.txt`` inside the installed gensim package.

    gensim is located with :func:`importlib.util.find_spec`, which does not import it (its ``__init__``
    loads the whole model zoo).

    Raises:
        DataError: gensim is not installed, or its copy lacks the test data.
    """
    spec = importlib.util.find_spec("gensim")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"gensim is not installed. {INSTALL_HINT}")
    for path in (Path(loc) / "test" / "test_data" / "questions-words.txt"
                 for loc in spec.submodule_search_locations):
        if path.is_file():
            return path
    raise DataError(f"gensim at {list(spec.submodule_search_locations)} has no "
                    f"test/test_data/questions-words.txt (a stripped install?). {INSTALL_HINT}")


def read_analogies(path: str | os.PathLike, *, lower: bool = True) -> list[Analogy]:
    """The questions of a file in the ``questions-words.txt`` format, in file order.

    Args:
        path: the file; blank lines are ignored, words are separated by any whitespace.
        lower: lower-case the four words (gensim's evaluation does; section names are kept as written).
            Pass ``False`` for a case-sensitive vocabulary (paper 003's UMBC corpus was not lower-cased).

    Raises:
        AnalogyFormatError: a missing or non-UTF-8 file, a header without a name, a question line without
            exactly 4 words, a question before the first ``: section`` header, or no questions at all
            (the message names the file and the line number, and says what to do).
    """
    path = Path(path)
    if not path.is_file():
        raise AnalogyFormatError(f"analogy file {str(path)!r} does not exist. {INSTALL_HINT}")
    out: list[Analogy] = []
    section: str | None = None
    try:
        text = read_text(path, FIX_HINT, encoding="utf-8-sig")
    except DataError as err:
        raise AnalogyFormatError(str(err)) from None
    for number, line in enumerate(io.StringIO(text), start=1):
        where, line = f"{path}, line {number}", line.strip()
        if not line:
            continue
        if line.startswith(":"):
            section = line[1:].strip()
            if not section:
                raise AnalogyFormatError(
                    f"{where}: a section header without a name; expected ': name'. {FIX_HINT}")
            continue
        words = line.split()
        if len(words) != 4:
            raise AnalogyFormatError(
                f"{where}: {len(words)} words {line!r}; expected 4 words 'a b c d' (a is to b as c is to d) "
                f"or a section header ': name'. {FIX_HINT}")
        if section is None:
            raise AnalogyFormatError(
                f"{where}: a question before the first section header; expected ': name' first. "
                f"{FIX_HINT}")
        out.append(Analogy(section, *(w.lower() if lower else w for w in words)))
    if not out:
        raise AnalogyFormatError(
            f"{path} holds no analogy questions; expected ': name' headers and 'a b c d' lines. {FIX_HINT}")
    return out


@dataclass(frozen=True)
class AnalogyResult:
    """The answers of :func:`evaluate_3cosadd`, one per question.

    Attributes:
        analogies: the questions, in the order given.
        predictions: the top-1 answer per question; ``None`` when the question was skipped (one of its four
            words is not in the vocabulary), ``""`` when no candidate was left (every word other than a, b, c
            has a zero vector).
    """

    analogies: tuple[Analogy, ...]
    predictions: tuple[str | None, ...]

    answered = property(lambda self: sum(p is not None for p in self.predictions), doc="Questions answered.")
    skipped = property(lambda self: len(self.predictions) - self.answered, doc="Questions out of vocabulary.")
    correct = property(lambda self: sum(p == q.d for p, q in zip(self.predictions, self.analogies)),
                       doc="Questions answered with d (paper 003 reports this count).")

    @property
    def accuracy(self) -> float:
        """Correct / answered (as gensim reports it; NaN when nothing was answered)."""
        return self.correct / self.answered if self.answered else float("nan")

    def per_section(self, total: bool = True) -> pd.DataFrame:
        """Counts per section (in file order): correct, answered, skipped, questions, accuracy.

        Args:
            total: append a row ``"total"`` over all sections.
        """
        frame = pd.DataFrame({
            "section": [q.section for q in self.analogies],
            "correct": [p == q.d for p, q in zip(self.predictions, self.analogies)],
            "answered": [p is not None for p in self.predictions],
        })
        frame["skipped"] = ~frame["answered"]
        table = frame.groupby("section", sort=False)[["correct", "answered", "skipped"]].sum().astype(int)
        if total:
            table.loc["total"] = table.sum()
        table["questions"] = table["answered"] + table["skipped"]
        table["accuracy"] = table["correct"] / table["answered"].where(table["answered"] > 0)
        return table


def evaluate_3cosadd(vectors: np.ndarray, words: Sequence[str], analogies: Sequence[Analogy], *,
                     batch: int = 256) -> AnalogyResult:
    """Answer analogy questions by 3CosAdd (Mikolov et al. 2013), as paper 003 evaluates its embeddings.

    For a question ``a : b :: c : ?`` the answer is ``argmax_x cos(x, b) - cos(x, a) + cos(x, c)`` over the
    vocabulary without a, b and c; ties go to the lowest index. A question is answered when all four words
    are in ``words`` and correct when the answer is d; otherwise it is skipped (out of vocabulary).

    A zero vector has cosine 0 with every word (no NaN) when it is a question word, and is never chosen as
    an answer (it is similar to nothing); a question whose d is a zero vector is answered, and wrong.

    Args:
        vectors: ``(V, D)`` embeddings, one row per word; flatten matrix embeddings first
            (``M.reshape(V, -1)``; for diagonal matrices their diagonals give the same cosines).
        words: the ``V`` words of the rows (distinct; matched exactly, so lower-case them to match
            :func:`read_analogies`' default).
        analogies: the questions, e.g. ``read_analogies(google_analogy_path())``.
        batch: questions scored per matrix product (memory ``batch x V`` floats; no effect on the result).

    Raises:
        ParameterError: ``vectors`` not 2-D or not finite, a length mismatch with ``words``, a repeated word.
    """
    check_int("batch", batch, minimum=1)
    x = np.asarray(vectors)
    if x.ndim != 2:
        raise ParameterError(f"vectors has shape {x.shape}; expected (V, D): flatten each matrix, "
                             "M.reshape(V, -1)")
    if len(words) != x.shape[0]:
        raise ParameterError(f"{len(words)} words for {x.shape[0]} vectors; expected one word per row")
    x = x.astype(np.result_type(x.dtype, np.float32), copy=False)
    if not np.isfinite(x).all():
        raise ParameterError("vectors contains NaN or infinity")
    index: dict[str, int] = {}
    for i, word in enumerate(words):
        if index.setdefault(word, i) != i:
            raise ParameterError(f"word {word!r} appears twice in words (rows {index[word]} and {i})")
    norms = np.linalg.norm(x, axis=1)
    zero = norms == 0
    unit = x / np.where(zero, 1, norms)[:, None]  # zero rows stay zero: cosine 0 with everything

    known = [i for i, q in enumerate(analogies) if all(w in index for w in q.words)]
    ids = np.array([[index[w] for w in analogies[i].words] for i in known], dtype=np.int64).reshape(-1, 4)
    best = np.empty(len(ids), dtype=np.int64)
    for start in range(0, len(ids), batch):
        chunk = ids[start:start + batch]
        # cos(x, b) - cos(x, a) + cos(x, c) for unit x, a, b, c (a zero x scores 0, then is excluded)
        scores = (unit[chunk[:, 1]] - unit[chunk[:, 0]] + unit[chunk[:, 2]]) @ unit.T
        scores[:, zero] = -np.inf
        rows = np.arange(len(chunk))
        scores[rows[:, None], chunk[:, :3]] = -np.inf  # a, b and c are not candidates
        top = scores.argmax(axis=1)  # the first maximum: the lowest index
        top[scores[rows, top] == -np.inf] = -1
        best[start:start + len(chunk)] = top
    predictions: list[str | None] = [None] * len(analogies)
    for i, top in zip(known, best.tolist()):
        predictions[i] = words[top] if top >= 0 else ""
    return AnalogyResult(tuple(analogies), tuple(predictions))
