"""A chapter of the book, as the chapter registry (:mod:`urnlib.chapters.registry`) lists it, and the paths
every layer shares. This module imports no chapter: the chapters' packages (``urnlib/chapters/<name>/``) and
the shared report helpers may read it, and the registry, which sits above the chapters, fills it with their
modules as objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ["Chapter", "NOTEBOOKS", "RESULTS", "ROOT", "PAGES_AFTER"]

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: the committed run store: one folder per experiment (:attr:`Chapter.stores`)
RESULTS = NOTEBOOKS / "results"
ROOT = "intro"  #: the book's first page (book/intro.md), before the chapters
#: pages after the chapters (book/performance.md: speed and the cost table; book/testing.md: how we test;
#: book/bibliography.md: references)
PAGES_AFTER = ("performance", "testing", "bibliography")


@dataclass(frozen=True)
class Chapter:
    """One chapter of the book.

    Args:
        name: the chapter's name: its notebook ``notebooks/<name>.ipynb``, its parameter files
            ``notebooks/params/<name>.<scale>.yaml``, its page ``book/chapters/<name>`` and ``--only NAME``.
        title: the page's title (its notebook's first heading).
        experiment: the module (an object, imported by the registry) whose ``Config`` plans the chapter's runs
            and whose ``run(config)`` obtains them; ``None`` for a chapter that trains nothing (the claims
            summary).
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
    experiment: ModuleType | None
    report: ModuleType
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
    def config(self) -> type:
        """The chapter's config class (its experiment's ``Config``, a
        :class:`~urnlib.experiments.config.ChapterConfig`)."""
        if self.experiment is None:
            raise LookupError(f"chapter {self.name!r} trains nothing: it has no experiment")
        return self.experiment.Config

    @property
    def notebook(self) -> Path:
        return NOTEBOOKS / f"{self.name}.ipynb"

    @property
    def page(self) -> str:
        """The chapter's entry in ``book/_toc.yml`` (the executed notebook ``book/chapters/<name>.ipynb``)."""
        return f"chapters/{self.name}"
