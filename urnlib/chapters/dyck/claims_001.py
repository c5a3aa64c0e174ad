"""Paper 001's claims of the Dyck chapter (Fig. 3a-d, Table 2, sec. 5), declared (:mod:`urnlib.declare`): one
:class:`~urnlib.declare.Spec` per claim in :data:`SPECS_001` (the URN's Fig. 3b claim once per size,
:class:`~urnlib.chapters.dyck.claims_shared.Each`), each with a small measure on one setting's runs
(:class:`~urnlib.chapters.dyck.claims_shared.Measures`), and :data:`TABLE2`, counted on the modules.
:mod:`urnlib.chapters.dyck.claims` decides them with paper 000's.
"""

from __future__ import annotations

import math

import numpy as np

from urnlib import rules
from urnlib.chapters.dyck.claims_shared import (CURVE, FINAL, Each, Measures, curve, decide, fmt, retrain,
                                                settle, untrained)
from urnlib.chapters.dyck.report import (CHAPTER, MAJORITY_ACCURACY, PAPER_EPOCHS, PAPER_LSTM8_TURN_EPOCH,
                                         final_row, max_error_per_epoch, table2)
from urnlib.claims import Claim, authors_cause
from urnlib.declare import Measured, Spec, evaluate
from urnlib.models.recurrent import AUTHORS_CELL
from urnlib.reports.common import largest_rise, overfit_rise, share_lower_at_matched_x
from urnlib.seeds import Seeds, Stat
from urnlib.statements import trend

__all__ = ["paper001", "table2_claim", "SPECS_001", "TABLE2", "PAPER_TURN_EPOCH"]

PAPER_TURN_EPOCH = PAPER_LSTM8_TURN_EPOCH  # paper 001 sec. 4.1 (quoted beside it in the report)


def paper001(view: dict[str, Seeds], setting: str, units: list[int], min_total: int,
             read=final_row) -> list[Claim]:
    """Paper 001's claims on one setting's runs (``units``: sizes trained as both URN and LSTM)."""
    m = Measures(view, read, min_total, units)
    return decide(setting, SPECS_001, m) if units else []


def _at_read(m: Measures, lab: str, key: str) -> Stat:
    return m.view[lab].stat(lambda r: m.read(r)[key])


#: what the authors' LSTM changes, for the evidence of a claim (the setting's ``authors_lstm``)
AUTHORS_WORDS = "dropout 0.10 with its own output mask, orthogonal recurrent weights"


def authors_lstm(m: Measures) -> dict[int, Seeds]:
    """``{units: runs}`` of the LSTMs of ``m``'s setting trained with the authors' cell (``authors_lstm``)."""
    return {n: m.view[f"LSTM {n}, {AUTHORS_CELL}"] for n in m.units if f"LSTM {n}, {AUTHORS_CELL}" in m.view}


def authors_evidence(m: Measures, sizes: list[int], measure) -> tuple[str | None, str]:
    """A miss's cause and evidence from the authors' LSTM (:func:`authors_lstm`) at the ``sizes`` the claim
    rests on: ``measure(n, runs)`` gives ``(holds, in words)``, whether the claim holds with the authors'
    LSTM n in place of ours, and :func:`urnlib.claims.authors_cause` the cause: ``setting`` where it holds
    (``True``) at every one of ``sizes``, ``authors`` where it fails at one, with each size's numbers as the
    evidence; no cause where ``setting`` rests on fewer sizes than the claim, or where one of them did not
    train (no evidence: :func:`~urnlib.chapters.dyck.claims_shared.untrained`); ``(None, "")`` without
    such runs."""
    found = {n: runs for n, runs in authors_lstm(m).items() if n in sizes}
    if not found:
        return None, ""
    failed = untrained(m.view, [f"LSTM {n}, {AUTHORS_CELL}" for n in found], m.read)
    if failed:
        return None, "; ".join(f"{lab} did not train ({why}): no evidence" for lab, why in failed.items())
    measured = {n: measure(n, runs) for n, runs in found.items()}
    text = f"with the authors' LSTM ({AUTHORS_WORDS}) in place of ours: " + "; ".join(
        f"{n} units: {words}" for n, (_, words) in measured.items())
    cause = authors_cause(holds for holds, _ in measured.values())
    return (None if cause == "setting" and set(found) != set(sizes) else cause), text


