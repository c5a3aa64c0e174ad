"""Tests for the runner's Dask backends (urnlib.cluster): the same numbers as in this process, a killed
worker's run resumed from its checkpoint, failures reported while the others are stored, clear errors.

One local cluster of two single-threaded worker processes (urnlib.cluster.local_cluster, what workers=2
starts) serves every test, so that its start-up (seconds) is paid once; the runs are tiny (urnlib.testing,
and the cross-serial chapter shrunk).
"""

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import torch

from urnlib import cluster, cluster_runs, results
from urnlib.chapters.cross_serial import experiment as cross_serial
from urnlib.errors import BackendError, DeviceError
from urnlib.params import ParameterError
from urnlib.results import RunStore
from urnlib.runner import PlanError, run_plan
from urnlib.testing import marks_of, toy_spec
from urnlib.chapters import registry

EXAMPLE = Path(__file__).resolve().parents[1] / "notebooks" / "params" / "cluster.example.yaml"


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    """Quiet bars; one torch thread here, as on every worker, so that the numbers can agree exactly."""
    monkeypatch.setenv("URNLIB_QUIET", "1")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def local():
    """The local cluster of two worker processes that ``workers=2`` starts, shared by the tests."""
    with cluster.local_cluster(2) as started:
        yield started


@pytest.fixture
def scheduler(local):
    return local.scheduler_address


def numbers(run):
    """What a run computed, without its timings."""
    def plain(row):
        return {k: v for k, v in row.items() if k != "seconds"}

    return [plain(r) for r in run.history], plain(run.final)


