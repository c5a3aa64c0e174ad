"""The primer chapter's experiments (lecture 004): Brown stream rows, Kneser-Ney scoring of a stream, the Elman
clustering and the a^n b^n acceptance, and the chapter's claim rules on hand-made runs."""

from pathlib import Path

import numpy as np
import pytest
import torch

from urnlib.experiments import primer_anbn, primer_elman, primer_lm
from urnlib.models.ngram import KneserNey
from urnlib.params import ParameterError
from urnlib.reports import primer as report
from urnlib.results import Run
from urnlib.train import IGNORE, TrainConfig


def _run(params, final, history=()):
    return Run({"name": "x", "params": params, "final": final, "history": list(history)}, Path("."))


# ------------------------------------------------------------------------------------------------ Brown rows
@pytest.mark.parametrize("length, window, warmup", [(10, 4, 2), (12, 4, 0), (7, 3, 5), (1, 5, 3)])
def test_rows_predict_every_token_once_from_the_token_before_it(length, window, warmup):
    stream = list(range(10, 10 + length))
    start = 99
    data = primer_lm.rows(stream, window, warmup, start)
    assert data.inputs.shape[1] == warmup + window
    keep = data.targets != IGNORE
    assert sorted(data.targets[keep].tolist()) == stream  # every token exactly once
    assert (data.targets[:, :warmup] == IGNORE).all()
    for r, t in zip(*torch.nonzero(keep, as_tuple=True)):
        target = int(data.targets[r, t])
        i = stream.index(target)
        assert int(data.inputs[r, t]) == (stream[i - 1] if i > 0 else start)
        # the warm-up holds the tokens before, so an n-gram sees its whole context inside the row
        context = data.inputs[r, max(0, t - warmup + 1) : t + 1].tolist()
        expected = ([start] * warmup + stream)[i : i + warmup][-len(context):]
        assert context == expected


def test_parse_model_and_plan():
    assert primer_lm.parse_model("nnlm 5 50 60 direct") == {"kind": "nnlm", "n": 5, "h": 50, "m": 60, "direct": True}
    assert primer_lm.parse_model("lstm 100 30") == {"kind": "lstm", "n": 100, "e": 30}
    for bad in ["nnlm 5 50 60", "mlp 5 50 60 direct", "lstm 100", "nnlm 5 0 30 nodirect", "nnlm 1 50 30 direct", 7]:
        with pytest.raises(ParameterError):
            primer_lm.parse_model(bad)
    with pytest.raises(ParameterError, match="warmup"):
        primer_lm.plan_runs(["nnlm 5 50 60 direct"], warmup=3)


def test_lecture_rows_are_matched_by_configuration():
    spec = primer_lm.parse_model("nnlm 5 100 30 nodirect")
    assert primer_lm.lecture_row(spec, False)["name"] == "MLP9"
    assert primer_lm.lecture_row(spec, True)["test"] == 252
    assert primer_lm.lecture_row(primer_lm.parse_model("nnlm 4 50 30 direct"), False) is None
    assert primer_lm.lecture_row(primer_lm.parse_model("srn 100 30"), False) is None


def test_kneser_ney_stream_scoring_matches_prob():
    words = "the cat sat on the mat and the dog sat on the cat".split()
    vocab = ["<unk>", "the", "cat", "sat", "on", "mat", "and", "dog"]
    lm = KneserNey(3).fit([words], vocab)
    test = "the dog sat on the mat".split()
    p = primer_lm.kneser_ney_probs(lm, test)
    context = ["<s>", "<s>"]
    for w, q in zip(test, p):
        assert q == pytest.approx(lm.prob(w, context))
        context = context[1:] + [w]
    assert primer_lm.perplexity(np.array([0.5, 0.5])) == pytest.approx(2.0)


# ------------------------------------------------------------------------------------------------ Elman
def test_elman_rows_and_settings():
    task = primer_elman.ElmanTask(n_sentences=40, hidden=4, row_length=5)
    stream, data, held_out = primer_elman.make_data(task)
    words = primer_elman.vocabulary()
    assert len(words) == 21
    flat = [words[i] for i in data.inputs.flatten().tolist()]
    assert flat == stream[: len(flat)]
    assert (data.targets[:, :-1] == data.inputs[:, 1:]).all()
    assert len(held_out) > 0
    assert primer_elman.parse_setting("20 8 0.01") == TrainConfig(20, 8, 0.01)
    for bad in ["20 8", "x 8 0.1", "20 8 0.01 3", "0 8 0.01"]:
        with pytest.raises(ParameterError):
            primer_elman.parse_setting(bad)


def test_mean_states_average_the_state_after_each_word():
    from urnlib.models.cells import SRN

    torch.manual_seed(0)
    model = SRN(21, 3)
    stream = ["man", "eat", "cookie", "man", "sleep"] * 40
    means = primer_elman.mean_states(model, stream)
    index = {w: i for i, w in enumerate(primer_elman.vocabulary())}
    with torch.no_grad():
        h = model.states(torch.tensor([[index[w] for w in stream]]))[0].double()
    for word in set(stream):
        rows = [t for t, w in enumerate(stream) if w == word]
        assert np.allclose(means[word], h[rows].mean(0).numpy(), atol=1e-5)


