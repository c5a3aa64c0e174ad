"""Small helpers shared by the test modules (imported as ``tests.helpers``)."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

__all__ = ["raises_with"]


@contextmanager
def raises_with(error, *parts):
    """``pytest.raises(error)``, and the message must contain every part (plain text, not a regex)."""
    with pytest.raises(error) as info:
        yield info
    message = str(info.value)
    for part in parts:
        assert str(part) in message, f"{str(part)!r} not in {message!r}"


def two_call_gradients(model, a, b) -> list:
    """The parameters' gradients of a loss that calls ``model`` twice (on ``a``, then ``b``) before one
    backward pass, as an encoder reading premise and hypothesis does (tests of urnlib.models.graphs)."""
    model.zero_grad(set_to_none=True)
    (model(a).square().sum() + 2 * model(b).sin().sum()).backward()
    return [p.grad.clone() for p in model.parameters()]
