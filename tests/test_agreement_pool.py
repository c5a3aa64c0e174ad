"""The pooled size trend of the agreement chapter (issue 50; urnlib.chapters.agreement.sizes ``pool`` and
urnlib.tasks.agreement_linzen.linzen_split): a share of Linzen et al.'s test files joins the training
sentences, split by sentence with a fixed stream, and the rest is tested. On hand-made files: no sentence is
both trained on and tested, the tested share is the same for every seed and fraction, the fractions nest, and
a bad entry is refused naming it."""

import pytest

from urnlib.chapters.agreement import experiment as ex
from urnlib.corpora.numpred import NumpredExample
from urnlib.params import ParameterError
from urnlib.tasks import agreement_linzen as L
from urnlib.tasks.agreement import CorpusTask

LEXICON = {**{f"n{i}": "NN" for i in range(400)}, **{f"p{i}": "NNS" for i in range(400)}}


def _files() -> dict[str, list[NumpredExample]]:
    """A validation file of 200 sentences and five test files (30 sentences each, 12 in the fifth), with the
    overlaps of the real files: three one-attractor sentences word for word validation sentences, a sentence
    repeated within a file and one shared by two files."""
    def line(i: int, plural: bool, extra: str = "") -> tuple[str, tuple[str, ...]]:
        return ("VBP" if plural else "VBZ",
                ("the", f"p{i}" if plural else f"n{i}", *(extra.split() if extra else ()), "of", "it"))

    val = [NumpredExample(*line(i, i % 3 == 0), None) for i in range(200)]
    files = {"val": val}
    for n, size in zip(range(1, 6), (30, 30, 30, 30, 12)):
        rows = [NumpredExample(*line(100 * n + i, i % 4 != 0, " ".join(["to", "the", f"n{300 + n}"] * n)), n)
                for i in range(size)]
        if n == 1:
            rows[:3] = [v._replace(n_attractors=1) for v in val[:3]]  # word for word validation sentences
            rows.append(rows[5])  # one sentence twice in its file
        if n == 2:
            rows.append(files["test.1"][7]._replace(n_attractors=2))  # one sentence in two files
        files[f"test.{n}"] = rows
    return files


@pytest.fixture
def hand_made(monkeypatch):
    files = _files()
    monkeypatch.setattr(L, "_limited", lambda split, limit: files[split][:limit] if limit else files[split])
    monkeypatch.setattr(L, "noun_lexicon", lambda: LEXICON)
    L.validation_share.cache_clear()
    yield files
    L.validation_share.cache_clear()


def _task(seed: int) -> CorpusTask:
    return CorpusTask(source="linzen", vocab_size=5000, test_fraction=0.1, max_examples=0,
                      offline_max_sentences=0, seed=seed)


def _parts(task, fraction, pool, monkeypatch) -> dict[str, list]:
    """The examples ``make_data`` encodes, by part (``valid``, ``train``, ``test``, in its order), as words
    and attractor counts: what each run trains on, is tested on and selects on, before any word becomes a
    tag."""
    import urnlib.tasks.agreement as A

    seen, encode = [], A.encode_examples
    monkeypatch.setattr(A, "encode_examples", lambda examples, vocab: seen.append(examples) or encode(
        examples, vocab))
    data = A.make_data(task, True, fraction, pool=pool)
    monkeypatch.setattr(A, "encode_examples", encode)
    return {"data": data, **{part: [(e.words, e.n_attractors) for e in examples]
                             for part, examples in zip(("valid", "train", "test"), seen)}}


def _words(rows, least: int = -99) -> set:
    return {words for words, n in rows if n >= least}


def test_no_sentence_is_both_trained_on_and_tested_and_the_tested_share_is_fixed(hand_made, monkeypatch):
    buckets = None
    for seed in (0, 1, 2):
        parts = {f: _parts(_task(seed), f, 0.5, monkeypatch) for f in (0.25, 0.5, 1.0)}
        for fraction, part in parts.items():
            trained, tested, valid = _words(part["train"]), _words(part["test"]), _words(part["valid"])
            assert trained and tested and not trained & tested, (seed, fraction)
            assert not valid & tested and not valid & trained  # validation: from the training side
            here = sorted(r for r in part["test"] if r[1] >= 1)  # the buckets tested: one set for every run
            assert buckets is None or here == buckets, (seed, fraction)
            buckets = here
            info = part["data"].stats["linzen"]
            assert info["pool"] == 0.5 and info["dropped"] >= 1  # the validation sentences in bucket 1
        quarter, half, whole = (_words(parts[f]["train"]) for f in (0.25, 0.5, 1.0))
        assert quarter < half < whole  # a smaller part inside a larger one
        plain = _parts(_task(seed), 1.0, 0.0, monkeypatch)
        assert len(parts[1.0]["train"]) > len(plain["train"])  # the pool adds sentences ...
        assert {n for _, n in parts[1.0]["train"]} == {L.UNKNOWN, 1, 2, 3, 4, 5}  # ... with attractors
        assert _words(plain["test"], 1) > _words(parts[1.0]["test"], 1)  # and tests fewer
        assert _words(plain["test"], 0) - _words(plain["test"], 1) == _words(parts[1.0]["test"], 0) - _words(
            parts[1.0]["test"], 1)  # the 0 bucket: the seed's held-out validation sentences, as without


