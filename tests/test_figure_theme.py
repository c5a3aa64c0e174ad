"""The book's one figure theme and palette (issue 49): seaborn's theme and plotting context set once, text at
11 px or more at the page's width, one colour-blind-safe palette keyed by model kind (the same model in the
same colour in every chapter, no two models of a figure in near-identical colours). Figures are built from
hand-made runs by the chapters' own report functions and measured in the SVG the book shows."""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import seaborn as sns  # noqa: E402

from urnlib.chapters.cross_serial import report as cross_serial  # noqa: E402
from urnlib.chapters.dyck import report as dyck  # noqa: E402
from urnlib.chapters.tpru import report as tpru  # noqa: E402
from urnlib.models import registry  # noqa: E402
from urnlib.models.palette import COLORBLIND, LIGHTNESS, MIN_DELTA_E, PALETTE, delta_e, lab, shades  # noqa: E402
from urnlib.plots import style  # noqa: E402
from urnlib.plots.attractors import attractor_panels_figure  # noqa: E402
from urnlib.plots.budgets import cells_figure  # noqa: E402
from urnlib.plots.curves import BASELINE, is_mark, panels_figure, shaded  # noqa: E402
from urnlib.plots.dials import signature_table_figure  # noqa: E402
from urnlib.plots.series import SeedCurves  # noqa: E402
from urnlib.plots.states import acceptance_figure, state_panels_figure, word_tree_figure  # noqa: E402
from urnlib.results import Run  # noqa: E402
from urnlib.seeds import Seeds  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def seeds(kind: str, n: int, epochs: int = 12) -> Seeds:
    """Two seeds of ``kind n`` with every per-epoch measure the Dyck and cross-serial figures read."""
    label, runs = f"{registry.label({'kind': kind, 'n': n})}", []
    for seed in (0, 1):
        loss = np.linspace(1.8, 0.3, epochs) + 0.01 * seed + 0.001 * n
        rows = [{"epoch": e + 1, "train_loss": float(loss[e]), "test_loss": float(loss[e]) + 0.1,
                 "val_loss": float(loss[e]), "error_rate": float(np.clip(loss[e] - 0.3, 0, 1)),
                 "valid_ppl": float(np.exp(loss[e])), "length_wrong": [0, 0] + [3] * 8,
                 "length_total": [0, 0] + [10] * 8, "closing_accuracy": 0.9,
                 "attr_correct": [90, 80 + seed, 85], "attr_total": [100] * 3} for e in range(epochs)]
        record = {"name": f"{label} seed {seed}", "coords": {"label": label, "seed": seed},
                  "params": {"model": {"kind": kind, "n": n},
                             "train": {"epochs": epochs, "monitor": "val_loss"}},
                  "history": rows, "final": rows[-1]}
        runs.append(Run(record, Path("/nonexistent")))
    return Seeds(label, runs, [0, 1])


def grouped(kinds=("urn", "lstm"), units=(8, 16, 32)) -> dict[str, Seeds]:
    return {s.label: s for s in (seeds(kind, n) for kind in kinds for n in units)}


def legend_colours(fig) -> dict[str, str]:
    """The models' colours as the figure's legends show them (a paper's marks left out)."""
    out = {}
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if not is_mark(handle) and hasattr(handle, "get_color"):
                out[text.get_text()] = mcolors.to_hex(handle.get_color())
    return out


