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
