"""Claims declared as data (urnlib.declare): the rule's words come from the kind, a measure's decision must
come from its declared kind's rule, a claim of several parts gets one verdict, and the training guard and seed
count are applied the same way for every chapter."""

import pytest

from urnlib import rules
from urnlib.declare import Measured, Spec, evaluate
from urnlib.seeds import Stat
from urnlib.statements import KINDS


def _spec(measure, kind="beats", what="A below B"):
    return Spec(
        "paper 000 Fig. 1", "A beats B", "A is better than B.", "A lower", kind, what, "final", measure
    )


HIGH, LOW = Stat.of([0.90, 0.91, 0.92]), Stat.of([0.50, 0.51, 0.52])


def test_rule_words_are_the_measure_then_the_kinds_rule():
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", rules.compare(HIGH, LOW)))], None)
    assert c.rule == f"A below B; {KINDS['beats'].rule}"
    assert c.kind == "beats" and c.verdict == "reproduced"


def test_a_decision_from_another_kinds_rule_is_refused():
    spec = _spec(lambda m: Measured("x", rules.threshold(HIGH, 0.5)))
    with pytest.raises(ValueError, match="declared 'beats' but decided by the rule of \\['vs-number'\\]"):
        evaluate("ch", [spec], None)


def test_an_unknown_kind_is_refused_when_declared():
    with pytest.raises(ValueError, match="kind 'bigger'"):
        _spec(lambda m: None, kind="bigger")


def test_parts_combine_to_partly_with_the_seeds_of_the_undecided_part():
    holds = rules.compare(HIGH, LOW)
    fails = rules.compare(LOW, HIGH)
    [c] = evaluate("ch", [_spec(lambda m: Measured("two sizes", [holds, fails], settle="more seeds"))], None)
    assert c.verdict == "partly reproduced" and c.cause == "open" and c.settle == "more seeds"
    assert c.direction == "two sizes"  # a combined claim says what it measured
    close = rules.compare(Stat.of([0.50, 0.60, 0.55]), Stat.of([0.52, 0.58, 0.51]))
    assert close.holds is None and close.seeds_needed
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", [holds, close]))], None)
    assert c.verdict == "inconclusive" and c.seeds_needed == close.seeds_needed


def test_the_training_guard_and_the_seeds_a_claim_rests_on():
    specs = [
        _spec(lambda m: Measured("x", rules.compare(HIGH, LOW), rests=["A", "B"])),
        _spec(lambda m: Measured("y", rules.compare(HIGH, LOW), rests=["A"])),
    ]
    a, b = evaluate("ch", specs, None, seeds={"A": 3, "B": 5}, idle={"B": "at chance"})
    assert a.verdict == "inconclusive" and a.cause == "untrained" and "B at chance" in a.ours
    assert a.seeds == 3
    assert b.verdict == "reproduced" and b.seeds == 3


def test_a_measure_that_cannot_be_made_gives_no_claim_and_a_reproduced_claim_drops_its_settle_text():
    specs = [_spec(lambda m: None), _spec(lambda m: Measured("x", rules.compare(HIGH, LOW), settle="s"))]
    [c] = evaluate("ch", specs, None)
    assert c.settle == "" and c.cause is None


def test_the_rule_words_may_come_from_the_measurements():
    spec = _spec(lambda m: Measured("x", True), kind="check", what=lambda m: f"equal at V = {m}")
    [c] = evaluate("ch", [spec], 10)
    assert c.rule == f"equal at V = 10; {KINDS['check'].rule}" and c.verdict == "reproduced"


def test_the_training_guard_names_why_a_model_is_no_evidence():
    from types import SimpleNamespace

    from urnlib.declare import untrained
    from urnlib.seeds import Seeds

    def runs(label, values, epochs=10):
        made = [SimpleNamespace(history=[{}] * epochs, value=v) for v in values]
        return Seeds(label, made, list(range(len(values))))

    groups = {"short": runs("short", [0.9, 0.9], epochs=5), "chance": runs("chance", [0.21, 0.19, 0.2]),
              "fine": runs("fine", [0.9, 0.92, 0.91])}
    found = untrained(groups, list(groups), epochs=10, measure=lambda r: r.value, chance=0.2,
                      what="accuracy", baseline="the majority class's 0.2")
    assert found == {"short": "trained fewer than 10 epochs",
                     "chance": "is at chance: accuracy 0.200 ± 0.010 (3 seeds), the majority class's 0.2"}


def test_a_declared_claim_is_the_papers_not_partly_and_no_headline_unless_said():
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", rules.compare(LOW, HIGH)))], None)
    assert (c.verdict, c.extension, c.headline) == ("not reproduced", False, False)
    made = _spec(lambda m: Measured("x", rules.compare(LOW, HIGH), partly=True))
    made = Spec(made.source, made.statement, made.quote, made.paper, made.kind, made.what, made.epoch,
                made.measure, extension=True, headline=True)
    [c] = evaluate("ch", [made], None)
    assert (c.verdict, c.extension, c.headline) == ("partly reproduced", True, True)
    with pytest.raises(AttributeError):  # a declaration is data: frozen
        made.kind = "check"
    with pytest.raises(AttributeError):
        Measured("x", True).ours = "y"


def test_a_combined_claim_checks_every_parts_kind():
    spec = _spec(lambda m: Measured("x", [rules.compare(HIGH, LOW), rules.threshold(HIGH, 0.5)]))
    with pytest.raises(ValueError, match="vs-number"):
        evaluate("ch", [spec], None)


def test_a_claim_no_number_of_seeds_decides_says_why_in_its_evidence():
    even = rules.every_seed([True, False, True, False], what="A first")  # an even split: no seeds decide it
    flat = rules.threshold(Stat.of([0.0001, -0.01, 0.01]), 0.0, name="slope")  # too small for 1,000 seeds
    assert even.holds is None and flat.holds is None and not even.seeds_needed and not flat.seeds_needed
    held = rules.every_seed([True] * 4, what="B first")
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", [held, even]), kind="every-seed")], None)
    assert (c.verdict, c.cause, c.seeds_needed) == ("inconclusive", "noise", None)
    assert c.evidence == ("undecided by the seeds' spread; A first on 2 of 4 seeds: no number of seeds would "
                          "decide it at this spread")
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", flat), kind="vs-number")], None)
    assert c.evidence.endswith(": more than 1,000 seeds per side would be needed")
    close = rules.compare(Stat.of([0.50, 0.60, 0.55]), Stat.of([0.52, 0.58, 0.51]))  # seeds would decide it
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", close))], None)
    assert c.seeds_needed and not c.evidence
    [c] = evaluate("ch", [_spec(lambda m: Measured("x", flat, evidence="ours"), kind="vs-number")], None)
    assert c.evidence == "ours"  # a measure's own evidence stays
