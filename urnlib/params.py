"""Validation of user-facing parameters: clear errors that name the parameter and the allowed values.

Notebooks call these in the cell right after their parameters cell, so a bad papermill
``-p name value`` stops the run at once with a message saying what to pass instead.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable
from typing import Any

from urnlib.errors import DataError, ParameterError  # re-exported: ``from urnlib.params import ...`` works

__all__ = ["ParameterError", "DataError", "check_choice", "check_int", "check_float", "check_bool",
           "check_list", "check_entries", "check_notebook_parameters", "injected_parameters"]

#: the first line of the cell papermill injects after a notebook's parameters cell
PAPERMILL_MARK = "# Parameters"


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


def check_entries(name: str, value: Any, *, example: str, required: dict[str, str],
                  keys: tuple[str, ...]) -> list[tuple[str, dict]]:
    """``[(f"{name}[i]", entry), ...]`` of a list of settings (empty: none), each a mapping with the keys of
    ``required`` (key -> how the message names it, ``{"model": "a model"}``) and no key outside ``keys``, else
    raise naming the entry (a chapter's ``ablations`` or ``variants``; ``example``: a valid entry, shown in
    the message)."""
    if not isinstance(value, (list, tuple)):
        raise ParameterError(f"{name}={value!r} must be a list (empty: none) of entries {example}")
    out = []
    for i, entry in enumerate(value):
        where = f"{name}[{i}]"
        if not isinstance(entry, dict) or any(key not in entry for key in required):
            needs = " and ".join(required.values())
            raise ParameterError(f"{where}={entry!r} must be a mapping with at least {needs}, e.g. {example}")
        unknown = sorted(set(entry) - set(keys))
        if unknown:
            raise ParameterError(f"{where} has {unknown}: an entry takes only {list(keys)}")
        out.append((where, entry))
    return out


def injected_parameters(namespace: dict[str, Any]) -> list[str]:
    """The names papermill assigned in the cell it injected after the parameters cell, read from the
    kernel's input history (IPython's ``In``; the injected cell opens with :data:`PAPERMILL_MARK`).

    ``[]`` outside IPython and where nothing was injected. Papermill itself only warns ("Passed unknown
    parameter") about a name the parameters cell does not declare, and injects it anyway.
    """
    history = namespace.get("In")
    if not isinstance(history, list):
        return []
    for source in reversed(history[:-1]):  # In[-1] is the cell running now
        if isinstance(source, str) and source.splitlines()[:1] == [PAPERMILL_MARK]:
            try:
                body = ast.parse(source).body
            except SyntaxError:
                return []
            return [target.id for node in body if isinstance(node, ast.Assign)
                    for target in node.targets if isinstance(target, ast.Name)]
    return []


def check_notebook_parameters(namespace: dict[str, Any], known: Iterable[str] = ()) -> None:
    """Raise if papermill was passed a parameter the notebook does not declare, naming it and the nearest
    known name. A notebook calls this (directly, or through ``Config.from_namespace``) in its first cell
    after the parameters cell, with ``globals()``.

    Args:
        namespace: the notebook's globals: the parameters cell's annotated names (``__annotations__``) are
            the notebook's parameters, and IPython's ``In`` holds the injected cell.
        known: further names that are parameters (a chapter config's fields).
    """
    declared = set(known) | set(namespace.get("__annotations__", {}))
    unknown = [name for name in injected_parameters(namespace) if name not in declared]
    if unknown:
        name = unknown[0]
        near = difflib.get_close_matches(name, sorted(declared), n=1, cutoff=0.5)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        also = f"; also unknown: {unknown[1:]}" if unknown[1:] else ""
        raise ParameterError(f"{name} is not a parameter of this notebook{hint}{also}; its parameters are "
                             f"{sorted(declared)}")