def text_px(fig) -> tuple[float, list[tuple[str, float]]]:
    """The figure as the book shows it: its SVG (what the notebook's inline backend writes) and, for every
    string it draws, the px it shows at in the page's column (:data:`urnlib.plots.style.PAGE_PX`; a wider
    SVG is shrunk to it). matplotlib writes each string as a comment, then a group of glyphs scaled to its
    size (100 units an em)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", **style.PRINT_KWARGS)
    svg = buffer.getvalue()
    natural = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', svg).group(1)) * 4 / 3
    scale = min(1.0, style.PAGE_PX / natural)
    found = re.findall(r"<!-- (.*?) -->\s*<g [^>]*transform=\"[^\"]*scale\(([\d.]+) ", svg, flags=re.S)
    return natural, [(said, style.px(100 * float(size), scale)) for said, size in found]


# ------------------------------------------------------------------------------------------------ theme
def test_the_book_draws_in_seaborns_theme_and_context():
    rc = matplotlib.rcParams
    assert rc["axes.grid"] and rc["axes.edgecolor"] == ".8"  # seaborn's "whitegrid"
    for key in ("xtick.labelsize", "ytick.labelsize", "legend.fontsize", "font.size"):
        assert rc[key] == style.TICK_PT
    assert style.px(style.TICK_PT) >= 12.0 and style.px(style.TICK_PT, 0.92) >= style.MIN_PX >= 11.0
    assert [mcolors.to_hex(c) for c in rc["axes.prop_cycle"].by_key()["color"]] == list(COLORBLIND)
    assert rc["svg.fonttype"] == "path" and rc["font.sans-serif"] == ["DejaVu Sans"]


#: settings of the TPRU chapter's ablation, as long as they come
SETTINGS = ["b = 1 (original)", "b = 0", "b = 1, softmax (Modification III)",
            "b = 1, Adam with AMSGrad, gradient values clipped at 10, no norm clip", "b = 1, lr 0.003"]


def _figures():
    view = grouped()
    cells = {"URN 8": registry.style("urn 8"), "LSTM 8": registry.style("lstm 8"),
             "3-TURN 8": registry.style("urn 8 k3")}
    accuracy = {label: {"count": np.arange(3), "accuracy": np.array([0.9, 0.8, 0.7]),
                        "low": np.array([0.85, 0.7, 0.6]), "high": np.array([0.95, 0.9, 0.8]),
                        "per_seed": np.array([[0.9, 0.8, 0.7], [0.92, 0.78, 0.72]])} for label in cells}
    return {
        "Dyck Fig. 3 (four panels, the paper's marks)": lambda: dyck.figure_paper001(view, [8, 16, 32]),
        "cross-serial Fig. 2 (four panels, the paper's marks)": lambda: cross_serial.figure_paper001(
            view, [8, 16, 32], 8),
        "Dyck Fig. 3 of paper 000 (buckets, bars)": lambda: dyck.figure_accuracy_by_attractors(
            {"lr 0.01": view, "lr 0.001": view, "midpoint": view}, ["URN 8", "LSTM 8"]),
        "agreement panels": lambda: attractor_panels_figure(
            {"synthetic": (accuracy, 0.6), "Linzen": (accuracy, 0.7)}, cells,
            notes={"Linzen": "buckets of 100 sentences or more"}),
        "zoo cells": lambda: cells_figure(
            [{"series": {k: SeedCurves([[0.5, 0.7], [0.6, 0.8]]) for k in cells}, "xlabel": "epoch",
              "ylabel": "accuracy", "title": "1,000 parameters", "hline": (0.5, "chance")}] * 2, cells),
        "three panels, the legend of long names in the spare cell": lambda: panels_figure(
            [{"series": {name: SeedCurves([[50, 55, 60], [52, 54, 61]]) for name in SETTINGS},
              "xlabel": "epoch", "ylabel": "validation accuracy (%)", "title": f"TPRU 64 N={n}",
              "integer_x": True}
             for n in (4, 8, 64)], {name: registry.style("tpru 64 N4") for name in SETTINGS}),
        "acceptance": lambda: acceptance_figure(
            {f"URN seed {s}": [True] * 30 + [False] * 70 for s in range(6)}, 20),
        "Elman tree": lambda: word_tree_figure(np.array([[0.0, 1.0, 0.5, 2.0]]), ["dog", "eat"],
                                               COLORBLIND[:2], xlabel="distance", title="tree"),
        "states": lambda: state_panels_figure([(f"SRN {i}", np.zeros((9, 4))) for i in range(4)]),
        "dials": lambda: signature_table_figure([("(", 14.0, [3.0, 2.0, 1.0]), ("()", 0.06, [0.1])],
                                                title="3-TURN: average effect and signature"),
    }


FIGURES = _figures()


@pytest.mark.parametrize("name", FIGURES)
def test_figure_text_is_11_px_or_more_at_the_pages_width(name):
    """Tick labels, legends, panel letters, notes and marks' labels: none smaller than 11 px where the book
    shows the figure (as wide as the page's column at most: never shrunk)."""
    natural, sizes = text_px(FIGURES[name]())
    assert natural <= style.PAGE_PX, f"{name}: {natural:.0f} px wide, shrunk to the page's {style.PAGE_PX} px"
    assert sizes, f"{name}: no text found in its SVG"
    small = [(said, round(px, 1)) for said, px in sizes if px < style.MIN_PX]
    assert not small, f"{name}: text below {style.MIN_PX} px at the page's width: {small[:8]}"


def test_a_legend_in_the_spare_cell_leaves_the_panels_their_width():
    fig = FIGURES["three panels, the legend of long names in the spare cell"]()
    fig.canvas.draw()
    widths = [ax.get_position().width for ax in fig.axes[:3]]
    assert min(widths) > 0.33, widths  # of the figure's width: two panels to a row, each near half of it


# ----------------------------------------------------------------------------------------------- palette
def test_the_palette_is_seaborns_colour_blind_one_keyed_by_kind():
    assert tuple(sns.color_palette("colorblind").as_hex()) == COLORBLIND
    for name, kind in registry.KINDS.items():
        for look in kind.styles or (registry.DEFAULT_STYLE,):
            assert look.colour == PALETTE[look.word], name
    kinds = {w: shades(c)[0] for w, c in PALETTE.items()}  # as drawn alone
    close = [(a, b, round(delta_e(kinds[a], kinds[b]), 1)) for a, b in itertools.combinations(kinds, 2)
             if delta_e(kinds[a], kinds[b]) < 25]
    assert not close, f"model kinds in near-identical colours: {close}"


@pytest.mark.parametrize("word", PALETTE)
def test_several_models_of_a_kind_take_shades_apart(word):
    """Up to four models of one kind in a figure (four TPRUs in the TPRU chapter's Fig. 2), in shades at
    least MIN_DELTA_E apart (the pinks a review read as one were 17-20 apart), inside LIGHTNESS; three for a
    grey, whose hue cannot turn."""
    grey = np.hypot(*lab(PALETTE[word])[1:]) < 12
    for n in range(1, 4 if grey else 5):
        drawn = shades(PALETTE[word], n)
        assert len(set(drawn)) == n
        assert all(LIGHTNESS[0] - 1 <= lab(c)[0] <= LIGHTNESS[1] + 1 for c in drawn), drawn
        for a, b in itertools.combinations(drawn, 2):
            assert delta_e(a, b) >= MIN_DELTA_E, (word, n, a, b, delta_e(a, b))
    assert shades(PALETTE[word], 1)[0] == PALETTE[word] or lab(PALETTE[word])[0] > LIGHTNESS[1]
    assert shades("#000000", 2) == ("#000000", "#000000")  # the paper's values and kept epochs stay black


def test_the_tpru_chapters_four_tprus_no_longer_share_a_pink():
    specs = ["tpru 64 N4", "tpru 64 N4 s8", "tpru 64 N64", "tpru 64 N64 s8"]
    looks = shaded(specs, {s: registry.style(s) for s in specs})
    for a, b in itertools.combinations(specs, 2):
        assert delta_e(looks[a]["color"], looks[b]["color"]) >= MIN_DELTA_E, (a, b)


@pytest.mark.parametrize("name", [n for n in FIGURES if "Fig." in n or n in ("agreement panels",
                                                                             "zoo cells")])
def test_no_two_models_of_a_figure_look_alike(name):
    colours = legend_colours(FIGURES[name]())
    models = {k: v for k, v in colours.items() if k in grouped() or k in ("URN 8", "LSTM 8", "3-TURN 8")}
    assert len(models) >= 2, colours
    close = [(a, b) for a, b in itertools.combinations(models, 2)
             if delta_e(models[a], models[b]) < MIN_DELTA_E]
    assert not close, f"{name}: models in near-identical colours: {close}"


def test_the_same_model_has_the_same_colour_in_every_chapter():
    """URN 8-32 and LSTM 8-32 in the Dyck and cross-serial chapters' figures; a lone URN and LSTM in the Dyck
    chapter's paper 000 figure and the TPRU chapter's language models: the kind's own colour."""
    view = grouped()
    in_dyck = legend_colours(dyck.figure_paper001(view, [8, 16, 32]))
    in_cross_serial = legend_colours(cross_serial.figure_paper001(view, [8, 16, 32], 8))
    assert set(view) <= set(in_dyck) and set(view) <= set(in_cross_serial)
    assert {k: in_dyck[k] for k in view} == {k: in_cross_serial[k] for k in view}
    assert [in_dyck[f"URN {n}"] for n in (8, 16, 32)] == list(shades(PALETTE["urn"], 3))
    alone = grouped(units=(8,))
    by_attractors = legend_colours(dyck.figure_accuracy_by_attractors({"s": alone}, list(alone)))
    language_models = legend_colours(tpru.lm_curves(alone))
    for label, kind in (("URN 8", "urn"), ("LSTM 8", "lstm")):
        assert by_attractors[label] == language_models[label] == PALETTE[kind]
    assert mcolors.to_hex(BASELINE.matplotlib()["color"]) == PALETTE["baseline"]
