"""Probes of the TPRU chapter: logical entailment (urnlib.experiments.tpru_entailment, with the numerical
checks of experiments.tpru_checks) and the Brown language models (experiments.tpru_lm)."""

from __future__ import annotations

import math

from urnlib.experiments import tpru_checks, tpru_entailment as ent, tpru_lm
from urnlib.experiments.primer_lm import BrownTask, make_data, rows
from urnlib.languages import logic
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, run_values, temporary_store

ENT_TASK = ent.EntailmentTask(train=16, valid=8, easy=4, hard=4, big=4, massive=4, seed=1)
ARCH = ent.Architecture(layers=2, embedding_size=6, hidden=5, dropout=0.0, permute=True)
CHECK_SETTINGS = (("tpru", 1), ("tpru", 2), ("mod3", 1))  # (variant, slices)
BROWN = BrownTask(train_tokens=600, valid_tokens=150, test_tokens=150, min_count=2, lower=True,
                  max_sentences=60, window=8, warmup=2)


def probe_tpru_entailment():
    data = ent.make_data(ENT_TASK)
    plan = ent.plan_runs(["gru 4", "lstm 4", "tpru 4 N3", "tpru 4 N2 s2"], [0])
    cfg = TrainConfig(epochs=2, batch_size=8, lr=0.01, seed=0)  # 16 pairs: 2 epochs of 2 batches
    batch = data.splits["valid"][0][:2]
    values = {"data": {name: digest(x, y) for name, (x, y) in sorted(data.splits.items())},
              "stats": data.stats, "first": logic.decode(data.splits["train"][0][0].tolist()),
              "plan": plan,
              "init_logits": {label: init_logits(lambda: ent.build_model(spec, ARCH, 3), batch)
                              for label, spec in plan.items()},
              "gradient_checks": tpru_checks.gradient_checks(d=4, input_size=3, n_roles=3, trials=2, seed=1,
                                                             settings=CHECK_SETTINGS),
              "table1": tpru_checks.table1_check(((4, 3),), layers=2, n_roles=3)}
    with temporary_store() as store:
        runs = ent.run_all(plan, [1], ENT_TASK, ARCH, cfg, store, retrain=True)
        values["runs"] = {label: [run_values({"": run})[""] for run in seeds]
                          for label, seeds in runs.items()}
    return values


def probe_tpru_lm():
    d = make_data(BROWN)
    parts = {p: rows(d.streams[p], BROWN.window, BROWN.warmup, d.start_id) for p in d.streams}
    V, batch = len(d.vocab.tokens), parts["valid"].inputs[:2]
    cfg = TrainConfig(epochs=2, batch_size=math.ceil(len(parts["train"]) / 2), lr=0.01, seed=1)  # 2 batches
    setup = tpru_lm.LMSetup(d=4, layers=2, n_roles=3, slices=1, dropout=0.0, tie_weights=True)
    sliced = tpru_lm.LMSetup(d=4, layers=1, n_roles=3, slices=2, dropout=0.1, tie_weights=False)
    tags = tpru_lm.test_tags(BROWN)
    models = (("tpru", setup), ("lstm", setup), ("gru", setup), ("tpru", sliced))
    streams = digest(*(d.streams[p] for p in ("train", "valid", "test")))
    values = {"data": {"streams": streams, "stats": d.stats},
              "test_tags": {"digest": digest(tags), "first": tags[:12]},
              # the trained TPRU selects one role only: PMI of roles made up, against the real tags
              "role_tag_pmi": tpru_lm.role_tag_pmi([(7 * i) % 5 for i in range(len(tags))], tags,
                                                   min_joint=2),
              "brown_to_upos": {t: tpru_lm.brown_to_upos(t)
                                for t in ("nn-tl", "pps+bez", "vbz", "fw-nn", "*")},
              "init_logits": {f"{kind} {s.slices}": init_logits(lambda: tpru_lm._build(kind, V, s, 2), batch)
                              for kind, s in models}}
    with temporary_store() as store:
        values["runs"] = run_values(tpru_lm.run_lm(["tpru", "lstm", "gru"], BROWN, setup, cfg, store,
                                                   pmi_min_joint=1, retrain=True))
        values["runs_sliced"] = run_values(tpru_lm.run_lm(["tpru"], BROWN, sliced, cfg, store / "sliced",
                                                          pmi_min_joint=2, retrain=True))
    return values