def _lstm_lower(m: Measures) -> Measured:
    loss = {n: (_at_read(m, f"URN {n}", "test_loss"), _at_read(m, f"LSTM {n}", "test_loss")) for n in m.units}
    urn, lstm = m.family("URN"), m.family("LSTM")

    def theirs(n: int, runs: Seeds) -> tuple[bool | None, str]:
        t = runs.stat(lambda r: m.read(r)["test_loss"])
        d = rules.compare(t, loss[n][0], higher=False, names=(f"LSTM {n}", f"URN {n}"))
        kindest = runs.stat(lambda r: float(np.min(curve(r, "test_loss"))))  # words only: on test data
        return d.holds, (f"LSTM {fmt(t)} vs URN {fmt(loss[n][0])} ({d.direction}; the LSTM at its lowest "
                         f"test loss, the reading kindest to it: {fmt(kindest)})")

    cause, evidence = authors_evidence(m, m.units, theirs)
    return Measured(
        "; ".join(f"{n}: LSTM {fmt(lo)} vs URN {fmt(u)}" for n, (u, lo) in loss.items()),
        [rules.compare(lo, u, higher=False) for u, lo in loss.values()], rests=m.both,
        cause=cause, evidence=evidence,
        settle="the LSTMs overfit after their first epochs: the retrain reading every model at the epoch "
        f"selected on validation data would decide it ({retrain(*urn.values(), *lstm.values())})")


def _monotonous(m: Measures) -> Measured:
    rise = {n: tuple(m.view[f"{fam} {n}"].stat(lambda r: largest_rise(curve(r, "test_loss")))
                     for fam in ("URN", "LSTM")) for n in m.units}
    return Measured(
        "; ".join(f"{n}: largest rise of the test loss URN {fmt(u)} vs LSTM {fmt(lo)}"
                  for n, (u, lo) in rise.items()),
        [rules.compare(u, lo, higher=False) for u, lo in rise.values()], rests=m.both)


def _turn(lstm8: Seeds) -> tuple[bool | None, bool, str]:
    """Two parts of two kinds, combined: the rise on every seed (every-seed, the headline part) and the turn
    at epoch 30 (vs-number: an epoch significantly off 30 fails). ``(holds, partly, in words)``."""
    up = rules.every_seed((overfit_rise(curve(r, "test_loss")) > 0 for r in lstm8),
                          what="test loss at epoch 100 above its lowest")
    best_at = lstm8.stat(lambda r: int(np.argmin(curve(r, "test_loss"))) + 1)
    turn = rules.threshold(best_at, PAPER_TURN_EPOCH, name="epoch of the lowest test loss")
    off = turn.holds is not None and turn.size != 0  # either side of 30; every seed at 30 exactly is not off
    holds, partly = rules.combine([up.holds, False if off else None])
    words = f"{up.direction}; epoch of its lowest test loss {fmt(best_at, 0)} ({turn.direction})"
    return holds, partly, words


def _lstm8_overfits(m: Measures) -> Measured | None:
    if 8 not in m.units:
        return None
    lstm8 = m.view["LSTM 8"]
    holds, partly, words = _turn(lstm8)

    def theirs(n: int, runs: Seeds) -> tuple[bool | None, str]:
        # the miss goes where no part fails: a rise on every seed, a turn not significantly off epoch 30
        held, _, text = _turn(runs)
        return held is not False, text

    cause, evidence = authors_evidence(m, [8], theirs)
    return Measured(
        words, holds, partly=partly, rests=["LSTM 8"], cause=cause, evidence=evidence,
        settle="the LSTM 8 turns earlier than the paper's: the authors' Keras LSTM (initialisation, "
        f"dropout) on 3 seeds would show whether the turn moves to epoch 30 ({retrain(lstm8, seeds=3)})")


def _low_error(m: Measures, run) -> float:
    k, acc = m.buckets(run)
    return float((1 - acc[k <= 1]).mean()) if (k <= 1).any() else float("nan")


