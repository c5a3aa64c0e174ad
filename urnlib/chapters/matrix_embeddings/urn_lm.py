"""The baselines of the matrix-embedding chapter, on its sentences and vocabulary
(:func:`urnlib.tasks.matrix_lm.make_data`): a URN language model, word2vec and Kneser-Ney.

Paper 003's matrices are non-negative (4.2, 4.3) or unconstrained (4.1); a URN (paper 000) embeds every word
as an orthogonal matrix ``Q = expm(S)`` and reads a sentence by multiplying them onto a state. Trained as a
next-word model, its flattened ``Q``'s answer the same analogy questions (the cosine of two orthogonal
matrices is ``<P, Q>_F / n``). A softmax over the whole vocabulary at every word makes it the slowest model
of the chapter; its held-out loss is measured after every epoch (the monitor of its early stopping) by
:func:`urnlib.train.evaluate_loss`, :data:`~urnlib.chapters.matrix_embeddings.resources.URN_EVAL_BATCH`
sentences at a time (never all N x T x V logits). word2vec (gensim's CBOW) is the vector baseline of the
analogy test, an interpolated Kneser-Ney n-gram the perplexity baseline (count-based: no seed, no weights).

Their runs are in :meth:`urnlib.chapters.matrix_embeddings.experiment.Config.plan`, trained by
:func:`train_run`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora.analogy import evaluate_3cosadd
from urnlib.chapters.matrix_embeddings.resources import URN_EVAL_BATCH
from urnlib.models import build_model, count_parameters
from urnlib.results import RunSpec, Trained
from urnlib.tasks.matrix_lm import LMData, LMTask, analogies, analogy_numbers, lm_data, make_data, neighbours
from urnlib import losses
from urnlib.train import TrainConfig, fit, seed_everything

#: lm_data is urnlib.tasks.matrix_lm's, named here for the tests
__all__ = ["lm_data", "train_run", "word_vectors"]


def word_vectors(model) -> np.ndarray:
    """``(V, n * n)`` float64: the words' orthogonal matrices, flattened (the start symbol's left out)."""
    with torch.no_grad():
        Q = model.eval().matrices()[:-1]  # (V, n, n) without the start symbol
    return Q.reshape(Q.shape[0], -1).cpu().double().numpy()


def _train_urn(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """The URN language model of one run; its final numbers are its best epoch's (held-out loss, perplexity),
    and the analogy answers and neighbours of the word matrices it ends with (that epoch's)."""
    task, cfg = LMTask(**spec.params["task"]), TrainConfig(**spec.params["train"])
    d = make_data(task)
    start = len(d.vocab.tokens)  # the start symbol's id: after the words
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], start + 1)
    evaluate = lambda m: {"analogies_correct": evaluate_3cosadd(  # noqa: E731
        word_vectors(m), d.vocab.tokens, analogies()).correct}
    valid = lm_data(d.valid, start) if d.valid is not None else None  # what the monitor watches, if any
    history, _ = fit(model, lm_data(d.train, start), lm_data(d.test, start), cfg, valid=valid,
                     evaluate=evaluate, checkpoint=checkpoint, desc=spec.name, eval_batch_size=URN_EVAL_BATCH,
                     loss=losses.lm_loss)
    vectors = word_vectors(model)
    result = evaluate_3cosadd(vectors, d.vocab.tokens, analogies())
    best = history.best_row
    final = {**best, "n_params": count_parameters(model), "analogies_correct": result.correct,
             "analogies_answered": result.answered, "analogies_skipped": result.skipped,
             "neighbours": neighbours(vectors, d.vocab.tokens), "perplexity": math.exp(best["test_loss"]),
             "data": d.stats}
    if "val_loss" in best:
        final["val_perplexity"] = math.exp(best["val_loss"])
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def _word2vec(d: LMData, size: int, epochs: int, seed: int) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """gensim's CBOW on the training sentences; its vectors (V, size) in vocabulary order are the weights."""
    from gensim.models import Word2Vec

    sentences = [[d.vocab.tokens[w] for w in s] for s in d.train_ids]
    model = Word2Vec(sentences, vector_size=size, window=5, min_count=1, workers=1, seed=seed, epochs=epochs)
    vectors = np.stack([model.wv[w] if w in model.wv else np.zeros(size, np.float32) for w in d.vocab.tokens])
    final = analogy_numbers(vectors.astype(np.float64), d)
    del final["sections"]
    final["n_params"] = 2 * size * len(d.vocab.tokens)
    return final, {"vectors": torch.from_numpy(vectors)}


def _kneser_ney(d: LMData, order: int) -> dict[str, Any]:
    """Interpolated Kneser-Ney on the same split; the per-word perplexity leaves the end-of-sentence
    prediction out, like the matrix models, which have none (``perplexity_with_end`` keeps it)."""
    from urnlib.models.ngram import KneserNey

    words = lambda part: [[d.vocab.tokens[w] for w in s] for s in part]  # noqa: E731
    lm = KneserNey(order).fit(words(d.train_ids), d.vocab.tokens)
    test = words(d.test_ids)
    logp = np.concatenate([np.log(lm.stream_probs(s)) for s in test if s])  # each word given <s>s, its past
    return {"perplexity": math.exp(-logp.mean()), "perplexity_with_end": lm.perplexity(test),
            "order": order, "data": d.stats}


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train one baseline run: the URN language model, word2vec or Kneser-Ney. word2vec and Kneser-Ney store
    one history row (their final numbers); Kneser-Ney's counts are Python dicts, not tensors: it stores no
    weights (refitting it from the corpus takes seconds and gives the same model)."""
    model = spec.params["model"]
    if model["kind"] == "urn":
        return _train_urn(spec, checkpoint)
    d = make_data(LMTask(**spec.params["task"]))
    t0, c0 = time.perf_counter(), time.process_time()
    if model["kind"] == "word2vec":
        final, weights = _word2vec(d, model["size"], model["epochs"], spec.params["seed"])
    else:
        final, weights = _kneser_ney(d, model["order"]), {}
    return Trained([dict(final, epoch=1)], final, weights, time.perf_counter() - t0, time.process_time() - c0)
