"""The claims of the TPRU chapter (paper 002), each with the rule that decides it, fixed before the
paper-scale runs were looked at. Inputs as for :mod:`urnlib.reports.tpru` (whose tables show the same
numbers).

Every trained measure is a :class:`~urnlib.seeds.Stat` over a model's seeds, taken at each run's best
validation epoch unless the claim speaks of a training curve (then the whole curve the runs share); the rules
are :mod:`urnlib.rules`'. A comparison of entailment models is decided only when *both* sides are off chance
(mean - sd above 50% plus two standard errors of the split: :func:`urnlib.reports.tpru.off_chance`); a side at
chance makes it "not testable here" with cause ``open`` (a difference within the seeds' spread: ``noise``).
Not ``scale``: the paper's Figs. 1-2 show four roles learning, and here whether a few-role TPRU leaves chance
depends on its seed (the chapter shows the collapse of its sentence vectors), so the reason is not known.
"""

from __future__ import annotations

import numpy as np

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.reports.tpru import (
    CHANCE_TEXT,
    CHAPTER,
    PAPER_TRAIN_SIZE,
    PMI_GAP,
    TEST_SPLITS,
    common_epochs,
    dedicated_tags,
    format_params,
    main_tpru,
    mean_train_loss,
    model_spec,
    off_chance,
    pct,
    role_series,
    runs_of_kind,
    slice_pairs,
    split_accuracy,
    test_accuracy,
    tpru_lm_runs,
    train_fit,
    valid_accuracy,
)
from urnlib.seeds import Seeds, Stat

__all__ = ["claims"]


def _add(out: list, source: str, statement: str, paper: str, ours: str, rule: str, holds, seeds: int,
         partly: bool = False, *, guard: bool = True, cause: str | None = None) -> None:
    """A claim on trained runs: a failed chance ``guard`` makes it not testable (cause ``open``), an
    undecided rule too (cause ``noise``)."""
    if not guard:
        holds, partly, cause = None, False, "open"
    out.append(claim(CHAPTER, source, statement, paper, ours, rule, holds, partly, seeds=seeds,
                     cause=cause or ("noise" if holds is None else None)))


def _n(*groups: Seeds) -> int:
    return min(len(g) for g in groups)


def _paired(a: Seeds, b: Seeds, fn) -> Stat:
    """``fn(run_a, run_b)`` of the runs of equal seed position (the two models' seeds in order)."""
    return Stat.of(fn(ra, rb) for ra, rb in zip(a, b))


def _test_mean(run) -> float:
    return float(np.mean([run.final["accuracy"][s] for s in TEST_SPLITS]))


def _fit_gain(multi, single) -> float:  # the gain in best training accuracy from slices, one seed
    return max(multi.column("train_acc")) - max(single.column("train_acc"))


def _trend(stats: list[Stat], higher: bool) -> tuple[bool | None, bool]:
    """More is better along ``stats`` (ordered by N): the last beats the first (:func:`rules.beats`), and no
    earlier one beats a later neighbour; ``(holds, partly)``."""
    ends = rules.beats(stats[-1], stats[0], higher=higher)
    reversed_ = any(rules.beats(a, b, higher=higher) for a, b in zip(stats, stats[1:]))
    if ends and reversed_:
        return False, True
    return ends, False


