"""How the claims tables look and behave on a page (:mod:`urnlib.reports.claims_tables` writes them): their
stylesheet, and the script that opens the folded group of claims a link leads to."""

from __future__ import annotations

__all__ = ["_CSS", "_OPEN_TARGET"]

_CSS = """<style>
.urnlib-claims-legend {font-size: 0.8em; line-height: 1.4; margin-bottom: 0.5em;}
.urnlib-claims-legend p {margin: 0 0 0.3em 0;}
table.urnlib-claims {width: 100%; table-layout: fixed; border-collapse: collapse; font-size: 0.8em;
  line-height: 1.35; margin-bottom: 1em;}
table.urnlib-claims th, table.urnlib-claims td {text-align: left; vertical-align: top; padding: 0.2em 0.4em;
  overflow-wrap: anywhere;}
table.urnlib-claims thead th {border-bottom: 2px solid #adb5bd;}
table.urnlib-claims tr.urnlib-claim td {border-top: 1px solid #dee2e6; border-bottom: none;}
table.urnlib-claims td.urnlib-claims-verdict {overflow-wrap: normal; word-break: normal;}
table.urnlib-claims tr.urnlib-more td {border-top: none; padding-top: 0; color: #495057;}
table.urnlib-claims details > summary {cursor: pointer; font-style: italic;}
table.urnlib-claims details > div {font-style: normal; padding: 0.2em 0 0.3em 1em;}
table.urnlib-claims details > div p {margin: 0 0 0.15em 0;}
.urnlib-verdict {display: inline-block; padding: 0 0.35em; border-radius: 0.25em; color: #212529;
  white-space: nowrap; margin: 0.05em 0;}
.urnlib-tag {font-size: 0.85em; border: 1px solid #adb5bd; border-radius: 0.25em; padding: 0 0.25em;}
details.urnlib-chapter {margin: 0.3em 0;}
details.urnlib-group {margin: 0; border-top: 1px solid #dee2e6; scroll-margin-top: 5em;}
details.urnlib-group > summary {cursor: pointer; padding: 0.3em 0.2em; font-size: 0.9em;}
details.urnlib-group > summary a {color: #1a4f8b;}
details.urnlib-group[open] > summary {background-color: #eef1f4;}
details.urnlib-chapter > summary {cursor: pointer; font-size: 0.9em;}
</style>"""

# A link to a group (a chapter's opening, the scorecard) opens it, and a link to anything in a folded section
# (a figure in a fold) opens the folds around it: the element the page's address names.
_OPEN_TARGET = """<script>
(function () {
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) { return; }
    if (el.tagName === "DETAILS") { el.open = true; }
    for (var up = el.parentElement && el.parentElement.closest("details"); up;
         up = up.parentElement && up.parentElement.closest("details")) { up.open = true; }
    el.scrollIntoView();
  }
  window.addEventListener("hashchange", openTarget);
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", openTarget); }
  else { openTarget(); }
})();
</script>"""
