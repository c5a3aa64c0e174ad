"""A URN language model on the matrix-embedding chapter's corpus: orthogonal word matrices as a baseline.

Paper 003's matrices are non-negative (4.2, 4.3) or unconstrained (4.1); a URN (paper 000) embeds every word
as an orthogonal matrix ``Q = expm(S)`` and reads a sentence by multiplying them onto a state. Trained as a
next-word model on the same sentences and vocabulary (:func:`urnlib.experiments.matrix_embeddings.make_data`),
its flattened ``Q``'s answer the same analogy questions; the cosine of two orthogonal matrices is
``<P, Q>_F / n``.

Its run is one of :meth:`urnlib.experiments.matrix_embeddings.Config.plan` (``urn_*`` parameters), trained by
:func:`train_run`. A softmax over the whole vocabulary at every word makes it the slowest model of the
chapter; its held-out loss is measured once, after training, by :func:`urnlib.train.evaluate_loss`,
:data:`~urnlib.experiments.matrix_resources.URN_EVAL_BATCH` sentences at a time (never all N x T x V logits).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from urnlib.corpora.analogy import evaluate_3cosadd
from urnlib.experiments.matrix_embeddings import LMTask, analogies, make_data, neighbours
from urnlib.experiments.matrix_resources import URN_EVAL_BATCH
from urnlib.models import build_model, count_parameters
from urnlib.models.matrix_embedding import PAD
from urnlib.results import RunSpec, Trained
from urnlib.tokens import IGNORE, TokenData
from urnlib.train import TrainConfig, evaluate_loss, fit, seed_everything

__all__ = ["lm_data", "train_run", "word_vectors"]


def lm_data(data: TokenData, start: int) -> TokenData:
    """Next-word data: inputs ``<s> w_1 .. w_{n-1}``, targets ``w_1 .. w_n`` (padding ignored)."""
    words = data.inputs  # (N, T) word ids, PAD after the sentence
    inputs = torch.cat([torch.full((len(words), 1), start), words[:, :-1]], dim=1)
    inputs = inputs.masked_fill(inputs == PAD, 0)
    targets = words.masked_fill(words == PAD, IGNORE)
    return TokenData(inputs, targets)


def word_vectors(model) -> np.ndarray:
    """``(V, n * n)`` float64: the words' orthogonal matrices, flattened (the start symbol's left out)."""
    with torch.no_grad():
        Q = model.eval().matrices()[:-1]  # (V, n, n) without the start symbol
    return Q.reshape(Q.shape[0], -1).cpu().double().numpy()


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the URN language model of one run; its final numbers are the last epoch's, the held-out loss and
    perplexity, and the analogy answers and neighbours of its word matrices."""
    task, cfg = LMTask(**spec.params["task"]), TrainConfig(**spec.params["train"])
    d = make_data(task)
    start = len(d.vocab.tokens)  # the start symbol's id: after the words
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], start + 1)
    evaluate = lambda m: {"analogies_correct": evaluate_3cosadd(  # noqa: E731
        word_vectors(m), d.vocab.tokens, analogies()).correct}
    history, _ = fit(model, lm_data(d.train, start), None, cfg, evaluate=evaluate, checkpoint=checkpoint,
                     desc=spec.name)
    vectors = word_vectors(model)
    result = evaluate_3cosadd(vectors, d.vocab.tokens, analogies())
    test_loss = evaluate_loss(model, lm_data(d.test, start), URN_EVAL_BATCH)
    final = {**history.rows[-1], "n_params": count_parameters(model), "analogies_correct": result.correct,
             "analogies_answered": result.answered, "analogies_skipped": result.skipped,
             "neighbours": neighbours(vectors, d.vocab.tokens), "test_loss": test_loss,
             "perplexity": math.exp(test_loss), "data": d.stats}
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)
