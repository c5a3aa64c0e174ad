"""The claims of the primer chapter (lecture 004), decided over seeds (:mod:`urnlib.rules`) and declared
(:mod:`urnlib.declare`): one :class:`~urnlib.declare.Spec` per claim in :data:`BROWN_SPECS`,
:data:`ELMAN_SPECS` and :data:`ANBN_SPECS`, each with a small measure on its group's runs.

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

from dataclasses import dataclass, replace

from urnlib import rules
from urnlib.chapters.primer.report import (
    CHAPTER, anbn_stats, elman_partitions, improving_at_cap, main_setting, pm,
)
from urnlib.claims import Claim
from urnlib.declare import Measured, Spec, evaluate
from urnlib.paper_quotes import QUOTE_BEST, QUOTE_WEISS
from urnlib.reports.common import cpu_hours
from urnlib.results import Run
from urnlib.rules import Decision, beyond, not_beyond
from urnlib.seeds import Seeds, Stat, by_label

__all__ = ["claims", "brown_claims", "elman_claims", "anbn_claims", "SOURCE_BENGIO", "SOURCE_ELMAN",
           "SOURCE_WEISS", "QUOTE_BENGIO", "QUOTE_ELMAN", "KN_ROUNDED", "KN_BOUND", "SPECS", "BROWN_SPECS",
           "ELMAN_SPECS", "ANBN_SPECS", "BrownMeasures", "ElmanMeasures", "CountingMeasures"]

SOURCE_BENGIO = "lecture 004, Bengio et al. (2003) table"
SOURCE_ELMAN = "lecture 004, Elman (1990)"
SOURCE_WEISS = "lecture 004, Weiss et al. (2018)"
#: the slide titles of the lecture's table and figures (the lecture states these results in no sentence)
QUOTE_BENGIO = "Old (2003!) perplexity results on Brown corpus"
QUOTE_ELMAN = "Learning word classes"
#: the lecture's Kneser-Ney trigram and 5-gram test perplexities, printed rounded to whole numbers
KN_ROUNDED = (323, 321)
#: the largest gain of the 5-gram over the trigram that the lecture's rounded perplexities allow
KN_BOUND = 1 - (KN_ROUNDED[1] - 0.5) / (KN_ROUNDED[0] + 0.5)
KN = "Kneser-Ney"  #: the Kneser-Ney runs' key among the models a claim rests on (one run per order)


def claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run], elman_runs: dict[str, Run],
           anbn_runs: dict[str, Run], max_train_n: int) -> list[Claim]:
    """Every claim of the chapter, from each group's runs by name (an empty group makes none)."""
    return [*brown_claims(lm_runs, kn_runs), *elman_claims(elman_runs), *anbn_claims(anbn_runs, max_train_n)]


def _with_epochs(specs: list[Spec], m) -> list[Spec]:
    """The specs with the epoch they read filled in from the measurements (``{m.<field>}``)."""
    return [replace(s, epoch=s.epoch.format(m=m)) for s in specs]


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


@dataclass
class BrownMeasures:
    """What the Brown claims read: the neural n-gram models by label, the Kneser-Ney runs by name, and the
    CPU hours the neural models took; each side's best model is chosen on the validation part."""

    nnlm: dict[str, Seeds]
    kn_runs: dict[str, Run]
    hours: float

    @property
    def both(self) -> bool:
        return bool(self.nnlm and self.kn_runs)

    @property
    def nn_label(self) -> str:
        return min(self.nnlm, key=lambda label: self.nnlm[label].final("valid_ppl").mean)

    @property
    def kn_run(self) -> Run:
        return min(self.kn_runs.values(), key=lambda run: run.final["valid_ppl"])

    @property
    def uniform(self) -> int:
        """The perplexity of a uniform guess: chance."""
        return self.nnlm[self.nn_label][0].final["data"]["vocabulary"] + 1 if self.nnlm else 0

    @property
    def nn_epoch(self) -> str:
        return _lm_epoch([self.nnlm[self.nn_label]]) if self.nnlm else ""

    @property
    def all_epoch(self) -> str:
        return _lm_epoch(list(self.nnlm.values())) if self.nnlm else ""


