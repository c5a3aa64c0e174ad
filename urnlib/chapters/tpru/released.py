"""Paper 002's Table 2 on the released files: every stored entailment model of the TPRU chapter scored on
Evans et al.'s released validation set and five test sets, kept in a committed cache.

Paper 002 reports the accuracy of its encoders on the logical entailment data of Evans et al. (2018): the
validation split and the test splits easy, hard, big, massive and exam (Table 2). Their validation and test
files ship with urnlib (``notebooks/data/logical-entailment``, pinned by SHA-256 in its ``manifest.json``);
their training file does not (it was not released), so the chapter's encoders train on generated pairs
(:mod:`urnlib.chapters.tpru.entailment`) and are scored here on the released files, in eval mode (no
renaming, no dropout), with the weights each run stored (its best validation epoch's).

Scoring one model on the six files takes seconds to a minute on one thread, so the book does not do it: the
numbers live in one JSON file beside the runs, :func:`cache_path` (``<store>/.derived/tpru_released.json``),
one entry per stored run under its key::

    {"format": 1, "runs": {"<run key>": {"name": "GRU 64 seed 0", "weights": "<SHA-256 of weights.pt>",
     "evaluator": 1, "splits": {"valid": {"file": "validate.txt", "sha256": "<the file's>", "correct": 3347,
     "total": 5000}, ...}}}}

An entry is current while its run's key, its weights' checksum and :data:`EVALUATOR` are the same and, split
by split, while the file's SHA-256 is the manifest's. :func:`fill` scores what is missing or stale (a progress
bar over the runs); :func:`released_results` reads the cache for the chapter (mode ``load``: a missing or
stale entry is a :class:`ReleasedCacheError` naming the runs and the command that fills them; modes ``train``
and ``retrain``: it fills them first). The command that fills the cache of a preset's stored runs
(:mod:`urnlib.chapters.tpru.released_fill`)::

    python -m urnlib.chapters.tpru.released_fill --scale paper   # notebooks/results/.derived/...
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from urnlib.atomic import atomic_write_text
from urnlib.corpora import shipped
from urnlib.errors import MissingRunError
from urnlib.chapters.tpru.entailment import EXPERIMENT, rebuild_classifier
from urnlib.languages import logic
from urnlib.languages.logic.files import DATASET
from urnlib.models.entailment_packing import predict_labels
from urnlib.progress import progress
from urnlib.results import Run

__all__ = ["SPLITS", "EVALUATOR", "FORMAT", "CACHE", "FILL_COMMAND", "ReleasedCacheError", "Released",
           "fill_command", "released_files", "cache_path", "read_cache", "write_cache", "score",
           "stale_reasons", "fill", "check_cache", "released_results"]

SPLITS = ("valid", "easy", "hard", "big", "massive", "exam")  #: paper 002 Table 2's columns, in its order
#: how a file is scored (eval mode, batches of BATCH rows, the argmax label); raise it when that changes
EVALUATOR = 1
FORMAT = 1  #: the cache file's layout
CACHE = Path(".derived") / "tpru_released.json"  #: the cache, relative to the run store (its own folder)
BATCH = 256  #: rows per forward pass
ABOUT = ("Accuracy of each stored entailment model of the TPRU chapter (paper 002 Table 2) on Evans et "
         "al.'s released files (notebooks/data/logical-entailment): correct and total pairs per file, under "
         "the run's key. An entry is current while the run's key and weights, the evaluator and each file's "
         "SHA-256 are the same. Written by urnlib.chapters.tpru.released_fill; do not edit.")


class ReleasedCacheError(MissingRunError):
    """The cache lacks a run's scores on the released files, or holds stale ones, and this mode does not
    score; the message names the runs, what is missing or stale, and the command that fills them."""


@dataclass
class Released:
    """The released-file results the chapter shows (what :func:`released_results` gives the reports).

    ``accuracy``: label -> one ``{split: {"correct", "total"}}`` per seed, in the order of the label's
    :class:`~urnlib.seeds.Seeds`; ``statistics``: split -> :func:`urnlib.languages.logic.split_statistics` of
    the released file; ``files``: split -> ``{"file", "sha256"}``; ``cache``: the cache file read."""

    accuracy: dict[str, list[dict[str, dict[str, int]]]]
    statistics: dict[str, dict[str, Any]]
    files: dict[str, dict[str, str]]
    cache: str


def fill_command(scale: str = "paper", store: str | Path | None = None) -> str:
    """The command that fills the cache of the preset ``scale``'s stored runs (in ``store``, where given)."""
    where = f" --store {store}" if store is not None else ""
    return f"python -m urnlib.chapters.tpru.released_fill --scale {scale}{where}"


