"""The claims of the primer chapter (lecture 004), decided over seeds (:mod:`urnlib.rules`).

Every claim quotes the lecture's words it decides (a slide's title where the lecture shows a table or a figure
and says nothing more), says which epoch it reads and what was measured. Selection never reads test data: a
neural language model is read at its best epoch by validation perplexity (the weights its run kept), the best
model of each side and the mixture weight are chosen on the validation part, and only then is the test part
read; Kneser-Ney is deterministic (one run, ``seeds=1``). Every tolerance comes from the lecture's numbers
or from the seeds' spread (t-tests at 5%), never from a number of ours. A model that did not train (its
measure not clearly off chance) is no evidence: the claim is inconclusive with the cause ``untrained``. Each
miss names its cause (:data:`urnlib.claims.CAUSES`):

* Brown: Bengio et al. (2003) and we use the same corpus (NLTK's Brown, split like theirs), so a miss is never
  ``data``. They trained by stochastic gradient descent with weight decay until validation perplexity stopped
  falling; we train with Adam, stopped by patience under a cap on epochs. A neural model that was still
  improving when the cap stopped it had less compute than the paper's: a miss resting on it is ``scale``;
  any other miss is ``open`` (its ``settle`` names the experiment).
* Elman: a miss on the setting the claims are read on that another of our training settings reproduces on
  every seed is ``setting`` (Elman's copy-back SRN has no exact batched counterpart); else ``open``.
* a^n b^n: "beyond the training range" is one rule, shared with the zoo (:func:`beyond`, :func:`not_beyond`):
  the largest n accepted above the lecture's N (a one-sample t-test over the seeds). A miss is ``open``.
"""

from __future__ import annotations

from dataclasses import replace

from urnlib import rules
from urnlib.claims import Claim
from urnlib.reports.common import cpu_hours
from urnlib.claims import claim
from urnlib.chapters.primer.report import (
    CHAPTER, anbn_stats, elman_partitions, improving_at_cap, main_setting, pm,
)
from urnlib.paper_quotes import QUOTE_BEST, QUOTE_WEISS
from urnlib.results import Run
from urnlib.rules import BEYOND_RULE, beyond, not_beyond
from urnlib.seeds import Seeds, Stat, by_label

__all__ = ["claims", "brown_claims", "elman_claims", "anbn_claims", "SOURCE_BENGIO", "SOURCE_ELMAN",
           "SOURCE_WEISS", "QUOTE_BENGIO", "QUOTE_ELMAN", "KN_ROUNDED"]

SOURCE_BENGIO = "lecture 004, Bengio et al. (2003) table"
SOURCE_ELMAN = "lecture 004, Elman (1990)"
SOURCE_WEISS = "lecture 004, Weiss et al. (2018)"
#: the slide titles of the lecture's table and figures (the lecture states these results in no sentence)
QUOTE_BENGIO = "Old (2003!) perplexity results on Brown corpus"
QUOTE_ELMAN = "Learning word classes"
#: the lecture's Kneser-Ney trigram and 5-gram test perplexities, printed rounded to whole numbers
KN_ROUNDED = (323, 321)


def claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run], elman_runs: dict[str, Run],
           anbn_runs: dict[str, Run], max_train_n: int) -> list[Claim]:
    """Every claim of the chapter, from each group's runs by name (an empty group makes none)."""
    return [*brown_claims(lm_runs, kn_runs), *elman_claims(elman_runs), *anbn_claims(anbn_runs, max_train_n)]


# ----------------------------------------------------------------------------------------------------- Brown
def _lm_epoch(seeds: list[Seeds]) -> str:
    """The epoch a language model is read at, from its runs' training settings."""
    train = seeds[0][0].params.get("train", {})
    cap, patience = train.get("epochs"), train.get("patience")
    limits = (f"; at most {cap} epochs" if cap else "") + (
        f", stopped after {patience} without a lower one" if patience else "")
    return f"best validation-perplexity epoch (the weights the run kept{limits})"


