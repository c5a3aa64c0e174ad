"""The interpolated Kneser-Ney n-gram baseline (urnlib.models.ngram)."""

import itertools
import math
import random

import numpy as np
import pytest

from urnlib.models.ngram import KneserNey
from urnlib.params import ParameterError

VOCAB = ["a", "b", "<unk>"]
TINY = [["a", "b", "a"], ["b", "<unk>"], ["a", "a", "b", "b"], [], ["b", "a", "<unk>", "a"]]
# every token a context can hold, plus a word the model has never heard of
CONTEXT_TOKENS = ["a", "b", "<unk>", "<s>", "</s>", "zzz"]


def all_contexts(order):
    for length in range(order):  # 0 .. n-1 tokens: every order of the model
        yield from itertools.product(CONTEXT_TOKENS, repeat=length)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("options", [{}, {"modified": True}, {"discount": 0.3}])
def test_distribution_sums_to_one_for_every_context(order, options):
    model = KneserNey(order, **options).fit(TINY, VOCAB)
    assert model.vocabulary == ["a", "b", "<unk>", "</s>"]
    for context in all_contexts(order):
        dist = model.distribution(context)
        assert dist.shape == (4,) and abs(dist.sum() - 1) < 1e-12, context
        assert (dist > 0).all(), context  # the uniform floor: no word has probability zero
        for word, p in zip(model.vocabulary, dist):  # prob() and distribution() agree
            assert model.prob(word, context) == pytest.approx(p, rel=1e-12, abs=0)
    # longer than n-1 (only the last n-1 tokens count), never seen, and with <unk>
    for context in (["zzz"] * 7, ["a", "b", "a", "a", "b", "b"], ["<unk>", "<unk>", "<unk>"],
                    ["<s>", "<unk>"]):
        assert abs(model.distribution(context).sum() - 1) < 1e-12
    assert np.array_equal(model.distribution(["a", "b"] + ["zzz"] * (order - 1)),
                          model.distribution(["zzz"] * 9))


def test_bigram_probability_by_hand():
    sentences = [["a", "b"], ["a", "c"], ["b", "c"]]
    model = KneserNey(2, discount=0.5).fit(sentences, ["a", "b", "c", "<unk>"])
    # padded: <s> a b </s> | <s> a c </s> | <s> b c </s>; prediction vocabulary a b c <unk> </s>: V = 5
    # unigram level, continuation counts N1+(. w): a {<s>} = 1, b {a, <s>} = 2, c {a, b} = 2,
    #   </s> {b, c} = 2, <unk> 0; total 7; gamma() = 0.5 * 4 types / 7 = 2/7
    #   p1(c) = (2 - 0.5) / 7 + (2/7) * (1/5) = 1.5/7 + 0.4/7 = 1.9/7
    # bigram level, raw counts after "a": (a b) = 1, (a c) = 1; c(a .) = 2, N1+(a .) = 2
    #   gamma(a) = 0.5 * 2 / 2 = 0.5
    #   p(c | a) = (1 - 0.5) / 2 + 0.5 * 1.9/7 = 0.25 + 0.95/7 = 0.3857142857...
    assert model.prob("c", ["a"]) == pytest.approx(0.25 + 0.95 / 7, rel=1e-12)
    # p(<unk> | a) = 0 + 0.5 * p1(<unk>) = 0.5 * (2/7) / 5
    assert model.prob("<unk>", ["a"]) == pytest.approx(0.5 * (2 / 7) / 5, rel=1e-12)
    assert model.logprob("c", ["a"]) == pytest.approx(math.log(0.25 + 0.95 / 7), rel=1e-12)
    # default discounts n1 / (n1 + 2 n2): unigram continuation counts 1,2,2,2 -> 1 / (1 + 6) = 1/7;
    # bigram counts (<s> a) = 2, (c </s>) = 2, five others 1 -> 5 / (5 + 4) = 5/9
    estimated = KneserNey(2).fit(sentences, ["a", "b", "c", "<unk>"])
    assert estimated.discounts == [(1 / 7,) * 3, (5 / 9,) * 3]


def test_histories_starting_with_s_keep_raw_counts():
    model = KneserNey(3, discount=0.5).fit([["a"], ["a"], ["a", "b"], ["b"]], VOCAB)
    # unigram continuation counts: a {<s>} = 1, b {a, <s>} = 2, </s> {a, b} = 2: total 5, 3 types
    #   p1(a) = 0.5 / 5 + (0.5 * 3 / 5) / 4 = 0.1 + 0.075 = 0.175
    # bigram level, history <s>: raw counts (<s> a) = 3, (<s> b) = 1 (continuation counts would be 1 and 1)
    #   p2(a | <s>) = 2.5 / 4 + (0.5 * 2 / 4) * 0.175 = 0.625 + 0.04375
    assert model.prob("a", ["<s>"]) == pytest.approx(0.66875, rel=1e-12)