def _entailment_claims(ent: dict[str, Seeds]) -> list[Claim]:
    out: list[Claim] = []
    gru = next(iter(runs_of_kind(ent, "gru")), None)
    lstm = next(iter(runs_of_kind(ent, "lstm")), None)
    top = main_tpru(ent)
    if gru is not None and top is not None:
        parts, guards, texts = [], [], []
        for s in ("hard", "big"):
            a, b = split_accuracy(ent[top], s), split_accuracy(ent[gru], s)
            guards.append(off_chance({top: a, gru: b}, ent, s))
            parts.append(rules.beats(a, b) if guards[-1] else None)
            texts.append(f"{s}: {pct(a)} vs {pct(b)}")
        holds, partly = rules.combine(parts)
        _add(out, "paper 002 Table 2",
             "the TPRU is more accurate than the GRU on the hard and big test splits",
             "hard 88.4 vs 84.3, big 79.0 vs 77.0 (TPRU-512 vs GRU)", f"{top} vs {gru}: " + "; ".join(texts),
             f"TPRU better on both splits, best epochs ({rules.BEATS_RULE}; partly: on one); {CHANCE_TEXT}",
             holds, _n(ent[top], ent[gru]), partly,
             cause="open" if not all(guards) and holds is None else None)
    if lstm is not None and top is not None:
        t, m = ent[top], ent[lstm]
        diff = _paired(t, m, lambda a, b: abs(_test_mean(a) - _test_mean(b)))
        at, am = test_accuracy(t), test_accuracy(m)
        _add(out, "paper 002 Table 2", "the TPRU is comparable to the LSTM",
             "mean over the five test splits 74.9 vs 77.0",
             f"{top} {pct(at)} vs {lstm} {pct(am)}; |difference| per seed {diff.text(3)}",
             f"|difference| of the mean test accuracies <= 0.03 ({rules.THRESHOLD_RULE}); {CHANCE_TEXT}",
             rules.at_most(diff, 0.03), _n(t, m),
             guard=all(off_chance({k: test_accuracy(ent[k])}, ent, "hard") for k in (top, lstm)))
    if top is not None:
        t = ent[top]
        train = t[0].params["task"]["train"]
        _add(out, "paper 002 Table 2", "the accuracies themselves (e.g. LSTM valid 88.6%)",
             "84.3-88.6% on valid",
             f"{top}: valid {pct(valid_accuracy(t))}%",
             f"not comparable: {PAPER_TRAIN_SIZE / train:.0f} times fewer training pairs, regenerated data",
             None, len(t), cause="scale")
    series = role_series(ent)
    if len(series) >= 2:
        ns, labels = list(series), list(series.values())
        ends = {labels[0]: None, labels[-1]: None}
        acc = [valid_accuracy(ent[k]) for k in labels]
        holds, partly = _trend(acc, higher=True)
        _add(out, "paper 002 sec. 6.3, Fig. 1", "more role vectors give better results",
             "better with more roles, parameters unchanged",
             "validation accuracy (best epoch) by N: "
             + "; ".join(f"N={n}: {pct(a)}" for n, a in zip(ns, acc)),
             f"largest N beats smallest ({rules.BEATS_RULE}), no smaller N beats the next (else partly); "
             + CHANCE_TEXT, holds, _n(*(ent[k] for k in labels)), partly,
             guard=off_chance({k: valid_accuracy(ent[k]) for k in ends}, ent, "valid"))
        epochs = common_epochs(*(ent[k] for k in labels))
        loss = [mean_train_loss(ent[k], epochs) for k in labels]
        holds, partly = _trend(loss, higher=False)
        _add(out, "paper 002 sec. 6.3, Fig. 1", "more role vectors give faster convergence",
             "training curves converge faster with more roles",
             f"mean training loss over the first {epochs} epochs (all runs) by N: "
             + "; ".join(f"N={n}: {x.text(4)}" for n, x in zip(ns, loss)),
             f"largest N lower than smallest ({rules.BEATS_RULE}), no smaller N lower than the next (else "
             f"partly); both ends' best accuracy on the training pairs off chance ({rules.CHANCE_RULE})",
             holds, _n(*(ent[k] for k in labels)), partly,
             guard=off_chance({k: train_fit(ent[k]) for k in ends}, ent, None))
    if 8 in series and gru is not None:
        t8, g = ent[series[8]], ent[gru]
        diff = _paired(t8, g, lambda a, b: abs(max(a.column("valid_acc")) - max(b.column("valid_acc"))))
        _add(out, "paper 002 sec. 6.3", "a TPRU with only 8 roles matches the GRU", "matches (Fig. 1)",
             f"valid {pct(valid_accuracy(t8))} vs {pct(valid_accuracy(g))}; |difference| per seed "
             f"{diff.text(3)}",
             f"|difference| of the validation accuracies <= 0.02 ({rules.THRESHOLD_RULE}); " + CHANCE_TEXT,
             rules.at_most(diff, 0.02), _n(t8, g),
             guard=off_chance({series[8]: valid_accuracy(t8), gru: valid_accuracy(g)}, ent, "valid"))
    out += _slice_claims(ent)
    return out


