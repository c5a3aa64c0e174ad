"""TRANSITIONAL: the components of runs made by chapters not yet moved to :mod:`urnlib.runner`.

Deleted when every chapter builds :class:`~urnlib.results.RunSpec` itself.
"""

from __future__ import annotations

from typing import Any

__all__ = ["legacy_components"]

_DATA = {
    "urnlib.experiments.dyck": ["data.dyck"],
    "urnlib.experiments.dyck_ablations": ["data.dyck"],
    "urnlib.experiments.cross_serial": ["data.cross_serial"],
    "urnlib.experiments.agreement": ["data.agreement_grammar", "data.agreement_offline", "data.linzen"],
    "urnlib.experiments.primer_lm": ["data.brown_stream"],
    "urnlib.experiments.primer_elman": ["data.elman"],
    "urnlib.experiments.primer_anbn": ["data.anbn"],
    "urnlib.experiments.tpru_entailment": ["data.logic"],
    "urnlib.experiments.tpru_lm": ["data.brown_stream"],
    "urnlib.experiments.matrix_embeddings": ["data.text_corpus", "data.analogy"],
    "urnlib.experiments.urn_lm": ["data.text_corpus", "data.analogy"],
}
_MODELS = {"urn": "model.urn", "arbitrary": "model.arbitrary", "lstm": "model.lstm", "srn": "model.srn",
           "gru": "model.gru", "nnlm": "model.nnlm", "kneser-ney": "model.kneser_ney", "tpru": "model.tpru",
           "4.1": "model.matrix_embedding", "4.2": "model.matrix_embedding", "4.3": "model.matrix_embedding",
           "word2vec": "model.word2vec"}


def legacy_components(code_module: str | None, params: dict[str, Any]) -> tuple[str, ...]:
    """``train.loop``, the module's data and experiment components, and the model kind's component."""
    if code_module is None:
        return ("train.loop",)
    short = code_module.rsplit(".", 1)[-1]
    experiment = {"dyck_ablations": "dyck"}.get(short, short)
    names = {"train.loop", f"experiment.{experiment}", *_DATA.get(code_module, [])}
    model = params.get("model", {}) if isinstance(params.get("model"), dict) else {}
    kind = model.get("kind") or model.get("encoder", {}).get("kind") if isinstance(model, dict) else None
    if kind in _MODELS:
        names.add(_MODELS[kind])
    if code_module.endswith("tpru_entailment"):
        names |= {"model.entailment", "model.tpru", "model.lstm"}
    if code_module.endswith("tpru_lm"):
        names |= {"model.stack_lm", "model.tpru"}
    return tuple(sorted(names))
