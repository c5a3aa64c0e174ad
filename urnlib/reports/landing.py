"""The landing page's generated parts: what reproduces, paper by paper, and what this build is.

``book/intro.md`` includes two files that ``python -m urnlib.cli book`` writes before each build
(:func:`write_landing`), as it writes the Performance page's cost table:

* ``landing/verdicts.md``, right under the title: one line per paper, named by its authors and year from the
  bibliography (:mod:`urnlib.reports.bibliography`), with the verdict of each of its figures, tables and
  sections as the scorecard rolls them up (:func:`urnlib.artefacts.artefacts`, the papers' claims only;
  extensions apart), each linked to its row of the scorecard (:func:`urnlib.reports.scorecard.row_id`); then
  one sentence of totals.
* ``landing/build.md``: the software the book was built with (Python, PyTorch, NumPy, Jupyter Book), the
  commit and date of the build, the licence (``pyproject.toml``'s ``license``, else a ``LICENSE`` file), the
  repository (``repository.url`` in ``book/_config.yml``) and a BibTeX entry to cite the book. What is not set
  (no licence, no repository) is left out, not invented.

Every part is a function of what it is given (claims, names, facts), so that the tests build it from
hand-made values; :func:`build_facts` reads the machine and the checkout.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from urnlib.artefacts import Artefact, artefacts
from urnlib.claims import VERDICTS
from urnlib.reports.bibliography import Paper
from urnlib.reports.claims_tables import VERDICT_COLOURS
from urnlib.reports.scorecard import row_id

__all__ = ["MARKS", "SCORECARD", "paper_artefacts", "verdicts_html", "totals_sentence", "BuildFacts",
           "build_facts", "repository_url", "licence", "citation", "build_markdown", "write_landing"]

#: a mark beside each artefact's name, so that its verdict does not rest on colour alone
MARKS = {"reproduced": "✓", "partly reproduced": "◐", "not reproduced": "✗", "inconclusive": "?",
         "not run here": "–"}
#: the scorecard's page, relative to the landing page
SCORECARD = "chapters/claims.html"

_CSS = """<style>
table.urnlib-landing {width: 100%; border-collapse: collapse; margin: 0.2em 0 0.4em 0; font-size: 0.9em;
  line-height: 1.35;}
