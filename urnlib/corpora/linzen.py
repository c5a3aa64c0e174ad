"""Subject-verb agreement examples in the TSV format of Linzen, Dupoux & Goldberg (2016).

Paper 000 sec. 4 trains on Linzen et al.'s ``agr_50_mostcommon_10K.tsv.gz`` (Wikipedia sentences with one
selected present-tense subject-verb pair). That file cannot be downloaded from here, but a user who has it
passes its path; the offline builder (:mod:`urnlib.corpora.agreement_builder`) and the synthetic grammar
(:mod:`urnlib.languages.agreement_grammar`) write and read the same format, so every data source goes
through :func:`read_tsv`.

The format (reference-facts, "Agreement task"): a header row, then one example per line, tab-separated::

    sentence  orig_sentence  pos_sentence  subj  verb  subj_pos  has_rel  has_nsubj  verb_pos
    subj_index  verb_index  n_intervening  last_intervening  n_diff_intervening  distance  max_depth
    all_nouns  nouns_up_to_verb

``sentence`` and ``pos_sentence`` are space-separated tokens and tags of equal length; indices are
1-based; ``verb_pos`` is ``VBZ`` (singular) or ``VBP`` (plural); the number of *attractors* is
``n_diff_intervening`` (intervening nouns whose number differs from the subject's).
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from urnlib.corpora.files import DECOMPRESSION_ERRORS, damaged_archive, decode
from urnlib.params import DataError, ParameterError

__all__ = ["COLUMNS", "REQUIRED", "AgreementExample", "AgreementFormatError", "read_tsv", "write_tsv",
           "iter_tsv", "split_sentences", "attractor_histogram", "source_names", "OBTAIN_HINT",
           "NAMED_SOURCES"]

#: the columns of Linzen et al.'s files, in their order
COLUMNS = ("sentence", "orig_sentence", "pos_sentence", "subj", "verb", "subj_pos", "has_rel", "has_nsubj",
           "verb_pos", "subj_index", "verb_index", "n_intervening", "last_intervening", "n_diff_intervening",
           "distance", "max_depth", "all_nouns", "nouns_up_to_verb")
#: the columns this package reads; the others are kept when present and written as ``-`` when unknown
REQUIRED = ("sentence", "pos_sentence", "verb_pos", "subj_index", "verb_index", "n_diff_intervening")
NUMBERS = {"VBZ": False, "VBP": True}  # verb_pos -> plural?
#: data sources that are not files (the agreement grammar, the offline build, Linzen et al.'s released files)
NAMED_SOURCES = ("synthetic", "offline", "linzen")
_GZIP_MAGIC = b"\x1f\x8b"

OBTAIN_HINT = (
    "The data source is 'synthetic' (the agreement grammar), 'offline' (built here from the Brown corpus "
    "and the State of the Union addresses: `python -m urnlib.cli agreement-data`), 'linzen' (Linzen et "
    "al.'s released number-prediction files, shipped in notebooks/data/linzen-agreement), or the path of a "
    "TSV "
    "file in the format of Linzen et al. (2016), e.g. agr_50_mostcommon_10K.tsv.gz from their "
    "rnn_agreement data (not downloadable from this machine; copy it here and pass its path)."
)


class AgreementFormatError(DataError):
    """A TSV file that is missing, damaged or not in the Linzen format; the message names the file, line and
    column and says what to do (a :class:`~urnlib.errors.DataError`)."""

#: what to do about a file that cannot be decoded or decompressed
DAMAGED_HINT = ("A Linzen TSV is UTF-8 text, plain or gzip-compressed (name ending in .gz): copy the file "
                "again from an intact source, or rebuild it (`python -m urnlib.cli agreement-data` for the "
                "offline data; a cached build under .cache/agreement can be deleted and is built again).")


@dataclass(frozen=True)
class AgreementExample:
    """One sentence with its selected subject and present-tense verb.

    Attributes:
        words: the sentence's tokens (column ``sentence``).
        pos: one POS tag per token (``pos_sentence``), used for words outside the vocabulary.
        subj_index, verb_index: 0-based positions of the subject head noun and the verb.
        verb_pos: ``"VBZ"`` or ``"VBP"``.
        n_attractors: intervening nouns of the other number (``n_diff_intervening``).
        n_intervening: all nouns between subject and verb (``-1`` when the file lacks the column).
        extra: the other columns of the row as read (strings), so a file round-trips.
    """

    words: tuple[str, ...]
    pos: tuple[str, ...]
    subj_index: int
    verb_index: int
    verb_pos: str
    n_attractors: int
    n_intervening: int = -1
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def plural(self) -> bool:
        """The label: is the verb plural (VBP)?"""
        return NUMBERS[self.verb_pos]

    @property
    def prefix(self) -> tuple[str, ...]:
        """What the classifier reads: the words before the verb (paper 000 sec. 4)."""
        return self.words[: self.verb_index]

    def row(self) -> dict[str, str]:
        """The example as a TSV row (1-based indices)."""
        values = {c: "-" for c in COLUMNS}
        values.update(self.extra)
        values.update({
            "sentence": " ".join(self.words), "pos_sentence": " ".join(self.pos),
            "verb_pos": self.verb_pos, "subj_index": str(self.subj_index + 1),
            "verb_index": str(self.verb_index + 1), "n_diff_intervening": str(self.n_attractors),
            "n_intervening": str(self.n_intervening), "subj": self.words[self.subj_index],
            "verb": self.words[self.verb_index], "subj_pos": self.pos[self.subj_index],
            "distance": str(self.verb_index - self.subj_index),
        })
        if values["orig_sentence"] == "-":
            values["orig_sentence"] = values["sentence"]
        return values


def _open_binary(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def _line(raw: bytes, path: Path, number: int) -> str:
    """Line ``number`` (bytes up to a newline) as text without its line end."""
    if number == 1 and path.suffix != ".gz" and raw.startswith(_GZIP_MAGIC):
        raise AgreementFormatError(f"{path}, line 1: the file is gzip-compressed but its name does not end "
                                   f"in .gz; rename it to {path.name}.gz (or decompress it).")
    try:
        text = decode(raw, path, DAMAGED_HINT, first_line=number)
        return text.rstrip("\n").rstrip("\r")
    except DataError as err:
        raise AgreementFormatError(str(err)) from None


def _int(value: str, where: str, column: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise AgreementFormatError(f"{where}, column {column!r}: {value!r} is not an integer") from None


def _parse(fields: list[str], header: list[str], where: str) -> AgreementExample:
    if len(fields) != len(header):
        raise AgreementFormatError(
            f"{where}: {len(fields)} tab-separated fields, the header has {len(header)} "
            f"({', '.join(header)}); a Linzen TSV has one example per line, fields separated by tabs"
        )
    row = dict(zip(header, fields))
    words, pos = row["sentence"].split(" "), row["pos_sentence"].split(" ")
    if len(words) != len(pos):
        raise AgreementFormatError(
            f"{where}, column 'pos_sentence': {len(pos)} tags for the {len(words)} words of 'sentence'")
    subj, verb = _int(row["subj_index"], where, "subj_index"), _int(row["verb_index"], where, "verb_index")
    for column, value in (("subj_index", subj), ("verb_index", verb)):
        if not 1 <= value <= len(words):
            raise AgreementFormatError(
                f"{where}, column {column!r}: {value} is outside the sentence's {len(words)} words (1-based)")
    if not subj < verb:
        raise AgreementFormatError(f"{where}: subj_index {subj} is not before verb_index {verb}")
    if row["verb_pos"] not in NUMBERS:
        raise AgreementFormatError(
            f"{where}, column 'verb_pos': {row['verb_pos']!r}; expected VBZ (singular) or VBP (plural)")
    attractors = _int(row["n_diff_intervening"], where, "n_diff_intervening")
    if attractors < 0:
        raise AgreementFormatError(f"{where}, column 'n_diff_intervening': {attractors} < 0")
    intervening = (_int(row["n_intervening"], where, "n_intervening") if row.get("n_intervening", "-") != "-"
                   else -1)
    extra = {c: v for c, v in row.items() if c not in REQUIRED and c != "n_intervening"}
    return AgreementExample(tuple(words), tuple(pos), subj - 1, verb - 1, row["verb_pos"], attractors,
                            intervening, extra)


def iter_tsv(path: str | os.PathLike) -> Iterator[AgreementExample]:
    """Examples of a Linzen-format TSV (plain or ``.gz``), one at a time.

    Raises:
        AgreementFormatError: a missing file, a header without a required column, a malformed line, bytes
            that are not UTF-8, or gzip data that is damaged or cut short (the message names the file, the
            line number and the column, and says what to do). It is a :class:`~urnlib.errors.DataError`.
    """
    path = Path(path)
    if not path.is_file():
        raise AgreementFormatError(f"agreement data file {str(path)!r} does not exist. {OBTAIN_HINT}")
    number = 0
    try:
        with _open_binary(path) as f:
            header = _line(f.readline(), path, 1).split("\t")
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise AgreementFormatError(
                    f"{path}, line 1 (the header): no column {', '.join(map(repr, missing))}; a Linzen TSV "
                    f"starts with a header naming its columns ({', '.join(COLUMNS)}). {OBTAIN_HINT}")
            number = 1
            for number, raw in enumerate(f, start=2):
                line = _line(raw, path, number)
                if line:
                    cut = "" if raw.endswith(b"\n") else " (the last line, without a newline: cut short?)"
                    yield _parse(line.split("\t"), header, f"{path}, line {number}{cut}")
    except DECOMPRESSION_ERRORS as err:
        raise AgreementFormatError(damaged_archive(path, err, DAMAGED_HINT, line=number)) from None


def read_tsv(path: str | os.PathLike, limit: int | None = None) -> list[AgreementExample]:
    """All examples of a Linzen-format TSV (the first ``limit`` when given); see :func:`iter_tsv`."""
    out = []
    for example in iter_tsv(path):
        if limit is not None and len(out) >= limit:
            break
        out.append(example)
    if not out:
        raise AgreementFormatError(f"{path} has a header but no examples. {OBTAIN_HINT}")
    return out


def write_tsv(examples: Iterable[AgreementExample], path: str | os.PathLike) -> int:
    """Write examples in the Linzen format (gzip when the name ends in ``.gz``); return how many.

    Written to a temporary name first and renamed, so an interrupted build never leaves half a file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    count = 0
    with open(tmp, "wb") as raw:
        # gzip with mtime 0 and no name in its header: the same examples always give the same bytes
        sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if path.suffix == ".gz" else raw
        with io.TextIOWrapper(sink, encoding="utf-8", newline="\n") as f:
            f.write("\t".join(COLUMNS) + "\n")
            for example in examples:
                row = example.row()
                for c in COLUMNS:
                    if "\t" in row[c] or "\n" in row[c]:
                        raise ParameterError(f"example {count}: column {c!r} contains a tab or newline: "
                                             f"{row[c]!r}")
                f.write("\t".join(row[c] for c in COLUMNS) + "\n")
                count += 1
    os.replace(tmp, path)
    return count


