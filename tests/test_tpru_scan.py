"""The TPRU scan (urnlib.models.tpru_scan) against the autograd loop: values and gradients of every parameter,
float64, for the TPRU and its softmax variants, one and several slices, with fillers, and the case of eq. 4
where every f~ is 0."""

import pytest
import torch

from urnlib.models.tpru_cell import TPRU


def _grads(layer, x, fillers: bool):
    out = layer(x, return_fillers=fillers)
    states, f = out if fillers else (out, None)
    w = torch.linspace(-1, 1, states.numel(), dtype=torch.float64).view_as(states)
    loss = (states * w).sum() + (0.0 if f is None else (f * torch.cos(torch.arange(f.numel(),
                                                            dtype=torch.float64)).view_as(f)).sum())
    grads = torch.autograd.grad(loss, [x, *layer.parameters()])
    return states.detach(), (None if f is None else f.detach()), grads


@pytest.mark.parametrize("variant", ["tpru", "mod1", "mod2", "mod3"])
@pytest.mark.parametrize("slices", [1, 4])
@pytest.mark.parametrize("fillers", [False, True])
def test_scan_equals_the_autograd_loop(variant, slices, fillers):
    torch.manual_seed(0)
    layer = TPRU(5, 8, 6, variant=variant, slices=slices, seed=3).double()
    x = torch.randn(3, 7, 5, dtype=torch.float64, requires_grad=True)
    layer.scan = True
    fast = _grads(layer, x, fillers)
    layer.scan = False
    slow = _grads(layer, x, fillers)
    assert torch.allclose(fast[0], slow[0], atol=1e-12)
    if fillers:
        assert fast[1].shape == slow[1].shape and torch.allclose(fast[1], slow[1], atol=1e-12)
    for a, b in zip(fast[2], slow[2]):
        assert torch.allclose(a, b, atol=1e-11, rtol=1e-9)


def test_scan_when_every_filler_is_zero():
    torch.manual_seed(1)
    layer = TPRU(4, 6, 5, seed=0).double()
    with torch.no_grad():
        layer.b_b.fill_(-100.0)
        layer.b_x.fill_(-100.0)  # f~ = 0 everywhere: f = 0, b~ = 0, no NaN
    x = torch.randn(2, 4, 4, dtype=torch.float64, requires_grad=True)
    states, f, grads = _grads(layer, x, True)
    assert torch.all(f == 0) and all(torch.isfinite(g).all() for g in grads)
    layer.scan = False
    assert torch.allclose(states, _grads(layer, x, True)[0], atol=1e-12)


def test_scan_with_an_initial_state_and_an_empty_sequence():
    torch.manual_seed(2)
    layer = TPRU(3, 4, 5, seed=1).double()
    x = torch.randn(2, 3, 3, dtype=torch.float64)
    b0 = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    fast = layer(x, b0=b0)
    (g_fast,) = torch.autograd.grad(fast.sum(), b0)
    layer.scan = False
    slow = layer(x, b0=b0)
    (g_slow,) = torch.autograd.grad(slow.sum(), b0)
    assert torch.allclose(fast, slow, atol=1e-12) and torch.allclose(g_fast, g_slow, atol=1e-12)
    assert layer(x[:, :0]).shape == (2, 0, 4)

