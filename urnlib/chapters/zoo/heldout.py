"""The zoo's test-set loss, measured from the stored weights (evaluation only: nothing is retrained).

The zoo's runs recorded, every epoch, the loss on validation data drawn like the training data (stored as
``test_loss``, the loss that picks the best epoch), never the loss on the test set. Paper 001's statements on
the *test* loss need the latter. Each run keeps the weights of its best validation epoch, so the test-set loss
at that epoch is measured here: the run's model rebuilt from its weights and scored on its task's test set
(:meth:`urnlib.chapters.zoo.tasks.TaskKind.test`: the task's test strings or sentences; on a^n b^n, the
strings beyond the training range). The losses are kept in ``test_loss.json`` beside the chapter's runs,
each under its run's key with the checksum of the weights it was measured on, so a retrained run is measured
again and the book never trains.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

from urnlib.chapters.zoo.tasks import TASKS
from urnlib.progress import progress
from urnlib.results import Run
from urnlib.train import evaluate_loss

__all__ = ["test_loss", "test_losses", "CACHE"]

CACHE = "test_loss.json"  #: the file beside the chapter's runs that keeps the measured losses


def test_loss(run: Run) -> float:
    """The mean loss per scored token (nats) of ``run``'s stored model on its task's test set."""
    kind = TASKS[run.params["task_kind"]]
    model = run.model(vocab_size=kind.vocab_size)
    return evaluate_loss(model, kind.test(kind.task_of(run.params["task"])))


def test_losses(runs: Iterable[Run], folder: str | Path | None = None) -> dict[str, float]:
    """``{run key: test-set loss}`` of ``runs``, read from ``<folder>/test_loss.json`` where it was measured
    on the same weights, else measured (:func:`test_loss`) and written back there. ``folder``: the chapter's
    folder of the store (default: the one that holds the first run's task folder)."""
    runs = list(runs)
    if not runs:
        return {}
    path = Path(folder if folder is not None else runs[0].path.parent.parent) / CACHE
    kept: dict[str, Mapping] = json.loads(path.read_text()) if path.is_file() else {}
    todo = [r for r in runs if kept.get(_key(r), {}).get("weights") != r.record["checksums"]["weights"]]
    for run in progress(todo, desc="test-set loss from the stored weights", total=len(todo)):
        kept[_key(run)] = {"name": run.name, "test_loss": test_loss(run),
                         "weights": run.record["checksums"]["weights"]}
    if todo:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")
    return {_key(r): float(kept[_key(r)]["test_loss"]) for r in runs}


def _key(run: Run) -> str:
    return run.record["key"]