def _slice_claims(ent: dict[str, Seeds]) -> list[Claim]:
    out: list[Claim] = []
    pairs = slice_pairs(ent)
    if not pairs:
        return out
    fit_rule = f"best accuracy on the training pairs off chance ({rules.CHANCE_RULE})"
    n0 = min(pairs)
    single, multi = (ent[k] for k in pairs[n0])
    epochs = common_epochs(single, multi)
    loss = (mean_train_loss(multi, epochs), mean_train_loss(single, epochs))
    fit = (train_fit(multi), train_fit(single))
    holds, partly = rules.combine([rules.beats(*loss, higher=False), rules.beats(*fit)])
    s = model_spec(multi)["slices"]
    _add(out, "paper 002 appendix E, Fig. 2",
         "several slices (filler vectors) converge faster and fit the training set better than one, when "
         "roles are few", "faster and better on the training set ('4 M' vs '4')",
         f"N={n0}, {s} slices vs one: mean training loss over {epochs} epochs {loss[0].text(4)} vs "
         f"{loss[1].text(4)}; best training accuracy {pct(fit[0])} vs {pct(fit[1])}",
         f"at the smallest N both lower loss and higher accuracy ({rules.BEATS_RULE}; partly: one); both "
         "sides' " + fit_rule, holds, _n(single, multi), partly,
         guard=off_chance(dict(zip(pairs[n0][::-1], fit)), ent, None))
    if len(pairs) >= 2:
        n1 = max(pairs)
        gains = {n: _paired(ent[pairs[n][1]], ent[pairs[n][0]], _fit_gain) for n in (n0, n1)}
        labels = [*pairs[n0], *pairs[n1]]
        _add(out, "paper 002 appendix E, Fig. 2", "the gain from slices shrinks as roles grow",
             "the effect diminishes with many roles",
             f"gain in best training accuracy from slices: N={n0}: {gains[n0].text(3)}, N={n1}: "
             f"{gains[n1].text(3)}",
             f"gain at the smallest N beats the gain at the largest ({rules.BEATS_RULE}); all four models' "
             + fit_rule, rules.beats(gains[n0], gains[n1]), _n(*(ent[k] for k in labels)),
             guard=off_chance({k: train_fit(ent[k]) for k in labels}, ent, None))
    return out


def _lm_claims(lm: dict[str, Seeds]) -> list[Claim]:
    out: list[Claim] = []
    tpru = next((v for k, v in lm.items() if k.startswith("TPRU")), None)
    lstm = next((v for k, v in lm.items() if k.startswith("LSTM")), None)
    if tpru is not None and lstm is not None:
        n = _n(tpru, lstm)
        pt, pl = tpru.final("test_ppl"), lstm.final("test_ppl")
        ratio = _paired(tpru, lstm, lambda a, b: abs(a.final["test_ppl"] / b.final["test_ppl"] - 1))
        _add(out, "paper 002 Table 4", "the TPRU's perplexity is similar to the LSTM's",
             "WikiText-103 41.4 vs 42.3, WikiText-2 76.8 vs 76.0",
             f"Brown test {pt.text(1)} vs {pl.text(1)} (best epochs); |ratio - 1| per seed {ratio.text(3)}",
             f"|TPRU / LSTM - 1| <= 0.10 ({rules.THRESHOLD_RULE})", rules.at_most(ratio, 0.10), n)

        def gap(a, b) -> float:  # the LSTM's training loss minus the TPRU's, over the epochs both trained
            k = min(len(a.history), len(b.history))
            return float(np.mean(np.subtract(b.column("train_loss")[:k], a.column("train_loss")[:k])))

        gaps = _paired(tpru, lstm, gap)
        _add(out, "paper 002 Table 4 (right), sec. 6",
             "the TPRU converges faster on the training set than the LSTM",
             "lower training NLL throughout (WikiText-103)",
             f"LSTM minus TPRU training NLL, mean over the epochs both trained: {gaps.text(3)}",
             f"that gap > 0, whole curve ({rules.PAIRED_RULE})", rules.positive(gaps), n)
        _add(out, "paper 002 Table 4", "the perplexities themselves", "41.4 / 76.8 (WikiText)",
             f"{pt.text(1)} (Brown)", "not comparable: WikiText is not reachable offline; another corpus, "
             "vocabulary and model size", None, n, cause="data")
    seeds = tpru_lm_runs(lm)
    if seeds is not None:
        wide = seeds.stat(lambda run: len(dedicated_tags(run.final["pmi"])[0]))
        first, ranked = dedicated_tags(seeds[0].final["pmi"])
        holds = rules.at_least(wide, 7)
        _add(out, "paper 002 sec. 6.2, Table 5",
             "some POS tags have a role dedicated to them: the top two PMI values differ by at least "
             f"{PMI_GAP}",
             "7 of 17 tags (ADV, DET, INTJ, NOUN, PART, PROPN, VERB)",
             f"tags per seed {wide.text(1)}; seed {seeds.seeds[0]}: {len(first)} of {ranked} "
             f"({', '.join(first) or 'none'})",
             f"at least 7 tags ({rules.THRESHOLD_RULE}; partly: at least 1)",
             holds, len(seeds), partly=holds is False and rules.at_least(wide, 1) is True)
        mi = seeds.stat(lambda r: r.final["pmi"]["mutual_information"] - r.final["pmi_untrained"]
                        ["mutual_information"])
        _add(out, "paper 002 sec. 6.2", "the roles the TPRU learns are informative about POS tags",
             "roles associated with tags after training on MNLI",
             f"I(role; tag) trained minus untrained, per seed: {mi.text(3)} nats",
             f"difference > 0 ({rules.PAIRED_RULE})", rules.positive(mi), len(seeds))
    return out


