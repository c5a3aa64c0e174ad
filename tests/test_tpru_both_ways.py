"""An entailment encoder reading each row both ways (issue 50: paper 002 Table 2 counts 4 x 32,768 weights for
its two-layer LSTM of d = 64, twice the book's one-way encoder): the row reversal, the padding, the parameter
count, the classifier around it and the scaled group's entry that trains one."""

from dataclasses import replace

import pytest
import torch

from urnlib.chapters.tpru import entailment as ent
from urnlib.chapters.tpru import experiment as tpru
from urnlib.models.tpru_stack import BothWays, RecurrentStack, reverse_rows

GROUP = {"models": ["gru 64", "lstm 64", "tpru 64 N64"], "train_size": 100000, "split_profile": "released",
         "seeds": [0, 1, 2], "epochs": 30, "min_epochs": 10}


def _both(kind="lstm", e=5, d=4, layers=2, **kw):
    torch.manual_seed(0)
    return BothWays(RecurrentStack(kind, e, d, layers, seed=0, **kw),
                    RecurrentStack(kind, e, d, layers, seed=2, **kw))


def test_each_row_is_reversed_within_its_length_and_the_padding_stays():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0], [6, 7, 8, 9]])[..., None].float()  # (3, 4, 1)
    lengths = torch.tensor([3, 2, 4])
    flipped = reverse_rows(x, lengths)[..., 0]
    assert flipped.tolist() == [[3, 2, 1, 0], [5, 4, 0, 0], [9, 8, 7, 6]]
    assert torch.equal(reverse_rows(reverse_rows(x, lengths), lengths), x)  # its own inverse


def test_the_states_of_a_row_are_its_own_whatever_padding_follows_it():
    model = _both().eval()
    torch.manual_seed(1)
    row = torch.randn(1, 3, 5)
    padded = torch.cat([row, torch.randn(1, 4, 5)], dim=1)  # four positions of noise after the row
    alone, inside = model(row), model(padded, torch.tensor([3]))[:, :3]
    assert inside.shape == (1, 3, 8)
    torch.testing.assert_close(inside, alone)
    # the second half is the backward stack read from the row's end: at position 0 it has read all of it
    back = model.backward_stack(row.flip(1)).flip(1)
    torch.testing.assert_close(alone[..., 4:], back)
    torch.testing.assert_close(alone[..., :4], model.forward_stack(row))


def test_two_directions_of_the_two_layer_lstm_have_table_2s_weights():
    weights = sum(p.numel() for name, p in _both("lstm", 64, 64).named_parameters() if "weight" in name)
    assert weights == 4 * 32_768  # paper 002 Table 2, LSTM: 4 x 32,768
    one = sum(p.numel() for p in RecurrentStack("tpru", 64, 64, 2, n_roles=64, seed=0).parameters())
    assert sum(p.numel() for p in _both("tpru", 64, 64, n_roles=64).parameters()) == 2 * one


def test_two_stacks_of_different_builds_are_refused():
    from urnlib.params import ParameterError

    with pytest.raises(ParameterError, match="two stacks of one kind"):
        BothWays(RecurrentStack("lstm", 5, 4), RecurrentStack("gru", 5, 4))


def test_the_classifier_reads_both_ways_and_its_prediction_ignores_the_padding():
    from urnlib.languages import logic

    arch = ent.Architecture(layers=2, embedding_size=8, hidden=16, dropout=0.0, permute=False)
    spec = {**ent.encoder_spec("lstm 6"), "directions": 2}
    model = ent.build_classifier(spec, arch, seed=0).eval()
    assert isinstance(model.encoder, BothWays) and model.encoder_dim == 12
    assert model.mlp[1].in_features == 4 * 12
    one_way = ent.build_classifier(ent.encoder_spec("lstm 6"), arch, seed=0)
    assert sum(p.numel() for p in model.encoder.parameters()) == 2 * sum(
        p.numel() for p in one_way.encoder.parameters())
    pairs = logic.generate_dataset({"train": 40}, seed=0)["train"]
    short, long = min(pairs, key=lambda p: len(p.premise)), max(pairs, key=lambda p: len(p.premise))
    assert len(long.premise) > len(short.premise) + 2
    batch = logic.encode_packed([short, long])  # the short pair padded to the long one's width
    with torch.no_grad():  # each pair as it scores alone
        alone = torch.cat([model.classify(logic.encode_packed([p])) for p in (short, long)])
        torch.testing.assert_close(model.classify(batch), alone)


def test_a_group_entry_with_two_directions_is_its_own_run_and_leaves_the_others_keys():
    plain = tpru.Config.load("paper", scaled=GROUP)
    both = tpru.Config.load("paper", scaled={**GROUP, "models": [*GROUP["models"],
                                                                 {"model": "lstm 64", "directions": 2,
                                                                  "seeds": [0]}]})
    before, after = plain.scaled_plan(), both.scaled_plan()
    label = "LSTM 64 bidirectional, 100,000 pairs (released ranges)"
    assert list(after) == [*before, label] and all(after[k] == v for k, v in before.items())
    run = after[label][0]
    assert run.name == f"{label} seed 0" and run.params["model"]["directions"] == 2
    lstm = before["LSTM 64, 100,000 pairs (released ranges)"][0]
    assert "directions" not in lstm.params["model"] and run.key != lstm.key
    assert {k: v for k, v in run.params["model"].items() if k != "directions"} == lstm.params["model"]
    same = tpru.Config.load("paper", scaled={**GROUP, "models": [*GROUP["models"][:2],
                                                                 {"model": "tpru 64 N64", "directions": 1}]})
    assert same.scaled_plan() == before  # one direction is the plain encoder
    assert "LSTM 64 bidirectional (seeds [0])" in both.summary()
    assert replace(both, scaled=None).scaled_plan() == {}
