"""Where each preset value comes from: the comments of the parameter files, read into every chapter's page."""


import pytest

from urnlib.cli import CHAPTERS as BOOK_CHAPTERS
from urnlib.chapters.cross_serial import experiment as cross_serial
from urnlib.experiments.config import EXECUTION, ChapterConfig, scales_of
from urnlib.params import ParameterError
from urnlib.reports.common import settings_section, whose
from urnlib.chapters import registry

#: every chapter that trains (the claims page only reads the others' claims)
CHAPTERS = [c for c in BOOK_CHAPTERS if c != "claims"]

HAND_MADE = """\
# The paper preset of a made-up chapter: this opening block is about the whole file,
# not about its first key.
scale: paper
epochs: 100        # paper 001 sec. 2: 100 epochs
# a comment above a key is that key's
lr: 0.01
units: [8, 16]     # ours, for time: the paper has 128
                   # (continued on the next line)
tasks:
  dyck:            # paper 000 sec. 5
    {n: 10,
     m: 2}         # a comment on a flow mapping's last line
corpus: small      # ours: the paper's corpus cannot be downloaded here
seed: 0
"""


def test_where_from_reads_comments_beside_above_and_below_a_key(tmp_path):
    (tmp_path / "cross_serial.paper.yaml").write_text(HAND_MADE)
    sources = cross_serial.Config.where_from("paper", params_dir=tmp_path)
    assert sources == {
        "scale": "",
        "epochs": "paper 001 sec. 2: 100 epochs",
        "lr": "a comment above a key is that key's",
        "units": "ours, for time: the paper has 128 (continued on the next line)",
        "tasks": "dyck: paper 000 sec. 5 a comment on a flow mapping's last line",
        "corpus": "ours: the paper's corpus cannot be downloaded here",
        "seed": "",
    }


def test_where_from_of_an_unknown_scale_names_the_presets(tmp_path):
    (tmp_path / "cross_serial.paper.yaml").write_text(HAND_MADE)
    with pytest.raises(ParameterError, match="scale.*paper"):
        cross_serial.Config.where_from("huge", params_dir=tmp_path)


@pytest.mark.parametrize("comment, kind", [
    ("paper 001 sec. 2: 100 epochs", "papers"),
    ("reference-facts: batch 64", "papers"),
    ("ours: stop after 3 epochs", "ours"),
    ("training pairs (Evans et al.: ~100k; ours, for time: a fifth)", "ours, for time"),
    ("Brown tokens (ours: Brown stands in for WikiText, not reachable)", "ours, data"),
    ("", "-"),
])
def test_whose_reads_the_comment(comment, kind):
    assert whose(comment) == kind


@pytest.mark.parametrize("chapter, scale", [(c, s) for c in CHAPTERS for s in scales_of(c) if s != "tiny"])
def test_every_value_of_every_book_or_full_preset_says_where_it_comes_from(chapter, scale):
    """The paper preset (the book's) and a full preset (the papers' scale) comment every value; the tiny
    preset (CI's) need not."""
    config = registry.get(chapter).experiment.Config
    assert issubclass(config, ChapterConfig)
    sources = config.where_from(scale)
    assert set(config.setting_fields()) == set(config.fields()) - EXECUTION - {"scale"}
    undocumented = [f for f in config.setting_fields() if not sources.get(f)]
    assert not undocumented, f"notebooks/params/{chapter}.{scale}.yaml: no comment for {undocumented}"


def test_the_section_counts_whose_values_and_shows_what_a_smaller_preset_changes():
    paper = settings_section(cross_serial.Config.paper())
    rows = [line for line in paper.splitlines() if line.startswith("| `")]
    assert len(rows) == len(cross_serial.Config.setting_fields())
    assert "paper preset" not in paper and "```{dropdown}" in paper
    kinds = [row.split(" | ")[2] for row in rows]
    assert f"{kinds.count('papers')} are the papers'" in paper
    tiny = settings_section(cross_serial.Config.load("tiny", epochs=3))
    assert "| paper preset |" in tiny and "built from the preset `tiny`" in tiny
    epochs = next(line for line in tiny.splitlines() if line.startswith("| `epochs`"))
    assert epochs.startswith("| `epochs` | 3 (preset: 5) | 100 | `tiny` preset | (the paper preset's: paper "
                             "001 sec. 2: 100 epochs")
    train_k = next(line for line in tiny.splitlines() if line.startswith("| `train_k`"))
    assert train_k.startswith("| `train_k` | 8 | 8 | papers | paper 001 sec. 3")


def test_a_preset_with_its_own_comments_shows_them():
    from urnlib.chapters.matrix_embeddings import experiment as matrix_embeddings

    full = settings_section(matrix_embeddings.Config.load("full"))
    row = next(line for line in full.splitlines() if line.startswith("| `urn_epochs`"))
    assert row.startswith("| `urn_epochs` | 40 | 5 | ours | the matrix models' cap: early stopping")
    assert "built from the preset `full`" in full
    tiny = settings_section(matrix_embeddings.Config.load("tiny"))
    row = next(line for line in tiny.splitlines() if line.startswith("| `urn_epochs`"))
    assert row.startswith("| `urn_epochs` | 1 | 5 | `tiny` preset | (the paper preset's: ours, for time: "
                          "the cap")


def test_a_token_in_angle_brackets_is_shown_not_taken_for_a_tag():
    """``<unk>`` in a comment would be swallowed by the browser as an unknown HTML tag; in code it stays."""
    from urnlib.chapters.matrix_embeddings import experiment as matrix_embeddings

    paper = settings_section(matrix_embeddings.Config.paper())
    row = next(line for line in paper.splitlines() if line.startswith("| `min_count`"))
    assert r"rarer words -> \<unk> (paper 003" in row
    from urnlib.reports.common import _escaped
    assert _escaped("a <b> and `<c>` < d") == r"a \<b> and `<c>` \< d"
