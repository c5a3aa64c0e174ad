"""The TPRU chapter's claims (urnlib.chapters.tpru.claims) and report (urnlib.chapters.tpru.report) on
hand-made runs with several seeds: each rule gives the verdict it states and the cause of a miss, a model at
chance is no evidence (inconclusive, cause untrained, named in ours), a difference within the seeds' spread is
inconclusive, tolerances come from the paper's own numbers, every claim quotes the paper, the tables hold
numbers over seeds at the best validation epoch, and the figures draw bands (or each seed's curve, where seeds
stopped at different epochs)."""

from pathlib import Path
from types import SimpleNamespace

import matplotlib
import matplotlib.pyplot as plt
import pytest

from urnlib import rules
from urnlib.claims import MISSES
from urnlib.chapters.tpru import checks as tpru_checks
from urnlib.chapters.tpru import report
from urnlib.chapters.tpru import report_checks as checks_report
from urnlib.chapters.tpru import claims_rules as claim_rules
from urnlib.chapters.tpru import claims as tpru_claims
from urnlib.chapters.tpru import report_released as released_report
from urnlib.plots.style import COLUMN
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat

from tests.helpers import paper_text

matplotlib.use("Agg")

SEEDS = 3
STEADY = (-0.003, 0.0, 0.003)  #: per-seed offsets of a measure: a small spread
NOISY = (-0.04, 0.0, 0.04)  #: a large one


def label_of(model):
    """As urnlib.chapters.tpru.entailment.model_label."""
    label = f"{model['kind'].upper()} {model['d']}"
    if model["kind"] == "tpru":
        label += f" N={model['n_roles']}" + (f" s={model['slices']}" if model["slices"] > 1 else "")
    return label


def ent_seeds(kind, n=None, s=None, acc=None, loss=(0.69, 0.69, 0.69), tacc=(0.5, 0.5, 0.5),
              vacc=(0.5, 0.5, 0.5), jitter=STEADY, count=1000):
    """``(label, Seeds)`` of one encoder: ``acc`` the final accuracy by test split (default 0.5), curves per
    epoch; seed i adds ``jitter[i]`` to every accuracy and subtracts it from every loss."""
    model = {"kind": kind, "d": 64, "n_roles": n, "slices": s if kind == "tpru" else None}
    runs = []
    for seed in range(SEEDS):
        j = jitter[seed]
        history = [{"epoch": e + 1, "train_loss": loss[e] - j, "train_acc": tacc[e] + j,
                    "valid_acc": vacc[e] + j} for e in range(len(loss))]
        final = {"accuracy": {sp: (acc or {}).get(sp, 0.5) + j for sp in report.TEST_SPLITS},
                 "data": {**{sp: {"count": count, "positive": 0.5, "mean_vars": 3.0, "mean_worlds": 10.0,
                                  "mean_ops": 5.0, "acc_h1": 0.5,
                                  "acc_h2": 0.5, "acc_h3": 0.5} for sp in report.SPLITS},
                          "train": {"count": 16000, "positive": 0.5}},
                 "encoder_params": 49_000}
        final["accuracy"]["valid"] = max(r["valid_acc"] for r in history)
        params = {"model": model, "task": {"train": 16000},
                  "train": {"epochs": 30, "batch_size": 64, "lr": 0.001, "seed": seed, "clip": 1.0,
                            "monitor": "valid_acc", "minimize": False, "keep_best": True, "patience": 5},
                  "architecture": {"layers": 2, "embedding_size": 64, "hidden": 64}}
        runs.append(Run({"name": f"{label_of(model)} seed {seed}", "params": params, "history": history,
                         "final": final}, Path(".")))
    return label_of(model), Seeds(label_of(model), runs, list(range(SEEDS)))


def ent_runs_of(*specs):
    return dict(ent_seeds(*spec[:3], **spec[3]) for spec in specs)


def released_of(runs, count=1000, **shift):
    """The released-file scores of hand-made runs (as urnlib.chapters.tpru.released.released_results gives
    them): each run's final accuracy on every split (``shift[split]`` added) as correct of ``count`` pairs."""
    def entry(run):
        acc = run.final["accuracy"]
        return {s: {"correct": round(count * (acc[s] + shift.get(s, 0.0))), "total": count}
                for s in report.SPLITS}

    return SimpleNamespace(accuracy={label: [entry(r) for r in seeds] for label, seeds in runs.items()})


def decide(ent, lm, grad, t1, released=None):
    """The chapter's claims, those on Table 2 decided on ``released`` (default: the runs' final
    accuracies)."""
    return tpru_claims.claims(ent, lm, grad, t1, released_of(ent) if released is None else released)


def verdicts(claims):
    return {c.statement: (c.verdict, c.cause, c.seeds) for c in claims}


