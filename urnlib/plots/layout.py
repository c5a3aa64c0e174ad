"""Words on a figure fitted to the book's column: panel titles after their letters, axis labels and the names
in a legend broken into lines as wide as their panel (:func:`wrapped`), and a legend below the panels in as
many columns as fit (:func:`fitting_legend`). At the theme's sizes (:mod:`urnlib.plots.style`), long titles
and labels would otherwise run into the next panel or past the figure's edge, and a figure wider than the
column is shrunk on the page with its text.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

__all__ = ["wrapped", "titled", "labelled", "fitting_legend", "cell_legend"]

#: inches of a grid cell beside and above/below a panel (tick labels and axis label; title, tick labels, axis
#: label): what is left is the room :func:`wrapped` gives a title or a label
_MARGINS = (0.72, 1.0)


def wrapped(ax: Axes, text: str, size: float, *, along: str = "x", room: float = 1.0) -> str:
    """``text`` broken at spaces into lines that fit the panel ``ax``: ``room`` times its width (its height
    for a y axis label, ``along="y"``) at ``size`` points, measured by the figure's renderer (long titles,
    axis labels and marks' names at the theme's sizes would otherwise run into the next panel or off the
    figure, and a figure wider than the column is shrunk with its text). Lines the text already breaks
    stay."""
    fig = ax.figure
    spec = ax.get_subplotspec()
    if spec is None:  # an axes placed by hand: its own box
        box = ax.get_position()
        width, height = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
    else:  # its cell of the grid, less the room its tick labels, axis labels and title take
        rows, cols = spec.get_geometry()[:2]
        width, height = fig.get_figwidth() / cols - _MARGINS[0], fig.get_figheight() / rows - _MARGINS[1]
    limit = room * (width if along == "x" else height)
    renderer, font = fig.canvas.get_renderer(), FontProperties(size=size)

    def inches(line: str) -> float:
        return renderer.get_text_width_height_descent(line, font, ismath=False)[0] / renderer.dpi

    return "\n".join(line for paragraph in text.split("\n") for line in _balanced(paragraph, limit, inches))


def _lines(words: list[str], limit: float, inches) -> list[str]:
    lines, line = [], ""
    for word in words:
        if line and inches(f"{line} {word}") > limit:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line]


def _balanced(paragraph: str, limit: float, inches) -> list[str]:
    """The fewest lines of ``paragraph`` within ``limit``, as even in length as they go (not a long line and
    a word)."""
    words = paragraph.split(" ")
    lines = _lines(words, limit, inches)
    if len(lines) > 1:
        even = inches(paragraph) / len(lines)
        while even < limit and len(_lines(words, even, inches)) > len(lines):
            even *= 1.05
        lines = _lines(words, min(even, limit), inches)
    return lines


def titled(ax: Axes, title: str) -> None:
    """Give ``ax`` its title: after its letter where it has one (``"(a) test loss per epoch"``), left-aligned,
    else centred; in lines as wide as the panel (:func:`wrapped`)."""
    letter, size = ax.get_title(loc="left"), plt.rcParams["axes.titlesize"]
    if letter:
        ax.set_title(wrapped(ax, f"{letter} {title}", size), loc="left")
    else:
        ax.set_title(wrapped(ax, title, size))


def labelled(ax: Axes, xlabel: str, ylabel: str | None = None) -> None:
    """Give ``ax`` its axis labels, in lines as long as the panel is wide or high (:func:`wrapped`)."""
    size = plt.rcParams["axes.labelsize"]
    ax.set_xlabel(wrapped(ax, xlabel, size))
    if ylabel is not None:
        ax.set_ylabel(wrapped(ax, ylabel, size, along="y"))


def fitting_legend(fig: Figure, handles: list, names: list[str], max_cols: int = 6, **options):
    """``fig.legend`` below the panels (``"outside lower center"``) in as many columns as fit the figure's
    width, ``max_cols`` at most: a legend wider than the figure would widen the saved SVG past the book's
    column, and the page would shrink the figure and its text with it."""
    width = fig.get_figwidth() * fig.dpi
    renderer = fig.canvas.get_renderer()
    for ncol in range(min(len(names), max_cols), 0, -1):
        legend = fig.legend(handles, names, loc="outside lower center", ncol=ncol, **options)
        if ncol == 1 or legend.get_window_extent(renderer).width <= 0.98 * width:
            return legend
        legend.remove()


def cell_legend(cell: Axes, handles: list, names: list[str]):
    """A legend filling the grid's spare ``cell`` (three panels in a 2 x 2 grid), each name broken into lines
    as wide as the cell leaves beside its key: a name wider than the cell would widen its column and squeeze
    the panels beside it (a TPRU ablation's settings took the panels down to half their width)."""
    size = plt.rcParams["legend.fontsize"]
    return cell.legend(handles, [wrapped(cell, name, size, room=0.8) for name in names], loc="center",
                       frameon=False)
