"""The notebook runner (urnlib.cli): argument checks, injected parameters, failures reported together.

Fake notebooks in a temporary directory stand in for the real ones; papermill is replaced by a stub
except in the one slow test that runs a real kernel.
"""

import json

import nbformat
import papermill
import pytest
from papermill.exceptions import PapermillExecutionError

from urnlib import cli


def write_notebook(path, code="x = 1"):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('scale = "tiny"  # parameter set\nclaims_dir = "."  # claims\n'
                                       'retrain = False  # retrain')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, path)


@pytest.fixture
def notebooks(tmp_path):
    """notebooks/ with every chapter at tiny scale, and dyck also at paper scale."""
    d = tmp_path / "notebooks"
    (d / "params").mkdir(parents=True)
    for name in cli.CHAPTERS:
        write_notebook(d / f"{name}.ipynb")
        (d / "params" / f"{name}.tiny.yaml").write_text("{}\n")
    (d / "params" / "dyck.tiny.yaml").write_text("n_epochs: 2\nlr: 0.001\n")
    (d / "params" / "dyck.paper.yaml").write_text("n_epochs: 100\n")
    return d


@pytest.fixture
def calls(monkeypatch):
    """Replace papermill.execute_notebook by a recorder that writes nothing."""
    recorded = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **kw: recorded.append((a, kw)))
    return recorded


def run(notebooks, tmp_path, *args):
    return cli.main(["notebooks", "--notebooks-dir", str(notebooks), "--out", str(tmp_path / "out"), *args])


def test_unknown_scale_lists_the_scales_found(notebooks, tmp_path, calls):
    with pytest.raises(SystemExit) as err:
        run(notebooks, tmp_path, "--scale", "huge")
    message = str(err.value)
    assert "'huge'" in message and "paper, tiny" in message
    assert calls == []


def test_other_yaml_files_in_params_are_no_scales(notebooks, tmp_path, calls):
    (notebooks / "params" / "cluster.example.yaml").write_text("workers: 2\n")
    with pytest.raises(SystemExit) as err:
        run(notebooks, tmp_path, "--scale", "example")
    assert "unknown scale 'example'" in str(err.value) and "paper, tiny" in str(err.value)
    assert "example" not in str(err.value).split("scales found")[1]


def test_missing_params_file_names_notebook_scale_and_available_scales(notebooks, tmp_path, calls):
    with pytest.raises(SystemExit) as err:
        run(notebooks, tmp_path, "--scale", "paper")
    message = str(err.value)
    assert "claims" in message and "'paper'" in message and "claims.paper.yaml" in message
    assert "scales available for claims: tiny" in message
    assert calls == []  # dyck has paper parameters, but nothing runs before everything is checked


def test_only_with_unknown_name_lists_the_chapters(notebooks, tmp_path, calls):
    with pytest.raises(SystemExit) as err:
        run(notebooks, tmp_path, "--scale", "tiny", "--only", "dyck", "nonsense")
    assert "nonsense" in str(err.value) and ", ".join(cli.CHAPTERS) in str(err.value)
    assert calls == []


def test_missing_notebook_is_skipped_and_said(notebooks, tmp_path, calls, capsys):
    (notebooks / "claims.ipynb").unlink()
    assert run(notebooks, tmp_path, "--scale", "tiny") == 0
    assert "skipping claims" in capsys.readouterr().out
    assert [a[0] for a, _ in calls] == [str(notebooks / f"{n}.ipynb") for n in cli.CHAPTERS if n != "claims"]


def test_missing_notebook_named_by_only_is_an_error(notebooks, tmp_path, calls):
    (notebooks / "claims.ipynb").unlink()
    with pytest.raises(SystemExit, match="claims.ipynb does not exist"):
        run(notebooks, tmp_path, "--scale", "tiny", "--only", "claims")


