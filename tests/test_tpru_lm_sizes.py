"""The TPRU chapter's language-model size trend (parameter ``lm_sizes``): the language models again at other
dimensions, the TPRU's roles scaled with the dimension as paper 002 Table 4's are (1,024 at 1,024); the main
language models' keys unchanged; bad values name ``lm_sizes`` and what to write. No training."""

from dataclasses import replace

import pytest

from urnlib.chapters.tpru import experiment as tpru
from urnlib.chapters.tpru import lm
from urnlib.params import ParameterError

PAPER = tpru.Config.paper()


def test_each_size_plans_both_language_models_with_roles_scaled_and_the_main_keys_unchanged():
    before = {s.name: s.key for s in replace(PAPER, lm_sizes=[]).plan()}
    config = replace(PAPER, lm_sizes=[32])
    sized = config.lm_size_plan()
    assert list(sized) == [32] and sorted(sized[32]) == ["LSTM LM 32", "TPRU LM 32 N=32"]
    spec = sized[32]["TPRU LM 32 N=32"][1]
    assert spec.params["setup"]["d"] == 32 and spec.params["setup"]["n_roles"] == 32
    assert spec.params["train"] == config.lm_plan()["TPRU LM 64 N=64"][1].params["train"]  # trained alike
    after = {s.name: s.key for s in config.plan()}
    assert {k: v for k, v in after.items() if k in before} == before  # every other run as stored
    added = sorted(f"{m} seed {s}" for m in ("LSTM LM 32", "TPRU LM 32 N=32") for s in PAPER.lm_seeds)
    assert sorted(set(after) - set(before)) == added


def test_resized_keeps_the_ratio_of_roles_to_dimension():
    setup = PAPER.lm_setup()
    assert lm.resized(setup, 128).n_roles == 128 * setup.n_roles // setup.d
    assert lm.resized(replace(setup, n_roles=4), 8).n_roles == 1  # at least one role


@pytest.mark.parametrize("value, words", [
    ([64], "other than lm_d=64"), ([32, 32], "the same run twice"), ("32", "must be of type list"),
    ([0], "lm_sizes[0]")])
def test_bad_sizes_name_the_parameter_and_what_to_write(value, words):
    with pytest.raises(ParameterError, match="lm_sizes") as err:
        replace(PAPER, lm_sizes=value).validate()
    assert words in str(err.value)
