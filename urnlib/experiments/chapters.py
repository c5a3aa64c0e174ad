"""The chapter registry: every chapter of the book, once, in book order.

Every list of chapters derives from :data:`CHAPTERS`: the notebook runner and its ``--only`` choices
(:mod:`urnlib.cli`), the chapters that train (``python -m urnlib.cli train``), the cost table's chapter of
each store folder (:mod:`urnlib.reports.cost`), restamping (``tools/restamp.py``), the book's tests and the
behaviour probes that pin each chapter's runs (``tests/probes``); ``book/_toc.yml`` (a file Jupyter Book
reads) must list :func:`toc_files` in this order (``tests/test_chapters.py`` checks it). A new chapter is
one entry here, its notebook, its parameter files, its experiment and report modules, and its probe.

The entries name modules as strings and import nothing, so the registry is cheap to import (and a report
may read it without importing any experiment)::

    from urnlib.experiments import chapters
    chapters.names(trains=True)               # ['primer', 'agreement', ..., 'zoo']
    chapters.get("dyck").load_config()        # urnlib.experiments.dyck.Config
    chapters.chapter_of_store("tpru_lm")      # 'tpru'
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from urnlib.params import check_choice

__all__ = ["Chapter", "CHAPTERS", "ROOT", "PAGES_AFTER", "NOTEBOOKS", "RESULTS", "get", "names",
           "chapter_of_store", "store_chapters", "toc_files"]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: the committed run store: one folder per experiment (:attr:`Chapter.stores`)
RESULTS = NOTEBOOKS / "results"


@dataclass(frozen=True)
class Chapter:
    """One chapter of the book.

    Args:
        name: the chapter's name: its notebook ``notebooks/<name>.ipynb``, its parameter files
            ``notebooks/params/<name>.<scale>.yaml``, its page ``book/chapters/<name>`` and ``--only NAME``.
        title: the page's title (its notebook's first heading).
        experiment: the module whose ``Config`` plans the chapter's runs and whose ``run(config)`` obtains
            them; ``None`` for a chapter that trains nothing (the claims summary).
        report: the module that turns the stored runs into the page's tables, figures and claims.
        probes: the behaviour probes (``tests/probes``, goldens in ``tests/golden``) that pin what the
            chapter's runs compute.
        stores: the experiment folders of its runs in the run store (``notebooks/results/<folder>``).
        figures: ``(paper's place, label)`` pairs: the figure of the chapter's page (its ``:name:`` in the
            notebook's ``{glue:figure}``) or table (a ``tbl-`` label) that shows a figure or table of the
            paper, whose claims' sources start with that place (:meth:`figure`); the scorecard and the claims
            tables link to it.
    """

    name: str
    title: str
    experiment: str | None
    report: str
    probes: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    figures: tuple[tuple[str, str], ...] = ()

    def figure(self, source: str) -> str | None:
        """The label of the chapter's figure of a claim's ``source`` (e.g. ``"paper 001 Fig. 3b"``): that of
        the longest place in :attr:`figures` the source starts with, followed by at most one panel letter and
        then anything but a letter, digit or a decimal point (``"paper 000 sec. 4"`` is not ``sec. 4.1``);
        ``None`` when none is."""
        best = None
        for place, label in self.figures:
            if re.match(re.escape(place) + r"[a-z]?(?![A-Za-z0-9]|\.\d)", source) and \
                    (best is None or len(place) > len(best[0])):
                best = (place, label)
        return None if best is None else best[1]

    @property
    def trains(self) -> bool:
        """Whether the chapter has runs (an experiment with a plan)."""
        return self.experiment is not None

    @property
    def config(self) -> str | None:
        """``"module:Config"``: the chapter's config class (a
        :class:`~urnlib.experiments.config.ChapterConfig`); ``None`` for a chapter without runs."""
        return None if self.experiment is None else f"{self.experiment}:Config"

    @property
    def notebook(self) -> Path:
        return NOTEBOOKS / f"{self.name}.ipynb"

    @property
    def page(self) -> str:
        """The chapter's entry in ``book/_toc.yml`` (the executed notebook ``book/chapters/<name>.ipynb``)."""
        return f"chapters/{self.name}"

    def load_experiment(self) -> ModuleType:
        """The experiment module (imported now)."""
        if self.experiment is None:
            raise LookupError(f"chapter {self.name!r} trains nothing: it has no experiment module")
        return importlib.import_module(self.experiment)

    def load_config(self) -> type:
        """The chapter's config class (its experiment module's ``Config``)."""
        return self.load_experiment().Config

    def load_report(self) -> ModuleType:
        """The report module (imported now)."""
        return importlib.import_module(self.report)


#: every chapter, in book order; "claims" stays last: it summarises the claims the others wrote
CHAPTERS: tuple[Chapter, ...] = (
    Chapter("primer", "A primer: recurrent networks for language", "urnlib.experiments.primer",
            "urnlib.reports.primer", ("primer_lm", "primer_elman", "primer_anbn"),
            ("primer_lm", "primer_elman", "primer_anbn"),
            (("lecture 004, Elman (1990) Fig. 7", "fig-primer-elman-tree"),
             ("lecture 004, Weiss et al. (2018)", "fig-primer-anbn-acceptance"))),
    Chapter("agreement", "Subject-verb agreement", "urnlib.experiments.agreement", "urnlib.reports.agreement",
            ("agreement", "agreement_offline", "agreement_linzen"), ("agreement",),
            (("paper 000 sec. 4, Fig. 2", "fig-agreement-accuracy"),
             ("paper 000 sec. 4 (after Linzen et al. 2016)", "fig-agreement-accuracy"),
             ("paper 000 sec. 6.1 and Fig. 2", "fig-agreement-accuracy"))),
    Chapter("dyck", "Dyck languages: matching brackets at depth", "urnlib.experiments.dyck",
            "urnlib.reports.dyck", ("dyck",), ("dyck",),
            (("paper 000 Fig. 3", "fig-dyck-attractors"),
             ("paper 000 Fig. 3 (our variant)", "fig-dyck-variants"),
             ("paper 000 Table 4", "fig-dyck-signatures-1"), ("paper 001 Fig. 3", "fig-dyck-urn-lstm-1"))),
    Chapter("cross_serial", "Cross-serial dependencies", "urnlib.experiments.cross_serial",
            "urnlib.reports.cross_serial", ("cross_serial",), ("cross_serial",),
            (("paper 001 Fig. 2", "fig-cross-serial-curves"),)),
    Chapter("tpru", "The TPRU: a recurrent unit with reduced tensor product representations",
            "urnlib.experiments.tpru", "urnlib.reports.tpru", ("tpru_entailment", "tpru_lm"),
            ("tpru_entailment", "tpru_lm"),
            (("paper 002 sec. 6.3, Fig. 1", "fig-tpru-roles"),
             ("paper 002 appendix E, Fig. 2", "fig-tpru-slices"), ("paper 002 Table 4", "fig-tpru-lm"),
             ("paper 002 Table 2", "tbl-tpru-table2-released"))),
    Chapter("matrix_embeddings", "Language modelling with matrix embeddings",
            "urnlib.experiments.matrix_embeddings", "urnlib.reports.matrix_embeddings",
            ("matrix_embeddings", "urn_lm"), ("matrix_embeddings",),
            (("paper 003 sec. 5", "fig-me-curves"),)),
    Chapter("zoo", "The zoo: every cell on every task", "urnlib.experiments.zoo", "urnlib.reports.zoo",
            ("zoo",), ("zoo",)),
    Chapter("claims", "What reproduces: the scorecard and every claim", None, "urnlib.claims"),
)

ROOT = "intro"  #: the book's first page (book/intro.md), before the chapters
#: pages after the chapters (book/performance.md: speed and the cost table; book/bibliography.md: references)
PAGES_AFTER = ("performance", "bibliography")


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
