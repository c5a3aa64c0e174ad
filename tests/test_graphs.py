"""urnlib.models.graphs on the CPU: the bookkeeping around CUDA graphs, with the graphs emulated.

What this catches: :func:`~urnlib.models.graphs.replayed` copying new inputs into the captured ones, handing
out
outputs and gradients that do not alias its buffers, keying captures by shape and setting, running a second
call eagerly while the first awaits its backward pass, and freeing a capture whose step was dropped. What it
cannot catch: anything of CUDA itself (a kernel that syncs with the host inside a capture, a stream or memory
pool error) - ``tests/test_gpu.py`` replays real graphs where a GPU is present.

The emulation keeps a capture's semantics where they matter: one set of static inputs, outputs and gradients
per capture, overwritten by every replay.
"""

from __future__ import annotations

import pytest
import torch

from urnlib.models import graphs, scan
from tests.helpers import two_call_gradients
from urnlib.models.registry import build_model

V = 7


class Emulated(graphs._Graphs):
    """A capture whose replays run the function again on the static inputs and copy into static buffers."""

    def __init__(self, fn, args):
        self.fn = fn
        self.inputs = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        raw = fn(*self.inputs)
        outs = graphs._tensors(raw)
        self.many = isinstance(raw, (tuple, list))
        self.outputs = [o.detach().clone() for o in outs]
        self.differentiable = [i for i, o in enumerate(outs) if o.requires_grad]
        self.grad_outputs = [torch.empty_like(self.outputs[i]) for i in self.differentiable]
        self.grad_inputs = [torch.full_like(x, float("nan")) if x.requires_grad else None
                            for x in self.inputs]
        self.pending = None
        self.live = None
        graphs._COUNT["captures"] += 1

    def replay_forward(self):
        with torch.enable_grad():
            self.live = graphs._tensors(self.fn(*self.inputs))
        for static, o in zip(self.outputs, self.live):
            static.copy_(o.detach())

    def replay_backward(self):
        wanted = [x for x in self.inputs if x.requires_grad]
        got = iter(torch.autograd.grad([self.live[i] for i in self.differentiable], wanted, self.grad_outputs,
                                       allow_unused=True))
        for static in self.grad_inputs:
            if static is not None:
                g = next(got)
                static.copy_(torch.zeros_like(static) if g is None else g)
        self.live = None


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setattr(graphs, "CAPTURE", Emulated)
    monkeypatch.setattr(graphs, "_applies", lambda args: graphs._ENABLED and torch.is_grad_enabled()
                        and any(a.requires_grad for a in args))
    graphs.clear()
    yield
    graphs.clear()


