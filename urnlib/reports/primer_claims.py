"""The claims of the primer chapter (lecture 004), decided on every seed (:mod:`urnlib.rules`).

A neural language model is read at its best epoch by validation perplexity (the weights its run kept);
Kneser-Ney is deterministic (one run, ``seeds=1``). A claim holds when the seeds' mean is on its side by more
than their spread, and is "not testable here" (cause ``noise``) when the spread covers the difference. Each
miss names its cause (:data:`urnlib.claims.CAUSES`):

* Brown: Bengio et al. (2003) and we use the same corpus (NLTK's Brown, split like theirs), so a miss is never
  ``data``. They trained by stochastic gradient descent with weight decay until validation perplexity stopped
  falling; we train with Adam, stopped by patience under a cap on epochs. A neural model that was still
  improving when the cap stopped it was given less compute than the paper's: a miss that rests on it is
  ``scale``. A miss by converged models rests on the optimiser and its settings (ours, not the paper's):
  ``setting``.
* Elman: a miss on the setting the claims are read on that another of our training settings reproduces on
  every seed is ``setting`` (Elman's copy-back SRN has no exact batched counterpart); else ``open``.
* a^n b^n: ``open`` (the lecture gives no training setting besides N). "The GRU and the SRN do not generalise
  beyond their training range" is decided only on models that accept some strings (mean - sd of the largest n
  accepted above 0): a model that learned nothing makes it vacuous (not testable, cause ``open``).
"""

from __future__ import annotations

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.reports.primer import (CHAPTER, anbn_stats, elman_partitions, improving_at_cap, main_setting,
                                   pm)
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat, by_label

__all__ = ["claims", "brown_claims", "elman_claims", "anbn_claims", "SOURCE_BENGIO", "SOURCE_ELMAN",
           "SOURCE_WEISS", "BEYOND", "KN_FLAT"]

SOURCE_BENGIO = "lecture 004, Bengio et al. (2003) table"
SOURCE_ELMAN = "lecture 004, Elman (1990)"
SOURCE_WEISS = "lecture 004, Weiss et al. (2018)"
#: a model "counts beyond its training range" when it accepts every a^m b^m up to this multiple of N (ours)
BEYOND = 1.25
#: Kneser-Ney "gains little" from orders above 3: the 5-gram within this share of the trigram (ours; the
#: lecture's table: -0.6%)
KN_FLAT = 0.02


def _noise(holds: bool | None, cause: str) -> str:
    return "noise" if holds is None else cause


def claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run], elman_runs: dict[str, Run],
           anbn_runs: dict[str, Run], max_train_n: int) -> list[Claim]:
    """Every claim of the chapter, from each group's runs by name (an empty group makes none)."""
    return [*brown_claims(lm_runs, kn_runs), *elman_claims(elman_runs), *anbn_claims(anbn_runs, max_train_n)]


# ----------------------------------------------------------------------------------------------------- Brown
def _brown_cause(seeds: list[Seeds]) -> str:
    """``scale`` when a run of these models was still improving at the cap, else ``setting``."""
    return "scale" if any(improving_at_cap(run) for s in seeds for run in s) else "setting"


def brown_claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run]) -> list[Claim]:
    out: list[Claim] = []
    nnlm = {label: s for label, s in by_label(lm_runs).items() if s[0].params["model"]["kind"] == "nnlm"}
    if nnlm and kn_runs:
        # each side's best model chosen on the validation part, compared on the test part
        nn_label = min(nnlm, key=lambda label: nnlm[label].final("valid_ppl").mean)
        kn_run = min(kn_runs.values(), key=lambda run: run.final["valid_ppl"])
        nn, kn = nnlm[nn_label].final("test_ppl"), Stat.of([kn_run.final["test_ppl"]])
        uniform = nnlm[nn_label][0].final["data"]["vocabulary"] + 1  # the perplexity of a uniform guess
        learnt = rules.off_chance(uniform, nn, kn, higher=False)
        holds = rules.beats(nn, kn, higher=False) if learnt else None
        cause = _noise(holds, _brown_cause([nnlm[nn_label]])) if learnt else "scale"
        out.append(claim(CHAPTER, SOURCE_BENGIO, "a neural n-gram model has lower test perplexity than the "
                         "best Kneser-Ney n-gram", "268 (MLP1) vs 321 (5-gram)",
                         f"{nn_label}: {pm(nn)} vs {kn_run.final['order']}-gram {pm(kn)} (each side's "
                         "best on validation)",
                         f"neural lower, unmixed ({rules.BEATS_RULE}); decided only where both sides are "
                         f"below a uniform guess's perplexity {uniform:,} (mean + sd)", holds,
                         seeds=len(nnlm[nn_label]), cause=cause))
        gains = {label: Stat.of(r.final["test_ppl"] - r.final["mix_test_ppl"] for r in s)
                 for label, s in nnlm.items()}
        relative = {label: s.stat(lambda r: r.final["mix_test_ppl"] / r.final["test_ppl"] - 1)
                    for label, s in nnlm.items()}
        holds, partly = rules.combine(rules.positive(g) for g in gains.values())
        out.append(claim(CHAPTER, SOURCE_BENGIO, "mixing with a trigram lowers every neural n-gram model's "
                         "test perplexity", "4-12% lower (268 -> 257 to 310 -> 272)",
                         "; ".join(f"{label}: {_percent(r)}" for label, r in relative.items()),
                         f"unmixed minus mixed > 0 for every model, seed by seed ({rules.PAIRED_RULE})",
                         holds, partly, seeds=min(len(s) for s in nnlm.values()),
                         cause=_noise(holds, "open")))
    orders = {r.final["order"]: r.final["test_ppl"] for r in kn_runs.values()}
    if 3 in orders and 5 in orders:
        change = orders[5] / orders[3] - 1
        holds = rules.at_most(Stat.of([abs(change)]), KN_FLAT)
        out.append(claim(CHAPTER, SOURCE_BENGIO, "Kneser-Ney gains little from orders above 3",
                         "323 -> 321 (-0.6%)", f"{orders[3]:.0f} -> {orders[5]:.0f} ({change:+.1%})",
                         f"|5-gram / trigram - 1| <= {KN_FLAT:.0%} (deterministic: one run per order)", holds,
                         seeds=1, cause="open"))
    return out


