"""The TPRU chapter's claims that need no training (paper 002 sec. 3.3, sec. 4, appendix A, Tables 1, 2 and
4): the gradient analysis checked against autograd and the parameter formulas against the built modules. A
miss is the paper's own formula or count (cause ``paper``); each claim quotes the sentence it decides.
"""

from __future__ import annotations

from urnlib.claims import Claim, claim
from urnlib.chapters.tpru.report import CHAPTER, format_params

__all__ = ["check_claims"]

NOT_TRAINED = "- (not trained)"
#: the sentences the checks decide, word for word from paper 002 (the PDF's text)
QUOTES = {
    "psd": r"Appendix A shows that \mathbf{J}_t is a positive semi-definite matrix, and its eigenvalues are "
           r"all smaller than $\max_n (\mathbf{f}_{b,t})_n \leq 1$.",
    "eq8": "Now we focus on the following derivative which carries the main information of our proposed "
           "TPRU.",
    "eq7": "For our TPRU, the derivative is shown below:",
    "table1": "Table 1: Complexity",
    "lstm": "the number of parameters in our TPRU is fewer than in an LSTM",
    "gru": "when $d' < d$, the number of learnable parameters is less than that of a GRU.",
    "printed": "Accuracy of each model on the propositional Logical Entailment task. / Perplexity of "
               "language modelling on WikiText-2 and WikiText-103.",
}


def _check(out: list, *args, quote: str, partly: bool = False) -> None:
    """A claim measured without training (no seeds); a miss is the paper's own formula or count."""
    out.append(claim(CHAPTER, *args, partly=partly, cause="paper", quote=quote, epoch=NOT_TRAINED))


def check_claims(grad_rows: list[dict], t1_rows: list[dict], tol: float = 1e-8) -> list[Claim]:
    """The claims of the sec. 4 checks (``grad_rows``: :func:`urnlib.chapters.tpru.checks.gradient_checks`)
    and of Table 1 (``t1_rows``: :func:`urnlib.chapters.tpru.checks.table1_check`)."""
    out: list[Claim] = []
    if grad_rows:
        jmin = min(r["J_min_eig"] for r in grad_rows)
        jratio = max(r["J_max_eig_over_max_f"] for r in grad_rows)
        pmin = min(r["J_printed_min_eig"] for r in grad_rows)
        fb = max(r["max_f_b"] for r in grad_rows)
        corrected = jmin >= -tol and jratio <= 1 + tol
        _check(out, "paper 002 sec. 4, appendix A",
               "J_t is positive semi-definite with eigenvalues at most max_n (f)_n <= 1",
               "proved (Jensen's inequality)",
               f"J_t from the normalised f_t: min eigenvalue {jmin:.1e}, max eigenvalue / max f "
               f"{jratio:.4f}; as printed (from f_b,t): min eigenvalue {pmin:.1f}, max f_b {fb:.1f}",
               f"min eigenvalue >= -{tol:g} and max eigenvalue <= max f (+{tol:g}) on every random step; "
               "reproduced if it holds for J_t as printed, partly if only for J_t from f_t",
               pmin >= -tol and fb <= 1 + tol and corrected, quote=QUOTES["psd"], partly=corrected)
        for eq, what, fix in (
            ("eq8", "eq. 8 (d b~_t / d b_{t-1} = W_r E J_t N_t S_b,t E^T W_u^T V_b)",
             "J_t built from f_t, S_b,t with the bias b_b"),
            ("eq7", "eq. 7 (d b_t / d b_{t-1} = Lambda_1 W_b + Lambda_2 d b~_t/d b_{t-1} + Lambda_3)",
             "also Lambda_1 = diag((b~_t - b_{t-1}) g_t (1 - g_t))"),
        ):
            printed_err = max(r[f"{eq}_printed"] for r in grad_rows)
            fixed_err = max(r[f"{eq}_corrected"] for r in grad_rows)
            _check(out, f"paper 002 sec. 4, eq. {eq[2]}", f"{what} as printed is the Jacobian", "derived",
                   f"max |printed - autograd| = {printed_err:.3g}; corrected ({fix}): {fixed_err:.1e}",
                   f"max |printed - autograd| < {tol:g} (float64)", printed_err < tol, quote=QUOTES[eq])
    if t1_rows:
        _check(out, "paper 002 Table 1, column # Params",
               "the # Params formulas (4d^2 + 2dd', 4d^2 + 4dd', 3d^2 + 3dd')", "TPRU, LSTM, GRU",
               "built encoders: " + ", ".join(f"{r['kind']} d={r['d']} d'={r['d_in']}: {r['weights']:,}"
                                              for r in t1_rows),
               "weight-matrix entries of the built modules equal the formulas (biases not counted)",
               all(r["formula"] == r["weights"] for r in t1_rows), quote=QUOTES["table1"])
        base = [r for r in t1_rows if r["d"] == r["d_in"]]
        if base:
            r0 = min(base, key=lambda r: r["d"])
            tp, ls = (next(r for r in base if r["kind"] == k and r["d"] == r0["d"]) for k in ("tpru", "lstm"))
            _check(out, "paper 002 sec. 3.3, Table 1", "the TPRU has fewer parameters than the LSTM",
                   "6d^2 vs 8d^2 weights at d' = d",
                   f"d = {r0['d']}, two layers: {tp['total']:,} vs {ls['total']:,} (with biases)",
                   "exact counts of the built modules", tp["total"] < ls["total"], quote=QUOTES["lstm"])
        narrow = [r for r in t1_rows if r["d_in"] < r["d"]]
        if narrow:
            r0 = narrow[0]
            same = [r for r in narrow if (r["d"], r["d_in"]) == (r0["d"], r0["d_in"])]
            tp, gr = (next(r for r in same if r["kind"] == k) for k in ("tpru", "gru"))
            _check(out, "paper 002 sec. 3.3", "with d' < d the TPRU has fewer parameters than the GRU",
                   "\"when d' < d, the number of learnable parameters is less than that of a GRU\"",
                   f"d = {r0['d']}, d' = {r0['d_in']}, two layers: weights {tp['weights']:,} vs "
                   f"{gr['weights']:,} (with biases {tp['total']:,} vs {gr['total']:,}); by Table 1's own "
                   "formulas 4d^2 + 2dd' < 3d^2 + 3dd' iff d < d'",
                   "weight-matrix entries of the built modules (what Table 1 counts)",
                   tp["weights"] < gr["weights"], quote=QUOTES["gru"])
        printed = [r for r in t1_rows if r["paper"] is not None]
        if printed:
            # the printed precision: one decimal of k or m (a count printed "49.1k" lies within 100 of 49,100)
            ok = [min(abs(r["weights"] - r["paper"]), abs(r["total"] - r["paper"]))
                  < (1e5 if r["paper"] >= 1e6 else 100) for r in printed]
            _check(out, "paper 002 Tables 2 and 4, column # params", "the printed parameter counts",
                   ", ".join(f"{r['kind'].upper()} {format_params(r['paper'])} ({r['paper_source']})"
                             for r in printed),
                   ", ".join(f"{r['kind'].upper()} d={r['d']}: {r['weights']:,} weights, {r['total']:,} with "
                             "biases" for r in printed),
                   "the built two-layer encoder's count (weights, or with biases) within one unit of the "
                   "printed count's last digit (0.1k, 0.1m); partly: some", all(ok), quote=QUOTES["printed"],
                   partly=any(ok))
    return out