#: a chapter where every model left chance; the TPRU with the most roles (then slices) is N=64 s=8
GOOD = [
    ("gru", None, None, {"acc": {"hard": 0.70, "big": 0.62}, "vacc": (0.6, 0.65, 0.70)}),
    ("lstm", None, None, {"acc": dict.fromkeys(report.TEST_SPLITS, 0.69), "vacc": (0.6, 0.7, 0.75),
                          "jitter": (0.003, 0.0, -0.003)}),
    ("tpru", 4, 1, {"loss": (0.69, 0.68, 0.67), "tacc": (0.55, 0.6, 0.65), "vacc": (0.6, 0.62, 0.64)}),
    ("tpru", 8, 1, {"loss": (0.69, 0.67, 0.65), "tacc": (0.55, 0.6, 0.66), "vacc": (0.6, 0.66, 0.69)}),
    ("tpru", 64, 1, {"acc": {"hard": 0.72, "big": 0.60}, "loss": (0.69, 0.66, 0.62),
                     "tacc": (0.55, 0.6, 0.62), "vacc": (0.6, 0.7, 0.72)}),
    ("tpru", 4, 8, {"loss": (0.68, 0.66, 0.64), "tacc": (0.55, 0.6, 0.75), "vacc": (0.6, 0.6, 0.62)}),
    ("tpru", 64, 8, {"acc": {"easy": 0.7, "hard": 0.72, "big": 0.60, "massive": 0.7, "exam": 0.7},
                     "loss": (0.69, 0.66, 0.62), "tacc": (0.55, 0.6, 0.63), "vacc": (0.6, 0.6, 0.6)}),
]
GRU_BEATEN = "the TPRU is more accurate than the GRU on the hard and big test splits"
ROLES_BETTER = "more role vectors give better results"
ROLES_FASTER = "more role vectors give faster convergence"
SLICES = ("several slices (filler vectors) converge faster and fit the training set better than one, when "
          "roles are few")


def test_entailment_claims_follow_their_rules():
    runs = ent_runs_of(*GOOD)
    assert report.main_tpru(runs) == "TPRU 64 N=64 s=8"
    assert report.role_series(runs) == {4: "TPRU 64 N=4", 8: "TPRU 64 N=8", 64: "TPRU 64 N=64"}
    assert report.slice_pairs(runs) == {4: ("TPRU 64 N=4", "TPRU 64 N=4 s=8"),
                                        64: ("TPRU 64 N=64", "TPRU 64 N=64 s=8")}
    v = verdicts(decide(runs, {}, [], []))
    assert v[GRU_BEATEN] == ("partly reproduced", "open", 3)  # hard 0.72 vs 0.70; big 0.60 vs 0.62
    # 68.4 vs 69.0: behind by 0.6 points, well within the 2.1 Table 2 calls comparable
    assert v["the TPRU is comparable to the LSTM"] == ("reproduced", None, 3)
    assert v[ROLES_BETTER] == ("reproduced", None, 3)  # 0.64, 0.69, 0.72 at the best epochs
    assert v[ROLES_FASTER] == ("reproduced", None, 3)
    assert v["a TPRU with only 8 roles matches the GRU"] == ("reproduced", None, 3)  # 0.69 vs 0.70: 1 point
    assert v[SLICES] == ("reproduced", None, 3)
    assert v["the gain from slices shrinks as roles grow"] == ("reproduced", None, 3)  # +0.10 at N=4, +0.01
    # decided on the measured accuracies against the printed ones (no verdict typed in): below them on every
    # seed, a miss whose cause no experiment has settled yet
    assert v["the accuracies themselves (e.g. LSTM valid 88.6%)"] == ("not reproduced", "open", 3)
    assert v["the TPRU outperforms the LSTM on MNLI and QNLI"] == ("not run here", "data", None)


