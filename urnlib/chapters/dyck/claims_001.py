"""Paper 001's claims of the Dyck chapter (Fig. 3a-d, Table 2, sec. 5), and what every claim of the chapter
shares: the epochs they read (:data:`FINAL`, :data:`CURVE`, :data:`WEIGHTS`), the training guard and
:class:`ClaimList`, which makes each claim. :mod:`urnlib.chapters.dyck.claims` decides them with paper 000's.
"""

from __future__ import annotations

import math

import numpy as np

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.reports.common import (cpu_hours, largest_rise, overfit_rise, settle_unless_decided,
                                   share_lower_at_matched_x)
from urnlib.chapters.dyck.report import (
    MAJORITY_ACCURACY, PAPER_EPOCHS, PAPER_LSTM8_TURN_EPOCH, max_error_per_epoch, run_accuracy, table2,
)
from urnlib.seeds import Seeds, Stat
from urnlib.statements import TREND_RULE, trend

__all__ = ["paper001", "table2_claim", "overfit_rise", "retrain", "ClaimList", "FINAL", "CURVE", "WEIGHTS",
           "CHAPTER"]

CHAPTER = "dyck"
FINAL = f"final (epoch {PAPER_EPOCHS}, the papers'; they select no epoch)"
CURVE = f"every epoch, 1-{PAPER_EPOCHS} (the training curve)"
WEIGHTS = f"final (epoch {PAPER_EPOCHS}, the papers': the stored weights)"
PAPER_TURN_EPOCH = PAPER_LSTM8_TURN_EPOCH  # paper 001 sec. 4.1 (quoted beside it in the report)


def retrain(*groups: Seeds, seeds: int | None = None, per: str = "") -> str:
    """The cost of training the models of ``groups`` again, from what their stored runs took: ``"about 0.4
    CPU hours, as these runs took"``; ``seeds``: that many new seeds of each (scaled from their own seeds);
    ``per``: what the hours are for (``"per 100 epochs"``)."""
    hours = sum(cpu_hours(g) * (seeds / len(g) if seeds else 1) for g in groups)
    return f"about {hours:.1f} CPU hours{' ' + per if per else ''}, as these runs took"


def _settle(holds: bool | None, urn: dict[int, Seeds], lstm: dict[int, Seeds]) -> str:
    """What would settle a URN-against-LSTM claim: more seeds where it is undecided; where it fails decided,
    not more seeds but the authors' Keras models, which could show whether their setting holds."""
    cost = retrain(*urn.values(), *lstm.values(), seeds=3, per="per setting")
    return settle_unless_decided(holds, f"3 more seeds of each model under each setting ({cost})",
                                 "the authors' Keras URN and LSTM on 3 seeds at each size would show whether "
                                 f"their setting gives the paper's curves ({cost})")


def fmt(stat: Stat, digits: int = 3) -> str:
    return stat.text(digits)


def buckets(run, min_total: int, read) -> tuple[np.ndarray, np.ndarray]:
    s = run_accuracy(run, min_total, read(run))
    return s["count"], s["accuracy"]


def _untrained(view: dict[str, Seeds], labels, read) -> list[str]:
    """The models among ``labels`` that did not train: fewer than the papers' 100 epochs on a seed, or
    closing-bracket accuracy at the epoch read not clearly above the majority class (``rules.off_chance``)."""
    def idle(seeds) -> bool:
        acc = seeds.stat(lambda run: read(run)["closing_accuracy"])
        short = any(len(r.history) < PAPER_EPOCHS for r in seeds)
        return short or not rules.off_chance(MAJORITY_ACCURACY, acc)

    return [lab for lab in labels if idle(view[lab])]


class ClaimList(list):
    """The claims of one setting and reading, with what every claim shares."""

    def __init__(self, view, setting: str, read):
        super().__init__()
        self.view, self.setting, self.read = view, setting, read

    def add(
        self,
        source: str,
        statement: str,
        paper,
        ours: str,
        rule: str,
        holds,
        *,
        quote: str,
        epoch: str,
        rests,
        partly: bool = False,
        cause: str | None = None,
        settle: str = "",
        extension: bool = False,
        seeds_needed: int | None = None,
    ) -> None:
        rests = list(rests)
        n = min(len(self.view[lab]) for lab in rests)
        direction = "" if hasattr(holds, "holds") else ours  # a combined claim: what it measured
        self.append(claim(CHAPTER, source, f"[{self.setting}] {statement}", paper, ours, rule, holds, partly,
                          seeds=n, cause=cause, quote=quote, epoch=epoch, settle=settle, extension=extension,
                          direction=direction, seeds_needed=seeds_needed,
                          idle=_untrained(self.view, rests, self.read)))



