"""The TPRU chapter's claims that need no training (paper 002 sec. 3.3, sec. 4, appendix A, Tables 1, 2 and
4), declared (:mod:`urnlib.declare`) as :data:`CHECKS`: the gradient analysis checked against autograd and the
parameter formulas against the built modules. A miss is the paper's own formula or count (cause ``paper``);
each claim quotes the sentence it decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from urnlib.chapters.tpru.report import CHAPTER, format_params
from urnlib.claims import Claim
from urnlib.declare import Measured, Spec, evaluate

__all__ = ["check_claims", "Checks", "CHECKS"]

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


@dataclass
class Checks:
    """What the checks read: the sec. 4 checks (``grad``:
    :func:`urnlib.chapters.tpru.checks.gradient_checks`), Table 1's (``t1``:
    :func:`urnlib.chapters.tpru.checks.table1_check`) and the tolerance of a float64 comparison."""

    grad: list[dict]
    t1: list[dict]
    tol: float = 1e-8


def check_claims(grad_rows: list[dict], t1_rows: list[dict], tol: float = 1e-8) -> list[Claim]:
    """The claims of the sec. 4 checks and of Table 1 (:class:`Checks`)."""
    return evaluate(CHAPTER, CHECKS, Checks(grad_rows, t1_rows, tol))


def _found(ours: str, holds: bool, partly: bool = False, check: str = "") -> Measured:
    """A check's result: no seeds, and a miss is the paper's own formula or count, with the check that shows
    it (``check``, in words) and what it found as the evidence."""
    return Measured(ours, holds, partly, rests=(), cause="paper", direction="",
                    evidence=f"{check}: {ours}" if check else ours)


def _psd(m: Checks) -> Measured | None:
    if not m.grad:
        return None
    jmin = min(r["J_min_eig"] for r in m.grad)
    jratio = max(r["J_max_eig_over_max_f"] for r in m.grad)
    pmin = min(r["J_printed_min_eig"] for r in m.grad)
    fb = max(r["max_f_b"] for r in m.grad)
    corrected = jmin >= -m.tol and jratio <= 1 + m.tol
    return _found(f"J_t from the normalised f_t: min eigenvalue {jmin:.1e}, max eigenvalue / max f "
                  f"{jratio:.4f}; as printed (from f_b,t): min eigenvalue {pmin:.1f}, max f_b {fb:.1f}",
                  pmin >= -m.tol and fb <= 1 + m.tol and corrected, corrected,
                  check=f"J_t on {len(m.grad)} settings of random TPRU steps in float64, as printed (from "
                  "f_b,t) and from the normalised f_t the text defines")


def _jacobian(eq: str, fix: str):
    """Eq. ``eq``'s Jacobian as printed against autograd (and corrected by ``fix``)."""
    def measure(m: Checks) -> Measured | None:
        if not m.grad:
            return None
        printed_err = max(r[f"{eq}_printed"] for r in m.grad)
        fixed_err = max(r[f"{eq}_corrected"] for r in m.grad)
        return _found(f"max |printed - autograd| = {printed_err:.3g}; corrected ({fix}): {fixed_err:.1e}",
                      printed_err < m.tol, check=f"eq. {eq[2:] if eq.startswith('eq') else eq} against "
                      f"autograd's Jacobian on {len(m.grad)} settings of random TPRU steps in float64")
    return measure


def _formulas(m: Checks) -> Measured | None:
    if not m.t1:
        return None
    return _found("built encoders: " + ", ".join(f"{r['kind']} d={r['d']} d'={r['d_in']}: {r['weights']:,}"
                                                 for r in m.t1),
                  all(r["formula"] == r["weights"] for r in m.t1),
                  check="Table 1's formulas against the weights of the encoders built here")


def _fewer_than_lstm(m: Checks) -> Measured | None:
    base = [r for r in m.t1 if r["d"] == r["d_in"]]
    if not base:
        return None
    r0 = min(base, key=lambda r: r["d"])
    tp, ls = (next(r for r in base if r["kind"] == k and r["d"] == r0["d"]) for k in ("tpru", "lstm"))
    return _found(f"d = {r0['d']}, two layers: {tp['total']:,} vs {ls['total']:,} (with biases)",
                  tp["total"] < ls["total"], check="the parameters of the encoders built here")


