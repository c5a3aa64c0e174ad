"""A parameter passed to papermill that a notebook does not declare stops the notebook in its first cell
after the parameters, naming the parameter and the nearest known name (papermill itself only warns
"Passed unknown parameter" and runs on with the preset's values)."""

import pytest

from urnlib.chapters.cross_serial import experiment as cross_serial
from urnlib.params import ParameterError, check_notebook_parameters, injected_parameters

PARAMETERS_CELL = 'scale: str = "paper"  # preset\nepochs: int = None  # epochs\n'
DECLARED = {"scale": str, "epochs": int}


def kernel_namespace(injected: str | None, **values):
    """What a notebook's globals hold in an IPython kernel after its parameters cell (and papermill's
    injected cell) ran and while the next cell runs: ``In`` is the input history, the running cell last."""
    history = ["", PARAMETERS_CELL] + ([injected] if injected is not None else []) + ["config = ..."]
    return {"In": history, "__annotations__": dict(DECLARED), "scale": "paper", "epochs": None, **values}


def test_injected_names_are_read_from_papermills_cell():
    injected = "# Parameters\nscale = \"tiny\"\nepochz = 3\nsettings = {\"a\": 1}\n"
    assert injected_parameters(kernel_namespace(injected)) == ["scale", "epochz", "settings"]
    assert injected_parameters(kernel_namespace(None)) == []  # run without papermill
    assert injected_parameters({"epochz": 3}) == []  # not in IPython: no history to read


def test_an_unknown_parameter_is_named_with_the_nearest_known_name():
    namespace = kernel_namespace("# Parameters\nepochz = 3\n", epochz=3)
    with pytest.raises(ParameterError, match=r"epochz is not a parameter .*did you mean 'epochs'"):
        check_notebook_parameters(namespace)


def test_a_name_far_from_every_parameter_lists_the_parameters():
    with pytest.raises(ParameterError) as info:
        check_notebook_parameters(kernel_namespace("# Parameters\nqqq = 1\nzzz = 2\n"))
    message = str(info.value)
    assert message.startswith("qqq is not a parameter") and "did you mean" not in message
    assert "zzz" in message and "['epochs', 'scale']" in message


def test_declared_and_known_names_pass():
    check_notebook_parameters(kernel_namespace("# Parameters\nscale = \"tiny\"\nepochs = 2\n"))
    check_notebook_parameters(kernel_namespace("# Parameters\nunits = [8]\n"), known=["units"])


def test_a_chapter_config_checks_the_notebook_before_reading_any_value():
    namespace = kernel_namespace("# Parameters\nscale = \"tiny\"\nepochz = 3\n", scale="tiny", epochz=3)
    with pytest.raises(ParameterError, match="epochz.*'epochs'"):
        cross_serial.Config.from_namespace(namespace)
    # a config field the parameters cell does not declare is still a parameter
    namespace = kernel_namespace("# Parameters\nscale = \"tiny\"\nunits = [8]\n", scale="tiny", units=[8])
    assert cross_serial.Config.from_namespace(namespace).units == [8]