def _brown_miss(seeds: list[Seeds], hours: float) -> tuple[str, str]:
    """``(cause, settle)`` of a Brown miss: ``scale`` when a run of these models was still improving at the
    cap, else ``open``."""
    if any(improving_at_cap(run) for s in seeds for run in s):
        return "scale", "a higher cap on epochs: until validation perplexity stops falling (Bengio et al.)"
    return "open", (f"the neural models trained as Bengio et al. did (SGD with weight decay, until "
                    f"validation perplexity stops falling): about {max(hours, 0.1):.1f} CPU hours")


def brown_claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run]) -> list[Claim]:
    out: list[Claim] = []
    nnlm = {label: s for label, s in by_label(lm_runs).items() if s[0].params["model"]["kind"] == "nnlm"}
    hours = cpu_hours(run for s in nnlm.values() for run in s)
    if nnlm and kn_runs:
        # each side's best model chosen on the validation part, compared on the test part
        nn_label = min(nnlm, key=lambda label: nnlm[label].final("valid_ppl").mean)
        kn_run = min(kn_runs.values(), key=lambda run: run.final["valid_ppl"])
        nn, kn = nnlm[nn_label].final("test_ppl"), Stat.of([kn_run.final["test_ppl"]])
        uniform = nnlm[nn_label][0].final["data"]["vocabulary"] + 1  # the perplexity of a uniform guess
        kn_name = f"{kn_run.final['order']}-gram"
        decision = rules.compare(nn, kn, higher=False, names=(nn_label, kn_name))
        cause, settle = _brown_miss([nnlm[nn_label]], hours)
        untrained = [name for name, s in ((nn_label, nn), (kn_name, kn))
                     if not rules.off_chance(uniform, s, higher=False)]
        if decision.holds is None:
            cause = None  # noise
        if untrained:
            decision, cause, settle = None, "untrained", ""
        out.append(claim(CHAPTER, SOURCE_BENGIO + ": MLP1 vs Kneser-Ney back-off 5-gram, test column",
                         "a neural n-gram model has lower test perplexity than the best Kneser-Ney n-gram",
                         "268 (MLP1) vs 321 (5-gram)",
                         f"{nn_label}: {pm(nn)} vs {kn_name} {pm(kn)} (each side's best on validation)"
                         + (f"; did not train (not below a uniform guess's perplexity {uniform:,}): "
                            + ", ".join(untrained) if untrained else ""),
                         f"neural lower, unmixed ({rules.BEATS_RULE}); {rules.CHANCE_RULE} (chance: a "
                         f"uniform guess's perplexity, {uniform:,})", decision,
                         seeds=len(nnlm[nn_label]), cause=cause, settle=settle, quote=QUOTE_BENGIO,
                         epoch=_lm_epoch([nnlm[nn_label]]) + "; Kneser-Ney: - (not trained)"))
        gains = {label: s.stat(lambda r: r.final["test_ppl"] - r.final["mix_test_ppl"])
                 for label, s in nnlm.items()}
        relative = {label: s.stat(lambda r: r.final["mix_test_ppl"] / r.final["test_ppl"] - 1)
                    for label, s in nnlm.items()}
        parts = {label: rules.paired(g, name=f"{label}: unmixed minus mixed") for label, g in gains.items()}
        holds, partly = rules.combine(d.holds for d in parts.values())
        out.append(claim(CHAPTER, SOURCE_BENGIO + ": the mix column (MLP1-MLP10)",
                         "mixing with a trigram lowers every neural n-gram model's test perplexity",
                         "4-12% lower (268 -> 257 to 310 -> 272)",
                         "; ".join(f"{label}: {_percent(r)}" for label, r in relative.items()),
                         f"unmixed minus mixed > 0 for every model, seed by seed ({rules.PAIRED_RULE})",
                         holds, partly, seeds=min(len(s) for s in nnlm.values()),
                         cause=None if holds is None else "open",
                         settle="" if holds is not False else _brown_miss(list(nnlm.values()), hours)[1],
                         quote=QUOTE_BENGIO, epoch=_lm_epoch(list(nnlm.values()))
                         + "; the mixture weight chosen on the validation part",
                         direction="; ".join(d.direction for d in parts.values()),
                         seeds_needed=rules.needed(parts.values())))
    orders = {r.final["order"]: r.final["test_ppl"] for r in kn_runs.values()}
    if 3 in orders and 5 in orders:
        gain = 1 - orders[5] / orders[3]
        (tri, five), half = KN_ROUNDED, 0.5
        bound = 1 - (five - half) / (tri + half)  # the largest gain the lecture's rounded numbers allow
        decision = rules.threshold(Stat.of([gain]), bound, above=False,
                                   name="the 5-gram's gain over the trigram")
        out.append(claim(CHAPTER, SOURCE_BENGIO + ": Kneser-Ney back-off 3, 4, 5, test column",
                         "Kneser-Ney gains little from orders above 3", "323 -> 321 (-0.6%)",
                         f"{orders[3]:.0f} -> {orders[5]:.0f} ({-gain:+.1%})",
                         f"the 5-gram's gain over the trigram at most the largest the lecture's rounded "
                         f"perplexities allow, 1 - {five - half}/{tri + half} = {bound:.2%} (deterministic: "
                         "one run per order, the sign decides)", decision, seeds=1,
                         cause=None if decision.holds is None else "open",
                         settle="Kneser-Ney back-off as Bengio et al. ran it (SRILM's, not our interpolated "
                                "one): minutes of CPU", quote=QUOTE_BENGIO, epoch="- (not trained)"))
    return out


