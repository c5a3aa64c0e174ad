"""The TPRU chapter's scaled group in its reports: the GRU, the LSTM and a TPRU trained again on a larger
training set (the chapter's parameter ``scaled``; the preset ``large``: 100,000 generated pairs, the size of
Evans et al.'s training file), the book's setting nearest paper 002's Table 2.

Its rows follow ours in both versions of Table 2 (:func:`urnlib.chapters.tpru.report.table2`,
:func:`urnlib.chapters.tpru.report_released.released_table2`); here are the sentence that says how far its
setting is from the paper's and what it cost (:func:`scaled_line`), the runs the claims on Table 2 decide on
(:func:`table2_basis`: the scaled group once it is complete) and what would settle them at that size
(:func:`settle_at_size`). ``scaled`` is ``{label: Seeds}`` as :func:`urnlib.chapters.tpru.experiment.run`
gives it (``{}``: no group).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from urnlib.chapters.tpru.report import (PAPER_ROLES, PAPER_SEEDS, PAPER_TABLE2, PAPER_TRAIN_SIZE, best_epoch,
                                 model_spec, runs_of_kind)
from urnlib.reports.common import cpu_hours
from urnlib.chapters.tpru.report_released import released_accuracy
from urnlib.seeds import Seeds

__all__ = ["AUTHORS_EPOCHS", "AUTHORS_BATCH", "complete", "on_all_seeds", "table2_basis", "fewer_pairs",
           "settle_at_size", "scaled_line"]

#: the authors' public code (paper 002's implementation), its recommended run: 90 epochs of batches of 64
AUTHORS_EPOCHS = 90
AUTHORS_BATCH = 64
#: each model's row of paper 002's Table 2, by kind
PAPER_ROW = {"gru": "GRU", "lstm": "LSTM", "tpru": "TPRU - 512"}


def _train(seeds: Seeds) -> int:
    """The training pairs of a label's runs."""
    return seeds[0].params["task"]["train"]


def _name(seeds: Seeds) -> str:
    """The encoder of a label's runs, without its training set: ``GRU 64``, ``TPRU 64 N=64``."""
    spec = model_spec(seeds)
    return f"{spec['kind'].upper()} {spec['d']}" + (f" N={spec['n_roles']}" if spec["kind"] == "tpru" else "")


def complete(ent_runs: dict[str, Seeds], scaled: dict[str, Seeds] | None) -> bool:
    """Whether the claims on Table 2 decide on the scaled group: it has a GRU, an LSTM and a TPRU, every label
    over the same seeds, on more training pairs than the main runs (``ent_runs``)."""
    if not scaled or any(not runs_of_kind(scaled, kind) for kind in PAPER_ROW):
        return False
    main = max((_train(seeds) for seeds in ent_runs.values()), default=0)
    return len({tuple(s.seeds) for s in scaled.values()}) == 1 and min(map(_train, scaled.values())) > main


def on_all_seeds(scaled: dict[str, Seeds] | None) -> dict[str, Seeds]:
    """The labels of the scaled group trained on the most seeds (an encoder on fewer seeds of its own, e.g.
    the TPRU at Table 2's 512 roles on one, is shown in the tables but decides no claim)."""
    if not scaled:
        return {}
    most = max(len(seeds) for seeds in scaled.values())
    return {label: seeds for label, seeds in scaled.items() if len(seeds) == most}


def table2_basis(ent_runs: dict[str, Seeds], scaled: dict[str, Seeds] | None) -> tuple[dict[str, Seeds], str]:
    """The runs the claims on Table 2 decide on and the words that say so before what they measured: the
    scaled group's labels on all its seeds (:func:`on_all_seeds`) where :func:`complete` (``"decided on the
    runs at 100,000 training pairs, the size of Evans et al.'s training file: "``), else the main runs and
    ``""``."""
    scaled = on_all_seeds(scaled)
    if not complete(ent_runs, scaled):
        return ent_runs, ""
    n = min(map(_train, scaled.values()))
    size = ", the size of Evans et al.'s training file" if n == PAPER_TRAIN_SIZE else ""
    return scaled, f"decided on the runs at {n:,} training pairs{size}: "


def fewer_pairs(train: int) -> str:
    """How our ``train`` training pairs compare with Evans et al.'s, for the claim on the accuracies."""
    if train < PAPER_TRAIN_SIZE:
        return f"{PAPER_TRAIN_SIZE / train:.0f} times fewer training pairs, generated"
    return f"{train:,} training pairs (Evans et al.'s: about {PAPER_TRAIN_SIZE:,}), but generated"


def _span(values: Sequence[int]) -> str:
    """``"30"`` or ``"24-30"``: the least and the most of whole numbers."""
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}-{max(values)}"


def _epochs(seeds: Seeds) -> float:
    """The mean number of epochs the runs of a label trained."""
    return float(np.mean([len(run.history) for run in seeds]))


