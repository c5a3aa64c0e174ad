"""Sentences of the papers that more than one chapter decides, written once (the claims quote them verbatim).

The lecture (paper 004) states these results on its slides; the primer decides them on its a^n b^n runs and
the zoo on every budget of its a^n b^n task.
"""

__all__ = ["QUOTE_WEISS", "QUOTE_BEST"]

#: lecture 004, the slide on Weiss et al. (2018)
QUOTE_WEISS = "Training recurrent architectures on a^nb^n"
#: lecture 004, the same slide's summary
QUOTE_BEST = "For classic counting language, LSTM works the best"
