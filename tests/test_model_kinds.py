"""Every model kind describes itself (family, label, style, parameter count, valid sizes), and a new
recurrent cell - its module, one registry entry, one component entry - is trained and drawn by the zoo's tiny
plan with no other file changed."""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from urnlib import components  # noqa: E402
from urnlib.components import Component  # noqa: E402
from urnlib.chapters.zoo import experiment as zoo  # noqa: E402
from urnlib.models import count_parameters, registry  # noqa: E402
from urnlib.models.registry import KINDS, ModelKind, Style, build_model, parse_spec  # noqa: E402
from urnlib.params import ParameterError  # noqa: E402
from urnlib.models.palette import PALETTE, shades  # noqa: E402
from urnlib.plots.curves import shaded  # noqa: E402
from urnlib.chapters.zoo import report as zoo_report  # noqa: E402

V = 11
#: specs of every kind, built and counted below (a kind registered without samples here fails the first test)
SAMPLES = {
    "srn": ["srn 5", "srn 5 e3"], "gru": ["gru 6", "gru 6 e4"], "lstm": ["lstm 8 e5", "lstm 3 e12"],
    "urn": ["urn 16", "urn 16 k3", "urn 6 k5"], "arbitrary": ["arbitrary 6"],
    "nnlm": ["nnlm 3 5 4 direct", "nnlm 3 0 4 direct", "nnlm 3 5 4 nodirect"],
    "tpru": ["tpru 8 N4", "tpru 8 N4 s2", "tpru 6 N3 s3"],
    "4.1": ["4.1 dense 3", "4.1 diagonal 3", "4.1 upper 3"], "4.2": ["4.2 upper 4", "4.2 diagonal 5"],
    "4.3": ["4.3 dense 3", "4.3 diagonal 3"],
}
#: what a spec needs besides its size (the smallest size is built with these)
OPTIONS = {"lstm": {"embedding_size": 4}, "tpru": {"n_roles": 3}, "4.1": {"algebra": "dense"},
           "4.2": {"algebra": "upper"}, "4.3": {"algebra": "diagonal"}}


def test_every_kind_has_samples_and_describes_itself():
    assert set(SAMPLES) == set(KINDS)
    for name, kind in KINDS.items():
        assert kind.family and isinstance(kind.family, str), name
        assert kind.component in components.COMPONENTS, name
        for text in SAMPLES[name]:
            assert registry.family(text) == kind.family
            assert registry.label(text) and registry.label(text, sized=False)
            look = registry.style(text)
            assert mcolors.is_color_like(look.colour) and look.colour == PALETTE[look.word] and look.marker


@pytest.mark.parametrize("text", [t for texts in SAMPLES.values() for t in texts])
def test_counts_are_those_of_the_built_modules(text):
    torch.manual_seed(0)
    model = build_model(text, V)
    assert registry.count(text, V) == count_parameters(model) == sum(p.numel() for p in model.parameters())
    if KINDS[text.split()[0]].cell:  # a classifier's readout of 2 classes
        assert registry.count(text, V, 2) == count_parameters(build_model(text, V, n_out=2))
        assert registry.count({**parse_spec(text), "n_out": 3}, V) == count_parameters(
            build_model(text, V, n_out=3))


@pytest.mark.parametrize("name", [n for n, k in KINDS.items() if k.size is not None])
def test_the_smallest_size_builds_and_smaller_ones_are_refused(name):
    extras = {"urn": ({}, {"k": 3}, {"k": 2}), "tpru": ({}, {"slices": 3})}.get(name, ({},))
    for extra in extras:
        base = {"kind": name, **OPTIONS.get(name, {}), **extra}
        valid = registry.sizes(base, 24)
        spec = registry.at_size(base, valid.start)
        assert spec[KINDS[name].size] == valid.start
        assert count_parameters(build_model(spec, V)) == registry.count(spec, V)
        for size in range(1, valid.start):
            with pytest.raises(ParameterError):
                registry.at_size(base, size)
        for size in valid:  # every size of the range is valid, those between its steps are not
            registry.at_size(base, size)
            if valid.step > 1 and size + 1 <= 24:
                with pytest.raises(ParameterError):
                    registry.at_size(base, size + 1)


def test_labels_are_those_of_the_stored_runs():
    assert [registry.label(t) for t in ("urn 50", "urn 50 k3", "lstm 16 e12", "arbitrary 16", "srn 10",
                                         "gru 10 e4", "tpru 64 N4")] == \
        ["URN 50", "3-TURN 50", "LSTM 16", "Arbitrary 16", "SRN 10", "GRU 10", "TPRU 64"]
    assert [registry.label(t, sized=False) for t in ("urn 16 k3", "urn 16", "arbitrary 6", "lstm 8 e3")] == \
        ["3-TURN", "URN", "Arbitrary", "LSTM"]
    assert registry.label("4.2 diagonal 100") == "4.2 diagonal 100"


