"""The zoo chapter."""
