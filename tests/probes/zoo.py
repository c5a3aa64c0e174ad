"""Probe of the zoo chapter (urnlib.chapters.zoo.experiment): every cell on every task, sized to one small
budget.

The tasks' own data and evaluations are pinned by their chapters' probes; this one pins what the zoo adds: the
sizes matched to the budget, the validation data, every cell's outputs (the TPRU with a two-class readout on
agreement) and a micro run of each (task, cell) through :func:`urnlib.chapters.zoo.experiment.train_run`.
"""

from __future__ import annotations

from urnlib.chapters.zoo import experiment as zoo
from urnlib.models.registry import build_model
from urnlib.results import RunStore
from urnlib.runner import run_plan

from tests.probes import digest, init_logits, run_values, temporary_store

#: micro tasks: 2 epochs of 2 batches each
TASKS = {
    "dyck": {"n_pairs": 4, "train_size": 16, "test_size": 8, "train_max_depth": 2, "generator": "walk",
             "lr": 0.01, "batch_size": 8},
    "cross_serial": {"train_k": 4, "test_k": 5, "train_size": 16, "test_size": 8, "min_block": 1, "lr": 0.01,
                     "batch_size": 8},
    "anbn": {"max_train_n": 3, "copies": 4, "max_test_n": 6, "threshold": 0.5, "lr": 0.01, "batch_size": 8},
    "agreement": {"train_size": 16, "test_per_count": 3, "train_max_attractors": 1, "max_attractors": 2,
                  "lr": 0.01, "batch_size": 8},
}


def config() -> zoo.Config:
    # k = 2: the 2-TURN takes the rank-2k exponential where 4k <= n (the language-model tasks), the full one
    # on agreement (n = 4)
    return zoo.Config(scale="probe", store="unused", seeds=[0], cells=list(zoo.CELLS), tasks=TASKS,
                      lr_choices=None, budgets=[800], budget_tolerance=0.5, truncation_k=2, lstm_embedding=3,
                      tpru_roles=3, max_units=256, dropout=0.05, epochs=2, patience=0, clip=None,
                      min_bucket=1)


def probe_zoo():
    cfg = config()
    values = {"plan": cfg.sizes(), "valid": {}, "init_logits": {}}
    for task in TASKS:
        kind = zoo.TASKS[task]
        data = kind.data(kind.task(TASKS[task], 0))
        values["valid"][task] = digest(data.valid.inputs, data.valid.targets)
        batch = data.valid.inputs[:2]
        for p in cfg.planned():
            if p.task == task:
                values["init_logits"][p.run_label] = init_logits(
                    lambda: build_model(p.model, kind.vocab_size), batch)
    with temporary_store() as store:
        runs = run_plan(cfg.plan(), RunStore(store), mode="retrain")
        values["runs"] = run_values(runs)
    return values
