"""Probes of the agreement chapter (urnlib.chapters.agreement.experiment): the synthetic grammar and a file in
Linzen's format (``agreement``); the data built offline from Brown and the State of the Union by spaCy
(``agreement_offline``)."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from urnlib.corpora.agreement_builder import offline_dataset
from urnlib.corpora.linzen import read_tsv, write_tsv
from urnlib.chapters.agreement import experiment as ag
from urnlib.languages import agreement_grammar
from urnlib.models import build_model
from urnlib.results import RunStore
from urnlib.runner import run_plan
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, oracle, run_values, temporary_store

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "linzen_sample.tsv"
SYNTHETIC = ag.SyntheticTask(train_size=16, test_per_count=2, train_max_attractors=2, max_attractors=3,
                             seed=1)
# 2 epochs of 2 batches (of 16 examples), as the chapter trains: the best epoch by test loss kept
# (probe agreement_linzen pins training under the protocol: the validation loss picks the epoch)
CFG = TrainConfig(epochs=2, batch_size=8, lr=0.01, seed=1, monitor="test_loss", keep_best=True)
OFFLINE_SENTENCES = 60  # sentences read from each of Brown and the State of the Union
TIMINGS = ("seconds", "load_seconds", "sentences_per_s", "tokens_per_s", "path", "sha256")
ANALYSIS_WORDS = 5  # words whose generators a probe run stores


def _plan(models: list[str]) -> dict[str, dict]:
    """The chapter's model specs at the probe's size (the paper preset with the sizes changed)."""
    config = replace(ag.Config.paper(), sources=["synthetic"], analysis_source="", models=models, units=4,
                     sizes=[], truncation_k=1, lstm_embedding=3, dropout=0.05, mode="load")
    return config.model_specs()


def _data_values(data: ag.AgreementData):
    return {"digest": digest(data.train.inputs, data.train.targets, data.test.inputs, data.test.targets,
                             data.test_attractors, data.vocab.tokens),
            "stats": data.stats, "tokens": data.vocab.tokens[:12],
            "word_tags": {w: dict(c) for w, c in sorted(data.word_tags.items())[:6]}}


def _train(plan, task, data, store):
    """Initial logits on the first two test prefixes; the runs' histories, final metrics, and the
    generators they store for the tables (``head_embedding``; the state_dict is not pinned)."""
    out = {"init_logits": {}}
    for label, spec in plan.items():
        out["init_logits"][label] = init_logits(lambda: build_model(spec, len(data.vocab)),
                                                data.test.inputs[:2])
    specs = [ag.run_spec(label, None, task, spec, CFG, label=label) for label, spec in plan.items()]
    runs = run_plan(specs, RunStore(store), mode="retrain",
                    train=partial(ag.train_run, analysis_words=ANALYSIS_WORDS))
    out["runs"] = run_values(runs)
    for label, run in runs.items():
        out["runs"][label]["weights"] = {k: v.tolist() for k, v in run.weights.items()
                                         if k == "head_embedding"}
    return out


def probe_agreement():
    plan = _plan(["urn", "lstm"])
    data = ag.make_data(SYNTHETIC)
    values = {"plan": plan, "synthetic": _data_values(data),
              "oracle_evaluation": ag.evaluate_agreement(oracle(data.test.targets, 2), data),
              "sample_tsv": digest([ex.row() for ex in read_tsv(SAMPLE)])}
    with temporary_store() as store:
        values["synthetic"] |= _train(plan, SYNTHETIC, data, store / "synthetic")
        # a file in Linzen's format (grammar sentences written and read back): split by sentence, a
        # vocabulary smaller than the words, so that POS tags stand in for the others
        path = store / "linzen_probe.tsv"
        write_tsv(agreement_grammar.generate(40, attractor_counts=[0, 1, 2], rng=np.random.default_rng(5)),
                  path)
        task = ag.CorpusTask(source=str(path), vocab_size=8, test_fraction=0.2, max_examples=0,
                             offline_max_sentences=0, seed=2)
        corpus = ag.make_data(task)
        values["tsv"] = _data_values(corpus) | _train({"1-TURN": plan["1-TURN"]}, task, corpus, store / "tsv")
    return values


def probe_agreement_offline():
    with temporary_store() as store:  # built afresh: a cached build would pin nothing
        path = offline_dataset(store / "cache", max_sentences=OFFLINE_SENTENCES, verbose=False)
        report = json.loads(path.with_name(path.name.replace(".tsv.gz", ".json")).read_text())
        examples = read_tsv(path)
        values = {"examples": digest([ex.row() for ex in examples]), "first": examples[0].row(),
                  "report": {k: v for k, v in report.items() if k not in TIMINGS and k != "sources"},
                  "sources": {s: {k: v for k, v in r.items() if k not in TIMINGS}
                              for s, r in report["sources"].items()}}
        # the file's name holds the cache key (component and library versions), and the data
        # statistics name the file: train on a copy with a fixed name
        fixed = store / "offline.tsv.gz"
        fixed.write_bytes(path.read_bytes())
        task = ag.CorpusTask(source=str(fixed), vocab_size=40, test_fraction=0.25, max_examples=0,
                             offline_max_sentences=0, seed=0)
        data = ag.make_data(task)
        values["corpus"] = _data_values(data) | _train(_plan(["urn"]), task, data, store / "runs")
    return values


def probe_agreement_linzen():
    """Linzen et al.'s released files as the ``linzen`` source: the split of their first lines (tagged by the
    Brown corpus), and a 1-TURN trained on them under the protocol (validation sentences held out)."""
    task = ag.CorpusTask(source="linzen", vocab_size=60, test_fraction=0.2, max_examples=120,
                         offline_max_sentences=0, seed=1)
    data = ag.make_data(task, True)
    values = {"data": _data_values(data) | {"valid": digest(data.valid.inputs, data.valid.targets)}}
    cfg = TrainConfig(epochs=2, batch_size=16, lr=0.01, seed=1, monitor="val_loss", keep_best=True)
    with temporary_store() as store:
        spec = ag.run_spec("1-TURN", None, task, _plan(["urn"])["1-TURN"], cfg, label="1-TURN")
        values["run"] = run_values(run_plan([spec], RunStore(store / "runs"), mode="retrain"))["1-TURN"]
    return values
