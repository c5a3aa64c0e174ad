"""The claims of the TPRU chapter (paper 002), declared (:mod:`urnlib.declare`): one
:class:`~urnlib.declare.Spec` per claim, each with a small measure on the runs. Inputs as for
:mod:`urnlib.chapters.tpru.report` (whose tables show the same numbers); the language-model claims are in
:mod:`urnlib.chapters.tpru.claims_lm`, the checks that need no training in
:mod:`urnlib.chapters.tpru.claims_checks`, what they share in :mod:`urnlib.chapters.tpru.claims_rules`.

Every trained measure is a :class:`~urnlib.seeds.Stat` over a model's seeds, taken at each run's best
validation epoch (the runs keep that epoch's weights) unless the claim speaks of a training curve (then the
epochs every run trained); the rules are :mod:`urnlib.rules`'. The claims on Table 2 read the accuracy on
Evans et al.'s released validation and test files (the paper's own test data,
:mod:`urnlib.chapters.tpru.report_released`), not on the generated splits.

Tolerances come from the paper's own numbers: "comparable" and "matches" allow the gap Table 2 calls
comparable (TPRU - 512 2.1 points below the LSTM on the mean of the five test splits), "similar perplexity"
the largest relative gap of Table 4 (2.2%).

**A model that did not train is no evidence.** An entailment encoder trained when its best validation accuracy
is off chance over its seeds (:func:`urnlib.rules.off_chance` against
:func:`urnlib.chapters.tpru.report.chance_bar` of the validation split: 50% plus two standard errors, or the
split's best surface baseline where higher); a claim resting on one that did not is inconclusive with cause
``untrained``, its ``ours`` naming the model and its seeds at chance, and its ``settle`` the retrain that
investigates the collapse (the ablation of the initialisation, the normalisation and the training). Where
every model a claim rests on trained, the rule decides, whatever the test splits show: an encoder near chance
on *hard* after training is a result, not a failure to train. A language model trained when its test
perplexity is below the vocabulary's size (a uniform guess).
"""

from __future__ import annotations

from urnlib import rules
from urnlib.chapters.tpru.claims_checks import check_claims
from urnlib.chapters.tpru.claims_epochs import epochs_cause
from urnlib.chapters.tpru.claims_lm import lm_claims
from urnlib.chapters.tpru.claims_rules import (CHAPTER, COMPARABLE, EPOCH, QUOTES as Q, TRAINED_RULE,
                                               Ablation, Entailment, paired, settle_for,
                                               untrained, within)
from urnlib.chapters.tpru.report import (PAPER_TABLE2, common_epochs, mean_train_loss, model_spec, pct,
                                         train_fit, valid_accuracy)
from urnlib.chapters.tpru.report_released import released_test_accuracy
from urnlib.chapters.tpru.report_scaled import fewer_pairs, table2_basis
from urnlib.claims import Claim
from urnlib.corpora.shipped import not_shipped
from urnlib.declare import Measured, Spec, evaluate
from urnlib.statements import trend
from urnlib.seeds import Seeds

__all__ = ["claims", "untrained", "TABLE2", "ACCURACIES", "FIGURES", "NOT_RUN"]

HARD_BIG = ("hard", "big")
NOT_TRAINED = "- (not trained)"


