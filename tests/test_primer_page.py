"""What the primer chapter's page shows of its folded parts (:mod:`urnlib.chapters.primer.report_page`): the
fold titles and the short paragraph above the folded Elman table are written from the runs, and Fig. 3 (which
a^n b^n each run accepts) tells accepted from rejected by hatching as well as by colour, in panels side by
side. Built from hand-made runs."""

from pathlib import Path

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from urnlib.chapters.primer import report_page  # noqa: E402
from urnlib.languages.elman import word_classes  # noqa: E402
from urnlib.plots.states import ACCEPTED, REJECTED, REJECTED_HATCH, acceptance_figure  # noqa: E402
from urnlib.results import Run  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def run(label: str, seed: int, params: dict, history: list, final: dict) -> Run:
    name = f"{label} seed {seed}"
    return Run({"name": name, "coords": {"label": label, "seed": seed}, "params": params, "history": history,
                "final": final}, Path("/nonexistent"))


def lm_run(label: str, seed: int, epochs: int, best: int, cap: int = 6) -> Run:
    return run(label, seed, {"model": {"kind": "srn", "n": 4}, "train": {"epochs": cap, "patience": 1}},
               [{"epoch": e + 1, "valid_ppl": 300.0} for e in range(epochs)], {"best_epoch": best})


def test_the_convergence_fold_counts_the_runs_still_improving_at_the_cap():
    runs = {r.name: r for r in [lm_run("srn 4", 0, 6, 6), lm_run("srn 4", 1, 6, 5), lm_run("srn 4", 2, 4, 3)]}
    assert report_page.convergence_title(runs) == ("How long each network trained: 1 of 3 runs were still "
                                                   "improving at the cap of 6 epochs")
    assert report_page.convergence_title({}) == "How long each network trained"


def test_the_cells_fold_says_whether_formula_and_module_agree():
    table = pd.DataFrame({"cell": ["SRN", "GRU"], "formula value": [10, 20], "module's parameters": [10, 20]})
    assert report_page.cells_title(table).endswith("the closed formula gives each module's own count")
    table.loc[1, "module's parameters"] = 21
    assert report_page.cells_title(table).endswith("differs from a module's own count")


def elman_run(label: str, seed: int, loss: float, animacy: bool) -> Run:
    """Mean states that cut exactly into nouns | verbs, and into animate | inanimate nouns when ``animacy``
    (else the nouns lie on a line, split unevenly by the cut)."""
    animate = {"NOUN-HUM", "NOUN-ANIM", "NOUN-AGRESS"}
    states = {}
    for i, (word, classes) in enumerate(word_classes().items()):
        if not all(c.startswith("NOUN") for c in classes):
            states[word] = [100.0, 0.0]
        elif animacy:
            states[word] = [0.0, 0.0 if animate & set(classes) else 10.0]
        else:
            states[word] = [0.0, float(i)]
    return run(label, seed, {}, [{"test_loss": loss}], {"test_loss": loss, "mean_states": states})


def test_the_elman_paragraph_counts_the_exact_cuts_in_the_main_setting_and_over_all():
    runs = [elman_run("SRN a", 0, 1.0, True), elman_run("SRN a", 1, 1.0, True),
            elman_run("SRN b", 0, 2.0, False), elman_run("SRN b", 1, 2.0, True)]
    text = report_page.elman_found({r.name: r for r in runs})
    assert "exactly nouns | verbs on 2 of 2 seeds of **SRN a** and on 4 of 4 over all 2 settings" in text
    assert "animate | inanimate among the nouns on 2 of 2 and on 3 of 4." in text
    assert report_page.elman_found({}) == ""


def bars(ax) -> list:
    return [c for c in ax.collections if len(c.get_paths())]


def test_fig3_has_two_panels_and_hatches_the_rejected_stretches():
    accepted = {f"{m} seed {s}": [True] * 20 + [False] * 10 for m in ("srn 10", "lstm 10") for s in range(3)}
    fig = acceptance_figure(accepted, 20)
    left, right = fig.axes[:2]
    assert [t.get_text() for t in left.get_yticklabels()] == [f"srn 10 seed {s}" for s in range(3)]
    assert [t.get_text() for t in right.get_yticklabels()] == [f"lstm 10 seed {s}" for s in range(3)]
    for ax in (left, right):
        hatches = {(c.get_hatch(), tuple(c.get_facecolor()[0][:3])) for c in bars(ax)}
        assert hatches == {(None, matplotlib.colors.to_rgb(ACCEPTED)),
                           (REJECTED_HATCH, matplotlib.colors.to_rgb(REJECTED))}
    legend = {p.get_label(): p.get_hatch() for p in fig.legends[0].get_patches()}
    assert legend == {"accepted": None, "rejected": REJECTED_HATCH}
    # one run: one panel
    assert len(acceptance_figure({"urn 10 seed 0": [True, False]}, 1).axes) == 1
