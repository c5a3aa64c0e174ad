"""Reading data files so that a bad byte or a damaged archive is an error naming the file and the line.

Every reader in :mod:`urnlib.corpora` decodes through these helpers: a :class:`~urnlib.errors.DataError`
replaces the bare ``UnicodeDecodeError``, ``zlib.error``, ``gzip.BadGzipFile`` or ``EOFError``, and its
message names the file, the line (where one is known) and what to do (the caller's ``remedy``). Good files
give exactly the text that ``open(path, encoding=...)`` gives.
"""

from __future__ import annotations

import gzip
import os
import zlib

from urnlib.params import DataError

__all__ = ["DECOMPRESSION_ERRORS", "decode", "read_text", "undecodable", "damaged_archive"]

#: what reading a damaged or truncated gzip file raises
DECOMPRESSION_ERRORS = (zlib.error, gzip.BadGzipFile, EOFError)


def undecodable(path: str | os.PathLike, err: UnicodeDecodeError, remedy: str, *, first_line: int = 1) -> str:
    """The message for a byte sequence that is not valid in the file's encoding.

    ``err.object`` is the text being decoded and starts at line ``first_line`` of the file.
    """
    data = err.object
    line = first_line + data.count(b"\n", 0, err.start)
    column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    bad = bytes(data[err.start:err.end])
    return (f"{path}, line {line}: invalid {err.encoding.upper()} {bad!r} at byte {column} of the line "
            f"({err.reason}); the file is damaged or not a text file. {remedy}")


def damaged_archive(path: str | os.PathLike, err: BaseException, remedy: str, *,
                    line: int | None = None) -> str:
    """The message for a gzip file that cannot be decompressed (corrupt or cut short)."""
    at = f" after line {line}" if line else " at its start"
    kind = type(err).__qualname__ if type(err).__module__ == "builtins" else (
        f"{type(err).__module__}.{type(err).__qualname__}")
    return f"{path}: the gzip data is damaged or cut short{at} ({kind}: {err}). {remedy}"


def decode(data: bytes, path: str | os.PathLike, remedy: str, encoding: str = "utf-8", *,
           first_line: int = 1) -> str:
    """``data.decode(encoding)``; a bad byte raises :class:`DataError` naming ``path`` and the line."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise DataError(undecodable(path, err, remedy, first_line=first_line)) from None


def read_text(path: str | os.PathLike, remedy: str, encoding: str = "utf-8") -> str:
    """The text of a file exactly as ``open(path, encoding=encoding).read()`` gives it (universal newlines).

    Raises:
        DataError: a byte sequence that is not valid in ``encoding`` (the message names file, line, remedy).
    """
    with open(path, "rb") as f:
        data = f.read()
    text = decode(data, path, remedy, encoding)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
