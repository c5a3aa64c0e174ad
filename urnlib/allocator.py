"""Keep freed memory in the process while training: glibc's allocator tuned so that a tensor of a training
step reuses the pages the last step freed instead of asking the kernel for fresh ones.

A training step allocates and frees the same large tensors over and over (the logits of a batch, the saved
activations of a recurrence, their gradients). glibc hands every block above its *mmap threshold* (128 KiB at
first, raised to the largest block freed so far but never above 32 MiB) to the kernel when it is freed, and
returns the top of its heap to the kernel whenever more than twice that lies free there. Each such block comes
back as fresh pages, and the first write to each page is a page fault (the kernel maps and zeroes 4 KiB): on
the primer's language models about 110,000 faults a training step (batch 32).
``benchmarks/allocator_speed.py`` measures what keeping the memory saves (the Performance page shows its run).

:func:`keep_freed_memory` raises the mmap threshold to 1 GiB and the heap's trim threshold to 2 GiB, and pads
each growth of the heap by 64 MiB (``mallopt``), once per process; :func:`urnlib.train.fit` calls it. It
changes where memory comes from, never a number that is computed. The cost: a process keeps the peak of its
heap until it exits instead of returning freed memory to the system, the peak a training process reaches at
every step anyway. It does nothing where the C library is not glibc (macOS, musl) and when the environment
sets ``URNLIB_KEEP_FREED_MEMORY=0``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["keep_freed_memory", "SETTINGS", "ENV"]

#: mallopt parameters of glibc's malloc.h and the values set: M_MMAP_THRESHOLD (-3), M_TRIM_THRESHOLD (-1),
#: M_TOP_PAD (-2)
SETTINGS = {"M_MMAP_THRESHOLD": (-3, 1 << 30), "M_TRIM_THRESHOLD": (-1, (1 << 31) - 1),
            "M_TOP_PAD": (-2, 64 << 20)}
#: the environment variable that turns it off ("0")
ENV = "URNLIB_KEEP_FREED_MEMORY"

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's allocator to keep freed memory (module docstring), once per process. True when it is
    set (now or before); False where it cannot be (not glibc) or is turned off
    (``URNLIB_KEEP_FREED_MEMORY=0``)."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get(ENV, "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # not glibc: mallopt's parameters mean other things
        return False
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _applied = all(mallopt(param, value) == 1 for param, value in SETTINGS.values())
    return _applied
