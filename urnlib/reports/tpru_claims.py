"""The claims of the TPRU chapter (paper 002): each with the rule that decides it, fixed before the
paper-scale runs were looked at. Inputs as for :mod:`urnlib.reports.tpru` (whose tables show the same
numbers)."""

from __future__ import annotations

import numpy as np

from urnlib.claims import Claim, claim
from urnlib.reports.tpru import (
    CHAPTER,
    PAPER_TRAIN_SIZE,
    PMI_GAP,
    TEST_SPLITS,
    at_chance,
    format_params,
    main_tpru,
    mean_accuracy,
    mean_curve,
    model_spec,
    role_series,
    runs_of_kind,
    slice_pairs,
    top_two_gap,
    tpru_lm_run,
)
from urnlib.results import Run

__all__ = ["claims"]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _entailment_claims(ent_runs: dict[str, list[Run]]) -> list[Claim]:
    out = []
    gru = next(iter(runs_of_kind(ent_runs, "gru").items()), None)
    lstm = next(iter(runs_of_kind(ent_runs, "lstm").items()), None)
    top = main_tpru(ent_runs)
    chance = "; not testable when every accuracy compared is within 2 standard errors of 50%"
    if gru is not None and top is not None:
        t, g = ent_runs[top], gru[1]
        wins = [mean_accuracy(t, s) >= mean_accuracy(g, s) for s in ("hard", "big")]
        ours = ", ".join(
            f"{s}: {_pct(mean_accuracy(t, s))} vs {_pct(mean_accuracy(g, s))}" for s in ("hard", "big")
        )
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 2",
                "the TPRU is more accurate than the GRU on the hard and big test splits",
                "hard 88.4 vs 84.3, big 79.0 vs 77.0 (TPRU-512 vs GRU)",
                f"{top} vs {gru[0]}: {ours}",
                "TPRU mean accuracy >= GRU's on both splits (partly: on one)" + chance,
                None if at_chance([t, g], ("hard", "big")) else all(wins),
                partly=any(wins),
            )
        )
    if lstm is not None and top is not None:
        t, l_ = ent_runs[top], lstm[1]
        mt, ml = (float(np.mean([mean_accuracy(r, s) for s in TEST_SPLITS])) for r in (t, l_))
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 2",
                "the TPRU is comparable to the LSTM",
                "mean over the five test splits 74.9 vs 77.0",
                f"{top} {_pct(mt)} vs {lstm[0]} {_pct(ml)}",
                "mean test accuracies within 3 points" + chance,
                None if at_chance([t, l_], TEST_SPLITS) else abs(mt - ml) <= 0.03,
            )
        )
    if top is not None:
        t = ent_runs[top]
        n_train = t[0].params["task"]["train"]
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 2",
                "the accuracies themselves (e.g. LSTM valid 88.6%)",
                "84.3-88.6% on valid",
                f"{top}: valid {_pct(mean_accuracy(t, 'valid'))}%",
                f"not comparable: {PAPER_TRAIN_SIZE / n_train:.0f} times fewer training pairs, "
                f"{t[0].params['train']['epochs']} epochs, regenerated data",
                None,
            )
        )
    series = role_series(ent_runs)
    if len(series) >= 2:
        acc = [mean_accuracy(ent_runs[k], "valid") for k in series.values()]
        loss = [float(np.mean(mean_curve(ent_runs[k], "train_loss"))) for k in series.values()]
        ns = list(series)
        mono_acc = all(b >= a for a, b in zip(acc, acc[1:]))
        mono_loss = all(b <= a for a, b in zip(loss, loss[1:]))
        untestable = at_chance([ent_runs[k] for k in series.values()], ("valid",))
        out.append(
            claim(
                CHAPTER,
                "paper 002 sec. 6.3, Fig. 1",
                "more role vectors give better results",
                "better with more roles, parameters unchanged",
                "final validation accuracy by N: " + ", ".join(f"N={n}: {_pct(a)}" for n, a in zip(ns, acc)),
                "accuracy non-decreasing in N (partly: largest N above smallest)" + chance,
                None if untestable else mono_acc,
                partly=acc[-1] > acc[0],
            )
        )
        out.append(
            claim(
                CHAPTER,
                "paper 002 sec. 6.3, Fig. 1",
                "more role vectors give faster convergence",
                "training curves converge faster with more roles",
                "mean training loss over the epochs by N: "
                + ", ".join(f"N={n}: {x:.4f}" for n, x in zip(ns, loss)),
                "mean training loss over the epochs non-increasing in N (partly: largest N below smallest)",
                mono_loss,
                partly=loss[-1] < loss[0],
            )
        )
    if 8 in series and gru is not None:
        t8, g = ent_runs[series[8]], gru[1]
        diff = mean_accuracy(t8, "valid") - mean_accuracy(g, "valid")
        out.append(
            claim(
                CHAPTER,
                "paper 002 sec. 6.3",
                "a TPRU with only 8 roles matches the GRU",
                "matches (Fig. 1)",
                f"valid {_pct(mean_accuracy(t8, 'valid'))} vs {_pct(mean_accuracy(g, 'valid'))}",
                "validation accuracies within 2 points" + chance,
                None if at_chance([t8, g], ("valid",)) else abs(diff) <= 0.02,
            )
        )
    pairs = slice_pairs(ent_runs)
    if pairs:
        gains = {}
        for n, (single, multi) in pairs.items():
            s1, sm = ent_runs[single], ent_runs[multi]
            gains[n] = (
                float(np.mean(mean_curve(s1, "train_loss")) - np.mean(mean_curve(sm, "train_loss"))),
                float(mean_curve(sm, "train_acc")[-1] - mean_curve(s1, "train_acc")[-1]),
            )
        n0 = min(pairs)
        loss_gain, acc_gain = gains[n0]
        out.append(
            claim(
                CHAPTER,
                "paper 002 appendix E, Fig. 2",
                "several slices (filler vectors) converge faster "
                "and fit the training set better than one, when roles are few",
                "faster and better on the training set ('4 M' vs '4')",
                f"N={n0}: mean training loss lower by {loss_gain:+.4f}, final training accuracy higher by "
                f"{100 * acc_gain:+.1f} points with "
                f"{model_spec(ent_runs[pairs[n0][1]])['slices']} slices",
                "at the smallest N both gains > 0 (partly: one)",
                loss_gain > 0 and acc_gain > 0,
                partly=loss_gain > 0 or acc_gain > 0,
            )
        )
        if len(pairs) >= 2:
            n1 = max(pairs)
            out.append(
                claim(
                    CHAPTER,
                    "paper 002 appendix E, Fig. 2",
                    "the gain from slices shrinks as roles grow",
                    "the effect diminishes with many roles",
                    f"training-accuracy gain: N={n0}: {100 * gains[n0][1]:+.1f}, N={n1}: "
                    f"{100 * gains[n1][1]:+.1f} points",
                    "gain at the largest N < gain at the smallest N",
                    gains[n1][1] < gains[n0][1],
                )
            )
    return out