def table2_claim(lstm_embedding: int) -> Claim:
    """Paper 001 Table 2 (counted on the modules; no training, no seeds)."""
    t2 = table2(lstm_embedding)
    equal = bool(
        (t2["LSTM (paper)"] == t2["LSTM (ours)"]).all() and (t2["URN (paper)"] == t2["URN (ours)"]).all()
    )
    return claim(
        CHAPTER,
        "paper 001 Table 2",
        "parameter counts of the Dyck models (V = 12)",
        "LSTM 6300/2204/924, URN 6348/1644/444 (32/16/8 units)",
        "LSTM "
        + "/".join(str(v) for v in t2["LSTM (ours)"])
        + ", URN "
        + "/".join(str(v) for v in t2["URN (ours)"]),
        f"equal, counted on the modules (LSTM embedding {lstm_embedding})",
        equal,
        quote="Table 2: Number of parameters Dyck language models",
        epoch="- (not trained)",
        direction="equal" if equal else "different",
    )


def _curve(run, key: str) -> np.ndarray:
    return np.asarray(run.column(key)[:PAPER_EPOCHS], dtype=float)


def paper001(out: ClaimList, units, min_total) -> None:
    view, read = out.view, out.read
    urn, lstm = ({n: view[f"{fam} {n}"] for n in units} for fam in ("URN", "LSTM"))
    both = [f"{fam} {n}" for fam in ("URN", "LSTM") for n in units]
    pairs = {n: list(zip(urn[n], lstm[n])) for n in units}  # seed by seed: the same data on both sides

    loss = {
        n: (urn[n].stat(lambda r: read(r)["test_loss"]), lstm[n].stat(lambda r: read(r)["test_loss"]))
        for n in units
    }
    parts = [rules.compare(lo, u, higher=False) for u, lo in loss.values()]
    holds, partly = rules.combine(parts)
    out.add(
        "paper 001 Fig. 3a",
        "LSTMs reach a lower test loss than URNs of the same size",
        "LSTM better guesses",
        "; ".join(f"{n}: LSTM {fmt(lo)} vs URN {fmt(u)}" for n, (u, lo) in loss.items()),
        f"LSTM lower at every size ({rules.BEATS_RULE})",
        holds,
        partly=partly,
        quote="As in the cross-serial task, we observe that LSTM models make better guesses than URN, at "
        "least for a similar number of units.",
        epoch=FINAL,
        rests=both,
        settle="the LSTMs overfit after their first epochs: the retrain reading every model at the epoch "
        f"selected on validation data would decide it ({retrain(*urn.values(), *lstm.values())})",
        seeds_needed=rules.needed(parts),
    )

    rise = {
        n: (
            urn[n].stat(lambda r: largest_rise(_curve(r, "test_loss"))),
            lstm[n].stat(lambda r: largest_rise(_curve(r, "test_loss"))),
        )
        for n in units
    }
    parts = [rules.compare(u, lo, higher=False) for u, lo in rise.values()]
    holds, partly = rules.combine(parts)
    out.add(
        "paper 001 Fig. 3a",
        "the URN's test loss falls monotonously; the LSTM's can get worse for a few epochs",
        "URN uniformly monotonous",
        "; ".join(
            f"{n}: largest rise of the test loss URN {fmt(u)} vs LSTM {fmt(lo)}"
            for n, (u, lo) in rise.items()
        ),
        "largest rise of the test loss above its running minimum (epochs 1-100), URN below LSTM at every "
        f"size ({rules.BEATS_RULE})",
        holds,
        partly=partly,
        quote="However, we see that the training of the URN is uniformly monotonous, while the LSTM can "
        "sometimes become worse for a few epochs before converging.",
        epoch=CURVE,
        rests=both,
        seeds_needed=rules.needed(parts),
    )

    if 8 in units:
        up = rules.every_seed(
            (overfit_rise(_curve(r, "test_loss")) > 0 for r in lstm[8]),
            what="test loss at epoch 100 above its lowest",
        )
        best_at = lstm[8].stat(lambda r: int(np.argmin(_curve(r, "test_loss"))) + 1)
        turn = rules.threshold(best_at, PAPER_TURN_EPOCH, name="epoch of the lowest test loss")
        holds, partly = rules.combine([up.holds, None if turn.holds is None else False])
        out.add(
            "paper 001 Fig. 3a",
            "the 8-unit LSTM overfits: its test loss rises slowly after epoch 30",
            "rises after epoch 30",
            f"{up.direction}; epoch of its lowest test loss {fmt(best_at, 0)} ({turn.direction})",
            f"test loss at epoch 100 above its lowest ({rules.EVERY_SEED_RULE}); the lowest at epoch 30 "
            f"({rules.THRESHOLD_RULE}: an epoch significantly off 30 fails)",
            holds,
            partly=partly,
            quote="In fact, for 8 units, the LSTM exhibits overfitting. The test loss increases slowly after "
            "epoch 30.",
            epoch=CURVE,
            rests=["LSTM 8"],
            settle="the LSTM 8 turns earlier than the paper's: the authors' Keras LSTM (initialisation, "
            f"dropout) on 3 seeds would show whether the turn moves to epoch 30 "
            f"({retrain(view['LSTM 8'], seeds=3)})",
        )

    low = {n: urn[n].stat(lambda r: _low_error(r, min_total, read)) for n in units}
    for n in units:
        gap = urn[n].stat(lambda run: _low_minus_largest(run, min_total, read))
        out.add(
            "paper 001 Fig. 3b",
            f"URN {n}: weakest at few attractors, better at many",
            "errors concentrated at low attractor counts",
            f"mean error at 0-1 attractors minus error at the largest bucket {fmt(gap)}",
            f"difference > 0 ({rules.PAIRED_RULE})",
            rules.paired(gap, name="error at 0-1 minus at the largest"),
            quote="The URN models are weakest for a low number of attractors, and they achieve near "
            "excellent accuracy for a large number of attractors.",
            epoch=FINAL,
            rests=[f"URN {n}"],
        )
    if len(units) > 1:
        sizes = sorted(units)
        out.add(
            "paper 001 Fig. 3b",
            "the URN's confusion at few attractors decreases as the number of units grows",
            "decreases with units",
            "mean error at 0-1 attractors " + " -> ".join(f"URN {n} {fmt(low[n])}" for n in sizes),
            f"lower at every step of the URN sizes ({TREND_RULE})",
            trend([(n, low[n]) for n in sizes], rising=False, what="error at 0-1 attractors"),
            quote="This confusion decreases as the number of units increases.",
            epoch=FINAL,
            rests=[f"URN {n}" for n in sizes],
            settle=f"3 more seeds of each URN size ({retrain(*urn.values(), seeds=3)})",
        )

    worst = {n: lstm[n].each(lambda r: _worst_bucket(r, min_total, read)) for n in units}
    parts = [rules.every_seed(w in (3, 4) for w in ws) for ws in worst.values()]
    holds, partly = rules.combine(parts)
    out.add(
        "paper 001 Fig. 3b",
        "LSTMs do worst at 3 to 4 attractors",
        "worst at 3-4 attractors",
        "; ".join(f"LSTM {n}: worst at {ws}" for n, ws in worst.items()),
        f"the worst bucket is 3 or 4 attractors, every size, {rules.EVERY_SEED_RULE}",
        holds,
        partly=partly,
        quote="It does worst on pairs with 3 to 4 attractors.",
        epoch=FINAL,
        rests=[f"LSTM {n}" for n in units],
        settle=f"the authors' Keras LSTM on 3 seeds at each size ({retrain(*lstm.values(), seeds=3)})",
        seeds_needed=rules.needed(parts),
    )

    def lower(a, b) -> np.ndarray:  # URN a's max error below LSTM b's, epoch by epoch (the epochs both have)
        ea, eb = (max_error_per_epoch(r, min_total)[:PAPER_EPOCHS] for r in (a, b))
        return ea[: len(eb)] < eb[: len(ea)]

    every = {n: rules.every_seed((bool(lower(a, b).all()) for a, b in pairs[n]),
                                 what="URN lower at every epoch") for n in units}
    share = {n: Stat.of(float(lower(a, b).mean()) for a, b in pairs[n]) for n in units}
    holds, partly = rules.combine(every.values())
    out.add(
        "paper 001 Fig. 3c",
        "a URN has a lower maximum error rate than the LSTM of the same size throughout training",
        "consistently lower",
        "; ".join(f"{n}: {every[n].direction} (share of epochs {fmt(share[n], 2)})" for n in units),
        f"URN below LSTM at every epoch 1-100, seed against seed, every size ({rules.EVERY_SEED_RULE})",
        holds,
        partly=partly,
        quote="Using this metric, a URN performs consistently better than an LSTM with the same number of "
        "units (and a similar number of parameters). It does so consistently across the training "
        "period (Fig. 3c).",
        epoch=CURVE,
        rests=both,
        settle=_settle(holds, urn, lstm),
        seeds_needed=rules.needed(every.values()),
    )

    first = {n: urn[n].stat(lambda run: max_error_per_epoch(run, min_total)[0]) for n in units}
    parts = [rules.threshold(f, 1 - MAJORITY_ACCURACY, above=False) for f in first.values()]
    holds, partly = rules.combine(parts)
    out.add(
        "paper 001 Fig. 3c",
        "URNs beat the majority baseline (80% error) within the first epoch",
        "within the first epoch",
        "; ".join(f"URN {n}: {fmt(f)}" for n, f in first.items()),
        f"max error rate after epoch 1 < 0.8 at every size ({rules.THRESHOLD_RULE})",
        holds,
        partly=partly,
        quote="The URN models beat the majority class baseline within the first epoch, while the LSTM needs "
        "a couple of epochs to do so.",
        epoch="epoch 1",
        rests=[f"URN {n}" for n in units],
        seeds_needed=rules.needed(parts),
    )

    matched = {n: Stat.of(_matched(a, b, min_total) for a, b in pairs[n]) for n in units}
    parts = [rules.every_seed(v >= 1 for v in m.finite) if m.n
             else rules.Decision(None, "no common loss range", math.nan) for m in matched.values()]
    holds, partly = rules.combine(parts)
    out.add(
        "paper 001 Fig. 3d",
        "at equal training loss, URNs have a lower maximum error rate than LSTMs",
        "URN better across the board",
        "; ".join(
            f"{n}: share of the common loss range URN lower {fmt(m, 2)}"
            if m.n
            else f"{n}: no common loss range"
            for n, m in matched.items()
        ),
        "URN lower at every training-loss level both reach (epochs 1-100), seed against seed, every size "
        f"({rules.EVERY_SEED_RULE})",
        holds,
        partly=partly,
        quote="We observe that the URN models outperform the LSTM models across the board.",
        epoch=CURVE,
        rests=both,
        settle=_settle(holds, urn, lstm),
        seeds_needed=rules.needed(parts),
    )

    parts, texts = [], []
    for n in units:
        for key, what in (("test_loss", "test loss"), ("max_error", "max error rate")):

            def measure(r, key=key):
                curve = (
                    max_error_per_epoch(r, min_total)[:PAPER_EPOCHS] if key == "max_error" else _curve(r, key)
                )
                return overfit_rise(curve)

            u, lo = urn[n].stat(measure), lstm[n].stat(measure)
            parts.append(rules.compare(u, lo, higher=False))
            texts.append(f"{n}, {what}: URN {fmt(u)} vs LSTM {fmt(lo)}")
    holds, partly = rules.combine(parts)
    out.add(
        "paper 001 sec. 5",
        "URNs are less prone to overfitting than LSTMs",
        "URN less prone to overfitting",
        "rise at epoch 100 above the lowest: " + "; ".join(texts),
        "the rise of the test loss and of the max error rate at epoch 100 above their lowest (epochs "
        f"1-100), URN below LSTM at every size ({rules.BEATS_RULE})",
        holds,
        partly=partly,
        quote="Additionally, the URN appears to be less prone to overfitting, on both tasks.",
        epoch=CURVE,
        rests=both,
        settle=_settle(holds, urn, lstm),
        seeds_needed=rules.needed(parts),
    )


def _low_error(run, min_total: int, read) -> float:
    k, acc = buckets(run, min_total, read)
    return float((1 - acc[k <= 1]).mean()) if (k <= 1).any() else float("nan")


def _low_minus_largest(run, min_total: int, read) -> float:
    k, acc = buckets(run, min_total, read)
    if not (k <= 1).any():
        return float("nan")
    return float((1 - acc[k <= 1]).mean() - (1 - acc[-1]))


def _worst_bucket(run, min_total: int, read) -> int:
    k, acc = buckets(run, min_total, read)
    return int(k[np.argmin(acc)])


def _matched(urn_run, lstm_run, min_total: int) -> float:
    m = share_lower_at_matched_x(
        _curve(urn_run, "train_loss"),
        max_error_per_epoch(urn_run, min_total)[:PAPER_EPOCHS],
        _curve(lstm_run, "train_loss"),
        max_error_per_epoch(lstm_run, min_total)[:PAPER_EPOCHS],
    )
    return float("nan") if m is None else m
