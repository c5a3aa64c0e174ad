"""Folded sections of a chapter's page: what a reader opens when they want it (the runs, the settings, the
implementation notes, an analysis that is not in the paper), so that a chapter shows its science first and
stays within twelve screens (``tests/test_browser.py``).

A notebook's code cell shows a fold with ``display(fold(title, *items))``: one Markdown output that the book
renders as MyST (``nb_render_markdown_format: myst`` in ``book/_config.yml``), a ``{dropdown}`` holding the
items in order. An item is Markdown (its papers cited, :func:`~urnlib.reports.opening.cite_papers`), a
string of Markdown, or a table (a pandas DataFrame or Styler) numbered by its ``(caption, name)`` of
``tables`` as :func:`~urnlib.reports.opening.displayed` numbers them (``{numref}`` finds it inside the fold),
or shown as HTML where it has none. A figure does not go into a fold: the book's figures are its science.
A markdown cell folds its own text with MyST's ``{dropdown}`` directive.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["fold", "fold_markdown"]


def _fence(body: str) -> str:
    """A colon fence longer than any in ``body``, so that the dropdown's own directives nest inside it."""
    longest = max((len(line) - len(line.lstrip(":")) for line in body.splitlines()
                   if line.startswith(":::")), default=2)
    return ":" * max(3, longest + 1)


def fold_markdown(title: str, *items, tables: Sequence[tuple[str, str] | None] = (),
                  opened: bool = False) -> str:
    """The MyST of :func:`fold` (a ``{dropdown}`` of the items), as a string."""
    from IPython.display import Markdown

    from urnlib.reports.opening import displayed

    if "\n" in title or not title.strip():
        raise ValueError(f"a fold's title is one line of text, got {title!r}")
    parts = []
    for item in displayed([Markdown(item) if isinstance(item, str) else item for item in items], tables):
        if isinstance(item, Markdown):
            parts.append(item.data.strip())
        elif hasattr(item, "to_html"):  # a table without a number: its HTML, as the notebook shows it
            parts.append(item.to_html())
        else:
            raise TypeError(f"a fold holds Markdown and tables, not {type(item).__name__}: show a figure in "
                            "the page, outside the fold")
    body = "\n\n".join(p for p in parts if p)
    fence = _fence(body)
    head = f"{fence}{{dropdown}} {title.strip()}" + ("\n:open:" if opened else "")
    return f"{head}\n\n{body}\n{fence}\n"


def fold(title: str, *items, tables: Sequence[tuple[str, str] | None] = (), opened: bool = False):
    """A folded section (closed unless ``opened``) named ``title``, holding ``items`` in order (see the
    module's docstring): an IPython Markdown object, to ``display``."""
    from IPython.display import Markdown

    return Markdown(fold_markdown(title, *items, tables=tables, opened=opened))
