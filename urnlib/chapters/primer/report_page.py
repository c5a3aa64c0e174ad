"""What the primer chapter's page shows of its folded parts (issue 49: the science first, the details a click
away): the titles of its folds and the short paragraphs above them, written from the stored runs like the
tables they fold (:mod:`urnlib.chapters.primer.report`).
"""

from __future__ import annotations

import pandas as pd

from urnlib.chapters.primer.report import elman_partitions, improving_at_cap, main_setting
from urnlib.results import Run
from urnlib.seeds import by_label

__all__ = ["convergence_title", "cells_title", "elman_found"]


def convergence_title(runs: dict[str, Run]) -> str:
    """The title of the fold of :func:`~urnlib.chapters.primer.report.brown_convergence` (one line): how many
    language-model runs were still improving when the cap on epochs stopped them."""
    if not runs:
        return "How long each network trained"
    still = sum(improving_at_cap(run) for run in runs.values())
    cap = next(iter(runs.values())).params["train"]["epochs"]
    return (f"How long each network trained: {still} of {len(runs)} runs were still improving at the cap "
            f"of {cap} epochs")


def cells_title(table: pd.DataFrame) -> str:
    """The title of the fold of :func:`~urnlib.chapters.primer.report.cell_table` (one line): whether each
    cell's closed formula gives the module's own count of parameters."""
    same = (table["formula value"] == table["module's parameters"]).all()
    return ("Parameters of the SRN, the GRU and the LSTM as language models: the closed formula "
            + ("gives each module's own count" if same else "differs from a module's own count"))


def elman_found(runs: dict[str, Run]) -> str:
    """What :func:`~urnlib.chapters.primer.report.elman_sensitivity` found, in one Markdown paragraph: on how
    many seeds the tree's two-cluster cuts are exactly nouns | verbs and animate | inanimate, in the setting
    the claims read and over every setting."""
    if not runs:
        return ""
    groups = by_label(runs)
    main = main_setting(runs)

    def exact(seeds, key):
        return sum(part[key] == 1.0 for part in seeds.each(elman_partitions))

    total = sum(len(seeds) for seeds in groups.values())
    counts = {key: (exact(groups[main], key), sum(exact(seeds, key) for seeds in groups.values()))
              for key in ("noun_verb", "animate_inanimate")}
    return (f"How much the word classes depend on the training setting and the seed: the tree's top split is "
            f"exactly nouns | verbs on {counts['noun_verb'][0]} of {len(groups[main])} seeds of **{main}** "
            f"and on {counts['noun_verb'][1]} of {total} over all {len(groups)} settings; animate | "
            f"inanimate among the nouns on {counts['animate_inanimate'][0]} of {len(groups[main])} and on "
            f"{counts['animate_inanimate'][1]} of {total}.")

