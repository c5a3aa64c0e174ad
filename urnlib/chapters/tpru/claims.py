"""The claims of the TPRU chapter (paper 002), each with the paper's sentence it decides, the epoch it reads
and the rule that decides it. Inputs as for :mod:`urnlib.chapters.tpru.report` (whose tables show the same
numbers); the checks that need no training are in :mod:`urnlib.chapters.tpru.claims_checks`.

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

from collections.abc import Sequence

import numpy as np

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.chapters.tpru.report import (
    CHAPTER,
    PAPER_LM,
    PAPER_TABLE2,
    PAPER_TRAIN_SIZE,
    PMI_GAP,
    chance_bar,
    common_epochs,
    dedicated_tags,
    main_tpru,
    mean_train_loss,
    model_spec,
    pct,
    role_series,
    runs_of_kind,
    slice_pairs,
    tpru_lm_runs,
    train_fit,
    valid_accuracy,
)
from urnlib.chapters.tpru.report_ablation import settle_collapse
from urnlib.chapters.tpru.claims_checks import check_claims
from urnlib.chapters.tpru.report_released import released_accuracy, released_test_accuracy
from urnlib.chapters.tpru.report_scaled import fewer_pairs, settle_at_size, table2_basis
from urnlib.reports.common import cpu_hours as _cpu_hours
from urnlib.chapters.tpru.claims_rules import (
    COMPARABLE,
    EPOCH,
    LM_TRAINED_RULE,
    QUOTES as Q,
    SIMILAR,
    add as _add,
    least as _n,
    matches as _matches,
    paired as _paired,
    within as _within,
)
from urnlib.seeds import Seeds, Stat

__all__ = ["claims", "untrained"]

#: :func:`urnlib.chapters.tpru.report_ablation.groups`: encoder -> setting -> its runs
Ablation = dict[str, dict[str, Seeds]]

def untrained(ent: dict[str, Seeds], labels: Sequence[str]) -> list[str]:
    """Of ``labels``, the entailment encoders that did not train (best validation accuracy not off chance over
    the seeds), each as ``"<label> (seeds s, t at chance: best validation accuracy a%, b%, below c%)"``."""
    out = []
    for k in labels:
        seeds, bar = ent[k], chance_bar(ent[k], "valid")
        if rules.off_chance(bar, valid_accuracy(seeds)):
            continue
        best = [(s, max(r.column("valid_acc"))) for s, r in zip(seeds.seeds, seeds)]
        low = [(s, a) for s, a in best if a <= bar]
        out.append(f"{k} ({len(low)} of {len(seeds)} seeds at chance: seed{'s' if len(low) > 1 else ''} "
                   f"{', '.join(str(s) for s, _ in low)}, best validation accuracy "
                   f"{', '.join(f'{100 * a:.1f}%' for _, a in low)}, the bar {100 * bar:.1f}%)")
    return out


def _trend(stats: list[Stat], higher: bool, names: tuple[str, str]) -> tuple[rules.Decision, bool]:
    """More is better along ``stats`` (ordered by N): the last beats the first (:func:`rules.compare`), and no
    earlier one beats a later neighbour; ``(decision, partly)``."""
    ends = rules.compare(stats[-1], stats[0], higher=higher, names=names)
    reversed_ = any(rules.beats(a, b, higher=higher) for a, b in zip(stats, stats[1:]))
    if ends.holds and reversed_:
        return rules.Decision(False, ends.direction + ", with a reversal between neighbours", ends.size), True
    return ends, False


def _settle(ent: dict[str, Seeds], ablation: Ablation, idle: list[str], labels: Sequence[str]) -> str:
    """What would settle a claim on ``labels``, with its cost: where a model did not train (``idle``), what
    the ablation found and the next experiment
    (:func:`urnlib.chapters.tpru.report_ablation.settle_collapse`), else the retrain at Evans et al.'s size
    (its TPRU with 512 roles)."""
    if idle:
        return settle_collapse(ent, ablation, [text.split(" (")[0] for text in idle], labels)
    top, train = main_tpru(ent), ent[labels[0]][0].params["task"]["train"]
    d, n = model_spec(ent[top])["d"], model_spec(ent[top])["n_roles"]
    per_step = (2 * 512 * d + 6 * d * d) / (2 * n * d + 6 * d * d)  # Table 1's time, N = 512 against ours
    if train >= PAPER_TRAIN_SIZE:  # the scaled group: at Evans et al.'s size already
        return settle_at_size(ent, labels, top, per_step)
    hours = sum(_cpu_hours(ent[k]) * (per_step if k == top else 1) for k in labels) * PAPER_TRAIN_SIZE / train
    return (f"retrain {', '.join(labels)}" + (" (the TPRU with Table 2's 512 roles)" if top in labels else "")
            + f" on {PAPER_TRAIN_SIZE:,} generated training pairs (the size of Evans et al.'s training file, "
            f"which is not released; {PAPER_TRAIN_SIZE / train:.0f} times ours), every seed: about "
            f"{hours:.0f} CPU hours (ours took {_cpu_hours(*(ent[k] for k in labels)):.1f})")


def _table2_claims(ent: dict[str, Seeds], released, ablation: Ablation, basis: str = "") -> list[Claim]:
    """The claims on Table 2, decided on Evans et al.'s released files (``released``: see
    :mod:`urnlib.chapters.tpru.report_released`) by the runs ``ent``; ``basis`` says which, where they are not
    the main runs (:func:`urnlib.chapters.tpru.report_scaled.table2_basis`)."""
    out: list[Claim] = []
    gru = next(iter(runs_of_kind(ent, "gru")), None)
    lstm = next(iter(runs_of_kind(ent, "lstm")), None)
    top = main_tpru(ent)

    def acc(label: str, split: str):
        return released_accuracy(released, label, split)

    if gru is not None and top is not None:
        idle = untrained(ent, [top, gru])
        parts = [rules.compare(acc(top, s), acc(gru, s), names=("TPRU", "GRU")) for s in ("hard", "big")]
        holds, partly = rules.combine(parts)
        _add(out, "paper 002 Table 2",
             "the TPRU is more accurate than the GRU on the hard and big test splits",
             "hard 88.4 vs 84.3, big 79.0 vs 77.0 (TPRU-512 vs GRU)",
             f"{basis}{top} vs {gru}, released files: "
             + "; ".join(f"{s}: {pct(acc(top, s))} vs {pct(acc(gru, s))}" for s in ("hard", "big")),
             f"TPRU better on both released files ({rules.BEATS_RULE}; partly: on one)", holds,
             _n(ent[top], ent[gru]), partly, quote=Q["gru"], idle=idle,
             settle=_settle(ent, ablation, idle, [top, gru]),
             direction="; ".join(f"released {s}: {p.direction}" for s, p in zip(("hard", "big"), parts)),
             seeds_needed=rules.needed(parts))
    if lstm is not None and top is not None:
        at, am = released_test_accuracy(released, top), released_test_accuracy(released, lstm)
        near = _within(at, am, COMPARABLE, names=("TPRU", "LSTM"))
        _add(out, "paper 002 Table 2", "the TPRU is comparable to the LSTM",
             f"mean over the five test splits 74.9 vs 77.0: the TPRU {100 * COMPARABLE:.1f} points behind",
             f"{basis}mean over the five released test files: {top} {pct(at)} vs {lstm} {pct(am)}",
             f"the TPRU not behind the LSTM by more than the {100 * COMPARABLE:.1f} points Table 2 calls "
             f"comparable ({rules.BEATS_RULE}, against the LSTM moved by that gap)",
             near, _n(ent[top], ent[lstm]), quote=Q["lstm"], direction=f"released files: {near.direction}",
             idle=untrained(ent, [top, lstm]),
             settle=_settle(ent, ablation, untrained(ent, [top, lstm]), [top, lstm]))
    if top is not None:
        train = ent[top][0].params["task"]["train"]
        shown = [k for k in (top, gru, lstm) if k is not None]
        paper = {top: "TPRU - 512", gru: "GRU", lstm: "LSTM"}  # each model's row of Table 2

        def behind(k: str) -> str:  # how far below the paper's valid accuracy, in points (no tolerance)
            gap = PAPER_TABLE2[paper[k]]["valid"] - 100 * acc(k, "valid").mean
            return f"{k} {abs(gap):.1f} points {'below' if gap > 0 else 'above'} the paper's {paper[k]}"

        # each model's released-validation accuracy against its printed row (the paper's number, no tolerance
        # of ours): decided on the seeds, every model at once
        parts = [rules.threshold(acc(k, "valid"), PAPER_TABLE2[paper[k]]["valid"] / 100, name=k)
                 for k in shown]
        holds, partly = rules.combine(parts)
        out.append(claim(CHAPTER, "paper 002 Table 2, the valid column",
                         "the accuracies themselves (e.g. LSTM valid 88.6%)", "84.3-88.6% on valid",
                         f"{basis}released validate.txt: "
                         + "; ".join(f"{k} {pct(acc(k, 'valid'))}" for k in shown)
                         + f" (trained on {fewer_pairs(train)} by our re-implementation of Evans et al.'s "
                         "generator: their training file is not released)",
                         f"each model at least its printed valid accuracy ({rules.THRESHOLD_RULE})", holds,
                         partly, seeds=_n(*(ent[k] for k in shown)), quote=Q["table2"], epoch=EPOCH,
                         direction="; ".join(behind(k) for k in shown), seeds_needed=rules.needed(parts),
                         settle=_settle(ent, ablation, [], shown)))
    return out


def _entailment_claims(ent: dict[str, Seeds], ablation: Ablation) -> list[Claim]:
    """The claims on Figs. 1 and 2 and sec. 6.3 (training curves and the generated validation pairs)."""
    out: list[Claim] = []
    gru = next(iter(runs_of_kind(ent, "gru")), None)
    series = role_series(ent)
    if len(series) >= 2:
        ns, labels = list(series), list(series.values())
        idle = untrained(ent, labels)
        acc = [valid_accuracy(ent[k]) for k in labels]
        names = (f"N={ns[-1]}", f"N={ns[0]}")
        decision, partly = _trend(acc, higher=True, names=names)
        _add(out, "paper 002 sec. 6.3, Fig. 1", "more role vectors give better results",
             "better with more roles, parameters unchanged",
             "best validation accuracy by N: " + "; ".join(f"N={n}: {pct(a)}" for n, a in zip(ns, acc)),
             f"largest N beats smallest ({rules.BEATS_RULE}), no smaller N beats the next (else partly)",
             decision, _n(*(ent[k] for k in labels)), partly, quote=Q["roles"], idle=idle,
             settle=_settle(ent, ablation, idle, labels))
        epochs = common_epochs(*(ent[k] for k in labels))
        loss = [mean_train_loss(ent[k], epochs) for k in labels]
        decision, partly = _trend(loss, higher=False, names=names)
        _add(out, "paper 002 sec. 6.3, Fig. 1", "more role vectors give faster convergence",
             "training curves converge faster with more roles",
             f"mean training loss over the first {epochs} epochs by N: "
             + "; ".join(f"N={n}: {x.text(4)}" for n, x in zip(ns, loss)),
             f"largest N lower than smallest ({rules.BEATS_RULE}), no smaller N lower than the next (else "
             "partly)", decision, _n(*(ent[k] for k in labels)), partly, quote=Q["roles"],
             epoch=f"epochs 1-{epochs} (the training curve every run trained)", idle=idle,
             settle=_settle(ent, ablation, idle, labels))
    if 8 in series and gru is not None:
        t8, g = ent[series[8]], ent[gru]
        idle = untrained(ent, [series[8], gru])
        _add(out, "paper 002 sec. 6.3", "a TPRU with only 8 roles matches the GRU", "matches (Fig. 1)",
             f"best validation accuracy {pct(valid_accuracy(t8))} vs {pct(valid_accuracy(g))}",
             f"within the {100 * COMPARABLE:.1f} points Table 2 calls comparable, either way (Fig. 1 prints "
             f"no number; {rules.BEATS_RULE}, against the side ahead moved by that gap)",
             _matches(valid_accuracy(t8), valid_accuracy(g), COMPARABLE, names=("TPRU N=8", "GRU")),
             _n(t8, g), quote=Q["eight"], idle=idle,
             settle=_settle(ent, ablation, idle, [series[8], gru]))
    out += _slice_claims(ent, ablation)
    return out


def _slice_claims(ent: dict[str, Seeds], ablation: Ablation) -> list[Claim]:
    out: list[Claim] = []
    pairs = slice_pairs(ent)
    if not pairs:
        return out
    n0 = min(pairs)
    single, multi = (ent[k] for k in pairs[n0])
    epochs = common_epochs(single, multi)
    loss = (mean_train_loss(multi, epochs), mean_train_loss(single, epochs))
    fit = (train_fit(multi), train_fit(single))
    parts = [rules.compare(*loss, higher=False, names=("slices", "one")),
             rules.compare(*fit, names=("slices", "one"))]
    holds, partly = rules.combine(parts)
    s = model_spec(multi)["slices"]
    idle = untrained(ent, pairs[n0])
    _add(out, "paper 002 appendix E, Fig. 2",
         "several slices (filler vectors) converge faster and fit the training set better than one, when "
         "roles are few", "faster and better on the training set ('4 M' vs '4')",
         f"N={n0}, {s} slices vs one: mean training loss over {epochs} epochs {loss[0].text(4)} vs "
         f"{loss[1].text(4)}; best training accuracy {pct(fit[0])} vs {pct(fit[1])}",
         f"at the smallest N both lower loss and higher accuracy ({rules.BEATS_RULE}; partly: one)", holds,
         _n(single, multi), partly, quote=Q["slices"],
         epoch=f"epochs 1-{epochs} (loss) and the best epoch on the training pairs (accuracy)", idle=idle,
         settle=_settle(ent, ablation, idle, pairs[n0]),
         direction=f"loss: {parts[0].direction}; accuracy: {parts[1].direction}",
         seeds_needed=rules.needed(parts))
    if len(pairs) >= 2:
        n1 = max(pairs)
        gains = {n: _paired(ent[pairs[n][1]], ent[pairs[n][0]], lambda m, o: max(m.column("train_acc"))
                            - max(o.column("train_acc"))) for n in (n0, n1)}  # best training accuracy
        idle = untrained(ent, [*pairs[n0], *pairs[n1]])
        _add(out, "paper 002 appendix E, Fig. 2", "the gain from slices shrinks as roles grow",
             "the effect diminishes with many roles",
             f"gain in best training accuracy from slices: N={n0}: {gains[n0].text(3)}, N={n1}: "
             f"{gains[n1].text(3)}",
             f"gain at the smallest N beats the gain at the largest ({rules.BEATS_RULE})",
             rules.compare(gains[n0], gains[n1], names=(f"gain at N={n0}", f"gain at N={n1}")),
             _n(*(ent[k] for k in [*pairs[n0], *pairs[n1]])), quote=Q["shrinks"],
             epoch="the best epoch on the training pairs", idle=idle,
             settle=_settle(ent, ablation, idle, [*pairs[n0], *pairs[n1]]))
    return out


def _lm_epoch(*groups: Seeds) -> str:
    trained = [len(run.history) for seeds in groups for run in seeds]
    patience = groups[0][0].params["train"].get("patience")
    return (f"best validation perplexity epoch (the paper's selection; the runs stopped {patience} epochs "
            f"without a better one, after {min(trained)}-{max(trained)} of the paper's {PAPER_LM['epochs']} "
            "epochs)")


def _lm_idle(lm: dict[str, Seeds], labels: Sequence[str]) -> list[str]:
    """Of ``labels``, the language models whose test perplexity is not clearly below a uniform guess's."""
    return [f"{k} (test perplexity {lm[k].final('test_ppl').text(1)}, the vocabulary "
            f"{lm[k][0].final['data']['vocabulary']:,})" for k in labels
            if not rules.off_chance(lm[k][0].final["data"]["vocabulary"], lm[k].final("test_ppl"),
                                    higher=False)]


