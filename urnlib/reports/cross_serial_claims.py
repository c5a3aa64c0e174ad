"""The claims of the cross-serial chapter (paper 001 sec. 3), decided on every seed with :mod:`urnlib.rules`.

Each measure is read at each run's best epoch (lowest test loss) or, where the paper speaks of training, over
the whole curve; the figures and tables are in :mod:`urnlib.reports.cross_serial`.
"""

from __future__ import annotations

import math

import numpy as np

from urnlib.claims import Claim, claim
from urnlib.reports.common import share_lower_at_matched_x
from urnlib.reports.cross_serial import (CHAPTER, OVERFIT_RISE, PAPER_ERROR, PAPER_URN32_ERROR,
                                         PAPER_URN32_LOSS, SHARE, Grouped, _grouped, _ms, _n_seeds,
                                         _unseen_seen, best_row, labels_of, table1)
from urnlib.results import Run
from urnlib.rules import (BEATS_RULE, EVERY_SEED_RULE, THRESHOLD_RULE, at_least, at_most, beats, combine,
                          on_every_seed)
from urnlib.seeds import Stat

__all__ = ["claims"]


def _noise(holds: bool | None, parts: list[bool | None], stats: list[Stat]) -> str | None:
    """The cause of a claim left undecided by the seeds' spread: ``"noise"`` when ``holds`` is ``None``, some
    part was undecided and every measure behind it has values (not a measure that could not be taken)."""
    if holds is None and any(p is None for p in parts) and stats and all(s.n for s in stats):
        return "noise"
    return None


def _most(parts: list[bool | None]) -> tuple[bool | None, bool]:
    """``combine`` for "at all sizes but one at most": holds when at most one part is not a holding one and
    some part holds; fails when more than one part fails (one when there is a single part)."""
    allowed = 1 if len(parts) > 1 else 0
    if parts and sum(p is True for p in parts) >= len(parts) - allowed and any(p is True for p in parts):
        return True, False
    if sum(p is False for p in parts) > allowed:
        return False, any(p is True for p in parts)
    return None, False


