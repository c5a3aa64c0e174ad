"""Reading and writing entailment files in Evans et al.'s format, and the released files shipped with urnlib.

One example per line ``A,B,E,H1,H2,H3`` (see :mod:`urnlib.languages.logic.examples`), formulas fully
parenthesised (:func:`~urnlib.languages.logic.to_string`, style ``"evans"``). The released validation and
test files (github.com/google-deepmind/logical-entailment-dataset, commit 159e768, ``data/``; Apache-2.0)
ship in ``notebooks/data/logical-entailment`` with their README, licence and ``manifest.json``
(:mod:`urnlib.corpora.shipped`): :func:`load_original_split` reads them from there, after checking each
file's size and SHA-256. Their ``train.txt`` was not released with them: training data come from
:func:`~urnlib.languages.logic.generate_dataset`. A malformed line is an :class:`EntailmentFileError`
naming the file and line (wrong number of fields, a proposition that does not parse, E or H1-H3 not
0/1); a shipped file that differs from its manifest is a :class:`~urnlib.errors.DataError` saying how
to restore it.
"""

from __future__ import annotations

from pathlib import Path

from urnlib.corpora import shipped
from urnlib.corpora.files import decode
from urnlib.languages.logic.examples import Entailment, make_example
from urnlib.languages.logic.formulas import FormulaSyntaxError, parse, to_string
from urnlib.languages.logic.semantics import entails
from urnlib.languages.logic.splits import SPLIT_NAMES
from urnlib.params import DataError, ParameterError, check_choice

__all__ = ["EntailmentFileError", "ORIGINAL_FILES", "DATASET", "original_dir", "load_entailment_file",
           "write_entailment_file", "load_original_split", "check_original_files"]


class EntailmentFileError(DataError):
    """A line of an entailment file is malformed; the message names the file and line (a
    :class:`~urnlib.errors.DataError`)."""


#: the shipped data set (folder ``notebooks/data/logical-entailment``, see :mod:`urnlib.corpora.shipped`)
DATASET = "logical-entailment"

# Names of the released files (github.com/google-deepmind/logical-entailment-dataset, data/); the first
# name of each split is the one shipped (train.txt is not: it was not in the released snapshot).
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
    "Evans et al.'s training file (train.txt) is not shipped with urnlib (it is not in the released "
    "snapshot) and cannot be downloaded offline: generate training data by their procedure with "
    "urnlib.languages.logic.generate_dataset(seed=0) (and write_entailment_file to save it). The released "
    "validation and test files ship in notebooks/data/logical-entailment: load_original_split(split=...) "
    "reads them."
)
_FIELDS = ("E", "H1", "H2", "H3")
_MEANING = {"E": "the label: 1 if A entails B", "H1": "heuristic H1: length(A) >= length(B)",
            "H2": "heuristic H2: vars(B) within vars(A)", "H3": "heuristic H3: literals of B within A's"}


def original_dir() -> Path:
    """The folder of the shipped released files, ``<repo>/notebooks/data/logical-entailment``."""
    return shipped.dataset_dir(DATASET)


def _read(path: Path, check_labels: bool = False) -> list[Entailment]:
    """The examples of an entailment file, every line checked (the format reader of
    :func:`load_entailment_file`)."""
    text = decode(path.read_bytes(), path, "Write or copy the file again (it must be UTF-8 text in Evans et "
                  "al.'s format).")
    out = []
    for n, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
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
        for what, field in (("premise A", fields[0]), ("hypothesis B", fields[1])):
            try:
                formulas.append(parse(field, line=n, column_offset=col))
            except FormulaSyntaxError as err:
                pointer = " " * (err.column - 1) + "^"
                message = (f"{where}: {what}: line {n}, column {err.column}: {err.reason} (a proposition "
                           f"that does not parse)\n  {line}\n  {pointer}")
                raise EntailmentFileError(message) from None
            col += len(field) + 1
        ints = []
        for col, (name, field) in enumerate(zip(_FIELDS, fields[2:]), start=3):
            if field.strip() not in ("0", "1"):
                raise EntailmentFileError(f"{where}: {name} must be 0 or 1, found {field!r} (field {col}, "
                                          f"{_MEANING[name]})")
            ints.append(int(field))
        a, b = formulas
        if check_labels and int(entails(a, b)) != ints[0]:
            raise EntailmentFileError(f"{where}: E={ints[0]} but the truth table says {int(entails(a, b))}")
        out.append(Entailment(fields[0].strip(), fields[1].strip(), *ints))
    return out