def _low_minus_largest(m: Measures, run) -> float:
    k, acc = m.buckets(run)
    if not (k <= 1).any():
        return float("nan")
    return float((1 - acc[k <= 1]).mean() - (1 - acc[-1]))


def _weakest_at_few(m: Measures, lab: str) -> Measured:
    gap = m.view[lab].stat(lambda run: _low_minus_largest(m, run))
    return Measured(f"mean error at 0-1 attractors minus error at the largest bucket {fmt(gap)}",
                    rules.paired(gap, name="error at 0-1 minus at the largest"), rests=[lab])


def _confusion_falls(m: Measures) -> Measured | None:
    if len(m.units) < 2:
        return None
    sizes, urn = sorted(m.units), m.family("URN")
    low = {n: urn[n].stat(lambda r: _low_error(m, r)) for n in sizes}
    return Measured(
        "mean error at 0-1 attractors " + " -> ".join(f"URN {n} {fmt(low[n])}" for n in sizes),
        trend([(n, low[n]) for n in sizes], rising=False, what="error at 0-1 attractors"),
        rests=[f"URN {n}" for n in sizes],
        settle=f"3 more seeds of each URN size ({retrain(*urn.values(), seeds=3)})")


def _worst_bucket(m: Measures, run) -> int:
    k, acc = m.buckets(run)
    return int(k[np.argmin(acc)])


def _lstm_worst(m: Measures) -> Measured:
    lstm = m.family("LSTM")
    worst = {n: lstm[n].each(lambda r: _worst_bucket(m, r)) for n in m.units}

    def theirs(n: int, runs: Seeds) -> tuple[bool | None, str]:
        ws = runs.each(lambda r: _worst_bucket(m, r))
        return rules.every_seed(w in (3, 4) for w in ws).holds, f"worst at {ws}"

    cause, evidence = authors_evidence(m, m.units, theirs)
    return Measured(
        "; ".join(f"LSTM {n}: worst at {ws}" for n, ws in worst.items()),
        [rules.every_seed((w in (3, 4) for w in ws), what=f"LSTM {n} worst at 3-4 attractors")
         for n, ws in worst.items()],
        rests=[f"LSTM {n}" for n in m.units], cause=cause, evidence=evidence,
        settle=f"the authors' Keras LSTM on 3 seeds at each size ({retrain(*lstm.values(), seeds=3)})")


def _pairs(m: Measures, n: int, lstm: Seeds | None = None) -> list:
    """Seed by seed: the same data on both sides (``lstm``: another LSTM n's runs than the comparison's)."""
    return list(zip(m.view[f"URN {n}"], m.view[f"LSTM {n}"] if lstm is None else lstm))


def _lower(m: Measures, a, b) -> np.ndarray:
    """URN a's max error below LSTM b's, epoch by epoch (the epochs both have)."""
    ea, eb = (max_error_per_epoch(r, m.min_total)[:PAPER_EPOCHS] for r in (a, b))
    return ea[: len(eb)] < eb[: len(ea)]


def _lower_throughout(m: Measures) -> Measured:
    every = {n: rules.every_seed((bool(_lower(m, a, b).all()) for a, b in _pairs(m, n)),
                                 what="URN lower at every epoch") for n in m.units}
    share = {n: Stat.of(float(_lower(m, a, b).mean()) for a, b in _pairs(m, n)) for n in m.units}
    holds, _ = rules.combine(every.values())

    def theirs(n: int, runs: Seeds) -> tuple[bool | None, str]:
        pairs = _pairs(m, n, runs)
        d = rules.every_seed((bool(_lower(m, a, b).all()) for a, b in pairs), what="URN lower at every epoch")
        share_n = Stat.of(float(_lower(m, a, b).mean()) for a, b in pairs)
        return d.holds, f"{d.direction} (share of epochs {fmt(share_n, 2)})"

    cause, evidence = authors_evidence(m, m.units, theirs)
    return Measured(
        "; ".join(f"{n}: {every[n].direction} (share of epochs {fmt(share[n], 2)})" for n in m.units),
        list(every.values()), rests=m.both, settle=settle(holds, m.family("URN"), m.family("LSTM")),
        cause=cause, evidence=evidence)


