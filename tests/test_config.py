"""Chapter configs: presets from the parameter files, overrides, and a scale label that never lies."""

import dataclasses

import pytest
import yaml

from urnlib.chapters.cross_serial import experiment as cross_serial
from urnlib.experiments.config import PARAMS_DIR, ChapterConfig, scales_of
from urnlib.params import ParameterError

Config = cross_serial.Config


def namespace_of_file(scale):
    """What papermill's ``-f <chapter>.<scale>.yaml`` puts in a notebook's namespace."""
    return yaml.safe_load((PARAMS_DIR / f"cross_serial.{scale}.yaml").read_text())


def test_presets_name_their_scale_and_every_field():
    for scale in scales_of("cross_serial"):
        values = namespace_of_file(scale)
        assert values["scale"] == scale
        optional = {f.name for f in dataclasses.fields(Config) if f.default is not dataclasses.MISSING}
        assert set(Config.fields()) - optional <= set(values) <= set(Config.fields())


def test_the_parameter_file_of_a_scale_gives_that_label():
    config = Config.from_namespace(namespace_of_file("tiny"))
    assert config.scale == "tiny" and not config.overrides
    assert config.describe() == "scale **tiny**"
    assert config == Config.tiny()


def test_scale_alone_takes_that_presets_values():
    config = Config.from_namespace({"scale": "tiny", "epochs": None, "units": None})
    assert config == Config.tiny() and config.train_size == Config.tiny().train_size


def test_overrides_are_named_on_the_page():
    config = Config.from_namespace({"scale": "paper", "epochs": 5})
    assert config.epochs == 5 and config.overrides == {"epochs": (Config.paper().epochs, 5)}
    assert "`epochs=5`" in config.describe() and "scale **paper**" in config.describe()
    # the tiny file's values under the paper label: every differing value is listed as an override
    mixed = Config.from_namespace({**namespace_of_file("tiny"), "scale": "paper"})
    assert mixed.scale == "paper" and "train_size" in mixed.overrides and "units" in mixed.overrides


@pytest.mark.parametrize("changes, words", [
    ({"scale": "huge"}, ["scale", "huge", "paper", "tiny"]),
    ({"epochs": 0}, ["epochs"]),
    ({"epochs": 2.5}, ["epochs", "int"]),
    ({"mode": "sometimes"}, ["mode", "load", "train", "retrain"]),
    ({"units": []}, ["units"]),
    ({"units": [7]}, ["units", "even"]),
    ({"models": ["gru"]}, ["models", "gru", "urn", "lstm"]),
    ({"train_k": 12}, ["train_k=12", "test_k=10"]),
    ({"test_size": 10**8}, ["test_size"]),
    ({"colour": "red"}, ["unknown parameter", "colour"]),
])
def test_bad_values_stop_before_any_work(changes, words):
    with pytest.raises(ParameterError) as err:
        Config.load(changes.pop("scale", "paper"), **changes)
    for word in words:
        assert word in str(err.value)


def test_a_parameter_file_with_an_unknown_or_missing_key_is_refused(tmp_path):
    values = namespace_of_file("tiny")
    (tmp_path / "cross_serial.tiny.yaml").write_text(yaml.safe_dump({**values, "colour": "red"}))
    with pytest.raises(ParameterError, match="unknown parameter.*colour"):
        Config.load("tiny", params_dir=tmp_path)
    del values["units"]
    (tmp_path / "cross_serial.tiny.yaml").write_text(yaml.safe_dump(values))
    with pytest.raises(ParameterError, match="missing parameter.*units"):
        Config.load("tiny", params_dir=tmp_path)
    (tmp_path / "cross_serial.tiny.yaml").write_text(yaml.safe_dump({**namespace_of_file("tiny"),
                                                                      "scale": "paper"}))
    with pytest.raises(ParameterError, match="says scale: 'paper'"):
        Config.load("tiny", params_dir=tmp_path)


def test_store_path_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    here = Config.paper().store_path()
    monkeypatch.chdir(tmp_path)
    assert Config.paper().store_path() == here and here.is_absolute() and here.name == "results"


def test_every_chapter_config_is_a_kw_only_dataclass_without_paper_defaults():
    for cls in ChapterConfig.__subclasses__():
        base = {g.name for g in dataclasses.fields(ChapterConfig)}
        own = [f for f in dataclasses.fields(cls) if f.name not in base]
        assert all(f.default is dataclasses.MISSING for f in own), cls


def test_the_modes_are_the_runner_s():
    from urnlib import runner
    from urnlib.experiments import config

    assert config.MODES is runner.MODES
    with pytest.raises(ParameterError, match="mode='often'.*'load', 'train', 'retrain'"):
        Config.load("tiny", mode="often")


def test_provenance_reads_the_comments_and_not_a_hash_inside_a_value(tmp_path):
    """The comments come from ruamel.yaml's scanner: a '#' inside a quoted value is no comment, and the
    comment of a key whose flow mapping starts on the next line (ruamel's round-trip loader drops it) is
    kept."""
    (tmp_path / "cross_serial.paper.yaml").write_text(
        "# the whole preset\n\n"
        'name: "run #1"   # ours: a name\n'
        "tasks:\n"
        "  dyck:          # paper 000 sec. 5\n"
        "    {n: 10,\n"
        "     m: 2}       # m: ours\n"
        "seed: 0\n")
    assert Config.where_from("paper", params_dir=tmp_path) == {
        "name": "ours: a name", "tasks": "dyck: paper 000 sec. 5 m: ours", "seed": ""}
