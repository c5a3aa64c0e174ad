"""urnlib.allocator: glibc keeps a freed block of a training step in the process's heap, where the next
step reuses it, instead of returning it to the kernel; off by the environment; nothing where the C library is
not glibc. (Checked on glibc's own account, ``mallinfo2``: page-fault counts also move with the kernel's
reclaim.)"""

import subprocess
import sys
import textwrap

import pytest

from urnlib import allocator

#: allocate and write a 64 MiB tensor, then free it; print whether the setting is applied, the MiB glibc had
#: mapped apart (mmap) while it was held, and the MiB free in its heap after it was freed
_ONE_BLOCK = textwrap.dedent("""
    import ctypes, sys, torch
    from urnlib.allocator import keep_freed_memory
    applied = keep_freed_memory() if sys.argv[1] == "keep" else False
    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                   "fsmblks", "uordblks", "fordblks", "keepcost")]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    x = torch.empty(16 << 20)
    x.fill_(1.0)
    mapped = libc.mallinfo2().hblkhd >> 20
    del x
    print(applied, mapped, libc.mallinfo2().fordblks >> 20)
""")


def _one_block(mode: str) -> tuple[bool, int, int]:
    out = subprocess.run([sys.executable, "-c", _ONE_BLOCK, mode], capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0] == "True", int(out[1]), int(out[2])


def test_a_freed_block_stays_in_the_heap_for_the_next_step():
    applied, mapped, free = _one_block("keep")
    if not applied:
        pytest.skip("not glibc: keep_freed_memory does nothing here")
    _, mapped_default, free_default = _one_block("default")
    # by default a block above 32 MiB is mapped apart and unmapped when freed: the next step faults in 16,384
    # fresh pages; kept, it comes from the heap and stays there
    assert mapped_default >= 64 and free_default < 64
    assert mapped < 64 and free >= 64


def test_the_environment_turns_it_off(monkeypatch):
    monkeypatch.setattr(allocator, "_applied", None)
    monkeypatch.setenv(allocator.ENV, "0")
    assert allocator.keep_freed_memory() is False
    monkeypatch.setattr(allocator, "_applied", None)
    monkeypatch.delenv(allocator.ENV)
    first = allocator.keep_freed_memory()
    assert allocator.keep_freed_memory() is first  # once per process