def test_the_buckets_split_by_sentence_with_a_fixed_stream_and_pools_nest(hand_made):
    trained, tested = L.pooled_buckets(0.5)
    small, _ = L.pooled_buckets(0.25)
    for n in range(1, 6):
        file = hand_made[f"test.{n}"]
        assert len(trained[n]) + len(tested[n]) == len(file)
        assert not {e.words for e in trained[n]} & {e.words for e in tested[n]}  # a repeat stays on one side
        assert {e.words for e in small[n]} <= {e.words for e in trained[n]}  # a smaller pool inside
    assert L.pooled_buckets(0.5) == (trained, tested)
    none, whole = L.pooled_buckets(0.0)
    assert all(not v for v in none.values()) and whole == {n: hand_made[f"test.{n}"] for n in range(1, 6)}
    # the training sentences a tested sentence shares words with are dropped, never the tested one
    train, held, tests, dropped = L._sides(0, 0.1, 0, 0.5)
    seen = {e.words for e in held} | {e.words for b in tests.values() for e in b}
    assert dropped >= 1 and not {e.words for e, _ in train} & seen
    assert 0 < L.validation_share(0, 0.1, 0, 0.5) < 1


def test_without_a_pool_the_split_is_the_chapters():
    a = L.linzen_split(0, 0.1, 300)
    b = L.linzen_split(0, 0.1, 300, 0.0)
    assert a == b and "pool" not in a[2]
    assert {e.n_attractors for e in a[0]} == {L.UNKNOWN}


# --------------------------------------------------------------------------- the parameter and the plan
def _config(**changes) -> ex.Config:
    return ex.Config.load("tiny", **{"sources": ["synthetic", "linzen"], "analysis_source": "", "sizes": [],
                                     **changes})


@pytest.mark.parametrize("sizes, words", [
    ([{"source": "synthetic", "pool": 0.5, "fraction": 0.5}], ["sizes[0].pool", "'linzen' only"]),
    ([{"source": "linzen", "pool": 1, "fraction": 0.5}], ["sizes[0].pool=1", "strictly between 0 and 1"]),
    ([{"source": "linzen", "pool": 0, "fraction": 0.5}], ["sizes[0].pool=0", "> 0"]),
    ([{"source": "linzen", "pool": -0.2, "fraction": 0.5}], ["sizes[0].pool=-0.2"]),
    ([{"source": "linzen", "pool": "half", "fraction": 0.5}], ["sizes[0].pool='half'", "a number"]),
    ([{"source": "linzen", "pool": 0.5, "factor": 2}], ["pool with factor"]),
    ([{"source": "linzen", "pool": 0.5}], ["either factor", "or fraction"]),
    ([{"source": "linzen", "pool": 0.5, "fraction": 1.5}], ["sizes[0].fraction=1.5"]),
    ([{"source": "linzen", "pool": 0.5, "fraction": 1}, {"source": "linzen", "pool": 0.25, "fraction": 0.5}],
     ["sizes[1].pool=0.25", "another entry pools 0.5", "one pool"]),
    ([{"source": "linzen", "pool": 0.5, "fraction": 1}, {"source": "linzen", "pool": 0.5, "fraction": 1.0}],
     ["sizes[1] repeats", "all pooled sentences"]),
])
def test_a_bad_pooled_entry_is_refused_naming_it(sizes, words):
    with pytest.raises(ParameterError) as info:
        _config(sizes=sizes).validate()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_pooled_runs_plan_apart_and_leave_the_other_keys_unchanged():
    plain = [{"source": "linzen", "fraction": 0.5}]
    pooled = [{"source": "linzen", "pool": 0.5, "fraction": f, "seeds": [0]} for f in (0.25, 1)]
    before = {(s.experiment, s.name): s.key for s in _config(sizes=plain).plan()}
    plan = _config(sizes=plain + pooled).plan()
    new = [s for s in plan if "pool" in s.coords]
    assert {(s.experiment, s.name): s.key for s in plan if "pool" not in s.coords} == before
    assert sorted(s.name for s in new) == sorted(
        f"{m}, {w} seed 0" for m in ("2-TURN", "LSTM") for w in ("1/4 of the pooled sentences",
                                                                 "all pooled sentences"))
    quarter = next(s for s in new if s.name == "LSTM, 1/4 of the pooled sentences seed 0")
    whole = next(s for s in new if s.name == "LSTM, all pooled sentences seed 0")
    own = next(s for s in plan if s.name == "LSTM seed 0" and s.experiment == "agreement/linzen")
    assert quarter.params == {**own.params, "train_fraction": 0.25, "pool": 0.5}
    assert whole.params == {**own.params, "pool": 0.5}
    assert (whole.coords["size"], whole.coords["pool"], whole.coords["setting"]) == (
        1.0, 0.5, "all pooled sentences")
    assert len({s.key for s in plan}) == len(plan)
    assert "0.5 of each test file pooled into training" in _config(sizes=plain + pooled).summary()
