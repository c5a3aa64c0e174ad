"""The primer chapter's claims (urnlib.chapters.primer.claims) and seed tables on hand-made runs: each claim
is decided on every seed by urnlib.rules, rests on as many seeds as it read, quotes the lecture and says which
epoch it reads, and a miss names its cause (noise when the seeds' spread covers the difference; untrained when
a model stayed at chance; scale when a language model was still improving at the cap; setting when another
Elman setting reproduces the claim; else open, with the experiment that would settle it)."""

from pathlib import Path

import numpy as np
import pytest

from urnlib.languages.elman import word_classes
from urnlib.chapters.primer import report
from urnlib.chapters.primer import claims as primer_claims
from urnlib.results import Run

V = 1000  # the hand-made language models' vocabulary (uniform perplexity V + 1)


def _run(name, params, final, history=()):
    """A hand-made run named as a plan names it, ``"<label> seed <s>"`` or ``"<label>"``, with those
    coordinates."""
    label, found, seed = name.rpartition(" seed ")
    coords = {"label": label, "seed": int(seed)} if found else {"label": name, "seed": None}
    return Run({"name": name, "coords": coords, "params": params, "final": final, "history": list(history)},
               Path("."))


def _lm(label, seed, test, *, mix=-10.0, converged=True, cap=10, kind="nnlm", vocabulary=V):
    """A language model's run: its test perplexity, its mixture's (``test + mix``), and a validation curve
    that flattened (best at epoch 4 of 6, patience 2) or was still falling at the cap."""
    spec = ({"kind": "nnlm", "n": 5, "h": 50, "m": 60, "direct": True} if kind == "nnlm"
            else {"kind": kind, "n": 10, "e": 5})
    curve = [test + 40, test + 20, test + 5, test, test + 1, test + 2] if converged else \
        [test + 10 * (cap - e) for e in range(1, cap + 1)]
    best = int(np.argmin(curve)) + 1
    final = {"train_ppl": test * 0.7, "valid_ppl": min(curve), "test_ppl": test,
             "mix_valid_ppl": min(curve) + mix, "mix_test_ppl": test + mix, "mix_alpha": 0.6,
             "best_epoch": best, "data": {"vocabulary": vocabulary}}
    name = f"{label} seed {seed}"
    return name, _run(name, {"model": spec, "train": {"epochs": cap, "patience": 2}}, final,
                      [{"epoch": e + 1, "valid_ppl": v} for e, v in enumerate(curve)])


def _lms(label, tests, **kw):
    return dict(_lm(label, seed, t, **kw) for seed, t in enumerate(tests))


def _kn(tests):
    return {f"Kneser-Ney {k}-gram": _run(f"Kneser-Ney {k}-gram", {}, {"order": k, "valid_ppl": t + 10,
                                                                          "test_ppl": t})
            for k, t in tests.items()}


KN = _kn({3: 330.0, 4: 329.0, 5: 328.0})


def _verdicts(claims):
    return {c.statement: (c.verdict, c.cause, c.seeds) for c in claims}


# ----------------------------------------------------------------------------------------------------- Brown
def test_brown_claims_reproduced_on_every_seed():
    got = _verdicts(primer_claims.brown_claims(_lms("nnlm 5 50 60 direct", [300.0, 302.0, 298.0]), KN))
    assert set(got.values()) == {("reproduced", None, 3), ("reproduced", None, 1)}  # Kneser-Ney: one run
    assert got["Kneser-Ney gains little from orders above 3"] == ("reproduced", None, 1)


def test_a_difference_within_the_seed_spread_is_inconclusive():
    noisy = _lms("nnlm 5 50 60 direct", [300.0, 360.0, 330.0])  # 330 ± 30 against 328
    first = primer_claims.brown_claims(noisy, KN)[0]
    assert first.verdict == "inconclusive" and first.cause == "noise" and first.seeds == 3
    assert first.seeds_needed is None or first.seeds_needed > 3
    assert first.quote == primer_claims.QUOTE_BENGIO and first.epoch.startswith("best validation")
    assert "330 ± 30" in first.ours and "328" in first.ours


@pytest.mark.parametrize("converged, verdict, cause", [(False, "not reproduced", "scale"),
                                                        (True, "not reproduced", "open")])
def test_a_brown_miss_is_scale_while_improving_at_the_cap_else_open(converged, verdict, cause):
    worse = _lms("nnlm 5 50 60 direct", [350.0, 351.0, 352.0], converged=converged)
    first = primer_claims.brown_claims(worse, KN)[0]
    assert (first.verdict, first.cause) == (verdict, cause) and first.settle
    assert report.improving_at_cap(next(iter(worse.values()))) is not converged