def _percent(stat: Stat) -> str:
    """``"-8.1% ± 0.4%"``."""
    if not stat.n:
        return "n/a"
    return f"{stat.mean:+.1%}" + (f" ± {stat.sd:.1%}" if stat.n > 1 else "")


# ----------------------------------------------------------------------------------------------------- Elman
def elman_claims(runs: dict[str, Run]) -> list[Claim]:
    """The tree's splits on every seed of :func:`~urnlib.chapters.primer.report.main_setting` (chosen by
    held-out loss)."""
    if not runs:
        return []
    settings = by_label(runs)
    main = main_setting(runs)
    parts = {label: seeds.each(elman_partitions) for label, seeds in settings.items()}
    hours = cpu_hours(settings[main])
    out = []
    for key, statement, paper, rule in [
            ("noun_verb", "the top split of the hidden-state tree separates nouns from verbs",
             "nouns | verbs", "the two-cluster cut puts every noun on one side and every verb on the other"),
            ("animate_inanimate", "within the nouns, animates separate from inanimates",
             "animate | inanimate", "the two-cluster cut of the nouns' tree matches animacy exactly")]:
        exact = {label: [p[key] == 1.0 for p in ps] for label, ps in parts.items()}
        decision = rules.every_seed(exact[main], what="an exact split")
        elsewhere = [label for label, flags in exact.items() if label != main and rules.on_every_seed(flags)]
        share = Stat.of(p[key] for p in parts[main])
        cause = "setting" if elsewhere else "open"
        out.append(claim(CHAPTER, SOURCE_ELMAN + " Fig. 7, the hierarchical clustering shown in the lecture",
                         statement, paper,
                         f"{main}: exact on {sum(exact[main])} of {len(exact[main])} seeds (share of words "
                         f"on their class's side {_share(share)})"
                         + (f"; exact on every seed of {', '.join(elsewhere)}" if elsewhere else ""),
                         f"{rule}, {rules.EVERY_SEED_RULE}", decision, seeds=len(exact[main]),
                         cause=None if decision.holds is None else cause,
                         settle="" if cause == "setting" else
                         f"Elman's own procedure (one word at a time, six passes, copy-back without "
                         f"gradients through time): about {max(hours, 0.1):.1f} CPU hours",
                         quote=QUOTE_ELMAN, epoch="the epoch with the lowest held-out loss (sentences drawn "
                         "like the training ones); the setting chosen by the same loss"))
    return out