def test_continuation_counts_san_francisco():
    vocab = ["san", "francisco", "dog", "the", "a", "my", "his", "big", "<unk>"]
    sentences = [["san", "francisco"]] * 10 + [[w, "dog"] for w in ("the", "a", "my", "his", "big")]
    # "francisco" is seen 10 times, "dog" 5 times: a unigram (raw count) model prefers francisco ...
    unigram = KneserNey(1).fit(sentences, vocab)
    assert unigram.prob("francisco", []) > unigram.prob("dog", [])
    # ... but francisco follows one word only, dog five: after an unseen word KN prefers dog
    bigram = KneserNey(2).fit(sentences, vocab)
    for context in (["zzz"], ["<unk>"], []):
        assert bigram.prob("dog", context) > bigram.prob("francisco", context)
    assert bigram.prob("francisco", ["san"]) > 0.5


def test_perplexity_training_data_below_shuffled_words():
    rng = random.Random(0)
    subjects, verbs, objects = (["the cat", "a dog", "my friend"], ["saw", "likes", "chased"],
                                ["the ball", "a bird"])
    sentences = [f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}".split()
                 for _ in range(200)]
    vocab = sorted({w for s in sentences for w in s}) + ["<unk>"]
    words = [w for s in sentences for w in s]
    rng.shuffle(words)
    shuffled, start = [], 0
    for s in sentences:  # the same sentence lengths, words in random order
        shuffled.append(words[start:start + len(s)])
        start += len(s)
    model = KneserNey(3).fit(sentences, vocab)
    assert model.perplexity(sentences) < model.perplexity(shuffled)
    # perplexity = exp(mean -ln p) over every word and each </s>, never <s>
    logps = [model.logprob(w, ["<s>", "<s>", *s[:i]])
             for s in shuffled[:20] for i, w in enumerate(s + ["</s>"])]
    assert len(logps) == sum(len(s) + 1 for s in shuffled[:20])
    assert model.cross_entropy(shuffled[:20]) == pytest.approx(-np.mean(logps), rel=1e-12)
    assert model.perplexity(shuffled[:20]) == pytest.approx(math.exp(-np.mean(logps)), rel=1e-12)


def test_perplexity_of_a_uniform_model_is_the_prediction_vocabulary_size():
    # unigram model, every predicted token (a, b, <unk>, </s>) seen 3 times:
    # p = (3 - D) / 12 + (4 D / 12) / 4 = 1/4
    model = KneserNey(1).fit([["a", "b", "<unk>"]] * 3, VOCAB)
    assert np.allclose(model.distribution([]), 0.25, rtol=0, atol=1e-15)
    for data in (TINY, [["a"] * 10], [[]]):
        assert model.perplexity(data) == pytest.approx(len(model.vocabulary), rel=1e-12)
        assert model.cross_entropy(data) == pytest.approx(math.log(4), rel=1e-12)


@pytest.mark.parametrize("kwargs, words", [
    ({"order": 0}, ["order", ">= 1"]),
    ({"order": -2}, ["order"]),
    ({"order": 2.0}, ["order", "integer"]),
    ({"order": "3"}, ["order", "integer"]),
    ({"order": 2, "discount": 0}, ["discount", "(0, 1)"]),
    ({"order": 2, "discount": 1}, ["discount", "(0, 1)"]),
    ({"order": 2, "discount": 1.5}, ["discount", "(0, 1)"]),
    ({"order": 2, "discount": -0.1}, ["discount", "(0, 1)"]),
    ({"order": 2, "discount": "0.5"}, ["discount", "number"]),
    ({"order": 2, "discount": 0.5, "modified": True}, ["discount=None"]),
])
def test_bad_parameters_say_what_to_pass(kwargs, words):
    with pytest.raises(ParameterError) as err:
        KneserNey(**kwargs)
    for word in words:
        assert word in str(err.value)


@pytest.mark.parametrize("sentences, vocab, words", [
    ([], VOCAB, ["no sentences", "token list"]),
    ((s for s in []), VOCAB, ["no sentences"]),
    ([["a", "zzz"]], VOCAB, ["'zzz'", "<unk>"]),
    ([["a"], ["<s>", "a"]], VOCAB, ["sentence 2", "'<s>'", "<unk>"]),
    ([["a", "</s>"]], VOCAB, ["boundary markers"]),
    (["a b"], VOCAB, ["token lists", "split"]),
    ("a b", VOCAB, ["token lists"]),
    ([["a"]], [], ["vocabulary", "<unk>"]),
    ([["a"]], ["a", "b", "a"], ["more than once"]),
])
def test_bad_fit_data_says_what_to_pass(sentences, vocab, words):
    with pytest.raises(ParameterError) as err:
        KneserNey(2).fit(sentences, vocab)
    for word in words:
        assert word in str(err.value)


