"""The cross_serial chapter."""
