"""The claims of the matrix-embedding chapter (paper 003 secs. 4.2 and 5), declared (:mod:`urnlib.declare`):
one :class:`~urnlib.declare.Spec` per claim in :data:`SPECS`, each with a small measure on what
:class:`Measures` holds (built from the runs by :func:`urnlib.chapters.matrix_embeddings.report.claims`).

The analogy claims are decided on the log entries (what the authors' code writes out: the paper's counts are
of these; the entries beside them) at each run's kept epoch (:func:`epoch_text`). Their guard is the chapter's
own: a model whose answers are not clearly off chance did not train, and 4.3 (whose claim is that it answers
next to nothing) trained when its held-out loss is clearly below the uniform guess's, log V; the claim then
says so in its ``ours`` (inconclusive, cause ``untrained``). A miss is ``open`` with what would settle it
(:func:`settle_text`), unless the ablations (``gap``:
:func:`urnlib.chapters.matrix_embeddings.report_gap.gap_causes`) give its model's cause. Sec. 4.2's properties
hold in exact arithmetic: each is decided within float32 rounding (:func:`rounding`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from urnlib import rules
from urnlib.declare import Measured, Spec
from urnlib.seeds import Seeds, Stat
from urnlib.statements import in_range

__all__ = ["Measures", "SPECS", "epoch_text", "settle_text", "rounding", "STAND_IN", "TABLE",
           "WFSA_QUOTE", "SUMS_QUOTE", "POWER_QUOTE", "STAR_QUOTE", "UNIT_ROUNDOFF"]

View = dict[str, Seeds]

STAND_IN = "Brown + State of the Union"  # the corpus that stands in for UMBC (cause "data")
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


def epoch_text(kept: dict[str, str]) -> str:
    """Which epoch the claims read: each seed's kept epoch / epochs run (``kept``: ``{label: "e/n, ..."}``
    per model)."""
    kept = "; ".join(f"{label} {epochs}" for label, epochs in kept.items())
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


def rounding(seeds: Seeds, factors: int = 1) -> float:
    """The float32 rounding a constraint of sec. 4.2 may show: ``factors`` times Higham's bound ``(n - 1) u``
    on a float32 sum of ``n`` non-negative terms, the sum that normalises a row of M_* (n = V words x the
    row's allowed entries; u = 2^-24)."""
    model = seeds[0].params["model"]
    n = seeds[0].final["data"]["vocabulary"] * _ROW_ENTRIES[model["algebra"]](model["d"])
    return factors * (n - 1) * UNIT_ROUNDOFF


@dataclass
class Measures:
    """What the measures read: the matrix models by label (``models``), their correct answers per seed on the
    log entries and on the entries (``log``, ``exp``), each seed's kept epoch / epochs run (``kept``), the
    answers a random guess would give (``chance``), the uniform guess's held-out loss (``uniform``, log V),
    word2vec's answers on the same sentences in words (``vectors``) and the ablations' causes (``gap``)."""

    models: View
    log: dict[str, Stat]
    exp: dict[str, Stat]
    kept: dict[str, str]
    chance: float
    uniform: float = math.nan
    vectors: str = ""
    gap: dict = field(default_factory=dict)

    def __post_init__(self):
        first = lambda prefix: next((k for k in self.models if k.startswith(prefix)), None)  # noqa: E731
        self.diag, self.dense, self.wfsa = first("4.2 diagonal"), first("4.2 dense"), first("4.3")
        self.settle = settle_text(self.models)
        #: the models whose every seed measured sec. 4.2's properties
        self.props = {k: s for k, s in self.models.items() if all(r.final.get("properties") for r in s)}

    def both(self, label: str) -> str:
        return f"log {self.log[label].text(1)}; exp {self.exp[label].text(1)}"

    def epoch(self, labels: Sequence[str | None]) -> str:
        """:func:`epoch_text` of ``labels``, in the order of the models."""
        return epoch_text({k: e for k, e in self.kept.items() if k in labels})

    @property
    def guard(self) -> str:
        return f"{rules.CHANCE_RULE}: chance = {self.chance:.1f} correct"


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


def _order(m: Measures) -> Measured | None:
    if m.diag is None or m.dense is None:
        return None
    a, b = m.log[m.diag], m.log[m.dense]
    decision = rules.compare(a, b, names=("diagonal (log entries)", "dense (log entries)"))
    holds, cause, note = _guarded(decision, m.chance, {"diagonal": a, "dense": b})
    # the side that misses is the diagonal (far below its paper count, the dense model near its): its gap's
    # cause and evidence explain the order
    cause, found, own = m.gap[m.diag] if cause == "open" and m.diag in m.gap else (cause, "", m.settle)
    found = f"the diagonal model's count: {found}" if found else ""
    return Measured(f"diagonal: {m.both(m.diag)}; dense: {m.both(m.dense)}{note}", holds,
                    rests=[m.diag, m.dense], cause=cause, direction="", evidence=found,
                    settle=(own or m.settle) if cause in ("open", "authors") else "")


def _count(which: str, paper: int):
    """The paper's count ``paper`` of the 4.2 model ``which`` (``"diag"``, ``"dense"``)."""
    def measure(m: Measures) -> Measured | None:
        label = getattr(m, which)
        if label is None:
            return None
        s = m.log[label]
        decision = rules.threshold(s, paper, name=f"{label} (log entries)")
        holds, cause, note = _guarded(decision, m.chance, {label: s})
        cause, found, own = m.gap[label] if cause == "open" and label in m.gap else (cause, "", m.settle)
        return Measured(f"log {s.text(1)}; exp {m.exp[label].text(1)} ({STAND_IN}{m.vectors}){note}", holds,
                        rests=[label], cause=cause, direction="", evidence=found,
                        settle=(own or m.settle) if cause in ("open", "authors") else "")
    return measure


def _wfsa(m: Measures) -> Measured | None:
    """"The model 4.3 could answer 1 or 2 questions": a printed range, decided seed by seed on the log entries
    (``in_range``); its guard: the held-out loss clearly below the uniform guess's, log V."""
    if m.wfsa is None:
        return None
    w = m.log[m.wfsa]
    decision = in_range(w.values, 1, 2, name="4.3's answers (log entries)")
    trained = rules.off_chance(m.uniform, m.models[m.wfsa].final("test_loss"), higher=False)
    holds, cause = ((decision, {None: "noise", False: "open"}.get(decision.holds)) if trained and w.n else
                    (None, "untrained" if w.n else "open"))
    note = ("" if trained else
            f" - 4.3 did not train (held-out loss not clearly below log V = {m.uniform:.2f})")
    cause, found = m.gap[m.wfsa][:2] if cause == "open" and m.wfsa in m.gap else (cause, "")
    return Measured(f"{m.both(m.wfsa)}{note}", holds, rests=[m.wfsa], cause=cause, direction="",
                    evidence=found, settle=m.settle if cause == "open" else "")


def _within_rounding(m: Measures, test) -> list[bool | None]:
    """Per 4.2 model: ``test(properties)`` within its rounding (:func:`rounding`) on every seed."""
    return [rules.on_every_seed(test(r.final["properties"]) < rounding(s) for r in s)
            for s in m.props.values()]


def _all_props(m: Measures) -> list[dict]:
    return [r.final["properties"] for s in m.props.values() for r in s]


def _worst(m: Measures, f) -> str:
    return f"largest deviation per factor of M_* {max(map(f, _all_props(m))):.1e}"


# the deviations per factor of M_*: a string of length k, or M_*^k, has k
def _sums_of(p: dict) -> float:
    return max(abs(p["sum_length1"] - 1), abs(p["sum_length2"] - 1) / 2)


def _power_of(p: dict) -> float:
    return max(abs(x - 1) / k for k, x in enumerate(p["one_star_power"], 1))


def _sums(m: Measures) -> Measured | None:
    if not m.props:
        return None
    return Measured(f"{_worst(m, _sums_of)} (all V and V^2 strings)", _within_rounding(m, _sums_of),
                    rests=list(m.props),
                    direction=f"sums over the strings of length 1 and 2: {_worst(m, _sums_of)}")


def _power(m: Measures) -> Measured | None:
    if not m.props:
        return None
    return Measured(f"{_worst(m, _power_of)} for n = 1..5", _within_rounding(m, _power_of),
                    rests=list(m.props),
                    direction=f"(1/d) 1^T M_*^n 1, n = 1..5: {_worst(m, _power_of)}")


def _star(m: Measures) -> Measured | None:
    """It holds only where M_* = I: appended, or with the diagonal algebra; the paper's own formula just above
    it (M_* in the middle sums over the middle word) contradicts it."""
    if not m.props:
        return None
    end, middle = (max(p[k] for p in _all_props(m)) for k in ("star_at_end_change", "star_in_middle_change"))
    appended, _ = rules.combine(_within_rounding(m, lambda p: p["star_at_end_change"]))
    anywhere, partly = rules.combine(_within_rounding(
        m, lambda p: max(p["star_at_end_change"], p["star_in_middle_change"])))
    return Measured(f"appended: {end:.1e}; in the middle: median {middle:.1e} (it gives the skip-gram "
                    "marginal)", anywhere, partly or appended is True, rests=list(m.props),
                    direction=f"relative change: appended {end:.1e}, in the middle (median) {middle:.1e}",
                    cause="noise" if anywhere is None else "paper",
                    evidence=f"the trained models' M_* inserted into sequences: appended, the probability "
                    f"changes by {end:.1e} (none); in the middle by a median {middle:.1e}, as the paper's "
                    "own formula just before the statement implies (M_* there sums over the middle word)")


def _every(m: Measures) -> str:
    bounds = ", ".join(f"{label} {rounding(s):.1e}" for label, s in m.props.items())
    return (f"within the float32 rounding of a row of M_* per factor of M_* ((n - 1) 2^-24, n = V x a row's "
            f"entries: {bounds}), on every seed of every 4.2 model (mixed seeds: not decided)")


SPECS = [
    Spec("paper 003 sec. 5, table: commutative 4.2 (555) against dense 4.2 (81)",
         "commutative (diagonal) 4.2 answers more analogies than dense 4.2", TABLE, "555 vs 81", "beats",
         lambda m: f"diagonal above dense on the log entries; {m.guard}",
         lambda m: m.epoch([m.diag, m.dense]), _order),
    Spec("paper 003 sec. 5, table: commutative 4.2", lambda m: f"{m.diag} answers 555 analogy questions",
         TABLE, "555 (UMBC, 3.3G words)", "vs-number",
         lambda m: f"at least the paper's 555 on the log entries; {m.guard}",
         lambda m: m.epoch([m.diag]), _count("diag", 555)),
    Spec("paper 003 sec. 5, table: dense 4.2", lambda m: f"{m.dense} answers 81 analogy questions", TABLE,
         "81 (UMBC, 3.3G words)", "vs-number",
         lambda m: f"at least the paper's 81 on the log entries; {m.guard}",
         lambda m: m.epoch([m.dense]), _count("dense", 81)),
    Spec("paper 003 sec. 5", "the continuous WFSA (4.3) answers 1 or 2 analogy questions", WFSA_QUOTE,
         "1 or 2", "in-range",
         lambda m: f"1 or 2 on the log entries; 4.3 trained: its held-out loss clearly below the uniform "
                   f"guess's, log V = {m.uniform:.2f} (mean + 1 sd below it)", lambda m: m.epoch([m.wfsa]),
         _wfsa),
    Spec("paper 003 sec. 4.2", "P sums to 1 over all strings of each length", SUMS_QUOTE, "exactly 1",
         "check",
         lambda m: f"|sum - 1| for lengths 1 and 2 {_every(m)}", lambda m: m.epoch(list(m.props)), _sums),
    Spec("paper 003 sec. 4.2", "(1/d) 1^T M_*^n 1 = 1", POWER_QUOTE, "for n = 0, 1, 2, ...", "check",
         lambda m: f"|(1/d) 1^T M_*^n 1 - 1| {_every(m)}", lambda m: m.epoch(list(m.props)), _power),
    Spec("paper 003 sec. 4.2", "M_* does not change the probability of any sequence, no matter where it is "
         "inserted", STAR_QUOTE, "no change anywhere", "check",
         lambda m: f"relative change wherever it is inserted {_every(m)}", lambda m: m.epoch(list(m.props)),
         _star),
]