def test_the_best_neural_model_is_chosen_on_validation_and_compared_on_test():
    runs = {**_lms("nnlm 5 50 60 direct", [300.0, 301.0]), **_lms("srn 10 5", [100.0, 101.0], kind="srn")}
    first = primer_claims.brown_claims(runs, KN)[0]
    assert first.ours.startswith("nnlm 5 50 60 direct: 300 ± 1") and first.seeds == 2  # SRNs are no n-grams


def test_mixing_must_help_every_model_on_every_seed():
    runs = {**_lms("nnlm 5 50 60 direct", [300.0, 302.0, 298.0]),
            **_lms("nnlm 3 50 30 direct", [310.0, 311.0, 309.0], mix=+5.0)}  # mixing hurts the second
    mixing = primer_claims.brown_claims(runs, KN)[1]
    assert mixing.verdict == "partly reproduced" and mixing.cause == "open"
    assert "nnlm 3 50 30 direct: +1.6%" in mixing.ours


def test_kneser_ney_orders_and_the_chance_guard():
    steep = primer_claims.brown_claims({}, _kn({3: 330.0, 5: 300.0}))
    assert [(c.verdict, c.seeds) for c in steep] == [("not reproduced", 1)]
    # the lecture's 323 -> 321, printed rounded, allow at most 1 - 320.5 / 323.5 = 0.93%
    assert [c.verdict for c in primer_claims.brown_claims({}, _kn({3: 330.0, 5: 327.0}))] == ["reproduced"]
    steep = primer_claims.brown_claims({}, _kn({3: 330.0, 5: 326.5}))
    assert [(c.verdict, c.cause) for c in steep] == [("not reproduced", "open")] and steep[0].settle
    near_uniform = _lms("nnlm 5 50 60 direct", [995.0, 996.0, 997.0], vocabulary=999)  # uniform: 1000
    first = primer_claims.brown_claims(near_uniform, _kn({3: 1200.0, 5: 1200.0}))[0]
    assert first.verdict == "inconclusive" and first.cause == "untrained"  # a network that learned nothing
    assert "did not train" in first.ours and "Kneser-Ney 5-gram" not in first.ours


def test_brown_table_and_convergence_over_seeds():
    runs = {**_lms("nnlm 5 50 60 direct", [300.0, 302.0, 298.0]),
            **_lms("srn 10 5", [400.0, 410.0], kind="srn", converged=False)}
    table = report.brown_table(runs, KN)
    assert list(table[("", "model")]) == ["nnlm 5 50 60 direct"] * 2 + ["srn 10 5"] * 2 + [
        f"Kneser-Ney {k}-gram (interpolated)" for k in (3, 4, 5)]
    assert table[("test", "ours")].tolist()[:4] == ["300 ± 2", "290 ± 2", "405 ± 7", "395 ± 7"]
    assert table[("test", "lecture")].tolist()[:2] == [268, 257]  # MLP1, MLP2
    assert table[("", "seeds")].tolist()[0] == "3 (0, 1, 2)"
    assert table[("", "best epoch")].tolist()[2] == "10 ± 0"
    text = report.brown_convergence(runs)
    assert "stops after 2 epochs without a lower validation perplexity, at the latest after 10" in text
    assert "2 of 5 runs were still improving" in text and "srn 10 5 seed 1" in text
    assert "still improving" not in report.brown_convergence(_lms("nnlm 5 50 60 direct", [300.0, 302.0]))


# ----------------------------------------------------------------------------------------------------- Elman
def _states(noun_verb=True, animacy=True, jitter=0.0):
    """Mean hidden states in which nouns and verbs (and animate and inanimate nouns) are far apart, or not."""
    rng = np.random.default_rng(0)
    out = {}
    for word, classes in word_classes().items():
        noun = all(c.startswith("NOUN") for c in classes)
        animate = any(c in report.ANIMATE for c in classes)
        x = [10.0 * noun if noun_verb else rng.normal(), 3.0 * animate if animacy else rng.normal(), 0.0]
        out[word] = list(np.array(x) + jitter * rng.normal(size=3))
    return out


def _elman(setting, loss, states_per_seed):
    return {f"{setting} seed {s}": _run(f"{setting} seed {s}", {}, {"test_loss": loss, "train_loss": loss,
                                                                     "mean_states": st,
                                                                     "grammatical_prediction": 0.9},
                                         [{"epoch": 1, "test_loss": loss}])
            for s, st in enumerate(states_per_seed)}


