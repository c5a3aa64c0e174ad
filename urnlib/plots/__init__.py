"""Plotting helpers for urnlib (seaborn for the statistical figures, matplotlib for what it does not draw).
Importing any of them sets the book's figure theme once (:func:`urnlib.plots.style.apply`: seaborn's theme
and plotting context, the colour-blind palette, figures sized for the book's column and given to the page as
SVG)."""

from urnlib.plots import style as _style

_style.apply()
