"""Plotting helpers for urnlib (matplotlib only)."""
