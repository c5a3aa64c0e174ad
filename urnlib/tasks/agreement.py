"""The agreement task (paper 000 sec. 4; Linzen, Dupoux & Goldberg 2016): its sources, their examples, the
vocabulary, the encoded prefixes and the evaluation by number of attractors.

A classifier reads a sentence up to the word before a present-tense verb and predicts the verb's number.
Three data sources, one format (:mod:`urnlib.corpora.linzen`):

* ``"synthetic"``: the agreement grammar (:mod:`urnlib.languages.agreement_grammar`); training sentences
  have 0 .. ``train_max_attractors`` attractors and as many extra nouns of the subject's number, drawn alike
  (``symmetric``: the other nouns' numbers tell nothing about the verb's), the test set has equally many
  sentences per count 0 .. ``max_attractors`` (and 0-2 extra nouns), so the curve of Fig. 2 is measured
  where real text has too few examples;
* ``"offline"``: real English from the Brown corpus and the State of the Union addresses, parsed here
  (:mod:`urnlib.corpora.agreement_builder`, cached);
* ``"linzen"``: Linzen et al.'s released validation and test files (simplified form, shipped;
  :mod:`urnlib.tasks.agreement_linzen` says which part trains and which tests);
* a path to a TSV in the format of Linzen et al. (the paper's ``agr_50_mostcommon_10K.tsv.gz``).

Real text is split 90/10 by a seeded shuffle of its sentences (paper 000 sec. 4; a sentence with two
selected verbs stays on one side). The vocabulary is the ``vocab_size`` most frequent words of the
training sentences; any other word is replaced by its POS tag (paper 000 sec. 4; Linzen et al.).
Two heuristics are scored on every test set beside the models (:data:`HEURISTICS`): the number of the
sentence's *first noun* and of the noun *nearest the verb* (the last noun of the prefix; Linzen et al.'s
tags ``NN``/``NNS``). A model's accuracy means something only where it beats both.
:func:`validation_data` draws held-out grammar sentences like the training ones (the zoo's early stopping).
Used by :mod:`urnlib.chapters.agreement.experiment` and :mod:`urnlib.chapters.zoo.experiment`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora.linzen import (NAMED_SOURCES, OBTAIN_HINT, AgreementExample, attractor_histogram,
                                   read_tsv, source_names, split_sentences)
from urnlib.params import ParameterError, check_float, check_int
from urnlib.tokens import IGNORE, TokenData, device_of

__all__ = ["SyntheticTask", "CorpusTask", "task_for", "tasks_for", "task_of", "source_name", "source_kind",
           "AgreementVocab", "build_vocab", "AgreementData", "make_data", "encode_examples",
           "evaluate_agreement", "validation_data", "grammar_vocab_size", "PAD", "HEURISTICS",
           "heuristic_accuracy"]

PAD = "<pad>"
NOUN_TAGS = ("NN", "NNS")  # Linzen et al.'s nouns: the tags attractors are counted on


def _noun_plural(example: AgreementExample, last: bool) -> bool:
    """Is the first (or last) noun of the prefix plural? A prefix without a noun: singular."""
    tags = example.pos[: example.verb_index]
    nouns = [t for t in tags if t in NOUN_TAGS]
    return bool(nouns) and nouns[-1 if last else 0] == "NNS"


#: baselines that read only the nouns' tags: name -> predicted plural? of an example
HEURISTICS = {"first noun": lambda ex: _noun_plural(ex, last=False),
              "nearest noun": lambda ex: _noun_plural(ex, last=True)}


def heuristic_accuracy(examples: list[AgreementExample]) -> dict[str, dict[str, Any]]:
    """Each of :data:`HEURISTICS` on ``examples``: ``accuracy`` and ``attr_correct[a]``, ``attr_total[a]``
    (the layout of :func:`evaluate_agreement`)."""
    size = max((ex.n_attractors for ex in examples), default=0) + 1
    out = {}
    for name, predict in HEURISTICS.items():
        correct, total = [0] * size, [0] * size
        for ex in examples:
            total[ex.n_attractors] += 1
            correct[ex.n_attractors] += int(predict(ex) == ex.plural)
        out[name] = {"accuracy": sum(correct) / max(len(examples), 1), "attr_correct": correct,
                     "attr_total": total}
    return out


@dataclass(frozen=True)
class SyntheticTask:
    """Sentences of the agreement grammar (the values come from a chapter's Config)."""

    train_size: int  # training sentences
    test_per_count: int  # test sentences per attractor count 0 .. max_attractors
    train_max_attractors: int  # training sentences have 0 .. this many attractors (uniformly)
    max_attractors: int  # test sentences have 0 .. this many
    seed: int  # grammar seed (train and test streams derive from it)

    def __post_init__(self):
        check_int("train_size", self.train_size, minimum=2)
        check_int("test_per_count", self.test_per_count, minimum=1)
        check_int("max_attractors", self.max_attractors, minimum=0, maximum=12)
        check_int("train_max_attractors", self.train_max_attractors, minimum=0, maximum=self.max_attractors)
        check_int("seed", self.seed, minimum=0)


@dataclass(frozen=True)
class CorpusTask:
    """Real sentences: ``source`` is ``"offline"`` or the path of a Linzen-format TSV."""

    source: str
    vocab_size: int  # most frequent training words kept; the others are replaced by their POS tag
    test_fraction: float  # held-out share of the sentences
    max_examples: int  # use only the first this many examples of the file (0: all)
    offline_max_sentences: int  # offline build: sentences read per source text (0: all)
    seed: int  # seed of the split

    def __post_init__(self):
        if not isinstance(self.source, str) or not self.source:
            raise ParameterError(f"source={self.source!r}: {OBTAIN_HINT}")
        check_int("vocab_size", self.vocab_size, minimum=1)
        check_float("test_fraction", self.test_fraction, minimum=0.0, maximum=0.9, strict_min=True)
        check_int("max_examples", self.max_examples, minimum=0)
        check_int("offline_max_sentences", self.offline_max_sentences, minimum=0)
        check_int("seed", self.seed, minimum=0)


def task_for(source: str, *, synthetic: dict[str, Any], corpus: dict[str, Any]) -> SyntheticTask | CorpusTask:
    """The task of one data source: ``"synthetic"``, ``"offline"`` or a path (which must exist)."""
    if source == "synthetic":
        return SyntheticTask(**synthetic)
    if source not in NAMED_SOURCES and not Path(source).is_file():
        raise ParameterError(f"data source {source!r} is neither 'synthetic', 'offline', 'linzen' nor an "
                             f"existing file. {OBTAIN_HINT}")
    return CorpusTask(source=str(source), **corpus)


def tasks_for(sources: list[str], *, synthetic: dict[str, Any],
              corpus: dict[str, Any]) -> dict[str, SyntheticTask | CorpusTask]:
    """:func:`task_for` of every source, by :func:`source_name`; two sources with one name are a
    ParameterError naming both (:func:`urnlib.corpora.linzen.source_names`)."""
    sources = list(sources)
    names = source_names(sources)
    return {name: task_for(source, synthetic=synthetic, corpus=corpus)
            for name, source in zip(names, sources)}


def task_of(params: dict[str, Any]) -> SyntheticTask | CorpusTask:
    """The task of a run's stored ``params["task"]``."""
    return CorpusTask(**params) if "source" in params else SyntheticTask(**params)


def source_name(task: SyntheticTask | CorpusTask) -> str:
    """A short name for figures and the run store: ``synthetic``, ``offline`` or the file's stem."""
    if isinstance(task, SyntheticTask):
        return "synthetic"
    return source_names([task.source])[0]


def source_kind(task: SyntheticTask | CorpusTask) -> str:
    """``"synthetic"``, ``"offline"``, ``"linzen"`` or ``"file"``."""
    if isinstance(task, SyntheticTask):
        return "synthetic"
    return task.source if task.source in NAMED_SOURCES else "file"


@dataclass
class AgreementVocab:
    """``<pad>``, then words by decreasing training frequency, then POS tags (for the other words)."""

    tokens: list[str]
    n_words: int  # tokens[1 : 1 + n_words] are words
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self):
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def words(self) -> list[str]:
        return self.tokens[1 : 1 + self.n_words]

    def encode(self, words, tags) -> list[int]:
        """Word ids, a word outside the vocabulary by its tag (a tag unseen in training: the padding id)."""
        word_ids = self.index
        return [word_ids[w] if w in word_ids and word_ids[w] <= self.n_words else word_ids.get("#" + t, 0)
                for w, t in zip(words, tags)]