def test_table2_claims_are_decided_on_the_released_files_not_the_generated_splits():
    """The same runs, the generated splits unchanged: the verdicts on Table 2 follow the released files'
    scores (here the TPRU ahead of the GRU on hard and big, and 5 points behind the LSTM on the mean of the
    five files), while the claims on the training curves and the generated validation pairs do not move."""
    runs = ent_runs_of(*GOOD)
    top, gru, lstm = "TPRU 64 N=64 s=8", "GRU 64", "LSTM 64"
    released = released_of(runs)
    for e in released.accuracy[top]:  # generated: easy 70, hard 72, big 60, massive 70, exam 70 (%)
        for split, correct in {"easy": 600, "hard": 800, "big": 800, "massive": 500, "exam": 500}.items():
            e[split]["correct"] = correct
    generated = verdicts(decide(runs, {}, [], []))
    on_released = {c.statement: c for c in decide(runs, {}, [], [], released)}
    v = verdicts(on_released.values())
    assert generated[GRU_BEATEN][0] == "partly reproduced" and v[GRU_BEATEN] == ("reproduced", None, 3)
    assert "released files: hard: 80 ± 0 (3 seeds) vs 70.0 ± 0.3 (3 seeds)" in \
        on_released[GRU_BEATEN].ours
    # 64.0 against the LSTM's 69.0: 5 points behind, more than the 2.1 Table 2 calls comparable
    assert generated["the TPRU is comparable to the LSTM"][0] == "reproduced"
    assert v["the TPRU is comparable to the LSTM"] == ("not reproduced", "open", 3)
    assert "released test files" in on_released["the TPRU is comparable to the LSTM"].ours
    valid = on_released["the accuracies themselves (e.g. LSTM valid 88.6%)"]
    assert valid.ours.startswith("released validate.txt: ") and f"{lstm} " in valid.ours and gru in valid.ours
    assert f"{lstm} 13.6 points below the paper's LSTM" in valid.direction  # 75.0 against Table 2's 88.6
    assert {k: x for k, x in v.items() if "Table 2" not in on_released[k].source} == \
        {k: x for k, x in generated.items() if "Table 2" not in on_released[k].source}
    with pytest.raises(KeyError):  # a model without released scores is an error, not a silent fallback
        decide(runs, {}, [], [], SimpleNamespace(accuracy={gru: released.accuracy[gru]}))


def test_a_model_at_chance_is_no_evidence_and_a_trained_model_near_chance_on_a_test_split_is():
    """The GRU and the N=8 TPRU trained (validation accuracy off chance), the N=4 TPRU did not: claims resting
    on N=4 are inconclusive with cause untrained, naming it and its seeds; the TPRU at 50% on hard and big
    after training is a result against the paper (the old guard called it "not testable")."""
    runs = ent_runs_of(("gru", None, None, {"acc": {"hard": 0.8, "big": 0.8}, "vacc": (0.6, 0.7, 0.8)}),
                       ("tpru", 4, 1, {"vacc": (0.5, 0.5, 0.51), "tacc": (0.5, 0.5, 0.51)}),
                       ("tpru", 8, 1, {"vacc": (0.5, 0.5, 0.7), "loss": (0.69, 0.6, 0.5),
                                       "tacc": (0.5, 0.6, 0.8)}))
    claims = {c.statement: c for c in decide(runs, {}, [], [])}
    v = verdicts(claims.values())
    assert v[GRU_BEATEN] == ("not reproduced", "open", 3)  # 50% vs 80% on both splits, both trained
    assert "100,000 generated training pairs" in claims[GRU_BEATEN].settle
    assert "CPU hours" in claims[GRU_BEATEN].settle
    assert claims[GRU_BEATEN].direction == \
        "released hard: TPRU below GRU by 0.3; released big: TPRU below GRU by 0.3"
    for s in (ROLES_BETTER, ROLES_FASTER):
        assert v[s] == ("inconclusive", "untrained", 3)
        assert claims[s].ours.startswith("did not train (TPRU 64 N=4 (3 of 3 seeds at chance: seeds 0, 1, 2")
        assert "TPRU 64 N=8" not in claims[s].ours.split("did not train")[1]
        assert "scalar biases b_b = b_x" in claims[s].settle and "CPU hours" in claims[s].settle
    assert claims[ROLES_BETTER].direction == "best validation accuracy at 8 above at 4 by 0.19"  # still shown
    # what the ablation found decides the settle text: a setting every seed left chance in ...
    _, left = ent_seeds("tpru", 4, 1, vacc=(0.5, 0.6, 0.7), loss=(0.69, 0.6, 0.5))
    _, stuck = ent_seeds("tpru", 4, 1)
    fixed = {"TPRU 64 N=4": {"b = 1 (original)": runs["TPRU 64 N=4"], "b = 0": left}}
    settle = {c.statement: c for c in tpru_claims.claims(runs, {}, [], [], released_of(runs), fixed)}
    assert settle[ROLES_BETTER].settle.startswith("retrain TPRU 64 N=4 in the ablation's setting 'b = 0'")
    # ... or none, and the next experiments
    none = {"TPRU 64 N=4": {"b = 1 (original)": runs["TPRU 64 N=4"], "b = 0": stuck}}
    settle = {c.statement: c for c in tpru_claims.claims(runs, {}, [], [], released_of(runs), none)}
    text = settle[ROLES_BETTER].settle
    assert "found no setting in which every seed left chance (TPRU 64 N=4: b = 1 (original) 0 of 3 seeds, " \
           "b = 0 0 of 3 seeds)" in text and "learning-rate ablation" in text and "amsgrad" in text
    assert v["a TPRU with only 8 roles matches the GRU"] == ("not reproduced", "open", 3)  # 0.70 vs 0.80
    assert tpru_claims.untrained(runs, ["GRU 64", "TPRU 64 N=8"]) == []
    both = ent_runs_of(("gru", None, None, {}), ("tpru", 4, 1, {}), ("tpru", 16, 1, {}))  # all at chance
    claims = {c.statement: c for c in decide(both, {}, [], [])}
    assert verdicts(claims.values())[GRU_BEATEN] == ("inconclusive", "untrained", 3)
    assert "GRU 64 (3 of 3" in claims[GRU_BEATEN].ours and "TPRU 64 N=16 (3 of 3" in claims[GRU_BEATEN].ours
    assert "the TPRU is comparable to the LSTM" not in claims  # no LSTM trained


