"""The Linzen et al. (2016) TSV reader and writer (urnlib.corpora.linzen)."""

import gzip
import shutil
from pathlib import Path

import pytest

from urnlib.corpora.linzen import (
    COLUMNS,
    AgreementExample,
    AgreementFormatError,
    attractor_histogram,
    read_tsv,
    write_tsv,
)

SAMPLE = Path(__file__).parent / "data" / "linzen_sample.tsv"


def test_reads_a_hand_written_file_in_the_linzen_format():
    examples = read_tsv(SAMPLE)
    assert len(examples) == 3
    keys = examples[0]
    assert keys.words[keys.subj_index] == "keys" and keys.words[keys.verb_index] == "are"
    assert (keys.subj_index, keys.verb_index) == (1, 5)  # the file's indices are 1-based
    assert keys.plural and keys.n_attractors == 1 and keys.n_intervening == 1
    assert keys.prefix == ("the", "keys", "to", "the", "cabinet")  # up to the word before the verb
    author = examples[1]
    assert not author.plural and author.n_attractors == 2
    assert author.prefix[-1] == "praise" and author.extra["has_rel"] == "True"
    assert attractor_histogram(examples) == {0: 1, 1: 1, 2: 1}


def test_gzip_and_plain_read_the_same(tmp_path):
    gz = tmp_path / "sample.tsv.gz"
    with open(SAMPLE, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert read_tsv(gz) == read_tsv(SAMPLE)


def test_round_trip_keeps_every_column(tmp_path):
    examples = read_tsv(SAMPLE)
    out = tmp_path / "copy.tsv"
    assert write_tsv(examples, out) == 3
    assert read_tsv(out) == examples
    original = SAMPLE.read_text().splitlines()
    assert out.read_text().splitlines() == original  # byte for byte: no column lost or reformatted


def test_gzip_output_is_byte_reproducible(tmp_path):
    examples = read_tsv(SAMPLE)
    a, b = tmp_path / "a.tsv.gz", tmp_path / "b.tsv.gz"
    write_tsv(examples, a)
    write_tsv(examples, b)
    assert a.read_bytes() == b.read_bytes()
    assert read_tsv(a) == examples


def _edit(tmp_path, line_no, column, value):
    lines = SAMPLE.read_text().splitlines()
    fields = lines[line_no - 1].split("\t")
    fields[COLUMNS.index(column)] = value
    lines[line_no - 1] = "\t".join(fields)
    path = tmp_path / "bad.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("line_no, column, value, message", [
    (3, "verb_index", "nine", r"line 3, column 'verb_index': 'nine' is not an integer"),
    (2, "verb_index", "40", r"line 2, column 'verb_index': 40 is outside the sentence's 10 words"),
    (4, "verb_pos", "VBD", r"line 4, column 'verb_pos': 'VBD'; expected VBZ \(singular\) or VBP"),
    (2, "pos_sentence", "DT NNS", r"line 2, column 'pos_sentence': 2 tags for the 10 words"),
    (3, "n_diff_intervening", "-1", r"line 3, column 'n_diff_intervening': -1 < 0"),
])
def test_a_malformed_value_names_the_line_and_column(tmp_path, line_no, column, value, message):
    with pytest.raises(AgreementFormatError, match=message):
        read_tsv(_edit(tmp_path, line_no, column, value))


def test_a_line_with_missing_fields_names_the_line(tmp_path):
    lines = SAMPLE.read_text().splitlines()
    lines[2] = "\t".join(lines[2].split("\t")[:5])  # a truncated line 3
    path = tmp_path / "short.tsv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(AgreementFormatError,
                       match=r"short.tsv, line 3: 5 tab-separated fields, the header has 18"):
        read_tsv(path)


def test_a_missing_column_is_named_with_how_to_get_the_data(tmp_path):
    lines = SAMPLE.read_text().splitlines()
    drop = COLUMNS.index("verb_pos")
    path = tmp_path / "nocol.tsv"
    path.write_text("\n".join("\t".join(f for i, f in enumerate(line.split("\t")) if i != drop)
                              for line in lines) + "\n")
    with pytest.raises(AgreementFormatError,
                       match=r"line 1 \(the header\): no column 'verb_pos'.*agreement-data"):
        read_tsv(path)


def test_missing_file_and_wrong_format_say_how_to_obtain_the_data(tmp_path):
    with pytest.raises(AgreementFormatError, match=r"does not exist.*'synthetic'.*'offline'.*Linzen"):
        read_tsv(tmp_path / "agr_50_mostcommon_10K.tsv.gz")
    binary = tmp_path / "model.tsv.gz"
    binary.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(AgreementFormatError, match=r"model\.tsv\.gz: the gzip data is damaged.*UTF-8 text"):
        read_tsv(binary)
    empty = tmp_path / "empty.tsv"
    empty.write_text("\t".join(COLUMNS) + "\n")
    with pytest.raises(AgreementFormatError, match="no examples"):
        read_tsv(empty)


def test_example_row_writes_1_based_indices_and_derived_columns():
    ex = AgreementExample(("the", "dogs", "near", "the", "cat", "bark"),
                          ("DT", "NNS", "IN", "DT", "NN", "VBP"), 1, 5, "VBP", 1, 1)
    row = ex.row()
    assert (row["subj_index"], row["verb_index"], row["distance"]) == ("2", "6", "4")
    assert (row["subj"], row["verb"], row["subj_pos"]) == ("dogs", "bark", "NNS")