def test_elman_partitions_on_hand_made_states():
    from urnlib.languages.elman import word_classes

    classes = word_classes()
    states = {}
    for w in primer_elman.vocabulary():
        noun = all(c.startswith("NOUN") for c in classes[w])
        animate = any(c in primer_elman.ANIMATE for c in classes[w])
        states[w] = [0.0 if noun else 10.0, 1.0 if animate else 0.0, 0.01 * len(w)]
    parts = report.elman_partitions(_run({}, {"mean_states": states}))
    assert parts["noun_verb"] == 1.0 and parts["animate_inanimate"] == 1.0
    swapped = dict(states, man=states["eat"])  # one noun among the verbs
    assert report.elman_partitions(_run({}, {"mean_states": swapped}))["noun_verb"] == pytest.approx(20 / 21)


# ------------------------------------------------------------------------------------------------ a^n b^n
def test_anbn_models_and_largest():
    assert primer_anbn.parse_model("lstm 10") == {"kind": "lstm", "n": 10}
    for bad in ["urn 5", "gru", "tpru 10", "lstm 0"]:
        with pytest.raises(ParameterError):
            primer_anbn.parse_model(bad)
    assert primer_anbn.largest([True, True, False, True]) == 2
    assert primer_anbn.largest([False, True]) == 0
    assert primer_anbn.largest([True] * 5) == 5
    data = primer_anbn.training_data(primer_anbn.AnbnTask(max_train_n=3, copies=2, max_test_n=3))
    assert len(data) == 6
    with pytest.raises(ParameterError):
        primer_anbn.AnbnTask(max_train_n=10, max_test_n=5)


def test_lstm_cell_states_repeat_the_lstm():
    torch.manual_seed(1)
    model = primer_anbn.build({"kind": "lstm", "n": 6}).eval()
    tokens = torch.tensor([1, 3, 3, 3, 4, 4, 4])
    h, c = primer_anbn.lstm_cell_states(model, tokens)
    with torch.no_grad():
        assert torch.allclose(h, model.states(tokens[None])[0], atol=1e-6)
    assert c.shape == h.shape and not torch.allclose(c, h)


def test_acceptance_of_a_perfect_counter():
    """A model that outputs the true next-symbol distribution of a^n b^n accepts every n."""
    from urnlib.languages import anbn

    vocab = anbn.AnbnVocab()

    class Oracle(torch.nn.Module):
        def forward(self, tokens):
            out = torch.full((*tokens.shape, len(vocab)), -30.0)
            for i, row in enumerate(tokens.tolist()):
                a = b = 0
                for t, s in enumerate(row):
                    a += s == vocab.index["a"]
                    b += s == vocab.index["b"]
                    if b == 0:
                        out[i, t, vocab.index["a"]] = 0.0
                        if a:
                            out[i, t, vocab.index["b"]] = 0.0
                    elif b < a:
                        out[i, t, vocab.index["b"]] = 0.0
                    else:
                        out[i, t, vocab.index["</s>"]] = 0.0
            return out

    task = primer_anbn.AnbnTask(max_train_n=3, max_test_n=12)
    assert primer_anbn.acceptance(Oracle(), task) == [True] * 12


# ------------------------------------------------------------------------------------------------ claims
def _lm(kind, test, mix_test=None):
    spec = {"kind": kind, "n": 5, "h": 50, "m": 60, "direct": True} if kind == "nnlm" else {"kind": kind, "n": 10,
                                                                                           "e": 5}
    return _run({"model": spec}, {"test_ppl": test, "mix_test_ppl": mix_test or test * 0.95})


def test_brown_claims_follow_their_rules():
    kn = {f"KN{k}": _run({}, {"order": k, "test_ppl": v}) for k, v in ((3, 330.0), (5, 328.0))}
    verdicts = {c.statement: c.verdict for c in report.claims({"a": _lm("nnlm", 300.0)}, kn, None, {}, 20)}
    assert set(verdicts.values()) == {"reproduced"}
    verdicts = {c.statement: c.verdict for c in report.claims({"a": _lm("nnlm", 340.0, 345.0)}, kn, None, {}, 20)}
    assert list(verdicts.values())[:2] == ["not reproduced", "not reproduced"]


def test_anbn_claims_follow_their_rules():
    def runs(lstm, gru, srn):
        out = {}
        for kind, values in (("lstm", lstm), ("gru", gru), ("srn", srn)):
            for seed, v in enumerate(values):
                out[f"{kind} 10 seed {seed}"] = _run({"model": {"kind": kind, "n": 10}, "seed": seed},
                                                     {"largest_accepted": v, "n_params": 1})
        return out

    got = [c.verdict for c in report.claims({}, {}, None, runs([60, 30, 80], [20, 21, 22], [0, 3, 5]), 20)]
    assert got == ["reproduced", "reproduced", "reproduced"]  # LSTM median 60 >= 25; GRU 21, SRN 3 < 25; LSTM best
    got = [c.verdict for c in report.claims({}, {}, None, runs([23, 22, 24], [20, 40, 30], [0, 3, 5]), 20)]
    assert got == ["not reproduced", "not reproduced", "not reproduced"]
    table = report.anbn_table(runs([60, 30, 80], [20, 21, 22], [0, 3, 5]), 20)
    assert table.loc[table["model"] == "lstm 10", "median largest n accepted"].item() == 60
