"""Progress bars for long loops (tqdm), quiet in CI.

* ``CI`` or ``URNLIB_QUIET`` set: no bar.
* ``URNLIB_PROGRESS=terminal`` (set by ``python -m urnlib.cli notebooks``): a text bar on the terminal
  that started the run (the kernel's inherited stderr), so ``make reproduce`` shows training progress
  while the executed notebook, and hence the book, stays free of progress output.
* otherwise ``tqdm.auto``: a widget in Jupyter, text in a terminal.

:class:`RunsBar` is the one bar over a plan's runs (:mod:`urnlib.runner`): done, running and failed
runs, the ETA, and the epoch each running run is at; :func:`note` prints a line (a cluster's dashboard
address, a failed run) to the same place as the bars, even where the bars are off.
"""

from __future__ import annotations

import os
import sys
import warnings
from contextvars import ContextVar

__all__ = ["progress", "note", "RunsBar", "RUNS_LABEL"]


def _stream():
    return sys.__stderr__ if os.environ.get("URNLIB_PROGRESS") == "terminal" else sys.stderr


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


def note(text: str) -> None:
    """Print ``text`` where the progress bars go (the terminal under ``URNLIB_PROGRESS=terminal``, else
    stderr), whether or not bars are shown."""
    stream = _stream()
    if stream is not None:
        print(text, file=stream, flush=True)


#: the label of the :class:`RunsBar` of the plans run in this thread (``experiments.orchestrate.run_chapters``
#: sets it to each chapter's name, so that their bars, shown together, say whose they are)
RUNS_LABEL: ContextVar[str] = ContextVar("urnlib_runs_label", default="runs")


class RunsBar:
    """One bar over the ``total`` runs of a plan that are trained: its count is the runs finished (stored
    or failed), its ETA tqdm's, its postfix ``running N, failed N`` and ``name epoch/epochs`` of each
    running run (as the backend reports them)."""

    def __init__(self, total: int, desc: str | None = None):
        self.desc = desc or RUNS_LABEL.get()
        self.bar = progress(None, desc=self.desc, total=total, unit="run")
        self.running: dict[str, str] = {}
        self.failed = 0

    def _show(self) -> None:
        text = f"running {len(self.running)}, failed {self.failed}"
        epochs = [f"{name} {at}" for name, at in self.running.items() if at]
        self.bar.set_postfix_str(text + (" | " + ", ".join(epochs) if epochs else ""), refresh=True)

    def started(self, name: str) -> None:
        self.running.setdefault(name, "")
        self._show()

    def epoch(self, name: str, epoch: int, epochs: int | None = None) -> None:
        """``name`` has finished ``epoch`` (1-based) of ``epochs``."""
        self.running[name] = f"{epoch}/{epochs}" if epochs else str(epoch)
        self._show()

    def finished(self, name: str, *, failed: bool = False) -> None:
        self.running.pop(name, None)
        self.failed += bool(failed)
        self.bar.update(1)
        self._show()

    def note(self, text: str) -> None:
        """:func:`note` ``text`` above the bar (the bar is cleared and drawn again below it)."""
        stream = _stream()
        if stream is not None:
            self.bar.write(text, file=stream)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> RunsBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
