"""Small helpers shared by the test modules (imported as ``tests.helpers``)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["raises_with", "PAPERS", "paper_text"]

#: the papers' text, beside the project (``<repo>/../shared/papers``; its README names each file)
PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"


def paper_text(number: str) -> str:
    """The text of paper ``number`` (``"002"``). Where it is absent the test is skipped, except in CI
    (``CI=true``), where the quote checks must run: there it fails."""
    found = sorted(PAPERS.glob(f"{number}_*.txt"))
    if not found:
        message = f"the text of paper {number} is not in {PAPERS}"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(message + " (CI=true: the quote checks must run)")
        pytest.skip(message)
    return found[0].read_text()


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
