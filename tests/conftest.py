"""Shared fixtures.

``tiny_book``: the whole book built once per test session at tiny scale (what `make book SCALE=tiny` does,
in a temporary copy of book/), shared by tests/test_book.py (the build and the pages' content) and
tests/test_browser.py (the pages in a browser). It takes minutes, so only slow tests use it.

To iterate on those tests without rebuilding, point ``URNLIB_TINY_BOOK`` at a book folder built before, e.g.

    cp -r book /tmp/tinybook && rm -rf /tmp/tinybook/_build /tmp/tinybook/chapters/*.ipynb
    python -m urnlib.cli notebooks --scale tiny --out /tmp/tinybook/chapters
    python -m urnlib.cli book --book-dir /tmp/tinybook
    URNLIB_TINY_BOOK=/tmp/tinybook pytest tests/test_book.py tests/test_browser.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from urnlib.cli import BOOK


@dataclass(frozen=True)
class Step:
    """One `python -m urnlib.cli ...` call of the build (``returncode`` None: reused, not run)."""

    args: tuple[str, ...]
    returncode: int | None
    output: str

    def failure(self) -> str | None:
        """Why the step failed (its command and the tail of its output), or None when it did not."""
        if self.returncode in (0, None):
            return None
        return f"urnlib.cli {' '.join(self.args)} exited with {self.returncode}:\n{self.output[-8000:]}"


@dataclass(frozen=True)
class TinyBook:
    root: Path  # the book's source folder (a copy of book/ with the executed chapters)
    steps: tuple[Step, ...]

    @property
    def html(self) -> Path:
        return self.root / "_build" / "html"

    @property
    def claims_dir(self) -> Path:
        return self.root / "chapters" / "_claims"

    def failures(self) -> list[str]:
        return [f for f in (s.failure() for s in self.steps) if f]


def _cli(*args: str) -> Step:
    proc = subprocess.run([sys.executable, "-m", "urnlib.cli", *args], capture_output=True, text=True)
    return Step(args, proc.returncode, proc.stdout + proc.stderr)


@pytest.fixture(scope="session")
def tiny_book(tmp_path_factory) -> TinyBook:
    """The book built at tiny scale, once per session: every chapter notebook run by papermill, then Jupyter
    Book with warnings as errors. Both steps run even when one fails (a chapter that fails still leaves its
    partly run notebook, and the book can be looked at); the tests report ``failures()``."""
    reuse = os.environ.get("URNLIB_TINY_BOOK")
    if reuse:
        root = Path(reuse).resolve()
        if not (root / "_build" / "html" / "index.html").exists():
            pytest.fail(f"URNLIB_TINY_BOOK={reuse}: no built book there "
                        f"({root}/_build/html/index.html is missing)")
        return TinyBook(root, (Step(("(reused)", str(root)), None, ""),))
    root = tmp_path_factory.mktemp("tiny") / "book"
    shutil.copytree(BOOK, root, ignore=shutil.ignore_patterns("_build", "*.ipynb", "_claims"))
    notebooks = _cli("notebooks", "--scale", "tiny", "--out", str(root / "chapters"))
    build = _cli("book", "--book-dir", str(root))
    return TinyBook(root, (notebooks, build))
