"""Statistics of a split and the baselines that read only the surface of a pair: the heuristics H1-H3 and
a linear classifier on lengths, variable counts and overlap (:func:`surface_baseline`)."""

from __future__ import annotations

import numpy as np

from urnlib.languages.logic.examples import heuristics
from urnlib.languages.logic.formulas import (as_formula, collect_variables, length, num_operators, parse,
                                             to_string)
from urnlib.params import ParameterError

__all__ = ["split_statistics", "heuristic_accuracy", "SURFACE_FEATURES", "surface_features",
           "surface_baseline"]


def split_statistics(examples) -> dict:
    """Size, positive fraction, mean #vars of A and B together, mean 2^#vars (Evans et al.'s
    "Mean 2^#Vars"), mean operators per formula, and the heuristics' accuracies."""
    if not examples:
        raise ParameterError("examples must not be empty")
    nv, ops = [], []
    for ex in examples:
        a, b = parse(ex[0]), parse(ex[1])
        nv.append(len(collect_variables(b, collect_variables(a, set()))))
        ops.extend((num_operators(a), num_operators(b)))
    nv = np.array(nv)
    return {
        "count": len(examples),
        "positive": float(np.mean([ex[2] for ex in examples])),
        "mean_vars": float(nv.mean()),
        "max_vars": int(nv.max()),
        "mean_worlds": float(np.mean(2.0 ** nv)),
        "mean_ops": float(np.mean(ops)),
        "max_ops": int(max(ops)),
        **{f"acc_{k}": v for k, v in heuristic_accuracy(examples).items()},
    }


def heuristic_accuracy(examples) -> dict[str, float]:
    """Accuracy of predicting the label by H1, H2, H3 (recomputed from the formulas).

    Returns:
        ``{"h1": ..., "h2": ..., "h3": ...}``.
    """
    if not examples:
        raise ParameterError("examples must not be empty")
    hits = np.zeros(3)
    for ex in examples:
        hits += np.array(heuristics(ex[0], ex[1])) == int(ex[2])
    return dict(zip(("h1", "h2", "h3"), (hits / len(examples)).tolist()))


SURFACE_FEATURES = ("len_a", "len_b", "len_a-len_b", "vars_a", "vars_b", "shared_vars", "new_vars_b",
                    "ops_a", "ops_b", "neg_a", "neg_b", "h1", "h2", "h3")


def surface_features(examples) -> np.ndarray:
    """``(N, 14)`` surface features per pair (:data:`SURFACE_FEATURES`): lengths, variable counts
    and overlap, operator and negation counts, and H1-H3."""
    rows = []
    for ex in examples:
        a, b = as_formula(ex[0]), as_formula(ex[1])
        va, vb = collect_variables(a, set()), collect_variables(b, set())
        sa, sb = to_string(a), to_string(b)
        rows.append([length(a), length(b), length(a) - length(b), len(va), len(vb), len(va & vb),
                     len(vb - va), num_operators(a), num_operators(b), sa.count("~"), sb.count("~"),
                     *heuristics(a, b)])
    return np.array(rows, dtype=np.float64)


def surface_baseline(train, test) -> float:
    """Test accuracy of a linear classifier (least squares on standardised
    :func:`surface_features`, with pairwise products) fit on ``train``: a length/variable-overlap
    heuristic that should be near chance (0.5) on well-built data."""
    def design(x, mu=None, sd=None):
        if mu is None:
            mu, sd = x.mean(0), x.std(0) + 1e-9
        z = (x - mu) / sd
        i, j = np.triu_indices(z.shape[1])
        return np.hstack([np.ones((len(z), 1)), z, z[:, i] * z[:, j]]), mu, sd

    xtr, mu, sd = design(surface_features(train))
    ytr = 2.0 * np.array([ex[2] for ex in train]) - 1
    w = np.linalg.lstsq(xtr, ytr, rcond=None)[0]
    xte, _, _ = design(surface_features(test), mu, sd)
    yte = np.array([ex[2] for ex in test])
    return float(np.mean((xte @ w > 0) == (yte == 1)))
