"""A compiled CPU kernel for :func:`urnlib.models.scan.matrix_scan` (built on first use; optional).

The grouped layout of :mod:`urnlib.models.scan` spends most of its time outside the arithmetic: per
step a row gather, a mask, padded batched products (blocks of equal height) and their backward twins;
per batch the layout and a few large copies. This kernel does the same products without any of that:

* per step, the sequences are counting-sorted by symbol, and each symbol's sequences are taken six
  at a time (a *tile*): the six states are read (and masked) straight from the previous step's
  output, multiplied by the symbol's matrix with the accumulators held in vector registers, and
  written straight to the output ``(B, T, n)``; tiles run in parallel (``at::parallel_for``);
* the backward pass runs the same tiles with the transposed matrices for the state gradients, kept
  in the order of the symbol read (all steps together), next to the masked inputs; each symbol's
  matrix gradient ``dM[v] = X_v^T G_v`` is then one pass over its rows, 32 at a time from the
  first-level cache (one task per symbol: deterministic, whatever the number of threads);
* ``chunk_products`` multiplies chains of matrices for :func:`urnlib.models.scan.prefix_states`
  with the same tiles, each chain in cache;
* no padding rows; scratch memory is kept from call to call (a multi-megabyte buffer allocated
  afresh for every batch has its pages fault in again every time).

Built with ``torch.utils.cpp_extension.load_inline`` (a C++ compiler and ninja; about 45 s once per
machine, cached by PyTorch under ``TORCH_EXTENSIONS_DIR``; ``-march=native``, so the cache entry is
named after the CPU's instruction sets). ``URNLIB_SCAN_KERNEL_MARCH`` names another target (e.g.
``x86-64-v3``: the AVX2 code an AVX2 machine builds, run on an AVX-512 machine); the vectors and tiles
follow the target's registers (AVX-512: 16 floats a vector; otherwise 8), and every target computes the
same numbers (each output is the same chain of fused multiply-adds; ``tests/test_scan_kernel_targets.py``
builds both and compares them bitwise). If the build fails, or ``URNLIB_SCAN_KERNEL=0``,
:func:`kernel` returns ``None`` and the scan uses the grouped layout; tests compare both with the plain
loop (values and gradients in float64, and ``gradcheck``).

PyTorch guards a build folder with a ``lock`` file that it creates and deletes itself: a process killed
while it holds it (Ctrl-C during the first build, a worker or a session ended while loading) leaves the
file behind, and every later load then waits for it forever. So every load here first takes an
``flock`` on ``urnlib.flock`` in the same folder, which the operating system releases when its holder
dies; whoever holds it knows that no other process of ours is inside PyTorch's build, so a ``lock`` file
found then was left by a dead one and is removed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path


#: the kernel's C++ source, beside this module (package data)
SOURCE_FILE = Path(__file__).with_name("scan_kernel.cpp")

_STATE: dict = {}
_LOCK = threading.Lock()


def kernel():
    """The compiled module (``scan_forward``, ``scan_backward``, ``chunk_products``), or ``None`` where
    it cannot be built or ``URNLIB_SCAN_KERNEL=0``. Built once per process (cached on disk by PyTorch)."""
    if os.environ.get("URNLIB_SCAN_KERNEL", "1") == "0":
        return None
    with _LOCK:
        if "module" not in _STATE:
            _STATE["module"] = _build()
    return _STATE["module"]


def march() -> str:
    """The target the kernel is built for: ``URNLIB_SCAN_KERNEL_MARCH``, else ``native``."""
    return os.environ.get("URNLIB_SCAN_KERNEL_MARCH", "") or "native"


def instruction_sets() -> list[str]:
    """This CPU's vector instruction sets (``avx2``, ``fma``, ``avx512f`` ...), from ``/proc/cpuinfo``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return sorted(f for f in line.split(":", 1)[1].split()
                              if f.startswith(("avx", "fma", "sse4", "neon", "asimd", "sve")))
    except OSError:
        pass
    return []


def _cpu_tag(target: str = "native") -> str:
    """A short digest of this CPU's instruction sets and the build's target: a ``-march=native`` build
    must not be handed from one machine to another through a shared cache, nor one target's to another."""
    flags = platform.machine() + ("" if target == "native" else f"-march={target}")
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags += line
                break
    except OSError:
        pass
    return hashlib.sha1(flags.encode()).hexdigest()[:8]


def build_directory(name: str) -> Path:
    """Where PyTorch builds and caches the extension ``name`` (its own rule, so that an existing cache is
    used: ``TORCH_EXTENSIONS_DIR``, else ``~/.cache/torch_extensions/py<version>_<cpu or cuda>``)."""
    from torch.utils import cpp_extension

    rule = getattr(cpp_extension, "_get_build_directory", None)
    if rule is not None:
        return Path(rule(name, False))
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or cpp_extension.get_default_build_root()
    path = Path(root) / name
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def build_lock(directory: Path):
    """Hold an ``flock`` on ``directory/urnlib.flock`` and clear a ``lock`` file a dead process left
    (see the module docstring) while the block builds or loads the extension in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "urnlib.flock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            stale = directory / "lock"
            if stale.exists():
                warnings.warn(f"urnlib: removed {stale}, left by a process that died while it built or "
                              "loaded the scan kernel", RuntimeWarning, stacklevel=3)
                stale.unlink(missing_ok=True)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build():
    try:
        from torch.utils.cpp_extension import load_inline

        target = march()
        name = f"urnlib_scan_kernel_{_cpu_tag(target)}"
        directory = build_directory(name)
        with build_lock(directory):
            return load_inline(
                name, cpp_sources=[SOURCE_FILE.read_text()],
                functions=["scan_forward", "scan_backward", "chunk_products", "vector_bytes"],
                build_directory=str(directory), extra_cflags=["-O3", f"-march={target}", "-fopenmp"],
                extra_ldflags=["-fopenmp"], verbose=False)
    except Exception as exc:  # no compiler, no ninja, no headers: the grouped layout does the work
        warnings.warn(f"urnlib: the compiled scan kernel is unavailable ({type(exc).__name__}); "
                      "using the grouped layout", RuntimeWarning, stacklevel=3)
        return None

