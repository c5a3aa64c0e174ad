"""The one grammar of model specs and the registry of model kinds."""

import pytest
import torch

from urnlib.components import COMPONENTS
from urnlib.models import count_parameters, lstm_parameter_count, urn_parameter_count
from urnlib.models.registry import KINDS, build_model, component_of, parse_spec, spec_string
from urnlib.params import ParameterError


@pytest.mark.parametrize("text, spec", [
    ("urn 50 k3", {"kind": "urn", "n": 50, "k": 3}),
    ("urn 16", {"kind": "urn", "n": 16, "k": None}),
    ("arbitrary 50", {"kind": "arbitrary", "n": 50}),
    ("lstm 16 e12", {"kind": "lstm", "n": 16, "embedding_size": 12}),
    ("srn 100 e30", {"kind": "srn", "n": 100, "embedding_size": 30}),
    ("gru 10", {"kind": "gru", "n": 10, "embedding_size": None}),
    ("nnlm 5 50 60 direct", {"kind": "nnlm", "order": 5, "hidden": 50, "embedding_size": 60, "direct": True}),
    ("nnlm 3 0 30 direct", {"kind": "nnlm", "order": 3, "hidden": 0, "embedding_size": 30, "direct": True}),
    ("tpru 64 N64 s8", {"kind": "tpru", "d": 64, "n_roles": 64, "slices": 8}),
    ("tpru 64 N=4", {"kind": "tpru", "d": 64, "n_roles": 4, "slices": 1}),
    ("4.2 diagonal 100", {"kind": "4.2", "algebra": "diagonal", "d": 100}),
])
def test_parse_and_write_back(text, spec):
    assert parse_spec(text) == spec
    assert parse_spec(spec_string(spec)) == spec


@pytest.mark.parametrize("text, words", [
    ("hopfield 5", ["unknown kind 'hopfield'", "urn N [k<k>]", "tpru D N<roles>"]),
    ("urn 7", ["even"]),
    ("urn 8 k8", ["k must be between"]),
    ("urn eight", ["whole number"]),
    ("tpru 64 N4 s5", ["slices must divide"]),
    ("tpru 64", ["n_roles missing"]),
    ("nnlm 5 0 60 nodirect", ["direct connections"]),
    ("nnlm 5 50 60", ["direct missing"]),
    ("4.2 symmetric 10", ["algebra must be one of"]),
    ("lstm 16 e12 e4", ["given twice"]),
    ("lstm 16 k3", ["'k3' is not understood"]),
    ("", ["a model spec is a string"]),
])
def test_bad_specs_say_what_is_allowed(text, words):
    with pytest.raises(ParameterError) as err:
        parse_spec(text)
    for word in words:
        assert word in str(err.value)


def test_every_kind_has_a_component_and_builds():
    for name, kind in KINDS.items():
        assert kind.component in COMPONENTS, name
    torch.manual_seed(0)
    built = {"urn 32": build_model("urn 32", 12, dropout=0.05), "lstm 8 e12": build_model("lstm 8 e12", 12),
             "srn 5 e4": build_model("srn 5 e4", 12), "gru 5": build_model("gru 5", 12),
             "nnlm 3 5 4 direct": build_model("nnlm 3 5 4 direct", 12),
             "4.2 dense 3": build_model("4.2 dense 3", 12), "tpru 8 N4 s2": build_model("tpru 8 N4 s2", 12),
             "arbitrary 6": build_model("arbitrary 6", 12)}
    assert count_parameters(built["urn 32"]) == urn_parameter_count(12, 32)
    assert count_parameters(built["lstm 8 e12"]) == lstm_parameter_count(12, 8, 12)
    for text, model in built.items():
        assert component_of(text) == component_of(parse_spec(text)) == KINDS[text.split()[0]].component


def test_dict_specs_and_bare_kinds_build_the_same_model():
    torch.manual_seed(0)
    a = build_model({"kind": "urn", "n": 8, "k": 3, "dropout": 0.0}, 12)
    torch.manual_seed(0)
    b = build_model("urn", 12, n=8, k=3, dropout=0.0)
    torch.manual_seed(0)
    c = build_model("urn 8 k3", 12, dropout=0.0)
    x = torch.randint(0, 12, (2, 5))
    assert torch.equal(a.eval()(x), b.eval()(x)) and torch.equal(a(x), c.eval()(x))