def _neural_lower(m: BrownMeasures) -> Measured | None:
    if not m.both:
        return None
    nn, kn = m.nnlm[m.nn_label].final("test_ppl"), Stat.of([m.kn_run.final["test_ppl"]])
    kn_name = f"{m.kn_run.final['order']}-gram"
    untrained = [name for name, s in ((m.nn_label, nn), (kn_name, kn))
                 if not rules.off_chance(m.uniform, s, higher=False)]
    ours = (f"{m.nn_label}: {pm(nn)} vs {kn_name} {pm(kn)} (each side's best on validation)"
            + (f"; did not train (not below a uniform guess's perplexity {m.uniform:,}): "
               + ", ".join(untrained) if untrained else ""))
    if untrained:
        return Measured(ours, None, rests=[m.nn_label], direction="", cause="untrained")
    decision = rules.compare(nn, kn, higher=False, names=(m.nn_label, kn_name))
    cause, settle = _brown_miss([m.nnlm[m.nn_label]], m.hours)
    return Measured(ours, decision, rests=[m.nn_label], cause=None if decision.holds is None else cause,
                    settle=settle)


def _percent(stat: Stat) -> str:
    """``"-8.1% ± 0.4%"``."""
    if not stat.n:
        return "n/a"
    return f"{stat.mean:+.1%}" + (f" ± {stat.sd:.1%}" if stat.n > 1 else "")


def _mixing(m: BrownMeasures) -> Measured | None:
    if not m.both:
        return None
    gains = {label: s.stat(lambda r: r.final["test_ppl"] - r.final["mix_test_ppl"])
             for label, s in m.nnlm.items()}
    relative = {label: s.stat(lambda r: r.final["mix_test_ppl"] / r.final["test_ppl"] - 1)
                for label, s in m.nnlm.items()}
    parts = [rules.paired(g, name=f"{label}: unmixed minus mixed") for label, g in gains.items()]
    holds = rules.combine(parts)[0]
    return Measured("; ".join(f"{label}: {_percent(r)}" for label, r in relative.items()), parts,
                    rests=list(m.nnlm), direction="; ".join(d.direction for d in parts),
                    cause=None if holds is None else "open",
                    settle="" if holds is not False else _brown_miss(list(m.nnlm.values()), m.hours)[1])


def _kn_orders(m: BrownMeasures) -> Measured | None:
    orders = {r.final["order"]: r.final["test_ppl"] for r in m.kn_runs.values()}
    if not (3 in orders and 5 in orders):
        return None
    gain = 1 - orders[5] / orders[3]
    decision = rules.threshold(Stat.of([gain]), KN_BOUND, above=False,
                               name="the 5-gram's gain over the trigram")
    return Measured(f"{orders[3]:.0f} -> {orders[5]:.0f} ({-gain:+.1%})", decision, rests=[KN],
                    cause=None if decision.holds is None else "open",
                    settle="Kneser-Ney back-off as Bengio et al. ran it (SRILM's, not our interpolated one): "
                           "minutes of CPU")


BROWN_SPECS = [
    Spec(SOURCE_BENGIO + ": MLP1 vs Kneser-Ney back-off 5-gram, test column",
         "a neural n-gram model has lower test perplexity than the best Kneser-Ney n-gram", QUOTE_BENGIO,
         "268 (MLP1) vs 321 (5-gram)", "beats",
         lambda m: f"neural lower, unmixed; {rules.CHANCE_RULE} (chance: a uniform guess's perplexity, "
                   f"{m.uniform:,})", "{m.nn_epoch}; Kneser-Ney: - (not trained)", _neural_lower),
    Spec(SOURCE_BENGIO + ": the mix column (MLP1-MLP10)",
         "mixing with a trigram lowers every neural n-gram model's test perplexity", QUOTE_BENGIO,
         "4-12% lower (268 -> 257 to 310 -> 272)", "beats-paired",
         "unmixed minus mixed > 0 for every model, seed by seed",
         "{m.all_epoch}; the mixture weight chosen on the validation part", _mixing),
    Spec(SOURCE_BENGIO + ": Kneser-Ney back-off 3, 4, 5, test column",
         "Kneser-Ney gains little from orders above 3", QUOTE_BENGIO, "323 -> 321 (-0.6%)", "vs-number",
         f"the 5-gram's gain over the trigram at most the largest the lecture's rounded perplexities allow, "
         f"1 - {KN_ROUNDED[1] - 0.5}/{KN_ROUNDED[0] + 0.5} = {KN_BOUND:.2%} (deterministic: one run per "
         "order, the sign decides)", "- (not trained)", _kn_orders),
]