def _step(model, tokens):
    model.zero_grad(set_to_none=True)
    out = model(tokens)
    (out.square().mean() + out[:, -1].sin().sum()).backward()
    return out.detach().clone(), [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("spec", ["urn 6", "urn 12 k2", "arbitrary 4", "gru 4 e3", "tpru 8 N4",
                                  "tpru 8 N4 s2"])
def test_replays_give_the_eager_values_and_gradients(spec, emulated, monkeypatch):
    monkeypatch.setattr(scan, "_gpu", lambda t: True)  # the URN's GPU path: every matrix, the dense scan
    monkeypatch.setattr(scan, "_use_kernel", lambda M, tokens: False)
    torch.manual_seed(0)
    model = build_model(spec, V, dropout=0.0).double().train()
    before = graphs.captures()
    for i in range(3):  # a capture on the first step, replays with new inputs on the next ones
        tokens = torch.randint(0, V, (5, 8), generator=torch.Generator().manual_seed(i))
        with graphs.enabled(False):
            out, grads = _step(model, tokens)
        out_g, grads_g = _step(model, tokens)
        torch.testing.assert_close(out_g, out, rtol=1e-12, atol=1e-12)
        for a, b in zip(grads_g, grads):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    assert graphs.captures() > before


def test_outputs_and_gradients_do_not_alias_the_capture(emulated):
    def double(x):
        return x * 2

    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    first = graphs.replayed(double, (x,), "double")
    first.sum().backward()
    grad = x.grad.clone()
    y = torch.full((3,), 5.0, dtype=torch.float64, requires_grad=True)
    second = graphs.replayed(double, (y,), "double")
    assert torch.equal(first, torch.full((3,), 2.0, dtype=torch.float64))  # not overwritten by the replay
    assert torch.equal(second, torch.full((3,), 10.0, dtype=torch.float64))
    second.sum().backward()
    assert torch.equal(x.grad, grad)


def test_a_second_call_awaiting_the_first_backward_runs_eagerly(emulated):
    torch.manual_seed(0)
    model = build_model("gru 4 e3", V, dropout=0.0).double().train()
    a, b = torch.randint(0, V, (2, 5, 9))
    with graphs.enabled(False):
        eager = two_call_gradients(model, a, b)
    before = graphs.captures()
    for _ in range(3):
        for x, y in zip(two_call_gradients(model, a, b), eager):
            torch.testing.assert_close(x, y, rtol=1e-12, atol=1e-12)
    assert graphs.captures() - before == 1  # one shape, one capture: the second call of each step ran eagerly


def test_a_dropped_step_frees_its_capture(emulated):
    model = build_model("gru 4 e3", V, dropout=0.0).double().train()
    tokens = torch.randint(0, V, (5, 9))
    model(tokens)  # its graph is dropped: no backward pass will come
    (entry,) = graphs._CACHE.values()
    assert not entry.busy()
    out = model(tokens)
    assert entry.busy()
    out.sum().backward()
    assert not entry.busy()


def test_shapes_and_settings_key_the_captures_and_the_oldest_goes(emulated, monkeypatch):
    monkeypatch.setattr(graphs, "MAX_GRAPHS", 3)
    x = torch.ones(2, requires_grad=True)
    before = graphs.captures()
    for name in ("a", "b"):
        graphs.replayed(lambda t: t * 3, (x,), name).sum().backward()
    graphs.replayed(lambda t: t * 3, (torch.ones(4, requires_grad=True),), "a").sum().backward()
    assert graphs.captures() - before == 3
    graphs.replayed(lambda t, m: t * 3, (x, None), "a").sum().backward()  # None keyed apart
    assert len(graphs._CACHE) == 3 and graphs.captures() - before == 4


def test_no_graphs_without_gradients_or_when_switched_off(emulated):
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        graphs.replayed(lambda t: t * 3, (x,), "a")
    with graphs.enabled(False):
        graphs.replayed(lambda t: t * 3, (x,), "a")
    graphs.replayed(lambda t: t * 3, (torch.ones(2),), "a")  # nothing requires a gradient
    assert not graphs._CACHE


def test_on_the_cpu_the_function_runs_as_it_is():
    graphs.clear()
    x = torch.ones(2, requires_grad=True)
    assert torch.equal(graphs.replayed(lambda t: t * 3, (x,), "a"), torch.full((2,), 3.0))
    assert not graphs._CACHE


def _train(spec: str, steps: int, accumulate: int, graphs_on: bool) -> list[torch.Tensor]:
    """``steps`` Adam steps of a fresh model (float64, dropout 0.1 in training), each on ``accumulate``
    micro-batches whose gradients add up before the step; the same seeds draw the same data and masks."""
    torch.manual_seed(0)
    model = build_model(spec, V, dropout=0.1).double().train()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    with graphs.enabled(graphs_on):
        for step in range(steps):
            opt.zero_grad(set_to_none=True)
            for micro in range(accumulate):
                torch.manual_seed(1000 * step + micro)  # the dropout masks of this micro-batch
                data = torch.Generator().manual_seed(step * 10 + micro)
                tokens = torch.randint(0, V, (4, 7), generator=data)
                out = model(tokens)
                (out.square().mean() + out[:, -1].sin().sum()).backward()
            opt.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("spec", ["urn 6", "urn 12 k2", "gru 4 e3", "tpru 8 N4 s2"])
@pytest.mark.parametrize("accumulate", [1, 2])
def test_twenty_adam_steps_with_dropout_replayed_equal_the_eager_ones(spec, accumulate, emulated,
                                                                      monkeypatch):
    """The parameters a capture holds are refreshed after every optimizer step (a capture holding its first
    step's weights would drift from the eager run at step 2), dropout masks enter as inputs, and gradients
    accumulated over micro-batches add up as eagerly (issue 47: graphs on against off, 20 Adam steps)."""
    monkeypatch.setattr(scan, "_gpu", lambda t: True)  # the URN's GPU path: every matrix, the dense scan
    monkeypatch.setattr(scan, "_use_kernel", lambda M, tokens: False)
    eager = _train(spec, 20, accumulate, graphs_on=False)
    before = graphs.captures()
    replayed = _train(spec, 20, accumulate, graphs_on=True)
    assert graphs.captures() > before  # the graphs path ran
    moved = max(float((p - q).abs().max()) for p, q in zip(eager, _fresh(spec)))
    assert moved > 1e-3  # 20 steps moved the parameters: equal below is not equal by standing still
    for a, b in zip(replayed, eager):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)


def _fresh(spec: str) -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [p.detach().clone() for p in build_model(spec, V, dropout=0.1).double().parameters()]
