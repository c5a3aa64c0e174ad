"""The tpru chapter."""