def _lm_claims(lm: dict[str, Seeds]) -> list[Claim]:
    out: list[Claim] = []
    tpru = next((k for k in lm if k.startswith("TPRU")), None)
    lstm = next((k for k in lm if k.startswith("LSTM")), None)
    if tpru is not None and lstm is not None:
        t, m = lm[tpru], lm[lstm]
        n, idle, epoch = _n(t, m), _lm_idle(lm, [tpru, lstm]), _lm_epoch(t, m)
        pt, pl = t.final("test_ppl"), m.final("test_ppl")
        ratio = _paired(t, m, lambda a, b: a.final["test_ppl"] / b.final["test_ppl"] - 1)
        bigger = 16 * _cpu_hours(t, m)  # four times the dimension: about 16 times the work per step
        _add(out, "paper 002 Table 4", "the TPRU's perplexity is similar to the LSTM's",
             f"WikiText-103 41.4 vs 42.3, WikiText-2 76.8 vs 76.0 (at most {100 * SIMILAR:.1f}% apart)",
             f"Brown test {pt.text(1)} vs {pl.text(1)}; TPRU / LSTM - 1 per seed {ratio.text(3)}",
             f"within the {100 * SIMILAR:.1f}% Table 4 calls similar, either way ({rules.BEATS_RULE}, "
             "against the side ahead moved by that gap)",
             _matches(pt, pl, SIMILAR, relative=True, higher=False, names=("TPRU", "LSTM")), n,
             quote=Q["similar"], epoch=epoch, idle=idle, trained=LM_TRAINED_RULE,
             settle=f"whether the gap closes at a larger size: both models at 4 times our dimension on "
                    f"Brown, every seed: about {bigger:.0f} CPU hours (ours took {_cpu_hours(t, m):.1f}); "
                    "WikiText is not here")

        def gap(a, b) -> float:  # the LSTM's training loss minus the TPRU's, over the epochs both trained
            k = min(len(a.history), len(b.history))
            return float(np.mean(np.subtract(b.column("train_loss")[:k], a.column("train_loss")[:k])))

        gaps = _paired(t, m, gap)
        k = [min(len(a.history), len(b.history)) for a, b in zip(t, m)]
        _add(out, "paper 002 Table 4 (right), sec. 6",
             "the TPRU converges faster on the training set than the LSTM",
             "lower training NLL throughout (WikiText-103)",
             f"LSTM minus TPRU training NLL, mean over the epochs both trained: {gaps.text(3)}",
             f"that gap > 0, whole curve ({rules.PAIRED_RULE})",
             rules.paired(gaps, name="LSTM minus TPRU training NLL"), n, quote=Q["faster"],
             epoch=f"epochs 1-{min(k)} to 1-{max(k)} (each seed pair's common epochs: the curve, no "
                   "selection)",
             idle=idle, trained=LM_TRAINED_RULE,
             settle=f"the curves at a larger size: about {bigger:.0f} CPU hours (see the perplexity claim)")
        out.append(claim(CHAPTER, "paper 002 Table 4 (left)", "the perplexities themselves",
                         "41.4 / 76.8 (WikiText)", f"{pt.text(1)} (Brown)",
                         "not comparable: WikiText is not reachable offline; another corpus, vocabulary and "
                         "model size", None, seeds=n, cause="data", quote=Q["table4"], epoch=epoch,
                         settle="WikiText-103 and WikiText-2 (not reachable here) and two-layer models of "
                                "dimension 1024 trained 64 epochs: a GPU job of days, beyond this machine"))
    seeds = tpru_lm_runs(lm)
    if seeds is not None:
        label = next(k for k, v in lm.items() if v is seeds)
        idle, epoch = _lm_idle(lm, [label]), _lm_epoch(seeds)
        wide = seeds.stat(lambda run: len(dedicated_tags(run.final["pmi"])[0]))
        first, ranked = dedicated_tags(seeds[0].final["pmi"])
        decision = rules.threshold(wide, 6.5, name="tags per seed")  # whole counts: at least 7
        _add(out, "paper 002 sec. 6.2, Table 5",
             "some POS tags have a role dedicated to them: the top two PMI values differ by at least "
             f"{PMI_GAP}",
             "7 of 17 tags (ADV, DET, INTJ, NOUN, PART, PROPN, VERB)",
             f"tags per seed {wide.text(1)}; seed {seeds.seeds[0]}: {len(first)} of {ranked} "
             f"({', '.join(first) or 'none'})",
             f"at least 7 tags: above 6.5 ({rules.THRESHOLD_RULE}; partly: at least 1, the paper's 'some')",
             decision, len(seeds), partly=decision.holds is False and rules.at_least(wide, 0.5) is True,
             quote=Q["table5"], epoch=epoch, idle=idle, trained=LM_TRAINED_RULE,
             settle="the paper's setting: a TPRU trained on MNLI, tagged by spaCy (MNLI is not here)")
        mi = seeds.stat(lambda r: r.final["pmi"]["mutual_information"] - r.final["pmi_untrained"]
                        ["mutual_information"])
        _add(out, "paper 002 sec. 6.2", "the roles the TPRU learns are informative about POS tags",
             "roles associated with tags after training on MNLI",
             f"I(role; tag) trained minus untrained, per seed: {mi.text(3)} nats",
             f"difference > 0 ({rules.PAIRED_RULE})", rules.paired(mi, name="I(role; tag) gained"),
             len(seeds),
             quote=Q["informative"], epoch=epoch, idle=idle, trained=LM_TRAINED_RULE,
             settle="the paper's setting: a TPRU trained on MNLI, tagged by spaCy (MNLI is not here)")
    return out


