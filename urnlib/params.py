"""Validation of user-facing parameters: clear errors that name the parameter and the allowed values.

Notebooks call these in the cell right after their parameters cell, so a bad papermill
``-p name value`` stops the run at once with a message saying what to pass instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from urnlib.errors import DataError, ParameterError  # re-exported: ``from urnlib.params import ...`` works

__all__ = ["ParameterError", "DataError", "check_choice", "check_int", "check_float", "check_bool",
           "check_list"]


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise naming the allowed values."""
    allowed = list(allowed)
    if value not in allowed:
        raise ParameterError(f"{name}={value!r} is not allowed; choose one of {allowed}")
    return value


def check_int(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None,
              message: str | None = None) -> int:
    """Return ``value`` if it is an int (not a bool) within ``[minimum, maximum]``, else raise.

    Args:
        message: what the error says after ``name=value`` (default: ``must be an integer``, or the bound
            that is broken), for a parameter whose error should list everything it takes.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        problem = "must be an integer"
    elif minimum is not None and value < minimum:
        problem = f"must be >= {minimum}"
    elif maximum is not None and value > maximum:
        problem = f"must be <= {maximum}"
    else:
        return value
    raise ParameterError(f"{name}={value!r} {message or problem}")


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


def check_list(name: str, value: Any, *, example: str, each=None) -> list:
    """Return ``value`` as a list if it is a non-empty list whose entries pass ``each(f"{name}[i]", entry)``
    and no two entries are the same run, else raise naming ``name``.

    Args:
        name: the parameter, as the user passed it.
        example: a valid value, shown in the message (``"[8, 16, 32]"``).
        each: checks one entry and may return its key (entries with equal keys are the same run; default:
            the entry itself).
    """
    if not isinstance(value, (list, tuple)) or not value:
        raise ParameterError(f"{name}={value!r} must be a non-empty list, e.g. {example}")
    seen: dict[Any, Any] = {}
    for i, entry in enumerate(value):
        key = each(f"{name}[{i}]", entry) if each is not None else None
        key = entry if key is None else key
        key = repr(key) if isinstance(key, (list, dict)) else key
        if key in seen:
            raise ParameterError(f"{name} contains {seen[key]!r} and {entry!r}: the same run twice; drop one")
        seen[key] = entry
    return list(value)