def build_vocab(examples: list[AgreementExample], size: int) -> AgreementVocab:
    """The ``size`` most frequent words (ties: alphabetical); POS tags enter as ``#TAG`` tokens."""
    counts = Counter(w for ex in examples for w in ex.words)
    words = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]]
    tags = sorted({"#" + t for ex in examples for t in ex.pos})
    return AgreementVocab([PAD, *words, *tags], len(words))


@dataclass
class AgreementData:
    vocab: AgreementVocab
    train: TokenData
    test: TokenData
    test_attractors: torch.Tensor  # (N_test,)
    stats: dict[str, Any]  # sizes, attractor histograms, majority baseline: stored with every run
    word_tags: dict[str, Counter]  # tags each vocabulary word had in training (for the analyses)
    valid: TokenData | None = None  # validation sentences drawn like the training ones (make_data(..., True))


def encode_examples(examples: list[AgreementExample], vocab: AgreementVocab) -> TokenData:
    """Prefixes right-padded; the target (0 singular, 1 plural) sits at the prefix's last word."""
    T = max(len(ex.prefix) for ex in examples)
    inputs = torch.zeros(len(examples), T, dtype=torch.long)
    targets = torch.full((len(examples), T), IGNORE, dtype=torch.long)
    for i, ex in enumerate(examples):
        ids = vocab.encode(ex.prefix, ex.pos[: ex.verb_index])
        inputs[i, : len(ids)] = torch.tensor(ids)
        targets[i, len(ids) - 1] = int(ex.plural)
    return TokenData(inputs, targets)


