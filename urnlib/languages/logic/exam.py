"""The exam split: hand-made textbook pairs (Evans et al.'s exam file of 100 textbook examples is not
shipped, so these are ours), labels re-checked by truth table."""

from __future__ import annotations

from urnlib.languages.logic.examples import Entailment, make_example

__all__ = ["EXAM_PAIRS", "exam_examples"]

# Hand-made textbook pairs (ours; Evans et al.'s exam file is not shipped): (premise, hypothesis,
# label). Each law comes with a nearby fallacy, so the set is balanced. Labels are re-checked by
# truth table in exam_examples().
EXAM_PAIRS: tuple[tuple[str, str, int], ...] = (
    ("(p>q)&p", "q", 1),                                   # modus ponens
    ("(p>q)&q", "p", 0),                                   # affirming the consequent
    ("(p>q)&~q", "~p", 1),                                 # modus tollens
    ("(p>q)&~p", "~q", 0),                                 # denying the antecedent
    ("(p>q)&(q>r)", "p>r", 1),                             # hypothetical syllogism
    ("p>r", "(p>q)&(q>r)", 0),
    ("(p|q)&~p", "q", 1),                                  # disjunctive syllogism
    ("(p|q)&p", "~q", 0),                                  # affirming a disjunct
    ("p>q", "~q>~p", 1),                                   # contraposition
    ("p>q", "q>p", 0),                                     # converse
    ("p>q", "~p>~q", 0),                                   # inverse
    ("~q>~p", "p>q", 1),
    ("~(p&q)", "~p|~q", 1),                                # De Morgan
    ("~(p&q)", "~p&~q", 0),
    ("~(p|q)", "~p&~q", 1),                                # De Morgan
    ("~p|~q", "~(p|q)", 0),
    ("~~p", "p", 1),                                       # double negation
    ("p", "~~p", 1),
    ("p", "~p", 0),
    ("p", "p|q", 1),                                       # addition
    ("p|q", "p", 0),
    ("p&q", "p", 1),                                       # simplification
    ("p", "p&q", 0),
    ("p&q", "q&p", 1),                                     # commutativity
    ("p|q", "p&q", 0),
    ("((p>q)&(r>s))&(p|r)", "q|s", 1),                     # constructive dilemma
    ("((p>q)&(r>s))&(p|r)", "q&s", 0),
    ("((p>q)&(r>s))&(~q|~s)", "~p|~r", 1),                 # destructive dilemma
    ("((p>q)&(r>s))&(~q|~s)", "~p&~r", 0),
    ("(p&q)>r", "p>(q>r)", 1),                             # exportation
    ("p>(q>r)", "(p&q)>r", 1),                             # importation
    ("p>(q>r)", "(p>q)>r", 0),
    ("p>q", "~p|q", 1),                                    # material implication
    ("p>q", "p|~q", 0),
    ("p&(q|r)", "(p&q)|(p&r)", 1),                         # distribution
    ("p|(q&r)", "(p|q)&r", 0),
    ("p|(q&r)", "(p|q)&(p|r)", 1),
    ("(p&q)|r", "p&(q|r)", 0),
    ("p|(p&q)", "p", 1),                                   # absorption
    ("p&(p|q)", "q", 0),
    ("p&~p", "q", 1),                                      # explosion
    ("p|~p", "q", 0),
    ("q", "p|~p", 1),                                      # anything entails a tautology
    ("q", "p&~p", 0),
    ("r", "((p>q)>p)>p", 1),                               # Peirce's law
    ("(p>q)>p", "q", 0),
    ("(p|q)&(~p|r)", "q|r", 1),                            # resolution
    ("(p|q)&(~p|r)", "q&r", 0),
    ("(p>r)&(q>r)", "(p|q)>r", 1),                         # proof by cases
    ("(p>r)|(q>r)", "(p|q)>r", 0),
    ("(p>q)&(p>r)", "p>(q&r)", 1),
    ("(p>q)|(p>r)", "p>(q&r)", 0),
    ("(p>q)&(p>~q)", "~p", 1),                             # reductio
    ("(p>q)&(~p>q)", "p", 0),
    ("(p>q)&(~p>q)", "q", 1),
    ("~p>p", "p", 1),                                      # consequentia mirabilis
    ("p>~p", "p", 0),
    ("p", "q>p", 1),                                       # weakening
    ("p", "p>q", 0),
    ("~p", "p>q", 1),
    ("~p", "q>p", 0),
    ("~p>q", "~q>p", 1),
    ("~p>q", "p>~q", 0),
    ("p>(q&r)", "p>q", 1),
    ("p>(q|r)", "p>q", 0),
    ("(p|q)>r", "p>r", 1),
    ("(p&q)>r", "p>r", 0),
    ("~(p>q)", "p&~q", 1),                                 # negated conditional
    ("~(p>q)", "q", 0),
    ("(p>q)&(q>p)", "(p&q)|(~p&~q)", 1),                   # biconditional
    ("(p>q)&(q>p)", "p&q", 0),
    ("(p|q)|r", "p|(q|r)", 1),                             # associativity
    ("(p&q)&r", "p&(q&s)", 0),
    ("p>(q>r)", "q>(p&r)", 0),
    ("(p&q)>r", "(p>r)&(q>r)", 0),
    ("p|q", "p>q", 0),
)


def exam_examples() -> list[Entailment]:
    """Our hand-made textbook examples (:data:`EXAM_PAIRS`) as :class:`Entailment` lines.

    Raises:
        AssertionError: if a stated label disagrees with the truth table (it does not).
    """
    out = []
    for a, b, e in EXAM_PAIRS:
        ex = make_example(a, b)
        if ex.label != e:
            raise AssertionError(f"exam pair {a!r} |= {b!r}: stated {e}, truth table {ex.label}")
        out.append(ex)
    return out
