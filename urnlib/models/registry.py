"""The one registry of model kinds and the one grammar of model specs.

A model spec is written as a string in a notebook's parameters - ``"urn 50 k3"``, ``"lstm 16 e12"``,
``"tpru 64 N64 s8"``, ``"nnlm 5 50 60 direct"``, ``"4.2 diagonal 100"`` - and becomes a dict
(``{"kind": "urn", "n": 50, "k": 3}``) whose keys are the model class's keyword arguments. A spec
string is the kind, then its positional values, then optional ``<prefix><int>`` tokens (``k3``,
``e12``, ``N64``, ``s8``; ``N=64`` also reads) and words (``direct``/``nodirect``). :func:`parse_spec`
is the only parser; its errors list every form. :func:`build_model` turns a spec (string or dict) into
a module, importing the model's module only then: a run depends only on the model it uses.

Each kind names its :mod:`urnlib.components` entry (``model.<kind>``), whose version a stored run records,
and describes itself, so that no chapter, plot or table keeps a list of kinds: its :func:`family`, the
:func:`label` of a spec (``"3-TURN 50"``), the :func:`style` of its curves, its parameter :func:`count`, the
option a budget sizes and its valid :func:`sizes`, and whether it is a recurrent ``cell`` the zoo trains.
The kinds themselves are registered in :mod:`urnlib.models.kinds`, which the package :mod:`urnlib.models`
imports (so every ``from urnlib.models.registry import ...`` finds them all). A new kind is its module, one
:func:`register` call there and one :func:`urnlib.components.register` entry.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from urnlib.models import palette
from urnlib.params import ParameterError, check_int

__all__ = ["ModelKind", "Style", "KINDS", "DEFAULT_STYLE", "register", "parse_spec", "build_model",
           "spec_string", "component_of", "components_of", "grammar_help", "family", "label",
           "style", "count", "sizes", "at_size", "cells", "accepts"]

Spec = dict[str, Any]


@dataclass(frozen=True)
class Style:
    """How a kind's curves look in every figure (:mod:`urnlib.plots.curves`, :mod:`urnlib.plots.budgets`): a
    report gives each series the style of its run's spec (:func:`style`), never one guessed from a label.

    Args:
        word: the style's name (``"turn"``, ``"urn"``, ``"lstm"`` ...).
        colour: its colour, from the book's one colour-blind-safe palette
            (:data:`urnlib.models.palette.PALETTE`, keyed by this word); several models of the style in one
            figure take :func:`~urnlib.models.palette.shades` of it.
        marker, linestyle: matplotlib's.
        when: which of the kind's specs look so (``None``: all); a spec takes its kind's first that fits.
    """

    word: str
    colour: str
    marker: str
    linestyle: Any = "-"
    when: Callable[[Spec], bool] | None = None

    def matplotlib(self, index: int = 0, of: int = 1) -> dict[str, Any]:
        """``{"color", "marker", "linestyle"}`` of the ``index``-th of ``of`` models of the style in a figure
        (one alone: the style's colour)."""
        colour = palette.shades(self.colour, max(of, index + 1))[index]
        return {"color": colour, "marker": self.marker, "linestyle": self.linestyle}


@dataclass(frozen=True)
class ModelKind:
    """One registered kind of model.

    Args:
        name: the first word of its specs.
        target: ``"module:Class"`` built as ``Class(vocab_size, **options, **context)``, imported lazily.
        component: its entry in :mod:`urnlib.components`.
        doc: one line: what it is and where it comes from.
        positional: ``(option, type)`` of the values after the name, in order; a type is ``int`` or a tuple
            of allowed words.
        prefixed: token prefix -> option (``{"k": "k"}`` reads ``k3`` as ``k=3``).
        words: a word -> ``(option, value)`` (``{"direct": ("direct", True)}``).
        defaults: options that a spec may leave out.
        check: extra validation of the parsed options (raises ParameterError).
        family: ``"unitary"``, ``"gated"``, ``"simple"``, ``"tensor-product"``, ``"unconstrained"`` ...
        label: its display name (``"LSTM"``) or a function of a spec (``"URN"``, ``"3-TURN"``), without size.
        size: the option a parameter budget sizes (``"n"``, ``"d"``; ``None``: none).
        smallest, step: the smallest valid size and the step between valid sizes (or functions of a spec).
        count: ``count(spec, V, n_out)``: trainable parameters over V symbols with ``n_out`` outputs
            (``None``: V); ``None`` where it has no closed form.
        styles: the looks of its curves (none: :data:`DEFAULT_STYLE`).
        uses: components it is built from beyond its own (the zoo's runs record them).
        cell: a recurrent cell over symbol sequences taking ``dropout`` and ``n_out``: the zoo can train it.
    """

    name: str
    target: str
    component: str
    doc: str
    positional: tuple[tuple[str, Any], ...] = ()
    prefixed: dict[str, str] = field(default_factory=dict)
    words: dict[str, tuple[str, Any]] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    check: Callable[[dict[str, Any]], None] | None = None
    family: str = ""
    label: str | Callable[[Spec], str] = ""
    size: str | None = None
    smallest: int | Callable[[Spec], int] = 1
    step: int | Callable[[Spec], int] = 1
    count: Callable[[Spec, int, int | None], int] | None = None
    styles: tuple[Style, ...] = ()
    uses: tuple[str, ...] = ()
    cell: bool = False

    @property
    def grammar(self) -> str:
        short = {"embedding_size": "embedding", "n_roles": "roles"}
        parts = [self.name] + [short.get(name, name).upper() if typ is int else "|".join(typ)
                               for name, typ in self.positional]
        parts += [f"[{p}<{short.get(opt, opt)}>]" if opt in self.defaults else f"{p}<{short.get(opt, opt)}>"
                  for p, opt in self.prefixed.items()]
        if self.words:
            parts.append("|".join(self.words))
        return " ".join(parts)


KINDS: dict[str, ModelKind] = {}


def register(kind: ModelKind) -> ModelKind:
    """Add ``kind`` to the registry (a second kind of the same name is refused)."""
    if kind.name in KINDS:
        raise ValueError(f"model kind {kind.name!r} is registered twice")
    KINDS[kind.name] = kind
    return kind


def grammar_help() -> str:
    """Every form a spec may take, one per kind."""
    return "; ".join(f"'{k.grammar}' ({k.doc})" for k in KINDS.values())


_PREFIXED = re.compile(r"^([A-Za-z]+)=?(\d+)$")


def _fail(text: Any, why: str) -> ParameterError:
    return ParameterError(f"model {text!r}: {why}. A model is written as one of: {grammar_help()}")


def parse_spec(text: str) -> dict[str, Any]:
    """``"urn 50 k3"`` -> ``{"kind": "urn", "n": 50, "k": 3}`` (see the module docstring)."""
    if not isinstance(text, str) or not text.split():
        raise _fail(text, "a model spec is a string")
    name, *tokens = text.split()
    kind = KINDS.get(name) or KINDS.get(name.lower())
    if kind is None:
        raise _fail(text, f"unknown kind {name!r}")
    spec: dict[str, Any] = {"kind": kind.name}
    positional = list(kind.positional)
    for token in tokens:
        match = _PREFIXED.match(token)
        if token in kind.words:
            option, value = kind.words[token]
            if option in spec:
                raise _fail(text, f"{option} is given twice")
            spec[option] = value
        elif match and not token.isdigit() and match.group(1) in kind.prefixed:
            option = kind.prefixed[match.group(1)]
            if option in spec:
                raise _fail(text, f"{option} is given twice")
            spec[option] = int(match.group(2))
        elif positional:
            option, typ = positional.pop(0)
            if typ is int:
                if not token.isdigit():
                    raise _fail(text, f"{option.upper()} must be a whole number, not {token!r}")
                spec[option] = int(token)
            elif token in typ:
                spec[option] = token
            else:
                raise _fail(text, f"{option} must be one of {list(typ)}, not {token!r}")
        else:
            raise _fail(text, f"{token!r} is not understood for {kind.name} ('{kind.grammar}')")
    missing = [opt for opt, _ in positional] + [o for o in kind.prefixed.values() if o not in spec
                                                  and o not in kind.defaults]
    missing += [o for o, _ in {v[0]: 0 for v in kind.words.values()}.items() if o not in spec
                and o not in kind.defaults]
    if missing:
        raise _fail(text, f"{', '.join(missing)} missing ('{kind.grammar}')")
    for option, value in kind.defaults.items():
        spec.setdefault(option, value)
    for option, value in spec.items():
        if isinstance(value, int) and not isinstance(value, bool):
            check_int(f"{option} of {text!r}", value, minimum=0 if option == "hidden" else 1)
    if kind.check is not None:
        kind.check(spec)
    return spec


def spec_string(spec: dict[str, Any]) -> str:
    """The string form of a parsed spec (the inverse of :func:`parse_spec` for its keys)."""
    kind = KINDS[spec["kind"]]
    parts = [kind.name] + [str(spec[opt]) for opt, _ in kind.positional]
    parts += [f"{p}{spec[opt]}" for p, opt in kind.prefixed.items()
              if spec.get(opt) is not None and spec.get(opt) != kind.defaults.get(opt, object())]
    parts += [w for w, (opt, value) in kind.words.items() if spec.get(opt) == value]
    return " ".join(parts)


def component_of(spec: dict[str, Any] | str) -> str:
    """The :mod:`urnlib.components` name of a spec's kind."""
    return _kind(spec).component


def build_model(spec: dict[str, Any] | str, vocab_size: int, **context) -> nn.Module:
    """Build the model of ``spec`` (a string or a parsed dict) for ``vocab_size`` symbols.

    Args:
        spec: e.g. ``"urn 16"`` or ``{"kind": "urn", "n": 16, "k": None, "dropout": 0.05}``; a bare kind
            name with keyword ``context`` (``build_model("urn", V, n=16)``) reads too.
        vocab_size: V.
        **context: keyword arguments of the chapter (``dropout``, ``n_out``, ``start_id`` ...).
    """
    spec, kind = _spec(spec), _kind(spec)
    module, _, cls = kind.target.partition(":")
    options = {**{k: v for k, v in spec.items() if k != "kind"}, **context}
    try:
        return getattr(importlib.import_module(module), cls)(vocab_size, **options)
    except TypeError as err:  # an option the model does not take
        raise ParameterError(f"model {kind.name!r} ('{kind.grammar}'): {err}") from None


def _spec(spec: Spec | str) -> Spec:  # a bare kind name reads as {"kind": name}
    return (parse_spec(spec) if len(spec.split()) > 1 else {"kind": spec}) if isinstance(spec, str) else spec


def _kind(spec: Spec | str) -> ModelKind:  # by its first word, unparsed
    name = spec.get("kind") if isinstance(spec, dict) else (spec.split() or [None])[0]
    if name not in KINDS:
        raise _fail(name, f"unknown kind {name!r}")
    return KINDS[name]


def family(spec: Spec | str) -> str:
    """The family of a spec's kind (``"unitary"``, ``"gated"`` ...)."""
    return _kind(spec).family


def label(spec: Spec | str, sized: bool = True) -> str:
    """The display label of a spec: ``"URN 50"``, ``"3-TURN 50"``, ``"LSTM 16"`` (``sized=False``: ``"URN"``,
    ``"3-TURN"``, ``"LSTM"``); a kind without a label shows its name."""
    spec, kind = _spec(spec), _kind(spec)
    name = (kind.label(spec) if callable(kind.label) else kind.label) or kind.name
    return f"{name} {spec[kind.size]}" if sized and kind.size and spec.get(kind.size) is not None else name


#: the look of a kind with none of its own: the URN's (the book's first model)
DEFAULT_STYLE = Style("urn", palette.PALETTE["urn"], "s")


def style(spec: Spec | str) -> Style:
    """The look of a spec's curves: its kind's first style that fits it (none: :data:`DEFAULT_STYLE`)."""
    spec = _spec(spec)
    return next((s for s in _kind(spec).styles if s.when is None or s.when(spec)), DEFAULT_STYLE)


def count(spec: Spec | str, vocab_size: int, n_out: int | None = None) -> int:
    """Trainable parameters of ``spec`` over ``vocab_size`` symbols with ``n_out`` outputs (default: the
    spec's ``n_out``, else V: a language model), by its kind's closed form."""
    spec, kind = _spec(spec), _kind(spec)
    if kind.count is None:
        raise ParameterError(f"model kind {kind.name!r} has no parameter count formula: count a built model "
                             "with urnlib.models.count_parameters")
    return kind.count(spec, vocab_size, n_out if n_out is not None else spec.get("n_out"))


def sizes(spec: Spec | str, largest: int) -> range:
    """The valid values of a spec's size option up to ``largest``: from the smallest (an even URN: 2; a k-TURN
    needs k < n) by its step (a URN: 2, its rotations act on planes)."""
    spec, kind = _spec(spec), _kind(spec)
    low, step = (value(spec) if callable(value) else value for value in (kind.smallest, kind.step))
    return range(low, largest + 1, step)


def at_size(spec: Spec | str, size: int) -> Spec:
    """``spec`` at ``size``, parsed: ``at_size({"kind": "urn", "k": 3}, 16) == parse_spec("urn 16 k3")``."""
    spec, kind = _spec(spec), _kind(spec)
    if kind.size is None:
        raise ParameterError(f"model kind {kind.name!r} has no size option a parameter budget could set")
    return parse_spec(spec_string({**spec, kind.size: size}))


def cells() -> list[str]:
    """The kinds that are recurrent cells (``cell=True``), in the order registered."""
    return [name for name, kind in KINDS.items() if kind.cell]


def components_of(spec: Spec | str) -> tuple[str, ...]:
    """Every :mod:`urnlib.components` entry a spec's model is built from: its kind's, then what it uses."""
    return (_kind(spec).component, *_kind(spec).uses)


def accepts(spec: Spec | str, option: str) -> bool:
    """Whether a spec's model class names the keyword ``option`` (e.g. ``"state_dropout"``)."""
    module, _, cls = _kind(spec).target.partition(":")
    return option in inspect.signature(getattr(importlib.import_module(module), cls)).parameters
