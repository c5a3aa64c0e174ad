"""The registered model kinds: one :func:`urnlib.models.registry.register` call per kind, with the checks of
its options and its parameter count.

Each entry names the class built (``"module:Class"``, imported only when a model is built), its
:mod:`urnlib.components` entry, its spec grammar (positional values, ``<prefix><int>`` options, words), its
family, label, styles, parameter count and size option (see :class:`urnlib.models.registry.ModelKind`). The
package :mod:`urnlib.models` imports this module, so the registry holds every kind whenever any of
:mod:`urnlib.models` is imported. A new kind is its module, one entry here and one
:func:`urnlib.components.register` entry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from urnlib.models.palette import PALETTE
from urnlib.models.registry import DEFAULT_STYLE, ModelKind, Spec, Style, register
from urnlib.params import ParameterError

__all__: list[str] = []  # nothing to import: importing the module registers the kinds


def _closed_form(target: str, *options: str, outputs: bool = True) -> Callable[[Spec, int, int | None], int]:
    """The count ``function(V, *spec[options][, n_out])`` of ``"module:function"`` in :mod:`urnlib.models`,
    imported when called."""
    def counted(spec: Spec, vocab_size: int, n_out: int | None) -> int:
        module, _, name = f"urnlib.models.{target}".partition(":")
        fn = getattr(importlib.import_module(module), name)
        if not outputs and n_out is not None:  # a language model only
            raise ParameterError(f"model kind {spec['kind']!r} has no readout of n_out={n_out} classes")
        return fn(vocab_size, *(spec.get(o) for o in options), *((n_out,) if outputs else ()))
    return counted


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


_EMBEDDING = {"prefixed": {"e": "embedding_size"}, "defaults": {"embedding_size": None}}
register(ModelKind("srn", "urnlib.models.cells:SRN", "model.srn",
                   "Elman's simple recurrent network (lecture 004)", positional=(("n", int),), **_EMBEDDING,
                   family="simple", label="SRN", size="n", cell=True,
                   count=_closed_form("cells:srn_parameter_count", "n", "embedding_size"),
                   styles=(Style("srn", PALETTE["srn"], "D", (0, (5, 1, 1, 1))),)))
register(ModelKind("gru", "urnlib.models.cells:GRU", "model.gru", "the lecture's GRU (lecture 004)",
                   positional=(("n", int),), **_EMBEDDING, family="gated", label="GRU", size="n", cell=True,
                   count=_closed_form("cells:gru_parameter_count", "n", "embedding_size"),
                   styles=(Style("gru", PALETTE["gru"], "v", "-."),)))
register(ModelKind("lstm", "urnlib.models.recurrent:PaperLSTM", "model.lstm",
                   "LSTM with one bias per gate and an embedding layer (paper 001 sec. 2.1)",
                   positional=(("n", int),), **_EMBEDDING, family="gated", label="LSTM", size="n", cell=True,
                   count=_closed_form("recurrent:lstm_parameter_count", "n", "embedding_size"),
                   styles=(Style("lstm", PALETTE["lstm"], "^", "--"),)))
register(ModelKind("urn", "urnlib.models.unitary:URN", "model.urn",
                   "unitary RNN, Q = expm(S); k<k> truncates it to k rotation planes (paper 000 sec. 2)",
                   positional=(("n", int),), prefixed={"k": "k"}, defaults={"k": None}, check=_even_urn,
                   family="unitary", label=lambda s: "URN" if s.get("k") is None else f"{s['k']}-TURN",
                   size="n", smallest=lambda s: 2 if s.get("k") is None else s["k"] + 1 + (s["k"] + 1) % 2,
                   step=2, cell=True, count=_closed_form("unitary:urn_parameter_count", "n", "k"),
                   styles=(Style("turn", PALETTE["turn"], "o", "-", when=lambda s: s.get("k") is not None),
                           DEFAULT_STYLE)))
register(ModelKind("arbitrary", "urnlib.models.unitary:ArbitraryRNN", "model.arbitrary",
                   "the URN's cell with unconstrained matrices (paper 000 sec. 5)", positional=(("n", int),),
                   family="unconstrained", label="Arbitrary", size="n", cell=True,
                   count=lambda s, V, o: V * s["n"] ** 2 + (s["n"] + 1) * (o or V),
                   styles=(Style("arbitrary", PALETTE["arbitrary"], "x", ":"),)))
register(ModelKind("nnlm", "urnlib.models.nnlm:BengioNNLM", "model.nnlm",
                   "Bengio et al.'s (2003) neural n-gram model: order, hidden units, embedding size",
                   positional=(("order", int), ("hidden", int), ("embedding_size", int)),
                   words={"direct": ("direct", True), "nodirect": ("direct", False)}, check=_nnlm,
                   family="n-gram", label="NNLM", styles=(Style("nnlm", PALETTE["nnlm"], "h", (0, (6, 2))),),
                   count=_closed_form("nnlm:nnlm_parameter_count", "order", "embedding_size", "hidden",
                                      "direct", outputs=False)))
register(ModelKind("tpru", "urnlib.models.tpru_stack:tpru_language_model", "model.tpru",
                   "TPRU with N role vectors and s slices (paper 002)", positional=(("d", int),),
                   prefixed={"N": "n_roles", "s": "slices"}, defaults={"slices": 1}, check=_tpru,
                   family="tensor-product", label="TPRU", size="d", smallest=lambda s: s.get("slices") or 1,
                   step=lambda s: s.get("slices") or 1, cell=True, uses=("model.stack_lm",),
                   # embedding V d, the TPRU layer 6 d^2 + d + 2 (paper 002 Table 1 with d' = d), readout
                   count=lambda s, V, o: V * s["d"] + 6 * s["d"] ** 2 + s["d"] + 2 + (s["d"] + 1) * (o or V),
                   styles=(Style("tpru", PALETTE["tpru"], "P", (0, (4, 1.5))),)))
for _name, _cls, _doc, _marker, _dash in (("4.1", "NeuralMatrixLM", "neural", "o", "-"),
                                         ("4.2", "ProbabilisticMatrixLM", "direct probabilistic", "s", "--"),
                                         ("4.3", "WFSAMatrixLM", "continuous WFSA", "^", "-.")):
    register(ModelKind(_name, f"urnlib.models.matrix_embedding:{_cls}", "model.matrix_embedding",
                       f"paper 003 sec. {_name} {_doc} model over an algebra of d x d matrices",
                       positional=(("algebra", ("dense", "diagonal", "upper")), ("d", int)), family="matrix",
                       label=lambda s: f"{s['kind']} {s.get('algebra', '')}".strip(), size="d",
                       styles=(Style("matrix", PALETTE["matrix"], _marker, _dash),),
                       # V free entries of each word's matrix, and 4.3's d x V emissions (paper 003 sec. 4)
                       count=lambda s, V, o: V * {"dense": s["d"] ** 2, "diagonal": s["d"],
                                                  "upper": s["d"] * (s["d"] + 1) // 2}[s["algebra"]]
                       + (s["d"] * V if s["kind"] == "4.3" else 0)))
