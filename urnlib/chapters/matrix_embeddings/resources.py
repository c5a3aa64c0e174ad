"""What the matrix-embedding chapter needs before any work: its corpora, and memory.

:func:`check_memory` estimates the largest tensors of every run of a configuration (before the corpus is
read, from :data:`VOCABULARY_BOUND`) and refuses one that cannot fit in :data:`MEMORY_BYTES`, naming the run
and the parameters to lower. The estimates are upper bounds of the tensors that dominate (float32 unless
said):

* 4.1: the ``(batch, length, V)`` scores of the softmax over the vocabulary at every word, with their
  log-softmax and gradients;
* 4.2, 4.3: the ``(batch, length, d, d)`` gathered word matrices (``d`` entries for the diagonal algebra) with
  their gradients; the parameters with Adam's moments; 4.2's dense ``(V, d, d)`` float64 matrices of
  sec. 4.2's properties; the float64 vectors of the analogy test;
* the URN language model: its ``(batch, length, V)`` logits in training and held-out evaluation
  (:data:`URN_EVAL_BATCH` sentences at a time), its ``(V, n, n)`` word matrices;
* word2vec: its input and output vectors.
"""

from __future__ import annotations

from urnlib.models.matrix_embedding import free_entry_count
from urnlib.models.registry import spec_string
from urnlib.params import ParameterError

__all__ = ["MEMORY_BYTES", "URN_EVAL_BATCH", "VOCABULARY_AT", "VOCABULARY_BOUND",
           "vocabulary_bound",
           "estimates", "check_memory", "check_corpus"]

MEMORY_BYTES = 24 * 2**30  #: what a configuration may need: this machine's memory
#: sentences per batch of the URN language model's held-out loss (its logits are batch x length x V floats:
#: 64 x 50 x 18k x 4 bytes = 230 MB at the paper preset)
URN_EVAL_BATCH = 64
#: ``min_count`` thresholds of :data:`VOCABULARY_BOUND`
VOCABULARY_AT = (1, 2, 3, 5, 10, 20, 50)
#: (corpus, lower) -> the number of distinct words of the whole corpus seen at least m times, for m in
#: VOCABULARY_AT (counted once on the pinned npm corpora). A vocabulary built from part of the corpus is never
#: larger: the memory estimate's bound on V.
VOCABULARY_BOUND = {
    ("brown", True): (49815, 27805, 20615, 14221, 8504, 5011, 2263),
    ("brown", False): (56057, 30498, 22339, 15173, 8895, 5164, 2276),
    ("sotu", True): (32144, 18448, 14987, 11675, 8257, 5679, 3192),
    ("sotu", False): (36413, 20631, 16455, 12655, 8781, 5975, 3316),
    ("brown+sotu", True): (63924, 34966, 26924, 19818, 13172, 8707, 4771),
    ("brown+sotu", False): (72634, 39082, 29719, 21523, 14066, 9151, 4926),
}
_CORPUS_BYTES = 2 * 2**30  # the corpus as Python token lists and id lists (3.1M words), with room to spare


def vocabulary_bound(config) -> int:
    """An upper bound of V (``<unk>`` included) for ``config``'s corpus, case, ``min_count`` and
    ``max_sentences``."""
    counts = VOCABULARY_BOUND[(config.corpus, config.lower)]
    words = counts[max(i for i, m in enumerate(VOCABULARY_AT) if m <= config.min_count)]
    if config.max_sentences:  # at most max_length words per sentence, each seen min_count times
        sources = len(config.corpus.split("+"))
        words = min(words, config.max_sentences * sources * config.max_length // config.min_count)
    return words + 1


def estimates(config) -> list[tuple[int, str, str]]:
    """``(bytes, run, parameters to lower)`` of every planned run (see the module docstring)."""
    V, T, B = vocabulary_bound(config), config.max_length, config.batch_size
    out = []
    for spec in config.model_specs():
        d, n_free = spec["d"], free_entry_count(spec["algebra"], spec["d"])
        op = n_free if spec["algebra"] == "diagonal" else d * d
        need = 4 * 4 * V * n_free + 3 * 8 * V * n_free  # parameters, gradient, Adam; the analogy vectors
        if spec["kind"] == "4.1":
            need += 4 * 4 * B * T * V + 3 * 4 * 4 * B * T * op  # scores, log-softmax, gradients; contexts
            lower = "batch_size or max_length, or raise min_count"
        else:
            need += 4 * 4 * B * T * (n_free + op) + (4 * 4 * d * V if spec["kind"] == "4.3" else 0)
            if spec["kind"] == "4.2" and spec["algebra"] != "diagonal":
                need += 2 * 8 * V * d * d  # the properties of sec. 4.2 on the dense (V, d, d) matrices
            lower = "batch_size or d, or raise min_count"
        out.append((need, f"model {spec_string(spec)!r}", lower))
    if config.urn_units:
        n, Vu = config.urn_units, V + 1  # the start symbol
        need = (4 * 4 * max(config.urn_batch_size, URN_EVAL_BATCH) * T * Vu  # logits, log-softmax, gradients
                + 8 * 4 * Vu * n * n + 3 * 8 * V * n * n)  # expm of the word matrices; the analogy vectors
        out.append((need, f"the URN language model (urn_units={n})",
                    "urn_batch_size, urn_units or max_length, or raise min_count"))
    if config.word2vec_size:
        out.append((4 * 4 * V * config.word2vec_size, f"word2vec (word2vec_size={config.word2vec_size})",
                     "word2vec_size"))
    return [(need + _CORPUS_BYTES, what, lower) for need, what, lower in out]


def check_memory(config) -> None:
    """Refuse a configuration one of whose runs cannot fit in :data:`MEMORY_BYTES`."""
    for need, what, lower in estimates(config):
        if need > MEMORY_BYTES:
            raise ParameterError(
                f"{what} needs about {need / 2**30:.0f} GiB of memory with a vocabulary of up to "
                f"{vocabulary_bound(config):,} words (corpus={config.corpus!r}, "
                f"min_count={config.min_count}), more than this machine's {MEMORY_BYTES / 2**30:.0f} GiB: "
                f"lower {lower}")


def check_corpus(corpus: str) -> None:
    """The corpora of ``corpus`` (``"brown"``, ``"sotu"`` or ``"brown+sotu"``) are installed, whole: the
    readers' own checks (:func:`urnlib.corpora.npm.verify`); the error says to run ``make data``."""
    from urnlib.corpora.brown import brown_files
    from urnlib.corpora.sotu import sotu_files

    for source in corpus.split("+"):
        {"brown": brown_files, "sotu": sotu_files}[source]()