def _split(task: SyntheticTask | CorpusTask, pool: float = 0.0
           ) -> tuple[list[AgreementExample], list[AgreementExample], dict[str, Any]]:
    """Training and test examples of a source, and what a source's split reports beyond them (``pool``: the
    share of Linzen et al.'s test files that trains, :func:`urnlib.tasks.agreement_linzen.linzen_split`)."""
    if pool and not (isinstance(task, CorpusTask) and task.source == "linzen"):
        raise ParameterError(f"pool={pool}: a share of test sentences that trains is for the 'linzen' source "
                             "(Linzen et al.'s test files), not for this source")
    if isinstance(task, SyntheticTask):
        from urnlib.languages import agreement_grammar as grammar

        # attractors and extra nouns drawn alike: the nouns' numbers carry no cue (generate, symmetric)
        train = grammar.generate(task.train_size, attractor_counts=list(range(task.train_max_attractors + 1)),
                                 symmetric=True, rng=np.random.default_rng([task.seed, 0]))
        counts = list(range(task.max_attractors + 1))
        test = grammar.generate(task.test_per_count * len(counts), attractor_counts=counts, stratified=True,
                                rng=np.random.default_rng([task.seed, 1]))
        return train, test, {}
    if task.source == "linzen":
        from urnlib.tasks.agreement_linzen import linzen_split

        train, test, info = linzen_split(task.seed, task.test_fraction, task.max_examples, pool)
        return train, test, {"linzen": info}
    if task.source == "offline":
        from urnlib.corpora.agreement_builder import offline_dataset

        path = offline_dataset(max_sentences=task.offline_max_sentences or None, verbose=False)
    else:
        path = Path(task.source)
    examples = read_tsv(path, limit=task.max_examples or None)
    if len(examples) < 10:
        raise ParameterError(f"{path}: only {len(examples)} examples; need at least 10 to split 90/10")
    return (*split_sentences(examples, task.test_fraction, task.seed), {})


def _hold_out(train: list[AgreementExample], task: CorpusTask
              ) -> tuple[list[AgreementExample], list[AgreementExample]]:
    """Validation sentences carved from the training side of real text: ``test_fraction`` of its sentences,
    by a shuffle from the stream ``[seed, 2]`` (a sentence's verbs stay on one side)."""
    return split_sentences(train, task.test_fraction, [task.seed, 2])


