"""Probes of the TPRU chapter (urnlib.chapters.tpru.experiment): logical entailment (its runs train in
urnlib.chapters.tpru.entailment; with the numerical checks of experiments.tpru_checks) and the Brown
language models (experiments.tpru_lm). Each builds the chapter's config with micro values, plans its runs and
trains them with the runner into a temporary store."""

from __future__ import annotations

import math
from dataclasses import replace

from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import checks as tpru_checks
from urnlib.chapters.tpru import entailment as ent
from urnlib.chapters.tpru import lm
from urnlib.languages import logic
from urnlib.results import RunStore
from urnlib.runner import run_plan
from urnlib.tasks.brown_lm import make_data, rows

from tests.probes import digest, init_logits, run_values, temporary_store

#: the entailment micro run: 16 training pairs, 2 epochs of 2 batches
ENTAILMENT = dict(train_size=16, valid_size=8, test_size=4, seed=1, seeds=[1], layers=2, embedding_size=6,
                  hidden=5, dropout=0.0, permute=True, epochs=2, patience=None, min_epochs=0, clip=None,
                  batch_size=8, lr=0.01, models=["gru 4", "lstm 4", "tpru 4 N3", "tpru 4 N2 s2"])
CHECK_SETTINGS = (("tpru", 1), ("tpru", 2), ("mod3", 1))  # (variant, slices)
#: the language-model micro run: 60 Brown sentences
BROWN = dict(lm_train_tokens=600, lm_valid_tokens=150, lm_test_tokens=150, lm_min_count=2, lm_lower=True,
             lm_max_sentences=60, lm_window=8, lm_warmup=2)
SETUP = dict(lm_d=4, lm_layers=2, lm_roles=3, lm_slices=1, lm_dropout=0.0, lm_tie_weights=True)
#: the language models' training: one seed (1, the seed the golden was written with), no clipping or patience
LM_TRAIN = dict(lm_seeds=[1], lm_clip=None, lm_patience=None)
SLICED = dict(lm_d=4, lm_layers=1, lm_roles=3, lm_slices=2, lm_dropout=0.1, lm_tie_weights=False)


def _config(**changes) -> tpru.Config:
    """The paper config (mode load: the corpus is not checked) without its ablation, with ``changes``."""
    return replace(tpru.Config.paper(), **{"ablations": [], "lr_choices": None, "scaled": None, **changes})


def probe_tpru_entailment():
    config = _config(**ENTAILMENT)
    data = ent.make_data(config.task())
    plan = config.encoders()
    batch = data.splits["valid"][0][:2]
    values = {"data": {name: digest(x, y) for name, (x, y) in sorted(data.splits.items())},
              "stats": data.stats, "first": logic.decode(data.splits["train"][0][0].tolist()),
              "plan": plan,
              "init_logits": {label: init_logits(lambda: ent.build_classifier(spec, config.architecture(), 3),
                                                 batch)
                              for label, spec in plan.items()},
              "gradient_checks": tpru_checks.gradient_checks(d=4, input_size=3, n_roles=3, trials=2, seed=1,
                                                             settings=CHECK_SETTINGS),
              "table1": tpru_checks.table1_check(((4, 3),), layers=2, n_roles=3)}
    groups = config.entailment_plan()
    with temporary_store() as store:
        runs = run_plan([s for specs in groups.values() for s in specs], RunStore(store), mode="retrain")
        values["runs"] = {label: [run_values({"": runs[s.name]})[""] for s in specs]
                          for label, specs in groups.items()}
    return values


def probe_tpru_lm():
    base = _config(**BROWN, **LM_TRAIN, seed=1, lm_epochs=2, lm_lr=0.01)
    task = base.lm_task()
    d = make_data(task)
    parts = {p: rows(d.streams[p], task.window, task.warmup, d.start_id) for p in d.streams}
    V, batch = len(d.vocab.tokens), parts["valid"].inputs[:2]
    half = math.ceil(len(parts["train"]) / 2)  # 2 batches per epoch
    config = replace(base, **SETUP, lm_batch_size=half, lm_models=["tpru", "lstm", "gru"], pmi_min_joint=1)
    sliced = replace(base, **SLICED, lm_batch_size=half, lm_models=["tpru"], pmi_min_joint=2)
    tags = lm.test_tags(task)
    models = (("tpru", config), ("lstm", config), ("gru", config), ("tpru", sliced))
    streams = digest(*(d.streams[p] for p in ("train", "valid", "test")))
    values = {"data": {"streams": streams, "stats": d.stats},
              "test_tags": {"digest": digest(tags), "first": tags[:12]},
              # the trained TPRU selects one role only: PMI of roles made up, against the real tags
              "role_tag_pmi": lm.role_tag_pmi([(7 * i) % 5 for i in range(len(tags))], tags, min_joint=2),
              "brown_to_upos": {t: lm.brown_to_upos(t) for t in ("nn-tl", "pps+bez", "vbz", "fw-nn", "*")},
              "init_logits": {f"{kind} {c.lm_slices}":
                              init_logits(lambda: lm.build_lm(kind, V, c.lm_setup(), 2), batch)
                              for kind, c in models}}
    with temporary_store() as store:
        values["runs"] = _by_label(run_plan(_specs(config), RunStore(store), mode="retrain"))
        sliced_runs = run_plan(_specs(sliced), RunStore(store / "sliced"), mode="retrain")
        values["runs_sliced"] = _by_label(sliced_runs)
    return values


def _specs(config: tpru.Config) -> list:
    return [s for specs in config.lm_plan().values() for s in specs]


def _by_label(runs: dict) -> dict:
    """The run values keyed by label (the runs of one seed are named "<label> seed <s>")."""
    return {runs[name].label: value for name, value in run_values(runs).items()}
