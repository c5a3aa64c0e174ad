"""The chapter registry: every chapter of the book, once, in book order, with its modules as objects.

Every list of chapters derives from :data:`CHAPTERS`: the notebook runner and its ``--only`` choices
(:mod:`urnlib.cli`), the chapters that train (``python -m urnlib.cli train``), the cost table's chapter of
each store folder (:mod:`urnlib.reports.cost`), restamping (``tools/restamp.py``), the book's tests and the
behaviour probes that pin each chapter's runs (``tests/probes``); ``book/_toc.yml`` (a file Jupyter Book
reads) must list :func:`toc_files` in this order (``tests/test_chapters.py`` checks it).

A chapter is a package, ``urnlib/chapters/<name>/`` (its experiment, report and claims), that imports the
shared library and nothing of another chapter. Adding one means adding its folder, its notebook and parameter
files, its probe, and one entry here. The registry sits above the chapters (it imports them) and nothing but
the CLI, the orchestrator, tools and tests imports it; the :class:`~urnlib.chapter.Chapter` type and the
shared paths live below, in :mod:`urnlib.chapter`::

    from urnlib.chapters import registry
    registry.names(trains=True)               # ['primer', 'agreement', ..., 'zoo']
    registry.get("dyck").config               # urnlib.chapters.dyck.experiment.Config
    registry.chapter_of_store("tpru_lm")      # 'tpru'
"""

from __future__ import annotations

from urnlib.chapter import NOTEBOOKS, PAGES_AFTER, RESULTS, ROOT, Chapter
from urnlib.chapters.agreement import experiment as agreement_experiment
from urnlib.chapters.agreement import report as agreement_report
from urnlib.chapters.cross_serial import experiment as cross_serial_experiment
from urnlib.chapters.cross_serial import report as cross_serial_report
from urnlib.chapters.dyck import experiment as dyck_experiment
from urnlib.chapters.dyck import report as dyck_report
from urnlib.chapters.matrix_embeddings import experiment as matrix_embeddings_experiment
from urnlib.chapters.matrix_embeddings import report as matrix_embeddings_report
from urnlib.chapters.primer import experiment as primer_experiment
from urnlib.chapters.primer import report as primer_report
from urnlib.chapters.tpru import experiment as tpru_experiment
from urnlib.chapters.tpru import report as tpru_report
from urnlib.chapters.zoo import experiment as zoo_experiment
from urnlib.chapters.zoo import report as zoo_report
from urnlib.params import check_choice
from urnlib import claims as claims_module

__all__ = ["Chapter", "CHAPTERS", "ROOT", "PAGES_AFTER", "NOTEBOOKS", "RESULTS", "get", "names",
           "chapter_of_store", "store_chapters", "toc_files"]


#: every chapter, in book order; "claims" stays last: it summarises the claims the others wrote
CHAPTERS: tuple[Chapter, ...] = (
    Chapter("primer", "A primer: recurrent networks for language", primer_experiment,
            primer_report, ("primer_lm", "primer_elman", "primer_anbn"),
            ("primer_lm", "primer_elman", "primer_anbn"),
            (("lecture 004, Elman (1990) Fig. 7", "fig-primer-elman-tree"),
             ("lecture 004, Weiss et al. (2018)", "fig-primer-anbn-acceptance"))),
    Chapter("agreement", "Subject-verb agreement", agreement_experiment, agreement_report,
            ("agreement", "agreement_offline", "agreement_linzen"), ("agreement",),
            (("paper 000 sec. 4, Fig. 2", "fig-agreement-accuracy"),
             ("paper 000 sec. 4 (after Linzen et al. 2016)", "fig-agreement-accuracy"),
             ("paper 000 sec. 6.1 and Fig. 2", "fig-agreement-accuracy"))),
    Chapter("dyck", "Dyck languages: matching brackets at depth", dyck_experiment,
            dyck_report, ("dyck",), ("dyck",),
            (("paper 000 Fig. 3", "fig-dyck-attractors"),
             ("paper 000 Fig. 3 (our variant)", "fig-dyck-variants"),
             ("paper 000 Table 4", "fig-dyck-signatures-1"), ("paper 001 Fig. 3", "fig-dyck-urn-lstm-1"))),
    Chapter("cross_serial", "Cross-serial dependencies", cross_serial_experiment,
            cross_serial_report, ("cross_serial",), ("cross_serial",),
            (("paper 001 Fig. 2", "fig-cross-serial-curves"),)),
    Chapter("tpru", "The TPRU: a recurrent unit with reduced tensor product representations",
            tpru_experiment, tpru_report, ("tpru_entailment", "tpru_lm"),
            ("tpru_entailment", "tpru_lm"),
            (("paper 002 sec. 6.3, Fig. 1", "fig-tpru-roles"),
             ("paper 002 appendix E, Fig. 2", "fig-tpru-slices"), ("paper 002 Table 4", "fig-tpru-lm"),
             ("paper 002 Table 2", "tbl-tpru-table2-released"))),
    Chapter("matrix_embeddings", "Language modelling with matrix embeddings",
            matrix_embeddings_experiment, matrix_embeddings_report,
            ("matrix_embeddings", "urn_lm"), ("matrix_embeddings",),
            (("paper 003 sec. 5", "fig-me-curves"),)),
    Chapter("zoo", "The zoo: every cell on every task", zoo_experiment, zoo_report,
            ("zoo",), ("zoo",)),
    Chapter("claims", "What reproduces: the scorecard and every claim", None, claims_module),
)



def names(trains: bool | None = None) -> list[str]:
    """The chapters' names in book order; ``trains=True``: only those with runs, ``False``: the others."""
    return [c.name for c in CHAPTERS if trains is None or c.trains == trains]


def get(name: str) -> Chapter:
    """The chapter ``name``.

    Raises:
        ParameterError: ``name`` is not a chapter (the message names those there are).
    """
    check_choice("chapter", name, names())
    return next(c for c in CHAPTERS if c.name == name)


def store_chapters() -> dict[str, str]:
    """``{experiment folder of the run store: the chapter that shows its runs}``."""
    return {store: c.name for c in CHAPTERS for store in c.stores}


def chapter_of_store(folder: str) -> str:
    """The chapter whose runs an experiment folder of the store holds (the folder itself if none does)."""
    return store_chapters().get(folder, folder)


def toc_files() -> list[str]:
    """The entries ``book/_toc.yml`` lists under ``chapters:``, in order (its ``root`` is :data:`ROOT`)."""
    return [c.page for c in CHAPTERS] + list(PAGES_AFTER)
