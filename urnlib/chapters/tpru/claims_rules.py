"""What the TPRU chapter's claims (:mod:`urnlib.chapters.tpru.claims`) share: the sentences of paper 002 they
decide, the tolerances the paper's own numbers give ("comparable", "similar"), the decisions "within a
tolerance" and "matches" (:func:`urnlib.rules.within`, :func:`urnlib.rules.matches`), the guard texts, the
training guard of the entailment encoders (:func:`untrained`) and what the entailment claims read
(:class:`Entailment`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from urnlib import rules
from urnlib.chapters.tpru.report import (CHAPTER, PAPER_TABLE2, PAPER_TABLE4, PAPER_TRAIN_SIZE, TEST_SPLITS,
                                         chance_bar, main_tpru, model_spec, role_series, runs_of_kind,
                                         slice_pairs, valid_accuracy)
from urnlib.chapters.tpru.report_ablation import settle_collapse
from urnlib.chapters.tpru.report_released import released_accuracy
from urnlib.chapters.tpru.report_scaled import settle_at_size
from urnlib.reports.common import cpu_hours
from urnlib.seeds import Seeds, Stat

__all__ = ["CHAPTER", "COMPARABLE", "SIMILAR", "TRAINED_RULE", "LM_TRAINED_RULE", "EPOCH", "QUOTES",
           "within", "paired", "untrained", "idle_of", "settle_for",
           "Entailment", "Ablation"]

#: :func:`urnlib.chapters.tpru.report_ablation.groups`: encoder -> setting -> its runs
Ablation = dict[str, dict[str, Seeds]]

within = rules.within  # the shared rule of "comparable" claims

#: "comparable" (Table 2): the LSTM's mean over the five test splits minus the TPRU - 512's, as printed
COMPARABLE = float(np.mean([PAPER_TABLE2["LSTM"][s] - PAPER_TABLE2["TPRU - 512"][s]
                            for s in TEST_SPLITS])) / 100
#: "similar perplexity" (Table 4): the largest relative gap between TPRU and LSTM the table prints
SIMILAR = max(max(t, m) / min(t, m) - 1 for t, m in ((PAPER_TABLE4["TPRU"][c], PAPER_TABLE4["LSTM"][c])
                                                      for c in ("WikiText-103", "WikiText-2")))
TRAINED_RULE = ("every model it rests on trained: best validation accuracy off chance over the seeds (mean - "
                "sd above 50% + 2 standard errors of the split, or its best surface baseline where higher)")
LM_TRAINED_RULE = ("every model it rests on trained: test perplexity below the vocabulary's size (a uniform "
                   "guess)")
EPOCH = ("best validation epoch, by the accuracy on generated validation pairs (its weights kept; the paper "
         "states no number of epochs)")
#: the sentences the claims decide, word for word from paper 002 (the PDF's text)
QUOTES = {
    "gru": "Overall, our proposed TPRU outperforms its closest comparison counterpart GRU",
    "lstm": "and provides comparable performance to the LSTM",
    "table2": "Accuracy of each model on the propositional Logical Entailment task.",
    "roles": "incorporating more role vectors leads to not only better performance, but also faster "
             "convergence during training.",
    "eight": "on the Logical Entailment task, the performance of our proposed TPRU with only eight role "
             "vectors matches that of a GRU with the same dimensionality.",
    "slices": "the eight-slice dot product, which enhances the fillers from one- to eight-dimensional "
              "vectors, leads to faster convergence rate and better performance on the training set when the "
              "number of role vectors is limited",
    "shrinks": "and its effect diminishes when the number of role vectors reaches a large value.",
    "similar": "our TPRU provides similar perplexity on the test set to the LSTM",
    "faster": "Our TPRU converges faster on the training set than the GRU and LSTM.",
    "table4": "Perplexity of language modelling on WikiText-2 and WikiText-103.",
    "table5": "Table 5 presents the top two PMI values for those POS tags for which these two values differ "
              "by at least 0.5: this includes 7 out of 17 fine-grained POS tags.",
    "informative": "since the roles learnt by the TPRU are informative about the POS tags",
    "table3": "Results on MNLI and QNLI. Our TPRU outperforms LSTM.",
    "bank": "In the toy example involving a polysemous word bank, our model can differentiate multiple "
            "senses of the word",
}


def paired(a: Seeds, b: Seeds, fn) -> Stat:
    """``fn(run_a, run_b)`` of the runs of equal seed position (the two models' seeds in order)."""
    return Stat.of(fn(ra, rb) for ra, rb in zip(a, b))


def idle_of(ent: dict[str, Seeds], labels: Sequence[str]) -> dict[str, str]:
    """Of ``labels``, the entailment encoders that did not train (best validation accuracy not off chance over
    the seeds), each with why: ``{label: "(seeds s, t at chance: best validation accuracy a%, b%, below
    c%)"}``, in the order of ``labels``."""
    out = {}
    for k in labels:
        seeds, bar = ent[k], chance_bar(ent[k], "valid")
        if rules.off_chance(bar, valid_accuracy(seeds)):
            continue
        best = [(s, max(r.column("valid_acc"))) for s, r in zip(seeds.seeds, seeds)]
        low = [(s, a) for s, a in best if a <= bar]
        out[k] = (f"({len(low)} of {len(seeds)} seeds at chance: seed{'s' if len(low) > 1 else ''} "
                  f"{', '.join(str(s) for s, _ in low)}, best validation accuracy "
                  f"{', '.join(f'{100 * a:.1f}%' for _, a in low)}, the bar {100 * bar:.1f}%)")
    return out


def untrained(ent: dict[str, Seeds], labels: Sequence[str]) -> list[str]:
    """Of ``labels``, the entailment encoders that did not train (:func:`idle_of`), each as ``"<label> (seeds
    s, t at chance: best validation accuracy a%, b%, below c%)"``."""
    return [f"{k} {why}" for k, why in idle_of(ent, labels).items()]


def settle_for(ent: dict[str, Seeds], ablation: Ablation, idle: Sequence[str], labels: Sequence[str]) -> str:
    """What would settle a claim on ``labels``, with its cost: where models did not train (``idle``: their
    labels), what the ablation found and the next experiment
    (:func:`urnlib.chapters.tpru.report_ablation.settle_collapse`), else the retrain at Evans et al.'s size
    (its TPRU with 512 roles)."""
    if idle:
        return settle_collapse(ent, ablation, list(idle), labels)
    top, train = main_tpru(ent), ent[labels[0]][0].params["task"]["train"]
    d, n = model_spec(ent[top])["d"], model_spec(ent[top])["n_roles"]
    per_step = (2 * 512 * d + 6 * d * d) / (2 * n * d + 6 * d * d)  # Table 1's time, N = 512 against ours
    if train >= PAPER_TRAIN_SIZE:  # the scaled group: at Evans et al.'s size already
        return settle_at_size(ent, labels, top, per_step)
    hours = sum(cpu_hours(ent[k]) * (per_step if k == top else 1) for k in labels) * PAPER_TRAIN_SIZE / train
    return (f"retrain {', '.join(labels)}" + (" (the TPRU with Table 2's 512 roles)" if top in labels else "")
            + f" on {PAPER_TRAIN_SIZE:,} generated training pairs (the size of Evans et al.'s training file, "
            f"which is not released; {PAPER_TRAIN_SIZE / train:.0f} times ours), every seed: about "
            f"{hours:.0f} CPU hours (ours took {cpu_hours(*(ent[k] for k in labels)):.1f})")


@dataclass
class Entailment:
    """What the entailment claims read: the runs by label (``ent``), their scores on Evans et al.'s released
    files (``released``), the ablation the settle texts read, and the words that say which runs decide Table
    2 (``basis``, :func:`urnlib.chapters.tpru.report_scaled.table2_basis`); the models each claim sets
    against each other, and which of them did not train (``idle``: :func:`idle_of`)."""

    ent: dict[str, Seeds]
    released: object = None
    ablation: Ablation = field(default_factory=dict)
    basis: str = ""

    def __post_init__(self):
        self.gru = next(iter(runs_of_kind(self.ent, "gru")), None)
        self.lstm = next(iter(runs_of_kind(self.ent, "lstm")), None)
        self.top = main_tpru(self.ent)
        self.series = role_series(self.ent)  # Fig. 1: N -> the one-slice TPRU
        self.pairs = slice_pairs(self.ent)  # Fig. 2: N -> (one slice, several slices)
        used = [self.top, self.gru, self.lstm, *self.series.values(),
                *(k for pair in self.pairs.values() for k in pair)]
        self.idle = idle_of(self.ent, [k for k in dict.fromkeys(used) if k is not None])
        self.seeds = {k: len(v) for k, v in self.ent.items()}

    def acc(self, label: str, split: str) -> Stat:
        """``label``'s accuracy on the released file ``split``."""
        return released_accuracy(self.released, label, split)

    def settle(self, labels: Sequence[str]) -> str:
        """What would settle a claim on ``labels`` (:func:`settle_for`), the guard's verdict included."""
        return settle_for(self.ent, self.ablation, [k for k in labels if k in self.idle], labels)
