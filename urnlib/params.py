"""Validation of user-facing parameters: clear errors that name the parameter and the allowed values.

Notebooks call these in the cell right after their parameters cell, so a bad papermill
``-p name value`` stops the run at once with a message saying what to pass instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["ParameterError", "DataError", "check_choice", "check_int", "check_float", "check_bool"]


class ParameterError(ValueError):
    """A parameter has a value the experiment cannot run with."""


class DataError(ParameterError):
    """A data file is missing, unreadable, truncated or in the wrong format.

    The message names the file (and the line, where there is one) and says what to do, e.g. run
    ``make data`` again.
    """


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise naming the allowed values."""
    allowed = list(allowed)
    if value not in allowed:
        raise ParameterError(f"{name}={value!r} is not allowed; choose one of {allowed}")
    return value


def check_int(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` if it is an int within ``[minimum, maximum]``, else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"{name}={value!r} must be an integer")
    if minimum is not None and value < minimum:
        raise ParameterError(f"{name}={value} must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise ParameterError(f"{name}={value} must be <= {maximum}")
    return value


def check_float(
    name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
    strict_min: bool = False,
) -> float:
    """Return ``float(value)`` if it is a number in range, else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"{name}={value!r} must be a number")
    if minimum is not None and (value <= minimum if strict_min else value < minimum):
        raise ParameterError(f"{name}={value} must be {'>' if strict_min else '>='} {minimum}")
    if maximum is not None and value > maximum:
        raise ParameterError(f"{name}={value} must be <= {maximum}")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is a bool, else raise (papermill passes ``True``/``False`` literals)."""
    if not isinstance(value, bool):
        raise ParameterError(f"{name}={value!r} must be True or False")
    return value