@lru_cache(maxsize=4)
def make_data(task: SyntheticTask | CorpusTask, validation: bool = False,
              train_fraction: float = 1.0, pool: float = 0.0) -> AgreementData:
    """Examples of the source, split, vocabulary, encoded prefixes and the data statistics. With
    ``validation``, also validation sentences drawn like the training ones: new grammar sentences
    (:func:`validation_data`), or for real text a part of the training side held out (:func:`_hold_out`;
    the vocabulary is then built from the rest). ``train_fraction`` < 1 (real text only; the agreement
    chapter's size trend) trains on that share of the training sentences, drawn by sentence from the stream
    ``[seed, 3]`` after the validation sentences are held out (a smaller share lies inside a larger one; the
    test and validation sentences stay those of the whole), and builds the vocabulary from them. ``pool``
    (the ``linzen`` source only): that share of each of Linzen et al.'s test files joins the training
    sentences before the validation sentences are held out, the rest is tested
    (:func:`urnlib.tasks.agreement_linzen.linzen_split`)."""
    train, test, split_info = _split(task, pool)
    valid_examples = None
    if validation and isinstance(task, CorpusTask):
        train, valid_examples = _hold_out(train, task)
    if train_fraction < 1:
        if not isinstance(task, CorpusTask):
            raise ParameterError(f"train_fraction={train_fraction}: a part of the training sentences is for "
                                 "real text; draw fewer grammar sentences (train_size)")
        _, train = split_sentences(train, train_fraction, [task.seed, 3])
    size = task.vocab_size if isinstance(task, CorpusTask) else 10**9  # the grammar's lexicon is small
    vocab = build_vocab(train, size)
    word_tags: dict[str, Counter] = {}
    for ex in train:
        for w, t in zip(ex.words, ex.pos):
            word_tags.setdefault(w, Counter())[t] += 1
    stats = {
        "source": source_name(task), "train_examples": len(train), "test_examples": len(test),
        "vocabulary": len(vocab), "words": vocab.n_words,
        "train_attractors": {str(k): v for k, v in attractor_histogram(train).items()},
        "test_attractors": {str(k): v for k, v in attractor_histogram(test).items()},
        "test_plural_share": float(np.mean([ex.plural for ex in test])),
        "mean_prefix_length": float(np.mean([len(ex.prefix) for ex in train])),
        "heuristics": heuristic_accuracy(test),
        **split_info,
    }
    valid = None
    if validation:
        valid = (encode_examples(valid_examples, vocab) if valid_examples is not None
                 else validation_data(task, vocab))
        stats["valid_examples"] = len(valid)
    return AgreementData(vocab, encode_examples(train, vocab), encode_examples(test, vocab),
                         torch.tensor([ex.n_attractors for ex in test]), stats, word_tags, valid)


@torch.no_grad()
def evaluate_agreement(model: torch.nn.Module, data: AgreementData, batch_size: int = 1024) -> dict[str, Any]:
    """Test accuracy, overall and by number of attractors (``attr_correct[a]``, ``attr_total[a]``).

    In batches of ``batch_size`` sentences, keeping only the prediction at each sentence's scored position.
    """
    was_training = model.training
    model.eval()
    correct = []
    try:
        for i in range(0, len(data.test), batch_size):
            inputs, targets = data.test.batch(slice(i, i + batch_size))
            scored = targets != IGNORE  # one position per sentence
            correct.append(model(inputs.to(device_of(model))).argmax(-1).cpu()[scored] == targets[scored])
    finally:
        model.train(was_training)
    hits = torch.cat(correct).double()
    size = int(data.test_attractors.max()) + 1
    by_count = torch.bincount(data.test_attractors, weights=hits, minlength=size)
    return {
        "accuracy": float(hits.mean()),
        "attr_correct": [int(v) for v in by_count.tolist()],
        "attr_total": [int(v) for v in torch.bincount(data.test_attractors, minlength=size).tolist()],
    }


def validation_data(task: SyntheticTask, vocab: AgreementVocab) -> TokenData:
    """Validation sentences of the agreement grammar, drawn like the training sentences of :func:`make_data`
    (0 .. ``train_max_attractors`` attractors, the other nouns' numbers drawn alike) from the stream
    ``[seed, 2]``, as many as the test set, encoded with the run's vocabulary; the target (0 singular,
    1 plural) sits at each prefix's last word."""
    from urnlib.languages import agreement_grammar as grammar

    examples = grammar.generate(task.test_per_count * (task.max_attractors + 1),
                                attractor_counts=list(range(task.train_max_attractors + 1)), symmetric=True,
                                rng=np.random.default_rng([task.seed, 2]))
    return encode_examples(examples, vocab)


def grammar_vocab_size() -> int:
    """Symbols of every sentence the agreement grammar can make, as :func:`build_vocab` counts them: padding,
    every word of its lexicon, every tag."""
    from urnlib.languages.agreement_grammar import LEXICON, TAGS

    return 1 + len(LEXICON) + len(TAGS)
