"""The errors urnlib raises: one class per kind of problem, each saying what is wrong and what to do.

Every error is an :class:`UrnlibError`, so a command line or a notebook runner can report any of them as
a clean message; the kinds are distinct, so that code catching one never swallows another (a caller that
checks a parameter does not catch a damaged corpus or a corrupt stored run)::

    UrnlibError
    ├── ParameterError (also a ValueError)   a parameter the experiment cannot run with
    ├── DataError (also a ValueError)        a data file or corpus missing, unreadable or damaged
    ├── RunError                             a stored run that cannot be used as it is
    │   ├── MissingRunError                  ... absent, and this mode does not train
    │   └── CorruptRunError                  ... unreadable, incomplete or failing its checksum
    ├── CheckpointError                      a training checkpoint that cannot be resumed from
    ├── DeviceError                          a device asked for that this machine does not have
    └── BackendError                         a Dask backend unavailable or misconfigured

Every message names the thing at fault (the parameter, the file and line, the run's folder, the
checkpoint, the device or the scheduler) and says what to pass or run instead. Readers of one format may
refine :class:`DataError` (e.g. :class:`urnlib.corpora.linzen.AgreementFormatError`).
"""

from __future__ import annotations

__all__ = ["UrnlibError", "ParameterError", "DataError", "RunError", "MissingRunError", "CorruptRunError",
           "CheckpointError", "DeviceError", "BackendError"]


class UrnlibError(Exception):
    """The root of every error urnlib raises on purpose (not its bugs)."""


class ParameterError(UrnlibError, ValueError):
    """A parameter has a value the experiment cannot run with.

    Raised by the checks of :mod:`urnlib.params` and every config's validation, before any work. The
    message starts with the parameter as the user wrote it (``units=7``, ``models[2]``) and says what is
    allowed, e.g. ``"units=7 must be even"``.
    """


class DataError(UrnlibError, ValueError):
    """A data file or corpus is missing, unreadable, truncated, modified or in the wrong format.

    Raised by the readers of :mod:`urnlib.corpora` and the data files of :mod:`urnlib.languages`. The
    message names the file (and the line, where there is one, as ``"<file>, line <n>: ..."``) and says what
    to do, e.g. run ``make data`` again.
    """


class RunError(UrnlibError):
    """A stored run cannot be used as it is (:mod:`urnlib.results`).

    The message names the run (its name or folder) and says how to rebuild it.
    """


class MissingRunError(RunError):
    """No stored run has these parameters and component versions, and this mode does not train.

    The message names the run and its key and gives the command that trains it.
    """


class CorruptRunError(RunError):
    """A stored run is unreadable, incomplete, or its content does not match its checksum or key.

    The message names the run's folder, what is wrong with it and the command that rebuilds it.
    """


class CheckpointError(UrnlibError):
    """A training checkpoint (a file, or the copy a Dask scheduler keeps) cannot be read to resume from.

    Raised by :func:`urnlib.train.checkpoint_from_bytes`. The message names the checkpoint, the reader's
    error, and says to delete it so that the run trains from its first epoch.
    """


class DeviceError(UrnlibError):
    """The device a run is asked to train on is not available on this machine.

    Raised by :func:`urnlib.cluster.resolve_device`. The message names the parameter and its value
    (``device='cuda'``), the machine, and the values that work here.
    """


class BackendError(UrnlibError):
    """The Dask backend cannot be reached or started as described.

    Raised by :mod:`urnlib.cluster` and :mod:`urnlib.cluster_runs`: no scheduler at an address, a cluster
    description that cannot be read or that dask-jobqueue refuses, dask-jobqueue not installed, workers
    with other versions than this process. The message names the ``scheduler`` (or the worker) and says
    what to start, install or fix.
    """
