"""The scan kernel's build folder survives a process killed inside PyTorch's build (models.scan_kernel).

PyTorch's own guard is a ``lock`` file that only its creator deletes; one left by a killed process made
every later load wait forever (a CI run hung on it for 90 minutes). urnlib holds an ``flock`` around the
build, which dies with its holder, and clears such a file under it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
import warnings

import pytest

from urnlib.models import scan_kernel

HOLDER = """
import sys, time
from pathlib import Path
from urnlib.models.scan_kernel import build_lock
directory = Path(sys.argv[1])
with build_lock(directory):
    (directory / "lock").touch()        # PyTorch's own lock file, as during a build
    print("held", flush=True)
    time.sleep(120)
"""


def test_a_lock_file_left_by_a_dead_process_is_removed(tmp_path):
    (tmp_path / "lock").touch()
    with pytest.warns(RuntimeWarning, match="died while it built"):
        with scan_kernel.build_lock(tmp_path):
            assert not (tmp_path / "lock").exists()


def test_no_warning_and_nothing_removed_without_a_lock_file(tmp_path, recwarn):
    (tmp_path / "main.cpp").write_text("// kept")
    with scan_kernel.build_lock(tmp_path):
        pass
    assert (tmp_path / "main.cpp").read_text() == "// kept"
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_build_waits_for_a_live_holder_and_goes_on_when_it_is_killed(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        entered, said = threading.Event(), []

        def build():
            with warnings.catch_warnings(record=True) as caught:  # the main thread only waits meanwhile
                warnings.simplefilter("always")
                with scan_kernel.build_lock(tmp_path):
                    entered.set()
            said.extend(str(w.message) for w in caught)

        waiter = threading.Thread(target=build, daemon=True)
        waiter.start()
        assert not entered.wait(1.0), "entered the build folder while another process was building in it"
        os.kill(holder.pid, signal.SIGKILL)  # dies holding both locks: its lock file stays behind
        holder.wait(10)
        assert entered.wait(30), "the flock of a killed process was not released"
        waiter.join(10)
        assert not (tmp_path / "lock").exists()
        assert any("died while it built" in text for text in said)
    finally:
        if holder.poll() is None:
            holder.kill()


def test_the_kernel_loads_past_a_lock_file_left_in_its_real_build_folder():
    """The failure as it happened: a stale ``lock`` in the cached build folder, then a fresh process
    that loads the kernel (seconds when it is cached; a build of about a minute when it is not)."""
    if os.environ.get("URNLIB_SCAN_KERNEL", "1") == "0":
        pytest.skip("URNLIB_SCAN_KERNEL=0")
    if not (shutil.which("ninja") and shutil.which("c++")):
        pytest.skip("no C++ compiler or no ninja")
    directory = scan_kernel.build_directory(f"urnlib_scan_kernel_{scan_kernel._cpu_tag()}")
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "urnlib.flock", "a") as handle:  # no process of ours is inside a build
        fcntl.flock(handle, fcntl.LOCK_EX)
        (directory / "lock").touch()
        fcntl.flock(handle, fcntl.LOCK_UN)
    code = "from urnlib.models.scan_kernel import kernel; assert kernel() is not None; print('loaded')"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading the kernel still waited on {directory / 'lock'} after 300 s")
    assert done.returncode == 0 and "loaded" in done.stdout, done.stderr[-3000:]
    assert "died while it built" in done.stderr
    assert not (directory / "lock").exists()
