"""The TPRU of paper 002 ("A simple recurrent unit with reduced tensor product representations"): one
import for the modules that implement it, each one idea.

* :mod:`urnlib.models.tpru_cell`: the cell (sec. 3, eqs. 2-6), its Modifications I-III (sec. 4) and
  multi-slice fillers (appendix E): :class:`TPRU`, :class:`TPRUStep`, :func:`relu_square_normalise`,
  :data:`VARIANTS`;
* :mod:`urnlib.models.tpru_stack`: stacks of TPRU, GRU or LSTM layers and the language model around them
  (appendix C.3): :class:`RecurrentStack`, :class:`StackLM`, :class:`TPRULanguageModel`, :data:`STACK_KINDS`;
* :mod:`urnlib.models.tpru_counts`: Table 1's parameter counts and time complexity, and the counts of built
  modules: :func:`table1_parameter_count`, :func:`table1_time_complexity`, :func:`bias_count`,
  :func:`weight_matrix_count`;
* :mod:`urnlib.models.tpru_analysis`: the gradient analysis of sec. 4 and appendix A (eqs. 7-8).

The model registry (:mod:`urnlib.models.registry`) builds ``"tpru D N<roles> [s<slices>]"`` as
:class:`TPRULanguageModel` from here; its behaviour is the component ``model.tpru``.
"""

from __future__ import annotations

from urnlib.models.tpru_cell import TPRU, VARIANTS, TPRUStep, relu_square_normalise
from urnlib.models.tpru_counts import (
    bias_count,
    table1_parameter_count,
    table1_time_complexity,
    weight_matrix_count,
)
from urnlib.models.tpru_stack import (
    STACK_KINDS,
    RecurrentStack,
    StackLM,
    TPRULanguageModel,
)

__all__ = [
    "STACK_KINDS",
    "TPRU",
    "VARIANTS",
    "RecurrentStack",
    "StackLM",
    "TPRULanguageModel",
    "TPRUStep",
    "bias_count",
    "relu_square_normalise",
    "table1_parameter_count",
    "table1_time_complexity",
    "weight_matrix_count",
]