def claims(ent_runs: dict[str, Seeds], lm_runs: dict[str, Seeds], grad_rows: list[dict],
           t1_rows: list[dict], released, ablation: Ablation | None = None,
           scaled: dict[str, Seeds] | None = None,
           lm_sizes: dict[int, dict[str, Seeds]] | None = None) -> list[Claim]:
    """The chapter's claims (``ent_runs``, ``lm_runs``: ``{label: Seeds}``; ``released``: the entailment runs'
    scores on Evans et al.'s released files, :func:`urnlib.chapters.tpru.released.released_results`;
    ``ablation``: :func:`urnlib.chapters.tpru.report_ablation.groups`, which the untrained claims' settle
    texts read), decided by rules fixed before the paper-scale runs were looked at (those on Table 2 moved
    from the generated test splits to the released files, the paper's own data, once those were scored). The
    claims that set the TPRU against the GRU and the LSTM on Table 2 decide on ``scaled`` (the runs on a
    larger training set, scored in ``released`` too) where it is complete, and say so
    (:func:`urnlib.chapters.tpru.report_scaled.table2_basis`); the other claims read the main runs."""
    basis, words = table2_basis(ent_runs, scaled)
    t2 = Entailment(basis, released, ablation or {}, words)
    main = Entailment(ent_runs, released, ablation or {})
    return (evaluate(CHAPTER, TABLE2, t2, seeds=t2.seeds, idle=t2.idle)
            + evaluate(CHAPTER, ACCURACIES, t2, seeds=t2.seeds)  # against the printed numbers: no guard
            + evaluate(CHAPTER, FIGURES, main, seeds=main.seeds, idle=main.idle)
            + lm_claims(lm_runs, lm_sizes) + check_claims(grad_rows, t1_rows)
            + evaluate(CHAPTER, NOT_RUN, None))


def _gru(m: Entailment) -> Measured | None:
    if m.gru is None or m.top is None:
        return None
    parts = [rules.compare(m.acc(m.top, s), m.acc(m.gru, s), names=("TPRU", "GRU")) for s in HARD_BIG]
    return Measured(
        f"{m.basis}{m.top} vs {m.gru}, released files: "
        + "; ".join(f"{s}: {pct(m.acc(m.top, s))} vs {pct(m.acc(m.gru, s))}" for s in HARD_BIG),
        parts, rests=[m.top, m.gru], settle=m.settle([m.top, m.gru]),
        direction="; ".join(f"released {s}: {p.direction}" for s, p in zip(HARD_BIG, parts)))


def _lstm(m: Entailment) -> Measured | None:
    if m.lstm is None or m.top is None:
        return None
    at, am = released_test_accuracy(m.released, m.top), released_test_accuracy(m.released, m.lstm)
    near = within(at, am, COMPARABLE, names=("TPRU", "LSTM"))
    return Measured(f"{m.basis}mean over the five released test files: {m.top} {pct(at)} vs {m.lstm} "
                    f"{pct(am)}", near, rests=[m.top, m.lstm], direction=f"released files: {near.direction}",
                    settle=m.settle([m.top, m.lstm]))


def _accuracies(m: Entailment) -> Measured | None:
    """Each model's released-validation accuracy against its printed row (the paper's number, no tolerance of
    ours): decided on the seeds, every model at once."""
    if m.top is None:
        return None
    train = m.ent[m.top][0].params["task"]["train"]
    shown = [k for k in (m.top, m.gru, m.lstm) if k is not None]
    paper = {m.top: "TPRU - 512", m.gru: "GRU", m.lstm: "LSTM"}  # each model's row of Table 2

    def behind(k: str) -> str:  # how far below the paper's valid accuracy, in points (no tolerance)
        gap = PAPER_TABLE2[paper[k]]["valid"] - 100 * m.acc(k, "valid").mean
        return f"{k} {abs(gap):.1f} points {'below' if gap > 0 else 'above'} the paper's {paper[k]}"

    below = [k for k in shown if 100 * m.acc(k, "valid").mean < PAPER_TABLE2[paper[k]]["valid"]]
    cause, evidence = epochs_cause(m.ent, paper, below)
    return Measured(
        f"{m.basis}released validate.txt: " + "; ".join(f"{k} {pct(m.acc(k, 'valid'))}" for k in shown)
        + f" (trained on {fewer_pairs(train)} by our re-implementation of Evans et al.'s generator: their "
        "training file is not released)",
        [rules.threshold(m.acc(k, "valid"), PAPER_TABLE2[paper[k]]["valid"] / 100, name=k) for k in shown],
        rests=shown, direction="; ".join(behind(k) for k in shown), cause=cause, evidence=evidence,
        settle=settle_for(m.ent, m.ablation, [], shown))