def brown_claims(lm_runs: dict[str, Run], kn_runs: dict[str, Run]) -> list[Claim]:
    nnlm = {label: s for label, s in by_label(lm_runs).items() if s[0].params["model"]["kind"] == "nnlm"}
    m = BrownMeasures(nnlm, kn_runs, cpu_hours(run for s in nnlm.values() for run in s))
    return evaluate(CHAPTER, _with_epochs(BROWN_SPECS, m), m,
                    seeds={**{label: len(s) for label, s in nnlm.items()}, KN: 1})


# ----------------------------------------------------------------------------------------------------- Elman
@dataclass
class ElmanMeasures:
    """The tree's partitions of every seed of each Elman setting (label), the main setting and its CPU
    hours."""

    parts: dict[str, list[dict]]
    main: str
    hours: float


def _share(stat: Stat) -> str:
    return f"{stat.mean:.0%}" + (f" ± {stat.sd:.0%}" if stat.n > 1 else "")


def _exact_split(m: ElmanMeasures, key: str) -> Measured:
    """An exact split on every seed of the main setting; a miss that another setting reproduces on every seed
    is put down to the setting."""
    exact = {label: [p[key] == 1.0 for p in ps] for label, ps in m.parts.items()}
    decision = rules.every_seed(exact[m.main], what="an exact split")
    elsewhere = [label for label, flags in exact.items() if label != m.main and rules.on_every_seed(flags)]
    share = Stat.of(p[key] for p in m.parts[m.main])
    return Measured(f"{m.main}: exact on {sum(exact[m.main])} of {len(exact[m.main])} seeds (share of words "
                    f"on their class's side {_share(share)})"
                    + (f"; exact on every seed of {', '.join(elsewhere)}" if elsewhere else ""),
                    decision, rests=[m.main],
                    cause=None if decision.holds is None else "setting" if elsewhere else "open",
                    settle="" if elsewhere else
                    f"Elman's own procedure (one word at a time, six passes, copy-back without gradients "
                    f"through time): about {max(m.hours, 0.1):.1f} CPU hours")


ELMAN_EPOCH = ("the epoch with the lowest held-out loss (sentences drawn like the training ones); the "
               "setting chosen by the same loss")
ELMAN_SOURCE = SOURCE_ELMAN + " Fig. 7, the hierarchical clustering shown in the lecture"
ELMAN_SPECS = [
    Spec(ELMAN_SOURCE, "the top split of the hidden-state tree separates nouns from verbs", QUOTE_ELMAN,
         "nouns | verbs", "every-seed",
         "the two-cluster cut puts every noun on one side and every verb on the other", ELMAN_EPOCH,
         lambda m: _exact_split(m, "noun_verb")),
    Spec(ELMAN_SOURCE, "within the nouns, animates separate from inanimates", QUOTE_ELMAN,
         "animate | inanimate", "every-seed",
         "the two-cluster cut of the nouns' tree matches animacy exactly", ELMAN_EPOCH,
         lambda m: _exact_split(m, "animate_inanimate")),
]


def elman_claims(runs: dict[str, Run]) -> list[Claim]:
    """The tree's splits on every seed of :func:`~urnlib.chapters.primer.report.main_setting` (chosen by
    held-out loss)."""
    if not runs:
        return []
    settings, main = by_label(runs), main_setting(runs)
    m = ElmanMeasures({label: seeds.each(elman_partitions) for label, seeds in settings.items()}, main,
                      cpu_hours(settings[main]))
    return evaluate(CHAPTER, ELMAN_SPECS, m, seeds={label: len(s) for label, s in settings.items()})


