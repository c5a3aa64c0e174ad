"""The real data shipped in notebooks/data: Evans et al.'s released entailment files and Linzen et al.'s
number-prediction files. They pass their manifests and read completely; damaged copies of them (cut short,
an extra column, a bad label or proposition, an empty preamble, a changed byte) are DataErrors naming the
file and the line; and the statistics that compare the released files with the generator."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import raises_with
from urnlib.corpora import numpred as N
from urnlib.corpora import shipped
from urnlib.languages import logic as L
from urnlib.languages.logic import files as F
from urnlib.params import DataError, ParameterError

REPO = Path(__file__).resolve().parents[1]
ENTAILMENT = REPO / "notebooks" / "data" / "logical-entailment"
LINZEN = REPO / "notebooks" / "data" / "linzen-agreement"
#: pairs per released file (test_exam.txt: 100 pairs, 99 newlines: its last line has none)
ENTAILMENT_LINES = {"valid": 5000, "easy": 5000, "hard": 5000, "big": 1696, "massive": 2230, "exam": 100}
NUMPRED_LINES = {"val": 15772, "test.1": 52599, "test.2": 9380, "test.3": 2051, "test.4": 561, "test.5": 159}


_raises = raises_with


def _edit_line(path: Path, line: int, edit) -> None:
    """Replace line ``line`` (1-based) of ``path`` by ``edit(old line)``, keeping the other bytes."""
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = edit(lines[line - 1])
    path.write_bytes(b"\n".join(lines))


def _offset_of_line(path: Path, line: int) -> int:
    data, at = path.read_bytes(), 0
    for _ in range(line - 1):
        at = data.index(b"\n", at) + 1
    return at


# --- the shipped folders and their manifests --------------------------------------------------------------

@pytest.mark.parametrize("dataset, licence", [("logical-entailment", "LICENSE"),
                                              ("linzen-agreement", "NOTICE")])
def test_each_folder_holds_its_files_readme_licence_and_manifest(dataset, licence):
    folder = shipped.dataset_dir(dataset)
    names = {p.name for p in folder.iterdir()}
    assert names == {*shipped.DATASETS[dataset], "README.md", licence, "manifest.json"}
    meta = json.loads((folder / "manifest.json").read_text())
    assert list(meta["files"]) == list(shipped.DATASETS[dataset])
    for name, entry in meta["files"].items():  # the manifest is what the files are now
        assert entry == shipped.file_entry((folder / name).read_bytes()), name
    readme = (folder / "README.md").read_text()
    assert "commit" in readme and "git checkout --" in readme and licence in readme


def test_the_licences_say_what_they_must():
    assert "Apache License" in (ENTAILMENT / "LICENSE").read_text() and "Version 2.0" in (
        ENTAILMENT / "LICENSE").read_text()
    notice = (LINZEN / "NOTICE").read_text()
    assert "CC BY-SA 3.0" in notice and "Linzen" in notice and "Dupoux" in notice and "Goldberg" in notice


def test_git_does_not_ignore_the_shipped_data():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    paths = [str(p.relative_to(REPO)) for folder in (ENTAILMENT, LINZEN) for p in folder.iterdir()]
    found = subprocess.run(["git", "check-ignore", *paths], cwd=REPO, capture_output=True, text=True)
    assert found.returncode == 1 and not found.stdout, f"ignored by git: {found.stdout}"


def test_the_manifests_line_counts():
    files = shipped.manifest("logical-entailment")["files"]
    assert {s: files[F.ORIGINAL_FILES[s][0]]["lines"] for s in ENTAILMENT_LINES} == ENTAILMENT_LINES
    assert (ENTAILMENT / "test_exam.txt").read_bytes().count(b"\n") == 99  # what `wc -l` says
    files = shipped.manifest("linzen-agreement")["files"]
    assert {s: files[N.SPLITS[s]]["lines"] for s in NUMPRED_LINES} == NUMPRED_LINES


def test_the_readers_are_cheap_to_import():
    code = ("import sys, urnlib.corpora.numpred, urnlib.corpora.shipped; "
            "print(sorted(m for m in ('torch', 'numpy', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the shipped files read completely --------------------------------------------------------------------

def test_the_entailment_files_pass_and_read_completely():
    assert L.check_original_files() == ENTAILMENT_LINES
    for split, count in ENTAILMENT_LINES.items():
        examples = L.load_original_split(split=split)
        assert len(examples) == count and all(e.label in (0, 1) for e in examples), split
        assert examples == L.load_entailment_file(ENTAILMENT / F.ORIGINAL_FILES[split][0])
    assert sum(e.label for e in L.load_original_split(split="exam")) == 53


def test_the_entailment_labels_are_entailment_on_a_sample(tmp_path):
    """Every 25th line of every file (about 800 pairs), its label checked by truth table."""
    lines = [line for name in shipped.DATASETS["logical-entailment"]
             for line in (ENTAILMENT / name).read_text().splitlines()[::25]]
    sample = tmp_path / "sample.txt"
    sample.write_text("\n".join(lines) + "\n")
    assert len(L.load_entailment_file(sample, check_labels=True)) == len(lines) > 750


def test_no_train_file_is_shipped():
    with _raises(FileNotFoundError, "train.txt", "not shipped", "generate_dataset"):
        L.load_original_split(split="train")
    with _raises(ParameterError, "split=None"):
        L.load_original_split()


def test_the_numpred_files_pass_and_read_completely():
    assert N.check_numpred_files() == NUMPRED_LINES
    labels = set()
    for split, count in NUMPRED_LINES.items():
        examples = N.load_numpred(split)
        assert len(examples) == count, split
        assert {e.n_attractors for e in examples} == {None if split == "val" else int(split[-1])}
        assert all(e.words for e in examples)
        labels |= {e.label for e in examples}
    assert labels == {"VBZ", "VBP"}
    first = N.load_numpred("test.3")[0]
    assert first == N.NumpredExample("VBP", ("different", "parts", "of", "the", "river", "valley", "in",
                                             "the", "commune"), 3) and first.plural
    assert list(N.load_numpred_tests()) == [1, 2, 3, 4, 5]
    total = sum(len(N.load_numpred(s)) for s in NUMPRED_LINES)
    assert sum(e.label == "VBP" for s in NUMPRED_LINES for e in N.load_numpred(s)) == 45225 == total - 35297


def test_the_attractor_count_comes_from_the_file_name():
    assert [N.attractors_from_name(n) for n in ("numpred.test.4", "x/numpred.test.12", "numpred.val",
                                                 "numpred.test")] == [4, 12, None, None]


# --- damaged copies of the entailment files ---------------------------------------------------------------

@pytest.fixture
def entail_copy(tmp_path):
    """A copy of validate.txt in tmp_path, to damage."""
    path = tmp_path / "validate.txt"
    shutil.copyfile(ENTAILMENT / "validate.txt", path)
    return path


def _both_ways(path, split, *parts):
    """The damaged copy fails when read as it is (format check) and when checked against the manifest."""
    with _raises(DataError, *parts):
        L.load_original_split(path.parent, split)
    with _raises(DataError, *parts, "differs from the shipped", "notebooks/data/logical-entailment"):
        L.load_original_split(path.parent, split, verify=True)


def test_an_entailment_file_cut_mid_line(entail_copy):
    data = entail_copy.read_bytes()
    entail_copy.write_bytes(data[: _offset_of_line(entail_copy, 2501) + 20])
    _both_ways(entail_copy, "valid", f"{entail_copy}, line 2501: expected 6 comma-separated fields")


def test_an_entailment_file_cut_at_a_line_end(entail_copy):
    entail_copy.write_bytes(entail_copy.read_bytes()[: _offset_of_line(entail_copy, 4991)])
    assert len(L.load_original_split(entail_copy.parent, "valid")) == 4990  # well-formed: the hash sees it
    with _raises(DataError, f"{entail_copy}, line 4991: differs from the shipped validate.txt", "(truncated)",
                 "4990 lines", "git checkout -- notebooks/data/logical-entailment/validate.txt"):
        L.load_original_split(entail_copy.parent, "valid", verify=True)


def test_an_entailment_line_with_an_extra_column(entail_copy):
    _edit_line(entail_copy, 7, lambda line: line + b",1")
    _both_ways(entail_copy, "valid", f"{entail_copy}, line 7: expected 6 comma-separated fields", "found 7")


@pytest.mark.parametrize("bad", [b"2", b"XYZ"])
def test_an_entailment_label_that_is_not_0_or_1(entail_copy, bad):
    _edit_line(entail_copy, 10, lambda line: b",".join([*line.split(b",")[:2], bad, *line.split(b",")[3:]]))
    _both_ways(entail_copy, "valid", f"{entail_copy}, line 10: E must be 0 or 1, found {bad.decode()!r}")


def test_an_entailment_heuristic_column_that_is_not_0_or_1(entail_copy):
    _edit_line(entail_copy, 11, lambda line: line[:-1] + b"7")
    _both_ways(entail_copy, "valid", f"{entail_copy}, line 11: H3 must be 0 or 1, found '7'", "heuristic H3")


def test_an_entailment_proposition_with_a_bad_token(entail_copy):
    _edit_line(entail_copy, 12, lambda line: b"#" + line[1:])
    _both_ways(entail_copy, "valid", f"{entail_copy}, line 12: premise A: line 12, column 1:",
               "does not parse")
    shutil.copyfile(ENTAILMENT / "validate.txt", entail_copy)
    column = entail_copy.read_bytes().split(b"\n")[12].index(b",") + 2  # the first symbol of B on line 13
    _edit_line(entail_copy, 13, lambda line: line.replace(b",", b",$", 1))
    _both_ways(entail_copy, "valid", f"{entail_copy}, line 13: hypothesis B: line 13, column {column}:",
               "'$'")


def test_an_entailment_byte_changed_keeping_the_format(entail_copy):
    _edit_line(entail_copy, 3003, lambda line: line[:-1] + (b"1" if line.endswith(b"0") else b"0"))
    assert len(L.load_original_split(entail_copy.parent, "valid")) == 5000  # reads: only the hash sees it
    with _raises(DataError, f"{entail_copy}, line 3003: differs from the shipped validate.txt",
                 "same size, other SHA-256", "verify=False"):
        L.load_original_split(entail_copy.parent, "valid", verify=True)


def test_an_undecodable_byte(entail_copy):
    _edit_line(entail_copy, 5, lambda line: b"\xff" + line[1:])
    with _raises(DataError, f"{entail_copy}, line 5: invalid UTF-8"):
        L.load_original_split(entail_copy.parent, "valid")


# --- damage to the shipped folder itself (a copy standing in for it) --------------------------------------

@pytest.fixture
def fake_data_dir(tmp_path, monkeypatch):
    """notebooks/data copied to tmp_path and made the shipped folder, so that it can be damaged."""
    root = tmp_path / "data"
    for folder in (ENTAILMENT, LINZEN):
        shutil.copytree(folder, root / folder.name)
    monkeypatch.setattr(shipped, "DATA_DIR", root)
    return root


def test_a_shipped_file_changed_is_located_to_its_block(fake_data_dir):
    path = fake_data_dir / "logical-entailment" / "test_hard.txt"
    _edit_line(path, 3500, lambda line: line[:-1] + (b"1" if line.endswith(b"0") else b"0"))
    with _raises(DataError, f"{path}, lines 3001-4000: differs from the shipped test_hard.txt",
                 f"git checkout -- {path}"):
        L.load_original_split(split="hard")
    with _raises(DataError, "lines 3001-4000"):
        L.check_original_files()
    assert len(L.load_original_split(split="easy")) == 5000  # the others still read


def test_a_shipped_file_missing(fake_data_dir):
    path = fake_data_dir / "logical-entailment" / "test_big.txt"
    path.unlink()
    with _raises(DataError, f"{path} is missing", f"git checkout -- {path}"):
        L.load_original_split(split="big")
    with _raises(DataError, f"{path} is missing"):
        L.load_entailment_file(path)
    (fake_data_dir / "linzen-agreement" / "numpred.test.5").unlink()
    with _raises(DataError, "numpred.test.5 is missing", "git checkout --"):
        N.load_numpred("test.5")


def test_a_shipped_numpred_file_with_a_bad_line(fake_data_dir):
    path = fake_data_dir / "linzen-agreement" / "numpred.test.4"
    _edit_line(path, 100, lambda line: b"VBD" + line[3:])
    with _raises(N.NumpredFormatError, f"{path}, line 100: unknown label 'VBD'", "differs from the shipped",
                 f"git checkout -- {path}"):
        N.check_numpred_files()


# --- damaged copies of the numpred files ------------------------------------------------------------------

@pytest.fixture
def numpred_copy(tmp_path):
    path = tmp_path / "numpred.test.2"
    shutil.copyfile(LINZEN / "numpred.test.2", path)
    return path


def _numpred_both_ways(path, *parts):
    with _raises(N.NumpredFormatError, *parts):
        N.read_numpred(path)
    with _raises(N.NumpredFormatError, *parts, "differs from the shipped numpred.test.2"):
        N.load_numpred("test.2", path.parent, verify=True)


def test_a_numpred_line_without_a_tab(numpred_copy):
    _edit_line(numpred_copy, 42, lambda line: line.replace(b"\t", b" "))
    _numpred_both_ways(numpred_copy, f"{numpred_copy}, line 42: expected 2 tab-separated fields", "no tab")


def test_a_numpred_line_with_an_extra_column(numpred_copy):
    _edit_line(numpred_copy, 43, lambda line: line + b"\tVBZ")
    _numpred_both_ways(numpred_copy, f"{numpred_copy}, line 43: expected 2 tab-separated fields", "3 fields")


@pytest.mark.parametrize("bad", [b"XYZ", b"2", b"vbz"])
def test_a_numpred_unknown_label(numpred_copy, bad):
    _edit_line(numpred_copy, 44, lambda line: bad + line[3:])
    _numpred_both_ways(numpred_copy, f"{numpred_copy}, line 44: unknown label {bad.decode()!r}", "VBZ", "VBP")


def test_a_numpred_empty_preamble(numpred_copy):
    _edit_line(numpred_copy, 45, lambda line: line[:4])
    _numpred_both_ways(numpred_copy, f"{numpred_copy}, line 45: empty preamble")


def test_a_numpred_blank_line(numpred_copy):
    _edit_line(numpred_copy, 46, lambda line: b"")
    _numpred_both_ways(numpred_copy, f"{numpred_copy}, line 46: expected 2 tab-separated fields",
                       "an empty line")


def test_a_numpred_file_cut_mid_line(numpred_copy):
    numpred_copy.write_bytes(numpred_copy.read_bytes()[: _offset_of_line(numpred_copy, 5000) + 12])
    assert len(N.read_numpred(numpred_copy)) == 5000  # "VBZ<TAB>some wo" is well-formed: the hash sees it
    with _raises(DataError, f"{numpred_copy}, line 5000: differs from the shipped numpred.test.2",
                 "(truncated)", "5000 lines"):
        N.load_numpred("test.2", numpred_copy.parent, verify=True)


def test_a_numpred_label_flipped(numpred_copy):
    _edit_line(numpred_copy, 777, lambda line: (b"VBP" if line.startswith(b"VBZ") else b"VBZ") + line[3:])
    with _raises(DataError, f"{numpred_copy}, line 777: differs from the shipped numpred.test.2",
                 "same size, other SHA-256"):
        N.load_numpred("test.2", numpred_copy.parent, verify=True)


def test_a_numpred_file_missing_or_not_utf8(tmp_path, numpred_copy):
    with _raises(DataError, "numpred.test.3: no such file"):
        N.read_numpred(tmp_path / "numpred.test.3")
    _edit_line(numpred_copy, 9, lambda line: line + b"\xc3")
    with _raises(DataError, f"{numpred_copy}, line 9: invalid UTF-8"):
        N.read_numpred(numpred_copy)
    with _raises(ParameterError, "split='test.6'"):
        N.load_numpred("test.6")


# --- the statistics: the released files against the generator ---------------------------------------------

def test_split_profile_counts_operators_variables_and_heuristics():
    examples = [L.Entailment("(a&b)", "a", 1, 1, 1, 1),          # ops 1, 0; vars 2; H1-H3 all 1
                L.Entailment("a", "~((a|c))", 0, 1, 0, 0),       # ops 0, 2; vars 2; H1 column wrong (0)
                L.Entailment("(a>b)", "(b>a)", 0, 1, 1, 0)]      # ops 1, 1; vars 2; H3: {~a,b} vs {~b,a}
    p = L.split_profile(examples)
    assert p["count"] == 3 and p["positive"] == pytest.approx(1 / 3)
    assert p["ops"]["histogram"] == {0: 2, 1: 3, 2: 1} and p["ops"]["max"] == 2
    assert p["ops"]["mean"] == pytest.approx(5 / 6)
    assert p["vars"]["histogram"] == {2: 3} and p["mean_worlds"] == 4.0
    assert p["heuristics"] == pytest.approx({"h1": 2 / 3, "h2": 2 / 3, "h3": 1.0})
    assert p["columns"] == pytest.approx({"h1": 1 / 3, "h2": 2 / 3, "h3": 1.0})
    assert p["agreement"] == pytest.approx({"h1": 2 / 3, "h2": 1.0, "h3": 1.0})
    assert L.split_profile([("a", "a", 1)])["columns"] is None
    with pytest.raises(ParameterError):
        L.split_profile([])


def test_the_released_exam_file_has_no_heuristic_columns():
    p = L.split_profile(L.load_original_split(split="exam"))
    assert p["columns"] == pytest.approx({"h1": 0.47, "h2": 0.47, "h3": 0.47})  # all 0: the share of E = 0
    assert p["mean_worlds"] == pytest.approx(5.9, abs=0.05)  # paper 002 Table 2: 5.8


def test_released_vs_generated_table():
    small = {s: 40 for s in ("valid", "easy", "hard", "big", "massive")}
    rows = L.released_vs_generated(seed=0, counts=small, limit=100)
    assert [(r["split"], r["source"]) for r in rows] == [(s, src) for s in L.stats.PROFILE_SPLITS
                                                         for src in ("released", "generated")]
    assert all(r["count"] == 100 for r in rows if r["source"] == "released")
    assert all(r["count"] == 40 for r in rows if r["source"] == "generated" and r["split"] != "exam")
    hard = next(r for r in rows if r["split"] == "hard" and r["source"] == "released")
    assert (hard["ops"]["min"], hard["ops"]["max"]) == (15, 20)  # the released hard formulas: 15-20 operators
    table = L.profile_table(rows)
    lines = table.splitlines()
    assert len(lines) == 2 + 12 and lines[0].count("|") == lines[1].count("|") == lines[2].count("|") == 14
    assert "| exam | released | 100 |" in table and "(0.470)" in table


def test_a_claim_not_run_for_want_of_data_says_which_data_are_missing_and_which_are_here():
    from urnlib.corpora.shipped import not_shipped

    words = not_shipped("WikiText-103", "WikiText-2")
    assert words.startswith("WikiText-103, WikiText-2: not among the data sets shipped here (")
    assert "logical-entailment, linzen-agreement" in words
    with pytest.raises(ValueError, match="Logical Entailment is shipped"):
        not_shipped("MNLI", "Logical Entailment")  # shipped data is decided, not marked not run