def _not_run(settle: str, *needs: str):
    return lambda m: Measured("not run", None, rests=(), cause="data", direction="", settle=settle,
                              evidence=not_shipped(*needs))


TABLE2 = [
    Spec("paper 002 Table 2", "the TPRU is more accurate than the GRU on the hard and big test splits",
         Q["gru"], "hard 88.4 vs 84.3, big 79.0 vs 77.0 (TPRU-512 vs GRU)", "beats",
         f"TPRU better on both released files (partly: on one); {TRAINED_RULE}", EPOCH, _gru),
    Spec("paper 002 Table 2", "the TPRU is comparable to the LSTM", Q["lstm"],
         f"mean over the five test splits 74.9 vs 77.0: the TPRU {100 * COMPARABLE:.1f} points behind",
         "within", f"the TPRU not behind the LSTM by more than the {100 * COMPARABLE:.1f} points Table 2 "
         f"calls comparable; {TRAINED_RULE}", EPOCH, _lstm),
]
ACCURACIES = [
    Spec("paper 002 Table 2, the valid column", "the accuracies themselves (e.g. LSTM valid 88.6%)",
         Q["table2"], "84.3-88.6% on valid", "vs-number", "each model at least its printed valid accuracy",
         EPOCH, _accuracies),
]
def _series(m: Entailment) -> tuple[list[int], list[str], tuple[str, str]]:
    ns, labels = list(m.series), list(m.series.values())
    return ns, labels, (f"N={ns[-1]}", f"N={ns[0]}")


def _series_epochs(m: Entailment) -> int:
    """The epochs every run of Fig. 1's TPRUs trained."""
    return common_epochs(*(m.ent[k] for k in m.series.values())) if len(m.series) >= 2 else 0


def _few_roles(m: Entailment) -> list[str]:
    """Fig. 2's pair at the fewest roles: one slice, several."""
    return list(m.pairs[min(m.pairs)]) if m.pairs else []


def _slice_epochs(m: Entailment) -> int:
    return common_epochs(*(m.ent[k] for k in _few_roles(m))) if m.pairs else 0


def _roles_better(m: Entailment) -> Measured | None:
    if len(m.series) < 2:
        return None
    ns, labels, names = _series(m)
    acc = [valid_accuracy(m.ent[k]) for k in labels]
    decision = trend(list(zip(ns, acc)), rising=True, what="best validation accuracy")
    return Measured("best validation accuracy by N: "
                    + "; ".join(f"N={n}: {pct(a)}" for n, a in zip(ns, acc)), decision,
                    rests=labels, settle=m.settle(labels))


def _roles_faster(m: Entailment) -> Measured | None:
    if len(m.series) < 2:
        return None
    ns, labels, names = _series(m)
    epochs = _series_epochs(m)
    loss = [mean_train_loss(m.ent[k], epochs) for k in labels]
    decision = trend(list(zip(ns, loss)), rising=False, what="mean training loss")
    return Measured(f"mean training loss over the first {epochs} epochs by N: "
                    + "; ".join(f"N={n}: {x.text(4)}" for n, x in zip(ns, loss)),
                    decision, rests=labels, settle=m.settle(labels))


def _eight(m: Entailment) -> Measured | None:
    if 8 not in m.series or m.gru is None:
        return None
    t8, g = valid_accuracy(m.ent[m.series[8]]), valid_accuracy(m.ent[m.gru])
    return Measured(f"best validation accuracy {pct(t8)} vs {pct(g)}",
                    rules.matches(t8, g, COMPARABLE, names=("TPRU N=8", "GRU")), rests=[m.series[8], m.gru],
                    settle=m.settle([m.series[8], m.gru]))