def _fewer_than_gru(m: Checks) -> Measured | None:
    narrow = [r for r in m.t1 if r["d_in"] < r["d"]]
    if not narrow:
        return None
    r0 = narrow[0]
    same = [r for r in narrow if (r["d"], r["d_in"]) == (r0["d"], r0["d_in"])]
    tp, gr = (next(r for r in same if r["kind"] == k) for k in ("tpru", "gru"))
    return _found(f"d = {r0['d']}, d' = {r0['d_in']}, two layers: weights {tp['weights']:,} vs "
                  f"{gr['weights']:,} (with biases {tp['total']:,} vs {gr['total']:,}); by Table 1's own "
                  "formulas 4d^2 + 2dd' < 3d^2 + 3dd' iff d < d'", tp["weights"] < gr["weights"],
                  check="the weights of the encoders built here, and Table 1's own formulas")


def _printed(m: Checks) -> Measured | None:
    printed = [r for r in m.t1 if r["paper"] is not None]
    if not printed:
        return None
    # the printed precision: one decimal of k or m (a count printed "49.1k" lies within 100 of 49,100)
    ok = [min(abs(r["weights"] - r["paper"]), abs(r["total"] - r["paper"]))
          < (1e5 if r["paper"] >= 1e6 else 100) for r in printed]
    return Measured(", ".join(f"{r['kind'].upper()} d={r['d']}: {r['weights']:,} weights, {r['total']:,} "
                              "with biases" for r in printed), all(ok), any(ok), rests=(), cause="paper",
                    direction="", evidence="the printed counts against the encoders built here, at the "
                    "printed precision: " + ", ".join(f"{r['kind'].upper()} d={r['d']} printed "
                                              f"{format_params(r['paper'])}, built {r['weights']:,} weights "
                                              f"({r['total']:,} with biases)" for r in printed),
                    paper=", ".join(f"{r['kind'].upper()} {format_params(r['paper'])} ({r['paper_source']})"
                                    for r in printed))


CHECKS = [
    Spec("paper 002 sec. 4, appendix A",
         "J_t is positive semi-definite with eigenvalues at most max_n (f)_n <= 1", QUOTES["psd"],
         "proved (Jensen's inequality)", "check",
         lambda m: f"min eigenvalue >= -{m.tol:g} and max eigenvalue <= max f (+{m.tol:g}) on every random "
                   "step; reproduced if it holds for J_t as printed, partly if only for J_t from f_t",
         NOT_TRAINED, _psd),
    Spec("paper 002 sec. 4, eq. 8",
         "eq. 8 (d b~_t / d b_{t-1} = W_r E J_t N_t S_b,t E^T W_u^T V_b) as printed is the Jacobian",
         QUOTES["eq8"], "derived", "check",
         lambda m: f"max |printed - autograd| < {m.tol:g} (float64)", NOT_TRAINED,
         _jacobian("eq8", "J_t built from f_t, S_b,t with the bias b_b")),
    Spec("paper 002 sec. 4, eq. 7", "eq. 7 (d b_t / d b_{t-1} = Lambda_1 W_b + Lambda_2 d b~_t/d b_{t-1} + "
         "Lambda_3) as printed is the Jacobian", QUOTES["eq7"], "derived", "check",
         lambda m: f"max |printed - autograd| < {m.tol:g} (float64)", NOT_TRAINED,
         _jacobian("eq7", "also Lambda_1 = diag((b~_t - b_{t-1}) g_t (1 - g_t))")),
    Spec("paper 002 Table 1, column # Params",
         "the # Params formulas (4d^2 + 2dd', 4d^2 + 4dd', 3d^2 + 3dd')", QUOTES["table1"],
         "TPRU, LSTM, GRU", "check",
         "weight-matrix entries of the built modules equal the formulas (biases not counted)", NOT_TRAINED,
         _formulas),
    Spec("paper 002 sec. 3.3, Table 1", "the TPRU has fewer parameters than the LSTM", QUOTES["lstm"],
         "6d^2 vs 8d^2 weights at d' = d", "check", "exact counts of the built modules", NOT_TRAINED,
         _fewer_than_lstm),
    Spec("paper 002 sec. 3.3", "with d' < d the TPRU has fewer parameters than the GRU", QUOTES["gru"],
         "\"when d' < d, the number of learnable parameters is less than that of a GRU\"", "check",
         "weight-matrix entries of the built modules (what Table 1 counts)", NOT_TRAINED, _fewer_than_gru),
    Spec("paper 002 Tables 2 and 4, column # params", "the printed parameter counts", QUOTES["printed"], "",
         "check", "the built two-layer encoder's count (weights, or with biases) within one unit of the "
         "printed count's last digit (0.1k, 0.1m); partly: some", NOT_TRAINED, _printed),
]
