"""urnlib: unitary RNNs, their baselines, synthetic languages and the analyses of the companion book."""

__version__ = "0.1.0"
