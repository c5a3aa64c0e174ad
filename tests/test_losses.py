"""urnlib.losses: the fused cross-entropy and the loss at scored positions equal torch's cross-entropy over
every position (values and gradients, float64), and the one-product NNLM equals b + W x + U tanh(d + H x)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from urnlib.losses import cross_entropy, lm_loss, target_log_probs
from urnlib.models import build_model
from urnlib.tokens import IGNORE
from urnlib.train import token_cross_entropy


def test_cross_entropy_value_and_gradient_equal_torchs():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(37, 11, generator=g, dtype=torch.float64, requires_grad=True)
    targets = torch.randint(0, 11, (37,), generator=g)
    ours = cross_entropy(logits, targets)
    (grad_ours,) = torch.autograd.grad(3.0 * ours, logits)
    ref = F.cross_entropy(logits, targets)
    (grad_ref,) = torch.autograd.grad(3.0 * ref, logits)
    assert ours.item() == pytest.approx(ref.item(), abs=1e-14)
    assert torch.allclose(grad_ours, grad_ref, atol=1e-15, rtol=0)
    assert torch.autograd.gradcheck(lambda z: cross_entropy(z, targets), (logits,))


def test_cross_entropy_of_an_empty_batch_is_zero():
    logits = torch.zeros(0, 5, requires_grad=True)
    loss = cross_entropy(logits, torch.zeros(0, dtype=torch.long))
    loss.backward()
    assert loss.item() == 0.0 and logits.grad.shape == (0, 5)


@pytest.mark.parametrize("spec", ["nnlm 4 6 5 direct", "nnlm 3 6 5 nodirect", "nnlm 3 0 5 direct", "srn 6 e4",
                                  "gru 6 e4", "lstm 6 e4", "urn 6"])
def test_lm_loss_equals_the_loss_over_every_position(spec):
    torch.manual_seed(1)
    V = 13
    model = build_model(spec, V, **({} if spec.startswith("nnlm") else {"dropout": 0.0})).double()
    inputs = torch.randint(0, V, (4, 9))
    targets = torch.randint(0, V, (4, 9))
    targets[:, :3] = IGNORE  # warm-up positions carry no loss
    targets[2, 7:] = IGNORE
    ours, n = lm_loss(model, inputs, targets)
    ours_grads = torch.autograd.grad(ours, list(model.parameters()), allow_unused=True)
    ref, m = token_cross_entropy(model, inputs, targets)
    ref_grads = torch.autograd.grad(ref, list(model.parameters()), allow_unused=True)
    assert n == m == int((targets != IGNORE).sum())
    assert ours.item() == pytest.approx(ref.item(), rel=1e-12)
    for a, b in zip(ours_grads, ref_grads):
        assert (a is None and b is None) or torch.allclose(a, b, atol=1e-12, rtol=1e-10)
    logp = target_log_probs(model, inputs, targets)
    assert -logp.mean() == pytest.approx(ref.item(), rel=1e-12)


def test_nnlm_one_product_is_the_bengio_formula():
    torch.manual_seed(2)
    model = build_model("nnlm 4 6 5 direct", 11).double()
    tokens = torch.randint(0, 11, (3, 7))
    x = model.features(tokens)
    hidden = torch.tanh(model.hidden_layer(x))
    formula = model.bias + x @ model.direct.weight.T + hidden @ model.readout.weight.T
    assert torch.allclose(model(tokens), formula, atol=1e-12)
    assert np.isfinite(model(tokens).detach().numpy()).all()