def _lm_claims(lm_runs: dict[str, Run]) -> list[Claim]:
    out = []
    tpru = next((r for k, r in lm_runs.items() if k.startswith("TPRU")), None)
    lstm = next((r for k, r in lm_runs.items() if k.startswith("LSTM")), None)
    if tpru is not None and lstm is not None:
        pt, pl = tpru.final["test_ppl"], lstm.final["test_ppl"]
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 4",
                "the TPRU's perplexity is similar to the LSTM's",
                "WikiText-103 41.4 vs 42.3, WikiText-2 76.8 vs 76.0",
                f"Brown test {pt:.1f} vs {pl:.1f}",
                "test perplexities within 10% of the LSTM's",
                abs(pt / pl - 1) <= 0.10,
            )
        )
        lt, ll = tpru.column("train_loss"), lstm.column("train_loss")
        every = all(a <= b for a, b in zip(lt, ll))
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 4 (right), sec. 6",
                "the TPRU converges faster on the training set than the LSTM",
                "lower training NLL throughout (WikiText-103)",
                "training NLL per epoch: " + ", ".join(f"{a:.3f} vs {b:.3f}" for a, b in zip(lt, ll)),
                "TPRU's training loss <= LSTM's in every epoch (partly: in the first)",
                every,
                partly=lt[0] <= ll[0],
            )
        )
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 4",
                "the perplexities themselves",
                "41.4 / 76.8 (WikiText)",
                f"{pt:.1f} (Brown)",
                "not comparable: WikiText is not reachable offline; another corpus, "
                "vocabulary and model size",
                None,
            )
        )
    run = tpru_lm_run(lm_runs)
    if run is not None:
        pmi = run.final["pmi"]
        ranked = [t for t, e in pmi["tags"].items() if len(e["top"]) >= 2]
        wide = [t for t in ranked if top_two_gap(pmi["tags"][t]) >= PMI_GAP]
        out.append(
            claim(
                CHAPTER,
                "paper 002 sec. 6.2, Table 5",
                "some POS tags have a role dedicated to them: the "
                f"top two PMI values differ by at least {PMI_GAP}",
                "7 of 17 tags (ADV, DET, INTJ, NOUN, PART, PROPN, VERB)",
                f"{len(wide)} of {len(ranked)} tags: {', '.join(wide) or 'none'}",
                "at least 7 tags (partly: at least one)",
                len(wide) >= 7,
                partly=len(wide) >= 1,
            )
        )
        mi, mi0 = pmi["mutual_information"], run.final["pmi_untrained"]["mutual_information"]
        out.append(
            claim(
                CHAPTER,
                "paper 002 sec. 6.2",
                "the roles the TPRU learns are informative about POS tags",
                "roles associated with tags after training on MNLI",
                f"I(role; tag) = {mi:.3f} nats trained, {mi0:.3f} untrained",
                "mutual information higher after training than before",
                mi > mi0,
            )
        )
    return out