def test_the_chance_bar_is_the_best_surface_baseline_where_that_is_higher():
    """A model at 58% on a split where a linear classifier on lengths and variables gets 60% has learnt
    nothing the surface does not give: the guard's bar is the higher of 50% + 2 SE and the split's best
    baseline."""
    label, seeds = ent_seeds("gru", acc={"hard": 0.58})
    assert report.chance_bar(seeds, "hard") == pytest.approx(0.5 + 2 * (0.25 / 1000) ** 0.5)
    assert report.chance_bar(seeds, None) == pytest.approx(0.5 + 2 * (0.25 / 2000) ** 0.5)  # the probe
    seeds[0].final["data"]["hard"]["acc_surface"] = 0.6  # the bar reads the first seed's data statistics
    assert report.chance_bar(seeds, "hard") == 0.6 and report.chance_bar(seeds, "big") < 0.6
    stat = report.split_accuracy(seeds, "hard")
    assert not report.off_chance({label: stat}, {label: seeds}, "hard")
    seeds[0].final["data"]["hard"]["acc_surface"] = 0.5
    assert report.off_chance({label: stat}, {label: seeds}, "hard")


def test_noise_makes_a_claim_inconclusive_and_clear_failures_fail():
    trained = {"vacc": (0.6, 0.7, 0.8), "jitter": NOISY}
    noisy = ent_runs_of(("gru", None, None, {"acc": {"hard": 0.70, "big": 0.70}, **trained}),
                        ("tpru", 64, 1, {"acc": {"hard": 0.72, "big": 0.73}, **trained}))
    claims = {c.statement: c for c in decide(noisy, {}, [], [])}
    assert verdicts(claims.values())[GRU_BEATEN] == ("inconclusive", "noise", 3)  # +2, +3 points, sd 4 each
    worse = ent_runs_of(("gru", None, None, {"acc": {"hard": 0.8, "big": 0.8}, "vacc": (0.6, 0.7, 0.8)}),
                        ("tpru", 4, 1, {"loss": (0.69, 0.6, 0.5), "tacc": (0.5, 0.7, 0.8),
                                        "vacc": (0.6, 0.7, 0.8)}),
                        ("tpru", 16, 1, {"loss": (0.69, 0.69, 0.65), "tacc": (0.5, 0.6, 0.6),
                                         "vacc": (0.6, 0.6, 0.7)}),
                        ("tpru", 32, 1, {"acc": {"hard": 0.6, "big": 0.6}, "loss": (0.69, 0.68, 0.66),
                                         "tacc": (0.5, 0.6, 0.6), "vacc": (0.6, 0.7, 0.75)}))
    v = verdicts(decide(worse, {}, [], []))
    assert v[GRU_BEATEN] == ("not reproduced", "open", 3)
    assert v[ROLES_BETTER][0] == "not reproduced"  # 0.8, 0.7, 0.75: the largest N below the smallest
    assert v[ROLES_FASTER][0] == "not reproduced"


def test_a_trend_is_decided_at_every_step_of_n_as_every_chapter_decides_a_trend():
    # 4 -> 8 rises, 8 -> 64 falls back: a reversal at a step fails the trend, which a test of the ends
    # alone (64 against 4, both about 0.6) would not see
    runs = ent_runs_of(("tpru", 4, 1, {"vacc": (0.6, 0.6, 0.60)}),
                       ("tpru", 8, 1, {"vacc": (0.75, 0.76, 0.77)}),
                       ("tpru", 64, 1, {"vacc": (0.6, 0.61, 0.62)}))
    claim = {c.statement: c for c in decide(runs, {}, [], [])}[ROLES_BETTER]
    assert (claim.verdict, claim.kind) == ("not reproduced", "trend")
    # every step up, significantly: holds
    rising = ent_runs_of(("tpru", 4, 1, {"vacc": (0.6, 0.61, 0.62)}),
                         ("tpru", 8, 1, {"vacc": (0.7, 0.71, 0.72)}),
                         ("tpru", 64, 1, {"vacc": (0.8, 0.81, 0.82)}))
    assert {c.statement: c for c in decide(rising, {}, [], [])}[ROLES_BETTER].verdict == "reproduced"


