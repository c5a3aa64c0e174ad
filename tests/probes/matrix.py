"""Probes of the matrix-embedding chapter: the models of paper 003 and their baselines
(urnlib.chapters.matrix_embeddings.experiment), and the URN language model on the same data
(experiments.urn_lm)."""

from __future__ import annotations

import math
from dataclasses import asdict, replace

import numpy as np
import torch

from urnlib.corpora.analogy import evaluate_3cosadd
from urnlib.chapters.matrix_embeddings import experiment as me
from urnlib.chapters.matrix_embeddings import urn_lm
from urnlib.models import build_model
from urnlib.models.ngram import KneserNey
from urnlib.results import RunStore
from urnlib.runner import run_plan
from urnlib.tasks.matrix_lm import PAD, LMData, neighbours
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, run_values, temporary_store

TASK = me.LMTask(corpus="brown+sotu", lower=True, min_count=2, max_length=20, max_sentences=60,
                 test_fraction=0.1, seed=0, valid_fraction=0.1)  # the chapter selects on validation sentences
MODELS = ["4.1 dense 2", "4.1 diagonal 3", "4.2 dense 2", "4.2 diagonal 3", "4.2 upper 2", "4.3 upper 2"]


def _config() -> me.Config:
    """The paper preset with the probe's data settings (split seed ``TASK.seed``), one seed (0: word2vec's),
    models and baselines (word2vec 4, Kneser-Ney 3, URN 4); the training settings of the runs are set per run
    (``_specs``)."""
    task = {k: v for k, v in asdict(TASK).items() if k != "seed"}
    return replace(me.Config.paper(), **task, split_seed=TASK.seed, seeds=[0], models=MODELS,
                   word2vec_size=4, word2vec_epochs=2, ngram_order=3, urn_units=4, urn_dropout=0.05,
                   ablations=[])


def _specs(config: me.Config, train: TrainConfig, kinds) -> list:
    """The plan's runs of model ``kinds``, their training settings (where they have any) set to ``train``,
    named without the seed (the golden's names: one seed)."""
    return [replace(s, name=s.coords["label"],
                    params={**s.params, "train": train.params()} if "train" in s.params else s.params)
            for s in config.plan() if s.params["model"]["kind"] in kinds]


class _TwoClassLogits(torch.nn.Module):
    """``[log p_t, log(1 - p_t)]`` of every word: what the retired TokenLoss adapter gave the loop (the golden
    pins them); the loop now reads the models' ``-log p_t`` directly (``matrix_embeddings.token_nll``)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens):
        mask = tokens != PAD
        logp = self.model.token_log_probs(tokens.masked_fill(~mask, 0), mask).clamp(max=0.0)  # (B, T)
        return torch.stack([logp, torch.log(-torch.expm1(logp.clamp(max=-1e-7)))], dim=-1)


def _data_values(d: LMData):
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
            "neighbours": neighbours(vectors, words, probes=words[:3], k=3)}


def probe_matrix_embeddings():
    d = me.make_data(TASK)
    V, sentences = len(d.vocab.tokens), [[d.vocab.tokens[w] for w in s] for s in d.train_ids]
    cfg = TrainConfig(epochs=2, batch_size=math.ceil(len(d.train) / 2), lr=0.05, seed=1)  # 2 batches
    specs = _specs(_config(), cfg, {*me.MATRIX_KINDS, "word2vec", "kneser-ney"})
    plan = {s.name: s.params["model"] for s in specs if s.params["model"]["kind"] in me.MATRIX_KINDS}
    # the same sentences, vocabulary and calls as the baselines' (matrix_embeddings._word2vec and
    # _kneser_ney), for numbers their runs do not store: word2vec's vector norms, Kneser-Ney's probabilities
    from gensim.models import Word2Vec

    w2v = Word2Vec(sentences, vector_size=4, window=5, min_count=1, workers=1, seed=0, epochs=2)
    kn = KneserNey(3).fit(sentences, d.vocab.tokens)
    values = {"data": _data_values(d), "plan": plan, "analogies": _analogy_values(),
              "init_logits": {label: init_logits(lambda: _TwoClassLogits(build_model(spec, V)),
                                                 d.test.inputs[:2]) for label, spec in plan.items()},
              "word2vec": {"norms": [float(np.linalg.norm(w2v.wv[w])) for w in d.vocab.tokens[1:9]]},
              "kneser_ney": {w: kn.prob(w, ["<s>", "the"]) for w in [*d.vocab.tokens[:6], "</s>"]}}
    with temporary_store() as store:
        runs = run_plan(specs, RunStore(store), mode="retrain")
    values["runs"] = run_values({k: r for k, r in runs.items() if k in plan})
    values["baselines"] = run_values({k: r for k, r in runs.items() if k not in plan})
    values["baselines"]["word2vec"] = values["baselines"].pop("word2vec 4")
    return values


def probe_urn_lm():
    d = me.make_data(TASK)
    start = len(d.vocab.tokens)  # the start symbol's id
    train, test = urn_lm.lm_data(d.train, start), urn_lm.lm_data(d.test, start)
    specs = _specs(_config(), TrainConfig(epochs=2, batch_size=math.ceil(len(train) / 2), lr=0.01, seed=2),
                   {"urn"})
    urn = lambda: build_model(specs[0].params["model"], start + 1)  # noqa: E731 - as urn_lm.train_run's
    lm = digest(train.inputs, train.targets, test.inputs, test.targets)
    values = {"data": _data_values(d) | {"lm": lm},
              "init_logits": init_logits(urn, test.inputs[:2], seed=2)}
    with temporary_store() as store:
        values["runs"] = run_values(run_plan(specs, RunStore(store), mode="retrain"))
    return values