def _check_claims(grad_rows: list[dict], t1_rows: list[dict], tol: float = 1e-8) -> list[Claim]:
    out = []
    if grad_rows:
        jmin = min(r["J_min_eig"] for r in grad_rows)
        jratio = max(r["J_max_eig_over_max_f"] for r in grad_rows)
        pmin = min(r["J_printed_min_eig"] for r in grad_rows)
        fb = max(r["max_f_b"] for r in grad_rows)
        corrected = jmin >= -tol and jratio <= 1 + tol
        printed = pmin >= -tol and fb <= 1 + tol
        out.append(
            claim(
                CHAPTER,
                "paper 002 sec. 4, appendix A",
                "J_t is positive semi-definite with eigenvalues at most max_n (f)_n <= 1",
                "proved (Jensen's inequality)",
                f"J_t from the normalised f_t: min eigenvalue {jmin:.1e}, max eigenvalue / max f "
                f"{jratio:.4f}; as printed (from f_b,t): min eigenvalue {pmin:.1f}, max f_b {fb:.1f}",
                f"min eigenvalue >= -{tol:g} and max eigenvalue <= max f (+{tol:g}) on every random step; "
                "reproduced if it holds for J_t as printed, partly if only for J_t from f_t",
                printed and corrected,
                partly=corrected,
            )
        )
        for eq, what in (
            ("eq8", "eq. 8 (d b~_t / d b_{t-1} = W_r E J_t N_t S_b,t E^T W_u^T V_b)"),
            ("eq7", "eq. 7 (d b_t / d b_{t-1} = Lambda_1 W_b + Lambda_2 d b~_t/d b_{t-1} + Lambda_3)"),
        ):
            printed_err = max(r[f"{eq}_printed"] for r in grad_rows)
            fixed_err = max(r[f"{eq}_corrected"] for r in grad_rows)
            fix = (
                "J_t built from f_t, S_b,t with the bias b_b"
                if eq == "eq8"
                else "also Lambda_1 = diag((b~_t - b_{t-1}) g_t (1 - g_t))"
            )
            out.append(
                claim(
                    CHAPTER,
                    f"paper 002 sec. 4, {'eq. 8' if eq == 'eq8' else 'eq. 7'}",
                    f"{what} as printed is the Jacobian",
                    "derived",
                    f"max |printed - autograd| = {printed_err:.3g}; corrected ({fix}): {fixed_err:.1e}",
                    f"max |printed - autograd| < {tol:g} (float64)",
                    printed_err < tol,
                )
            )
    if t1_rows:
        exact = all(r["formula"] == r["weights"] for r in t1_rows)
        out.append(
            claim(
                CHAPTER,
                "paper 002 Table 1",
                "the # Params formulas (4d^2 + 2dd', 4d^2 + 4dd', 3d^2 + 3dd')",
                "TPRU, LSTM, GRU",
                "built encoders: "
                + ", ".join(f"{r['kind']} d={r['d']} d'={r['d_in']}: {r['weights']:,}" for r in t1_rows),
                "weight-matrix entries of the built modules equal the formulas (biases not counted)",
                exact,
            )
        )
        base = [r for r in t1_rows if r["d"] == r["d_in"]]
        if base:
            r0 = min(base, key=lambda r: r["d"])
            tp, ls = (next(r for r in base if r["kind"] == k and r["d"] == r0["d"]) for k in ("tpru", "lstm"))
            out.append(
                claim(
                    CHAPTER,
                    "paper 002 sec. 3.3, Table 1",
                    "the TPRU has fewer parameters than the LSTM",
                    "6d^2 vs 8d^2 weights at d' = d",
                    f"d = {r0['d']}, two layers: {tp['total']:,} vs {ls['total']:,} (with biases)",
                    "exact counts of the built modules",
                    tp["total"] < ls["total"],
                )
            )
        narrow = [r for r in t1_rows if r["d_in"] < r["d"]]
        if narrow:
            r0 = narrow[0]
            tp, gr = (
                next(r for r in narrow if r["kind"] == k and (r["d"], r["d_in"]) == (r0["d"], r0["d_in"]))
                for k in ("tpru", "gru")
            )
            out.append(
                claim(
                    CHAPTER,
                    "paper 002 sec. 3.3",
                    "with d' < d the TPRU has fewer parameters than the GRU",
                    "\"when d' < d, the number of learnable parameters is less than that of a GRU\"",
                    f"d = {r0['d']}, d' = {r0['d_in']}, two layers: weights {tp['weights']:,} vs "
                    f"{gr['weights']:,} (with biases {tp['total']:,} vs {gr['total']:,}); by Table 1's own "
                    f"formulas 4d^2 + 2dd' < 3d^2 + 3dd' iff d < d'",
                    "weight-matrix entries of the built modules (what Table 1 counts)",
                    tp["weights"] < gr["weights"],
                )
            )
        printed = [r for r in t1_rows if r["paper"] is not None]
        if printed:
            ok = [abs(r["total"] / r["paper"] - 1) <= 0.01 for r in printed]
            out.append(
                claim(
                    CHAPTER,
                    "paper 002 Tables 2 and 4",
                    "the printed parameter counts",
                    ", ".join(
                        f"{r['kind'].upper()} {format_params(r['paper'])} ({r['paper_source']})"
                        for r in printed
                    ),
                    ", ".join(
                        f"{r['kind'].upper()} d={r['d']}: {format_params(r['total'])}" for r in printed
                    ),
                    "each within 1% of the built two-layer encoder (partly: some)",
                    all(ok),
                    partly=any(ok),
                )
            )
    return out


def claims(
    ent_runs: dict[str, list[Run]], lm_runs: dict[str, Run], grad_rows: list[dict], t1_rows: list[dict]
) -> list[Claim]:
    """The chapter's claims, decided by rules fixed before the paper-scale runs were looked at."""
    out = _entailment_claims(ent_runs) + _lm_claims(lm_runs) + _check_claims(grad_rows, t1_rows)
    out.append(
        claim(
            CHAPTER,
            "paper 002 Table 3",
            "the TPRU outperforms the LSTM on MNLI and QNLI",
            "e.g. MNLI matched 74.8 vs 73.4 (dim 512)",
            "not run",
            "MNLI, QNLI (and SNLI, ELMo) are not reachable offline",
            None,
        )
    )
    out.append(
        claim(
            CHAPTER,
            "paper 002 sec. 6.1, appendix D",
            "a role separates the senses of a polysemous word (bank)",
            "P(beta = beta_river | bank, river sense) = 1",
            "not run",
            "needs the MNLI dev set and fastText vectors, not reachable offline",
            None,
        )
    )
    return out
