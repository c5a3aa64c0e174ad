import pytest
import torch

from urnlib.languages.anbn import (
    AnbnVocab, accepts, deterministic_positions, encode, largest_accepted, next_symbol_sets, strings,
)
from urnlib.params import ParameterError
from urnlib.train import IGNORE

V = AnbnVocab()
A, B, STOP = V.index["a"], V.index["b"], V.index[V.STOP]


def counter_probs(n, early_stop=0.0, p_b_reading_a=0.2):
    """Probability rows (2n+1, V) of a counter for a^n b^n, and the targets.

    While reading a's it puts ``p_b_reading_a`` on b (0 after <s>); while reading b's it is certain,
    except that ``early_stop`` is moved from b to </s> one b too early.
    """
    _, targets = encode(strings([n]), V)
    probs = torch.zeros(2 * n + 1, len(V))
    probs[0, A] = 1.0
    for t in range(1, n + 1):
        probs[t, A], probs[t, B] = 1 - p_b_reading_a, p_b_reading_a
    for t in range(n + 1, 2 * n):
        probs[t, B] = 1.0
    probs[2 * n, STOP] = 1.0
    if n >= 2 and early_stop:
        probs[2 * n - 1, B], probs[2 * n - 1, STOP] = 1 - early_stop, early_stop
    return probs, targets[0]


def test_vocab_and_strings():
    assert V.symbols == ["<pad>", "<s>", "</s>", "a", "b"] and len(V) == 5
    assert strings([0, 1, 3]) == ["", "ab", "aaabbb"]


def test_encode_aabb_and_padding():
    inputs, targets = encode(["aabb", "ab"], V)
    assert inputs.shape == targets.shape == (2, 5)
    assert inputs[0].tolist() == [V.index["<s>"], A, A, B, B]
    assert targets[0].tolist() == [A, A, B, B, STOP]
    assert inputs[1].tolist() == [V.index["<s>"], A, B, V.index["<pad>"], V.index["<pad>"]]
    assert targets[1].tolist() == [A, B, STOP, IGNORE, IGNORE]


def test_next_symbol_sets_n2_by_hand():
    # prefixes: "", a, aa, aab, aabb
    assert next_symbol_sets(2) == [{"a"}, {"a", "b"}, {"a", "b"}, {"b"}, {"</s>"}]
    assert next_symbol_sets(0, min_n=0) == [{"a", "</s>"}]
    assert next_symbol_sets(1, min_n=0)[0] == {"a", "</s>"}
    assert deterministic_positions(2) == [0, 3, 4]
    assert deterministic_positions(3, min_n=0) == [4, 5, 6]  # b's after the first b, and </s>


def test_perfect_counter_accepted():
    for n in (1, 2, 5, 30):
        assert accepts(*counter_probs(n), threshold=0.5)
        assert accepts(*counter_probs(n), threshold=0.99)


def test_early_stop_rejected():
    # 0.4 on </s> one b too early, 0.2 on a, so p(actual b) = 0.4 <= 0.5: rejected
    probs, targets = counter_probs(4, early_stop=0.4)
    probs[7, A], probs[7, B] = 0.2, 0.4
    assert not accepts(probs, targets, threshold=0.5)
    assert not accepts(probs, targets, threshold=0.5, positions="all")
    # with the other 0.6 on b, p(b) = 0.6 still clears 0.5 (the rule looks at the actual symbol only)
    probs, targets = counter_probs(4, early_stop=0.4)
    assert accepts(probs, targets, threshold=0.5)
    assert not accepts(probs, targets, threshold=0.7)


def test_positions_all_vs_forced():
    probs, targets = counter_probs(3, p_b_reading_a=0.2)  # p(first b) = 0.2: not a forced position
    assert accepts(probs, targets, 0.5, positions="forced")
    assert not accepts(probs, targets, 0.5, positions="all")
    assert accepts(probs, targets, 0.1, positions="all")


def test_accepts_drops_ignored_rows():
    probs, targets = counter_probs(2)
    padded_p = torch.cat([probs, torch.zeros(3, len(V))])
    padded_t = torch.cat([targets, torch.full((3,), IGNORE)])
    assert accepts(padded_p, padded_t, 0.5)


def test_largest_accepted():
    fake = lambda n: counter_probs(n, early_stop=0.9 if n >= 8 else 0.0)  # noqa: E731
    assert largest_accepted(fake, max_n=20, threshold=0.5) == 7
    assert largest_accepted(fake, max_n=5, threshold=0.5) == 5
    assert largest_accepted(lambda n: counter_probs(n, early_stop=0.9), max_n=5) == 1  # n=1 has no early stop


@pytest.mark.parametrize("threshold", [0, 1, -0.1, 1.5, True, "0.5"])
def test_bad_threshold(threshold):
    with pytest.raises(ParameterError):
        accepts(*counter_probs(2), threshold=threshold)
    with pytest.raises(ParameterError):
        largest_accepted(counter_probs, 3, threshold=threshold)


