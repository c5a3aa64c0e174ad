"""The splits of the entailment dataset: how each is generated (:class:`SplitSpec`, :data:`SPLITS`) and
the paper's numbers they are tuned towards.

Split characteristics. Evans et al.'s Table 1 (reproduced as the "Mean 2^#Vars" row of paper 002's
Table 2) gives the mean number of truth-table rows 2^#vars of each split: valid 75.7, easy 81.0,
hard 184.4, big 3310.8, massive 848,570.0, exam 5.8 (:data:`PAPER_MEAN_WORLDS`). train/valid/easy
come from one distribution; hard has larger formulas; big larger still; massive many more variables;
exam is 100 hand-picked textbook examples. The ranges in :data:`SPLITS` are OUR reconstruction:
operator ranges follow the released files (validation formulas have roughly 3-12 operators, hard
and big ones roughly 10-40) and the [k // 3, k] rule; variable-pool ranges were tuned so that our mean
2^#vars lands near the values above (see :func:`~urnlib.languages.logic.split_statistics`). ``hard``
additionally keeps only four-tuples on which each heuristic H1-H3 is right on exactly 2 of the 4 lines
(our reading of "constructed so that the heuristics fail"); ``massive`` uses ``method="swap"``; ``exam``
is written by hand (:mod:`urnlib.languages.logic.exam`; their file is not shipped), labels checked by
truth table.
"""

from __future__ import annotations

from dataclasses import dataclass

from urnlib.params import ParameterError, check_choice, check_int

__all__ = ["METHODS", "SplitSpec", "PAPER_MEAN_WORLDS", "PAPER_SIZES", "SPLITS", "SPLIT_NAMES"]

METHODS = ("quadruple", "swap")


@dataclass(frozen=True)
class SplitSpec:
    """How one split is generated.

    Attributes:
        name: split name.
        count: number of examples (a multiple of 4; half positive).
        min_vars, max_vars: size of each group's variable pool, uniform in [min_vars, max_vars]
            (Evans et al.: uniform in [1, v]). The formulas need not use every pool variable.
        min_ops, max_ops: operators per formula, uniform in [min_ops, max_ops] (Evans et al.:
            [k // 3, k]).
        method: ``"quadruple"`` (four-tuples, Evans et al. sec. 3) or ``"swap"`` (positive pair plus
            the same premise with a subformula-swapped hypothesis, as in the released massive file).
        heuristic_neutral: keep only four-tuples on which each heuristic H1-H3 is right on exactly 2
            of 4 lines (our construction of "hard").
        pool_size: entailing pairs drawn per variable pool before four-tuples are matched (our choice).
    """

    name: str
    count: int
    min_vars: int
    max_vars: int
    min_ops: int
    max_ops: int
    method: str = "quadruple"
    heuristic_neutral: bool = False
    pool_size: int = 8

    def validate(self) -> "SplitSpec":
        check_int(f"{self.name}.count", self.count, minimum=0)
        if self.count % 4:
            raise ParameterError(
                f"{self.name}.count={self.count} must be a multiple of 4 (each four-tuple gives 2 "
                f"positive and 2 negative examples); e.g. {self.count - self.count % 4} or "
                f"{self.count + 4 - self.count % 4}")
        check_int(f"{self.name}.min_vars", self.min_vars, minimum=1, maximum=26)
        check_int(f"{self.name}.max_vars", self.max_vars, minimum=self.min_vars, maximum=26)
        check_int(f"{self.name}.min_ops", self.min_ops, minimum=0, maximum=200)
        check_int(f"{self.name}.max_ops", self.max_ops, minimum=self.min_ops, maximum=200)
        check_choice(f"{self.name}.method", self.method, METHODS)
        check_int(f"{self.name}.pool_size", self.pool_size, minimum=2)
        if not isinstance(self.heuristic_neutral, bool):
            raise ParameterError(f"{self.name}.heuristic_neutral must be True or False")
        return self


# Evans et al. Table 1 as quoted in paper 002 Table 2 ("Mean 2^#Vars"); train is from valid's
# distribution. Our generator is tuned towards these (split_statistics reports ours).
PAPER_MEAN_WORLDS = {"valid": 75.7, "easy": 81.0, "hard": 184.4, "big": 3310.8, "massive": 848570.0,
                     "exam": 5.8}
# Paper-scale sizes: train ~100k pairs (Evans et al.), valid/easy/hard ~5,000 (estimated from the
# released files' sizes), big/massive smaller files (~1.2k-1.7k lines by the same estimate), exam
# 100 lines. Rounded to multiples of 4; pass counts=PAPER_SIZES to generate_dataset for the full size.
PAPER_SIZES = {"train": 100000, "valid": 5000, "easy": 5000, "hard": 5000, "big": 1300,
               "massive": 1600, "exam": 100}

# Our reconstruction (see the module docstring); counts are tiny defaults for CI.
SPLITS: dict[str, SplitSpec] = {
    "train": SplitSpec("train", 400, 1, 10, 4, 12),
    "valid": SplitSpec("valid", 200, 1, 10, 4, 12),
    "easy": SplitSpec("easy", 200, 1, 10, 4, 12),
    "hard": SplitSpec("hard", 200, 1, 10, 10, 30, heuristic_neutral=True),
    "big": SplitSpec("big", 200, 7, 14, 13, 40),
    "massive": SplitSpec("massive", 200, 20, 24, 13, 40, method="swap"),
}
SPLIT_NAMES = ("train", "valid", "easy", "hard", "big", "massive", "exam")
