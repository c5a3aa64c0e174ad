"""The chapters agree with the book's table of contents, and the whole book builds at tiny scale.

The slow test is what `make book SCALE=tiny` does, in a temporary copy of book/: every chapter notebook
runs with papermill, then Jupyter Book builds with warnings as errors (-W -n --keep-going).
"""

import shutil
import subprocess
import sys

import papermill
import pytest
import yaml

from urnlib.cli import BOOK, CHAPTERS, NOTEBOOKS

SCALES = ["tiny", "paper"]
# What urnlib.cli passes to every notebook. It also passes retrain=True with --retrain; a notebook that
# trains nothing (claims) need not declare it (papermill then only warns that it is unused).
INJECTED = {"scale", "claims_dir"}


def test_toc_lists_the_chapters_in_order():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    files = [entry["file"] for entry in toc["chapters"]]
    assert [f for f in files if f.startswith("chapters/")] == [f"chapters/{name}" for name in CHAPTERS]
    assert CHAPTERS[-1] == "claims"
    # pages that are not notebooks (the Performance page) come after the chapters
    assert files[: len(CHAPTERS)] == [f"chapters/{name}" for name in CHAPTERS]


def test_every_notebook_is_a_chapter():
    stray = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb") if p.stem not in CHAPTERS)
    assert stray == [], f"add {stray} to urnlib.cli.CHAPTERS and book/_toc.yml"


def test_every_chapter_has_its_notebook():
    missing = [name for name in CHAPTERS if not (NOTEBOOKS / f"{name}.ipynb").exists()]
    assert missing == [], f"chapter notebooks missing from notebooks/: {missing}"


@pytest.mark.parametrize("name", [n for n in CHAPTERS if (NOTEBOOKS / f"{n}.ipynb").exists()])
def test_parameter_files_name_only_notebook_parameters(name):
    declared = set(papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb")))
    assert INJECTED <= declared, f"the parameters cell of {name}.ipynb must declare {sorted(INJECTED - declared)}"
    for scale in SCALES:
        path = NOTEBOOKS / "params" / f"{name}.{scale}.yaml"
        assert path.exists(), f"{path} is missing"
        given = set(yaml.safe_load(path.read_text()) or {})
        assert given <= declared, f"{path.name} sets {sorted(given - declared)}, not parameters of {name}.ipynb"
        overridden = given & INJECTED
        assert not overridden, f"{path.name} sets {sorted(overridden)}; the runner sets those"


@pytest.mark.slow
def test_notebooks_run_at_tiny_scale_and_the_book_builds(tmp_path):
    book = tmp_path / "book"
    shutil.copytree(BOOK, book, ignore=shutil.ignore_patterns("_build", "*.ipynb", "_claims"))

    def cli(*args):
        proc = subprocess.run([sys.executable, "-m", "urnlib.cli", *args], capture_output=True, text=True)
        assert proc.returncode == 0, f"urnlib.cli {' '.join(args)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        return proc.stdout

    cli("notebooks", "--scale", "tiny", "--out", str(book / "chapters"))
    for name in CHAPTERS:
        assert (book / "chapters" / f"{name}.ipynb").exists()
    cli("book", "--book-dir", str(book))
    html = book / "_build" / "html"
    assert (html / "index.html").exists()
    for name in CHAPTERS:
        assert (html / "chapters" / f"{name}.html").exists()
    dyck = (html / "chapters" / "dyck.html").read_text()
    # Three figures (attractor accuracy, signature dials, paper 001 Fig. 3) and the claims table with verdicts.
    assert dyck.count("<img") >= 3, "a figure of the Dyck chapter did not render"
    assert "verdict" in dyck and ("reproduced" in dyck or "not testable here" in dyck)
    agreement = (html / "chapters" / "agreement.html").read_text()
    # Fig. 2 (one panel per source, synthetic and offline real text at tiny scale) and Table 1 next to the paper's
    assert agreement.count("<img") >= 1 and "effect (paper)" in agreement and "offline" in agreement
    claims = (html / "chapters" / "claims.html").read_text()
    assert "paper 000 Fig. 3" in claims, "the summary page does not list the Dyck chapter's claims"
    assert "paper 000 sec. 4, Fig. 2" in claims, "the summary page does not list the agreement chapter's claims"
    matrix = (html / "chapters" / "matrix_embeddings.html").read_text()
    assert matrix.count("<img") >= 1 and "correct (paper)" in matrix and "Kneser-Ney" in matrix
    assert "paper 003 sec. 4.2" in claims, "the summary page does not list the matrix-embedding chapter's claims"
    primer = (html / "chapters" / "primer.html").read_text()
    # Bengio et al.'s table with the lecture's numbers, the dendrogram, the a^n b^n plots, the claims
    assert primer.count("<img") >= 4 and "lecture row" in primer and "Kneser-Ney back-off" in primer
    assert "lecture 004, Weiss et al. (2018)" in claims, "the summary page does not list the primer's claims"
    tpru = (html / "chapters" / "tpru.html").read_text()
    assert tpru.count("<img") >= 2 and "paper 002 Table 2" in tpru
    assert "paper 002 Table 2" in claims, "the summary page does not list the TPRU chapter's claims"
    performance = (html / "performance.html").read_text()
    assert "ratio to nn.LSTM" in performance and "parallel prefix" in performance, "benchmark tables missing"