def settle_at_size(ent: dict[str, Seeds], labels: Sequence[str], top: str, per_step: float) -> str:
    """What would settle a claim on ``labels`` trained at Evans et al.'s size already: the TPRU ``top`` with
    Table 2's 512 roles (``per_step``: Table 1's time per step at 512 roles over ours) and every model for
    the authors' :data:`AUTHORS_EPOCHS` epochs, every seed, with the CPU hours it would take from what ours
    took."""
    spec = model_spec(ent[top])
    longer = {k: max(1.0, AUTHORS_EPOCHS / _epochs(ent[k])) for k in labels}
    hours = sum(cpu_hours(ent[k]) * longer[k] * (per_step if k == top else 1) for k in labels)
    changes = [f"the TPRU with Table 2's {PAPER_ROLES} roles (ours: {spec['n_roles']})"] \
        if top in labels and spec["n_roles"] < PAPER_ROLES else []
    if max(longer.values()) > 1:
        trained = [len(run.history) for k in labels for run in ent[k]]
        changes.append(f"up to the {AUTHORS_EPOCHS} epochs of the authors' code (ours: {_span(trained)})")
    if not changes:
        return ("the training pairs of Evans et al.'s file (not released), on which the paper trained: ours "
                "are generated by our re-implementation of their generator")
    return (f"retrain {', '.join(labels)} at the same size with {' and '.join(changes)}, every seed: about "
            f"{hours:.0f} CPU hours (ours took {cpu_hours(*(ent[k] for k in labels)):.1f})")


def _seeds_per_model(scaled: dict[str, Seeds]) -> str:
    """``"3 initialisation seeds per model ("``, then ``"TPRU 64 N=512: 1; "`` for an encoder trained on fewer
    seeds of its own (the caller closes the parenthesis)."""
    most = max(len(seeds) for seeds in scaled.values())
    fewer = "".join(f"{_name(seeds)}: {len(seeds)}; " for seeds in scaled.values() if len(seeds) < most)
    return f"{most} initialisation seeds per model ({fewer}"


def _cost(runs: list) -> str:
    """What training ``runs`` cost, from their records (wall-clock and, where recorded, CPU time)."""
    wall = [r.record.get("wall_time_s") for r in runs]
    cpu = [r.record.get("cpu_time_s") for r in runs]
    if any(w is None for w in wall):
        return "Their training time is not recorded."
    text = f"Training them took {sum(wall) / 3600:.1f} hours of run time added up"
    if all(c is not None for c in cpu):
        text += f" ({sum(cpu) / 3600:.1f} CPU hours)"
    longest = max(runs, key=lambda r: r.record["wall_time_s"])
    return text + f", the longest run, *{longest.name}*, {longest.record['wall_time_s'] / 3600:.1f} hours."


def scaled_line(scaled: dict[str, Seeds], ent_runs: dict[str, Seeds], released: Any = None) -> str:
    """How far the scaled group's setting is from paper 002's (Markdown; ``""`` without a group): training
    pairs, split ranges, the TPRU's roles, epochs, batch and seeds, every number read from the runs; where
    ``released`` is given, how far each model's accuracy on the released validation file is from its row of
    Table 2; and what training the group cost."""
    if not scaled:
        return ""
    first = next(iter(scaled.values()))
    params, train, runs = first[0].params, _train(first), [run for seeds in scaled.values() for run in seeds]
    main = ", ".join(f"{n:,}" for n in sorted({_train(seeds) for seeds in ent_runs.values()}))
    profile = params["task"].get("profile", "reconstruction")
    ranges = ("the ranges measured on Evans et al.'s released files" if profile == "released"
              else "our reconstruction's ranges")
    if {seeds[0].params["task"].get("profile", "reconstruction") for seeds in ent_runs.values()} != {profile}:
        ranges += (" (so their generated validation and test splits are not the main runs'; the released "
                   "files are the same)")
    tprus = runs_of_kind(scaled, "tpru")
    roles = sorted({model_spec(s)["n_roles"] for s in tprus.values()})
    parts = [f"the TPRU has {' and '.join(map(str, roles))} roles (Table 2: {PAPER_ROLES} at dimension "
             f"{model_spec(first)['d']})"] if tprus else []
    trained, best = _span([len(r.history) for r in runs]), _span([best_epoch(r) for r in runs])
    parts += [f"at most {params['train']['epochs']} epochs, trained {trained} and best at epoch {best} (the "
              f"authors' code trains {AUTHORS_EPOCHS})",
              f"batch {params['train']['batch_size']} (the authors' code: {AUTHORS_BATCH})",
              f"{_seeds_per_model(scaled)}the paper: {PAPER_SEEDS})"]
    text = (f"**The scaled runs** ({', '.join(map(_name, scaled.values()))}) are the book's setting nearest "
            f"the paper's: {train:,} generated training pairs (Evans et al.'s file: about "
            f"{PAPER_TRAIN_SIZE:,}; our main runs: {main}), drawn with {ranges}. Still unlike the paper: "
            + "; ".join(parts) + ".")
    if released is not None:
        gaps = []
        for label, seeds in scaled.items():
            row = PAPER_ROW[model_spec(seeds)["kind"]]
            gap = PAPER_TABLE2[row]["valid"] - 100 * released_accuracy(released, label, "valid").mean
            gaps.append(f"{_name(seeds)} {abs(gap):.1f} points {'below' if gap > 0 else 'above'} the paper's "
                        f"{row}")
        text += " On the released validation file: " + "; ".join(gaps) + "."
    return text + " " + _cost(runs)
