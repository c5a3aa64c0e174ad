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

from urnlib import rules
from urnlib.claims import Claim, claim
from urnlib.plots.curves import column_figure, curves_panel, figure_legend
from urnlib.plots.series import SeedCurves
from urnlib.reports.common import looks
from urnlib.seeds import Seeds, Stat
from urnlib.statements import IN_RANGE_RULE, in_range

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


def _find(models: View, prefix: str) -> Seeds | None:
    return next((s for k, s in models.items() if k.startswith(prefix)), None)


def _label(view: View, seeds: Seeds) -> str:
    return next(k for k, s in view.items() if s is seeds)


def _both(seeds: Seeds, scores: dict) -> str:
    return (f"log {correct(seeds, scores, 'log').text(1)}; exp {correct(seeds, scores, 'exp').text(1)}")


#: paper 003 sec. 5, the sentence that states the table's counts (its cells are named in each claim's source)
TABLE = "The table below shows the number of correctly answered questions of each trained model."
WFSA_QUOTE = "The model 4.3 could answer 1 or 2 questions after equal amount of training."
#: paper 003 sec. 4.2, word for word as the text file has them (its formulas in the extraction's LaTeX)
SUMS_QUOTE = (r"$(M_*)^n$ is also a right-stochastic matrix, therefore $$\sum_{w_1 \in V} \dots "
              r"\sum_{w_n \in V} \frac{1}{d} \mathbb{1}^\top M_{w_1} \cdots M_{w_n} \mathbb{1} = "
              r"\frac{1}{d} \mathbb{1}^\top (M_*)^n \mathbb{1} = 1$$")
POWER_QUOTE = r"$\frac{1}{d} \cdot \mathbb{1}^\top \cdot (M_*)^n \cdot \mathbb{1} = 1$ for n = 0, 1, 2..."
STAR_QUOTE = (r"we can calculate a placeholder $$M_* := \sum_{w \in V} M_w$$ which does not change the "
              "probability of any sequence, no matter where it is inserted.")
UNIT_ROUNDOFF = 2.0 ** -24  #: float32's unit roundoff, u: the parameters are float32
_ROW_ENTRIES = {"dense": lambda d: d, "diagonal": lambda d: 1, "upper": lambda d: d}  # most per row
_FRACTIONS = (0.25, 0.5, 1.0)  #: the corpus shares of the experiment that would settle an open claim


def epoch_text(models: View) -> str:
    """Which epoch the claims read: each seed's kept epoch / epochs run."""
    kept = "; ".join(f"{label} {_epochs(s)}" for label, s in models.items())
    return ("the epoch of lowest validation loss, whose weights the runs kept (epoch / epochs run: " + kept
            + "); neither the test sentences, which give the perplexities, nor the analogy questions took "
            "part in the choice (the paper has no held-out split of its own)")


def settle_text(models: View) -> str:
    """The experiment that would settle an analogy claim left open, with its CPU cost estimated from the
    stored runs' CPU seconds per epoch."""
    per_epoch, epochs, seeds = 0.0, 0, 0
    for s in models.values():
        cpu = [(getattr(r, "record", None) or {}).get("cpu_time_s") for r in s]
        if any(c is None for c in cpu):
            per_epoch = math.nan
        else:
            per_epoch += float(np.mean([c / max(len(r.history), 1) for c, r in zip(cpu, s)]))
        epochs = max(epochs, s[0].params.get("train", {}).get("epochs", max(len(r.history) for r in s)))
        seeds = max(seeds, len(s))
    hours = per_epoch * epochs * seeds * sum(_FRACTIONS) / 3600
    cost = ("its cost unknown (the runs recorded no CPU time)" if math.isnan(per_epoch) else
            f"at most about {hours:.1f} CPU hours at the stored runs' {per_epoch:.0f} CPU s per epoch of the "
            f"{len(models)} models together")
    return (f"retrain {', '.join(models)} with the authors' optimiser (Adagrad, learning rate 1.0; entries "
            f"of the chapter's ablations, at its batch size) for up to {epochs} epochs, {seeds} "
            f"seeds, on a quarter, a half and all of the corpus, counting the analogies on the log entries "
            f"after every epoch: {cost}")


