"""Tables of the TPRU chapter's sec. 4 checks (paper 002): the gradient formulas against autograd and the
parameter counts of Table 1 against the built encoders, from the rows of :mod:`urnlib.chapters.tpru.checks`
(computed without training); and the spread of the encoders' sentence vectors, from the rows of
:mod:`urnlib.chapters.tpru.features`."""

from __future__ import annotations

import math

import pandas as pd

from urnlib.chapters.tpru.report import format_params
from urnlib.seeds import Seeds, Stat

__all__ = ["gradient_table", "gradient_line", "table1_table", "table1_line", "feature_table", "feature_line",
           "escape_line", "escape_summary", "left_chance", "NEAR_CHANCE"]

NEAR_CHANCE = 0.01  #: a training loss within this of ln 2 (the loss of a coin) counts as "at chance" here


def gradient_table(rows: list[dict]) -> pd.DataFrame:
    """The gradient checks (:func:`urnlib.chapters.tpru.checks.gradient_checks`), one row per setting:
    differences from autograd and the smallest eigenvalues in scientific notation, ratios to 3 places."""
    names = {"eq8_printed": "eq. 8 as printed: max |diff|", "eq8_corrected": "eq. 8 corrected: max |diff|",
             "eq7_printed": "eq. 7 as printed: max |diff|", "eq7_corrected": "eq. 7 corrected: max |diff|",
             "J_min_eig": "J_t (from f_t): min eigenvalue",
             "J_max_eig_over_max_f": "J_t (from f_t): max eig / max f",
             "J_printed_min_eig": "J_t as printed (f_b): min eigenvalue", "max_f_b": "max (f_b)_n"}
    formats = {"J_max_eig_over_max_f": "{:.3f}", "J_printed_min_eig": "{:.2f}", "max_f_b": "{:.3f}"}
    out = []
    for r in rows:
        row = {"setting": f"{r['variant']}, {r['slices']} slice(s), {r['trials']} random steps"}
        row.update({title: formats.get(key, "{:.1e}").format(r[key]) for key, title in names.items()})
        out.append(row)
    return pd.DataFrame(out)


def table1_table(rows: list[dict]) -> pd.DataFrame:
    """Table 1 "# Params" against the built encoders, and the counts printed in Tables 2 and 4."""
    out = []
    for r in rows:
        out.append({"model": r["kind"].upper(), "d": r["d"], "d'": r["d_in"], "layers": r["layers"],
                    "Table 1 formula (weights)": f"{r['formula']:,}", "built: weights": f"{r['weights']:,}",
                    "built: biases": f"{r['biases']:,}", "built: total": f"{r['total']:,}",
                    "paper's printed count": "" if r["paper"] is None
                    else f"{format_params(r['paper'])} ({r['paper_source']})",
                    "Table 1 time per step": f"{r['time']:,}"})
    return pd.DataFrame(out)


def gradient_line(rows: list[dict]) -> str:
    """What the gradient checks found, in short (Markdown): the largest differences from autograd of eqs. 7
    and 8 as printed and as derived here, and the eigenvalues of J_t, over every setting of ``rows``."""
    top = {key: max(r[key] for r in rows) for key in ("eq8_printed", "eq8_corrected", "eq7_printed",
                                                     "eq7_corrected", "J_max_eig_over_max_f")}
    low = {key: min(r[key] for r in rows) for key in ("J_min_eig", "J_printed_min_eig")}
    return (f"Against autograd, eq. 8 as printed is off by up to {top['eq8_printed']:.1e} and eq. 7 by up to "
            f"{top['eq7_printed']:.1e}; the forms derived here by at most {top['eq8_corrected']:.1e} and "
            f"{top['eq7_corrected']:.1e}. The smallest eigenvalue of their $J_t$ is {low['J_min_eig']:.1e} "
            f"and the largest at most {top['J_max_eig_over_max_f']:.3f} times $\\max_n (f_t)_n$ (appendix A: "
            f"between 0 and that maximum); $J_t$ built as printed, from $f_{{b,t}}$, has eigenvalues down to "
            f"{low['J_printed_min_eig']:.2f}.")


def table1_line(rows: list[dict]) -> str:
    """What the Table 1 check found, in short (Markdown): whether its formulas count the built modules'
    weights, and each printed count of Tables 2 and 4 as a multiple of the formula."""
    off = [f"{r['kind'].upper()} ({r['d']}, {r['d_in']})" for r in rows if r["formula"] != r["weights"]]
    match = ("Table 1's formulas give the weights of the built modules in every setting" if not off else
             f"Table 1's formulas miss the built modules' weights for {', '.join(off)}")
    printed = [f"{r['kind'].upper()} {format_params(r['paper'])} ({r['paper_source']}), "
               f"{r['paper'] / r['formula']:.1f} times the formula" for r in rows if r["paper"] is not None]
    return match + ("; the printed counts: " + "; ".join(printed) if printed else "") + "."


def _stats(row: dict) -> dict[str, Stat]:
    return {"loss": Stat.of(row["train_loss"]),
            "pr_init": Stat.of(p for p, _ in row["init"]),
            "pr_trained": Stat.of(p for p, _ in row["trained"]),
            "top_init": Stat.of(100 * t for _, t in row["init"] if not math.isnan(t)),
            "top_trained": Stat.of(100 * t for _, t in row["trained"] if not math.isnan(t))}


