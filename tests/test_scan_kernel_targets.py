"""The scan kernel computes the same float32 numbers whatever instruction set it is built for.

A machine builds the kernel for its own CPU (``-march=native``): AVX-512 code on one that has it, AVX2 code
on one that does not, with vectors and tiles of other sizes. Stored runs must not depend on which: this test
builds the kernel for AVX2 (``x86-64-v3``) and for this CPU (``native``: AVX-512 code where the CPU has
it), each in its own process (``URNLIB_SCAN_KERNEL_MARCH``), trains the same run of the Dyck chapter's tiny
plan (a URN of 12 units, whose columns leave a tail after both vector widths), runs the kernel on random
inputs at sizes on both sides of the vector widths, and compares everything bitwise.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from urnlib.models.scan_kernel import instruction_sets

REPO = Path(__file__).resolve().parents[1]
SIZES = [3, 8, 12, 16, 20, 32, 50, 64, 100]

CHILD = r"""
import sys, torch
from urnlib.models.scan_kernel import kernel
from urnlib.chapters.dyck import experiment as dyck

K = kernel()
assert K is not None, "the kernel did not build"
out = {}
g = torch.Generator().manual_seed(0)
for n in SIZES:
    V, B, T = 12, 37, 9
    M = torch.randn(V, n, n, generator=g) / n**0.5
    h0 = torch.randn(n, generator=g)
    tok = torch.randint(0, V, (B, T), generator=g)
    mask = (torch.rand(B, n, generator=g) > 0.2).float() / 0.8
    H = K.scan_forward(M, h0, tok, mask)
    dH = torch.randn(B, T, n, generator=g)
    out[f"H {n}"], out[f"dM {n}"] = H, K.scan_backward(M, h0, tok, mask, H, dH)
    out[f"P {n}"] = K.chunk_products(M, torch.randint(0, V, (5, 4), generator=g))
spec = next(s for s in dyck.Config.tiny().plan() if s.params["model"]["kind"] == "urn")
out.update({"weights " + k: v for k, v in dyck.train_run(spec, None).weights.items()})
torch.save(out, sys.argv[1])
"""


TARGETS = ["x86-64-v3", "native"]  # AVX2 code, and this CPU's (AVX-512 code where it has AVX-512)


def _outputs(target: str, folder: Path) -> dict[str, torch.Tensor]:
    path = folder / f"{target}.pt"
    code = f"SIZES = {json.dumps(SIZES)}\n" + CHILD
    env = {**os.environ, "URNLIB_SCAN_KERNEL_MARCH": target, "URNLIB_SCAN_KERNEL": "1",
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return torch.load(path)


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("ninja") and shutil.which("c++")), reason="no C++ compiler or ninja")
@pytest.mark.skipif("avx2" not in instruction_sets(), reason="not an x86-64 CPU with AVX2")
def test_avx2_and_avx512_builds_give_identical_float32_results(tmp_path):
    first, second = (_outputs(target, tmp_path) for target in TARGETS)
    assert first.keys() == second.keys() and any(k.startswith("weights ") for k in first)
    assert all(first[k].dtype == torch.float32 for k in first if k.startswith(("H ", "dM ", "P ")))
    differ = [k for k in first if not torch.equal(first[k], second[k])]
    assert not differ, f"differ between {TARGETS}: {differ}"
