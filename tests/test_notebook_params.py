"""A bad papermill parameter stops a chapter notebook at once, in the first code cell after the
parameters, with a ParameterError naming the parameter and what is allowed: nothing is trained,
stored or claimed (DESIGN.md: check every parameter before any work)."""

import json
from pathlib import Path

import pytest
import yaml

papermill = pytest.importorskip("papermill")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NOT_LINZEN = str(Path(__file__).resolve().parent / "data" / "not_linzen.tsv")  # a CSV, not the Linzen TSV

CASES = [
    # One case per chapter: the configs' own tests (tests/test_*_experiment.py, tests/test_config.py) cover
    # every bad value in Python; these show that a notebook stops in its first cell, before anything is read
    # or trained.
    pytest.param("dyck", {"units_000": 13}, ["units_000=13", "even"], id="dyck-odd_units"),
    pytest.param("primer", {"seeds": []}, ["seeds", "non-empty"], id="primer-seeds"),
    pytest.param("agreement", {"sources": [NOT_LINZEN], "analysis_source": ""}, ["not_linzen.tsv", "line 1"],
                 id="agreement-wrong_format"),
    pytest.param("tpru", {"scale": "huge"}, ["scale", "huge", "tiny", "paper"], id="tpru-scale"),
    pytest.param("matrix_embeddings", {"models": ["4.4 dense 10"]},
                 ["4.4 dense 10", "4.2 dense|diagonal|upper D"], id="matrix_embeddings-model"),
    pytest.param("cross_serial", {"train_k": 12}, ["train_k=12", "test_k=10", "train_k <= test_k"],
                 id="cs-train_k"),
    pytest.param("zoo", {"cells": ["srn", "mlp"]}, ["cells[1]='mlp'", "srn", "tpru"], id="zoo-cell"),
    # a name the notebook does not declare (papermill only warns and would run on with the preset's values)
    pytest.param("cross_serial", {"epochz": 3}, ["epochz is not a parameter", "did you mean 'epochs'"],
                 id="cs-unknown_name"),
]


def _has_error(cell) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize("chapter, bad, words", CASES)
def test_bad_parameter_stops_in_the_check_cell(chapter, bad, words, tmp_path):
    params = yaml.safe_load((NOTEBOOKS / "params" / f"{chapter}.tiny.yaml").read_text())
    params.update(scale="tiny", claims_dir=str(tmp_path / "claims"), store=str(tmp_path / "runs"),
                  mode="train")
    params.update(bad)
    out = tmp_path / f"{chapter}.out.ipynb"
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(str(NOTEBOOKS / f"{chapter}.ipynb"), str(out), parameters=params,
                                   kernel_name="python3", cwd=str(NOTEBOOKS), progress_bar=False)
    err = info.value
    assert err.ename in ("ParameterError", "AgreementFormatError")  # the latter is a ParameterError
    for word in words:
        assert word in err.evalue, f"{word!r} not in {err.evalue!r}"

    cells = json.loads(out.read_text())["cells"]
    tags = [c["metadata"].get("tags", []) for c in cells]
    injected = next(i for i, t in enumerate(tags) if "injected-parameters" in t)
    assert "parameters" in tags[injected - 1]
    code_after = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and i > injected]
    failing = [i for i, c in enumerate(cells) if _has_error(c)]
    assert failing == [code_after[0]]  # the first code cell after the parameters, and only it
    for i in code_after[1:]:  # nothing after it ran
        assert cells[i].get("execution_count") is None and not cells[i].get("outputs")
    assert not (tmp_path / "runs").exists()
    assert not (tmp_path / "claims").exists()


@pytest.mark.slow
def test_the_claims_page_stops_on_a_parameter_it_does_not_declare(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(str(NOTEBOOKS / "claims.ipynb"), str(tmp_path / "claims.out.ipynb"),
                                   parameters={"scale": "tiny", "claims_dirs": str(tmp_path)},
                                   kernel_name="python3", cwd=str(NOTEBOOKS), progress_bar=False)
    assert info.value.ename == "ParameterError"
    assert "claims_dirs is not a parameter" in info.value.evalue and "'claims_dir'" in info.value.evalue