def test_parameters_and_papermill_options(notebooks, tmp_path, calls, monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert run(notebooks, tmp_path, "--scale", "tiny", "--only", "dyck") == 0
    (source, output), kw = calls[0]
    assert source == str(notebooks / "dyck.ipynb") and output == str(tmp_path / "out" / "dyck.ipynb")
    claims_dir = tmp_path / "out" / "_claims"
    # the notebook reads its preset itself: only what the runner decides is injected
    # run in the output folder, so that the parameter cell shows no path of this machine
    assert kw["parameters"] == {"scale": "tiny", "claims_dir": "_claims"}
    assert claims_dir.is_dir()
    assert kw["kernel_name"] == "python3" and kw["cwd"] == str(tmp_path / "out")
    assert kw["progress_bar"] is False and kw["log_output"] is False and kw["request_save_on_cell_execute"]
    assert "--IPKernelApp.capture_fd_output=False" in kw["extra_arguments"]

    for flag, mode in (("--retrain", "retrain"), ("--train", "train")):
        calls.clear()
        assert run(notebooks, tmp_path, "--scale", "tiny", "--only", "dyck", "claims", flag) == 0
        assert calls[0][1]["parameters"]["mode"] == mode
        assert "mode" not in calls[1][1]["parameters"]  # the summary page trains nothing

    calls.clear()  # where runs train: passed to the chapters only
    assert run(notebooks, tmp_path, "--scale", "tiny", "--only", "dyck", "claims", "--train",
               "--workers", "2", "--scheduler", "slurm:cluster.yaml", "--device", "auto") == 0
    where = {k: calls[0][1]["parameters"][k] for k in ("workers", "scheduler", "device")}
    assert where == {"workers": 2, "scheduler": "slurm:cluster.yaml", "device": "auto"}
    assert not {"workers", "scheduler", "device"} & set(calls[1][1]["parameters"])


def test_runs_follow_chapter_order(notebooks, tmp_path, calls):
    assert run(notebooks, tmp_path, "--scale", "tiny", "--only", "claims", "dyck") == 0
    assert [a[1] for a, _ in calls] == [str(tmp_path / "out" / f"{n}.ipynb") for n in ("dyck", "claims")]


def test_failures_are_collected_and_reported_together(notebooks, tmp_path, monkeypatch, capsys):
    ran = []

    def fake(source, output, **kw):
        ran.append(source)
        if source.endswith("dyck.ipynb"):
            raise PapermillExecutionError(1, 2, "raise ValueError('boom')", "ValueError", "boom", [])

    monkeypatch.setattr(papermill, "execute_notebook", fake)
    assert run(notebooks, tmp_path, "--scale", "tiny") == 1
    assert len(ran) == len(cli.CHAPTERS)  # the others still ran after dyck failed
    out = capsys.readouterr().out
    assert f"{len(cli.CHAPTERS)} notebook(s) run at scale tiny, 1 failed" in out
    assert "FAILED dyck: ValueError: boom" in out


@pytest.mark.slow
def test_real_kernel_failure_is_reported(notebooks, tmp_path, capsys):
    write_notebook(notebooks / "dyck.ipynb", "import json, pathlib\n"
                   "pathlib.Path(claims_dir, 'dyck.json').write_text(json.dumps({'scale': scale}))\n"
                   "raise RuntimeError('deliberate failure')")
    assert run(notebooks, tmp_path, "--scale", "tiny") == 1
    assert "FAILED dyck: RuntimeError: deliberate failure" in capsys.readouterr().out
    assert json.loads((tmp_path / "out" / "_claims" / "dyck.json").read_text()) == {"scale": "tiny"}
    assert (tmp_path / "out" / "claims.ipynb").exists()  # the other notebook ran


def test_book_refuses_to_build_without_the_executed_notebooks(tmp_path):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapters/dyck\n")
    (tmp_path / "intro.md").write_text("# Intro\n")
    with pytest.raises(SystemExit, match="chapters/dyck"):
        cli.main(["book", "--book-dir", str(tmp_path)])


def test_train_names_an_unknown_chapter_and_a_missing_preset(capsys):
    assert cli.main(["train", "--scale", "tiny", "--only", "dyck", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert cli.main(["train", "--scale", "huge", "--only", "dyck"]) == 2
    err = capsys.readouterr().err
    assert "'huge'" in err and "dyck" in err


def test_train_runs_the_chosen_chapters_in_the_order_given_and_reports_each(monkeypatch, capsys):
    from urnlib.experiments import orchestrate

    seen = {}

    def fake(chapters, scale, *, workers, scheduler, **overrides):
        seen.update(chapters=chapters, scale=scale, workers=workers, scheduler=scheduler, **overrides)
        return {"cross_serial": {"a": None, "b": None}, "dyck": RuntimeError("worker lost")}

    monkeypatch.setattr(orchestrate, "run_chapters", fake)
    code = cli.main(["train", "--scale", "tiny", "--only", "cross_serial", "dyck", "--workers", "2",
                     "--retrain"])
    out = capsys.readouterr().out
    assert code == 1 and "cross_serial: every run stored" in out
    assert "FAILED dyck: RuntimeError: worker lost" in out
    assert seen == {"chapters": ["cross_serial", "dyck"], "scale": "tiny", "workers": 2, "scheduler": "",
                    "mode": "retrain"}


def test_an_error_urnlib_raises_is_one_line_not_a_traceback(monkeypatch, capsys):
    from urnlib.errors import BackendError
    from urnlib.experiments import orchestrate

    def unreachable(chapters, scale, **_):
        raise BackendError("scheduler='tcp://nowhere:8786': no Dask scheduler answered; start one")

    monkeypatch.setattr(orchestrate, "run_chapters", unreachable)
    assert cli.main(["train", "--scale", "tiny", "--only", "dyck", "--scheduler", "tcp://nowhere:8786"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: scheduler='tcp://nowhere:8786': no Dask scheduler answered; start one\n"
    assert "Traceback" not in captured.err + captured.out
