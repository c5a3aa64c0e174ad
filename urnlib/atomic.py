"""Writing a file so that a reader never sees half of it: the one atomic write of the library.

The content goes to a temporary name beside the target, unique to the writing process and thread, and is
moved into place with :func:`os.replace` (atomic on POSIX within one file system). An interruption leaves
the old file (or none) and no temporary file behind. The store's records and weights, the training loop's
checkpoints and the checkpoints a Dask client copies from its workers are written this way.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

__all__ = ["atomic_write", "atomic_write_text", "atomic_write_bytes", "tmp_name"]


def tmp_name(path: Path) -> Path:
    """A temporary name beside ``path`` that no other process or thread uses: ``.<name>.<pid>.<hex>.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def atomic_write(path: str | os.PathLike, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` to write the content to a temporary file, then move it onto ``path``.

    Args:
        path: the target; its folder is created when missing.
        write: writes the whole content to the path it is given (e.g. ``lambda tmp: torch.save(x, tmp)``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """:func:`atomic_write` of a text (UTF-8)."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_bytes(path: str | os.PathLike, blob: bytes) -> None:
    """:func:`atomic_write` of bytes."""
    atomic_write(path, lambda tmp: tmp.write_bytes(blob))
