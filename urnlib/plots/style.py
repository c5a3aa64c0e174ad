"""The look of every figure of the book, set once for all chapters when :mod:`urnlib.plots` is imported.

Figures are sized for the book's text column and reach the page as SVG: vector images, sharp at any screen
density and zoom, with their text drawn as paths (the same glyphs in every browser), and about as large as
the 100 dpi PNGs they replace. A figure :data:`COLUMN` inches wide fills the text column at its natural size
(an SVG's inch is 96 CSS pixels); a wider one is shrunk to fit, and its text with it (three panels side by
side took 9 pt text down to 6 px), so a figure is never wider than the column: panels go two to a row at most
(:func:`grid_shape`), in more rows when there are more. A figure saved to a PNG file (``savefig``) gets
:data:`RC`'s 200 dpi.

:func:`apply` sets matplotlib's defaults (:data:`RC`) and, inside IPython (a notebook's kernel), makes the
inline backend give figures as SVG, which is also what ``myst_nb.glue`` stores and Jupyter Book shows.
"""

from __future__ import annotations

import warnings

import matplotlib as mpl

__all__ = ["COLUMN", "ROW", "MAX_COLS", "RC", "FORMATS", "apply", "grid_shape"]

#: inches: a figure this wide shows at its natural size in the book's text column at a 1280 px window (672 px
#: = 7 in, Jupyter Book 1.x's theme, measured in Chromium), with the 0.1 in margin savefig adds on each side
COLUMN = 6.8
#: inches: the height of one row of panels
ROW = 2.9
#: panels side by side at most: two panels of 3.5 in keep 9 pt text at its size
MAX_COLS = 2
#: matplotlib's defaults for every figure of the book
RC = {
    "figure.figsize": (COLUMN, 4.2),
    "figure.dpi": 100,  # the size of a figure drawn on screen outside the book
    "savefig.dpi": 200,  # a figure saved to a raster file: sharp on high-density screens and in print
    "font.size": 9.0,  # 12 px at the column's width
    "axes.titlesize": 9.5,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "svg.fonttype": "path",  # text as glyph outlines: it looks the same without the font installed
    "svg.hashsalt": "urnlib",  # the SVG's element ids do not change from one build to the next
}
#: the formats the inline backend gives a figure in (what the book shows): SVG only
FORMATS = ("svg",)
#: what IPython passes to ``savefig`` when it renders a figure inline: no creation date, so that the same
#: figure gives the same file (Jupyter Book names image files by their content's hash)
PRINT_KWARGS = {"bbox_inches": "tight", "metadata": {"Date": None}}


def apply() -> None:
    """Set :data:`RC` and, when running inside IPython, give inline figures (and glued ones) as
    :data:`FORMATS` (matplotlib_inline's ``InlineBackend.figure_formats``, which the inline backend also reads
    when it is configured later). Called once, when :mod:`urnlib.plots` is imported; calling it again
    changes nothing."""
    mpl.rcParams.update(RC)
    try:
        from IPython import get_ipython
    except ImportError:  # matplotlib without IPython: files only
        return
    shell = get_ipython()
    if shell is None:
        return
    from IPython.core.pylabtools import select_figure_formats
    try:
        from matplotlib_inline.config import InlineBackend
    except ImportError:  # IPython without Jupyter's inline backend (a terminal): figures open in windows
        return

    config = InlineBackend.instance(parent=shell)
    with warnings.catch_warnings():  # matplotlib_inline's own observers use a form traitlets deprecates
        warnings.simplefilter("ignore", DeprecationWarning)
        config.print_figure_kwargs = dict(PRINT_KWARGS)
        config.figure_formats = set(FORMATS)
    select_figure_formats(shell, set(FORMATS), **PRINT_KWARGS)


def grid_shape(panels: int, max_cols: int = MAX_COLS) -> tuple[int, int]:
    """``(rows, cols)`` of a figure of ``panels`` panels that fits the column: ``max_cols`` side by side at
    most (3 panels: a 2 x 2 grid whose fourth cell can hold the legend)."""
    if panels < 1:
        raise ValueError(f"a figure needs at least one panel, got {panels}")
    cols = min(panels, max_cols)
    return -(-panels // cols), cols