#: the command that fills the cache of the paper preset's stored runs
FILL_COMMAND = fill_command()


def released_files() -> dict[str, dict[str, str]]:
    """``{split: {"file", "sha256"}}`` of the six released files, from the shipped manifest."""
    pinned = shipped.manifest(DATASET)["files"]
    return {s: {"file": logic.ORIGINAL_FILES[s][0], "sha256": pinned[logic.ORIGINAL_FILES[s][0]]["sha256"]}
            for s in SPLITS}


@lru_cache(maxsize=1)
def _released_data() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The released files, each checked against the manifest, packed: ``split -> (x (N, T), y (N,))``."""
    out = {}
    for split in SPLITS:
        examples = logic.load_original_split(split=split)
        out[split] = (logic.encode_packed(examples), torch.tensor([e.label for e in examples]))
    return out


@lru_cache(maxsize=1)
def _released_statistics() -> dict[str, dict[str, Any]]:
    return {s: logic.split_statistics(logic.load_original_split(split=s)) for s in SPLITS}


def cache_path(store: str | Path) -> Path:
    """The cache of the run store ``store``: ``<store>/.derived/tpru_released.json``."""
    return Path(store) / CACHE


def read_cache(path: str | Path) -> dict[str, Any]:
    """The cache at ``path`` (an empty one where there is no file).

    Raises:
        ReleasedCacheError: the file is not a cache of this format (the message says to delete it and fill
            it again).
    """
    path = Path(path)
    if not path.is_file():
        return {"format": FORMAT, "about": ABOUT, "runs": {}}
    try:
        cache = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise ReleasedCacheError(f"{path} is not valid JSON ({err}): delete it and fill it again with "
                                 f"`{FILL_COMMAND}`") from None
    if not isinstance(cache, dict) or cache.get("format") != FORMAT or not isinstance(cache["runs"], dict):
        raise ReleasedCacheError(f"{path} is not a cache of format {FORMAT} (a mapping with 'format' and "
                                 f"'runs'): delete it and fill it again with `{FILL_COMMAND}`")
    return cache


def write_cache(path: str | Path, cache: dict[str, Any]) -> None:
    """Write ``cache`` atomically, keys sorted (one line per value: readable diffs)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({**cache, "about": ABOUT, "format": FORMAT}, sort_keys=True, indent=1,
                                       ensure_ascii=False) + "\n")


def _weights(run: Run) -> str:
    return run.record.get("checksums", {}).get("weights", "")


def _key(run: Run) -> str:
    return run.record["key"]


def score(run: Run, splits=SPLITS, data=None) -> dict[str, dict[str, int]]:
    """``{split: {"correct", "total"}}`` of ``run``'s stored classifier on each released file of ``splits``.

    Args:
        run: a stored entailment run with its weights.
        splits: the splits to score.
        data: ``split -> (packed inputs, labels)`` (default: the shipped released files).
    """
    data = _released_data() if data is None else data
    model = rebuild_classifier(run)
    out = {}
    for split in splits:
        x, y = data[split]
        out[split] = {"correct": int((predict_labels(model, x, BATCH) == y).sum()), "total": int(len(y))}
    return out


def stale_reasons(entry: dict[str, Any] | None, run: Run, files: dict[str, dict[str, str]]) -> dict[str, str]:
    """``{split: why}`` for each split whose score in ``entry`` (the cache's entry of ``run``'s key, or None)
    cannot be used; empty when all of ``files`` are current."""
    if entry is None:
        return dict.fromkeys(files, "not scored")
    if entry.get("weights") != _weights(run):
        return dict.fromkeys(files, "the run's weights changed (retrained)")
    if entry.get("evaluator") != EVALUATOR:
        return dict.fromkeys(files, f"scored by evaluator {entry.get('evaluator')}, not {EVALUATOR}")
    out = {}
    for split, f in files.items():
        have = entry.get("splits", {}).get(split)
        if have is None:
            out[split] = "not scored"
        elif have.get("sha256") != f["sha256"]:
            out[split] = f"{f['file']} changed (SHA-256 {str(have.get('sha256'))[:12]}... scored, "\
                         f"{f['sha256'][:12]}... shipped)"
    return out


