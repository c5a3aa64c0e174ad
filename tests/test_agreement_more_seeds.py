"""The agreement chapter's ``more_seeds``: a seed of one model of one source, beside ``seeds``, adds that run
alone (at the main setting), every other run and key as before; bad values name ``more_seeds[...]`` and what
to write. No training."""

import pytest

from urnlib.chapters.agreement import experiment as agreement
from urnlib.params import ParameterError


def _runs(config):
    return {(s.coords.get("source"), s.name): s.key for s in config.plan()}


def test_one_more_seed_of_one_model_adds_that_run_alone():
    before = _runs(agreement.Config.load("paper", more_seeds={}))
    config = agreement.Config.load("paper", more_seeds={"offline": {"3-TURN": [7, 8]}})
    after = _runs(config)
    assert sorted(set(after) - set(before)) == [("offline", "3-TURN seed 7"), ("offline", "3-TURN seed 8")]
    assert {k: after[k] for k in before} == before  # every stored run's key unchanged
    spec = next(s for s in config.plan() if s.name == "3-TURN seed 8" and s.coords["source"] == "offline")
    main = next(s for s in config.plan() if s.name == "3-TURN seed 0" and s.coords["source"] == "offline")
    assert spec.params["train"]["seed"] == 8 and spec.params["model"] == main.params["model"]
    assert spec.params["train"]["lr"] == main.params["train"]["lr"] and spec.coords.get("setting") is None


@pytest.mark.parametrize("value, words", [
    ([7], "must be of type dict"),
    ({"wikipedia": {"3-TURN": [7]}}, "no source 'wikipedia'"),
    ({"offline": {"GRU": [7]}}, "no model 'GRU'"),
    ({"offline": {"3-TURN": [0, 7]}}, "repeats seeds of `seeds` ([0])"),
    ({"offline": {}}, "must be a non-empty mapping"),
])
def test_bad_values_name_the_entry_and_what_to_write(value, words):
    with pytest.raises(ParameterError) as info:
        agreement.Config.load("paper", more_seeds=value)
    assert words in str(info.value) and "more_seeds" in str(info.value)


def test_the_preset_s_own_entry_follows_the_reader_s_sources_and_models():
    """The paper preset names the offline 3-TURN's seed 7: a reader's run without that source or model leaves
    the entry out; the same entry passed by the reader must name them."""
    assert agreement.Config.load("paper").more_seeds == {"offline": {"3-TURN": [7]}}
    assert agreement.Config.load("paper", sources=["synthetic"], analysis_source="").more_seeds == {}
    assert agreement.Config.load("paper", models=["lstm"], analysis_source="", sizes=[]).more_seeds == {}
    with pytest.raises(ParameterError, match="no source 'offline'"):  # (a value equal to the preset's is
        agreement.Config.load("paper", sources=["synthetic"], analysis_source="",  # the preset's own)
                              more_seeds={"offline": {"3-TURN": [8]}})
