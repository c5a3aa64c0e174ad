"""Linzen, Dupoux & Goldberg's (2016) number-prediction data in their simplified form (``rnn_agr_simple``),
as shipped in ``notebooks/data/linzen-agreement``: the distribution paper 000 sec. 4 evaluates on.

One example per line, ``LABEL<TAB>PREAMBLE``: LABEL is the number of the verb that follows, ``VBZ``
(singular) or ``VBP`` (plural); PREAMBLE is the sentence up to that verb, lower-cased, space-separated,
with the words outside the 10,000 most frequent replaced by their POS tag (``NN``, ``NNS``, ``VBG``, ...).
The shipped files (:data:`SPLITS`): ``numpred.val`` (the authors' validation split, all attractor counts
mixed) and ``numpred.test.N`` (their test split, the sentences with N = 1..5 attractors: intervening
nouns of the other number). Their training split is not shipped (see the folder's README).

:func:`load_numpred` reads a split from the shipped folder after checking the file's size and SHA-256
against the folder's ``manifest.json`` (:mod:`urnlib.corpora.shipped`); :func:`read_numpred` reads any
file in the format. A malformed line is a :class:`NumpredFormatError` naming the file and the line (no tab
or too many fields, an unknown label, an empty preamble); a shipped file that differs from its manifest
is a :class:`~urnlib.errors.DataError` saying how to restore it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from urnlib.corpora import shipped
from urnlib.corpora.files import decode
from urnlib.params import DataError, check_choice

__all__ = ["DATASET", "LABELS", "SPLITS", "NumpredExample", "NumpredFormatError", "numpred_dir",
           "attractors_from_name", "read_numpred", "load_numpred", "load_numpred_tests",
           "check_numpred_files"]

#: the shipped data set (folder ``notebooks/data/linzen-agreement``)
DATASET = "linzen-agreement"
#: the labels: the verb's POS tag -> plural?
LABELS = {"VBZ": False, "VBP": True}
#: split name -> shipped file; ``test.N`` holds the test sentences with N attractors
SPLITS = {"val": "numpred.val", **{f"test.{n}": f"numpred.test.{n}" for n in range(1, 6)}}
_TEST_NAME = re.compile(r"numpred\.test\.(\d+)")


class NumpredFormatError(DataError):
    """A line of a number-prediction file is malformed; the message names the file and line (a
    :class:`~urnlib.errors.DataError`)."""


class NumpredExample(NamedTuple):
    """One line ``LABEL<TAB>PREAMBLE``.

    Attributes:
        label: ``"VBZ"`` (singular verb) or ``"VBP"`` (plural verb).
        words: the preamble's tokens (words, and POS tags for words outside the 10,000 most frequent).
        n_attractors: the number of attractors, from the file name (``numpred.test.N``: N); ``None`` for
            a file that mixes them (``numpred.val``).
    """

    label: str
    words: tuple[str, ...]
    n_attractors: int | None

    @property
    def plural(self) -> bool:
        """Whether the verb is plural (``VBP``)."""
        return LABELS[self.label]


def numpred_dir() -> Path:
    """The shipped folder, ``<repo>/notebooks/data/linzen-agreement``."""
    return shipped.dataset_dir(DATASET)


def attractors_from_name(path: str | os.PathLike) -> int | None:
    """The attractor count a file's name gives: ``numpred.test.3`` -> 3; any other name -> None."""
    found = _TEST_NAME.fullmatch(Path(path).name)
    return int(found.group(1)) if found else None


def _read(path: Path) -> list[NumpredExample]:
    """Every line of a number-prediction file, checked (the format reader of :func:`read_numpred`)."""
    text = decode(path.read_bytes(), path, "Copy the file again from an intact source (UTF-8 text).")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    n_attractors = attractors_from_name(path)
    out = []
    for n, line in enumerate(lines, start=1):
        where = f"{path}, line {n}"
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 2:
            found = "an empty line" if not line.strip() else (
                "no tab" if len(fields) == 1 else f"{len(fields)} fields")
            raise NumpredFormatError(f"{where}: expected 2 tab-separated fields LABEL<TAB>PREAMBLE, found "
                                     f"{found}: {line[:120]!r}")
        label, preamble = fields
        if label not in LABELS:
            raise NumpredFormatError(f"{where}: unknown label {label!r}: it must be VBZ (singular verb) or "
                                     f"VBP (plural verb)")
        words = tuple(preamble.split())
        if not words:
            raise NumpredFormatError(f"{where}: empty preamble (the sentence up to the verb) after the label "
                                     f"{label}")
        out.append(NumpredExample(label, words, n_attractors))
    return out


def read_numpred(path: str | os.PathLike, *, verify: bool | None = None) -> list[NumpredExample]:
    """Read a file of ``LABEL<TAB>PREAMBLE`` lines.

    Args:
        path: the file; its name gives the attractor count (:func:`attractors_from_name`).
        verify: check the file against the shipped manifest first (size, SHA-256; by its name, e.g.
            ``numpred.test.2``); default: only for the shipped files themselves.

    Raises:
        DataError: the file is missing, or (``verify``) differs from the shipped one; the message names
            the first line found wrong and says how to restore it.
        NumpredFormatError: a malformed line, naming the file and the line.
    """
    path = Path(path)
    if verify is None:
        verify = shipped.is_shipped(DATASET, path)
    if verify:
        shipped.verify(DATASET, path, parse=_read)
    elif not path.is_file():
        raise DataError(f"{path}: no such file. Linzen et al.'s number-prediction files ship in "
                        f"{numpred_dir()} ({', '.join(SPLITS.values())}): load_numpred(split) reads them.")
    return _read(path)


def load_numpred(split: str, root: str | os.PathLike | None = None, *,
                 verify: bool | None = None) -> list[NumpredExample]:
    """One split of the shipped number-prediction data (paper 000 sec. 4; Linzen et al. 2016).

    Args:
        split: ``"val"`` or ``"test.1"`` ... ``"test.5"`` (:data:`SPLITS`).
        root: a folder holding the files; default: the shipped copy :func:`numpred_dir`.
        verify: check the file against the manifest first (default: for the shipped folder; ``True``
            also checks a copy elsewhere).

    Returns:
        The examples in file order; ``n_attractors`` is N for ``test.N`` and None for ``val``.
    """
    check_choice("split", split, SPLITS)
    folder = numpred_dir() if root is None else Path(root)
    return read_numpred(folder / SPLITS[split], verify=verify)


def load_numpred_tests(root: str | os.PathLike | None = None, *,
                       verify: bool | None = None) -> dict[int, list[NumpredExample]]:
    """The five test files by attractor count: ``{1: [...], ..., 5: [...]}``."""
    return {n: load_numpred(f"test.{n}", root, verify=verify) for n in range(1, 6)}


def check_numpred_files() -> dict[str, int]:
    """Check every shipped file against its manifest (size, SHA-256), for a chapter's first cell.

    Returns:
        ``{split: number of examples}``.

    Raises:
        DataError: the first file that is missing or differs (its first wrong line named where the
            format check finds one: a :class:`NumpredFormatError`), and how to restore it.
    """
    counts = {}
    for split, name in SPLITS.items():
        shipped.verify(DATASET, numpred_dir() / name, parse=_read)
        counts[split] = shipped.manifest(DATASET)["files"][name]["lines"]
    return counts