def _prune(cache: dict[str, Any], store: Path | None) -> int:
    """Drop the entries of runs no longer stored in ``store`` (a retrain under another key replaced them);
    return how many."""
    gone = [] if store is None else [k for k in cache["runs"] if not (store / EXPERIMENT / k).is_dir()]
    for key in gone:
        del cache["runs"][key]
    return len(gone)


def fill(runs: list[Run], path: str | Path, *, files=None, data=None, store: str | Path | None = None) -> int:
    """Score every run of ``runs`` whose entry in the cache at ``path`` is missing or stale (only its stale
    splits where the rest are current), with a progress bar over the runs, and write the cache.

    Args:
        runs: stored entailment runs with their weights.
        path: the cache file (created where missing).
        files, data: the released files' ``{split: {"file", "sha256"}}`` and ``{split: (x, y)}`` (defaults:
            the shipped ones, checked against the manifest).
        store: the run store; entries of runs no longer stored in it are dropped.

    Returns:
        The number of runs scored.
    """
    files = released_files() if files is None else files
    cache = read_cache(path)
    todo = [(run, stale_reasons(cache["runs"].get(_key(run)), run, files)) for run in runs]
    todo = [(run, stale) for run, stale in todo if stale]
    for run, stale in progress(todo, desc="released files", total=len(todo)):
        entry = cache["runs"].get(_key(run))
        kept = {} if entry is None or entry.get("weights") != _weights(run) \
            or entry.get("evaluator") != EVALUATOR else entry.get("splits", {})
        scored = score(run, list(stale), data)
        splits = {**{s: v for s, v in kept.items() if s in files and s not in stale},
                  **{s: {**files[s], **scored[s]} for s in stale}}
        cache["runs"][_key(run)] = {"name": run.name, "weights": _weights(run), "evaluator": EVALUATOR,
                                    "splits": splits}
    pruned = _prune(cache, None if store is None else Path(store))
    if todo or pruned or not Path(path).is_file():
        write_cache(path, cache)
    return len(todo)


def check_cache(runs: list[Run], path: str | Path, files=None, command: str = FILL_COMMAND) -> dict[str, Any]:
    """The cache at ``path``, every run of ``runs`` current in it.

    Raises:
        ReleasedCacheError: runs missing or stale, each named with why, and ``command``, which fills them.
    """
    files = released_files() if files is None else files
    cache = read_cache(path)
    by_reason: dict[str, list[str]] = {}  # why (and which files, where not all) -> the runs
    for run in runs:
        why = stale_reasons(cache["runs"].get(_key(run)), run, files)
        if why:
            which = "" if len(why) == len(files) else f" ({', '.join(s for s in files if s in why)})"
            by_reason.setdefault("; ".join(sorted(set(why.values()))) + which, []).append(run.name)
    if by_reason:
        bad = sum(len(names) for names in by_reason.values())
        lines = "; ".join(f"{why}: {', '.join(names)}" for why, names in by_reason.items())
        raise ReleasedCacheError(
            f"the scores on Evans et al.'s released files of {bad} of {len(runs)} stored entailment run(s) "
            f"are missing or stale in {path} ({lines}). The book never scores them; fill the cache with "
            f"`{command}` (a few seconds to a minute per run on one thread)")
    return cache


def released_results(seeds_by_label: dict[str, Any], store: str | Path, mode: str = "load",
                     command: str = FILL_COMMAND) -> Released:
    """The released-file scores of every run of ``seeds_by_label`` (label -> :class:`~urnlib.seeds.Seeds`),
    from the cache of ``store``: in mode ``load`` read only (a :class:`ReleasedCacheError` naming ``command``
    where one is missing or stale), in modes ``train``/``retrain`` filled first; with the released files'
    statistics."""
    logic.check_original_files()  # the shipped files are the ones the manifest (and so the cache) names
    path, runs, files = cache_path(store), [run for seeds in seeds_by_label.values() for run in seeds], \
        released_files()
    if mode != "load":
        fill(runs, path, files=files, store=store)
    cache = check_cache(runs, path, files, command)
    accuracy = {label: [{s: {k: cache["runs"][_key(run)]["splits"][s][k] for k in ("correct", "total")}
                         for s in files} for run in seeds] for label, seeds in seeds_by_label.items()}
    return Released(accuracy, _released_statistics(), files, str(path))