def lm_seeds(label, losses, valid, test_ppl, pmi=None, pmi0=None, jitter=(0.0, 1.0, 2.0), vocabulary=5000):
    runs = []
    for seed, j in enumerate(jitter):
        final = {"valid_ppl": min(valid) + j, "test_ppl": test_ppl + j, "best_epoch": len(valid),
                 "n_params": 10, "recurrent_params": 5,
                 "data": {"train_tokens": 1, "valid_tokens": 1, "test_tokens": 1, "vocabulary": vocabulary,
                          "unk_share_train": 0.1}}
        if pmi is not None:
            final["pmi"], final["pmi_untrained"] = pmi, pmi0
        history = [{"epoch": e + 1, "train_loss": x + j / 100, "valid_ppl": v + j}
                   for e, (x, v) in enumerate(zip(losses, valid))]
        params = {"kind": label.split()[0].lower(), "setup": {"layers": 2, "d": 8, "n_roles": 4},
                  "train": {"epochs": 20, "batch_size": 4, "lr": 0.1, "patience": 3, "seed": seed}}
        record = {"name": f"{label} seed {seed}", "params": params, "history": history, "final": final}
        runs.append(Run(record, Path(".")))
    return Seeds(label, runs, list(range(len(jitter))))


def pmi_of(gaps, mi):
    tags = {f"T{i}": {"count": 100, "top": [{"role": 0, "pmi": 3.0, "joint": 50, "role_count": 60},
                                          {"role": 1, "pmi": 3.0 - g, "joint": 10, "role_count": 60}]}
            for i, g in enumerate(gaps)}
    tags["LONE"] = {"count": 5, "top": [{"role": 2, "pmi": 1.0, "joint": 5, "role_count": 5}]}
    return {"tokens": 1000, "roles_used": 3, "mutual_information": mi, "tags": tags}


SIMILAR = "the TPRU's perplexity is similar to the LSTM's"
DEDICATED = "some POS tags have a role dedicated to them: the top two PMI values differ by at least 0.5"


def test_language_model_claims():
    runs = {"TPRU LM 8 N=4": lm_seeds("TPRU LM 8 N=4", [5.0, 4.0], [300, 250], 260.0,
                                   pmi_of([0.6] * 7 + [0.1], 0.5), pmi_of([0.1], 0.2)),
            "LSTM LM 8": lm_seeds("LSTM LM 8", [5.5, 4.1], [320, 240], 250.0)}
    v = verdicts(decide({}, runs, [], []))
    # 261 vs 251 (+4%, every seed): beyond the 2.2% Table 4 calls similar (the old 10% tolerance passed it)
    assert v[SIMILAR] == ("not reproduced", "open", 3)
    assert v["the TPRU converges faster on the training set than the LSTM"] == ("reproduced", None, 3)
    assert v[DEDICATED] == ("reproduced", None, 3)  # 7 of 8 ranked tags on every seed
    assert v["the roles the TPRU learns are informative about POS tags"] == ("reproduced", None, 3)
    assert v["the perplexities themselves"] == ("not run here", "data", 3)
    by = {c.statement: c for c in decide({}, runs, [], [])}
    assert by[SIMILAR].evidence.startswith("the training, by validation perplexity: TPRU LM 8 N=4: 2 ± 0 "
                                           "(3 seeds) epochs trained")
    assert by[SIMILAR].evidence.endswith("more epochs at this size are not the experiment left, a larger "
                                         "size is.")
    for run in runs["LSTM LM 8"]:
        run.params["train"]["epochs"] = 2  # its best epoch is its last, at the cap: still improving
    assert {c.statement: c for c in decide({}, runs, [], [])}[SIMILAR].evidence.endswith(
        "Some runs were still improving at their cap: more epochs come first.")
    for run in runs["LSTM LM 8"]:
        run.params["train"]["epochs"] = 20
    near = {**runs, "TPRU LM 8 N=4": lm_seeds("TPRU LM 8 N=4", [5.0, 4.0], [300, 250], 252.5)}
    assert verdicts(decide({}, near, [], []))[SIMILAR] == ("reproduced", None, 3)  # +1%
    idle = {**runs, "LSTM LM 8": lm_seeds("LSTM LM 8", [5.5, 4.1], [320, 240], 250.0, vocabulary=200)}
    claims = {c.statement: c for c in decide({}, idle, [], [])}
    assert verdicts(claims.values())[SIMILAR] == ("inconclusive", "untrained", 3)  # 251 > a uniform guess
    assert claims[SIMILAR].ours.startswith("did not train (LSTM LM 8 (test perplexity 251.0")
    t5 = report.table5(runs)
    assert len(t5) == 9 and (t5["gap >= 0.5"] == "yes").sum() == 7 and (t5["gap >= 0.5"] == "no").sum() == 1
    assert t5.iloc[0]["gap"] == "0.60" and t5.iloc[0]["tokens"] == "100"
    runs["TPRU LM 8 N=4"] = lm_seeds("TPRU LM 8 N=4", [6.0, 5.0], [400, 400], 400.0, pmi_of([0.1], 0.1),
                                  pmi_of([0.1], 0.2))
    v = verdicts(decide({}, runs, [], []))
    assert v[SIMILAR] == ("not reproduced", "open", 3)
    assert v["the TPRU converges faster on the training set than the LSTM"] == ("not reproduced", "open", 3)
    assert v[DEDICATED] == ("not reproduced", "open", 3)
    assert v["the roles the TPRU learns are informative about POS tags"] == ("not reproduced", "open", 3)
    # the training curves cross: the mean gap over the epochs is within the seeds' spread
    runs["TPRU LM 8 N=4"] = lm_seeds("TPRU LM 8 N=4", [5.0, 4.2], [300, 250], 260.0, pmi_of([0.6], 0.5),
                                  pmi_of([0.1], 0.2), jitter=(0.0, 20.0, 40.0))
    v = verdicts(decide({}, runs, [], []))
    faster = v["the TPRU converges faster on the training set than the LSTM"]
    assert faster == ("inconclusive", "noise", 3)


