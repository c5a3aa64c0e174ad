"""What the TPRU chapter's claims (:mod:`urnlib.chapters.tpru.claims`) share: the sentences of paper 002 they
decide, the tolerances the paper's own numbers give ("comparable", "similar"), the decision "within a
tolerance" built on :func:`urnlib.rules.compare`, the guard texts, and the function that adds a claim.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from urnlib import rules
from urnlib.claims import claim
from urnlib.chapters.tpru.report import CHAPTER, PAPER_TABLE2, PAPER_TABLE4, TEST_SPLITS
from urnlib.seeds import Seeds, Stat

__all__ = ["COMPARABLE", "SIMILAR", "TRAINED_RULE", "LM_TRAINED_RULE", "EPOCH", "QUOTES", "add", "within",
           "matches", "paired", "least"]

within, matches = rules.within, rules.matches  # the shared rule of "comparable" / "similar" claims

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


def least(*groups: Seeds) -> int:
    """The seeds a claim on ``groups`` rests on: the fewest of any group."""
    return min(len(g) for g in groups)


def paired(a: Seeds, b: Seeds, fn) -> Stat:
    """``fn(run_a, run_b)`` of the runs of equal seed position (the two models' seeds in order)."""
    return Stat.of(fn(ra, rb) for ra, rb in zip(a, b))


def add(out: list, source: str, statement: str, paper: str, ours: str, rule: str, holds, seeds: int,
        partly: bool = False, *, quote: str, epoch: str = EPOCH, idle: Sequence[str] = (), settle: str = "",
        direction: str = "", cause: str | None = None, trained: str = TRAINED_RULE,
        seeds_needed: int | None = None) -> None:
    """Append a claim on trained runs to ``out``: :func:`urnlib.claims.claim`, whose one training guard and
    settle policy every chapter shares (``idle``: the models it rests on that did not train), with
    ``trained``, the guard in words, added to the rule; ``seeds_needed``: a claim of several parts left
    undecided, the seeds that would decide them (:func:`urnlib.rules.needed`)."""
    direction = direction or (getattr(holds, "direction", "") if idle else "")
    out.append(claim(CHAPTER, source, statement, paper, ours, f"{rule}; {trained}", holds, partly,
                     seeds=seeds, cause=cause, quote=quote, epoch=epoch, direction=direction, settle=settle,
                     seeds_needed=seeds_needed, idle=idle))


