"""How many directions the entailment encoders' sentence vectors use: a diagnostic of the TPRU chapter,
measured on the stored runs' weights (no training; seconds).

A one-slice TPRU's candidate state ``R f_t`` (eqs. 4-5, ``R = W_r E`` of shape ``d x N``) lies in the span of
R's N columns; the state ``b_t = b_{t-1} + g_t (R f_t - b_{t-1})`` leaves that span only through the
element-wise gate ``g_t``, so with few roles a layer's states stay near an N-dimensional subspace of its d
dimensions (with ``s`` slices, appendix E, each slice has its own ``(d/s) x N`` block). The GRU and LSTM have
no such structure. :func:`feature_spread` measures what the classifier receives: the max-pooled premise
vectors ``u`` of :meth:`urnlib.models.entailment.EntailmentModel.encode` over freshly generated pairs, at
initialisation and after training, as a participation ratio (how many directions carry the variance) and the
share of the variance in the first direction.
"""

from __future__ import annotations

import torch

from urnlib.experiments import tpru_entailment as ent
from urnlib.languages import logic
from urnlib.params import check_int
from urnlib.seeds import Seeds

__all__ = ["FEATURE_PAIRS", "participation", "feature_spread"]

FEATURE_PAIRS = 800  #: generated pairs (validation distribution) on which the sentence vectors are measured


def participation(features: torch.Tensor) -> tuple[float, float]:
    """``(participation ratio, share of the first direction)`` of the variance of ``features`` (n, d) over its
    rows: with ``lambda_i`` the variances along the principal directions, ``(sum lambda)^2 / sum lambda^2``
    (1 when one direction carries all of it, k for k equal directions) and ``lambda_1 / sum lambda``.
    Features that do not vary give ``(0.0, nan)``."""
    centred = features.double() - features.double().mean(0)
    var = torch.linalg.svdvals(centred) ** 2
    total = float(var.sum())
    if total <= 1e-24 * max(1, centred.numel()):
        return 0.0, float("nan")
    return total ** 2 / float((var ** 2).sum()), float(var[0]) / total


def _premise_vectors(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.eval().encode(x)[0]


def feature_spread(groups: dict[str, Seeds], *, pairs: int = FEATURE_PAIRS, seed: int = 0) -> list[dict]:
    """One row per encoder label of ``groups`` (its runs, one per seed, with weights): per seed, the
    :func:`participation` of its premise vectors at initialisation (the run's own seed, before training) and
    trained (its stored weights: the best epoch's), and the training loss of its last epoch.

    Args:
        groups: ``{label: Seeds}`` of :mod:`urnlib.experiments.tpru_entailment` runs.
        pairs: pairs generated (validation distribution, :func:`urnlib.languages.logic.generate_dataset` with
            ``seed``) on which the vectors are measured.
        seed: the generator's seed.
    """
    check_int("pairs", pairs, minimum=4)
    counts = dict.fromkeys(ent.GENERATED, 4) | {"valid": pairs - pairs % 4}
    x = logic.encode_packed(logic.generate_dataset(counts, seed=seed)["valid"])
    rows = []
    for label, runs in groups.items():
        row = {"model": label, "d": runs[0].params["model"]["d"], "seeds": list(runs.seeds), "init": [],
               "trained": [], "train_loss": []}
        for run in runs:
            params = run.params
            initial = ent.build_classifier(params["model"], ent.Architecture(**params["architecture"]),
                                           params["train"]["seed"])
            row["init"].append(participation(_premise_vectors(initial, x)))
            row["trained"].append(participation(_premise_vectors(ent.rebuild_classifier(run), x)))
            row["train_loss"].append(run.final["train_loss"])
        rows.append(row)
    return rows
