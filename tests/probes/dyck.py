"""Probe of the Dyck chapter (urnlib.experiments.dyck) and its ablations (experiments.dyck_ablations)."""

from __future__ import annotations

from urnlib.experiments import dyck, dyck_ablations
from urnlib.models import build_model
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, oracle, run_values, temporary_store, tensor_values

TASK = dyck.DyckTask(n_pairs=5, train_size=16, test_size=8, train_max_depth=2, seed=3)
MIDPOINT = dyck.DyckTask(n_pairs=5, train_size=16, test_size=8, generator="midpoint", seed=3)
CFG = TrainConfig(epochs=2, batch_size=8, lr=0.01, seed=1)  # 2 epochs of 2 batches


def _data_values(d: dyck.DyckData):
    return {"digest": digest(d.train.inputs, d.train.targets, d.test.inputs, d.test.targets,
                             d.test_attractors),
            "test_strings": d.test_strings[:3], "vocabulary": len(d.vocab)}


def probe_dyck():
    data = dyck.make_data(TASK)
    batch, V = data.test.inputs[:2], len(data.vocab)
    # 8 units and k = 2: the 2-TURN takes the rank-2k exponential (4k <= n), the Full URN the full one
    plan = dyck.plan_runs(units_000=8, truncation_k=2, units_001=[4], models_001=["lstm"], lstm_embedding=3,
                          dropout=0.05)
    values = {"data": _data_values(data), "data_midpoint": _data_values(dyck.make_data(MIDPOINT)),
              "oracle_evaluation": dyck.evaluate_closing(oracle(data.test.targets, V), data),
              "plan": plan, "init_logits": {}, "trained_logits": {}}
    for label, spec in plan.items():
        opts = {k: v for k, v in spec.items() if k != "kind"}
        values["init_logits"][label] = init_logits(lambda: build_model(spec["kind"], V, **opts), batch)
    with temporary_store() as store:
        runs = dyck.run_all(plan, TASK, CFG, store, retrain=True)
        runs |= dyck_ablations.run_ablations(TASK, CFG, store, units=8, truncation_k=2, dropout=0.05,
                                             retrain=True)
        values["runs"] = run_values(runs)
        for label, run in runs.items():
            values["trained_logits"][label] = tensor_values(dyck.rebuild_model(run)(batch).detach())
    return values