# ------------------------------------------------------------------------------------------------- a^n b^n
@dataclass
class CountingMeasures:
    """The largest n accepted over the seeds of each model kind (``lstm``, ``gru``, ``srn``), the
    lecture's N, and the epochs the runs trained."""

    kinds: dict[str, Seeds]
    n: int

    @property
    def largest(self) -> dict[str, Stat]:
        return {k: s.final("largest_accepted") for k, s in self.kinds.items()}

    @property
    def others(self) -> list[str]:
        return [k for k in ("gru", "srn") if k in self.kinds]

    @property
    def untrained(self) -> list[str]:
        """The kinds that accept nothing: they did not train (the per-seed guard of
        :func:`urnlib.rules.off_chance`)."""
        return [k.upper() for k, v in self.largest.items() if not rules.off_chance(0, v)]

    @property
    def epoch(self) -> str:
        epochs = sorted({len(run.history) for s in self.kinds.values() for run in s if run.history})
        return (f"final (epoch {', '.join(map(str, epochs))}; the lecture gives no number of epochs)"
                if epochs else "final epoch (the lecture gives no number of epochs)")


def _counting(m: CountingMeasures, needs: list[str], decided, paper=None) -> Measured:
    """A claim on the kinds ``needs``: no evidence where one of them did not train."""
    missing = [k for k in needs if k.upper() in m.untrained]
    held = decided.holds if isinstance(decided, Decision) else rules.combine(decided)[0]
    guard = f"; did not train (none accepted): {', '.join(m.untrained)}" if m.untrained else ""
    hours = max(cpu_hours(r for k in needs for r in m.kinds[k]), 0.1)
    ours = "; ".join(f"{k.upper()} {pm(v, 1)}" for k, v in m.largest.items())
    parts = "" if isinstance(decided, Decision) else "; ".join(d.direction for d in decided)
    return Measured(f"largest n accepted: {ours}{guard}", None if missing else decided, rests=needs,
                    direction=parts, cause="untrained" if missing else None if held is None else "open",
                    paper=paper, settle="more seeds, and the training setting of Weiss et al. (2018): about "
                                        f"{hours:.1f} CPU hours per rerun")


def _lstm_counts(m: CountingMeasures) -> Measured | None:
    if "lstm" not in m.kinds:
        return None
    return _counting(m, ["lstm"], beyond(m.largest["lstm"], m.n, "LSTM"), paper=f"beyond N = {m.n}")


def _others_stop(m: CountingMeasures) -> Measured | None:
    if not m.others:
        return None
    return _counting(m, m.others, [not_beyond(m.largest[k], m.n, k.upper()) for k in m.others])


def _lstm_best(m: CountingMeasures) -> Measured | None:
    if not m.others or "lstm" not in m.kinds:
        return None
    return _counting(m, ["lstm", *m.others], [rules.compare(m.largest["lstm"], m.largest[k],
                                                            names=("LSTM", k.upper())) for k in m.others])


ANBN_SPECS = [
    Spec(SOURCE_WEISS + " (the lecture's figure, N = 20)",
         "the LSTM counts: it accepts a^n b^n beyond its training range", QUOTE_WEISS, "beyond N",
         "vs-number", lambda m: f"LSTM's largest n accepted above N, N = {m.n}", "{m.epoch}", _lstm_counts),
    Spec(SOURCE_WEISS + " (the lecture's figure, N = 20)",
         "the GRU and the SRN do not generalise beyond their training range", QUOTE_WEISS, "they stop near N",
         "vs-number", lambda m: f"not largest n accepted above N, N = {m.n}, for "
                                + " and ".join(k.upper() for k in m.others) + "; no seed beyond N also holds",
         "{m.epoch}", _others_stop),
    Spec(SOURCE_WEISS + " (the lecture's summary)", "for the counting language the LSTM works best",
         QUOTE_BEST, "LSTM best", "beats",
         "LSTM above the GRU and the SRN; a model that accepts none did not train", "{m.epoch}", _lstm_best),
]
SPECS = [*BROWN_SPECS, *ELMAN_SPECS, *ANBN_SPECS]


def anbn_claims(runs: dict[str, Run], max_train_n: int) -> list[Claim]:
    """Counting beyond the training range: the largest n accepted, over the seeds of each model kind."""
    if not runs:
        return []
    kinds: dict[str, Seeds] = {}
    for seeds in anbn_stats(runs).values():
        kinds.setdefault(seeds[0].params["model"]["kind"], seeds)
    m = CountingMeasures(kinds, max_train_n)
    return evaluate(CHAPTER, _with_epochs(ANBN_SPECS, m), m, seeds={k: len(s) for k, s in kinds.items()})
