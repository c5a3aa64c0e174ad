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

from urnlib.chapters.tpru import entailment as ent
from urnlib.languages import logic
from urnlib.params import check_int
from urnlib.seeds import Seeds

__all__ = ["FEATURE_PAIRS", "participation", "feature_spread", "role_use", "filler_use"]

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


def _pairs(pairs: int, seed: int) -> torch.Tensor:
    counts = dict.fromkeys(ent.GENERATED, 4) | {"valid": pairs - pairs % 4}
    return logic.encode_packed(logic.generate_dataset(counts, seed=seed)["valid"])


def role_use(model: torch.nn.Module, x: torch.Tensor) -> tuple[float, float]:
    """How the top TPRU layer of ``model`` (an entailment classifier) uses its roles on the premises of ``x``:
    ``(top role, input dependence)``. *Top role*: the share of the premise symbols whose most selected role
    (argmax of the fillers ``f_t``, eq. 4) is the role most often selected (1/N when all roles are selected
    equally often, 1 when one role takes every symbol); with slices, per slice, averaged. *Input dependence*:
    the standard deviation of each filler ``(f_t)_n`` over the symbols, averaged over the roles (and slices):
    0 when the fillers ignore the input."""
    with torch.no_grad():
        model = model.eval()
        premise, mask, _, _ = model.split(x)
        _, f = model.encoder(model.embedding(premise), return_fillers=True)  # (B, T, N) or (B, T, s, N)
    f = f[mask]  # (symbols, N) or (symbols, s, N)
    if f.dim() == 2:
        f = f[:, None]
    winners = f.argmax(-1)  # (symbols, s)
    n_roles = f.shape[-1]
    top = torch.stack([torch.bincount(winners[:, k], minlength=n_roles).max() for k in range(f.shape[1])])
    return float(top.double().mean() / f.shape[0]), float(f.std(0).mean())


def filler_use(groups: dict[str, Seeds], *, pairs: int = FEATURE_PAIRS, seed: int = 0) -> list[dict]:
    """One row per TPRU label of ``groups``: per seed, :func:`role_use` at initialisation (the run's own seed,
    before training) and trained (its stored weights), on ``pairs`` generated validation-distribution pairs
    (as :func:`feature_spread`); ``bias`` the scalar biases ``b_b, b_x`` of the top layer, trained."""
    check_int("pairs", pairs, minimum=4)
    x = _pairs(pairs, seed)
    rows = []
    for label, runs in groups.items():
        if runs[0].params["model"]["kind"] != "tpru":
            continue
        row = {"model": label, "seeds": list(runs.seeds), "init": [], "trained": [], "bias": []}
        for run in runs:
            params = run.params
            initial = ent.build_classifier(params["model"], ent.Architecture(**params["architecture"]),
                                           params["train"]["seed"])
            trained = ent.rebuild_classifier(run)
            row["init"].append(role_use(initial, x))
            row["trained"].append(role_use(trained, x))
            top = trained.encoder.cells[-1]
            row["bias"].append((top.b_b.item(), top.b_x.item()))
        rows.append(row)
    return rows


def _premise_vectors(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.eval().encode(x)[0]


def feature_spread(groups: dict[str, Seeds], *, pairs: int = FEATURE_PAIRS, seed: int = 0) -> list[dict]:
    """One row per encoder label of ``groups`` (its runs, one per seed, with weights): per seed, the
    :func:`participation` of its premise vectors at initialisation (the run's own seed, before training) and
    trained (its stored weights: the best epoch's), and the training loss of its last epoch.

    Args:
        groups: ``{label: Seeds}`` of :mod:`urnlib.chapters.tpru.entailment` runs.
        pairs: pairs generated (validation distribution, :func:`urnlib.languages.logic.generate_dataset` with
            ``seed``) on which the vectors are measured.
        seed: the generator's seed.
    """
    check_int("pairs", pairs, minimum=4)
    x = _pairs(pairs, seed)
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
