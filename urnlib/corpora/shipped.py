"""Real data files shipped with the project (``notebooks/data/<dataset>/``), pinned by size, SHA-256 and
line count, and the check that a file is the shipped one, whole.

Each folder holds the files, their README and licence, and ``manifest.json`` (written once by
``python -m urnlib.corpora.shipped``; do not edit): per file its size in bytes, SHA-256, number of lines
(a last line without a newline counts) and the first 16 hex digits of the SHA-256 of each block of
:data:`BLOCK` lines, so that a changed byte is located to its block. :func:`verify` compares a file with
its manifest entry; the readers (:mod:`urnlib.languages.logic.files`, :mod:`urnlib.corpora.numpred`) call
it before reading. A missing, truncated or modified file is a :class:`~urnlib.errors.DataError` that
names the file, the first line that is wrong (where the reader's format check or the block hashes find
one) and how to restore it (``git checkout -- notebooks/data/<dataset>/<file>``). The check reads each
file once per process (while its size and time stamp stay as they are): about 20 ms for all 12 files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from urnlib.errors import DataError
from urnlib.params import check_choice

__all__ = ["DATA_DIR", "DATASETS", "BLOCK", "dataset_dir", "manifest", "shipped_names", "is_shipped",
           "restore_hint", "file_entry", "verify", "manifest_json", "not_shipped"]

REPO = Path(__file__).resolve().parents[2]
#: where the shipped data sets live (one folder each, with README.md, licence and manifest.json)
DATA_DIR = REPO / "notebooks" / "data"
#: the shipped data sets (folder names under :data:`DATA_DIR`) and the files each manifest pins
DATASETS = {
    "logical-entailment": ("validate.txt", "test_easy.txt", "test_hard.txt", "test_big.txt",
                           "test_massive.txt", "test_exam.txt"),
    "linzen-agreement": ("numpred.val", "numpred.test.1", "numpred.test.2", "numpred.test.3",
                         "numpred.test.4", "numpred.test.5"),
}
#: where each data set comes from (written into its manifest; the README says more)
SOURCES = {
    "logical-entailment": "github.com/google-deepmind/logical-entailment-dataset, commit 159e768 "
                          "(2018-04-16), data/ (Evans et al. 2018); Apache-2.0",
    "linzen-agreement": "Linzen, Dupoux & Goldberg (2016) rnn_agr_simple, as mirrored in "
                        "github.com/viking-sudo-rm/StackNN, commit 10c5e13 (2018-07-01), "
                        "data/linzen/rnn_agr_simple; "
                        "Wikipedia text, CC BY-SA 3.0",
}
#: lines per hashed block in the manifest (a changed byte is located to one block)
BLOCK = 1000
MANIFEST = "manifest.json"


def dataset_dir(dataset: str) -> Path:
    """The shipped folder of ``dataset`` (a key of :data:`DATASETS`), e.g.
    ``notebooks/data/linzen-agreement``."""
    return DATA_DIR / check_choice("dataset", dataset, DATASETS)


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def restore_hint(dataset: str, name: str, path: str | os.PathLike | None = None) -> str:
    """What to do about a damaged or missing file ``name`` of ``dataset`` (read at ``path``)."""
    shipped = dataset_dir(dataset) / name
    fix = f"`git checkout -- {_rel(shipped)}` in the repository root"
    if path is not None and Path(path).resolve() != shipped.resolve():
        return (f"Copy it again from {_rel(shipped)} (the shipped file; restore that one with {fix}), "
                f"or read it with verify=False if it is another version on purpose.")
    return f"Restore the shipped file with {fix}."


@lru_cache(maxsize=None)
def manifest(dataset: str) -> dict:
    """The manifest of a shipped data set: ``{"files": {name: {"bytes", "sha256", "lines", "blocks"}}, ...}``.

    Raises:
        DataError: ``manifest.json`` is missing or not valid JSON (the message says how to restore it).
    """
    path = dataset_dir(dataset) / MANIFEST
    fix = f"Restore it with `git checkout -- {_rel(path.parent)}` in the repository root."
    if not path.is_file():
        raise DataError(f"{path} is missing: the manifest pins the files of {dataset}. {fix}")
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: not a valid manifest ({err}). {fix}") from None
    if not isinstance(found, dict) or not isinstance(found.get("files"), dict):
        raise DataError(f"{path}: no \"files\" table. {fix}")
    return found


def shipped_names(dataset: str) -> tuple[str, ...]:
    """The file names the manifest of ``dataset`` pins, in :data:`DATASETS` order."""
    return DATASETS[dataset]


def is_shipped(dataset: str, path: str | os.PathLike) -> bool:
    """Whether ``path`` is one of the shipped files of ``dataset`` (in its shipped folder, by name)."""
    path = Path(path)
    return path.name in DATASETS[dataset] and path.parent.resolve() == dataset_dir(dataset).resolve()


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` with their newlines (split at ``\\n`` only, as the line count counts)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _blocks(data: bytes) -> list[str]:
    lines = _lines(data)
    return [hashlib.sha256(b"".join(lines[i:i + BLOCK])).hexdigest()[:16]
            for i in range(0, len(lines), BLOCK)]


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def file_entry(data: bytes) -> dict:
    """The manifest entry of a file's bytes: size, SHA-256, line count and block hashes (one string)."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "lines": _count_lines(data),
            "blocks": " ".join(_blocks(data))}


