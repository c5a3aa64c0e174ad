"""The two split tables of the entailment generator: SPLITS (our reconstruction towards Evans et al.'s
Table 1, the default) and RELEASED_SPLITS (matched to the released files' statistics), chosen by
split_table. The released table's splits come close to the shipped files' operator and variable counts;
the default output of generate_dataset does not change."""

import os
from dataclasses import astuple

import pytest

from urnlib.languages import logic as L
from urnlib.languages.logic import files as F
from urnlib.languages.logic import splits as S
from urnlib.params import ParameterError

#: pairs generated per split for the comparison (a few seconds in all)
COUNTS = {"train": 0, "valid": 400, "easy": 400, "hard": 400, "big": 400, "massive": 200}
COMPARED = ("valid", "easy", "hard", "big", "massive")

#: relative tolerance on the means of operators per formula and variables per pair (RELEASED_SPLITS
#: is within it at a few thousand pairs; big's variables are the exception, see RELEASED_PROFILE_NOTE)
MEAN_TOL = 0.10
#: big: one uniform pool cannot give the released mixture, its mean #vars is 20-30 % high
BIG_VARS_TOL = 0.35
#: mean 2^#vars is dominated by the few pairs with the most variables: at a few hundred pairs its sampling
#: noise is 10-20 % (within about 10 % at a few thousand pairs), so the check here is looser
WORLDS_TOL = 0.25
#: H1-H3 accuracies, absolute
HEURISTIC_TOL = 0.06

#: the first valid pair of generate_dataset(seed=0) as the stored runs were made with it
FIRST_VALID = ("(~((n&(~(r)>n)))&(z>q))", "((h|z)|(~((e&~((z|(~(p)&(r|z))))))|t))", 0, 0, 0, 0)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def _require_released() -> None:
    """Skip when the shipped released files are absent (fail in CI, where they must be there)."""
    missing = [F.ORIGINAL_FILES[s][0] for s in COMPARED
               if not (L.original_dir() / F.ORIGINAL_FILES[s][0]).is_file()]
    if missing:
        message = (f"the released entailment files {missing} are not in {L.original_dir()}; restore them "
                   f"with `git checkout -- notebooks/data/logical-entailment`")
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)


# ---- split_table ------------------------------------------------------------------------------------

def test_split_table_returns_both_tables():
    assert L.PROFILES == ("reconstruction", "released")
    assert L.split_table("reconstruction") is L.SPLITS
    assert L.split_table("released") is L.RELEASED_SPLITS
    assert S.split_table is L.split_table and S.RELEASED_SPLITS is L.RELEASED_SPLITS


@pytest.mark.parametrize("profile", ["paper", "Released", "", None, 3])
def test_split_table_rejects_an_unknown_profile_naming_the_allowed_ones(profile):
    with pytest.raises(ParameterError) as err:
        L.split_table(profile)
    message = str(err.value)
    assert repr(profile) in message and "'reconstruction'" in message and "'released'" in message


def test_the_released_table_has_the_same_splits_and_counts_and_valid_specs():
    assert list(L.RELEASED_SPLITS) == list(L.SPLITS)
    for name, spec in L.RELEASED_SPLITS.items():
        assert spec.name == name and spec.count == L.SPLITS[name].count
        assert spec.method == L.SPLITS[name].method
        assert spec.heuristic_neutral == L.SPLITS[name].heuristic_neutral
        spec.validate()
    assert set(L.RELEASED_PROFILE_NOTE) <= set(L.RELEASED_SPLITS)


# ---- the released table against the released files -----------------------------------------------------

@pytest.fixture(scope="module")
def compared():
    _require_released()
    released = {s: L.split_statistics(L.load_original_split(split=s)) for s in COMPARED}
    data = L.generate_dataset(counts=COUNTS, seed=0, specs=L.split_table("released"))
    return released, {s: L.split_statistics(data[s]) for s in COMPARED}


def _rel(ours: float, theirs: float) -> float:
    return ours / theirs - 1


@pytest.mark.parametrize("split", COMPARED)
def test_the_released_table_matches_the_released_files(compared, split):
    released, generated = compared
    r, g = released[split], generated[split]
    shown = f"{split}: released {r}, generated {g}"
    assert g["count"] == COUNTS[split] and g["positive"] == 0.5, shown
    # operators per formula: mean within 10 %, the same maximum
    assert abs(_rel(g["mean_ops"], r["mean_ops"])) <= MEAN_TOL, shown
    assert g["max_ops"] == r["max_ops"], shown
    # variables per pair
    if split == "big":  # see RELEASED_PROFILE_NOTE["big"]: high mean, maximum 12 (released 16)
        assert 0 <= _rel(g["mean_vars"], r["mean_vars"]) <= BIG_VARS_TOL, shown
        assert g["max_vars"] == L.RELEASED_SPLITS["big"].max_vars < r["max_vars"], shown
    else:
        assert abs(_rel(g["mean_vars"], r["mean_vars"])) <= MEAN_TOL, shown
        if split == "massive":  # 24 variables are rare in both (8 of 2,230 released pairs)
            assert r["max_vars"] - 2 <= g["max_vars"] <= r["max_vars"], shown
        else:
            assert g["max_vars"] == r["max_vars"], shown
    assert abs(_rel(g["mean_worlds"], r["mean_worlds"])) <= WORLDS_TOL, shown
    for h in ("acc_h1", "acc_h2", "acc_h3"):
        assert abs(g[h] - r[h]) <= HEURISTIC_TOL, shown


def test_the_released_table_leaves_the_heuristics_at_chance_where_the_files_do(compared):
    _, generated = compared
    assert all(generated["hard"][h] == 0.5 for h in ("acc_h1", "acc_h2", "acc_h3"))
    assert generated["massive"]["acc_h1"] == generated["massive"]["acc_h2"] == 0.5


# ---- the default output is unchanged -----------------------------------------------------------------

def test_the_reconstruction_table_is_the_default_and_unchanged():
    # SPLITS as the stored runs were generated with it
    assert {n: astuple(s) for n, s in L.SPLITS.items()} == {
        "train": ("train", 400, 1, 10, 4, 12, "quadruple", False, 8),
        "valid": ("valid", 200, 1, 10, 4, 12, "quadruple", False, 8),
        "easy": ("easy", 200, 1, 10, 4, 12, "quadruple", False, 8),
        "hard": ("hard", 200, 1, 10, 10, 30, "quadruple", True, 8),
        "big": ("big", 200, 7, 14, 13, 40, "quadruple", False, 8),
        "massive": ("massive", 200, 20, 24, 13, 40, "swap", False, 8),
    }
    # valid depends only on train before it (each split has its own random stream), so the later splits
    # are left out to keep this quick
    later = {"easy": 0, "hard": 0, "big": 0, "massive": 0}
    default = L.generate_dataset(counts=later, seed=0)
    chosen = L.generate_dataset(counts=later, seed=0, specs=L.split_table("reconstruction"))
    assert tuple(default["valid"][0]) == tuple(chosen["valid"][0]) == FIRST_VALID
    assert default["valid"] == chosen["valid"] and default["train"] == chosen["train"]