def claims(view: View, scores: dict, gap: dict | None = None) -> list[Claim]:
    """The chapter's claims, decided by :mod:`urnlib.rules` on the seeds at each run's kept epoch
    (:func:`epoch_text`), the analogies on the log entries (the paper's; the entries beside them). A miss is
    ``open`` with what would settle it (:func:`settle_text`), unless ``gap`` (from the ablations:
    :func:`urnlib.chapters.matrix_embeddings.report_gap.gap_causes`) gives its model's cause."""
    models = matrix_view(view)
    diag, dense, wfsa = (_find(models, p) for p in ("4.2 diagonal", "4.2 dense", "4.3"))
    out: list[Claim] = []
    if not models:
        return out
    settle = settle_text(models)
    chance = chance_level(view)
    guard = f"{rules.CHANCE_RULE}: chance = {chance:.1f} correct"
    w2v = next((s for s in view.values() if _kind(s) == "word2vec"), None)
    vectors = (f"; word2vec on the same sentences: {w2v.final('analogies_correct').text(1)}"
               if w2v is not None else "")
    if diag is not None and dense is not None:
        a, b = correct(diag, scores, "log"), correct(dense, scores, "log")
        decision = rules.compare(a, b, names=("diagonal (log entries)", "dense (log entries)"))
        holds, cause, note = _guarded(decision, chance, {"diagonal": a, "dense": b})
        own = (gap or {}).get(_label(models, diag), ("open", "", settle))[2] or settle  # the diagonal's gap
        out.append(claim(CHAPTER, "paper 003 sec. 5, table: commutative 4.2 (555) against dense 4.2 (81)",
                         "commutative (diagonal) 4.2 answers more analogies than dense 4.2", "555 vs 81",
                         f"diagonal: {_both(diag, scores)}; dense: {_both(dense, scores)}{note}",
                         f"diagonal above dense on the log entries ({rules.BEATS_RULE}); {guard}", holds,
                         seeds=min(len(diag), len(dense)), cause=cause, quote=TABLE,
                         epoch=epoch_text({k: s for k, s in models.items() if s is diag or s is dense}),
                         settle=own if cause == "open" else ""))
    for seeds, paper, cell in ((diag, 555, "commutative"), (dense, 81, "dense")):
        if seeds is None:
            continue
        label = _label(models, seeds)
        s = correct(seeds, scores, "log")
        decision = rules.threshold(s, paper, name=f"{label} (log entries)")
        holds, cause, note = _guarded(decision, chance, {label: s})
        cause, found, own = gap[label] if cause == "open" and label in (gap or {}) else (cause, "", settle)
        note += f" - ablations: {found}" if found else ""
        out.append(claim(CHAPTER, f"paper 003 sec. 5, table: {cell} 4.2", f"{label} answers {paper} analogy "
                         "questions", f"{paper} (UMBC, 3.3G words)",
                         f"log {s.text(1)}; exp {correct(seeds, scores, 'exp').text(1)} ({STAND_IN}{vectors})"
                         f"{note}", f"at least the paper's {paper} on the log entries "
                         f"({rules.THRESHOLD_RULE}); {guard}", holds, seeds=len(seeds), cause=cause,
                         quote=TABLE, epoch=epoch_text({label: seeds}),
                         settle=(own or settle) if cause == "open" else ""))
    if wfsa is not None:
        out.append(_wfsa_claim(wfsa, scores, view, settle))
    out += _property_claims(models)
    return out


def _wfsa_claim(wfsa: Seeds, scores: dict, view: View, settle: str) -> Claim:
    """"The model 4.3 could answer 1 or 2 questions": a printed range, decided seed by seed on the log entries
    (``in_range``); its guard: the held-out loss clearly below the uniform guess's, log V."""
    w = correct(wfsa, scores, "log")
    decision = in_range(w.values, 1, 2, name="4.3's answers (log entries)")
    uniform = math.log(_stats(view)["vocabulary"])
    trained = rules.off_chance(uniform, wfsa.final("test_loss"), higher=False)
    holds, cause = ((decision, {None: "noise", False: "open"}.get(decision.holds)) if trained and w.n else
                    (None, "untrained" if w.n else "open"))
    note = "" if trained else f" - 4.3 did not train (held-out loss not clearly below log V = {uniform:.2f})"
    return claim(CHAPTER, "paper 003 sec. 5", "the continuous WFSA (4.3) answers 1 or 2 analogy questions",
                 "1 or 2", f"{_both(wfsa, scores)}{note}", f"1 or 2 on the log entries "
                 f"({IN_RANGE_RULE}); 4.3 trained: its held-out loss clearly below the uniform "
                 f"guess's, log V = {uniform:.2f} (mean + 1 sd below it)", holds, seeds=len(wfsa),
                 cause=cause, quote=WFSA_QUOTE, epoch=epoch_text({_label(view, wfsa): wfsa}),
                 settle=settle if cause == "open" else "")