def test_report_tables_and_figures_over_seeds():
    runs = ent_runs_of(*GOOD)
    t2 = report.table2(runs)
    assert list(t2["source"]) == ["paper"] * 3 + ["ours"] * 7
    assert t2.iloc[3]["hard"] == "70.0 ± 0.3 (3 seeds)" and t2.iloc[3]["best epoch"] == "3 ± 0 (3 seeds)"
    assert t2.iloc[3]["valid"] == "70.0 ± 0.3 (3 seeds)"  # the best epoch's validation accuracy
    stats = next(iter(runs.values()))[0].final["data"]
    data = released_report.data_comparison(runs, SimpleNamespace(statistics={s: {**stats[s], "count": 5000}
                                                                            for s in report.SPLITS}))
    assert list(data["source"]) == ["released", "generated"] * 6  # each split: the released file, then ours
    assert data.iloc[8]["mean 2^#vars (paper)"] == "848,570" and data.iloc[9]["mean 2^#vars (paper)"] == ""
    assert data.iloc[0]["mean 2^#vars (paper)"] == "75.7"
    assert list(data.iloc[:2]["pairs"]) == ["5,000", "1,000"]
    lines = report.preset_lines(runs, {})
    assert "16,000 generated training pairs" in lines and "at most 30 epochs, stopped after 5" in lines
    assert "3 initialisation seed(s) per model (the paper: 3)" in lines and "at most 64 roles" in lines
    fig1, fig2 = report.fig1(runs), report.fig2(runs)
    a, b = fig1.axes
    assert len(a.collections) == 5 and len(b.collections) == 5  # a band per model: TPRU N=4, 8, 64, GRU, LSTM
    legend = [t.get_text() for t in fig1.legends[0].get_texts()]
    assert legend == ["TPRU N=4", "TPRU N=8", "TPRU N=64", "GRU 64", "LSTM 64"]
    assert list(b.lines[0].get_ydata()) == pytest.approx([60, 62, 64])  # validation accuracy in %, the mean
    low = b.collections[0].get_paths()[0].vertices[:, 1]
    assert min(low) == pytest.approx(60 - 0.3)  # the band: mean - sd
    b.figure.canvas.draw()
    assert all(float(t).is_integer() for t in b.get_xticks())  # whole epochs on the axis
    legend = [t.get_text() for t in fig2.legends[0].get_texts()]
    assert legend == ["4", "4 M (8 slices)", "64", "64 M (8 slices)"]
    handles = fig2.legends[0].legend_handles
    dashes = [h._unscaled_dash_pattern for h in handles]  # (offset, on-off) each
    assert dashes[1] == dashes[3] != dashes[0] == dashes[2]  # slices told apart by line, not by shade
    lm = {"LSTM LM 8": lm_seeds("LSTM LM 8", [5.5, 3.9], [320.123, 240.456], 250.0)}
    t4 = report.table4(lm)
    assert t4.iloc[0]["valid perplexity"] == "241.5 ± 1.0 (3 seeds)"
    assert t4.iloc[0]["paper: WikiText-2"] == "76.0"
    lines = report.lm_curves(lm).axes[1].lines
    assert list(lines[0].get_ydata()) == pytest.approx([321.123, 241.456])
    assert "LSTM LM 8: 2 ± 0 (3 seeds) epochs trained" in report.lm_line(lm)
    plt.close("all")


