"""Probe of the Dyck chapter (urnlib.chapters.dyck.experiment), its k-TURN variants included."""

from __future__ import annotations

from dataclasses import asdict, replace

from urnlib.chapters.dyck import experiment as dyck
from urnlib.models import build_model
from urnlib.models.registry import component_of
from urnlib.results import RunSpec, RunStore
from urnlib.runner import run_plan
from urnlib.tasks.dyck import DyckData
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, oracle, run_values, temporary_store, tensor_values

TASK = dyck.DyckTask(n_pairs=5, train_size=16, test_size=8, train_max_depth=2, generator="walk", seed=3)
MIDPOINT = dyck.DyckTask(
    n_pairs=5, train_size=16, test_size=8, train_max_depth=3, generator="midpoint", seed=3
)
CFG = TrainConfig(epochs=2, batch_size=8, lr=0.01, seed=1)  # 2 epochs of 2 batches
VARIANT_LR = 0.001  # the learning rate of the "lr" variant when the golden was written


def _data_values(d: DyckData):
    return {
        "digest": digest(d.train.inputs, d.train.targets, d.test.inputs, d.test.targets, d.test_attractors),
        "test_strings": d.test_strings[:3],
        "vocabulary": len(d.vocab),
    }


def probe_dyck():
    data = dyck.make_data(TASK)
    batch, V = data.test.inputs[:2], len(data.vocab)
    # 8 units and k = 2: the 2-TURN takes the rank-2k exponential (4k <= n), the Full URN the full one
    config = replace(
        dyck.Config.paper(),
        units_000=8,
        truncation_k=2,
        units_001=[4],
        models_001=["lstm"],
        lstm_embedding=3,
        dropout=0.05,
        variants=True,
    )
    # the runs the golden was written with: every model at CFG, and the k-TURN at VARIANT_LR (named as then)
    models = config.models()
    # the variant the golden was written with (a setting of the preset trains more: not this probe's)
    then = [f"{config.turn}, no state dropout"]
    runs_ = {
        label: (model, CFG.lr) for label, model in models.items() if label not in config.variant_labels()
    }
    runs_[f"{config.turn}, lr {VARIANT_LR}"] = (models[config.turn], VARIANT_LR)
    runs_.update({label: (models[label], CFG.lr) for label in then})
    specs = [
        RunSpec(
            dyck.EXPERIMENT,
            label,
            {"task": asdict(TASK), "model": model, "train": asdict(replace(CFG, lr=lr))},
            (*dyck.COMPONENTS, component_of(model)),
            dyck.train_run,
        )
        for label, (model, lr) in runs_.items()
    ]
    variants = [f"{config.turn}, lr {VARIANT_LR}", *then]
    plan = {s.name: s.params["model"] for s in specs if s.name not in variants}
    values = {
        "data": _data_values(data),
        "data_midpoint": _data_values(dyck.make_data(MIDPOINT)),
        "oracle_evaluation": dyck.evaluate_closing(oracle(data.test.targets, V), data),
        "plan": plan,
        "init_logits": {},
        "trained_logits": {},
    }
    for label, spec in plan.items():
        values["init_logits"][label] = init_logits(lambda: build_model(spec, V), batch)
    with temporary_store() as store:
        runs = run_plan(specs, RunStore(store), mode="retrain")
        values["runs"] = run_values(runs)
        for label, run in runs.items():
            values["trained_logits"][label] = tensor_values(dyck.rebuild_model(run)(batch).detach())
    return values
