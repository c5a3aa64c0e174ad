"""Tables, figures and claims of the matrix-embedding chapter (paper 003 sec. 5), from stored runs.

Every function takes the chapter's runs grouped by model, ``{label: Seeds}``
(``urnlib.experiments.matrix_embeddings.Config.view``): the matrix models (kinds 4.1, 4.2, 4.3) and the
baselines (word2vec, Kneser-Ney, the URN language model), told apart by the model kind in their parameters.
Every number is a run's best epoch (lowest held-out loss: its stored final metrics and weights), shown as the
mean ± sd over seeds. The analogy answers of both representations of the matrices come from ``scores``
(``urnlib.experiments.matrix_embeddings.analogy_scores``): ``{run name: {"log" | "exp": sections or None}}``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.plots.curves import curves_panel, panel_grid
from urnlib.reports.common import looks
from urnlib.seeds import Seeds, Stat, band

CHAPTER = "matrix_embeddings"
MATRIX_KINDS = ("4.1", "4.2", "4.3")  #: paper 003 sec. 4.1-4.3
#: paper 003 sec. 5: Google analogy questions answered correctly (UMBC corpus, 3.3G words)
PAPER_CORRECT = {"4.2 diagonal 100": "555", "4.2 dense 10": "81", "4.3 dense 10": "1-2"}
PAPER_WORDS = 3_338_000_000  # paper 003 sec. 5: "about 3.338G words"
#: the analogy vectors: the log entries (what the authors' code writes out: the paper's counts are of these)
#: and the entries themselves; the baselines' vectors are what they are
REPRESENTATION_LABELS = {"log": "log entries", "exp": "entries (exp) / vectors"}
STAND_IN = "Brown + State of the Union"  # the corpus that stands in for UMBC (cause "data")

View = dict[str, Seeds]


def _kind(seeds: Seeds) -> str:
    return seeds[0].params["model"]["kind"]


def matrix_view(view: View) -> View:
    """The matrix models (paper 003 sec. 4.1-4.3)."""
    return {k: s for k, s in view.items() if _kind(s) in MATRIX_KINDS}


def _stats(view: View) -> dict:
    return next(iter(view.values()))[0].final["data"]


def data_line(view: View) -> str:
    """The corpus as the runs saw it (Markdown)."""
    s = _stats(view)
    return (f"{s['train_sentences']:,} training sentences ({s['train_tokens']:,} words), "
            f"{s['test_sentences']:,} held out ({s['test_tokens']:,} words); vocabulary {s['vocabulary']:,} "
            f"(`<unk>` is {s['unk_share_train']:.1%} of the training words); the paper's corpus is "
            f"{PAPER_WORDS / s['train_tokens']:,.0f} times larger. Every run uses this one split.")


def chance_level(view: View) -> float:
    """Questions a random guess would answer: each answered question right with probability 1 / (V - 3)."""
    run = next(iter(matrix_view(view).values()))[0]
    return run.final["analogies_answered"] / (run.final["data"]["vocabulary"] - 3)


def analogy_line(view: View) -> str:
    """How many analogy questions there are, how many this vocabulary can answer, and chance (Markdown)."""
    sections = next(iter(matrix_view(view).values()))[0].final["analogy_sections"]
    total = sections["total"]
    return (f"The Google analogy set has {total['questions']:,} questions in {len(sections) - 1} sections; "
            f"{total['answered']:,} have all four words in this vocabulary. A random guess would answer "
            f"{chance_level(view):.1f} of them.")


def correct(seeds: Seeds, scores: dict, representation: str, section: str = "total") -> Stat:
    """Correct answers per seed: a matrix model's in ``representation`` (NaN where not scored), a baseline's
    stored count (its vectors have one representation)."""
    if _kind(seeds) not in MATRIX_KINDS:
        return seeds.final("analogies_correct")

    def one(run) -> float:
        sections = (scores.get(run.name) or {}).get(representation)
        return float("nan") if sections is None else sections[section]["correct"]
    return seeds.stat(one)


def analogy_table(view: View, scores: dict) -> pd.DataFrame:
    """Paper 003's table: Google analogy questions correct (3CosAdd, top-1), mean ± sd over seeds, in both
    representations of the matrices, next to the paper's; a baseline's vectors have one (shown as entries)."""
    rows = []
    for label, seeds in view.items():
        if "analogies_correct" not in seeds[0].final:  # Kneser-Ney has no embeddings
            continue
        matrix = _kind(seeds) in MATRIX_KINDS
        rows.append({"model": label, "seeds": len(seeds), "parameters": seeds[0].final["n_params"],
                     "correct (paper)": PAPER_CORRECT.get(label, ""),
                     **{f"correct: {name}": correct(seeds, scores, rep).text(1) if matrix or rep == "exp"
                        else "-" for rep, name in REPRESENTATION_LABELS.items()},
                     "answered": seeds[0].final["analogies_answered"]})
    return pd.DataFrame(rows)


def section_table(view: View, scores: dict, representation: str = "log") -> pd.DataFrame:
    """Correct answers per section (mean over seeds) of each matrix model in ``representation``; the
    sections with at least one answered question."""
    models = matrix_view(view)
    first = next(iter(models.values()))[0].final["analogy_sections"]
    cols = {label: {s: correct(seeds, scores, representation, s).mean for s in first}
            for label, seeds in models.items()}
    df = pd.DataFrame(cols).dropna(axis=1, how="all")  # a model without this representation (4.1's log)
    df.insert(0, "answered", [first[s]["answered"] for s in df.index])
    df.insert(0, "questions", [first[s]["questions"] for s in df.index])
    return df[df["answered"] > 0]


def _epochs(seeds: Seeds) -> str:
    best = [int(np.argmin(r.column("test_loss"))) + 1 for r in seeds]
    run = [len(r.history) for r in seeds]
    return ", ".join(f"{b}/{n}" for b, n in zip(best, run))


def perplexity_table(view: View) -> pd.DataFrame:
    """Per-word perplexity on the held-out sentences (no end-of-sentence prediction) at each run's best epoch,
    and the best epoch / epochs run of every seed."""
    rows = []
    for label, seeds in view.items():
        kind = _kind(seeds)
        if kind in ("word2vec",):
            continue
        note = {"4.1": "uses both-side context: a pseudo-perplexity",
                "urn": "orthogonal word matrices, softmax readout"}.get(kind, "")
        if kind == "kneser-ney":
            note = (f"count-based, deterministic: one run; with the end-of-sentence prediction: "
                    f"{seeds[0].final['perplexity_with_end']:.1f}")
        perplexity = seeds.final("perplexity")
        rows.append({"model": label, "held-out perplexity": f"{perplexity.mean:.1f}" if kind == "kneser-ney"
                     else perplexity.text(1),
                     "best epoch / epochs run": "-" if kind == "kneser-ney" else _epochs(seeds),
                     "note": note})
    return pd.DataFrame(rows)


def properties_table(view: View) -> pd.DataFrame:
    """Sec. 4.2's properties measured on each trained 4.2 model (float64 on float32 parameters), the worst
    seed."""
    rows = []
    for label, seeds in matrix_view(view).items():
        props = [r.final.get("properties") for r in seeds]
        if not all(props):
            continue
        worst = lambda f: max(f(p) for p in props)  # noqa: E731
        rows.append({"model": label,
                     "max |row sum of M_* - 1|": worst(lambda p: p["row_sum_error"]),
                     "max |(1/d) 1^T M_*^n 1 - 1|, n = 1..5": worst(
                         lambda p: max(abs(x - 1) for x in p["one_star_power"])),
                     "max |sum over all strings - 1|, length 1": worst(lambda p: abs(p["sum_length1"] - 1)),
                     "max |sum over all strings - 1|, length 2": worst(lambda p: abs(p["sum_length2"] - 1)),
                     "M_* appended: max relative change": worst(lambda p: p["star_at_end_change"]),
                     "M_* in the middle: median relative change": worst(
                         lambda p: p["star_in_middle_change"])})
    return pd.DataFrame(rows)


def neighbours_table(view: View) -> pd.DataFrame:
    """The 5 nearest words (cosine) of the probe words each model's first seed stored: one row per probe word
    (sorted) and model, the neighbours comma-separated in one cell (three columns however many models)."""
    models = {label: seeds[0] for label, seeds in view.items() if "neighbours" in seeds[0].final}
    probes = sorted({p for r in models.values() for p in r.final["neighbours"]})
    index = pd.MultiIndex.from_tuples([(p, label) for p in probes for label in models],
                                      names=["word", "model"])
    return pd.DataFrame({"nearest words": [", ".join(models[label].final["neighbours"].get(p, []))
                                           for p, label in index]}, index=index)


def curves(view: View):
    """Held-out perplexity (a) and analogy questions correct with the entries (b) after every epoch, per
    matrix model: mean over seeds with a ± sd band (seeds that stopped early leave the band)."""
    models = matrix_view(view)
    styles = looks(models)  # each model's from its spec
    fig, (a, b) = panel_grid(1, 2, width=10.4, height=3.8)
    curves_panel(a, {k: band(s, lambda r: np.exp(r.column("test_loss"))) for k, s in models.items()}, styles,
                 xlabel="epoch", ylabel="held-out perplexity (per word)", title="perplexity", logy=True,
                 markers=True)
    curves_panel(b, {k: band(s, "analogies_correct") for k, s in models.items()}, styles,
                 xlabel="epoch", ylabel="analogy questions correct (entries)",
                 title="Google analogies, 3CosAdd on the entries", markers=True)
    for ax in (a, b):
        ax.xaxis.get_major_locator().set_params(integer=True)  # whole epochs
    b.legend(fontsize="small")
    return fig


def peaks(view: View) -> str:
    """Where each matrix model's per-epoch analogy score (entries) peaked, against its score at the best
    held-out epoch (Markdown)."""
    parts = []
    for label, seeds in matrix_view(view).items():
        peak = seeds.stat(lambda r: max(r.column("analogies_correct")))
        at = ", ".join(str(int(np.argmax(r.column("analogies_correct"))) + 1) for r in seeds)
        best = seeds.final("analogies_correct")
        parts.append(f"{label}: peak {peak.text(1)} (after epochs {at}), at the best epoch {best.text(1)}")
    return "Analogy questions correct with the entries during training - " + "; ".join(parts) + "."


def _find(models: View, prefix: str) -> Seeds | None:
    return next((s for k, s in models.items() if k.startswith(prefix)), None)


def _both(seeds: Seeds, scores: dict) -> str:
    return (f"log {correct(seeds, scores, 'log').text(1)}; exp {correct(seeds, scores, 'exp').text(1)}")


def claims(view: View, scores: dict, tol: float = 1e-5) -> list[Claim]:
    """The chapter's claims, decided by :mod:`urnlib.rules` on the seeds at each run's best epoch. The analogy
    claims are decided on the log entries, the representation the paper's counts come from; the entries
    (exp) are shown beside them."""
    models = matrix_view(view)
    diag, dense, wfsa = (_find(models, p) for p in ("4.2 diagonal", "4.2 dense", "4.3"))
    out: list[Claim] = []
    chance = chance_level(view) if models else 0.0
    guard = f"{rules.CHANCE_RULE}: chance = {chance:.1f} correct"
    if diag is not None and dense is not None:
        n = min(len(diag), len(dense))
        a, b = correct(diag, scores, "log"), correct(dense, scores, "log")
        holds, cause = _decide(rules.beats(a, b), chance, a, b)
        out.append(claim(CHAPTER, "paper 003 sec. 5, table", "commutative (diagonal) 4.2 answers more "
                         "analogies than dense 4.2", "555 vs 81",
                         f"diagonal: {_both(diag, scores)}; dense: {_both(dense, scores)}",
                         f"diagonal > dense on the log entries ({rules.BEATS_RULE}); {guard}", holds,
                         seeds=n, cause=cause))
        ratio = PAPER_WORDS / _stats(view)["train_tokens"]
        out.append(claim(CHAPTER, "paper 003 sec. 5, table", "the numbers of correct answers",
                         "555 and 81 (UMBC, 3.3G words)",
                         f"log {a.text(1)} and {b.text(1)} ({STAND_IN})",
                         f"not comparable: the paper's corpus is {ratio:,.0f} times larger", None, seeds=n,
                         cause="data"))
    if wfsa is not None and diag is not None and dense is not None:
        w = correct(wfsa, scores, "log")
        sides = [correct(s, scores, "log") for s in (diag, dense)]
        holds, partly = rules.combine(rules.beats(s, w) for s in sides)
        holds, cause = _decide(holds, chance, *sides)
        out.append(claim(CHAPTER, "paper 003 sec. 5", "the continuous WFSA (4.3) answers almost no analogy "
                         "(fewer than 4.2)", "1 or 2",
                         f"{_both(wfsa, scores)} (4.2: log {sides[0].text(1)} and {sides[1].text(1)})",
                         f"4.3 below both 4.2 models on the log entries ({rules.BEATS_RULE}); {guard} for "
                         "4.2", holds, partly, seeds=len(wfsa), cause=cause))
    out += _property_claims(models, tol)
    return out


def _decide(holds: bool | None, chance: float, *sides: Stat) -> tuple[bool | None, str | None]:
    """A comparison's verdict under the chance guard, and the cause of a miss: no log score (runs stored
    without weights: open), a side at chance or a miss (the stand-in corpus: data), the seeds' spread
    (noise)."""
    if not all(s.n for s in sides):
        return None, "open"
    if not rules.off_chance(chance, *sides):
        return None, "data"
    return holds, "noise" if holds is None else "data"


def _property_claims(models: View, tol: float) -> list[Claim]:
    """Sec. 4.2's properties: each holds for a model when it holds on every seed, and for the claim when it
    holds for every 4.2 model (:func:`urnlib.rules.combine`)."""
    seeds = {label: s for label, s in models.items() if all(r.final.get("properties") for r in s)}
    if not seeds:
        return []
    n = min(len(s) for s in seeds.values())
    props = [r.final["properties"] for s in seeds.values() for r in s]

    def decide(test) -> tuple[bool | None, bool]:
        return rules.combine(rules.on_every_seed(test(r.final["properties"]) for r in s)
                             for s in seeds.values())

    sums = lambda p: max(abs(p["sum_length1"] - 1), abs(p["sum_length2"] - 1))  # noqa: E731
    power = lambda p: max(abs(x - 1) for x in p["one_star_power"])  # noqa: E731
    end, middle = (max(p[k] for p in props) for k in ("star_at_end_change", "star_in_middle_change"))
    appended, _ = decide(lambda p: p["star_at_end_change"] < tol)
    anywhere, partly = decide(lambda p: p["star_at_end_change"] < tol and p["star_in_middle_change"] < tol)
    every = f"on every seed of every 4.2 model ({', '.join(seeds)}; mixed seeds: not decided)"
    return [
        claim(CHAPTER, "paper 003 sec. 4.2", "P sums to 1 over all strings of each length", "exactly 1",
              f"largest deviation {max(map(sums, props)):.1e} (all V and V^2 strings)",
              f"|sum - 1| < {tol:g} for lengths 1 and 2, {every}", *decide(lambda p: sums(p) < tol), seeds=n),
        claim(CHAPTER, "paper 003 sec. 4.2", "(1/d) 1^T M_*^n 1 = 1", "for n = 0, 1, 2, ...",
              f"largest deviation {max(map(power, props)):.1e} for n = 1..5", f"< {tol:g}, {every}",
              *decide(lambda p: power(p) < tol), seeds=n),
        claim(CHAPTER, "paper 003 sec. 4.2", "M_* does not change the probability of any sequence, no matter "
              "where it is inserted", "no change anywhere",
              f"appended: {end:.1e}; in the middle: median {middle:.1e} (it gives the skip-gram marginal)",
              f"relative change < {tol:g} wherever it is inserted, {every}", anywhere,
              partly=partly or appended is True, seeds=n,  # it holds only where M_* = I: appended, or
              cause="noise" if anywhere is None else "paper"),  # with the diagonal algebra
    ]
