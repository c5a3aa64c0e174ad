"""On a CUDA GPU (skipped without one): every model kind gives the CPU's values and gradients in float64, and
every chapter's tiny plan trains with ``device="cuda"``.

tests/test_device.py checks device placement on the CPU build with a simulated device; what only a GPU shows -
cuDNN's fused RNN calls (the paper LSTM's weights as one contiguous chunk), CUDA's kernels and their numerics,
a whole plan through the runner on ``cuda`` - is checked here.
"""

from __future__ import annotations

import copy
import json
import math
import warnings

import pytest
import torch

from tests.helpers import two_call_gradients
from urnlib.errors import DataError, ParameterError
from urnlib.chapters import registry as chapters
from urnlib.models import graphs, scan
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

    if hasattr(model, "nll"):  # one length per sequence, from T - 4 to T
        B, T = tokens.shape
        lengths = torch.arange(B, device=tokens.device) % 5 + T - 4
        return model.nll(tokens, lengths).sum(), None
    out = model(tokens)
    return lm_loss(model, tokens, targets)[0] + out.double().square().mean(), out


def _without_dropout(spec: str):
    """The model of ``spec`` with ``dropout=0`` where its kind takes a rate."""
    try:
        return build_model(spec, V, dropout=0.0)
    except ParameterError:  # a kind without dropout
        return build_model(spec, V)


@pytest.mark.parametrize("spec", [s for specs in SPECS.values() for s in specs])
def test_cuda_equals_the_cpu_in_float64(spec):
    torch.manual_seed(0)
    # training mode (cuDNN's RNN has no backward pass in evaluation mode, nor has torch's nn.LSTM on a GPU),
    # no dropout: the same function on both devices
    cpu = _without_dropout(spec).double().train()
    gpu = copy.deepcopy(cpu).cuda()
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, V, (6, 11), generator=g)
    targets = torch.randint(0, V, (6, 11), generator=g)
    targets[:, :2] = -100
    loss, out = _objective(cpu, tokens, targets)
    loss.backward()
    with warnings.catch_warnings():
        # cuDNN warns when the weights are "not part of single contiguous chunk of memory"
        warnings.filterwarnings("error", message=".*contiguous chunk.*", category=UserWarning)
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


#: the kinds whose recurrence is replayed from CUDA graphs in training (urnlib.models.graphs), at small sizes
GRAPHED = ["urn 4", "urn 6 k2", "urn 12 k2", "urn 50", "arbitrary 4", "gru 4", "gru 4 e3", "tpru 8 N4",
           "tpru 8 N4 s2"]


def _training_step(model, tokens, targets):
    """Loss and the parameters' gradients of one step (no optimiser)."""
    model.zero_grad(set_to_none=True)
    loss, _ = _objective(model, tokens, targets)
    loss.backward()
    return loss.detach().clone(), [None if p.grad is None else p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("spec", GRAPHED)
def test_graph_replays_equal_the_eager_step_in_float64(spec):
    """Training mode without dropout: the step replayed from CUDA graphs (captured on the first call, replayed
    on the next two, with new inputs each time) gives the eager step's loss and gradients."""
    torch.manual_seed(0)
    model = build_model(spec, V, dropout=0.0).double().cuda().train()
    graphs.clear()
    before = graphs.captures()
    for i in range(3):
        g = torch.Generator().manual_seed(i)
        tokens = torch.randint(0, V, (6, 11), generator=g).cuda()
        targets = torch.randint(0, V, (6, 11), generator=g).cuda()
        with graphs.enabled(False):
            loss, grads = _training_step(model, tokens, targets)
        loss_g, grads_g = _training_step(model, tokens, targets)
        torch.testing.assert_close(loss_g, loss, rtol=1e-12, atol=1e-12)
        for a, b in zip(grads_g, grads):
            assert (a is None) == (b is None)
            if a is not None:
                torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    assert graphs.captures() > before, f"{spec}: no graph was captured (the graphed path was not taken)"


def test_a_second_call_before_the_backward_pass_runs_eagerly():
    """Two calls of one graphed shape before one backward pass (an encoder reading two inputs): the second
    must not overwrite the first's saved state; the gradients equal the eager ones."""
    torch.manual_seed(0)
    model = build_model("gru 4 e3", V, dropout=0.0).double().cuda().train()
    a, b = torch.randint(0, V, (2, 5, 9), device="cuda")
    with graphs.enabled(False):
        eager = two_call_gradients(model, a, b)
    for _ in range(2):
        for x, y in zip(two_call_gradients(model, a, b), eager):
            torch.testing.assert_close(x, y, rtol=1e-10, atol=1e-12)


def test_the_urn_takes_the_dense_scan_on_a_gpu():
    """A small vocabulary on the GPU: every symbol's matrix, no host synchronisation, the dense scan."""
    tokens = torch.randint(0, V, (4, 6), device="cuda")
    assert scan.dense_applies(V, 50, tokens, torch.float32)
    assert not scan.dense_applies(V, 50, tokens.cpu(), torch.float32)


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
    module = chapters.get(chapter).experiment
    try:
        config = module.Config.load("tiny", device="cuda")
    except DataError as err:  # e.g. a corpus not installed on a GPU machine
        pytest.skip(f"{chapter}: its data is not on this machine: {err}")
    except ParameterError as err:  # spaCy or gensim missing there
        if "not installed" in str(err):
            pytest.skip(f"{chapter}: its data needs what this machine lacks: {err}")
        raise
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
