"""The primer chapter."""