def same_weights(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_local_cluster_gives_the_numbers_of_this_process(tmp_path, capsys, local, monkeypatch):
    monkeypatch.delenv("URNLIB_PROGRESS", raising=False)  # notes go to the captured stderr
    assert [w["nthreads"] for w in local.scheduler_info["workers"].values()] == [1, 1]  # single-threaded

    def the_shared_cluster(n_workers):  # workers=2 asks for this cluster; it stays up for the next tests
        assert n_workers == 2
        return contextlib.nullcontext(local)

    monkeypatch.setattr(cluster, "local_cluster", the_shared_cluster)
    states = iter(range(1, 100))  # each look at the checkout finds a new commit: records show which look
    monkeypatch.setattr(results, "git_state", lambda: {"commit": str(next(states)) * 40, "dirty": False})
    monkeypatch.setattr(results, "_CODE_STATE", None)
    config = cross_serial.Config.load("tiny", units=[4], train_size=256, test_size=64, epochs=2)
    specs = config.plan()
    here = run_plan(specs, RunStore(tmp_path / "here"), mode="train")
    store = RunStore(tmp_path / "dask")
    there = run_plan(specs, store, mode="train", workers=2)
    assert "dashboard http" in capsys.readouterr().err
    assert list(there) == [s.name for s in specs] == list(here)
    for name in there:
        assert numbers(there[name]) == numbers(here[name])
        assert same_weights(store.load(specs[0]).weights, here[specs[0].name].weights)
        record = there[name].record
        assert record["machine"]["threads"] == 1 and record["machine"]["device"] == "cpu"
        assert record["execution"]["backend"] == "dask" and record["execution"]["resumed_after_epoch"] == []
        assert record["git"] == {"commit": "1" * 40, "dirty": False}  # the state when the plan began
        assert "device" not in str(record["params"])
    assert not any(store.checkpoints.rglob("*.pt"))  # the checkpoints of finished runs are gone
    # everything stored: loads stay here, no cluster is started
    again = run_plan(specs, store, mode="train", workers=2)
    assert "Dask cluster" not in capsys.readouterr().err
    assert {n: r.path for n, r in again.items()} == {n: r.path for n, r in there.items()}


def test_every_chapter_s_plan_trains_on_one_cluster_at_once(tmp_path, local, monkeypatch):
    """urnlib.cli train: two chapters' plans on one local cluster, each submitted from its own thread; every
    run is stored and says the one scheduler it trained on; again, nothing trains and no cluster starts."""
    from urnlib.experiments.orchestrate import run_chapters

    started = []

    def the_shared_cluster(n_workers):
        started.append(n_workers)
        return contextlib.nullcontext(local)

    monkeypatch.setattr(cluster, "local_cluster", the_shared_cluster)
    bars = []

    class NamedBar(cluster_runs.RunsBar):
        def __init__(self, total, desc=None):
            super().__init__(total, desc)
            bars.append((self.desc, cluster_runs.PRIORITY.get()))

    monkeypatch.setattr(cluster_runs, "RunsBar", NamedBar)
    each = {"cross_serial": {"seeds": [0], "units": [4], "train_size": 256, "test_size": 64, "epochs": 2},
            "dyck": {"seeds": [0], "models_001": ["urn"], "epochs": 1,
                     "settings": {"lr 0.01": {"lr": 0.01, "generator": "walk", "models": "all"}}}}
    runs = run_chapters(["cross_serial", "dyck"], "tiny", workers=2, each=each, store=str(tmp_path),
                        mode="train")
    # a bar per chapter, named, its runs ranked, and submitted in order: the chapter listed first goes first
    assert started == [2] and bars == [("cross_serial", 2), ("dyck", 1)]
    assert not [c for c, r in runs.items() if isinstance(r, Exception)], runs
    plans = {name: registry.get(name).experiment.Config.load(
        "tiny", **each[name], store=str(tmp_path)).plan() for name in each}
    assert {c: sorted(r) for c, r in runs.items()} == {c: sorted(s.name for s in p) for c, p in plans.items()}
    schedulers = {r.record["execution"]["scheduler"] for chapter in runs.values() for r in chapter.values()}
    assert schedulers == {local.scheduler_address}
    again = run_chapters(["cross_serial", "dyck"], "tiny", workers=2, each=each, store=str(tmp_path),
                         mode="train")
    assert started == [2, 2] and len(bars) == 2  # the backend starts; every run loads, none is submitted
    assert {c: {n: r.path for n, r in rs.items()} for c, rs in again.items()} == \
        {c: {n: r.path for n, r in rs.items()} for c, rs in runs.items()}


def test_a_bad_parameter_of_one_chapter_stops_every_chapter_before_training(tmp_path):
    from urnlib.experiments.orchestrate import run_chapters

    with pytest.raises(ParameterError, match="units_000=13"):
        run_chapters(["cross_serial", "dyck"], "tiny", each={"dyck": {"units_000": 13}}, store=str(tmp_path),
                     mode="train")
    assert not list(tmp_path.iterdir())


def test_workers_get_this_process_s_malloc_settings(local):
    """Dask's MALLOC_TRIM_THRESHOLD_ would make every large tensor fault its pages in again on each batch
    (two workers then trained 1.2-1.6x slower than a plain process here): a local cluster's workers do
    without it."""
    from distributed import Client

    with Client(local) as client:
        seen = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert len(seen) == 2
    assert set(seen.values()) == {os.environ.get("MALLOC_TRIM_THRESHOLD_")}


def test_a_killed_worker_s_run_resumes_from_its_checkpoint(tmp_path, scheduler):
    marks = tmp_path / "marks"
    # the same training under two runs: "steady" is the uninterrupted run to compare with
    specs = [toy_spec(name, epochs=6, sleep=0.3, marks=marks, twin=i)
             for i, name in enumerate(("killed", "steady"))]
    killed = []

    def kill_after_epoch_2():
        deadline = time.time() + 60
        while time.time() < deadline and not killed:
            found = [pid for epoch, pid in marks_of(marks, "killed") if epoch == 2]
            if found:
                os.kill(found[0], signal.SIGKILL)
                killed.append(found[0])
            time.sleep(0.02)

    killer = threading.Thread(target=kill_after_epoch_2, daemon=True)
    killer.start()
    store = RunStore(tmp_path / "store")
    runs = run_plan(specs, store, mode="train", scheduler=scheduler)
    killer.join()
    assert killed, "the worker was not killed: the run finished before its second epoch's mark"
    saved = marks_of(marks, "killed")
    old = [epoch for epoch, pid in saved if pid == killed[0]]
    new = [epoch for epoch, pid in saved if pid != killed[0]]
    resumed = runs["killed"].record["execution"]["resumed_after_epoch"]
    assert len(resumed) == 1 and max(old) <= resumed[0] < 6  # lost at most the epoch under way
    assert new == list(range(resumed[0] + 1, 7))  # the new worker trained only the epochs after it
    assert [r["epoch"] for r in runs["killed"].history] == [1, 2, 3, 4, 5, 6]
    assert numbers(runs["killed"]) == numbers(runs["steady"])
    assert same_weights(store.load(specs[0]).weights, store.load(specs[1]).weights)


def test_a_failing_run_is_reported_while_the_others_are_stored(tmp_path, scheduler):
    specs = [toy_spec("good"), toy_spec("bad", fail=True), toy_spec("good too", seed=1)]
    store = RunStore(tmp_path)
    with pytest.raises(PlanError, match=r"1 run\(s\) of the plan failed") as err:
        run_plan(specs, store, mode="train", scheduler=scheduler)
    message = str(err.value)
    assert "'bad' (toy, key " in message
    assert "RuntimeError: toy run 'bad' fails on purpose after epoch 1" in message
    assert "Traceback" in message and "on_epoch_end" in message  # the worker's traceback
    assert [f.spec.name for f in err.value.failures] == ["bad"]
    assert sorted(err.value.runs) == ["good", "good too"]
    assert [store.load(s) is not None for s in specs] == [True, False, True]
    # started again: the stored runs are loaded, not trained again; the failed one fails again
    written = {s.name: os.stat(store.folder(s) / "record.json").st_mtime_ns for s in (specs[0], specs[2])}
    with pytest.raises(PlanError, match="'bad'") as again:
        run_plan(specs, store, mode="train", scheduler=scheduler)
    assert {n: os.stat(r.path / "record.json").st_mtime_ns for n, r in again.value.runs.items()} == written


@pytest.mark.parametrize("workers", [0, -2, 1.5, "many", True])
def test_bad_workers_name_the_parameter(tmp_path, workers):
    with pytest.raises(ParameterError, match=r"workers=.* is not allowed.*'auto'"):
        run_plan([toy_spec("x")], RunStore(tmp_path), mode="train", workers=workers)


def test_unreachable_scheduler_names_the_parameter(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(BackendError, match=r"scheduler='tcp://127.0.0.1:9': no Dask scheduler answered"):
        run_plan([toy_spec("x")], RunStore(tmp_path), mode="train", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "toy").exists()


@pytest.mark.parametrize("scheduler, message", [
    ("127.0.0.1:8786", "is not allowed.*tcp://host:8786"),
    ("slurm:no/such/cluster.yaml", "does not exist"),
    ("kubernetes:x.yaml", "is not allowed"),
])
def test_bad_scheduler_names_the_parameter(tmp_path, scheduler, message):
    with pytest.raises(ParameterError, match="scheduler=.*" + message):
        run_plan([toy_spec("x")], RunStore(tmp_path), mode="train", scheduler=scheduler)


def test_device_is_checked_and_recorded_outside_the_key(tmp_path):
    with pytest.raises(ParameterError, match="device='gpu' is not allowed"):
        run_plan([toy_spec("x")], RunStore(tmp_path), mode="train", device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match="device='cuda' but .* no CUDA GPU.*'auto'"):
            run_plan([toy_spec("x")], RunStore(tmp_path), mode="train", device="cuda")
    run = run_plan([toy_spec("x")], RunStore(tmp_path), mode="train", device="auto")["x"]
    assert run.record["machine"]["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert run.path.name == toy_spec('x').key
    assert all(v.device.type == "cpu" for v in run.weights.values())


def test_the_example_cluster_file_makes_job_scripts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # dask-jobqueue makes the log folder
    assert cluster.read_cluster_file("slurm", EXAMPLE)["workers"] == 8
    assert cluster.check_scheduler(f"pbs:{EXAMPLE}") == ("pbs", str(EXAMPLE))
    with cluster.jobqueue_cluster("slurm", EXAMPLE, start=False) as slurm:  # no job is submitted
        script = slurm.job_script()
    assert "#SBATCH -t 04:00:00" in script and "--nthreads 1" in script and "--nworkers 2" in script
    assert "source $HOME/urnlib/.venv/bin/activate" in script
    bad = tmp_path / "bad.yaml"
    bad.write_text("cluster: {cores: 1, memory: 1GB, colour: red}\nworkers: 2\n")
    with pytest.raises(BackendError, match="SLURMCluster refuses the 'cluster' settings.*colour"):
        cluster.jobqueue_cluster("slurm", bad, start=False)
    bad.write_text("nodes: 3\n")
    with pytest.raises(BackendError, match=r"scheduler='slurm:.*bad.yaml'.*'workers'"):
        cluster.read_cluster_file("slurm", bad)
