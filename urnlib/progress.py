"""Progress bars for long loops (tqdm), quiet in CI.

* ``CI`` or ``URNLIB_QUIET`` set: no bar.
* ``URNLIB_PROGRESS=terminal`` (set by ``python -m urnlib.cli notebooks``): a text bar on the terminal
  that started the run (the kernel's inherited stderr), so ``make reproduce`` shows training progress
  while the executed notebook, and hence the book, stays free of progress output.
* otherwise ``tqdm.auto``: a widget in Jupyter, text in a terminal.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["progress"]


def progress(iterable, *, desc: str, total: int | None = None, initial: int = 0, **options):
    """Wrap ``iterable`` in a progress bar according to the environment (see module docstring)."""
    disable = bool(os.environ.get("CI")) or bool(os.environ.get("URNLIB_QUIET"))
    if os.environ.get("URNLIB_PROGRESS") == "terminal":
        from tqdm.std import tqdm

        return tqdm(iterable, desc=desc, total=total, initial=initial, disable=disable, file=sys.__stderr__,
                    leave=False, **options)
    with warnings.catch_warnings():  # "IProgress not found" when ipywidgets is absent: fall back quietly
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return tqdm(iterable, desc=desc, total=total, initial=initial, disable=disable, leave=False, **options)
