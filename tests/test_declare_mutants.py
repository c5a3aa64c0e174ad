"""urnlib.declare at the edges mutants of the module probe (benchmarks/mutation.py, issue 48): every field of
an evaluated claim compared whole, a measure's overrides (paper, direction, seeds needed, cause, evidence),
decisions combined by the chapter (``decided``), words from the measurements, the seeds of the fewest model,
and the training guard's two reasons. Fast: the mutation run puts this file first."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from urnlib import rules
from urnlib.claims import Claim
from urnlib.declare import Measured, Spec, evaluate, untrained
from urnlib.seeds import Seeds, Stat
from urnlib.statements import KINDS

HIGH, LOW = Stat.of([0.90, 0.91, 0.92]), Stat.of([0.50, 0.51, 0.52])
CLOSE = rules.compare(Stat.of([0.50, 0.60, 0.55]), Stat.of([0.52, 0.58, 0.51]))


def _spec(measure, kind="beats", what="A above B", **kw):
    return Spec("paper 000 sec. 4, Fig. 1", "A beats B", "A is better.", 0.5, kind, what, "final", measure,
                **kw)


def _one(measure, **kw):
    [c] = evaluate("ch", [_spec(measure, **{k: v for k, v in kw.items() if k in ("kind", "what")})], "m",
                   **{k: v for k, v in kw.items() if k in ("seeds", "idle")})
    return c


def test_an_evaluated_claim_whole():
    d = rules.compare(HIGH, LOW)
    c = _one(lambda m: Measured(0.41, d), seeds={"A": 3, "B": 2})
    assert c == Claim("ch", "paper 000 sec. 4, Fig. 1", "A beats B", "0.5", "0.41",
                      f"A above B; {KINDS['beats'].rule}", "reproduced", 2, None, "A is better.", "final",
                      d.direction, None, False, "", "Fig. 1", "beats", "", False)


def test_a_measure_overrides_the_paper_direction_seeds_cause_and_evidence():
    c = _one(lambda m: Measured("x", CLOSE, paper="0.7", direction="mine", seeds_needed=50, cause="paper",
                                evidence="ran it", settle="more"))
    assert (c.paper, c.direction, c.seeds_needed, c.cause, c.evidence, c.settle) == (
        "0.7", "mine", 50, "paper", "ran it", "more")
    assert c.verdict == "inconclusive"
    parts = _one(lambda m: Measured("x", [CLOSE, rules.compare(HIGH, LOW)], seeds_needed=40))
    assert parts.seeds_needed == 40 and parts.verdict == "inconclusive"
    assert _one(lambda m: Measured("x", [CLOSE, rules.compare(HIGH, LOW)])).seeds_needed == CLOSE.seeds_needed


def test_a_direction_comes_from_the_decision_else_from_what_was_measured():
    assert _one(lambda m: Measured(0.25, CLOSE)).direction == CLOSE.direction
    assert _one(lambda m: Measured(0.25, True), kind="check").direction == "0.25"
    assert _one(lambda m: Measured(1234.0, (rules.compare(HIGH, LOW),))).direction == "1,234"  # a tuple
    assert _one(lambda m: Measured("x", True, direction=""), kind="check").direction == "as the paper states"


def test_decisions_the_chapter_combined_itself_are_checked_against_the_kind():
    spec = _spec(lambda m: Measured("x", True, decided=[rules.threshold(HIGH, 0.5)]))
    with pytest.raises(ValueError, match=r"^ch: 'A beats B' is declared 'beats' but decided by the rule of "
                                         r"\['vs-number'\]$"):
        evaluate("ch", [spec], None)
    fine = _spec(lambda m: Measured("x", True, decided=[rules.compare(HIGH, LOW), "not a decision"]))
    assert evaluate("ch", [fine], None)[0].verdict == "reproduced"
    plain = _spec(lambda m: Measured("x", rules.Decision(True, "d", 1.0)))  # no kind stamped: not refused
    assert evaluate("ch", [plain], None)[0].kind == "beats"


def test_words_may_come_from_the_measurements():
    spec = Spec("paper 000 Fig. 1", lambda m: f"A beats B at {m}", "q", 1, "check", "",
                lambda m: f"epoch {m}", lambda m: Measured("x", True))
    [c] = evaluate("ch", [spec], 7)
    assert (c.statement, c.epoch, c.rule) == ("A beats B at 7", "epoch 7", KINDS["check"].rule)
    assert spec.rule() == KINDS["check"].rule and _spec(None).rule() == f"A above B; {KINDS['beats'].rule}"


def test_a_claim_rests_on_the_fewest_seeds_of_its_models_and_only_theirs_idle():
    seeds, idle = {"A": 5, "B": 3, "C": 1}, {"C": "at chance"}
    every = _one(lambda m: Measured("x", rules.compare(HIGH, LOW)), seeds=seeds, idle=idle)
    assert (every.seeds, every.verdict, every.ours) == (1, "inconclusive", "did not train (C at chance): x")
    some = _one(lambda m: Measured("x", rules.compare(HIGH, LOW), rests=["A", "B", "D"]), seeds=seeds,
                idle=idle)
    assert (some.seeds, some.verdict) == (3, "reproduced")
    none = _one(lambda m: Measured("x", rules.compare(HIGH, LOW), rests=["D"]), seeds=seeds)
    assert none.seeds is None
    assert _one(lambda m: Measured("x", rules.compare(HIGH, LOW))).seeds is None


def test_specs_keep_their_order_and_a_claim_its_artefact_extension_and_headline():
    specs = [_spec(lambda m: Measured("one", True), kind="check", artefact="Table 9", extension=True),
             _spec(lambda m: None),
             _spec(lambda m: Measured("two", rules.compare(LOW, HIGH), settle="s"), headline=True)]
    one, two = evaluate("ch", specs, None)
    assert (one.ours, one.artefact, one.extension, one.headline) == ("one", "Table 9", True, False)
    assert (two.ours, two.artefact, two.extension, two.headline, two.cause) == (
        "two", "Fig. 1", False, True, "open")


def _runs(label, values, epochs=10):
    made = [SimpleNamespace(history=[{}] * epochs, value=v) for v in values]
    return Seeds(label, made, list(range(len(values))))


def test_the_training_guard_for_losses_and_exactly_the_papers_epochs():
    groups = {"ok": _runs("ok", [0.3, 0.31, 0.29]), "lossy": _runs("lossy", [0.69, 0.3, 0.31]),
              "one short": _runs("one short", [0.3, 0.3], epochs=9), "skip": _runs("skip", [0.9])}
    found = untrained(groups, ["ok", "lossy", "one short"], epochs=10, measure=lambda r: r.value,
                      chance=0.69, higher=False, what="loss", baseline="ln 2")
    assert found == {"lossy": f"is at chance: loss {groups['lossy'].stat(lambda r: r.value).text(3)}, ln 2",
                     "one short": "trained fewer than 10 epochs"}
