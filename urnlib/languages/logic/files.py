"""Reading and writing entailment files in Evans et al.'s format.

One example per line ``A,B,E,H1,H2,H3`` (see :mod:`urnlib.languages.logic.examples`), formulas fully
parenthesised (:func:`~urnlib.languages.logic.to_string`, style ``"evans"``). The released files
(github.com/google-deepmind/logical-entailment-dataset) are not shipped: :func:`load_original_split`
reads them when a copy is at hand.
"""

from __future__ import annotations

from pathlib import Path

from urnlib.languages.logic.examples import Entailment, make_example
from urnlib.languages.logic.formulas import FormulaSyntaxError, parse, to_string
from urnlib.languages.logic.semantics import entails
from urnlib.languages.logic.splits import SPLIT_NAMES
from urnlib.params import ParameterError, check_choice

__all__ = ["EntailmentFileError", "ORIGINAL_FILES", "load_entailment_file", "write_entailment_file",
           "load_original_split"]


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