def test_figures_draw_each_seed_where_seeds_stop_at_different_epochs():
    """A seed stuck at chance stops early: the figure shows each seed's curve and the mean only over the
    epochs every seed reached, so the mean does not jump where the short seed ends; accuracies stay in
    [0, 100], the figure is as wide as the book's column."""
    runs = ent_runs_of(*GOOD)
    label = "TPRU 64 N=8"
    stuck = runs[label][0]  # the first seed stays at chance and stops after 2 epochs; the others train 3
    stuck.record["history"] = [{"epoch": e + 1, "train_loss": 0.69, "train_acc": 0.5, "valid_acc": 0.5}
                               for e in range(2)]
    fig = report.fig1(runs)
    assert fig.get_size_inches()[0] == pytest.approx(COLUMN)
    acc = fig.axes[1]
    seeds = [line for line in acc.lines if line.get_label() == "_nolegend_"]
    assert sorted(len(line.get_xdata()) for line in seeds) == [2, 3, 3]  # each seed to its own last epoch
    mean = next(line for line in acc.lines if line.get_label() == "TPRU N=8")
    assert list(mean.get_xdata()) == [1, 2]  # the epochs every seed reached, no jump at the third
    assert list(mean.get_ydata()) == pytest.approx([(50 + 60 + 60.3) / 3, (50 + 66 + 66.3) / 3])
    assert len(acc.collections) == 4  # the other models keep their bands (their seeds ran the same epochs)
    high = max(c.get_paths()[0].vertices[:, 1].max() for c in acc.collections)
    assert high <= 100
    plt.close("all")


def test_accuracy_bands_stay_below_100_and_perplexity_bands_above_1():
    runs = ent_runs_of(("tpru", 4, 1, {"tacc": (0.9, 0.99, 1.0), "vacc": (0.9, 0.99, 1.0),
                                       "jitter": (-0.04, 0.0, 0.04)}),
                       ("tpru", 4, 8, {"tacc": (0.9, 0.99, 1.0), "vacc": (0.9, 0.99, 1.0)}))
    for fig in (report.fig1(runs), report.fig2(runs)):
        band = fig.axes[1].collections[0].get_paths()[0].vertices[:, 1]
        assert band.max() == pytest.approx(100)  # mean + sd passes 100 at the last epoch: cut there
    lm = {"LSTM LM 8": lm_seeds("LSTM LM 8", [5.5, 3.9], [1.2, 1.02], 1.0, jitter=(0.0, 0.3, 0.9))}
    band = report.lm_curves(lm).axes[1].collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(1.0)  # a perplexity is at least 1
    plt.close("all")


def test_stopping_line_names_the_seeds_the_cap_stopped_while_improving():
    lm = {"LSTM LM 8": lm_seeds("LSTM LM 8", [5.5, 3.9, 3.8], [320.0, 250.0, 240.0], 250.0)}
    line = report.stopping_line(lm, "valid_ppl", minimize=True)
    assert line == "LSTM LM 8: 3 ± 0 (3 seeds) epochs trained, best at 3 ± 0 (3 seeds)."  # cap 20
    for run in lm["LSTM LM 8"][:2]:
        run.params["train"]["epochs"] = 3  # these two stopped at their cap, the best epoch the last
    line = report.stopping_line(lm, "valid_ppl", minimize=True)
    # 240/250 - 1 = -4.0%; 241/251 - 1 = -4.0%
    assert line.endswith("(2 of 3 seeds still improving at the cap of 3 epochs: the last epoch's gain 4.0%, "
                         "4.0%).")
    tpru_like = {"TPRU LM 8": lm_seeds("TPRU LM 8", [5.5, 3.9, 3.8], [320.0, 240.0, 250.0], 250.0)}
    for run in tpru_like["TPRU LM 8"]:
        run.params["train"]["epochs"] = 3  # at the cap, but the best epoch was the one before: converged
    assert "still improving" not in report.stopping_line(tpru_like, "valid_ppl", minimize=True)


def test_cost_line():
    runs = [Run({"name": n, "wall_time_s": w, "cpu_time_s": c}, Path(".")) for n, w, c in
            (("A", 600.0, 1200.0), ("B", 1800.0, 3600.0))]
    assert report.cost_line(runs) == ("The longest of the 2 runs, *B*, trained for 30 minutes; all of them "
                                      "together for 40 minutes (80 minutes of CPU time).")
    runs[0].record["cpu_time_s"] = None  # a run made before CPU time was recorded
    assert "CPU" not in report.cost_line(runs)


