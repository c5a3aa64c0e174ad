"""The cache of the TPRU chapter's scores on Evans et al.'s released files
(urnlib.chapters.tpru.released): one entry per stored run under its key, holding correct / total per file
with the file's SHA-256; an entry goes stale when a file's hash, the run's weights or the run's key change; in
mode load a missing or stale entry is an error naming the runs and the command that fills them; and the
released Table 2 of the report. Tiny GRU classifiers on hand-made pairs; no released file is scored here."""

import json
from types import SimpleNamespace

import pytest
import torch

from urnlib.chapters.tpru import released as rel
from urnlib.chapters.tpru import released_fill as tpru_released_fill
from urnlib.chapters.tpru.entailment import (COMPONENTS, EXPERIMENT, Architecture, build_classifier,
                                                encoder_spec, rebuild_classifier)
from urnlib.languages import logic
from urnlib.models.entailment_packing import predict_labels
from urnlib.records import RunSpec, Trained
from urnlib.chapters.tpru import report_released as report
from urnlib.reports.opening import numbered_table
from urnlib.results import RunStore

torch.set_num_threads(1)

PAIRS = [("(p&q)", "p"), ("p", "(p&q)"), ("(p|q)", "~(p)"), ("p", "(p|q)"), ("~(~(p))", "p"), ("(p>q)", "q")]
#: two hand-made "files": pairs labelled by truth table, and their (made-up) SHA-256
DATA = {"valid": PAIRS[:4], "hard": PAIRS}
FILES = {"valid": {"file": "validate.txt", "sha256": "a" * 64},
         "hard": {"file": "test_hard.txt", "sha256": "b" * 64}}


def packed(pairs):
    examples = [logic.make_example(a, b) for a, b in pairs]
    return logic.encode_packed(examples), torch.tensor([e.label for e in examples])


@pytest.fixture(scope="module")
def data():
    return {split: packed(pairs) for split, pairs in DATA.items()}


def store_run(store: RunStore, seed: int, hidden: int = 4):
    """A tiny GRU classifier stored as an entailment run (untrained: its weights are its initialisation)."""
    arch = {"layers": 1, "embedding_size": 4, "hidden": hidden, "dropout": 0.0, "permute": False}
    params = {"model": encoder_spec("gru 4"), "architecture": arch, "train": {"seed": seed}}
    spec = RunSpec.of(EXPERIMENT, "GRU 4", params, COMPONENTS, seed=seed, model="GRU 4")
    model = build_classifier(params["model"], Architecture(**arch), seed)
    store.save(spec, Trained([], {}, model.state_dict(), 0.0), git={})
    return store.load(spec)


def correct(run, x, y) -> int:
    return int((predict_labels(rebuild_classifier(run), x) == y).sum())


