"""Probes of the primer chapter: Brown language models (urnlib.chapters.primer.lm), Elman's SRN
(experiments.primer_elman) and counting a^n b^n (experiments.primer_anbn), each trained through the chapter's
run specs and train functions (urnlib.runner.run_plan into a temporary store)."""

from __future__ import annotations

import math

from urnlib.chapters.primer import anbn as primer_anbn
from urnlib.chapters.primer import elman as primer_elman
from urnlib.chapters.primer import lm as primer_lm
from urnlib.languages import anbn
from urnlib.models.ngram import KneserNey
from urnlib.results import RunStore
from urnlib.runner import run_plan
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, oracle, run_values, temporary_store

BROWN = primer_lm.BrownTask(train_tokens=600, valid_tokens=150, test_tokens=150, min_count=2, lower=False,
                            max_sentences=60, window=8, warmup=4)
LM_MODELS = ["nnlm 3 4 5 direct", "nnlm 3 0 5 direct", "nnlm 2 4 5 nodirect", "srn 4 e3", "gru 4 e3",
             "lstm 4 e3"]


def probe_primer_lm():
    d = primer_lm.make_data(BROWN)
    parts = {p: primer_lm.rows(d.streams[p], BROWN.window, BROWN.warmup, d.start_id) for p in d.streams}
    V, batch = len(d.vocab.tokens), parts["valid"].inputs[:2]
    cfg = TrainConfig(epochs=2, batch_size=math.ceil(len(parts["train"]) / 2), lr=0.01, seed=1,  # 2 batches
                      monitor="valid_ppl", minimize=True, keep_best=True)
    plan = {primer_lm.label(spec): spec for spec in map(primer_lm.lm_spec, LM_MODELS)}
    kn = KneserNey(3).fit([d.words["train"]], d.vocab.tokens[:-1])  # as the runs' mixture fits it
    context = d.words["train"][:2]
    values = {
        "data": {"streams": digest(*(d.streams[p] for p in ("train", "valid", "test"))),
                 "vocabulary": digest(d.vocab.tokens), "tokens": d.vocab.tokens[:12], "stats": d.stats,
                 "rows": digest(*(t for p in ("train", "valid", "test")
                                  for t in (parts[p].inputs, parts[p].targets)))},
        "plan": plan,
        "init_logits": {label: init_logits(lambda spec=spec: primer_lm.build(spec, V, d.start_id), batch)
                        for label, spec in plan.items()},
        "kneser_ney": {"context": context,
                       "probs": {w: kn.prob(w, context) for w in [*d.words["train"][2:6], "<unk>", "the"]},
                       "stream_probs": primer_lm.kneser_ney_probs(kn, d.words["valid"][:12])},
    }
    with temporary_store() as store:
        specs = primer_lm.specs(BROWN, list(plan.values()), cfg)
        values["runs"] = run_values(run_plan(specs, RunStore(store), mode="retrain"))
        kneser_ney = run_plan(primer_lm.kneser_ney_specs(BROWN, [2, 3]), RunStore(store), mode="retrain")
        values["kneser_ney"]["runs"] = run_values(kneser_ney)
    return values


def probe_primer_elman():
    task = primer_elman.ElmanTask(n_sentences=40, hidden=4, row_length=5, seed=1)
    stream, data, held_out = primer_elman.make_data(task)
    cfg = TrainConfig(epochs=2, batch_size=math.ceil(len(data) / 2), lr=0.01, seed=task.seed)  # 2 batches
    values = {"data": {"digest": digest(stream, data.inputs, data.targets, held_out.inputs, held_out.targets),
                       "stream": stream[:12], "rows": len(data)},
              "init_logits": init_logits(lambda: primer_elman.build(task), held_out.inputs[:2],
                                         seed=task.seed)}
    with temporary_store() as store:
        runs = run_plan(primer_elman.specs(task, [cfg]), RunStore(store), mode="retrain")
        values["runs"] = run_values(runs)
    return values


def probe_primer_anbn():
    task = primer_anbn.AnbnTask(max_train_n=3, copies=2, max_test_n=6, threshold=0.5, trace_n=4)
    data = primer_anbn.training_data(task)
    models = {m: primer_anbn.model_spec(m) for m in ["srn 3", "gru 3", "lstm 3", "urn 4"]}
    cfg = TrainConfig(epochs=2, batch_size=3, lr=0.05, seed=0)  # 6 strings: 2 epochs of 2 batches
    # the runs accept nothing: acceptance of known right and wrong predictions (wrong: the final </s>)
    _, targets = anbn.encode(anbn.strings(range(1, task.max_test_n + 1)), anbn.AnbnVocab())
    model = oracle(targets, len(anbn.AnbnVocab()), corrupt_every=4, where=1.0)
    accepted = primer_anbn.acceptance(model, task)
    values = {"data": {"digest": digest(data.inputs, data.targets), "rows": len(data)},
              "oracle_acceptance": {"accepted": accepted, "largest": primer_anbn.largest(accepted)},
              "init_logits": {m: init_logits(lambda spec=spec: primer_anbn.build(spec), data.inputs[-2:])
                              for m, spec in models.items()}}
    with temporary_store() as store:
        specs = primer_anbn.specs(task, list(models.values()), [2], cfg)
        values["runs"] = run_values(run_plan(specs, RunStore(store), mode="retrain"))
    return values
