"""Synthetic languages: generators, vocabularies and task-specific scorers."""
