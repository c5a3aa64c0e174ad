"""Probe of the cross-serial chapter (urnlib.chapters.cross_serial.experiment)."""

from __future__ import annotations

from dataclasses import asdict, replace

from urnlib.chapters.cross_serial import experiment as cs
from urnlib.models import build_model
from urnlib.results import RunStore
from urnlib.runner import run_plan
from urnlib.train import TrainConfig

from tests.probes import digest, init_logits, oracle, run_values, temporary_store, tensor_values

TASK = cs.CrossSerialTask(train_k=4, test_k=5, train_size=16, test_size=8, min_block=1, seed=2)
CFG = TrainConfig(epochs=2, batch_size=8, lr=0.01, seed=1)  # 2 epochs of 2 batches


def probe_cross_serial():
    data = cs.make_data(TASK)
    batch, V = data.test.inputs[:2], len(data.vocab)
    config = replace(cs.Config.paper(), seeds=[0], units=[4], models=["urn", "lstm"], lstm_embedding=3,
                     dropout=0.05, variants=[])  # the chapter's runs, not its variants'
    # one run per model, named by its model as when the golden was written (the plan adds " seed 0")
    specs = [replace(s, name=s.coords["label"],
                     params={"task": asdict(TASK), "model": s.params["model"], "train": asdict(CFG)})
             for s in config.plan()]
    plan = {s.name: s.params["model"] for s in specs}
    values = {"data": {"digest": digest(data.train.inputs, data.train.targets, data.test.inputs,
                                        data.test.targets),
                       "test_pairs": data.test_pairs, "vocabulary": V},
              # the runs get every string wrong: the error rate of known right and wrong predictions
              "oracle_evaluation": cs.evaluate_strings(oracle(data.test.targets, V), data, TASK),
              "plan": plan, "init_logits": {}, "trained_logits": {}}
    for label, spec in plan.items():
        values["init_logits"][label] = init_logits(lambda: build_model(spec, V), batch)
    with temporary_store() as store:
        runs = run_plan(specs, RunStore(store), mode="retrain")
        values["runs"] = run_values(runs)
        for label, run in runs.items():
            values["trained_logits"][label] = tensor_values(cs.rebuild_model(run)(batch).detach())
    return values