def _percent(stat: Stat) -> str:
    """``"-8.1% ± 0.4%"``."""
    if not stat.n:
        return "n/a"
    return f"{stat.mean:+.1%}" + (f" ± {stat.sd:.1%}" if stat.n > 1 else "")


# ----------------------------------------------------------------------------------------------------- Elman
def elman_claims(runs: dict[str, Run]) -> list[Claim]:
    """The tree's splits on every seed of :func:`~urnlib.reports.primer.main_setting`."""
    if not runs:
        return []
    settings = by_label(runs)
    main = main_setting(runs)
    parts = {label: seeds.each(elman_partitions) for label, seeds in settings.items()}
    out = []
    for key, statement, paper, rule in [
            ("noun_verb", "the top split of the hidden-state tree separates nouns from verbs",
             "nouns | verbs", "the two-cluster cut puts every noun on one side and every verb on the other"),
            ("animate_inanimate", "within the nouns, animates separate from inanimates",
             "animate | inanimate", "the two-cluster cut of the nouns' tree matches animacy exactly")]:
        exact = {label: [p[key] == 1.0 for p in ps] for label, ps in parts.items()}
        holds = rules.on_every_seed(exact[main])
        elsewhere = [label for label, flags in exact.items() if label != main and rules.on_every_seed(flags)]
        share = Stat.of(p[key] for p in parts[main])
        out.append(claim(CHAPTER, SOURCE_ELMAN, statement, paper,
                         f"{main}: exact on {sum(exact[main])} of {len(exact[main])} seeds (share of words "
                         f"on their class's side {_share(share)})"
                         + (f"; exact on every seed of {', '.join(elsewhere)}" if elsewhere else ""),
                         f"{rule}, {rules.EVERY_SEED_RULE}", holds, seeds=len(exact[main]),
                         cause=_noise(holds, "setting" if elsewhere else "open")))
    return out


def _share(stat: Stat) -> str:
    return f"{stat.mean:.0%}" + (f" ± {stat.sd:.0%}" if stat.n > 1 else "")


# ------------------------------------------------------------------------------------------------- a^n b^n
def anbn_claims(runs: dict[str, Run], max_train_n: int) -> list[Claim]:
    """Counting beyond the training range: the largest n accepted, over the seeds of each model kind."""
    if not runs:
        return []
    kinds: dict[str, Stat] = {}
    counts: dict[str, int] = {}
    for seeds in anbn_stats(runs).values():
        kind = seeds[0].params["model"]["kind"]
        kinds.setdefault(kind, seeds.final("largest_accepted"))
        counts.setdefault(kind, len(seeds))
    bar = BEYOND * max_train_n
    ours = "; ".join(f"{k.upper()} {pm(v, 1)}" for k, v in kinds.items())
    out = []
    if "lstm" in kinds:
        holds = rules.at_least(kinds["lstm"], bar)
        out.append(claim(CHAPTER, SOURCE_WEISS, "the LSTM counts: it accepts a^n b^n well beyond its "
                         "training range", f"beyond N = {max_train_n}", f"largest n accepted: {ours}",
                         f"LSTM >= {BEYOND} N = {bar:g} ({rules.THRESHOLD_RULE})", holds,
                         seeds=counts["lstm"], cause=_noise(holds, "open")))
    others = [k for k in ("gru", "srn") if k in kinds]
    if others:
        learnt = [rules.off_chance(0, kinds[k]) for k in others]
        holds, partly = rules.combine(rules.at_most(kinds[k], bar) if ok else None
                                      for k, ok in zip(others, learnt))
        out.append(claim(CHAPTER, SOURCE_WEISS, "the GRU and the SRN do not generalise beyond their training "
                         "range", "they stop near N", f"largest n accepted: {ours}",
                         f"<= {BEYOND} N = {bar:g} for " + " and ".join(k.upper() for k in others)
                         + f" ({rules.THRESHOLD_RULE}); decided only for a model that accepts some strings "
                         "(mean - sd above 0)", holds, partly,
                         seeds=min(counts[k] for k in others),
                         cause=_noise(holds, "open") if all(learnt) else "open"))
        if "lstm" in kinds:
            holds, partly = rules.combine(rules.beats(kinds["lstm"], kinds[k]) for k in others)
            out.append(claim(CHAPTER, SOURCE_WEISS, "for the counting language the LSTM works best",
                             "LSTM best", ours,
                             f"LSTM above every other gated/simple unit ({rules.BEATS_RULE})",
                             holds, partly, seeds=min(counts[k] for k in ["lstm", *others]),
                             cause=_noise(holds, "open")))
    return out