table.urnlib-landing th, table.urnlib-landing td {vertical-align: top; text-align: left; padding: 0.3em 0.4em;
  border-top: 1px solid #dee2e6;}
table.urnlib-landing th {width: 33%; font-weight: 600;}
table.urnlib-landing .urnlib-landing-title {display: block; font-weight: normal; font-size: 0.85em;
  color: #495057;}
a.urnlib-landing-artefact {display: inline-block; padding: 0 0.35em; margin: 0.1em 0.05em;
  border-radius: 0.25em; color: #212529; text-decoration: none; white-space: nowrap;}
p.urnlib-landing-legend {font-size: 0.85em; color: #495057; margin: 0 0 0.8em 0;}
</style>"""

_PLACE = re.compile(r"^(Figs?\.|Tables?|sec\.|appendix)\s*([0-9A-Z]+)((?:\.\d+)*)")
_ORDER = {"Fig.": 0, "Figs.": 0, "Table": 1, "Tables": 1, "sec.": 2, "appendix": 3}


def _reading_order(art: Artefact) -> tuple:
    """Figures, then tables, sections and appendices, each by number; anything else (a work the lecture's
    slides show) after them, in the roll-up's order."""
    m = _PLACE.match(art.name)
    if m is None:
        return (4, ())
    parts = [m.group(2), *m.group(3).split(".")[1:]]
    return (_ORDER[m.group(1)], tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts))


def paper_artefacts(claims, papers: dict[str, Paper]) -> dict[str, list[Artefact]]:
    """``{paper's file number: its artefacts}`` for every paper of ``papers`` (in their order; ``[]`` for a
    paper no claim is about), the papers' claims only (extensions apart), each paper's artefacts figures
    first, then tables, sections and appendices, each by number."""
    found = {number: [] for number in papers}
    for art in artefacts(claims):
        if not art.extension and art.paper in found:
            found[art.paper].append(art)
    return {number: sorted(arts, key=_reading_order) for number, arts in found.items()}


def _chip(art: Artefact, scorecard: str) -> str:
    verdict = art.verdict
    href = html.escape(f"{scorecard}#{row_id(art)}", quote=True)
    return (f'<a class="urnlib-landing-artefact" href="{href}" title="{html.escape(art.name)}: {verdict}" '
            f'style="background-color: {VERDICT_COLOURS.get(verdict, "white")}">'
            f"{html.escape(art.name)}&nbsp;{MARKS.get(verdict, '')}</a>")


def _paper_cell(paper: Paper) -> str:
    name = html.escape(paper.name)
    if paper.link:
        name = f'<a href="{html.escape(paper.link, quote=True)}">{name}</a>'
    return f'{name}<span class="urnlib-landing-title">{html.escape(paper.title)}</span>'


def verdicts_html(claims, papers: dict[str, Paper], scorecard: str = SCORECARD) -> str:
    """HTML: one row per paper (its name linked to its DOI or URL, its title under it) with the verdict of
    each of its artefacts, each a link to its row of the scorecard at ``scorecard``; then the legend of the
    marks."""
    rows = []
    for number, arts in paper_artefacts(claims, papers).items():
        chips = " ".join(_chip(a, scorecard) for a in arts) or "no claim of it was decided in this build"
        rows.append(f'<tr class="urnlib-landing-paper" data-paper="{number}">'
                    f"<th>{_paper_cell(papers[number])}</th><td>{chips}</td></tr>")
    legend = " &middot; ".join(f"{MARKS[v]} {v}" for v in VERDICTS)
    return (f'{_CSS}<table class="urnlib-landing"><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="urnlib-landing-legend">{legend}. Each figure, table or section leads to its row of '
            f'<a href="{html.escape(scorecard, quote=True)}">the scorecard</a>, with the reason for its '
            "verdict.</p>")


def _counted(counts: dict[str, int]) -> str:
    parts = [f"{n} {v}" for v, n in counts.items() if n]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1] if parts else "none"


def totals_sentence(claims, scale: str | None = None) -> str:
    """Markdown: how many of the papers' claims this build decided, about how many artefacts, with the
    artefacts' verdicts and the claims'; the extensions counted apart."""
    own = [c for c in claims if not c.extension]
    arts = artefacts(own)
    by_artefact = {v: sum(a.verdict == v for a in arts) for v in VERDICTS}
    by_claim = {v: sum(c.verdict == v for c in own) for v in VERDICTS}
    extensions = len(claims) - len(own)
    at = f" (at the *{scale}* scale)" if scale else ""
    text = (f"**What reproduces.** This build{at} decided {len(own)} of the papers' claims, about "
            f"{len(arts)} of their figures, tables and sections. Those {len(arts)}: {_counted(by_artefact)}. "
            f"The claims themselves: {_counted(by_claim)}.")
    if extensions:
        more = f"{extensions} more claim{'s' if extensions != 1 else ''}"
        text += f" {more} the papers never made (extensions) are counted apart."
    return text


@dataclass(frozen=True)
class BuildFacts:
    """What a build is: its commit (``None`` outside a git checkout) and whether the checkout had changes not
    committed, its date (UTC, ISO), the scale its chapters were executed at, and the versions of the software
    that computed it (``{"Python": "3.11.7", "PyTorch": "2.13.0", ...}``)."""

    commit: str | None
    changed: bool
    date: str
    scale: str | None
    versions: dict


def _git(repo: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _scale(chapters: Path) -> str | None:
    """The scale the executed notebooks in ``chapters`` were run at (papermill's parameters), ``"a, b"`` when
    they differ, ``None`` when none says."""
    import json

    scales = set()
    for notebook in chapters.glob("*.ipynb"):
        try:
            params = json.loads(notebook.read_text())["metadata"]["papermill"]["parameters"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if params.get("scale"):
            scales.add(str(params["scale"]))
    return ", ".join(sorted(scales)) or None


def build_facts(repo: Path, chapters: Path) -> BuildFacts:
    """The facts of a build made now from the checkout at ``repo`` with the chapters executed in
    ``chapters``."""
    versions = {"Python": ".".join(map(str, sys.version_info[:3]))}
    for shown, package in (("PyTorch", "torch"), ("NumPy", "numpy"), ("Jupyter Book", "jupyter-book")):
        try:
            versions[shown] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    status = _git(repo, "status", "--porcelain", "--untracked-files=no")
    today = datetime.now(timezone.utc).date().isoformat()
    return BuildFacts(_git(repo, "rev-parse", "HEAD"), bool(status), today, _scale(chapters), versions)


def repository_url(config: dict) -> str | None:
    """The repository's URL from the book's configuration (``repository: url:`` in ``book/_config.yml``, the
    key Jupyter Book's repository buttons read), ``None`` where it is not set."""
    url = ((config or {}).get("repository") or {}).get("url")
    return str(url).strip() or None if url else None


def licence(repo: Path) -> str | None:
    """The licence of the project: ``pyproject.toml``'s ``[project] license`` (an SPDX expression, or its
    ``text``), else the first line of a ``LICENSE``/``LICENCE``/``COPYING`` file; ``None`` where there is
    neither."""
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file():
        value = tomllib.loads(pyproject.read_text()).get("project", {}).get("license")
        if isinstance(value, dict):
            value = value.get("text")
        if isinstance(value, str) and value.strip():
            return value.strip()
    for path in sorted(repo.glob("LICEN[CS]E*")) + sorted(repo.glob("COPYING*")):
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
        if lines:
            return lines[0]
    return None


def _version(repo: Path) -> str | None:
    pyproject = repo / "pyproject.toml"
    if not pyproject.is_file():
        return None
    return tomllib.loads(pyproject.read_text()).get("project", {}).get("version")


def citation(config: dict, facts: BuildFacts, version: str | None = None, url: str | None = None) -> str:
    """A BibTeX entry for the book: its title and author from the book's configuration, the year of the
    build, its version, commit and date, and its repository where one is set."""
    def braced(text: str) -> str:
        return "{" + text.replace("{", "").replace("}", "") + "}"

    built = [f"version {version}" if version else "",
             f"commit {facts.commit[:12]}" if facts.commit else "", f"built {facts.date}"]
    fields = [("author", "{" + braced(str(config.get("author") or "urnlib contributors")) + "}"),
              ("title", braced(str(config.get("title") or "urnlib"))),
              ("howpublished", "{Jupyter Book}"), ("year", braced(facts.date[:4])),
              ("note", braced(", ".join(b for b in built if b)))]
    if url:
        fields.append(("url", braced(url)))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name.ljust(width)} = {value}" for name, value in fields)
    return f"@misc{{urnlib_companion,\n{body}\n}}"


def build_markdown(facts: BuildFacts, config: dict, licence_text: str | None = None,
                   version: str | None = None) -> str:
    """Markdown: the build (its commit and date, and the software), the licence and the repository where they
    are set, and how to cite the book (a BibTeX block)."""
    url = repository_url(config)
    commit = f"commit `{facts.commit[:12]}`" if facts.commit else "a copy that is not a git checkout"
    if facts.commit and facts.changed:
        commit += " with changes not yet committed"
    software = ", ".join(f"{name} {v}" for name, v in facts.versions.items())
    lines = [f"**This build.** Built on {facts.date} from {commit}, with {software}."]
    if licence_text:
        lines.append(f"**Licence.** {licence_text}.")
    if url:
        lines.append(f"**Repository.** <{url}>")
    text = "\n\n".join(lines)
    cite = citation(config, facts, version, url)
    return f"{text}\n\n**How to cite this book.**\n\n```bibtex\n{cite}\n```\n"


def write_landing(book_dir: Path, repo: Path) -> list[Path]:
    """Write ``<book_dir>/landing/verdicts.md`` (from the claims the chapters saved in
    ``<book_dir>/chapters/_claims``; a line saying so where none is saved) and ``landing/build.md`` (from
    :func:`build_facts`, ``<book_dir>/_config.yml`` and ``<repo>``); returns their paths."""
    import yaml

    from urnlib.claims import load_claims
    from urnlib.reports.bibliography import papers

    chapters = book_dir / "chapters"
    out = book_dir / "landing"
    out.mkdir(parents=True, exist_ok=True)
    facts = build_facts(repo, chapters)
    try:
        claims = load_claims(chapters / "_claims")
    except FileNotFoundError:
        verdicts = ("No chapter saved its claims before this build: run the chapter notebooks "
                    "(`python -m urnlib.cli notebooks`) for the verdicts.\n")
    else:
        verdicts = f"{verdicts_html(claims, papers())}\n\n{totals_sentence(claims, facts.scale)}\n"
    config = yaml.safe_load((book_dir / "_config.yml").read_text()) or {}
    paths = [out / "verdicts.md", out / "build.md"]
    paths[0].write_text(verdicts)
    paths[1].write_text(build_markdown(facts, config, licence(repo), _version(repo)))
    return paths