def _verify(path: Path, verify: bool | None) -> None:
    if verify is None:
        verify = shipped.is_shipped(DATASET, path)
    if verify:
        shipped.verify(DATASET, path, parse=_read)


def load_entailment_file(path, *, check_labels: bool = False, verify: bool | None = None) -> list[Entailment]:
    """Read a file of ``A,B,E,H1,H2,H3`` lines (Evans et al.'s format; blank lines skipped).

    Args:
        path: the file.
        check_labels: also verify each E by truth table (slow for the massive split).
        verify: check the file against the shipped manifest first (size, SHA-256; by its name, e.g.
            ``validate.txt``); default: only for the shipped files themselves.

    Raises:
        FileNotFoundError: the file is missing (the message says how to generate data instead).
        EntailmentFileError: a bad line, naming the file, the line number and the problem.
        DataError: (``verify``) the file differs from the shipped one; the message names the first line
            found wrong and says how to restore it.
    """
    path = Path(path)
    if not path.is_file() and not (verify is not False and shipped.is_shipped(DATASET, path)):
        raise FileNotFoundError(f"{path}: no such file. {_NOT_SHIPPED}")
    _verify(path, verify)
    return _read(path, check_labels)


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


def load_original_split(root=None, split: str | None = None, *, check_labels: bool = False,
                        verify: bool | None = None) -> list[Entailment]:
    """Load one split of the released dataset (Evans et al. 2018; paper 002 Table 2's test sets).

    Args:
        root: a folder holding the released files (see :data:`ORIGINAL_FILES`); default: the shipped copy
            :func:`original_dir`.
        split: ``"valid"``, ``"easy"``, ``"hard"``, ``"big"``, ``"massive"`` or ``"exam"`` (``"train"``
            only from a folder of your own: it is not shipped).
        check_labels: also verify each E by truth table (slow for the massive split).
        verify: check the file against the shipped manifest first (default: for the shipped folder only;
            ``True`` also checks a copy elsewhere, by name).

    Raises:
        FileNotFoundError: none of the split's file names is in ``root`` (or ``train`` from the shipped
            folder).
        DataError: a shipped file is missing, truncated or modified (the message names the file and the
            first line found wrong, and says ``git checkout -- notebooks/data/logical-entailment/<file>``).
        EntailmentFileError: a malformed line (file and line named).
    """
    check_choice("split", split, SPLIT_NAMES)
    if root is None:
        name = ORIGINAL_FILES[split][0]
        if name not in shipped.DATASETS[DATASET]:
            raise FileNotFoundError(f"{original_dir() / name}: no such file. {_NOT_SHIPPED}")
        return load_entailment_file(original_dir() / name, check_labels=check_labels, verify=True)
    root = Path(root)
    for name in ORIGINAL_FILES[split]:
        if (root / name).is_file():
            pinned = name in shipped.DATASETS[DATASET]
            return load_entailment_file(root / name, check_labels=check_labels,
                                        verify=(verify if pinned else False))
    raise FileNotFoundError(f"{root}: none of {list(ORIGINAL_FILES[split])} found. {_NOT_SHIPPED}")


def check_original_files() -> dict[str, int]:
    """Check every shipped released file against its manifest (size, SHA-256), for a chapter's first cell.

    Returns:
        ``{split: number of examples}`` for valid, easy, hard, big, massive and exam.

    Raises:
        DataError: the first file that is missing or differs, its first wrong line named where the format
            check finds one (an :class:`EntailmentFileError`), and how to restore it.
    """
    counts = {}
    for split, names in ORIGINAL_FILES.items():
        if names[0] in shipped.DATASETS[DATASET]:
            path = original_dir() / names[0]
            shipped.verify(DATASET, path, parse=_read)
            counts[split] = shipped.manifest(DATASET)["files"][names[0]]["lines"]
    return counts
