"""The one registry of model kinds and the one grammar of model specs.

A model spec is written as a string in a notebook's parameters - ``"urn 50 k3"``, ``"lstm 16 e12"``,
``"tpru 64 N64 s8"``, ``"nnlm 5 50 60 direct"``, ``"4.2 diagonal 100"`` - and becomes a dict
(``{"kind": "urn", "n": 50, "k": 3}``) whose keys are the model class's keyword arguments. A spec
string is the kind, then its positional values, then optional ``<prefix><int>`` tokens (``k3``,
``e12``, ``N64``, ``s8``; ``N=64`` also reads) and words (``direct``/``nodirect``). :func:`parse_spec`
is the only parser; its errors list every form. :func:`build_model` turns a spec (string or dict) into
a module, importing the model's module only then: a run depends only on the model it uses.

Each kind names its :mod:`urnlib.components` entry (``model.<kind>``), whose version a stored run records.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from urnlib.params import ParameterError, check_int

__all__ = ["ModelKind", "KINDS", "register", "parse_spec", "build_model", "build_trained", "spec_string",
           "component_of", "grammar_help"]


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
    kind = spec["kind"] if isinstance(spec, dict) else spec.split()[0]
    if kind not in KINDS:
        raise _fail(kind, f"unknown kind {kind!r}")
    return KINDS[kind].component


def build_model(spec: dict[str, Any] | str, vocab_size: int, **context) -> nn.Module:
    """Build the model of ``spec`` (a string or a parsed dict) for ``vocab_size`` symbols.

    Args:
        spec: e.g. ``"urn 16"`` or ``{"kind": "urn", "n": 16, "k": None, "dropout": 0.05}``; a bare kind
            name with keyword ``context`` (``build_model("urn", V, n=16)``) reads too.
        vocab_size: V.
        **context: keyword arguments of the chapter (``dropout``, ``n_out``, ``start_id`` ...).
    """
    if isinstance(spec, str):
        spec = parse_spec(spec) if len(spec.split()) > 1 else {"kind": spec}
    if spec.get("kind") not in KINDS:
        raise _fail(spec.get("kind"), f"unknown kind {spec.get('kind')!r}")
    kind = KINDS[spec["kind"]]
    module, _, cls = kind.target.partition(":")
    options = {**{k: v for k, v in spec.items() if k != "kind"}, **context}
    try:
        return getattr(importlib.import_module(module), cls)(vocab_size, **options)
    except TypeError as err:  # an option the model does not take
        raise ParameterError(f"model {kind.name!r} ('{kind.grammar}'): {err}") from None


def build_trained(spec: dict[str, Any] | str, weights: dict, vocab_size: int, **context) -> nn.Module:
    """The model of ``spec`` with a stored run's ``weights`` loaded, in eval mode."""
    model = build_model(spec, vocab_size, **context)
    model.load_state_dict(weights)
    return model.eval()


def _even_urn(spec: dict[str, Any]) -> None:
    if spec["n"] % 2:
        raise ParameterError(f"model 'urn {spec['n']}': a URN needs an even number of units "
                             "(its rotations act on planes)")
    if spec.get("k") is not None and not 1 <= spec["k"] < spec["n"]:
        raise ParameterError(f"model 'urn {spec['n']} k{spec['k']}': k must be between 1 and n - 1")


def _nnlm(spec: dict[str, Any]) -> None:
    if spec["hidden"] == 0 and not spec["direct"]:
        raise ParameterError("model 'nnlm ... 0 ... nodirect': with no hidden layer the direct connections "
                             "are the whole model; write 'direct'")


def _tpru(spec: dict[str, Any]) -> None:
    if spec["d"] % spec["slices"]:
        raise ParameterError(f"model 'tpru {spec['d']} ... s{spec['slices']}': the slices must divide d "
                             "(paper 002 appendix E splits the binding complex into equal slices)")


register(ModelKind("urn", "urnlib.models.unitary:URN", "model.urn",
                   "unitary RNN, Q = expm(S); k<k> truncates it to k rotation planes (paper 000 sec. 2)",
                   positional=(("n", int),), prefixed={"k": "k"}, defaults={"k": None}, check=_even_urn))
register(ModelKind("arbitrary", "urnlib.models.unitary:ArbitraryRNN", "model.arbitrary",
                   "the URN's cell with unconstrained matrices (paper 000 sec. 5)", positional=(("n", int),)))
register(ModelKind("lstm", "urnlib.models.recurrent:PaperLSTM", "model.lstm",
                   "LSTM with one bias per gate and an embedding layer (paper 001 sec. 2.1)",
                   positional=(("n", int),), prefixed={"e": "embedding_size"},
                   defaults={"embedding_size": None}))
register(ModelKind("srn", "urnlib.models.cells:SRN", "model.srn",
                   "Elman's simple recurrent network (lecture 004)",
                   positional=(("n", int),), prefixed={"e": "embedding_size"},
                   defaults={"embedding_size": None}))
register(ModelKind("gru", "urnlib.models.cells:GRU", "model.gru", "the lecture's GRU (lecture 004)",
                   positional=(("n", int),), prefixed={"e": "embedding_size"},
                   defaults={"embedding_size": None}))
register(ModelKind("nnlm", "urnlib.models.nnlm:BengioNNLM", "model.nnlm",
                   "Bengio et al.'s (2003) neural n-gram model: order, hidden units, embedding size",
                   positional=(("order", int), ("hidden", int), ("embedding_size", int)),
                   words={"direct": ("direct", True), "nodirect": ("direct", False)}, check=_nnlm))
register(ModelKind("tpru", "urnlib.models.tpru_stack:tpru_language_model", "model.tpru",
                   "TPRU with N role vectors and s slices (paper 002)", positional=(("d", int),),
                   prefixed={"N": "n_roles", "s": "slices"}, defaults={"slices": 1}, check=_tpru))
for _name, _cls, _doc in (("4.1", "NeuralMatrixLM", "neural"),
                          ("4.2", "ProbabilisticMatrixLM", "direct probabilistic"),
                          ("4.3", "WFSAMatrixLM", "continuous WFSA")):
    register(ModelKind(_name, f"urnlib.models.matrix_embedding:{_cls}", "model.matrix_embedding",
                       f"paper 003 sec. {_name} {_doc} model over an algebra of d x d matrices",
                       positional=(("algebra", ("dense", "diagonal", "upper")), ("d", int))))
