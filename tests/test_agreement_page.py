"""What the agreement chapter's page shows beside its figures (urnlib.chapters.agreement.report): a long
table in blocks side by side, and the sentence on the composed phrases written from their table."""

import numpy as np
import pandas as pd
from IPython.display import Markdown

from urnlib.chapters.agreement import report as rep


def test_a_long_table_is_shown_in_blocks_read_down_the_first():
    table = pd.DataFrame({"token": list("abcde"), "effect (ours)": [0.1, 0.2, 0.3, 0.4, 0.5],
                          "effect (paper)": [1.0, np.nan, 3.0, 4.0, 5.0]})
    blocks = rep.side_by_side(table)
    assert list(blocks.columns) == ["token", "effect (ours)", "effect (paper)"] * 2
    assert blocks.values.tolist() == [["a", "0.10", "1.00", "d", "0.40", "4.00"],
                                      ["b", "0.20", "", "e", "0.50", "5.00"],
                                      ["c", "0.30", "3.00", "", "", ""]]
    assert rep.side_by_side(table, parts=1).shape == (5, 3)


def test_the_phrase_sentence_counts_phrases_below_and_above_the_sum_of_their_words():
    table = pd.DataFrame({"phrase": ["the", "the people", "of the", "is not", "is xyz"],
                          "effect": [1.8, 5.8, 4.4, 5.6, np.nan],
                          "sum of word effects": [1.8, 6.1, 3.4, 4.6, np.nan],
                          "missing": ["", "", "", "", "xyz"]})
    text = rep.phrase_found([table.style], "3-TURN")
    assert text == ('In our 3-TURN, 1 of the 3 phrases of several words has a smaller effect than the sum of '
                    'their words\' effects ("the people" (5.80 against 6.10)) and 2 a larger one.')
    assert rep.phrase_found([Markdown("*skipped*")], "3-TURN") == ""
