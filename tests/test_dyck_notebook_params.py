"""A bad papermill parameter stops notebooks/dyck.ipynb at once, in the cell after the parameters,
with a ParameterError naming the parameter (DESIGN.md: check every parameter before any work)."""

import json
from pathlib import Path

import pytest
import yaml

papermill = pytest.importorskip("papermill")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOK = NOTEBOOKS / "dyck.ipynb"
TINY = NOTEBOOKS / "params" / "dyck.tiny.yaml"

CASES = [
    pytest.param({"scale": "huge"}, ["scale", "huge", "tiny", "paper"], id="scale"),
    pytest.param({"models_001": ["gru"]}, ["models_001", "gru"], id="models_001"),
    pytest.param({"truncation_k": 12, "units_000": 12}, ["truncation_k", "k=12", "n=12"], id="k_too_large"),
    pytest.param({"units_000": 13}, ["units_000", "n=13"], id="odd_units"),
    pytest.param({"epochs": 0}, ["epochs"], id="epochs"),
    pytest.param({"generator": "zigzag"}, ["generator", "zigzag", "walk", "midpoint"], id="generator"),
]


def _has_error(cell) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize("bad, words", CASES)
def test_bad_parameter_stops_in_the_check_cell(bad, words, tmp_path):
    params = yaml.safe_load(TINY.read_text())
    params.update(scale="tiny", claims_dir=str(tmp_path / "claims"), store=str(tmp_path / "runs"))
    params.update(bad)
    out = tmp_path / "dyck.out.ipynb"
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(str(NOTEBOOK), str(out), parameters=params, kernel_name="python3",
                                   cwd=str(NOTEBOOKS), progress_bar=False)
    err = info.value
    assert err.ename == "ParameterError"
    for word in words:
        assert word in err.evalue, f"{word!r} not in {err.evalue!r}"

    cells = json.loads(out.read_text())["cells"]
    tags = [c["metadata"].get("tags", []) for c in cells]
    injected = next(i for i, t in enumerate(tags) if "injected-parameters" in t)
    assert "parameters" in tags[injected - 1]
    code_after = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and i > injected]
    failing = [i for i, c in enumerate(cells) if _has_error(c)]
    assert failing == [code_after[0]]  # the first code cell after the parameters, and only it
    for i in code_after[1:]:  # nothing after it ran: no training, no figures
        assert cells[i].get("execution_count") is None and not cells[i].get("outputs")
    assert not (tmp_path / "runs").exists()
    assert not (tmp_path / "claims").exists()