def _at_chance(loss: float) -> bool:
    return loss > math.log(2) - NEAR_CHANCE


def _by_chance(rows: list[dict]) -> list[dict]:
    """Each row of an encoder whose seeds differ (some at chance, some not) split in two, one per group, the
    seeds named in the label; a mean over both would describe neither."""
    out = []
    for r in rows:
        groups = [[i for i, loss in enumerate(r["train_loss"]) if _at_chance(loss) is flag]
                  for flag in (True, False)]
        if not all(groups):
            out.append(r)
            continue
        for idx in groups:
            seeds = [r["seeds"][i] for i in idx]
            label = f"{r['model']} (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})"
            out.append({**r, "model": label, "seeds": seeds,
                        **{k: [r[k][i] for i in idx] for k in ("train_loss", "init", "trained")}})
    return out


def feature_table(rows: list[dict]) -> pd.DataFrame:
    """The spread of each encoder's premise vectors (:func:`urnlib.chapters.tpru.features.feature_spread`),
    mean ± sd over its seeds (over the seeds at chance and the others apart, where an encoder has both)."""
    out = []
    for r in _by_chance(rows):
        st = _stats(r)
        out.append({"encoder": r["model"], "training loss (last epoch)": st["loss"].mean_sd(3),
                    "participation ratio: initial": st["pr_init"].mean_sd(1),
                    "participation ratio: trained": st["pr_trained"].mean_sd(1),
                    "first direction (% of variance): initial": st["top_init"].mean_sd(0),
                    "first direction (% of variance): trained": st["top_trained"].mean_sd(0)})
    return pd.DataFrame(out)


def feature_line(rows: list[dict]) -> str:
    """Which encoders (or which of their seeds) ended at chance (training loss within :data:`NEAR_CHANCE` of
    ln 2) and how much of their vectors' variance lies in one direction, against the others (Markdown)."""
    def describe(r: dict) -> str:
        st = _stats(r)
        return (f"{r['model']}: loss {st['loss'].mean:.3f}, first direction {st['top_trained'].mean_sd(0)}% "
                f"of the variance trained ({st['top_init'].mean_sd(0)}% initial)")

    rows = _by_chance(rows)
    near = [r for r in rows if all(map(_at_chance, r["train_loss"]))]
    off = [r for r in rows if r not in near]
    text = (f"Ended at chance (training loss of the last epoch within {NEAR_CHANCE} of ln 2 = "
            f"{math.log(2):.3f}): {'; '.join(map(describe, near)) if near else 'none'}. ")
    return text + f"Below it: {'; '.join(map(describe, off)) if off else 'none'}."


def left_chance(run) -> int | None:
    """The first epoch whose mean training loss is below ln 2 - :data:`NEAR_CHANCE`; None if none is."""
    bar = math.log(2) - NEAR_CHANCE
    return next((e + 1 for e, v in enumerate(run.column("train_loss")) if v < bar), None)


def escape_summary(groups: dict[str, Seeds]) -> str:
    """:func:`escape_line` in short (Markdown): how many seeds of how many left chance, the latest escape, and
    the encoders with seeds that never did."""
    left = {label: [left_chance(r) for r in seeds] for label, seeds in groups.items()}
    done = [(e, label) for label, es in left.items() for e in es if e is not None]
    stuck = [f"{label} ({sum(e is None for e in es)} of {len(es)})" for label, es in left.items()
             if None in es]
    text = (f"{len(done)} of {sum(map(len, left.values()))} seeds left chance (training loss below ln 2 - "
            f"{NEAR_CHANCE})")
    if done:
        late = max(done)
        text += f", the latest at epoch {late[0]} ({late[1]})"
    return text + (f"; never: {', '.join(stuck)}." if stuck else ".")


def escape_line(groups: dict[str, Seeds]) -> str:
    """Per encoder, how many seeds left chance (training loss below ln 2 - :data:`NEAR_CHANCE`) and at which
    epoch, and how long those that never did trained; then whether the latest escape came before the shortest
    stuck run stopped, i.e. whether the stopping rule could have cut off a late escape (Markdown)."""
    parts, escapes, stuck = [], [], []
    for label, seeds in groups.items():
        left = [left_chance(r) for r in seeds]
        done = [e for e in left if e is not None]
        never = [len(r.history) for r, e in zip(seeds, left) if e is None]
        escapes += done
        stuck += never
        text = f"{label}: {len(done)} of {len(left)} seeds"
        if done:
            text += f", at epoch{'s' if len(done) > 1 else ''} {', '.join(map(str, done))}"
        if never:
            text += f"; {len(never)} never did, in {', '.join(map(str, never))} epochs"
        parts.append(text)
    out = (f"Left chance (training loss below ln 2 - {NEAR_CHANCE} = {math.log(2) - NEAR_CHANCE:.3f}): "
           + "; ".join(parts) + ".")
    if escapes and stuck:
        late, short = max(escapes), min(stuck)
        out += (f" The latest escape came at epoch {late}, the shortest run that stayed at chance trained "
                f"{short} epochs: " + (f"{short / late:.1f} times as long, so the stopping rule did not cut "
                                       "these runs off before the others had escaped." if short > late else
                                       "a longer minimum might let more seeds escape."))
    return out
