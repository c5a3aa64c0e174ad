"""Tables, figures and claims of the matrix-embedding chapter (paper 003 sec. 5), from stored runs.

Every function takes the chapter's runs by name (``urnlib.experiments.matrix_embeddings.run``): the matrix
models (kinds 4.1, 4.2, 4.3) and the baselines (word2vec, Kneser-Ney, the URN language model), told apart by
the model kind in their parameters.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from urnlib.claims import Claim, claim
from urnlib.plots.curves import curves_panel, panel_grid
from urnlib.results import Run

CHAPTER = "matrix_embeddings"
MATRIX_KINDS = ("4.1", "4.2", "4.3")  #: paper 003 sec. 4.1-4.3
#: paper 003 sec. 5: Google analogy questions answered correctly (UMBC corpus, 3.3G words)
PAPER_CORRECT = {"4.2 diagonal 100": "555", "4.2 dense 10": "81", "4.3 dense 10": "1-2"}
PAPER_WORDS = 3_338_000_000  # paper 003 sec. 5: "about 3.338G words"


def _kind(run: Run) -> str:
    return run.params["model"]["kind"]


def matrix_runs(runs: dict[str, Run]) -> dict[str, Run]:
    """The runs of the matrix models (paper 003 sec. 4.1-4.3)."""
    return {k: r for k, r in runs.items() if _kind(r) in MATRIX_KINDS}


def baseline_runs(runs: dict[str, Run]) -> dict[str, Run]:
    """The baselines: word2vec, Kneser-Ney, the URN language model."""
    return {k: r for k, r in runs.items() if _kind(r) not in MATRIX_KINDS}


def _embeddings(runs: dict[str, Run]) -> dict[str, Run]:
    """The runs that have word embeddings (all but Kneser-Ney): they answer analogies and have neighbours."""
    return {k: r for k, r in runs.items() if "neighbours" in r.final}


def data_line(runs: dict[str, Run]) -> str:
    """The corpus as the runs saw it (Markdown)."""
    s = next(iter(runs.values())).final["data"]
    return (f"{s['train_sentences']:,} training sentences ({s['train_tokens']:,} words), "
            f"{s['test_sentences']:,} held out ({s['test_tokens']:,} words); vocabulary {s['vocabulary']:,} "
            f"(`<unk>` is {s['unk_share_train']:.1%} of the training words); the paper's corpus is "
            f"{PAPER_WORDS / s['train_tokens']:,.0f} times larger.")


def analogy_line(runs: dict[str, Run]) -> str:
    """How many analogy questions there are and how many this vocabulary can answer (Markdown)."""
    sections = next(r for r in matrix_runs(runs).values()).final["analogy_sections"]
    total = sections["total"]
    return (f"The Google analogy set has {total['questions']:,} questions in {len(sections) - 1} sections; "
            f"{total['answered']:,} have all four words in this vocabulary.")


def analogy_table(runs: dict[str, Run]) -> pd.DataFrame:
    """Paper 003's table: Google analogy questions correct (3CosAdd, top-1), ours next to the paper's."""
    rows = []
    for label, run in _embeddings(runs).items():
        f = run.final
        rows.append({"model": label, "parameters": f["n_params"],
                     "correct (paper)": PAPER_CORRECT.get(label, ""),
                     "correct (ours)": f["analogies_correct"], "answered": f["analogies_answered"],
                     "skipped (out of vocabulary)": f["analogies_skipped"],
                     "accuracy on answered": f["analogies_correct"] / max(f["analogies_answered"], 1)})
    return pd.DataFrame(rows)


def section_table(runs: dict[str, Run]) -> pd.DataFrame:
    """Correct answers per section of the analogy set (the sections with at least one answered question)."""
    models = matrix_runs(runs)
    cols = {label: {s: v["correct"] for s, v in run.final["analogy_sections"].items()}
            for label, run in models.items()}
    any_run = next(iter(models.values())).final["analogy_sections"]
    df = pd.DataFrame(cols)
    df.insert(0, "answered", [any_run[s]["answered"] for s in df.index])
    df.insert(0, "questions", [any_run[s]["questions"] for s in df.index])
    return df[df["answered"] > 0]


def perplexity_table(runs: dict[str, Run]) -> pd.DataFrame:
    """Per-word perplexity on the held-out sentences (no end-of-sentence prediction)."""
    rows = [{"model": k, "held-out perplexity": r.final["perplexity"],
             "note": "uses both-side context: a pseudo-perplexity" if _kind(r) == "4.1" else ""}
            for k, r in matrix_runs(runs).items()]
    for k, r in baseline_runs(runs).items():
        if _kind(r) == "urn":
            rows.append({"model": k, "held-out perplexity": r.final["perplexity"],
                         "note": "orthogonal word matrices, softmax readout"})
        if _kind(r) == "kneser-ney":
            with_end = r.final["perplexity_with_end"]
            rows.append({"model": k, "held-out perplexity": r.final["perplexity"],
                         "note": f"with the end-of-sentence prediction: {with_end:.1f}"})
    return pd.DataFrame(rows)


def properties_table(runs: dict[str, Run]) -> pd.DataFrame:
    """Sec. 4.2's properties measured on each trained 4.2 model (float64 on float32 parameters)."""
    rows = []
    for label, run in matrix_runs(runs).items():
        p = run.final.get("properties")
        if p:
            power = max(abs(x - 1) for x in p["one_star_power"])
            rows.append({"model": label, "max |row sum of M_* - 1|": p["row_sum_error"],
                         "max |(1/d) 1^T M_*^n 1 - 1|, n = 1..5": power,
                         "sum over all strings, length 1": p["sum_length1"],
                         "sum over all strings, length 2": p["sum_length2"],
                         "M_* appended: max relative change": p["star_at_end_change"],
                         "M_* in the middle: median relative change": p["star_in_middle_change"]})
    return pd.DataFrame(rows)


