"""Plotting helpers for urnlib (matplotlib only). Importing any of them sets the book's figure style once
(:func:`urnlib.plots.style.apply`: figures sized for the book's column, given to the page as SVG)."""

from urnlib.plots import style as _style

_style.apply()
