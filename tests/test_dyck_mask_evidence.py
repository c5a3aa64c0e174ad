"""The cause of Table 4's pair-effect miss (paper 000: "Such compositions are close to identity") from the
k-TURN trained with one parameter-dropout mask shared by every symbol, decided on hand-made Table 4s."""

from pathlib import Path

import numpy as np

from urnlib.chapters.dyck.claims import PAPER_PAIR_EFFECT, SHARED_MASK, mask_evidence
from urnlib.chapters.dyck.claims_shared import Measures

TURN = "3-TURN"
VARIANT = f"{TURN}, {SHARED_MASK}"


def _table(pair: float, single: float = 13.0) -> np.ndarray:
    """Table 4's effects of one seed: ten single brackets, then five matching pairs (largest ``pair``)."""
    return np.array([single] * 10 + [pair / 4] * 4 + [pair])


def _measures(variant_pairs: list[float] | None) -> Measures:
    view = {TURN: None, **({VARIANT: None} if variant_pairs is not None else {})}
    m = Measures(view, read=None, min_total=1, units=[], turn=TURN)
    m.tables[TURN] = [_table(0.9), _table(0.8), _table(1.0)]  # the book's runs: pairs far from the identity
    if variant_pairs is not None:
        m.tables[VARIANT] = [_table(p) for p in variant_pairs]
    return m


def test_a_shared_mask_whose_pairs_compose_to_the_identity_makes_the_cause_the_setting():
    low = PAPER_PAIR_EFFECT / 10
    cause, evidence = mask_evidence(_measures([low, low * 1.1, low * 0.9]), TURN)
    assert cause == "setting"
    assert evidence.startswith(f"the {VARIANT} (one parameter-dropout mask per batch shared by every symbol")
    assert "largest pair effect 0.007" in evidence and "mean single effect 13 ± 0" in evidence


def test_a_shared_mask_that_leaves_the_pairs_apart_gives_evidence_but_no_cause():
    cause, evidence = mask_evidence(_measures([0.8, 0.85, 0.9]), TURN)
    assert cause is None and "largest pair effect 0.850" in evidence and "not decided" not in evidence
    cause, evidence = mask_evidence(_measures([0.05, 0.10, 0.15]), TURN)  # about the paper's 0.07: undecided
    assert cause is None and "not decided at 3 seeds, about " in evidence and " would decide it)" in evidence


def test_without_the_variant_or_for_another_model_nothing_changes():
    assert mask_evidence(_measures(None), TURN) == (None, "")
    assert mask_evidence(_measures([0.0, 0.0, 0.0]), "Full URN") == (None, "")


def test_a_setting_may_train_variants_of_its_own_and_a_bad_name_says_which_setting():
    import pytest
    import yaml

    from urnlib.chapters.dyck import experiment
    from urnlib.params import ParameterError

    preset = Path(__file__).resolve().parents[1] / "notebooks" / "params" / "dyck.paper.yaml"
    settings = yaml.safe_load(preset.read_text())["settings"]
    settings["lr 0.001"]["variants"] = ["no state dropout", SHARED_MASK]
    settings["lr 0.001"]["more_seeds"].pop(f"{TURN}, sequence parameter mask")  # a variant no longer trained
    settings["lr 0.01"]["variants"] = ["no state dropout"]
    config = experiment.Config.load("paper", settings=settings)
    shared = [s for s in config.plan() if SHARED_MASK in s.name]
    assert [s.coords["setting"] for s in shared] == ["lr 0.001"] * 3
    assert shared[0].params["model"]["param_mask"] == "shared"
    assert config.variant_labels(config.settings_()["lr 0.01"]) == [f"{TURN}, no state dropout"]
    assert config.variant_labels() == [f"{TURN}, no state dropout", VARIANT]
    settings["lr 0.001"]["variants"] = ["per sequence"]
    with pytest.raises(ParameterError, match=r"settings\['lr 0.001'\].variants\[0\]='per sequence'"):
        experiment.Config.load("paper", settings=settings)


def test_the_authors_per_sequence_mask_decides_beside_the_shared_one():
    from urnlib.chapters.dyck.claims import SEQUENCE_MASK

    m = _measures([0.8, 0.85, 0.9])  # the shared mask leaves the pairs apart
    sequence = f"{TURN}, {SEQUENCE_MASK}"
    m.view[sequence] = None
    low = PAPER_PAIR_EFFECT / 10
    m.tables[sequence] = [_table(p) for p in (low, low * 1.1, low * 0.9)]  # the authors' mask: identity
    cause, evidence = mask_evidence(m, TURN)
    assert cause == "setting"
    shared_at, sequence_at = evidence.index(VARIANT), evidence.index(sequence)
    assert shared_at < sequence_at
    assert "the authors' mask: one per sequence, shared by its symbols" in evidence
    assert "largest pair effect 0.850" in evidence and "largest pair effect 0.007" in evidence
    m.tables[sequence] = [_table(p) for p in (0.05, 0.10, 0.15)]  # about the paper's 0.07: undecided
    assert mask_evidence(m, TURN)[0] is None  # neither mask decides for the paper: evidence, no cause
    m.tables[sequence] = [_table(p) for p in (0.5, 0.6, 0.7)]  # the authors' mask leaves the pairs apart
    assert mask_evidence(m, TURN)[0] == "authors"  # the miss stands with their mask
    m.tables[VARIANT] = [_table(p) for p in (low, low * 1.1, low * 0.9)]  # though the per-batch one holds
    assert mask_evidence(m, TURN)[0] == "authors"