def test_bad_queries_say_what_to_pass():
    with pytest.raises(ParameterError, match="fit"):
        KneserNey(2).prob("a", ["b"])
    model = KneserNey(2).fit(TINY, VOCAB)
    with pytest.raises(ParameterError, match="prediction vocabulary"):
        model.prob("<s>", ["a"])
    with pytest.raises(ParameterError, match="<unk>"):
        model.perplexity([["a", "zzz"]])
    with pytest.raises(ParameterError, match="token list"):
        model.distribution("a b")


def test_fitting_twice_gives_identical_probabilities():
    one, two = (KneserNey(3, modified=True).fit(TINY, VOCAB) for _ in range(2))
    assert one.discounts == two.discounts
    for context in all_contexts(3):
        assert np.array_equal(one.distribution(context), two.distribution(context))
    assert one.perplexity(TINY) == two.perplexity(TINY)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("options", [{}, {"modified": True}])
def test_stream_probs_equal_prob_token_by_token(order, options):
    model = KneserNey(order, **options).fit(TINY, VOCAB)
    words = ["a", "b", "<unk>", "a", "a", "b", "b", "b", "<unk>", "<unk>", "a"]
    p = model.stream_probs(words)
    assert p.shape == (len(words),) and p.dtype == np.float64
    context = ["<s>"] * (order - 1)
    for i, w in enumerate(words):
        assert p[i] == model.prob(w, context + words[:i]), i  # the same numbers, exactly
    assert model.stream_probs([]).shape == (0,)
    with pytest.raises(ParameterError, match="fit"):
        KneserNey(order).stream_probs(words)
    with pytest.raises(ParameterError, match="<unk>"):
        model.stream_probs(["a", "zzz"])


def test_fits_a_100k_token_corpus_quickly():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(1999)] + ["<unk>"]
    words = np.array(vocab)[np.minimum(rng.zipf(1.3, size=100_000), 2000) - 1].tolist()
    sentences = [words[i:i + 20] for i in range(0, len(words), 20)]
    model = KneserNey(3).fit(sentences, vocab)
    assert abs(model.distribution(sentences[0][:2]).sum() - 1) < 1e-12
    assert 1 < model.perplexity(sentences[:500]) < len(model.vocabulary)


def reference_prob(sentences, order, discounts, word, history):
    """The interpolated KN formula of the module docstring, transcribed with dicts (slow, for checking)."""
    padded = [["<s>"] * (order - 1) + s + ["</s>"] for s in sentences]
    # grams[k][(h..., w)]: raw count of the k-gram at predicted positions
    grams = [{} for _ in range(order + 1)]
    for s in padded:
        for i in range(order - 1, len(s)):
            for k in range(1, order + 1):
                g = tuple(s[i - k + 1:i + 1])
                grams[k][g] = grams[k].get(g, 0) + 1

    def count(k, g):  # a_k: raw at the top order and for <s>-initial k-grams, else continuation counts
        if k == order or (k > 1 and g[0] == "<s>"):
            return grams[k].get(g, 0)
        return sum(1 for longer in grams[k + 1] if longer[1:] == g)

    vocabulary = sorted({w for g in grams[1] for w in g} | {"<unk>", "a", "b"})
    p = 1 / len(vocabulary)
    for k in range(1, order + 1):
        h = tuple(history[len(history) - k + 1:]) if k > 1 else ()
        if len(h) < k - 1:
            break
        counts = {g[-1]: count(k, g) for g in grams[k] if g[:-1] == h}
        counts = {w: a for w, a in counts.items() if a > 0}
        total = sum(counts.values())
        if total == 0:
            continue
        d = lambda a: discounts[k - 1][min(a, 3) - 1]  # noqa: E731
        gamma = sum(d(a) for a in counts.values()) / total
        p = max(counts.get(word, 0) - d(counts.get(word, 1)), 0) / total + gamma * p
    return p


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("modified", [False, True])
def test_matches_a_plain_transcription_of_the_formula(order, modified):
    rng = random.Random(order)
    sentences = [[rng.choice(VOCAB[:2] * 3 + VOCAB) for _ in range(rng.randint(0, 6))] for _ in range(60)]
    model = KneserNey(order, modified=modified).fit(sentences, VOCAB)
    for history in all_contexts(order):
        if "zzz" in history or "</s>" in history:
            continue
        for word in model.vocabulary:
            expected = reference_prob(sentences, order, model.discounts, word, list(history))
            assert model.prob(word, history) == pytest.approx(expected, rel=1e-12), (history, word)