def test_elman_claims_on_every_seed_of_the_main_setting():
    good, bad = _states(), _states(noun_verb=False, animacy=False)
    runs = {**_elman("A", 1.0, [good, good, good]), **_elman("B", 2.0, [bad, bad, bad])}
    assert report.main_setting(runs) == "A" and report.main_run(runs) == "A seed 0"
    got = [(c.verdict, c.seeds) for c in primer_claims.elman_claims(runs)]
    assert got == [("reproduced", 3), ("reproduced", 3)]
    mixed = {**_elman("A", 1.0, [good, bad, good]), **_elman("B", 2.0, [bad, bad, bad])}
    got = [(c.verdict, c.cause) for c in primer_claims.elman_claims(mixed)]
    assert got == [("inconclusive", "noise")] * 2
    missed = {**_elman("A", 1.0, [bad, bad]), **_elman("B", 2.0, [good, good])}  # another setting has it
    claims = primer_claims.elman_claims(missed)
    assert [(c.verdict, c.cause) for c in claims] == [("not reproduced", "setting")] * 2
    assert "exact on every seed of B" in claims[0].ours
    table = report.elman_sensitivity(missed)
    assert table["seeds with nouns | verbs exact"].tolist() == [0, 2]


# ------------------------------------------------------------------------------------------------- a^n b^n
def _anbn(lstm, gru, srn):
    out = {}
    for kind, values in (("lstm", lstm), ("gru", gru), ("srn", srn)):
        for seed, v in enumerate(values):
            out[f"{kind} 10 seed {seed}"] = _run(f"{kind} 10 seed {seed}",
                                                 {"model": {"kind": kind, "n": 10}, "seed": seed},
                                                 {"largest_accepted": v, "n_params": 1})
    return out


def test_anbn_claims_on_seeds():
    counting = _anbn([60, 70, 80], [20, 20, 19], [1, 3, 5])
    claims = primer_claims.anbn_claims(counting, 20)
    # LSTM 70 ± 10 above 20; no GRU or SRN seed beyond 20; the LSTM best
    assert [(c.verdict, c.seeds) for c in claims] == [("reproduced", 3)] * 3
    assert all(c.quote and c.epoch and c.direction for c in claims)
    got = [c.verdict for c in primer_claims.anbn_claims(_anbn([23, 22, 24], [40, 50, 45], [1, 3, 5]), 20)]
    assert got == ["reproduced", "partly reproduced", "partly reproduced"]  # 23 ± 1 is beyond 20 on 3 seeds
    # the GRU at 21 ± 1: one step beyond N on two seeds, within what three seeds decide
    near = primer_claims.anbn_claims(_anbn([60, 70, 80], [20, 21, 22], [1, 3, 5]), 20)[1]
    assert (near.verdict, near.cause) == ("inconclusive", "noise") and near.seeds_needed
    # one SRN seed accepts nothing: that run did not train, however the other two did (the per-seed guard)
    one_idle = primer_claims.anbn_claims(_anbn([60, 70, 80], [20, 20, 19], [0, 3, 5]), 20)
    assert [(c.verdict, c.cause) for c in one_idle[1:]] == [("inconclusive", "untrained")] * 2
    vacuous = primer_claims.anbn_claims(_anbn([60, 70, 80], [20, 21, 22], [0, 0, 0]), 20)  # SRN: nothing
    assert [(c.verdict, c.cause) for c in vacuous[1:]] == [("inconclusive", "untrained")] * 2
    assert "did not train (none accepted): SRN" in vacuous[1].ours
    noisy = primer_claims.anbn_claims(_anbn([60, 5, 80], [20, 20, 19], [1, 3, 5]), 20)  # LSTM 48 ± 40
    assert [(c.verdict, c.cause) for c in noisy] == [("inconclusive", "noise"), ("reproduced", None),
                                                     ("inconclusive", "noise")]
    table = report.anbn_table(_anbn([60, 70, 80], [20, 21, 22], [1, 3, 5]), 20)
    assert table.loc[table["model"] == "lstm 10", "largest n accepted"].item() == "70.0 ± 10.0"
    assert table.loc[table["model"] == "gru 10", "seeds accepting n <= N"].item() == "3 of 3"
    assert table.loc[table["model"] == "srn 10", "seeds accepting n <= N"].item() == "0 of 3"
    assert "**lstm 10**: 70.0 ± 10.0 (seeds: 60, 70, 80)" in report.anbn_summary(
        _anbn([60, 70, 80], [20, 21, 22], [1, 3, 5]), 20)


def test_an_empty_group_makes_no_claims():
    assert primer_claims.claims({}, {}, {}, {}, 20) == []
