"""Statistics of a split and the baselines that read only the surface of a pair: the heuristics H1-H3 and
a linear classifier on lengths, variable counts and overlap (:func:`surface_baseline`); the profile of a
split (:func:`split_profile`) and the comparison of the released files with the generated splits of the
same names (:func:`released_vs_generated`, :func:`profile_table`)."""

from __future__ import annotations

import numpy as np

from urnlib.languages.logic.examples import heuristics
from urnlib.languages.logic.files import load_original_split
from urnlib.languages.logic.formulas import (as_formula, collect_variables, length, num_operators, parse,
                                             to_string)
from urnlib.languages.logic.generation import generate_dataset
from urnlib.params import ParameterError

__all__ = ["split_statistics", "heuristic_accuracy", "SURFACE_FEATURES", "surface_features",
           "surface_baseline", "PROFILE_SPLITS", "split_profile", "compare_profiles", "profile_table",
           "released_vs_generated"]


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


# ---- the released files against the generator (Evans et al. 2018; paper 002 Table 2's splits) ----------

#: the splits both the released files and the generator have, in Table 2's order
PROFILE_SPLITS = ("valid", "easy", "hard", "big", "massive", "exam")


def _summary(values) -> dict:
    """Mean, min, max, the 10/50/90 % quantiles and the histogram ``{value: count}`` of integer counts."""
    a = np.asarray(values, dtype=np.int64)
    return {"mean": float(a.mean()), "min": int(a.min()), "max": int(a.max()),
            "quantiles": {q: float(np.quantile(a, q / 100)) for q in (10, 50, 90)},
            "histogram": {int(k): int(c) for k, c in enumerate(np.bincount(a)) if c}}


def split_profile(examples) -> dict:
    """What a split is made of: operators per formula and distinct variables per pair, and how well the
    heuristics H1-H3 predict its labels.

    H1-H3 are the heuristic columns of Evans et al.'s files (their README; :func:`heuristics`): H1 =
    length(A) >= length(B), H2 = vars(B) within vars(A), H3 = the literals of B's negation normal form
    within A's; each predicts "A entails B" when it is 1. Its accuracy is the fraction of pairs where it
    equals the label E (0.5 = no better than chance on a balanced split).

    Args:
        examples: :class:`Entailment` lines (or ``(A, B, E, H1, H2, H3)`` tuples); ``(A, B, E)`` triples
            have no heuristic columns.

    Returns:
        ``count``; ``positive`` (fraction with E = 1); ``ops``: operators per formula (A and B each
        counted; Evans et al.'s "complexity") and ``vars``: distinct variables of A and B together, each
        ``{"mean", "min", "max", "quantiles": {10, 50, 90}, "histogram": {value: count}}``;
        ``mean_worlds``: mean 2^#vars (Table 2's "Mean 2^#Vars"); ``heuristics``: accuracy of H1-H3
        recomputed from the formulas; ``columns``: accuracy of the H1-H3 columns as written (None for
        triples); ``agreement``: fraction of lines whose column equals the recomputed value (None for
        triples).
    """
    if not examples:
        raise ParameterError("examples must not be empty")
    ops, nv, labels, recomputed, columns = [], [], [], [], []
    for ex in examples:
        a, b = parse(ex[0]), parse(ex[1])
        ops.extend((num_operators(a), num_operators(b)))
        nv.append(len(collect_variables(b, collect_variables(a, set()))))
        labels.append(int(ex[2]))
        recomputed.append(heuristics(a, b))
        if len(ex) == 6:
            columns.append([int(v) for v in ex[3:6]])
    y, rec = np.array(labels), np.array(recomputed)
    col = np.array(columns) if len(columns) == len(examples) else None
    names = ("h1", "h2", "h3")

    def per_heuristic(values):
        return dict(zip(names, np.asarray(values, dtype=float).tolist()))

    return {
        "count": len(examples),
        "positive": float(y.mean()),
        "ops": _summary(ops),
        "vars": _summary(nv),
        "mean_worlds": float(np.mean(2.0 ** np.array(nv))),
        "heuristics": per_heuristic((rec == y[:, None]).mean(0)),
        "columns": None if col is None else per_heuristic((col == y[:, None]).mean(0)),
        "agreement": None if col is None else per_heuristic((col == rec).mean(0)),
    }


def compare_profiles(released: dict, generated: dict) -> list[dict]:
    """Rows ``{"split", "source", **profile}`` (source ``"released"`` then ``"generated"``) for the
    splits of :data:`PROFILE_SPLITS` found in both ``{split: split_profile(...)}`` tables."""
    rows = []
    for split in PROFILE_SPLITS:
        if split in released and split in generated:
            rows.append({"split": split, "source": "released", **released[split]})
            rows.append({"split": split, "source": "generated", **generated[split]})
    return rows


def profile_table(rows) -> str:
    """A Markdown table of :func:`compare_profiles` rows: size, operators and variables (mean, 10/50/90 %
    quantiles, max), mean 2^#vars, and H1-H3 accuracy (recomputed; the file's columns in brackets where
    they differ)."""
    head = ("| split | source | n | ops mean | ops q10/q50/q90 | ops max | vars mean | vars q10/q50/q90 | "
            "vars max | mean 2^#vars | H1 | H2 | H3 |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]

    def q(summary):
        return "/".join(f"{v:g}" for v in summary["quantiles"].values())

    for r in rows:
        acc = []
        for h in ("h1", "h2", "h3"):
            cell = f"{r['heuristics'][h]:.3f}"
            if r["columns"] is not None and abs(r["columns"][h] - r["heuristics"][h]) > 5e-4:
                cell += f" ({r['columns'][h]:.3f})"
            acc.append(cell)
        ops, nv = r["ops"], r["vars"]
        cells = [r["split"], r["source"], r["count"], f"{ops['mean']:.2f}", q(ops), ops["max"],
                 f"{nv['mean']:.2f}", q(nv), nv["max"], f"{r['mean_worlds']:,.1f}", *acc]
        out.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(out) + "\n"


def released_vs_generated(*, seed: int = 0, counts: dict | None = None, limit: int | None = None,
                          root=None) -> list[dict]:
    """Profile the released files (shipped, :func:`~urnlib.languages.logic.load_original_split`) and
    urnlib's generated splits of the same names (:func:`~urnlib.languages.logic.generate_dataset`), for
    :func:`profile_table`.

    Args:
        seed: the generator's seed.
        counts: split -> number of generated examples (default: the released file's size, rounded down
            to a multiple of 4); ``exam`` is always the hand-made set.
        limit: profile only the first ``limit`` lines of each released file (default: all).
        root: a folder of released files (default: the shipped copy).
    """
    released = {s: load_original_split(root, s)[:limit] for s in PROFILE_SPLITS}
    sizes = {s: len(released[s]) - len(released[s]) % 4 for s in PROFILE_SPLITS if s != "exam"}
    sizes.update(counts or {})
    generated = generate_dataset(counts={"train": 0, **sizes}, seed=seed)
    return compare_profiles({s: split_profile(ex) for s, ex in released.items()},
                            {s: split_profile(generated[s]) for s in PROFILE_SPLITS})
