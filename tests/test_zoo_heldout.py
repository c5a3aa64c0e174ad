"""The zoo's test-set loss from stored weights: the task's test set, the model rebuilt from the stored
state, and a cache kept per run key and weights checksum (a retrained run is measured again)."""

import json
from types import SimpleNamespace

import torch

from urnlib.chapters.zoo import heldout
from urnlib.chapters.zoo.tasks import TASKS
from urnlib.tasks.anbn import AnbnTask


def test_anbn_test_set_is_the_strings_beyond_the_training_range():
    task = AnbnTask(max_train_n=3, copies=2, max_test_n=5, threshold=0.5, trace_n=3)
    test = TASKS["anbn"].test(task)
    assert len(test) == 2  # n = 4 and n = 5, once each
    lengths = (test.targets != -100).sum(dim=1).tolist()
    assert lengths == [2 * 4 + 1, 2 * 5 + 1]  # every symbol of a^n b^n and the end is scored


def _run(tmp_path, key, sha, calls):
    folder = tmp_path / "zoo" / "anbn" / key
    folder.mkdir(parents=True)

    def model(vocab_size):
        calls.append(key)
        return torch.nn.Identity()

    return SimpleNamespace(path=folder, name=key, record={"key": key, "checksums": {"weights": sha}},
                           params={}, model=model)


def test_losses_are_kept_per_key_and_measured_again_when_the_weights_change(tmp_path, monkeypatch):
    measured = []
    monkeypatch.setattr(heldout, "test_loss", lambda run: measured.append(run.name) or len(measured) / 10)
    runs = [_run(tmp_path, "a", "w1", []), _run(tmp_path, "b", "w2", [])]
    assert heldout.test_losses(runs) == {"a": 0.1, "b": 0.2}
    kept = json.loads((tmp_path / "zoo" / heldout.CACHE).read_text())
    assert kept["a"] == {"name": "a", "test_loss": 0.1, "weights": "w1"}
    assert heldout.test_losses(runs) == {"a": 0.1, "b": 0.2} and measured == ["a", "b"]  # read back
    runs[1].record["checksums"]["weights"] = "w3"  # b retrained
    assert heldout.test_losses(runs) == {"a": 0.1, "b": 0.3} and measured == ["a", "b", "b"]