def _guarded(decision: rules.Decision, chance: float, sides: dict[str, Stat]
             ) -> tuple[rules.Decision | None, str | None, str]:
    """A decision under the chance guard, the cause of a miss and a note for ``ours``: no log score (runs
    stored without weights: open), a side at chance (untrained), the seeds' spread (noise); a decided miss
    is open: neither the corpus (word2vec answers as many on it as the paper's diagonal model) nor anything
    else the stored runs show explains it."""
    if not all(s.n for s in sides.values()):
        return None, "open", " - no log score: the runs were stored without it"
    idle = [name for name, s in sides.items() if not rules.off_chance(chance, s)]
    if idle:
        return None, "untrained", f" - {' and '.join(idle)} at chance: did not train"
    return decision, {None: "noise", False: "open"}.get(decision.holds), ""


def rounding(seeds: Seeds, factors: int = 1) -> float:
    """The float32 rounding a constraint of sec. 4.2 may show: ``factors`` times Higham's bound ``(n - 1) u``
    on a float32 sum of ``n`` non-negative terms, the sum that normalises a row of M_* (n = V words x the
    row's allowed entries; u = 2^-24)."""
    model = seeds[0].params["model"]
    n = seeds[0].final["data"]["vocabulary"] * _ROW_ENTRIES[model["algebra"]](model["d"])
    return factors * (n - 1) * UNIT_ROUNDOFF


def _property_claims(models: View) -> list[Claim]:
    """Sec. 4.2's properties, exact in exact arithmetic: each holds for a model when it holds within float32
    rounding (:func:`rounding`, per factor of M_*) on every seed, and for the claim when it holds for every
    4.2 model (:func:`urnlib.rules.combine`)."""
    seeds = {label: s for label, s in models.items() if all(r.final.get("properties") for r in s)}
    if not seeds:
        return []
    n, epoch = min(len(s) for s in seeds.values()), epoch_text(seeds)
    props = [r.final["properties"] for s in seeds.values() for r in s]

    def decide(test) -> tuple[bool | None, bool]:  # test(properties) <= the model's rounding
        return rules.combine(rules.on_every_seed(test(r.final["properties"]) < rounding(s) for r in s)
                             for s in seeds.values())

    # the deviations per factor of M_*: a string of length k, or M_*^k, has k
    sums = lambda p: max(abs(p["sum_length1"] - 1), abs(p["sum_length2"] - 1) / 2)  # noqa: E731
    power = lambda p: max(abs(x - 1) / k for k, x in enumerate(p["one_star_power"], 1))  # noqa: E731
    end, middle = (max(p[k] for p in props) for k in ("star_at_end_change", "star_in_middle_change"))
    appended, _ = decide(lambda p: p["star_at_end_change"])
    anywhere, partly = decide(lambda p: max(p["star_at_end_change"], p["star_in_middle_change"]))
    bounds = ", ".join(f"{label} {rounding(s):.1e}" for label, s in seeds.items())
    every = (f"within the float32 rounding of a row of M_* per factor of M_* ((n - 1) 2^-24, n = V x a row's "
             f"entries: {bounds}), on every seed of every 4.2 model (mixed seeds: not decided)")
    worst = lambda f: f"largest deviation per factor of M_* {max(map(f, props)):.1e}"  # noqa: E731
    return [
        claim(CHAPTER, "paper 003 sec. 4.2", "P sums to 1 over all strings of each length", "exactly 1",
              f"{worst(sums)} (all V and V^2 strings)", f"|sum - 1| for lengths 1 and 2 {every}",
              *decide(sums), seeds=n, quote=SUMS_QUOTE, epoch=epoch,
              direction=f"sums over the strings of length 1 and 2: {worst(sums)}"),
        claim(CHAPTER, "paper 003 sec. 4.2", "(1/d) 1^T M_*^n 1 = 1", "for n = 0, 1, 2, ...",
              f"{worst(power)} for n = 1..5", f"|(1/d) 1^T M_*^n 1 - 1| {every}", *decide(power), seeds=n,
              quote=POWER_QUOTE, epoch=epoch, direction=f"(1/d) 1^T M_*^n 1, n = 1..5: {worst(power)}"),
        claim(CHAPTER, "paper 003 sec. 4.2", "M_* does not change the probability of any sequence, no matter "
              "where it is inserted", "no change anywhere",
              f"appended: {end:.1e}; in the middle: median {middle:.1e} (it gives the skip-gram marginal)",
              f"relative change wherever it is inserted {every}", anywhere, partly=partly or appended is True,
              seeds=n, quote=STAR_QUOTE, epoch=epoch,
              direction=f"relative change: appended {end:.1e}, in the middle (median) {middle:.1e}",
              # it holds only where M_* = I: appended, or with the diagonal algebra; the paper's own formula
              # just above it (M_* in the middle sums over the middle word) contradicts it
              cause="noise" if anywhere is None else "paper"),
    ]
