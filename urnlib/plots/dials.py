"""Dial glyphs for rotation angles and signature tables (paper 000, Table 4).

A signature (see :func:`urnlib.analysis.signature`) is drawn as a row of dials,
one per nonzero rotation angle ``a`` in ``(0, pi]``: a circle with a needle
pointing in direction ``(sin a, cos a)``, so small angles point up and an angle
of ``pi`` points straight down, as in Bernardy & Lappin (2022), sec. 3.

Only matplotlib is used; everything works with the Agg backend.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Circle

from urnlib.plots.style import COLUMN

__all__ = ["draw_dial", "signature_table_figure"]


def draw_dial(
    ax,
    angle: float,
    *,
    size: float = 1.0,
    center: Tuple[float, float] = (0.0, 0.0),
    color: str = "black",
    linewidth: float = 1.0,
) -> Line2D:
    r"""Draw one dial glyph for a rotation angle: a circle with a needle.

    The needle goes from the centre :math:`c` to
    :math:`c + r\,(\sin a, \cos a)` with :math:`r = \mathrm{size}/2`: angle 0
    points straight up, :math:`\pi/2` right, :math:`\pi` straight down. Sets an
    equal aspect ratio on ``ax`` so that the circle is round.

    Serves paper 000, sec. 3 ("Signature of Embeddings") and Tables 3 and 4.

    Args:
        ax: matplotlib ``Axes`` to draw on (data coordinates).
        angle: rotation angle in radians (normally in ``[0, pi]``).
        size: diameter of the dial in data units.
        center: centre ``(x, y)`` of the dial in data units.
        color: colour of circle and needle.
        linewidth: line width in points.

    Returns:
        matplotlib.lines.Line2D: the needle; its data is
        ``([cx, cx + r sin a], [cy, cy + r cos a])``.
    """
    cx, cy = float(center[0]), float(center[1])
    r = 0.5 * float(size)
    a = float(angle)
    ax.add_patch(Circle((cx, cy), r, fill=False, edgecolor=color, linewidth=linewidth))
    (needle,) = ax.plot(
        [cx, cx + r * np.sin(a)],
        [cy, cy + r * np.cos(a)],
        color=color,
        linewidth=1.4 * linewidth,
        solid_capstyle="round",
    )
    ax.set_aspect("equal")
    return needle


def signature_table_figure(
    rows: Sequence[Tuple[str, Optional[float], Sequence[float]]],
    title: Optional[str] = None,
    *,
    width: float = COLUMN,
    row_height: float = 0.32,
    headers: Tuple[str, str, str] = ("symbol", "average effect", "signature"),
) -> Figure:
    r"""Table-like figure of effects and signatures, one row per symbol or phrase.

    Each row shows the label, the average effect :math:`\|Q - I\|_F^2` with two
    decimals, then one dial (see :func:`draw_dial`) per angle of the signature;
    a row with no angles shows no dials (e.g. an exactly neutral phrase), and a
    near-identity product such as a matching bracket pair shows dials pointing
    almost straight up. The layout uses one axes whose data unit is a fixed
    number of inches in both directions, so dials are round and the figure
    height grows with the number of rows.

    Serves paper 000, Table 4 (ten single brackets, then five matching pairs).

    Args:
        rows: sequence of ``(label, effect, angles)``; ``effect`` may be ``None``
            (left blank) and ``angles`` is any sequence of radians, e.g. from
            :func:`urnlib.analysis.signature`.
        title: optional figure title.
        width: figure width in inches (the book's column by default).
        row_height: height of one row in inches (also the dial pitch);
            reduced automatically when many dials must fit in ``width``.
        headers: the three column headers.

    Returns:
        matplotlib.figure.Figure: a figure (not attached to pyplot) with a
        single axes; its ``ax.texts`` are the 3 headers followed by label and
        effect of every row, and it holds one ``Circle`` patch per dial.
    """
    rows = [(str(lbl), eff, [float(a) for a in np.atleast_1d(np.asarray(angs, dtype=float))])
            for lbl, eff, angs in rows]
    max_dials = max((len(angs) for _, _, angs in rows), default=0)

    # column layout, in inches
    char_w = 0.095  # approximate width of one monospace character at 10 pt
    label_w = max([len(headers[0])] + [len(lbl) for lbl, _, _ in rows]) * char_w + 0.3
    effect_w = max(len(headers[1]) * 0.075, 0.9) + 0.4
    dial_space = max(width - label_w - effect_w - 0.2, 1.0)
    unit = row_height  # inches per data unit (one dial pitch, one row)
    if max_dials * unit > dial_space:
        unit = dial_space / max_dials

    n_rows = len(rows)
    title_h = 0.45 if title else 0.0
    table_h = (n_rows + 1.4) * unit  # header + rows + margins
    height = table_h + title_h

    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0.0, 0.0, 1.0, table_h / height))
    ax.set_axis_off()
    # data coordinates: 1 unit == `unit` inches in x and y; row i is centred at y = -(i + 1)
    ax.set_xlim(0.0, width / unit)
    ax.set_ylim(-(n_rows + 0.9), 0.5)

    x_label = 0.15 / unit
    x_effect = (label_w + effect_w - 0.15) / unit  # right edge of the effect column
    x_dials = (label_w + effect_w + 0.2) / unit

    _draw_rows(ax, rows, headers, (x_label, x_effect, x_dials), (0.05 / unit, (width - 0.05) / unit))

    # draw_dial asks for an equal aspect; the limits above already have it
    ax.set_xlim(0.0, width / unit)
    ax.set_ylim(-(n_rows + 0.9), 0.5)
    if title:
        fig.suptitle(title, y=1.0 - 0.08 / height, va="top", fontsize=11)
    return fig


def _draw_rows(ax, rows, headers, columns: Tuple[float, float, float], rule: Tuple[float, float]) -> None:
    """The headers, a rule under them, and each row's label, effect and dials of
    :func:`signature_table_figure` (``columns``: x of the label, the effect's right edge and the dials)."""
    x_label, x_effect, x_dials = columns
    header_kw = dict(va="center", fontsize=10, fontweight="bold", parse_math=False)
    ax.text(x_label, 0.0, headers[0], ha="left", **header_kw)
    ax.text(x_effect, 0.0, headers[1], ha="right", **header_kw)
    ax.text(x_dials, 0.0, headers[2], ha="left", **header_kw)
    ax.plot(list(rule), [-0.5, -0.5], color="0.3", linewidth=0.8)
    for i, (label, eff, angles) in enumerate(rows):
        y = -(i + 1.0)
        ax.text(x_label, y, label, ha="left", va="center", fontsize=10,
                family="monospace", parse_math=False)
        ax.text(x_effect, y, "" if eff is None else f"{float(eff):.2f}", ha="right",
                va="center", fontsize=10, parse_math=False)
        for j, a in enumerate(angles):
            draw_dial(ax, a, size=0.75, center=(x_dials + 0.5 + j, y), linewidth=0.9)
