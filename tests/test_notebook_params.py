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
    # dyck.ipynb
    pytest.param("dyck", {"scale": "huge"}, ["scale", "huge", "tiny", "paper"], id="dyck-scale"),
    pytest.param("dyck", {"models_001": ["gru"]}, ["models_001", "gru"], id="dyck-models_001"),
    pytest.param("dyck", {"truncation_k": 12, "units_000": 12}, ["truncation_k", "k=12", "n=12"], id="dyck-k_too_large"),
    pytest.param("dyck", {"units_000": 13}, ["units_000", "n=13"], id="dyck-odd_units"),
    pytest.param("dyck", {"epochs": 0}, ["epochs"], id="dyck-epochs"),
    pytest.param("dyck", {"generator": "zigzag"}, ["generator", "zigzag", "walk", "midpoint"], id="dyck-generator"),
    # primer.ipynb
    pytest.param("primer", {"lm_models": ["mlp 5 50 60"]}, ["mlp 5 50 60", "nnlm N H M", "srn"], id="pr-lm_model"),
    pytest.param("primer", {"lm_models": ["nnlm 9 50 30 direct"], "warmup": 4}, ["warmup=4", "8 tokens"], id="pr-warmup"),
    pytest.param("primer", {"anbn_models": ["urn 5"]}, ["urn 5", "even"], id="pr-urn_odd"),
    pytest.param("primer", {"anbn_max_test_n": 2}, ["max_test_n=2", ">= 4"], id="pr-test_below_train"),
    pytest.param("primer", {"elman_settings": ["20 32"]}, ["20 32", "EPOCHS BATCH LR"], id="pr-elman_setting"),
    pytest.param("primer", {"ngram_orders": [7]}, ["ngram_orders", "1 to 5"], id="pr-ngram_order"),
    # agreement.ipynb
    pytest.param("agreement", {"sources": ["/nowhere/agr_50_mostcommon_10K.tsv.gz"]},
                 ["agr_50_mostcommon_10K", "'synthetic'", "'offline'", "agreement-data"], id="agr-missing_file"),
    pytest.param("agreement", {"sources": [NOT_LINZEN]}, ["not_linzen.tsv", "line 1", "no column"],
                 id="agr-wrong_format"),
    pytest.param("agreement", {"analysis_source": "wiki"}, ["analysis_source", "wiki", "synthetic"], id="agr-analysis_source"),
    pytest.param("agreement", {"truncation_k": 8}, ["truncation_k", "k=8", "n=8"], id="agr-k_too_large"),
    pytest.param("agreement", {"synthetic_max_attractors": 30}, ["max_attractors", "30"], id="agr-too_many_attractors"),
    pytest.param("agreement", {"models": ["gru"]}, ["models", "gru", "urn", "lstm"], id="agr-models"),
    # tpru.ipynb
    pytest.param("tpru", {"scale": "huge"}, ["scale", "huge", "tiny", "paper"], id="tpru-scale"),
    pytest.param("tpru", {"models": ["tpru 16"]}, ["tpru 16", "role vectors", "N64"], id="tpru-no_roles"),
    pytest.param("tpru", {"models": ["tpru 16 N4 s3"]}, ["s=3", "divide", "d=16"], id="tpru-slices"),
    pytest.param("tpru", {"models": ["rnn 16"]}, ["rnn 16", "gru 64", "tpru 64 N64"], id="tpru-model"),
    pytest.param("tpru", {"train_size": 201}, ["train size=201", "multiple of 4"], id="tpru-train_size"),
    pytest.param("tpru", {"seeds": []}, ["seeds"], id="tpru-seeds"),
    pytest.param("tpru", {"lm_models": ["rnn"]}, ["lm_models", "rnn", "tpru", "lstm"], id="tpru-lm_models"),
    pytest.param("tpru", {"lm_train_tokens": 1000000, "lm_valid_tokens": 200000, "lm_max_sentences": 0},
                 ["1,161,192"], id="tpru-lm_tokens"),
    # matrix_embeddings.ipynb
    pytest.param("matrix_embeddings", {"models": ["4.4 dense 10"]}, ["4.4 dense 10", "4.1", "4.2", "4.3"], id="me-model"),
    pytest.param("matrix_embeddings", {"models": ["4.2 symmetric 10"]}, ["symmetric", "not closed under matrix product"], id="me-not_closed"),
    pytest.param("matrix_embeddings", {"models": ["4.2 dense 0"]}, ["d of", "4.2 dense 0"], id="me-d_below_1"),
    pytest.param("matrix_embeddings", {"corpus": "wiki"}, ["corpus", "wiki", "brown+sotu"], id="me-corpus"),
    pytest.param("matrix_embeddings", {"ngram_order": 9}, ["ngram_order", "9"], id="me-ngram_order"),
    pytest.param("matrix_embeddings", {"urn_units": 7}, ["urn_units=7", "even"], id="me-urn_units_odd"),
    # cross_serial.ipynb
    pytest.param("cross_serial", {"train_k": 1}, ["train_k=1", ">= 2"], id="cs-train_k_below_2"),
    pytest.param("cross_serial", {"test_k": 2}, ["test_k=2", "C_2", "empty", "test_k >= 3"], id="cs-test_k_empty_language"),
    pytest.param("cross_serial", {"train_k": 12}, ["train_k=12", "test_k=10", "train_k <= test_k"], id="cs-train_k_above_test_k"),
    pytest.param("cross_serial", {"models": ["gru"]}, ["models", "gru", "urn", "lstm"], id="cs-models"),
    pytest.param("cross_serial", {"scale": "huge"}, ["scale", "huge", "tiny", "paper"], id="cs-scale"),
    pytest.param("cross_serial", {"on_stale": "ignore"}, ["on_stale", "ignore", "warn", "retrain", "error"], id="cs-on_stale"),
]


def _has_error(cell) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize("chapter, bad, words", CASES)
def test_bad_parameter_stops_in_the_check_cell(chapter, bad, words, tmp_path):
    params = yaml.safe_load((NOTEBOOKS / "params" / f"{chapter}.tiny.yaml").read_text())
    params.update(scale="tiny", claims_dir=str(tmp_path / "claims"), store=str(tmp_path / "runs"))
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
