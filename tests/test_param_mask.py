"""The URN's parameter-dropout mask (``param_mask``): per symbol (the book's runs) or shared by every symbol,
which keeps a matched pair of generators that are exact negatives an exact inverse pair under dropout."""

import pytest
import torch

from urnlib.models.registry import build_model, parse_spec
from urnlib.models.unitary import URN
from urnlib.params import ParameterError


def _pair_residual(mask: str, k: int | None = None) -> float:
    torch.manual_seed(0)
    model = URN(4, 8, k, dropout=0.3, param_mask=mask)
    with torch.no_grad():
        model.embedding[1] = -model.embedding[0]  # Q(1) = Q(0)^T: a pair composing to the identity
    model.train()
    Q = model.matrices().detach()
    return float((Q[0] @ Q[1] - torch.eye(8)).abs().max())


@pytest.mark.parametrize("k", [None, 1])  # the full exponential and the low-rank one (4k <= n)
def test_a_shared_mask_keeps_an_inverse_pair_inverse_under_dropout_and_a_per_symbol_mask_does_not(k):
    assert _pair_residual("shared", k) < 1e-6
    assert _pair_residual("symbol", k) > 1e-3


def test_the_shared_mask_drops_the_same_positions_of_every_symbol():
    for mask, alike in (("shared", True), ("symbol", False)):
        torch.manual_seed(1)
        model = URN(5, 8, dropout=0.5, param_mask=mask)
        with torch.no_grad():
            model.embedding.copy_(model.embedding[0].clone())  # every symbol the same generator
        model.train()
        Q = model.matrices().detach()
        assert all(torch.equal(Q[0], Q[i]) for i in range(1, 5)) is alike
        assert not torch.equal(Q[0], model.eval().matrices().detach())  # training drops some parameters


def test_the_default_is_per_symbol_and_a_bad_mask_says_what_to_choose():
    assert URN(3, 4).param_mask == "symbol"
    with pytest.raises(ParameterError, match="param_mask='per batch'.*symbol.*shared.*sequence"):
        URN(3, 4, param_mask="per batch")


def test_the_model_registry_passes_the_mask_from_a_spec():
    model = build_model({**parse_spec("urn 8 k1"), "param_mask": "shared"}, vocab_size=4)
    assert model.param_mask == "shared"
