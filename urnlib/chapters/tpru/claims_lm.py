"""The TPRU chapter's claims on language modelling (paper 002 sec. 6.2, Tables 4 and 5), declared
(:mod:`urnlib.declare`): the TPRU set against the LSTM (:data:`PAIR`), the perplexities themselves
(:data:`PERPLEXITIES`, not comparable: another corpus) and the roles against the POS tags (:data:`TAGS`). A
language model trained when its test perplexity is below the vocabulary's size (a uniform guess); a claim
resting on one that did not is no evidence."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from urnlib import rules
from urnlib.chapters.tpru.claims_rules import CHAPTER, LM_TRAINED_RULE, QUOTES as Q, SIMILAR, paired
from urnlib.chapters.tpru.report import (PAPER_LM, PMI_GAP, best_epoch, dedicated_tags, stopping_line,
                                         tpru_lm_runs)
from urnlib.claims import Claim
from urnlib.corpora.shipped import not_shipped
from urnlib.declare import Measured, Spec, evaluate
from urnlib.reports.common import cpu_hours
from urnlib.seeds import Seeds
from urnlib.trends import log2_trend

__all__ = ["lm_claims", "LanguageModels", "PAIR", "PERPLEXITIES", "TAGS"]

TAGS_SETTLE = "the paper's setting: a TPRU trained on MNLI, tagged by spaCy (MNLI is not here)"


@dataclass
class LanguageModels:
    """What the language-model claims read: the runs by label; the TPRU and the LSTM set against each other,
    the runs that measured the roles against the POS tags (``pmi``), and the models that did not train
    (``idle``: their test perplexity not clearly below the vocabulary's size)."""

    lm: dict[str, Seeds]
    sizes: dict[int, dict[str, Seeds]] = field(default_factory=dict)  # d -> both models again at it

    def __post_init__(self):
        self.tpru = next((k for k in self.lm if k.startswith("TPRU")), None)
        self.lstm = next((k for k in self.lm if k.startswith("LSTM")), None)
        pmi = tpru_lm_runs(self.lm)
        self.pmi = None if pmi is None else next(k for k, v in self.lm.items() if v is pmi)
        self.seeds = {k: len(v) for k, v in self.lm.items()}
        used = [k for k in dict.fromkeys((self.tpru, self.lstm, self.pmi)) if k is not None]
        self.idle = {k: f"(test perplexity {self.lm[k].final('test_ppl').text(1)}, the vocabulary "
                        f"{self.vocabulary(k):,})" for k in used
                     if not rules.off_chance(self.vocabulary(k), self.lm[k].final("test_ppl"), higher=False)}

    def vocabulary(self, label: str) -> int:
        return self.lm[label][0].final["data"]["vocabulary"]

    @property
    def pair(self) -> bool:
        return self.tpru is not None and self.lstm is not None

    def epoch(self, labels: Sequence[str | None]) -> str:
        """The epoch the claims on ``labels`` read: each run's best validation perplexity."""
        if not all(labels):
            return ""
        trained = [len(run.history) for k in labels for run in self.lm[k]]
        patience = self.lm[labels[0]][0].params["train"].get("patience")
        return (f"best validation perplexity epoch (the paper's selection; the runs stopped {patience} "
                f"epochs without a better one, after {min(trained)}-{max(trained)} of the paper's "
                f"{PAPER_LM['epochs']} epochs)")

    def bigger(self) -> float:
        """Both models at four times the dimension: about 16 times the work per step, in CPU hours."""
        return 16 * cpu_hours(self.lm[self.tpru], self.lm[self.lstm])


def lm_claims(lm: dict[str, Seeds], sizes: dict[int, dict[str, Seeds]] | None = None) -> list[Claim]:
    """The language-model claims on the runs ``lm`` (``{label: Seeds}``; ``sizes``: both models again at
    other dimensions, ``{d: {label: Seeds}}``, the size trend behind the perplexity claim's cause); the
    perplexities themselves are not comparable with the paper's whether the models trained or not (no
    guard)."""
    m = LanguageModels(lm, sizes or {})
    return (evaluate(CHAPTER, PAIR, m, seeds=m.seeds, idle=m.idle)
            + evaluate(CHAPTER, PERPLEXITIES, m, seeds=m.seeds)
            + evaluate(CHAPTER, TAGS, m, seeds=m.seeds, idle=m.idle))


def _similar(m: LanguageModels) -> Measured | None:
    if not m.pair:
        return None
    t, s = m.lm[m.tpru], m.lm[m.lstm]
    pt, pl = t.final("test_ppl"), s.final("test_ppl")
    ratio = paired(t, s, lambda a, b: a.final["test_ppl"] / b.final["test_ppl"] - 1)
    # the evidence: whether the pair was still improving when it stopped (then more epochs come first)
    stopped = stopping_line({m.tpru: t, m.lstm: s}, "valid_ppl", minimize=True)
    capped = [r for r in (*t, *s) if len(r.history) == r.params["train"]["epochs"]
              and best_epoch(r, "valid_ppl", True) == len(r.history)]
    cause, trend = size_trend(m)
    return Measured(f"Brown test {pt.text(1)} vs {pl.text(1)}; TPRU / LSTM - 1 per seed {ratio.text(3)}",
                    rules.matches(pt, pl, SIMILAR, relative=True, higher=False, names=("TPRU", "LSTM")),
                    rests=[m.tpru, m.lstm], evidence=f"the training, by validation perplexity: {stopped} "
                    + ("Some runs were still improving at their cap: more epochs come first." if capped else
                       "Every run stopped past its best epoch, before its cap: more epochs at this size are "
                       "not the experiment left, a larger size is.") + trend, cause=cause,
                    settle=f"whether the gap closes at a larger size: both models at 4 times our dimension "
                           f"on Brown, every seed: about {m.bigger():.0f} CPU hours (ours took "
                           f"{cpu_hours(t, s):.1f}); WikiText is not here")


def _ratio(a, b) -> float:
    return a.final["test_ppl"] / b.final["test_ppl"] - 1


def size_trend(m: LanguageModels) -> tuple[str | None, str]:
    """The perplexity claim's cause from the size trend: TPRU / LSTM - 1 per seed at each dimension (ours and
    ``m.sizes``' where both models trained), fitted on log2 of the dimension
    (:func:`urnlib.trends.log2_trend`) against the paper's gap :data:`SIMILAR`; ``scale`` where the line
    improves and reaches it within the doublings to the paper's dimension (1,024), else no cause;
    ``(None, "")`` without another size."""
    d0 = m.lm[m.tpru][0].params["setup"]["d"]
    points = {d0: paired(m.lm[m.tpru], m.lm[m.lstm], _ratio)}
    for d, group in sorted(m.sizes.items()):
        tpru = next((v for k, v in group.items() if k.startswith("TPRU")), None)
        lstm = next((v for k, v in group.items() if k.startswith("LSTM")), None)
        if tpru is not None and lstm is not None and all(
                rules.off_chance(run.final["data"]["vocabulary"], seeds.final("test_ppl"), higher=False)
                for seeds in (tpru, lstm) for run in seeds[:1]):
            points[d] = paired(tpru, lstm, _ratio)
    if len(points) < 2:
        return None, ""
    sizes = [d for d, stat in points.items() for _ in stat.values]
    line = log2_trend(sizes, [v for stat in points.values() for v in stat.values], target=SIMILAR,
                      higher=False, room=math.log2(PAPER_LM["d"] / max(points)))
    each = "; ".join(f"dimension {d}: {points[d].text(3)}" for d in sorted(points))
    said = line.words("dimension", f"{SIMILAR:.3f}", max(points), what="dimension",
                      theirs=f"the paper's {PAPER_LM['d']:,} is")
    verdict = ("The gap closes with the dimension and reaches the paper's within its size: the scale "
               "explains the miss" if line.reaches else "The trend does not show the scale as the cause")
    return ("scale" if line.reaches else None), (f" Size trend (TPRU / LSTM - 1 per seed, by dimension, the "
                                                 f"TPRU's roles scaled alike): {each}; {said}. {verdict}.")


def _gap(a, b) -> float:
    """The LSTM's training loss minus the TPRU's, over the epochs both trained."""
    k = min(len(a.history), len(b.history))
    return float(np.mean(np.subtract(b.column("train_loss")[:k], a.column("train_loss")[:k])))


def _common(m: LanguageModels) -> list[int]:
    """Each seed pair's common epochs."""
    if not m.pair:
        return [0]
    return [min(len(a.history), len(b.history)) for a, b in zip(m.lm[m.tpru], m.lm[m.lstm])]


def _faster(m: LanguageModels) -> Measured | None:
    if not m.pair:
        return None
    gaps = paired(m.lm[m.tpru], m.lm[m.lstm], _gap)
    return Measured(f"LSTM minus TPRU training NLL, mean over the epochs both trained: {gaps.text(3)}",
                    rules.paired(gaps, name="LSTM minus TPRU training NLL"), rests=[m.tpru, m.lstm],
                    settle=f"the curves at a larger size: about {m.bigger():.0f} CPU hours (see the "
                           "perplexity claim)")


def _perplexities(m: LanguageModels) -> Measured | None:
    if not m.pair:
        return None
    return Measured(f"{m.lm[m.tpru].final('test_ppl').text(1)} (Brown)", None, rests=[m.tpru, m.lstm],
                    cause="data", direction="", evidence=not_shipped("WikiText-103", "WikiText-2"),
                    settle="WikiText-103 and WikiText-2 (not reachable here) and two-layer models of "
                           "dimension 1024 trained 64 epochs: a GPU job of days, beyond this machine")


def _dedicated(m: LanguageModels) -> Measured | None:
    if m.pmi is None:
        return None
    seeds = m.lm[m.pmi]
    wide = seeds.stat(lambda run: len(dedicated_tags(run.final["pmi"])[0]))
    first, ranked = dedicated_tags(seeds[0].final["pmi"])
    decision = rules.threshold(wide, 6.5, name="tags per seed")  # whole counts: at least 7
    return Measured(f"tags per seed {wide.text(1)}; seed {seeds.seeds[0]}: {len(first)} of {ranked} "
                    f"({', '.join(first) or 'none'})",
                    decision, decision.holds is False and rules.at_least(wide, 0.5) is True, rests=[m.pmi],
                    settle=TAGS_SETTLE)


def _informative(m: LanguageModels) -> Measured | None:
    if m.pmi is None:
        return None
    mi = m.lm[m.pmi].stat(lambda r: r.final["pmi"]["mutual_information"]
                          - r.final["pmi_untrained"]["mutual_information"])
    return Measured(f"I(role; tag) trained minus untrained, per seed: {mi.text(3)} nats",
                    rules.paired(mi, name="I(role; tag) gained"), rests=[m.pmi], settle=TAGS_SETTLE)


PAIR = [
    Spec("paper 002 Table 4", "the TPRU's perplexity is similar to the LSTM's", Q["similar"],
         f"WikiText-103 41.4 vs 42.3, WikiText-2 76.8 vs 76.0 (at most {100 * SIMILAR:.1f}% apart)",
         "matches",
         f"within the {100 * SIMILAR:.1f}% Table 4 calls similar, either way; {LM_TRAINED_RULE}",
         lambda m: m.epoch([m.tpru, m.lstm]), _similar),
    Spec("paper 002 Table 4 (right), sec. 6", "the TPRU converges faster on the training set than the LSTM",
         Q["faster"], "lower training NLL throughout (WikiText-103)", "beats-paired",
         f"that gap > 0, whole curve; {LM_TRAINED_RULE}",
         lambda m: f"epochs 1-{min(_common(m))} to 1-{max(_common(m))} (each seed pair's common epochs: the "
                   "curve, no selection)", _faster),
]
PERPLEXITIES = [
    Spec("paper 002 Table 4 (left)", "the perplexities themselves", Q["table4"], "41.4 / 76.8 (WikiText)",
         "check",
         "not comparable: WikiText is not reachable offline; another corpus, vocabulary and model size",
         lambda m: m.epoch([m.tpru, m.lstm]), _perplexities),
]
TAGS = [
    Spec("paper 002 sec. 6.2, Table 5",
         f"some POS tags have a role dedicated to them: the top two PMI values differ by at least {PMI_GAP}",
         Q["table5"], "7 of 17 tags (ADV, DET, INTJ, NOUN, PART, PROPN, VERB)", "vs-number",
         f"at least 7 tags: above 6.5 (partly: at least 1, the paper's 'some'); {LM_TRAINED_RULE}",
         lambda m: m.epoch([m.pmi]), _dedicated),
    Spec("paper 002 sec. 6.2", "the roles the TPRU learns are informative about POS tags", Q["informative"],
         "roles associated with tags after training on MNLI", "beats-paired",
         f"difference > 0; {LM_TRAINED_RULE}", lambda m: m.epoch([m.pmi]), _informative),
]
