"""The tasks: one module per task, its data (training, validation, test) and its evaluation, written once.

A task module sits below the experiments and the training loop (DESIGN.md, "The one-way flow"): it reads the
generators of :mod:`urnlib.languages` and the readers of :mod:`urnlib.corpora`, and its evaluation functions
take a model as an argument; it imports no model, no training loop and no experiment (tests/test_layering.py).
Every chapter that trains on a task imports it from here, so no experiment imports another's.

* :mod:`urnlib.tasks.dyck`: Dyck strings, closing-bracket accuracy by attractors (dyck, zoo).
* :mod:`urnlib.tasks.cross_serial`: a^m b^n c^m d^n, full-string error by length (cross_serial, zoo).
* :mod:`urnlib.tasks.anbn`: a^n b^n, the largest n accepted (primer, zoo).
* :mod:`urnlib.tasks.agreement`: subject-verb agreement, accuracy by attractors (agreement, zoo).
* :mod:`urnlib.tasks.brown_lm`: the Brown corpus as one token stream, perplexity (primer, tpru).
* :mod:`urnlib.tasks.matrix_lm`: corpus sentences and the analogy test (matrix_embeddings and its baselines).
"""