def split_sentences(examples: list, fraction: float, seed) -> tuple[list, list]:
    """``(rest, held)``: ``fraction`` of the distinct sentences (``example.words``; at least one) held out by
    a shuffle from ``numpy.random.default_rng(seed)``, every example of a sentence on its side (two verbs of
    one sentence never fall on both). The split of real text into training and test sentences, and of the
    training side into training and validation sentences, in :mod:`urnlib.tasks.agreement`."""
    import math

    import numpy as np

    sentences = list(dict.fromkeys(ex.words for ex in examples))
    order = np.random.default_rng(seed).permutation(len(sentences))
    held = {sentences[i] for i in order[: max(1, math.ceil(fraction * len(sentences)))]}
    return [ex for ex in examples if ex.words not in held], [ex for ex in examples if ex.words in held]


def attractor_histogram(examples: Iterable[AgreementExample]) -> dict[int, int]:
    """Number of examples per attractor count, ascending."""
    hist: dict[int, int] = {}
    for example in examples:
        hist[example.n_attractors] = hist.get(example.n_attractors, 0) + 1
    return dict(sorted(hist.items()))


def source_names(sources: Iterable[str | os.PathLike]) -> list[str]:
    """The short names of agreement data sources, as figures and the run store use them: ``"synthetic"``
    and ``"offline"`` as they are, a file by its name up to the first dot
    (``data/agr_50_mostcommon_10K.tsv.gz`` -> ``agr_50_mostcommon_10K``).

    Raises:
        ParameterError: two sources with the same name (naming both paths), or a file name that starts
            with a dot.
    """
    names: dict[str, str] = {}
    for source in map(os.fspath, sources):
        name = source if source in NAMED_SOURCES else Path(source).name.split(".")[0]
        if not name:
            raise ParameterError(f"data source {source!r}: the file name starts with a dot, so it gives no "
                                 f"name (a file is named by its file name up to the first dot); rename it")
        if name in names:
            what = (f"data source {source!r} is given twice" if names[name] == source else
                    f"data sources {names[name]!r} and {source!r} have the same name {name!r}")
            raise ParameterError(
                f"{what}: a file source is named by its file name up to the first dot, and figures and "
                f"stored runs are keyed by that name, so one source would replace the other. Give each "
                f"source once, and rename (or copy under another name) one of two files whose names agree up "
                f"to the dot.")
        names[name] = source
    return list(names)