def test_styles_keep_the_books_look():
    assert registry.style("urn 50 k3").matplotlib() == {"color": PALETTE["turn"], "marker": "o",
                                                         "linestyle": "-"}
    assert registry.style("urn 16").matplotlib() == {"color": PALETTE["urn"], "marker": "s", "linestyle": "-"}
    assert registry.style("lstm 100 e30").matplotlib(2, of=3)["color"] == shades(PALETTE["lstm"], 3)[2]
    assert registry.style("srn 10").linestyle == (0, (5, 1, 1, 1))
    assert registry.style("tpru 64 N64").marker == "P"
    # every kind its own look: the primer's n-gram models brown, paper 003's three matrix models one colour
    # (each its own marker and dashes)
    assert registry.style("nnlm 5 50 60 direct").word == "nnlm"
    matrix = [registry.style(s) for s in ("4.1 dense 10", "4.2 diagonal 100", "4.3 dense 10")]
    assert {m.colour for m in matrix} == {PALETTE["matrix"]} and len({m.marker for m in matrix}) == 3
    assert registry.style("urn 8 k3").word == "turn" and registry.style("urn 8").word == "urn"
    assert not hasattr(registry, "style_of_label")  # no look is guessed from a label
    cells = ("srn 8", "gru 8", "lstm 8 e4", "urn 8", "urn 8 k3", "arbitrary 8", "tpru 8 N4")
    looks = shaded(list(cells), {spec: registry.style(spec) for spec in cells})  # the zoo: one of each kind
    assert [looks[spec]["color"] for spec in cells] == [PALETTE[w] for w in ("srn", "gru", "lstm", "urn",
                                                                             "turn", "arbitrary", "tpru")]


def test_cells_and_components():
    assert registry.cells() == ["srn", "gru", "lstm", "urn", "arbitrary", "tpru"]
    assert list(zoo.CELLS) == ["srn", "gru", "lstm", "urn", "turn", "arbitrary", "tpru"]
    assert registry.components_of("tpru 8 N4") == ("model.tpru", "model.stack_lm")
    assert registry.components_of("urn 8") == ("model.urn",)
    assert [registry.accepts(k, "state_dropout") for k in ("urn", "arbitrary", "lstm", "tpru")] == \
        [True, True, False, False]
    with pytest.raises(ParameterError, match="no parameter count|has no size"):
        registry.at_size("nnlm", 3)
    with pytest.raises(ValueError, match="twice"):
        components.register("model.urn", Component(1, ("v1",)))


# ------------------------------------------------------------------------------- a new cell, end to end
TOY_MODULE = '''
"""A toy recurrent cell: h_t = tanh(E x_t + w * h_{t-1}) with a diagonal recurrence w, and a readout."""
import torch
from torch import nn


class ToyRNN(nn.Module):
    def __init__(self, vocab_size, n, *, dropout=0.0, n_out=None):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, n)
        self.w = nn.Parameter(torch.full((n,), 0.5))
        self.drop = nn.Dropout(dropout)
        self.readout = nn.Linear(n, n_out or vocab_size)

    def forward(self, tokens):  # (B, T) -> (B, T, n_out)
        x = self.drop(self.embed(tokens))
        h, states = x.new_zeros(x.shape[0], x.shape[2]), []
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] + self.w * h)
            states.append(h)
        return self.readout(self.drop(torch.stack(states, 1)))
'''
TOY_COLOUR = "#17becf"


@pytest.fixture
def toy_cell(tmp_path, monkeypatch):
    """The toy cell registered: its module (in tmp_path, on sys.path), one registry entry, one component."""
    (tmp_path / "urnlib_test_toy_cell.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    kind = ModelKind("toy", "urnlib_test_toy_cell:ToyRNN", "model.toy", "a toy recurrent cell (tests)",
                     positional=(("n", int),), family="simple", label="Toy", size="n", cell=True,
                     count=lambda s, V, o: V * s["n"] + s["n"] + (s["n"] + 1) * (o or V),
                     styles=(Style("toy", TOY_COLOUR, "*", "-"),))
    try:
        registry.register(kind)
        components.register("model.toy", Component(1, ("v1: the tests' toy cell",)))
        yield kind
    finally:
        registry.KINDS.pop("toy", None)
        components.COMPONENTS.pop("model.toy", None)
        sys.modules.pop("urnlib_test_toy_cell", None)


def test_a_registered_cell_is_trained_and_drawn_by_the_zoo(toy_cell, tmp_path):
    assert "toy" in zoo.CELLS and registry.count("toy 7", V) == count_parameters(build_model("toy 7", V))
    config = zoo.Config.load("tiny", cells=["toy"], store=str(tmp_path / "runs"), mode="train")
    assert config.labels() == ["Toy"]
    planned = config.planned()
    assert {p.task for p in planned} == set(config.tasks) and all(p.label == "Toy" for p in planned)
    for p in planned:  # sized to the budget by the registry's count, which the built model has
        assert abs(p.match.count - p.budget) <= config.budget_tolerance * p.budget
        assert count_parameters(build_model(p.model, zoo.TASKS[p.task].vocab_size)) == p.match.count
    assert all("model.toy" in s.components for s in config.plan())

    runs = zoo.run(config)
    assert len(runs) == sum(len(config.lrs(p.task)) for p in planned) * len(config.seeds)  # every rate
    assert all(run.final["n_params"] > 0 and len(run.history) >= 1 for run in runs.values())
    views = config.views(runs)
    assert set(views) == set(config.tasks)
    for task, by_budget in views.items():
        fig = zoo_report.figure_task(task, by_budget, config.min_bucket)
        lines = [line for ax in fig.axes for line in ax.get_lines() if line.get_label() == "Toy"]
        assert lines and all(mcolors.same_color(line.get_color(), TOY_COLOUR) for line in lines), task
        assert all(line.get_linestyle() == "-" for line in lines)
        plt.close(fig)
    assert "Toy" in zoo_report.summary_table(views, config.task_titles()).to_string()


def test_the_toy_cell_is_gone_after_its_test():
    assert "toy" not in KINDS and "model.toy" not in components.COMPONENTS and "toy" not in zoo.CELLS
