"""The look of every figure of the book, set once for all chapters when :mod:`urnlib.plots` is imported.

One seaborn theme (:func:`apply`: ``seaborn.set_theme`` with the ``"whitegrid"`` style, the :data:`CONTEXT`
plotting context and the book's colour-blind-safe palette, :data:`urnlib.models.palette.COLORBLIND`) for
seaborn's figures and matplotlib's alike (the rotation dials, the Elman tree). Its font sizes are chosen for
the page: figures reach it as SVG, whose inch is 96 CSS pixels, so a point (1/72 in) is 4/3 px where a figure
shows at its natural size. A figure :data:`COLUMN` inches wide does (672 px with the 0.1 in margin that
``savefig`` adds on each side, inside a column of :data:`PAGE_PX` = 688 px at a 1280 px window, 790 px from
1440 px); a wider one is shrunk to fit, and its text with it (three panels side by side took 9 pt text down
to 6 px), so a figure is never wider than the column: panels go two to a row at most (:func:`grid_shape`), in
more rows when there are more, and a legend below them takes as many columns as fit. At the natural size, the
smallest text, tick labels and legends at :data:`TICK_PT` points, is :func:`px` (:data:`TICK_PT`) = 12 px,
11 px or more down to a figure shrunk to 92% (:data:`MIN_PX`); no text of a figure is smaller than
:data:`TICK_PT` (no ``"small"`` sizes). A figure saved to a PNG file (``savefig``) gets :data:`RC`'s 200 dpi.

Inside IPython (a notebook's kernel), :func:`apply` makes the inline backend give figures as SVG, which is
also what ``myst_nb.glue`` stores and Jupyter Book shows.
"""

from __future__ import annotations

import warnings

import seaborn as sns

from urnlib.models.palette import COLORBLIND

__all__ = ["COLUMN", "ROW", "MAX_COLS", "CONTEXT", "TICK_PT", "FONTS", "PAGE_PX", "MIN_PX", "RC", "FORMATS",
           "PRINT_KWARGS", "apply", "grid_shape", "px"]

#: inches: a figure this wide shows at its natural size in the book's text column at a 1280 px window (672 px
#: = 7 in, Jupyter Book 1.x's theme, measured in Chromium), with the 0.1 in margin savefig adds on each side
COLUMN = 6.8
#: inches: the height of one row of panels
ROW = 2.9
#: panels side by side at most: two panels of 3.5 in keep 9 pt text at its size
MAX_COLS = 2
#: seaborn's plotting context of every figure: "paper" (thin lines, small markers for panels of 3.4 in)
CONTEXT = "paper"
#: points: the smallest text of a figure (tick labels, legends, panel notes): 12 px at the natural size
TICK_PT = 9.0
#: the context's font sizes (points): seaborn's "paper" context has 8.8 pt ticks and 9.6 pt labels
FONTS = {"font.size": TICK_PT, "xtick.labelsize": TICK_PT, "ytick.labelsize": TICK_PT,
         "legend.fontsize": TICK_PT, "legend.title_fontsize": TICK_PT, "axes.labelsize": 9.5,
         "axes.titlesize": 10.0, "figure.titlesize": 10.5}
#: px: the width of the figures' column at a 1280 px window (Jupyter Book 1.x's theme in Chromium: 688 px; 755
#: at 1024 px, where the sidebar folds, 790 from 1440 px): a figure's SVG up to this wide shows at its natural
#: size, a wider one shrunk to it
PAGE_PX = 688
#: px: the smallest text the book's figures show at the page's width (the browser test fails below 10 px)
MIN_PX = 11.0
#: matplotlib's settings over the theme's, for every figure of the book
RC = {
    "figure.figsize": (COLUMN, 4.2),
    "figure.dpi": 100,  # the size of a figure drawn on screen outside the book
    "savefig.dpi": 200,  # a figure saved to a raster file: sharp on high-density screens and in print
    "font.sans-serif": ["DejaVu Sans"],  # matplotlib's own font: no search for a missing Arial
    "axes.titleweight": "normal",
    "grid.linewidth": 0.6,
    "svg.fonttype": "path",  # text as glyph outlines: it looks the same without the font installed
    "svg.hashsalt": "urnlib",  # the SVG's element ids do not change from one build to the next
}
#: the formats the inline backend gives a figure in (what the book shows): SVG only
FORMATS = ("svg",)
#: what IPython passes to ``savefig`` when it renders a figure inline: no creation date, so that the same
#: figure gives the same file (Jupyter Book names image files by their content's hash)
PRINT_KWARGS = {"bbox_inches": "tight", "metadata": {"Date": None}}


def px(points: float, scale: float = 1.0) -> float:
    """CSS pixels of text ``points`` high in an SVG figure shown at ``scale`` of its natural size (96 px an
    inch, 72 points an inch)."""
    return points * 96 / 72 * scale


def apply() -> None:
    """Set the book's seaborn theme (``seaborn.set_theme``: style ``"whitegrid"``, :data:`CONTEXT` with
    :data:`FONTS`, the colour-blind palette) with :data:`RC` over it and, when running inside IPython, give
    inline figures (and glued ones) as :data:`FORMATS` (matplotlib_inline's
    ``InlineBackend.figure_formats``, which the inline backend also reads when it is configured later).
    Called once, when :mod:`urnlib.plots` is imported; calling it again changes nothing."""
    sns.set_theme(context=sns.plotting_context(CONTEXT, rc=FONTS), style="whitegrid",
                  palette=list(COLORBLIND), rc=RC)
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
