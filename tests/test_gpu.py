"""On a CUDA GPU (skipped without one): every model kind gives the CPU's values and gradients in float64, and
every chapter's tiny plan trains with ``device="cuda"``.

tests/test_device.py checks device placement on the CPU build with a simulated device; what only a GPU shows -
cuDNN's fused RNN calls (the paper LSTM's weights as one contiguous chunk), CUDA's kernels and their numerics,
a whole plan through the runner on ``cuda`` - is checked here.
"""

from __future__ import annotations

import copy
import importlib
import json
import math
import warnings

import pytest
import torch

from urnlib.experiments import chapters
from urnlib.models.registry import KINDS, build_model
from urnlib.testing import SAMPLE_SPECS

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

V = 7
#: small specs of every registered kind, and the URN and the paper LSTM at a chapter's size
SPECS = {kind: [*specs, *{"urn": ["urn 50"], "lstm": ["lstm 16 e12"]}.get(kind, [])]
         for kind, specs in SAMPLE_SPECS.items()}
#: the chapters that train (the chapter registry's)
CHAPTERS = chapters.names(trains=True)


def test_every_kind_has_a_spec_here():
    assert set(SPECS) == set(KINDS)


def _objective(model, tokens, targets):
    from urnlib.losses import lm_loss

    if hasattr(model, "nll"):
        lengths = torch.arange(tokens.shape[1] - 4, tokens.shape[1] + 1, device=tokens.device)
        return model.nll(tokens, lengths).sum(), None
    out = model(tokens)
    return lm_loss(model, tokens, targets)[0] + out.double().square().mean(), out


@pytest.mark.parametrize("spec", [s for specs in SPECS.values() for s in specs])
def test_cuda_equals_the_cpu_in_float64(spec):
    torch.manual_seed(0)
    cpu = build_model(spec, V).double().eval()
    gpu = copy.deepcopy(cpu).cuda()
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, V, (6, 11), generator=g)
    targets = torch.randint(0, V, (6, 11), generator=g)
    targets[:, :2] = -100
    loss, out = _objective(cpu, tokens, targets)
    loss.backward()
    with warnings.catch_warnings():
        # cuDNN warns when the weights are "not part of single contiguous chunk of memory"
        warnings.simplefilter("error", UserWarning)
        loss_g, out_g = _objective(gpu, tokens.cuda(), targets.cuda())
        loss_g.backward()
    torch.testing.assert_close(loss_g.cpu(), loss, rtol=1e-10, atol=1e-12)
    if out is not None:
        torch.testing.assert_close(out_g.cpu(), out, rtol=1e-10, atol=1e-12)
    for (name, p), p_g in zip(cpu.named_parameters(), gpu.parameters()):
        assert (p.grad is None) == (p_g.grad is None), name
        if p.grad is not None:
            assert p_g.grad.is_cuda, name
            torch.testing.assert_close(p_g.grad.cpu(), p.grad, rtol=1e-9, atol=1e-12, msg=name)


@pytest.mark.parametrize("spec", ["lstm 16 e12", "lstm 4 e3", "srn 4 e3"])
def test_fused_rnn_trains_on_cuda_with_dropout_in_float32(spec):
    """The paper LSTM's fused call through cuDNN (issue: 'view size is not compatible'), training mode."""
    torch.manual_seed(0)
    model = build_model(spec, V, dropout=0.1).cuda().train()
    tokens = torch.randint(0, V, (8, 21), device="cuda")
    out = model(tokens)
    out.square().mean().backward()
    assert out.is_cuda and all(p.grad is not None and p.grad.is_cuda for p in model.parameters())


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_tiny_plan_trains_on_cuda(chapter, tmp_path):
    """The chapter's tiny preset, every run of its plan trained on the GPU into a fresh store."""
    module = importlib.import_module(f"urnlib.experiments.{chapter}")
    config = module.Config.load("tiny", device="cuda")
    runs = module.run(config, store=tmp_path, mode="train")
    records = list(tmp_path.rglob("record.json"))
    assert runs and records, f"{chapter}: nothing stored under {tmp_path}"
    for record in records:
        machine = json.loads(record.read_text()).get("machine", {})
        assert machine.get("device") == "cuda", f"{record}: trained on {machine.get('device')!r}, not cuda"
    assert not any(math.isnan(v) for v in _numbers(runs)), f"{chapter}: a NaN in the final metrics"


def _numbers(runs):
    """Every float of every run's final metrics (runs as a chapter's ``run`` returns them)."""
    found = []

    def walk(x):
        if isinstance(x, float):
            found.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif hasattr(x, "final"):
            walk(x.final)
        elif hasattr(x, "values") and callable(x.values):
            walk(list(x.values()))

    walk(runs)
    return found