def _share(stat: Stat) -> str:
    return f"{stat.mean:.0%}" + (f" ± {stat.sd:.0%}" if stat.n > 1 else "")


# ------------------------------------------------------------------------------------------------- a^n b^n
def anbn_claims(runs: dict[str, Run], max_train_n: int) -> list[Claim]:
    """Counting beyond the training range: the largest n accepted, over the seeds of each model kind."""
    if not runs:
        return []
    kinds: dict[str, Seeds] = {}
    for seeds in anbn_stats(runs).values():
        kinds.setdefault(seeds[0].params["model"]["kind"], seeds)
    largest = {k: s.final("largest_accepted") for k, s in kinds.items()}
    n = max_train_n
    ours = "; ".join(f"{k.upper()} {pm(v, 1)}" for k, v in largest.items())
    epochs = sorted({len(run.history) for s in kinds.values() for run in s if run.history})
    epoch = (f"final (epoch {', '.join(map(str, epochs))}; the lecture gives no number of epochs)" if epochs
             else "final epoch (the lecture gives no number of epochs)")
    untrained = [k.upper() for k, v in largest.items() if not rules.off_chance(0, v)]
    guard = f"; did not train (none accepted): {', '.join(untrained)}" if untrained else ""
    chance = "a model that accepts none did not train"
    out = []

    def add(statement, paper, rule, decision, partly, needs, quote, direction=""):
        missing = [k for k in needs if k.upper() in untrained]
        held = getattr(decision, "holds", decision)
        hours = max(cpu_hours(r for k in needs for r in kinds[k]), 0.1)
        out.append(claim(CHAPTER, SOURCE_WEISS + (" (the lecture's figure, N = 20)" if quote != QUOTE_BEST
                                                  else " (the lecture's summary)"),
                         statement, paper, f"largest n accepted: {ours}" + guard, rule,
                         None if missing else decision, partly, seeds=min(len(kinds[k]) for k in needs),
                         cause="untrained" if missing else None if held is None else "open",
                         settle=f"more seeds, and the training setting of Weiss et al. (2018): about "
                                f"{hours:.1f} CPU hours per rerun",
                         quote=quote, epoch=epoch, direction=direction))

    if "lstm" in largest:
        add("the LSTM counts: it accepts a^n b^n beyond its training range", f"beyond N = {n}",
            f"LSTM's {BEYOND_RULE}, N = {n}", beyond(largest["lstm"], n, "LSTM"), False, ["lstm"],
            QUOTE_WEISS)
    others = [k for k in ("gru", "srn") if k in largest]
    if others:
        parts = [not_beyond(largest[k], n, k.upper()) for k in others]
        holds, partly = rules.combine(d.holds for d in parts)
        add("the GRU and the SRN do not generalise beyond their training range", "they stop near N",
            f"not {BEYOND_RULE}, N = {n}, for " + " and ".join(k.upper() for k in others)
            + "; no seed beyond N also holds", holds, partly, others, QUOTE_WEISS,
            "; ".join(d.direction for d in parts))
        out[-1] = _with_needed(out[-1], parts)
        if "lstm" in largest:
            parts = [rules.compare(largest["lstm"], largest[k], names=("LSTM", k.upper())) for k in others]
            holds, partly = rules.combine(d.holds for d in parts)
            add("for the counting language the LSTM works best", "LSTM best",
                f"LSTM above the GRU and the SRN ({rules.BEATS_RULE}; {chance})", holds, partly,
                ["lstm", *others], QUOTE_BEST, "; ".join(d.direction for d in parts))
            out[-1] = _with_needed(out[-1], parts)
    return out


def _with_needed(c: Claim, parts) -> Claim:
    noise = c.verdict == "inconclusive" and c.cause == "noise"
    return replace(c, seeds_needed=rules.needed(parts)) if noise else c