def _first_epoch(m: Measures) -> Measured:
    first = {n: urn.stat(lambda run: max_error_per_epoch(run, m.min_total)[0])
             for n, urn in m.family("URN").items()}
    return Measured("; ".join(f"URN {n}: {fmt(f)}" for n, f in first.items()),
                    [rules.threshold(f, 1 - MAJORITY_ACCURACY, above=False) for f in first.values()],
                    rests=[f"URN {n}" for n in m.units])


def _matched(m: Measures, urn_run, lstm_run) -> float:
    share = share_lower_at_matched_x(
        curve(urn_run, "train_loss"), max_error_per_epoch(urn_run, m.min_total)[:PAPER_EPOCHS],
        curve(lstm_run, "train_loss"), max_error_per_epoch(lstm_run, m.min_total)[:PAPER_EPOCHS])
    return float("nan") if share is None else share


def _lower_at_equal_loss(m: Measures) -> Measured:
    matched = {n: Stat.of(_matched(m, a, b) for a, b in _pairs(m, n)) for n in m.units}
    parts = [rules.every_seed(v >= 1 for v in s.finite) if s.n
             else rules.Decision(None, "no common loss range", math.nan) for s in matched.values()]
    return Measured(
        "; ".join(f"{n}: share of the common loss range URN lower {fmt(s, 2)}" if s.n
                  else f"{n}: no common loss range" for n, s in matched.items()),
        parts, rests=m.both, settle=settle(rules.combine(parts)[0], m.family("URN"), m.family("LSTM")))


def _rise(m: Measures, run, key: str) -> float:
    values = max_error_per_epoch(run, m.min_total)[:PAPER_EPOCHS] if key == "max_error" else curve(run, key)
    return overfit_rise(values)


#: the two measures of "less prone to overfitting": their rise at epoch 100 above their lowest
OVERFIT = (("test_loss", "test loss"), ("max_error", "max error rate"))


def _overfit_parts(m: Measures, n: int, lstm: Seeds) -> tuple[list, list[str]]:
    """URN n's rises against ``lstm``'s (an LSTM n's runs), per measure of :data:`OVERFIT`, and in words
    ("test loss: URN ... vs LSTM ...")."""
    parts, texts = [], []
    for key, what in OVERFIT:
        u, lo = (runs.stat(lambda r, key=key: _rise(m, r, key)) for runs in (m.view[f"URN {n}"], lstm))
        parts.append(rules.compare(u, lo, higher=False, names=(f"URN {n}'s {what} rise", f"LSTM {n}'s")))
        texts.append(f"{what}: URN {fmt(u)} vs LSTM {fmt(lo)}")
    return parts, texts


def _less_overfit(m: Measures) -> Measured:
    found = {n: _overfit_parts(m, n, m.view[f"LSTM {n}"]) for n in m.units}
    parts = [p for ps, _ in found.values() for p in ps]
    texts = [f"{n}, {t}" for n, (_, ts) in found.items() for t in ts]

    def theirs(n: int, runs: Seeds) -> tuple[bool | None, str]:
        theirs_parts, words = _overfit_parts(m, n, runs)
        return rules.combine(theirs_parts)[0], "; ".join(words)

    cause, evidence = authors_evidence(m, m.units, theirs)
    return Measured("rise at epoch 100 above the lowest: " + "; ".join(texts), parts, rests=m.both,
                    cause=cause, evidence=evidence,
                    settle=settle(rules.combine(parts)[0], m.family("URN"), m.family("LSTM")))


WEAKEST = Spec(
    "paper 001 Fig. 3b", "{lab}: weakest at few attractors, better at many",
    "The URN models are weakest for a low number of attractors, and they achieve near excellent accuracy for "
    "a large number of attractors.", "errors concentrated at low attractor counts", "beats-paired",
    "difference > 0", FINAL, _weakest_at_few)

