"""The agreement chapter's ``more_seeds``: seeds that train only some models of one source, beside the
chapter's ``seeds`` (every model of every source), so that one more seed of the model a claim rests on does
not retrain the whole chapter.

``more_seeds`` is ``{}`` (none) or ``{source: {model label: [seed, ...]}}``, e.g.
``{offline: {3-TURN: [7]}}``: the 3-TURN on the ``offline`` source also at seed 7, at the chapter's main
setting (the second learning rate, the small-vocabulary variant and the size trends keep ``seeds``). A seed
there fixes the data, initialisation, data order and dropout masks as a seed of ``seeds`` does.
"""

from __future__ import annotations

from typing import Any

from urnlib.params import ParameterError
from urnlib.seeds import check_seeds

__all__ = ["EXAMPLE", "check_more_seeds", "seeds_of_source", "trains"]

EXAMPLE = "{offline: {3-TURN: [7]}} (the 3-TURN on the offline source also at seed 7; {} for none)"


def check_more_seeds(value: Any, *, sources: list[str], labels: list[str], seeds: list[int],
                     preset: bool = False) -> dict:
    """``more_seeds`` with only the sources of ``sources`` and the model labels of ``labels``, each with seeds
    not in the chapter's ``seeds``. A ``preset``'s own value may name a source or model the reader's changes
    removed (``sources: [synthetic]``): that entry is left out; one the reader passed must name them.

    Raises:
        ParameterError: naming ``more_seeds[...]`` and what to write.
    """
    if not isinstance(value, dict):
        raise ParameterError(f"more_seeds={value!r} must be a mapping, e.g. {EXAMPLE}")
    kept: dict = {}
    for source, models in value.items():
        where = f"more_seeds[{source!r}]"
        if not isinstance(models, dict) or not models:
            raise ParameterError(f"{where}={models!r} must be a non-empty mapping of model labels to seeds, "
                                 f"e.g. {EXAMPLE}")
        if source not in sources:
            if preset:
                continue
            raise ParameterError(f"{where}: no source {source!r}; the sources are {sources}")
        for label, extra in models.items():
            if label not in labels:
                if preset:
                    continue
                raise ParameterError(f"{where}[{label!r}]: no model {label!r}; the models are {labels}")
            check_seeds(extra, name=f"{where}[{label!r}]")
            twice = sorted(set(extra) & set(seeds))
            if twice:
                raise ParameterError(f"{where}[{label!r}]={extra} repeats seeds of `seeds` ({twice}): list "
                                     "only the seeds beside them")
            kept.setdefault(source, {})[label] = list(extra)
    return kept


def seeds_of_source(value: dict, source: str, seeds: list[int]) -> list[int]:
    """Every seed a model of ``source`` trains on: ``seeds``, then the others of ``more_seeds`` in order."""
    extra = sorted({s for more in value.get(source, {}).values() for s in more})
    return [*seeds, *(s for s in extra if s not in seeds)]


def trains(value: dict, source: str, label: str, seed: int, seeds: list[int]) -> bool:
    """Whether model ``label`` of ``source`` trains at ``seed``: every model at ``seeds``, the others only
    where ``more_seeds`` lists them."""
    return seed in seeds or seed in value.get(source, {}).get(label, [])