def _slices(m: Entailment) -> Measured | None:
    if not m.pairs:
        return None
    labels = _few_roles(m)
    single, multi = (m.ent[k] for k in labels)
    epochs = _slice_epochs(m)
    loss = (mean_train_loss(multi, epochs), mean_train_loss(single, epochs))
    fit = (train_fit(multi), train_fit(single))
    parts = [rules.compare(*loss, higher=False, names=("slices", "one")),
             rules.compare(*fit, names=("slices", "one"))]
    return Measured(
        f"N={min(m.pairs)}, {model_spec(multi)['slices']} slices vs one: mean training loss over {epochs} "
        f"epochs {loss[0].text(4)} vs {loss[1].text(4)}; best training accuracy {pct(fit[0])} vs "
        f"{pct(fit[1])}",
        parts, rests=labels, settle=m.settle(labels),
        direction=f"loss: {parts[0].direction}; accuracy: {parts[1].direction}")


def _best_train_gain(multi, one) -> float:
    return max(multi.column("train_acc")) - max(one.column("train_acc"))


def _shrinks(m: Entailment) -> Measured | None:
    if len(m.pairs) < 2:
        return None
    n0, n1 = min(m.pairs), max(m.pairs)
    gains = {n: paired(m.ent[m.pairs[n][1]], m.ent[m.pairs[n][0]], _best_train_gain) for n in (n0, n1)}
    labels = [*m.pairs[n0], *m.pairs[n1]]
    return Measured(f"gain in best training accuracy from slices: N={n0}: {gains[n0].text(3)}, N={n1}: "
                    f"{gains[n1].text(3)}",
                    rules.compare(gains[n0], gains[n1], names=(f"gain at N={n0}", f"gain at N={n1}")),
                    rests=labels, settle=m.settle(labels))


FIGURES = [
    Spec("paper 002 sec. 6.3, Fig. 1", "more role vectors give better results", Q["roles"],
         "better with more roles, parameters unchanged", "trend",
         f"best validation accuracy higher at every step to the next N; {TRAINED_RULE}", EPOCH,
         _roles_better),
    Spec("paper 002 sec. 6.3, Fig. 1", "more role vectors give faster convergence", Q["roles"],
         "training curves converge faster with more roles", "trend",
         f"mean training loss lower at every step to the next N; {TRAINED_RULE}",
         lambda m: f"epochs 1-{_series_epochs(m)} (the training curve every run trained)", _roles_faster),
    Spec("paper 002 sec. 6.3", "a TPRU with only 8 roles matches the GRU", Q["eight"], "matches (Fig. 1)",
         "matches", f"within the {100 * COMPARABLE:.1f} points Table 2 calls comparable, either way (Fig. 1 "
         f"prints no number); {TRAINED_RULE}", EPOCH, _eight),
    Spec("paper 002 appendix E, Fig. 2",
         "several slices (filler vectors) converge faster and fit the training set better than one, when "
         "roles are few", Q["slices"], "faster and better on the training set ('4 M' vs '4')", "beats",
         f"at the smallest N both lower loss and higher accuracy (partly: one); {TRAINED_RULE}",
         lambda m: f"epochs 1-{_slice_epochs(m)} (loss) and the best epoch on the training pairs (accuracy)",
         _slices),
    Spec("paper 002 appendix E, Fig. 2", "the gain from slices shrinks as roles grow", Q["shrinks"],
         "the effect diminishes with many roles", "beats",
         f"gain at the smallest N beats the gain at the largest; {TRAINED_RULE}",
         "the best epoch on the training pairs", _shrinks),
]


NOT_RUN = [
    Spec("paper 002 Table 3", "the TPRU outperforms the LSTM on MNLI and QNLI", Q["table3"],
         "e.g. MNLI matched 74.8 vs 73.4 (dim 512)", "check",
         "MNLI, QNLI (and SNLI, ELMo) are not reachable offline", NOT_TRAINED,
         _not_run("MNLI and QNLI with ELMo (not reachable here), encoders of dimension 512-1500",
                  "MNLI", "QNLI", "ELMo")),
    Spec("paper 002 sec. 6.1, appendix D", "a role separates the senses of a polysemous word (bank)",
         Q["bank"], "P(beta = beta_river | bank, river sense) = 1", "check",
         "needs the MNLI dev set and fastText vectors, not reachable offline", NOT_TRAINED,
         _not_run("MNLI (train and dev) and fastText vectors (not reachable here)", "MNLI", "fastText")),
]