def test_fill_keeps_one_entry_per_run_key_with_correct_and_total_per_file(tmp_path, data):
    store = RunStore(tmp_path)
    runs = [store_run(store, 0), store_run(store, 1)]
    path = rel.cache_path(tmp_path)
    assert path == tmp_path / ".derived" / "tpru_released.json"
    assert rel.fill(runs, path, files=FILES, data=data, store=tmp_path) == 2
    cache = json.loads(path.read_text())
    assert cache["format"] == rel.FORMAT and set(cache["runs"]) == {r.record["key"] for r in runs}
    for run in runs:
        entry = cache["runs"][run.record["key"]]
        assert entry["name"] == run.name and entry["weights"] == run.record["checksums"]["weights"]
        for split, (x, y) in data.items():
            assert entry["splits"][split] == {**FILES[split], "correct": correct(run, x, y), "total": len(y)}
    assert path.read_text() == json.dumps(cache, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    before = path.stat().st_mtime_ns
    assert rel.fill(runs, path, files=FILES, data=data, store=tmp_path) == 0  # current: nothing scored again
    assert path.stat().st_mtime_ns == before
    assert rel.check_cache(runs, path, files=FILES) == cache


def test_a_changed_file_hash_rescores_that_file_only(tmp_path, data, monkeypatch):
    store = RunStore(tmp_path)
    run = store_run(store, 0)
    path = rel.cache_path(tmp_path)
    rel.fill([run], path, files=FILES, data=data)
    changed = {**FILES, "hard": {"file": "test_hard.txt", "sha256": "c" * 64}}
    with pytest.raises(rel.ReleasedCacheError, match=r"test_hard.txt changed .* \(hard\): GRU 4 seed 0\)"):
        rel.check_cache([run], path, files=changed)
    scored = []
    original = rel.score
    monkeypatch.setattr(rel, "score",
                        lambda r, splits, d: scored.append(list(splits)) or original(r, splits, d))
    assert rel.fill([run], path, files=changed, data=data) == 1
    assert scored == [["hard"]]  # validate.txt's score is kept
    entry = rel.check_cache([run], path, files=changed)["runs"][run.record["key"]]
    assert entry["splits"]["hard"]["sha256"] == "c" * 64 and entry["splits"]["valid"]["sha256"] == "a" * 64


def test_a_retrained_run_or_a_new_key_is_stale_and_old_keys_are_dropped(tmp_path, data):
    store = RunStore(tmp_path)
    run = store_run(store, 0)
    path = rel.cache_path(tmp_path)
    rel.fill([run], path, files=FILES, data=data, store=tmp_path)
    checksums = {**run.record["checksums"], "weights": "0" * 64}
    retrained = type(run)({**run.record, "checksums": checksums}, run.path, run.weights)  # new weights
    with pytest.raises(rel.ReleasedCacheError, match="weights changed"):
        rel.check_cache([retrained], path, files=FILES)
    other = store_run(store, 0, hidden=8)  # another parameter: another key, no entry
    assert other.record["key"] != run.record["key"]
    with pytest.raises(rel.ReleasedCacheError, match="not scored"):
        rel.check_cache([other], path, files=FILES)
    # the old run's folder removed (a retrain under a new key): its entry goes with the next fill
    for f in run.path.iterdir():
        f.unlink()
    run.path.rmdir()
    rel.fill([other], path, files=FILES, data=data, store=tmp_path)
    assert set(json.loads(path.read_text())["runs"]) == {other.record["key"]}


def test_load_mode_names_the_missing_runs_and_the_command(tmp_path, data, monkeypatch):
    store = RunStore(tmp_path)
    runs = [store_run(store, 0), store_run(store, 1)]
    seeds = {"GRU 4": runs}
    monkeypatch.setattr(rel, "released_files", lambda: FILES)
    monkeypatch.setattr(rel, "_released_data", lambda: data)
    monkeypatch.setattr(rel, "_released_statistics", lambda: {})
    command = rel.fill_command("paper", tmp_path)
    with pytest.raises(rel.ReleasedCacheError) as info:
        rel.released_results(seeds, tmp_path, "load", command)
    message = str(info.value)
    assert "2 of 2 stored entailment run(s)" in message
    assert "(not scored: GRU 4 seed 0, GRU 4 seed 1)" in message  # every file: not listed
    assert f"`python -m urnlib.chapters.tpru.released_fill --scale paper --store {tmp_path}`" in message
    assert not rel.cache_path(tmp_path).exists()  # load mode writes nothing
    got = rel.released_results(seeds, tmp_path, "train", command)  # train mode fills first
    x, y = data["hard"]
    assert got.accuracy["GRU 4"][1]["hard"] == {"correct": correct(runs[1], x, y), "total": len(y)}
    assert rel.released_results(seeds, tmp_path, "load", command).accuracy == got.accuracy


def test_a_damaged_cache_says_to_fill_it_again(tmp_path):
    path = rel.cache_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(rel.ReleasedCacheError, match="not valid JSON.*tpru.released_fill"):
        rel.read_cache(path)
    path.write_text(json.dumps({"format": 99, "runs": {}}))
    with pytest.raises(rel.ReleasedCacheError, match="not a cache of format 1"):
        rel.read_cache(path)


def test_the_fill_command_reports_a_missing_run_as_one_line(tmp_path, capsys):
    assert tpru_released_fill.main(["--scale", "tiny", "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no stored run") and err.count("\n") == 1


def test_the_released_files_are_the_manifest_s():
    files = rel.released_files()
    assert list(files) == list(rel.SPLITS)
    assert files["valid"]["file"] == "validate.txt" and len(files["exam"]["sha256"]) == 64


def test_released_table2_and_the_test_mean():
    released = SimpleNamespace(accuracy={"GRU 64": [{s: {"correct": c, "total": 100} for s in rel.SPLITS}
                                                    for c in (60, 62, 64)]})
    released.accuracy["GRU 64"][0]["exam"] = {"correct": 40, "total": 50}  # files of other sizes
    assert list(report.released_accuracy(released, "GRU 64", "exam").values) == [0.8, 0.62, 0.64]
    mean = report.released_test_accuracy(released, "GRU 64")
    assert list(mean.values) == pytest.approx([0.64, 0.62, 0.64])
    seeds = [SimpleNamespace(final={"encoder_params": 49_536})]
    table = report.released_table2({"GRU 64": seeds}, released)
    assert list(table["source"]) == ["paper 002"] * 3 + ["Evans et al. (2018)", "ours"]
    assert list(table.iloc[3][list(rel.SPLITS)]) == ["82.3", "81.1", "69.4", "", "", ""]
    assert table.iloc[4]["hard"] == "62.0 ± 2.0 (3 seeds)" and table.iloc[4]["# params (encoder)"] == "49.5k"
    assert "| Evans et al. (2018) | LSTM encoder | 82.3 |" in numbered_table(table, "Table 2.", "tbl-t2")


def test_the_data_comparison_is_a_book_table():
    stats = {"count": 100, "positive": 0.5, "mean_vars": 3.0, "mean_worlds": 9.5, "mean_ops": 5.0,
             **{f"acc_h{i}": 0.5 for i in (1, 2, 3)}}
    seeds = [SimpleNamespace(final={"data": {s: {**stats, "acc_surface": 0.55} for s in rel.SPLITS}})]
    released = SimpleNamespace(statistics=dict.fromkeys(rel.SPLITS, stats))
    table = report.data_comparison({"GRU 64": seeds}, released)
    text = numbered_table(table, "The data.", "tbl-data")
    assert "| valid | released | 100 | 50.0 | 75.7 | 9.5 |" in text and "| valid | generated |" in text
    assert table.iloc[0]["surface baseline (%)"] == "" and table.iloc[1]["surface baseline (%)"] == "55.0"


def test_the_fill_scores_every_run_the_rate_choice_may_pick():
    config = tpru_released_fill.Config.load("large")  # the preset with a scaled group
    config = tpru_released_fill.Config.load("large", lr_choices=[config.lr, config.lr / 3])
    keys = {spec.key for spec in tpru_released_fill.scored_specs(config)}
    at_rates = {spec.key for rates in config.lr_plan().values() for specs in rates.values() for spec in specs}
    assert len({lr for rates in config.lr_plan().values() for lr in rates}) == 2
    assert at_rates <= keys  # either rate may be picked: both are scored
    assert {spec.key for specs in config.scaled_plan().values() for spec in specs} <= keys


def test_a_mean_and_its_spread_stay_on_one_line():
    import pandas as pd

    table = report.unbroken(pd.DataFrame({"model": ["GRU 64"], "valid": ["66.9 ± 0.9"], "n": [3]}))
    assert table.loc[0, "valid"] == "66.9\u00a0±\u00a00.9" and table.loc[0, "model"] == "GRU 64"
    assert table.loc[0, "n"] == 3