def claims(ent_runs: dict[str, Seeds], lm_runs: dict[str, Seeds], grad_rows: list[dict],
           t1_rows: list[dict], released, ablation: Ablation | None = None,
           scaled: dict[str, Seeds] | None = None) -> list[Claim]:
    """The chapter's claims (``ent_runs``, ``lm_runs``: ``{label: Seeds}``; ``released``: the entailment runs'
    scores on Evans et al.'s released files, :func:`urnlib.chapters.tpru.released.released_results`;
    ``ablation``: :func:`urnlib.chapters.tpru.report_ablation.groups`, which the untrained claims' settle
    texts read), decided by rules fixed before the paper-scale runs were looked at (those on Table 2 moved
    from the generated test splits to the released files, the paper's own data, once those were scored). The
    claims that set the TPRU against the GRU and the LSTM on Table 2 decide on ``scaled`` (the runs on a
    larger training set, scored in ``released`` too) where it is complete, and say so
    (:func:`urnlib.chapters.tpru.report_scaled.table2_basis`); the other claims read the main runs."""
    basis, words = table2_basis(ent_runs, scaled)
    out = (_table2_claims(basis, released, ablation or {}, words)
           + _entailment_claims(ent_runs, ablation or {}) + _lm_claims(lm_runs)
           + check_claims(grad_rows, t1_rows))
    out.append(claim(CHAPTER, "paper 002 Table 3", "the TPRU outperforms the LSTM on MNLI and QNLI",
                     "e.g. MNLI matched 74.8 vs 73.4 (dim 512)", "not run",
                     "MNLI, QNLI (and SNLI, ELMo) are not reachable offline", None, cause="data",
                     quote=Q["table3"], epoch="- (not trained)",
                     settle="MNLI and QNLI with ELMo (not reachable here), encoders of dimension 512-1500"))
    out.append(claim(CHAPTER, "paper 002 sec. 6.1, appendix D",
                     "a role separates the senses of a polysemous word (bank)",
                     "P(beta = beta_river | bank, river sense) = 1", "not run",
                     "needs the MNLI dev set and fastText vectors, not reachable offline", None,
                     cause="data", quote=Q["bank"], epoch="- (not trained)",
                     settle="MNLI (train and dev) and fastText vectors (not reachable here)"))
    return out
