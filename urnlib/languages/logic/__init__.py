"""Propositional logical entailment (Evans et al. 2018, "Can neural networks understand logical
entailment?"; paper 002 sec. 5 and appendices B.1, C.1).

A model reads a premise A and a hypothesis B and predicts whether A |= B. Evans et al.'s released
validation and test files (github.com/google-deepmind/logical-entailment-dataset) ship in
notebooks/data/logical-entailment and are read by :func:`load_original_split`; their training file was
not released with them, so this package generates data by their published procedure.

Format (reference-facts, and the released files): one example per line ``A,B,E,H1,H2,H3``; formulas
over single lowercase letters with ``~`` (not), ``&``, ``|``, ``>`` (implies), every binary operation
in parentheses and every negated formula in parentheses too (``~(a)``, ``~((a&b))``); ``E`` = 1 iff
A |= B; ``H1`` = length(A) >= length(B), ``H2`` = vars(B) subset of vars(A), ``H3`` = literals of the
negation normal form of B subset of those of A (the three heuristic baselines of the released README).

The package's modules, one idea each (everything public is re-exported here, so ``logic.X`` works):

* :mod:`~urnlib.languages.logic.formulas`: the syntax tree, parser, printer and syntactic measures;
* :mod:`~urnlib.languages.logic.semantics`: evaluation, truth tables and entailment;
* :mod:`~urnlib.languages.logic.examples`: one example line and its heuristics H1-H3;
* :mod:`~urnlib.languages.logic.splits`: the splits' parameters (:class:`SplitSpec`, :data:`SPLITS`, and
  :data:`RELEASED_SPLITS` matched to the released files, chosen by :func:`split_table`);
* :mod:`~urnlib.languages.logic.generation`: generating splits by Evans et al.'s procedure;
* :mod:`~urnlib.languages.logic.exam`: the hand-made exam split;
* :mod:`~urnlib.languages.logic.stats`: split statistics and surface baselines;
* :mod:`~urnlib.languages.logic.files`: reading and writing Evans et al.'s files;
* :mod:`~urnlib.languages.logic.tokens`: token ids, encoding of pairs and the variable permutation.
"""

from __future__ import annotations

from urnlib.languages.logic.exam import EXAM_PAIRS, exam_examples
from urnlib.languages.logic.examples import Entailment, heuristics, make_example
from urnlib.languages.logic.files import (ORIGINAL_FILES, EntailmentFileError, check_original_files,
                                          load_entailment_file, load_original_split, original_dir,
                                          write_entailment_file)
from urnlib.languages.logic.formulas import (ALPHABET, OPERATORS, STYLES, Bin, Formula, FormulaSyntaxError,
                                             Not, Var, alpha_key, length, num_operators, num_variables,
                                             parse, to_string, variables)
from urnlib.languages.logic.generation import generate_dataset, generate_split, random_formula
from urnlib.languages.logic.semantics import entails, evaluate
from urnlib.languages.logic.splits import (METHODS, PAPER_MEAN_WORLDS, PAPER_SIZES, PROFILES,
                                           RELEASED_PROFILE_NOTE, RELEASED_SPLITS, SPLIT_NAMES, SPLITS,
                                           SplitSpec, split_table)
from urnlib.languages.logic.stats import (SURFACE_FEATURES, heuristic_accuracy, profile_table,
                                          released_vs_generated, split_profile, split_statistics,
                                          surface_baseline, surface_features)
from urnlib.languages.logic.tokens import (PAD_ID, SEP_ID, TOKEN_ID, VOCAB, decode, encode_labels,
                                           encode_packed, encode_pairs, permute_variables, tokenize,
                                           variable_ids)

__all__ = [
    "Var", "Not", "Bin", "Formula", "FormulaSyntaxError", "parse", "to_string", "variables",
    "num_variables", "num_operators", "length", "evaluate", "entails", "alpha_key",
    "Entailment", "heuristics", "make_example",
    "SplitSpec", "SPLITS", "SPLIT_NAMES", "PAPER_MEAN_WORLDS", "PAPER_SIZES", "EXAM_PAIRS",
    "RELEASED_SPLITS", "RELEASED_PROFILE_NOTE", "PROFILES", "split_table",
    "random_formula", "generate_split", "generate_dataset", "exam_examples",
    "split_statistics", "heuristic_accuracy", "surface_features", "surface_baseline", "SURFACE_FEATURES",
    "split_profile", "profile_table", "released_vs_generated",
    "STYLES", "METHODS",
    "EntailmentFileError", "load_entailment_file", "write_entailment_file", "ORIGINAL_FILES",
    "load_original_split", "check_original_files", "original_dir",
    "VOCAB", "PAD_ID", "SEP_ID", "TOKEN_ID", "variable_ids", "tokenize", "encode_pairs",
    "encode_packed", "encode_labels", "decode", "permute_variables",
    "ALPHABET", "OPERATORS",
]