def neighbours_table(runs: dict[str, Run]) -> pd.DataFrame:
    """The 5 nearest words (cosine) of the probe words each run stored: one row per probe word (sorted) and
    model, the neighbours comma-separated in one cell, so that the table stays three columns wide however many
    models there are."""
    models = _embeddings(runs)
    probes = sorted({p for r in models.values() for p in r.final["neighbours"]})
    index = pd.MultiIndex.from_tuples([(p, label) for p in probes for label in models],
                                      names=["word", "model"])
    return pd.DataFrame({"nearest words": [", ".join(models[label].final["neighbours"].get(p, []))
                                           for p, label in index]}, index=index)


def curves(runs: dict[str, Run]):
    """Held-out perplexity (a) and analogy questions correct (b) after every epoch, per matrix model."""
    models = matrix_runs(runs)
    fig, (a, b) = panel_grid(1, 2, width=10.4, height=3.8)
    curves_panel(a, {k: (r.column("epoch"), np.exp(r.column("test_loss"))) for k, r in models.items()},
                 xlabel="epoch", ylabel="held-out perplexity (per word)", title="perplexity", logy=True,
                 markers=True)
    curves_panel(b, {k: (r.column("epoch"), r.column("analogies_correct")) for k, r in models.items()},
                 xlabel="epoch", ylabel="analogy questions correct", title="Google analogies, 3CosAdd",
                 markers=True)
    for ax in (a, b):
        ax.xaxis.get_major_locator().set_params(integer=True)  # whole epochs
    b.legend(fontsize="small")
    return fig


def peaks(runs: dict[str, Run]) -> str:
    """Where each matrix model's analogy score peaked during training, against its final score (Markdown)."""
    parts = []
    for label, run in matrix_runs(runs).items():
        scores = run.column("analogies_correct")
        best = int(np.argmax(scores))
        parts.append(f"{label}: best {scores[best]} after epoch {best + 1}, final {scores[-1]}")
    return "Analogy questions correct during training - " + "; ".join(parts) + "."


def claims(runs: dict[str, Run], tol: float = 1e-5) -> list[Claim]:
    """The chapter's claims, decided by rules fixed before the paper-scale runs were looked at."""
    runs = matrix_runs(runs)
    out = []
    diag = next((r for k, r in runs.items() if k.startswith("4.2 diagonal")), None)
    dense = next((r for k, r in runs.items() if k.startswith("4.2 dense")), None)
    wfsa = next((r for k, r in runs.items() if k.startswith("4.3")), None)
    if diag is not None and dense is not None:
        c_diag, c_dense = diag.final["analogies_correct"], dense.final["analogies_correct"]
        out.append(claim(CHAPTER, "paper 003 sec. 5, table", "commutative (diagonal) 4.2 answers more "
                         "analogies than dense 4.2", "555 vs 81", f"{c_diag} vs {c_dense}",
                         "diagonal correct > dense correct (not testable when both answer none)",
                         None if c_diag == c_dense == 0 else c_diag > c_dense))
        ratio = PAPER_WORDS / diag.final["data"]["train_tokens"]
        out.append(claim(CHAPTER, "paper 003 sec. 5, table", "the numbers of correct answers",
                         "555 and 81 (UMBC, 3.3G words)", f"{c_diag} and {c_dense} (this corpus)",
                         f"not comparable: the paper's corpus is {ratio:,.0f} times larger", None))
    if wfsa is not None and diag is not None and dense is not None:
        c = wfsa.final["analogies_correct"]
        lowest = min(diag.final["analogies_correct"], dense.final["analogies_correct"])
        out.append(claim(CHAPTER, "paper 003 sec. 5", "the continuous WFSA (4.3) answers almost no analogy",
                         "1 or 2", str(c),
                         "4.3 correct below both 4.2 models (not testable when they answer none)",
                         None if lowest == 0 else c < lowest))
    props = [(k, r.final["properties"]) for k, r in runs.items() if r.final.get("properties")]
    if props:
        worst_sum = max(max(abs(p["sum_length1"] - 1), abs(p["sum_length2"] - 1)) for _, p in props)
        out.append(claim(CHAPTER, "paper 003 sec. 4.2", "P sums to 1 over all strings of each length",
                         "exactly 1", f"largest deviation {worst_sum:.1e} (all V and V^2 strings)",
                         f"|sum - 1| < {tol:g} for lengths 1 and 2", worst_sum < tol))
        worst_pow = max(max(abs(x - 1) for x in p["one_star_power"]) for _, p in props)
        out.append(claim(CHAPTER, "paper 003 sec. 4.2", "(1/d) 1^T M_*^n 1 = 1", "for n = 0, 1, 2, ...",
                         f"largest deviation {worst_pow:.1e} for n = 1..5", f"< {tol:g}", worst_pow < tol))
        end = max(p["star_at_end_change"] for _, p in props)
        middle = max(p["star_in_middle_change"] for _, p in props)
        out.append(claim(CHAPTER, "paper 003 sec. 4.2", "M_* does not change the probability of any "
                         "sequence, no matter where it is inserted", "no change anywhere",
                         f"appended: {end:.1e}; in the middle: median {middle:.1e} (it gives the skip-gram "
                         "marginal)", f"relative change < {tol:g} wherever it is inserted",
                         bool(end < tol and middle < tol), partly=end < tol))
    return out
