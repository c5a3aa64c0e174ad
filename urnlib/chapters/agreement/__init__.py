"""The agreement chapter."""
