"""Training curves of paper 002 (the TPRU): Fig. 1 (more role vectors), Fig. 2 (one slice against several) and
the language models' curves (Table 4, right). They take numbers per epoch, not runs or models.

A curve is ``(epochs, values)``. The TPRUs are coloured along a colour map by their number of roles N; the GRU
and LSTM, the references, are grey (dotted and dash-dotted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

__all__ = ["roles_figure", "slices_figure", "lm_curves_figure"]

Curve = tuple[Sequence[float], Sequence[float]]
_REFERENCE_STYLES = (":", "-.", "--")


def _two_panels(height: float = 3.6) -> tuple[Figure, Axes, Axes]:
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.4, height), layout="constrained")
    return fig, a, b


def _epoch_axes(*axes: Axes) -> None:
    """Grid and whole-number epoch ticks on each panel."""
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def roles_figure(loss: Mapping[int, Curve], accuracy: Mapping[int, Curve],
                 references: Mapping[str, tuple[Curve, Curve]], *, loss_label: str, accuracy_label: str,
                 accuracy_title: str) -> Figure:
    """Paper 002 Fig. 1: (a) training loss and (b) an accuracy per epoch of TPRUs with N roles, and reference
    models in grey.

    Args:
        loss: N -> the TPRU's training-loss curve (drawn by increasing N, coloured along viridis).
        accuracy: N -> its accuracy curve (fractions; drawn in %).
        references: label -> (loss curve, accuracy curve) of a comparison model (e.g. ``"GRU 64"``).
        loss_label, accuracy_label: the y-axis labels.
        accuracy_title: what panel (b) shows, e.g. ``"validation accuracy"``.
    """
    fig, a, b = _two_panels()
    roles = sorted(loss)
    colours = plt.cm.viridis(np.linspace(0.1, 0.85, max(len(roles), 1)))
    for colour, n in zip(colours, roles):
        a.plot(*loss[n], marker="o", ms=3, color=colour, label=f"TPRU N={n}")
        epochs, values = accuracy[n]
        b.plot(epochs, 100 * np.asarray(values), marker="o", ms=3, color=colour, label=f"TPRU N={n}")
    for style, (label, (l_curve, a_curve)) in zip(_REFERENCE_STYLES * len(references), references.items()):
        a.plot(*l_curve, style, color="grey", label=label)
        b.plot(a_curve[0], 100 * np.asarray(a_curve[1]), style, color="grey", label=label)
    a.set(xlabel="epoch", ylabel=loss_label, title="(a) training loss")
    b.set(xlabel="epoch", ylabel=accuracy_label, title=f"(b) {accuracy_title}")
    _epoch_axes(a, b)
    b.legend(fontsize=8)
    return fig


def slices_figure(pairs: Mapping[int, Mapping[str, tuple[str, Curve, Curve]]], *, loss_label: str,
                  accuracy_label: str) -> Figure:
    """Paper 002 Fig. 2: one slice (solid) against several (dashed), (a) training loss and (b) an accuracy per
    epoch, one colour per number of roles N.

    Args:
        pairs: N -> ``{"single": (name, loss curve, accuracy curve), "multi": (name, loss, accuracy)}``; the
            names label the legend (the paper's "4" and "4 M").
        loss_label, accuracy_label: the y-axis labels.
    """
    fig, a, b = _two_panels()
    colours = plt.cm.plasma(np.linspace(0.1, 0.8, max(len(pairs), 1)))
    for colour, n in zip(colours, sorted(pairs)):
        for key, style in (("single", "-"), ("multi", "--")):
            name, l_curve, a_curve = pairs[n][key]
            a.plot(*l_curve, style, marker="o", ms=3, color=colour, label=name)
            b.plot(a_curve[0], 100 * np.asarray(a_curve[1]), style, marker="o", ms=3, color=colour,
                   label=name)
    a.set(xlabel="epoch", ylabel=loss_label, title="(a) training loss")
    b.set(xlabel="epoch", ylabel=accuracy_label, title="(b) accuracy on training pairs")
    _epoch_axes(a, b)
    b.legend(fontsize=8, title="roles N")
    return fig


def lm_curves_figure(curves: Mapping[str, tuple[Curve, Curve]]) -> Figure:
    """Paper 002 Table 4 (right): (a) training NLL per token and (b) validation perplexity per epoch.

    Args:
        curves: label -> (training-loss curve, validation-perplexity curve).
    """
    fig, a, b = _two_panels(3.4)
    for label, (l_curve, p_curve) in curves.items():
        a.plot(*l_curve, marker="o", label=label)
        b.plot(*p_curve, marker="o", label=label)
    a.set(xlabel="epoch", ylabel="training NLL (nats per token)", title="(a) training loss")
    b.set(xlabel="epoch", ylabel="validation perplexity", title="(b) validation perplexity")
    _epoch_axes(a, b)
    a.legend(fontsize=8)
    return fig
