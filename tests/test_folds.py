"""Folded sections (urnlib.reports.folds): one MyST dropdown holding a section's text and tables."""

import pandas as pd
import pytest
from IPython.display import Markdown

from urnlib.reports.folds import fold, fold_markdown


def test_a_fold_is_one_dropdown_holding_its_items_in_order_with_tables_numbered():
    table = pd.DataFrame({"model": ["URN", "LSTM"], "loss": [0.41, 0.58]})
    text = fold_markdown("The runs and the settings", Markdown("First the runs."), table, "Then the rest.",
                         tables=[("Test loss per model.", "tbl-x-loss")])
    lines = text.splitlines()
    assert lines[0] == ":::{dropdown} The runs and the settings" and lines[-1] == ":::"
    body = "\n".join(lines[1:-1])
    assert body.index("First the runs.") < body.index("tbl-x-loss") < body.index("Then the rest.")
    assert "Test loss per model." in body and "URN" in body and "0.58" in body
    assert ":open:" not in text and ":open:" in fold_markdown("t", "x", opened=True)
    assert isinstance(fold("t", "x"), Markdown) and fold("t", "x").data == fold_markdown("t", "x")


def test_a_table_without_a_caption_is_shown_as_html_and_papers_are_cited():
    text = fold_markdown("Data", pd.DataFrame({"a": [1]}), "As paper 000 reports.")
    assert "<table" in text and "paper 000" not in text and "{cite:t}" in text


def test_a_fold_nests_a_dropdown_or_directive_its_items_hold():
    inner = fold_markdown("inner", "x")
    outer = fold_markdown("outer", inner)
    assert outer.startswith("::::{dropdown} outer") and outer.rstrip().endswith("\n::::")
    assert inner.strip() in outer


def test_a_figure_or_a_bad_title_is_refused_with_what_to_do():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure()
    with pytest.raises(TypeError, match="outside the fold"):
        fold_markdown("t", figure)
    plt.close(figure)
    with pytest.raises(ValueError, match="one line"):
        fold_markdown("two\nlines", "x")