def _check(out: list, *args, partly: bool = False) -> None:
    """A claim measured without training (no seeds); a miss is the paper's own formula or count."""
    out.append(claim(CHAPTER, *args, partly=partly, cause="paper"))


def _check_claims(grad_rows: list[dict], t1_rows: list[dict], tol: float = 1e-8) -> list[Claim]:
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
               pmin >= -tol and fb <= 1 + tol and corrected, partly=corrected)
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
                   f"max |printed - autograd| < {tol:g} (float64)", printed_err < tol)
    if t1_rows:
        _check(out, "paper 002 Table 1", "the # Params formulas (4d^2 + 2dd', 4d^2 + 4dd', 3d^2 + 3dd')",
               "TPRU, LSTM, GRU",
               "built encoders: " + ", ".join(f"{r['kind']} d={r['d']} d'={r['d_in']}: {r['weights']:,}"
                                              for r in t1_rows),
               "weight-matrix entries of the built modules equal the formulas (biases not counted)",
               all(r["formula"] == r["weights"] for r in t1_rows))
        base = [r for r in t1_rows if r["d"] == r["d_in"]]
        if base:
            r0 = min(base, key=lambda r: r["d"])
            tp, ls = (next(r for r in base if r["kind"] == k and r["d"] == r0["d"]) for k in ("tpru", "lstm"))
            _check(out, "paper 002 sec. 3.3, Table 1", "the TPRU has fewer parameters than the LSTM",
                   "6d^2 vs 8d^2 weights at d' = d",
                   f"d = {r0['d']}, two layers: {tp['total']:,} vs {ls['total']:,} (with biases)",
                   "exact counts of the built modules", tp["total"] < ls["total"])
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
                   tp["weights"] < gr["weights"])
        printed = [r for r in t1_rows if r["paper"] is not None]
        if printed:
            ok = [abs(r["total"] / r["paper"] - 1) <= 0.01 for r in printed]
            _check(out, "paper 002 Tables 2 and 4", "the printed parameter counts",
                   ", ".join(f"{r['kind'].upper()} {format_params(r['paper'])} ({r['paper_source']})"
                             for r in printed),
                   ", ".join(f"{r['kind'].upper()} d={r['d']}: {format_params(r['total'])}" for r in printed),
                   "each within 1% of the built two-layer encoder (partly: some)", all(ok), partly=any(ok))
    return out


def claims(ent_runs: dict[str, Seeds], lm_runs: dict[str, Seeds], grad_rows: list[dict],
           t1_rows: list[dict]) -> list[Claim]:
    """The chapter's claims (``ent_runs``, ``lm_runs``: ``{label: Seeds}``), decided by rules fixed before the
    paper-scale runs were looked at."""
    out = _entailment_claims(ent_runs) + _lm_claims(lm_runs) + _check_claims(grad_rows, t1_rows)
    out.append(claim(CHAPTER, "paper 002 Table 3", "the TPRU outperforms the LSTM on MNLI and QNLI",
                     "e.g. MNLI matched 74.8 vs 73.4 (dim 512)", "not run",
                     "MNLI, QNLI (and SNLI, ELMo) are not reachable offline", None, cause="data"))
    out.append(claim(CHAPTER, "paper 002 sec. 6.1, appendix D",
                     "a role separates the senses of a polysemous word (bank)",
                     "P(beta = beta_river | bank, river sense) = 1", "not run",
                     "needs the MNLI dev set and fastText vectors, not reachable offline", None,
                     cause="data"))
    return out