def test_check_claims():
    grad = tpru_checks.gradient_checks(trials=3)
    t1 = tpru_checks.table1_check()
    v = verdicts(decide({}, {}, grad, t1))
    psd = "J_t is positive semi-definite with eigenvalues at most max_n (f)_n <= 1"
    assert v[psd] == ("partly reproduced", "paper", None)
    assert all(verdict == ("not reproduced", "paper", None) for s, verdict in v.items()
               if s.startswith(("eq. 8", "eq. 7")))
    assert v["the # Params formulas (4d^2 + 2dd', 4d^2 + 4dd', 3d^2 + 3dd')"] == ("reproduced", None, None)
    assert v["the TPRU has fewer parameters than the LSTM"] == ("reproduced", None, None)
    assert v["with d' < d the TPRU has fewer parameters than the GRU"] == ("not reproduced", "paper", None)
    # the GRU and Table 4 match, the TPRU and LSTM of Table 2 do not
    assert v["the printed parameter counts"] == ("partly reproduced", "paper", None)
    # each miss of the paper's own carries the check that shows it as its evidence
    by = {c.statement: c for c in decide({}, {}, grad, t1)}
    assert by["eq. 8 (d b~_t / d b_{t-1} = W_r E J_t N_t S_b,t E^T W_u^T V_b) as printed is the Jacobian"
              ].evidence.startswith("eq. 8 against autograd's Jacobian on 3 settings of random TPRU steps")
    assert by[psd].evidence.startswith("J_t on 3 settings of random TPRU steps in float64")
    assert "TPRU d=64 printed 98.3k, built 49,152 weights" in by["the printed parameter counts"].evidence
    assert all(c.evidence for c in by.values() if c.cause == "paper")
    assert len(checks_report.gradient_table(grad)) == 3 and len(checks_report.table1_table(t1)) == len(t1)
    row = checks_report.gradient_table(grad).iloc[0]
    assert "e-" in row["eq. 8 corrected: max |diff|"] and len(row["J_t (from f_t): max eig / max f"]) == 5
    # the page's short lines: the printed Jacobians far off autograd, the derived ones not; the counts
    line = checks_report.gradient_line(grad)
    assert line.startswith("Against autograd, eq. 8 as printed is off by up to ") and "e-1" in line
    line = checks_report.table1_line(t1)
    assert line.startswith("Table 1's formulas give the weights of the built modules in every setting;")
    assert "TPRU 98.3k (Table 2), 2.0 times the formula" in line and "GRU 49.1k (Table 2), 1.0 times" in line


def test_the_tolerances_are_the_papers_own_gaps():
    """'comparable' (Table 2): the LSTM 2.1 points ahead of the TPRU - 512 on the mean of the five test
    splits; 'similar perplexity' (Table 4): 42.3 / 41.4 - 1 = 2.2%, the larger of its two gaps."""
    assert claim_rules.COMPARABLE == pytest.approx(0.021)
    assert claim_rules.SIMILAR == pytest.approx(42.3 / 41.4 - 1)


def test_within_a_tolerance_is_decided_by_the_seeds():
    a, b = Stat.of([0.680, 0.683, 0.686]), Stat.of([0.690, 0.693, 0.696])  # A 1 point behind B
    assert claim_rules.within(a, b, 0.021).holds is True
    assert claim_rules.within(a, b, 0.021, names=("A", "B")).direction == "A below B by 0.01"
    assert claim_rules.within(a, b, 0.002).holds is False  # 1 point behind, clearly more than 0.2
    noisy = Stat.of([0.64, 0.68, 0.72])
    d = claim_rules.within(noisy, b, 0.021)
    assert d.holds is None and d.seeds_needed > 3  # 1.3 points behind, sd 4 points
    # lower is better and relative: 253.5 against 251 * 1.022 = 256.5
    ppl, base = Stat.of([253.4, 253.5, 253.6]), Stat.of([250.9, 251.0, 251.1])
    assert claim_rules.within(ppl, base, 0.022, relative=True, higher=False).holds is True
    assert claim_rules.within(ppl, base, 0.001, relative=True, higher=False).holds is False
    # matches: from the side that is behind, either way
    assert rules.matches(b, a, 0.021).holds is True and rules.matches(b, a, 0.002).holds is False
    assert rules.matches(b, a, 0.021).kind == rules.matches(a, b, 0.021).kind == "matches"  # either behind


def test_every_claim_quotes_the_paper_and_names_its_epoch_and_every_open_miss_its_settle():
    runs = ent_runs_of(*GOOD)
    lm = {"TPRU LM 8 N=4": lm_seeds("TPRU LM 8 N=4", [6.0, 5.0], [400, 400], 400.0, pmi_of([0.1], 0.1),
                                    pmi_of([0.1], 0.2)),
          "LSTM LM 8": lm_seeds("LSTM LM 8", [5.5, 4.1], [320, 240], 250.0)}
    claims = decide(runs, lm, tpru_checks.gradient_checks(trials=2), tpru_checks.table1_check())
    assert len(claims) == 22
    for c in claims:
        assert c.quote and c.epoch, c.statement
        if c.verdict in MISSES and c.cause in ("open", "untrained", "data", "scale"):
            assert c.settle, c.statement
    text = " ".join(paper_text("002").replace("**", "").split())
    for c in claims:
        for part in c.quote.split(" / "):
            assert " ".join(part.split()) in text, c.statement