SPECS_001: list[Spec | Each] = [
    Spec("paper 001 Fig. 3a", "LSTMs reach a lower test loss than URNs of the same size",
         "As in the cross-serial task, we observe that LSTM models make better guesses than URN, at least "
         "for a similar number of units.", "LSTM better guesses", "beats", "LSTM lower at every size", FINAL,
         _lstm_lower),
    Spec("paper 001 Fig. 3a",
         "the URN's test loss falls monotonously; the LSTM's can get worse for a few epochs",
         "However, we see that the training of the URN is uniformly monotonous, while the LSTM can sometimes "
         "become worse for a few epochs before converging.", "URN uniformly monotonous", "beats",
         "largest rise of the test loss above its running minimum (epochs 1-100), URN below LSTM at every "
         "size", CURVE, _monotonous),
    Spec("paper 001 Fig. 3a", "the 8-unit LSTM overfits: its test loss rises slowly after epoch 30",
         "In fact, for 8 units, the LSTM exhibits overfitting. The test loss increases slowly after epoch "
         "30.", "rises after epoch 30", "every-seed",
         f"the lowest test loss at epoch 30 ({rules.THRESHOLD_RULE}: an epoch significantly off 30 fails); "
         "the test loss at epoch 100 above its lowest", CURVE, _lstm8_overfits),
    Each(lambda m: [f"URN {n}" for n in m.units], (WEAKEST,)),
    Spec("paper 001 Fig. 3b", "the URN's confusion at few attractors decreases as the number of units grows",
         "This confusion decreases as the number of units increases.", "decreases with units", "trend",
         "lower at every step of the URN sizes", FINAL, _confusion_falls),
    Spec("paper 001 Fig. 3b", "LSTMs do worst at 3 to 4 attractors",
         "It does worst on pairs with 3 to 4 attractors.", "worst at 3-4 attractors", "every-seed",
         "the worst bucket is 3 or 4 attractors, every size", FINAL, _lstm_worst),
    Spec("paper 001 Fig. 3c",
         "a URN has a lower maximum error rate than the LSTM of the same size throughout training",
         "Using this metric, a URN performs consistently better than an LSTM with the same number of units "
         "(and a similar number of parameters). It does so consistently across the training period "
         "(Fig. 3c).",
         "consistently lower", "every-seed",
         "URN below LSTM at every epoch 1-100, seed against seed, every size", CURVE, _lower_throughout),
    Spec("paper 001 Fig. 3c", "URNs beat the majority baseline (80% error) within the first epoch",
         "The URN models beat the majority class baseline within the first epoch, while the LSTM needs a "
         "couple of epochs to do so.", "within the first epoch", "vs-number",
         "max error rate after epoch 1 < 0.8 at every size", "epoch 1", _first_epoch),
    Spec("paper 001 Fig. 3d", "at equal training loss, URNs have a lower maximum error rate than LSTMs",
         "We observe that the URN models outperform the LSTM models across the board.",
         "URN better across the board", "every-seed",
         "URN lower at every training-loss level both reach (epochs 1-100), seed against seed, every size",
         CURVE, _lower_at_equal_loss),
    Spec("paper 001 sec. 5", "URNs are less prone to overfitting than LSTMs",
         "Additionally, the URN appears to be less prone to overfitting, on both tasks.",
         "URN less prone to overfitting", "beats",
         "the rise of the test loss and of the max error rate at epoch 100 above their lowest (epochs "
         "1-100), URN below LSTM at every size", CURVE, _less_overfit),
]


def _table2(lstm_embedding: int) -> Measured:
    t2 = table2(lstm_embedding)
    equal = bool((t2["LSTM (paper)"] == t2["LSTM (ours)"]).all()
                 and (t2["URN (paper)"] == t2["URN (ours)"]).all())
    ours = ("LSTM " + "/".join(str(v) for v in t2["LSTM (ours)"])
            + ", URN " + "/".join(str(v) for v in t2["URN (ours)"]))
    return Measured(ours, equal, rests=(), direction="equal" if equal else "different")


TABLE2 = Spec("paper 001 Table 2", "parameter counts of the Dyck models (V = 12)",
              "Table 2: Number of parameters Dyck language models",
              "LSTM 6300/2204/924, URN 6348/1644/444 (32/16/8 units)", "check",
              lambda lstm_embedding: f"equal, counted on the modules (LSTM embedding {lstm_embedding})",
              "- (not trained)", _table2)


def table2_claim(lstm_embedding: int) -> Claim:
    """Paper 001 Table 2 (counted on the modules; no training, no seeds)."""
    return evaluate(CHAPTER, [TABLE2], lstm_embedding)[0]