def test_bad_arguments():
    with pytest.raises(ParameterError):
        strings([2, -1])
    with pytest.raises(ParameterError):
        next_symbol_sets(-1)
    with pytest.raises(ParameterError):
        next_symbol_sets(0)  # not in the language when min_n = 1
    with pytest.raises(ParameterError):
        deterministic_positions(-2, min_n=0)
    with pytest.raises(ParameterError):
        encode(["aab"], V)
    with pytest.raises(ParameterError):
        accepts(*counter_probs(2), positions="some")
    with pytest.raises(ParameterError):
        largest_accepted(counter_probs, -1)


# ------------------------------------------------------------------------------------------ the experiment
# urnlib.chapters.primer.anbn: model specs, acceptance, and the LSTM's cell states
def test_anbn_models_and_largest():
    from urnlib.chapters.primer import anbn as primer_anbn

    assert primer_anbn.model_spec("lstm 10") == {"kind": "lstm", "n": 10}
    assert primer_anbn.model_spec("urn 10 k3") == {"kind": "urn", "n": 10, "k": 3}
    for bad in ["urn 5", "gru", "tpru 10 N4", "lstm 0", "nnlm 3 4 5 direct", 7]:
        with pytest.raises(ParameterError):
            primer_anbn.model_spec(bad)
    assert primer_anbn.largest([True, True, False, True]) == 2
    assert primer_anbn.largest([False, True]) == 0
    assert primer_anbn.largest([True] * 5) == 5
    task = primer_anbn.AnbnTask(max_train_n=3, copies=2, max_test_n=3, threshold=0.5, trace_n=2)
    assert len(primer_anbn.training_data(task)) == 6
    with pytest.raises(ParameterError):
        primer_anbn.AnbnTask(max_train_n=10, copies=1, max_test_n=5, threshold=0.5, trace_n=2)


def test_anbn_models_are_built_as_the_lecture_has_them():
    from urnlib.chapters.primer import anbn as primer_anbn

    lstm = primer_anbn.build(primer_anbn.model_spec("lstm 6"))
    assert lstm.embedding_size == len(V) and lstm.dropout == 0.0  # an embedding as wide as the vocabulary
    assert primer_anbn.build(primer_anbn.model_spec("lstm 6 e3")).embedding_size == 3
    urn = primer_anbn.build(primer_anbn.model_spec("urn 4"))
    assert urn.dropout == 0.0 and urn.state_dropout is False
    assert primer_anbn.build(primer_anbn.model_spec("srn 4")).localist


def _lstm_reference(model, tokens):
    """PaperLSTM's equations for one sequence, step by step: (h, c), each (T, n)."""
    n = model.n
    x = model.embedding(tokens)
    W_h, W_x = model.gates.weight[:, :n], model.gates.weight[:, n:]
    act = torch.tanh if model.candidate == "tanh" else torch.sigmoid
    h, c, hs, cs = x.new_zeros(n), x.new_zeros(n), [], []
    for t in range(len(tokens)):
        g = W_x @ x[t] + model.gates.bias + W_h @ h
        f, i, o = torch.sigmoid(g[: 3 * n]).split(n)
        c = f * c + i * act(g[3 * n :])
        h = o * torch.tanh(c)
        hs.append(h)
        cs.append(c)
    return torch.stack(hs), torch.stack(cs)


@pytest.mark.parametrize("candidate", ["tanh", "sigmoid"])
def test_lstm_cell_states_follow_the_equations(candidate):
    """PaperLSTM.states(cells=True) returns c_t of the loop that makes h_t (lecture 004's cell-state plot)."""
    from urnlib.models.recurrent import PaperLSTM

    torch.manual_seed(1)
    model = PaperLSTM(len(V), 6, 4, dropout=0.0, candidate=candidate).eval()
    tokens = torch.tensor([[1, 3, 3, 3, 4, 4, 4], [1, 3, 4, 2, 0, 0, 0]])
    with torch.no_grad():
        h, c = model.states(tokens, cells=True)
        assert torch.equal(h, model.states(tokens))  # the same hidden states as without cells
        for row in range(len(tokens)):
            h_ref, c_ref = _lstm_reference(model, tokens[row])
            assert torch.allclose(h[row], h_ref, atol=1e-6) and torch.allclose(c[row], c_ref, atol=1e-6)
    assert c.shape == h.shape == (2, 7, 6) and not torch.allclose(c, h)


def test_acceptance_of_a_perfect_counter():
    """A model that outputs the true next-symbol distribution of a^n b^n accepts every n."""
    from urnlib.chapters.primer import anbn as primer_anbn

    class Oracle(torch.nn.Module):
        def forward(self, tokens):
            out = torch.full((*tokens.shape, len(V)), -30.0)
            for i, row in enumerate(tokens.tolist()):
                a = b = 0
                for t, s in enumerate(row):
                    a += s == A
                    b += s == B
                    if b == 0:
                        out[i, t, A] = 0.0
                        if a:
                            out[i, t, B] = 0.0
                    elif b < a:
                        out[i, t, B] = 0.0
                    else:
                        out[i, t, STOP] = 0.0
            return out

    task = primer_anbn.AnbnTask(max_train_n=3, copies=1, max_test_n=12, threshold=0.5, trace_n=2)
    assert primer_anbn.acceptance(Oracle(), task) == [True] * 12