def claims(seeds: Grouped, *, units: list[int], train_k: int, lstm_embedding: int = 20) -> list[Claim]:
    """Every claim of paper 001 sec. 3 with its verdict, measured on the runs ``{label: Seeds}`` at each run's
    best epoch (by test loss) or over its whole curve, and decided by :mod:`urnlib.rules` across seeds."""
    seeds = _grouped(seeds)
    out: list[Claim] = []
    add = out.append
    t1 = table1(lstm_embedding)
    equal = bool((t1["LSTM (paper)"] == t1["LSTM (ours, V=10)"]).all()
                 and (t1["URN (paper)"] == t1["URN (ours, V=10)"]).all())
    add(claim(CHAPTER, "paper 001 Table 1", "parameter counts of the cross-serial models (V = 10)",
              "LSTM 7314/2738/1218, URN 5290/1370/370 (32/16/8 units)",
              "LSTM " + "/".join(str(v) for v in t1["LSTM (ours, V=10)"])
              + ", URN " + "/".join(str(v) for v in t1["URN (ours, V=10)"]),
              f"equal, counted on modules built with V = 10 (LSTM embedding {lstm_embedding})", equal))

    pairs = [n for n in units if f"URN {n}" in seeds and f"LSTM {n}" in seeds]
    if not pairs:
        return out
    labels = labels_of(seeds, pairs)
    n_all = _n_seeds(seeds, labels)

    def at_best(key: str) -> dict[str, Stat]:
        return {lab: seeds[lab].stat(lambda run: best_row(run)[key]) for lab in labels}

    # ---- Fig. 2a: test loss
    loss = at_best("test_loss")
    parts = [beats(loss[f"LSTM {n}"], loss[f"URN {n}"], higher=False) for n in pairs]
    holds, partly = combine(parts)
    add(claim(CHAPTER, "paper 001 Fig. 2a",
              "LSTMs make better per-symbol guesses (lower test loss) than URNs, across the board",
              "LSTM lower",
              "; ".join(f"{n}: LSTM {_ms(loss[f'LSTM {n}'])} vs URN {_ms(loss[f'URN {n}'])}" for n in pairs),
              f"lowest test loss (best epoch) LSTM < URN at every size; {BEATS_RULE}", holds, partly,
              seeds=n_all, cause=_noise(holds, parts, list(loss.values()))))

    # ---- Fig. 2b: below 10% error
    error = at_best("error_rate")
    verdicts = {lab: at_most(error[lab], PAPER_ERROR) for lab in labels}
    best_label = min(labels, key=lambda lab: error[lab].mean)
    holds = True if any(v is True for v in verdicts.values()) else (
        None if any(v is None for v in verdicts.values()) else False)
    add(claim(CHAPTER, "paper 001 Fig. 2b",
              "the best models reach less than 10% full-string error on the test set",
              f"< {PAPER_ERROR:.2f}", f"best {best_label}: {_ms(error[best_label])}",
              f"error rate at the best epoch (lowest test loss) <= {PAPER_ERROR:.2f} for some model; "
              f"{THRESHOLD_RULE}", holds, seeds=n_all,
              cause=_noise(holds, list(verdicts.values()), list(error.values()))))

    # ---- Fig. 2b: the larger LSTMs overfit (the whole curve, per seed)
    big = f"LSTM {max(pairs)}"
    curves = seeds[big].each(lambda run: np.asarray(run.column("error_rate"), float))
    flags = [c[-1] > c.min() + OVERFIT_RISE for c in curves]
    holds = on_every_seed(flags)
    lowest, last = Stat.of(c.min() for c in curves), Stat.of(c[-1] for c in curves)
    at = Stat.of(int(np.argmin(c)) + 1 for c in curves)
    add(claim(CHAPTER, "paper 001 Fig. 2b", "the larger LSTMs overfit: their error rate goes back up",
              "overfitting",
              f"{big}: lowest {_ms(lowest)} at epoch {_ms(at, 0)}, last {_ms(last)}; "
              f"rises on {sum(flags)} of {len(flags)} seeds",
              f"error rate of {big} at the last epoch trained > its lowest + {OVERFIT_RISE}; "
              f"{EVERY_SEED_RULE}",
              holds, seeds=len(seeds[big]), cause="noise" if holds is None else None))

    # ---- Fig. 2c: at a given training loss, URNs err less (the whole curve, per seed pair)
    def shares(n: int) -> Stat:
        lstm = dict(zip(seeds[f"LSTM {n}"].seeds, seeds[f"LSTM {n}"].runs))
        values = []
        for seed, urn in zip(seeds[f"URN {n}"].seeds, seeds[f"URN {n}"].runs):
            if seed in lstm:
                s = share_lower_at_matched_x(urn.column("train_loss"), urn.column("error_rate"),
                                             lstm[seed].column("train_loss"), lstm[seed].column("error_rate"))
                values.append(math.nan if s is None else s)
        return Stat.of(values)

    share = {n: shares(n) for n in pairs}
    parts = [at_least(share[n], SHARE) for n in pairs]
    holds, partly = combine(parts)
    add(claim(CHAPTER, "paper 001 Fig. 2c",
              "at a given training loss, URNs have lower error rates than LSTMs",
              "URN lower",
              "; ".join(f"{n}: URN lower at {_ms(share[n], 2)} of shared loss levels" if share[n].n
                        else f"{n}: no shared range" for n in pairs),
              f"share of the training-loss levels both reach where the URN's error is lower (seed against "
              f"seed, whole curves) >= {SHARE} at every size; {THRESHOLD_RULE}",
              holds, partly, seeds=n_all, cause=_noise(holds, parts, list(share.values()))))

    # ---- Fig. 2c: URN 32 below 0.4 error at training loss 1 (the whole curve, per seed)
    if 32 in pairs:
        def low_at_one(run: Run) -> float:
            at_one = [e for e, tl in zip(run.column("error_rate"), run.column("train_loss"))
                      if tl >= PAPER_URN32_LOSS]
            return min(at_one) if at_one else math.nan

        stat = seeds["URN 32"].stat(low_at_one)
        holds = at_most(stat, PAPER_URN32_ERROR)
        never = (f"; {stat.missing} seeds never at training loss >= {PAPER_URN32_LOSS:g}" if stat.missing
                 else "")
        add(claim(CHAPTER, "paper 001 Fig. 2c",
                  "the 32-unit URN gets below 0.4 error while its training loss is still as high as 1",
                  f"< {PAPER_URN32_ERROR} at training loss {PAPER_URN32_LOSS:g}",
                  (f"lowest error at training loss >= {PAPER_URN32_LOSS:g}: {_ms(stat)}{never}" if stat.n
                   else f"training loss never >= {PAPER_URN32_LOSS:g} after epoch 1"),
                  f"per seed, the lowest error rate of an epoch with training loss >= {PAPER_URN32_LOSS:g} "
                  f"(nats per symbol) <= {PAPER_URN32_ERROR}; {THRESHOLD_RULE}",
                  holds, seeds=len(seeds["URN 32"]),
                  cause="noise" if holds is None and stat.n else None))

    # ---- Fig. 2c: URNs' error falls smoothly (the whole curve, per seed)
    def largest_fall(run: Run) -> float:
        return max(0.0, float(np.max(-np.diff(run.column("error_rate")), initial=0.0)))

    drops = {lab: seeds[lab].stat(largest_fall) for lab in labels}
    parts = [beats(drops[f"URN {n}"], drops[f"LSTM {n}"], higher=False) for n in pairs]
    holds, partly = combine(parts)
    add(claim(CHAPTER, "paper 001 Fig. 2c", "URNs' error rate falls smoothly; LSTMs' drops sharply",
              "URN smoother", "; ".join(f"{lab}: {_ms(d, 2)}" for lab, d in drops.items()),
              "largest one-epoch fall of the error rate (whole curve) URN < LSTM at every size; "
              f"{BEATS_RULE}",
              holds, partly, seeds=n_all, cause=_noise(holds, parts, list(drops.values()))))

    # ---- sec. 3.1, Fig. 2d: lengths unseen in training (best epoch)
    unseen = {lab: seeds[lab].stat(lambda run: _unseen_seen(run, train_k)[0]) for lab in labels}
    seen = {lab: seeds[lab].stat(lambda run: _unseen_seen(run, train_k)[1]) for lab in labels}
    if not any(s.n for s in unseen.values()):  # the test language has no length beyond the training one
        add(claim(CHAPTER, "paper 001 sec. 3.1, Fig. 2d", "behaviour on lengths unseen in training",
                  "errors on unseen lengths; LSTM better there", "no unseen length in the test set",
                  f"needs test_k > train_k (here {train_k})", None, seeds=n_all))
        return out
    parts = [beats(unseen[lab], seen[lab], higher=True) for lab in labels]
    holds, partly = combine(parts)
    add(claim(CHAPTER, "paper 001 sec. 3.1",
              "both architectures fit the training lengths but err on longer, unseen strings",
              "errors on unseen lengths",
              "; ".join(f"{lab}: seen {_ms(seen[lab], 2)}, unseen {_ms(unseen[lab], 2)}" for lab in labels),
              f"mean error over unseen lengths > over seen lengths (best epoch), every model; {BEATS_RULE}",
              holds, partly, seeds=n_all,
              cause=_noise(holds, parts, [*unseen.values(), *seen.values()])))

    parts = [beats(unseen[f"LSTM {n}"], unseen[f"URN {n}"], higher=False) for n in pairs]
    holds, partly = _most(parts)
    add(claim(CHAPTER, "paper 001 Fig. 2d", "LSTMs do better than URNs on lengths unseen in training",
              "LSTM better overall",
              "; ".join(f"{n}: LSTM {_ms(unseen[f'LSTM {n}'], 2)} vs URN {_ms(unseen[f'URN {n}'], 2)}"
                        for n in pairs),
              "mean unseen-length error (best epoch) LSTM < URN at every size but one at most; "
              f"{BEATS_RULE}", holds, partly, seeds=n_all,
              cause=_noise(holds, parts, list(unseen.values()))))

    sizes = sorted(pairs)
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        parts = [beats(unseen[f"URN {large}"], unseen[f"URN {small}"], higher=False),  # URN: lower error
                 beats(unseen[f"LSTM {large}"], unseen[f"LSTM {small}"], higher=True)]  # LSTM: higher
        holds, partly = combine(parts)
        add(claim(CHAPTER, "paper 001 Fig. 2d",
                  "on unseen lengths URNs improve with more units while LSTMs get worse",
                  "URN better, LSTM worse with size",
                  f"URN {_ms(unseen[f'URN {small}'], 2)} -> {_ms(unseen[f'URN {large}'], 2)}; "
                  f"LSTM {_ms(unseen[f'LSTM {small}'], 2)} -> {_ms(unseen[f'LSTM {large}'], 2)} "
                  f"({small} -> {large} units)",
                  "mean unseen-length error (best epoch) lower for the largest URN than the smallest, higher "
                  f"for the largest LSTM than the smallest; {BEATS_RULE}",
                  holds, partly, seeds=n_all, cause=_noise(holds, parts, list(unseen.values()))))
    return out
