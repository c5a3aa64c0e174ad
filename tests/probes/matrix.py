"""Probes of the matrix-embedding chapter: the models of paper 003 and their baselines
(urnlib.experiments.matrix_embeddings), and the URN language model on the same data (experiments.urn_lm)."""

from __future__ import annotations

import math

import numpy as np

from urnlib.corpora.analogy import evaluate_3cosadd
from urnlib.experiments import matrix_embeddings as me, urn_lm
from urnlib.models import build_model
from urnlib.models.ngram import KneserNey
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, run_values, temporary_store

TASK = me.LMTask(corpus="brown+sotu", lower=True, min_count=2, max_length=20, max_sentences=60,
                 test_fraction=0.1, seed=0)
MODELS = ["4.1 dense 2", "4.1 diagonal 3", "4.2 dense 2", "4.2 diagonal 3", "4.2 upper 2", "4.3 upper 2"]


def _data_values(d: me.LMData):
    questions = me.analogies()
    return {"digest": digest(d.train.inputs, d.train.targets, d.test.inputs, d.test.targets, d.vocab.tokens),
            "stats": d.stats, "tokens": d.vocab.tokens[:12],
            "analogies": {"count": len(questions), "digest": digest([q.words for q in questions]),
                          "first": list(questions[0].words)}}


def _analogy_values():
    """3CosAdd and the neighbours on vectors made to answer the first questions (capitals and countries):
    the micro corpus has too few words for any question, so the runs' analogy counts are all 0."""
    questions = me.analogies()[:40]
    capital_of = {q.words[1]: q.words[0] for q in questions} | {q.words[3]: q.words[2] for q in questions}
    words = sorted(set(capital_of.values())) + sorted(capital_of)
    rng = np.random.default_rng(0)
    vectors, offset = rng.normal(size=(len(words), 6)), rng.normal(size=6)
    for country, capital in capital_of.items():  # country = capital + offset + noise
        vectors[words.index(country)] = vectors[words.index(capital)] + offset + 0.4 * rng.normal(size=6)
    result = evaluate_3cosadd(vectors, words, me.analogies())
    sections = result.per_section()
    return {"words": len(words), "correct": result.correct, "answered": result.answered,
            "predictions": [p for p in result.predictions if p is not None][:12],
            "sections": {s: [int(sections.loc[s, c]) for c in ("correct", "answered", "questions")]
                         for s in sections.index if sections.loc[s, "answered"]},
            "neighbours": me.neighbours(vectors, words, probes=words[:3], k=3)}


def probe_matrix_embeddings():
    d = me.make_data(TASK)
    V, sentences = len(d.vocab.tokens), [[d.vocab.tokens[w] for w in s] for s in d.train_ids]
    cfg = TrainConfig(epochs=2, batch_size=math.ceil(len(d.train) / 2), lr=0.05, seed=1)  # 2 batches
    plan = me.plan_runs(MODELS)
    # the same sentences, vocabulary and calls as the baselines' (matrix_embeddings._word2vec and
    # _kneser_ney), for numbers their runs do not store: word2vec's vector norms, Kneser-Ney's probabilities
    from gensim.models import Word2Vec

    w2v = Word2Vec(sentences, vector_size=4, window=5, min_count=1, workers=1, seed=0, epochs=2)
    kn = KneserNey(3).fit(sentences, d.vocab.tokens)
    values = {"data": _data_values(d), "plan": plan, "analogies": _analogy_values(),
              # TokenLoss's logits: [log p_t, log(1 - p_t)] of every word of the first two test sentences
              "init_logits": {label: init_logits(lambda: me.build(spec, V), d.test.inputs[:2])
                              for label, spec in plan.items()},
              "word2vec": {"norms": [float(np.linalg.norm(w2v.wv[w])) for w in d.vocab.tokens[1:9]]},
              "kneser_ney": {w: kn.prob(w, ["<s>", "the"]) for w in [*d.vocab.tokens[:6], "</s>"]}}
    with temporary_store() as store:
        values["runs"] = run_values(me.run_all(plan, TASK, cfg, store, retrain=True))
        baselines = me.run_baselines(TASK, store, word2vec_size=4, word2vec_epochs=2, ngram_order=3, seed=0,
                                     retrain=True)
    values["baselines"] = run_values(baselines)
    values["baselines"]["word2vec"] = values["baselines"].pop("word2vec 4")
    return values


def probe_urn_lm():
    d = me.make_data(TASK)
    start = len(d.vocab.tokens)  # the start symbol's id
    train, test = urn_lm.lm_data(d.train, start), urn_lm.lm_data(d.test, start)
    urn = lambda: build_model("urn", start + 1, n=4, k=None, dropout=0.05)  # noqa: E731 - as run_urn_lm's
    lm = digest(train.inputs, train.targets, test.inputs, test.targets)
    values = {"data": _data_values(d) | {"lm": lm},
              "init_logits": init_logits(urn, test.inputs[:2], seed=2)}
    with temporary_store() as store:
        values["runs"] = run_values(urn_lm.run_urn_lm(TASK, store, units=4, epochs=2, lr=0.01, seed=2,
                                                      batch_size=math.ceil(len(train) / 2), retrain=True))
    return values
