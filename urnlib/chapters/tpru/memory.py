"""How much memory the TPRU chapter's runs need
(:meth:`urnlib.chapters.tpru.experiment.Config.memory_estimate`): the generated entailment splits, the largest
encoder and language model, and a training and an evaluation batch of each, counted generously from the
chapter's parameters, each with the parameters that lower it."""

from __future__ import annotations

from typing import Any

from urnlib.chapters.tpru import lm
from urnlib.models.tpru_counts import bias_count, table1_parameter_count

__all__ = ["memory_estimate", "ROW_TOKENS"]

#: tokens of a packed pair ``premise <sep> hypothesis`` in each generated split (the longest row sets the
#: width of the split's tensor; measured on our generator: train 98, valid 96, hard 225, big 306, massive 296)
ROW_TOKENS = {"train": 100, "valid": 100, "easy": 100, "hard": 230, "big": 310, "massive": 300}
PAIR_OBJECT_BYTES = 2048  #: a generated pair as Python objects (formulas, strings) while the splits are built
BROWN_READ_BYTES = 160 * 2**20  #: the tagged Brown corpus read as Python lists of words and tags
EVAL_ROWS = 1024  #: pairs per evaluation batch of the per-epoch accuracy (urnlib.models.entailment)
LM_EVAL_ROWS = 64  #: rows per batch of the perplexity (urnlib.tasks.brown_lm.next_token_probs)


def memory_estimate(config) -> dict[str, tuple[float, str]]:
    """Bytes of the largest things the runs of ``config`` (a :class:`~urnlib.chapters.tpru.experiment.Config`)
    hold, each with the parameters that lower it."""
    counts = {"train": config.train_size, "valid": config.valid_size,
              **dict.fromkeys(("easy", "hard", "big", "massive"), config.test_size)}
    data = sum(n * (8 * ROW_TOKENS[s] + PAIR_OBJECT_BYTES) for s, n in counts.items())
    specs = list(config.encoders().values())
    encoder = max(_encoder_bytes(config, s) for s in specs)
    half = ROW_TOKENS["train"] // 2 + 10  # a premise or hypothesis, with room
    step = max(_step_floats(s["kind"], s["d"], s["n_roles"], s["slices"]) for s in specs)
    vocab = min(lm.BROWN_TYPES, lm.BROWN_TOKENS // config.lm_min_count) + 2  # at most; + <unk>, start
    length = config.lm_warmup + config.lm_window
    wanted = config.lm_train_tokens + config.lm_valid_tokens + config.lm_test_tokens
    rows = (wanted or lm.BROWN_TOKENS) * length / config.lm_window
    lm_step = max(_step_floats(k, config.lm_d, config.lm_roles, config.lm_slices) for k in config.lm_models)
    return {
        "the entailment data": (data, "train_size, valid_size or test_size"),
        # weights, gradients and Adam's two moments (float32), and the TPRU's bases and products
        "the largest entailment model": (encoder, "the D or N of models, embedding_size or hidden"),
        # premise and hypothesis of every pair: 2 batch_size rows, each step's saved tensors per layer
        "an entailment training batch": (2 * config.batch_size * half * config.layers * step * 4.0,
                                         "batch_size, or the D or N of models"),
        "an entailment evaluation batch": (2 * EVAL_ROWS * half * config.layers * step * 4.0 / 4,
                                           "the D or N of models"),
        "the Brown corpus and its rows": (BROWN_READ_BYTES + rows * 2 * 8.0, "lm_window or lm_warmup"),
        "the largest language model": (_lm_bytes(config, vocab), "lm_d or lm_roles"),
        # logits, their log-softmax and gradients (float32), and the recurrent steps
        "a language-model training batch": (
            config.lm_batch_size * length * (vocab * 4.0 * 3 + config.lm_layers * lm_step * 4.0),
            "lm_batch_size, lm_window, lm_warmup or lm_d"),
        # next_token_probs: float64 log-softmax of a batch of rows
        "a language-model evaluation batch": (LM_EVAL_ROWS * length * vocab * 8.0 * 3,
                                              "lm_window or lm_warmup"),
    }


def _step_floats(kind: str, d: int, n_roles: int | None, slices: int | None) -> float:
    """Floats autograd keeps per row, step and layer (a generous count)."""
    return 12 * d + (8 * (slices or 1) * n_roles if kind == "tpru" else 0)


def _layer_floats(kind: str, d: int, d_in: int, n_roles: int | None, slices: int | None) -> float:
    weights = table1_parameter_count(kind, d, d_in) + bias_count(kind, d)
    bases = 3 * d * n_roles + 2 * d * ((slices or 1) * n_roles + d) if kind == "tpru" else 0
    return 4 * weights + 3 * bases


def _encoder_bytes(config, spec: dict[str, Any]) -> float:
    d, e, h = spec["d"], config.embedding_size, config.hidden
    layers = sum(_layer_floats(spec["kind"], d, e if i == 0 else d, spec["n_roles"], spec["slices"])
                 for i in range(config.layers))
    rest = 4 * (40 * e + (4 * d + 1) * h + 2 * (h + 1))  # the logic vocabulary has < 40 symbols
    return 4.0 * (layers + rest)


def _lm_bytes(config, vocab: int) -> float:
    d = config.lm_d
    per_kind = [config.lm_layers * _layer_floats(k, d, d, config.lm_roles, config.lm_slices)
                for k in config.lm_models]
    table = vocab * d * (1 if config.lm_tie_weights else 2) + vocab
    return 4.0 * (max(per_kind) + 4 * table)