def verify(dataset: str, path: str | os.PathLike, *, name: str | None = None,
           parse: Callable[[Path], object] | None = None) -> bool:
    """Check that the file at ``path`` is the shipped file ``name`` (default: ``path``'s name) of ``dataset``.

    Args:
        dataset: a key of :data:`DATASETS`.
        path: the file to check (the shipped one, or a copy of it elsewhere).
        name: the shipped file it must equal (default ``Path(path).name``).
        parse: the format reader, called on a file that differs so that the error names the first
            malformed line (its :class:`~urnlib.errors.DataError` is raised with the restore hint added).

    Returns:
        True (the file matches; checked once per process while its size and time stamp are unchanged).

    Raises:
        DataError: the file is missing, or differs from the manifest (size, line count or SHA-256); the
            message names the file, the first line found wrong and says how to restore it.
    """
    path = Path(path)
    name = path.name if name is None else name
    check_choice("name", name, DATASETS[check_choice("dataset", dataset, DATASETS)])
    if not path.is_file():
        raise DataError(f"{path} is missing: {name} of {dataset} ships with urnlib in "
                        f"{_rel(dataset_dir(dataset))}. {restore_hint(dataset, name, path)}")
    stat = path.stat()
    key = (dataset, name, str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _CHECKED:
        _check(dataset, name, path, parse)
        _CHECKED.add(key)
    return True


_CHECKED: set[tuple] = set()  # (dataset, name, file, size, mtime) of the files found intact


def _check(dataset: str, name: str, path: Path, parse) -> None:
    fix = restore_hint(dataset, name, path)
    entry = manifest(dataset)["files"].get(name)
    if entry is None:
        raise DataError(f"{dataset_dir(dataset) / MANIFEST} has no entry for {name}. "
                        f"{restore_hint(dataset, MANIFEST)}")
    data = path.read_bytes()
    if len(data) == entry["bytes"] and hashlib.sha256(data).hexdigest() == entry["sha256"]:
        return
    lines = _count_lines(data)
    differs = (f"it has {len(data)} bytes and {lines} lines, the shipped {name} {entry['bytes']} bytes and "
               f"{entry['lines']} lines" if len(data) != entry["bytes"] else "same size, other SHA-256")
    if parse is not None:
        try:
            parse(path)
        except DataError as err:  # the format reader names the first malformed line
            raise type(err)(f"{err}\nThe file differs from the shipped {name} ({differs}). {fix}") from None
    where = _first_difference(data, entry, _reference(dataset, name, path, entry))
    cut = " (truncated)" if len(data) < entry["bytes"] and lines <= entry["lines"] else ""
    raise DataError(f"{path}, {where}: differs from the shipped {name} of {dataset}{cut} ({differs}). {fix}")


def _reference(dataset: str, name: str, path: Path, entry: dict) -> bytes | None:
    """The bytes of the shipped file when ``path`` is a copy and the shipped file is intact, else None."""
    shipped = dataset_dir(dataset) / name
    if path.resolve() == shipped.resolve() or not shipped.is_file():
        return None
    data = shipped.read_bytes()
    return data if hashlib.sha256(data).hexdigest() == entry["sha256"] else None


def _first_difference(data: bytes, entry: dict, reference: bytes | None = None) -> str:
    """``"line n"`` (exact, against an intact ``reference``) or ``"lines a-b"`` (the first block whose hash
    differs from the manifest's): where ``data`` first differs from the shipped file."""
    lines = _count_lines(data)
    if reference is not None:
        for n, (found, expected) in enumerate(zip(_lines(data), _lines(reference)), start=1):
            if found != expected:
                return f"line {n}"
    else:
        for i, (found, expected) in enumerate(zip(_blocks(data), entry["blocks"].split())):
            if found != expected:
                first, last = i * BLOCK + 1, min((i + 1) * BLOCK, lines, entry["lines"])
                return f"line {first}" if first >= last else f"lines {first}-{last}"
    # all common lines are equal: the first line missing, or the first line after the shipped end
    return f"line {min(lines, entry['lines']) + 1}"


def manifest_json(dataset: str, folder: str | os.PathLike | None = None) -> str:
    """The content of ``manifest.json`` for ``dataset``, computed from the files in ``folder``
    (default: the shipped folder)."""
    folder = dataset_dir(dataset) if folder is None else Path(folder)
    files = {name: file_entry((folder / name).read_bytes()) for name in DATASETS[dataset]}
    meta = {"dataset": dataset, "source": SOURCES[dataset], "block_lines": BLOCK,
            "columns": {"bytes": "size", "sha256": "of the whole file",
                        "lines": "newline characters, plus one for a last line without a newline",
                        "blocks": "first 16 hex digits of the SHA-256 of each block of block_lines lines"},
            "files": files}
    return json.dumps(meta, indent=1) + "\n"


def not_shipped(*needs: str) -> str:
    """The evidence of a claim that is not run for want of its data (cause ``data``): the data sets it
    ``needs``, none of them among :data:`DATASETS` (compared by name, case and spaces aside), in words. A
    need that is shipped is a :class:`ValueError`: that claim should be run."""
    def slug(name: str) -> str:
        return name.lower().replace(" ", "-")

    shipped = {slug(d) for d in DATASETS}
    here = [need for need in needs if slug(need) in shipped]
    if here:
        raise ValueError(f"{', '.join(here)} {'is' if len(here) == 1 else 'are'} shipped under {DATA_DIR}: "
                         "decide the claim on it instead of marking it not run")
    return (f"{', '.join(needs)}: not among the data sets shipped here ({', '.join(DATASETS)}, under "
            "notebooks/data), and the book builds offline")


if __name__ == "__main__":
    for key in DATASETS:
        out = dataset_dir(key) / MANIFEST
        out.write_text(manifest_json(key), encoding="utf-8")
        print(f"wrote {out}")

