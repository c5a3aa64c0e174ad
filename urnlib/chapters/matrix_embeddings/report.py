"""Tables, figures and claims of the matrix-embedding chapter (paper 003 sec. 5), from stored runs.

Every function takes the chapter's runs grouped by model, ``{label: Seeds}`` (the experiment's
``Config.view``): the matrix models (kinds 4.1, 4.2, 4.3) and the baselines (word2vec, Kneser-Ney, the URN
language model), told apart by the model kind in their parameters. Every number is a run's kept epoch (its
lowest loss on the validation sentences, see :func:`epoch_text`; its stored final metrics and weights), shown
as the mean ± sd over seeds; the test sentences are only reported. The analogy answers of both
representations of the matrices come from ``scores`` (the experiment's ``analogy_scores``):
``{run name: {"log" | "exp": sections or None}}``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from urnlib.chapters.matrix_embeddings.report_claims import SPECS, Measures
from urnlib.chapters.matrix_embeddings.report_claims import rounding  # noqa: F401 (report.rounding, as before)
from urnlib.claims import Claim
from urnlib.declare import evaluate
from urnlib.plots.curves import column_figure, curves_panel, figure_legend
from urnlib.plots.series import SeedCurves
from urnlib.reports.common import looks
from urnlib.seeds import Seeds, Stat

CHAPTER = "matrix_embeddings"
MATRIX_KINDS = ("4.1", "4.2", "4.3")  #: paper 003 sec. 4.1-4.3
#: paper 003 sec. 5: Google analogy questions answered correctly (UMBC corpus, 3.3G words)
PAPER_CORRECT = {"4.2 diagonal 100": "555", "4.2 dense 10": "81", "4.3 dense 10": "1-2"}
PAPER_WORDS = 3_338_000_000  # paper 003 sec. 5: "about 3.338G words"
#: the analogy vectors: the log entries (what the authors' code writes out: the paper's counts are of these)
#: and the entries themselves; the baselines' vectors are what they are
REPRESENTATION_LABELS = {"log": "log entries", "exp": "entries (exp) / vectors"}

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
    """Each seed's kept epoch (of its lowest validation loss, the run's final epoch) / epochs run."""
    return ", ".join(f"{r.final['epoch']}/{len(r.history)}" for r in seeds)


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
        rows.append({"model": label, "test perplexity": f"{perplexity.mean:.1f}" if kind == "kneser-ney"
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
    matrix model: mean over seeds with a ± sd band; where a model's seeds stopped at different epochs (early
    stopping), each seed's curve and the mean over the epochs all of them reached.

    The paper's counts (:data:`PAPER_CORRECT`) are not marked on (b): they count answers most likely with the
    log entries (what the authors' code writes out), over UMBC's vocabulary of about 100k words, after an
    amount of training the paper does not give, while (b) counts answers with the entries (exp) of the
    questions this vocabulary covers, per epoch; no point of (b) is the paper's measure, and a count of 555
    would flatten these curves (:func:`analogy_table` sets the counts side by side)."""
    models = matrix_view(view)
    styles = looks(models)  # each model's from its spec
    fig, (a, b), _ = column_figure(2)
    ppl = {k: SeedCurves(s.each(lambda r: np.exp(r.column("test_loss")))) for k, s in models.items()}
    correct = {k: SeedCurves(s.each(lambda r: r.column("analogies_correct"))) for k, s in models.items()}
    curves_panel(a, ppl, styles, xlabel="epoch", ylabel="test perplexity (per word)", title="perplexity",
                 logy=True, markers=True, integer_x=True, bounds=(1.0, None))  # a perplexity is at least 1
    curves_panel(b, correct, styles, xlabel="epoch", ylabel="analogy questions correct (entries)",
                 title="Google analogies, 3CosAdd on the entries", markers=True, integer_x=True)
    figure_legend(fig, b)
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


def claims(view: View, scores: dict, gap: dict | None = None) -> list[Claim]:
    """The chapter's claims (:data:`urnlib.chapters.matrix_embeddings.report_claims.SPECS`), decided by
    :mod:`urnlib.rules` on the seeds at each run's kept epoch
    (:func:`~urnlib.chapters.matrix_embeddings.report_claims.epoch_text`), the analogies on the log entries
    (the paper's; the entries beside them). A miss is ``open`` with what would settle it
    (:func:`~urnlib.chapters.matrix_embeddings.report_claims.settle_text`), unless ``gap`` (from the
    ablations: :func:`urnlib.chapters.matrix_embeddings.report_gap.gap_causes`) gives its model's cause."""
    models = matrix_view(view)
    if not models:
        return []
    w2v = next((s for s in view.values() if _kind(s) == "word2vec"), None)
    wfsa = any(k.startswith("4.3") for k in models)  # its guard: log V, the uniform guess's held-out loss
    m = Measures(models, {k: correct(s, scores, "log") for k, s in models.items()},
                 {k: correct(s, scores, "exp") for k, s in models.items()},
                 {k: _epochs(s) for k, s in models.items()}, chance_level(view),
                 math.log(_stats(view)["vocabulary"]) if wfsa else math.nan,
                 f"; word2vec on the same sentences: {w2v.final('analogies_correct').text(1)}"
                 if w2v is not None else "", gap or {})
    return evaluate(CHAPTER, SPECS, m, seeds={k: len(s) for k, s in models.items()})
