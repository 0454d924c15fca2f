"""``site-builder check``: every number on a built site agrees with a fresh run of the fixtures.

The check takes every page's run once (:func:`setup`): from the fixture
cache only where the entry is proven current (made for exactly the current
sources, and whole by its checksum), the other pages run fresh;
``--fresh`` runs every page and neither reads nor writes the cache. Then:

1. compares each page's golden trace and report with the fresh run (a stale
   golden prints a unified diff and the command that refreshes it);
2. reads every HTML page, SVG drawing and style sheet of the site (regular
   files only: anything else is a problem, never opened): each ``data-trace``
   element must show ``format_fact(facts, key, format)``, each code excerpt
   (``data-source="PATH#REGION"``) the current source region, each chart
   exactly the drawing its page's figures make from the fresh run, and no
   other text or attribute a reader sees or hears may carry a number, except
   the few in :data:`~site_builder.numerals.ALLOWED` (see
   :mod:`~site_builder.check.document`); every number in the search index
   must be one its page shows;
3. checks that each generated page shows every entry its ``PageSource.shows``
   declares (a key, optionally where it is drawn: see
   :mod:`~site_builder.check.coverage`), that its downloads sit beside it,
   are linked from it and equal the golden files byte for byte, and that
   every generated and hand-written (``docs/*.md``) page was built.

``site-builder check`` (:func:`run`) keeps the verdicts of the documents it
found clean in the cache store (``.cache/check/``, :mod:`~site_builder.check.verdicts`):
a page or drawing whose bytes, facts, code, charts, heading, shown
attributes and excerpted source regions are all what they were when it was
last found clean is not parsed and checked again; its counts, shown values,
links and text come from the entry. A document with a problem is never
stored, so it is checked and reported every time. A damaged file is one line
on standard error and a full check; ``--fresh`` neither reads nor writes it;
:func:`check_site` and :func:`setup` called without ``verdicts`` check every
document.

Generated pages are checked against their own facts; hand-written pages
against the facts of every page together (a key two pages disagree on is an
error there). Checking a page from its text (:func:`check_page`) reuses one
:func:`setup`, so tampered copies are checked without re-running fixtures.

Output: one line per problem (``PAGE: ELEMENT: expected X, found Y``), then
``check: N pages, M values verified, K problems``. Exit status 0 when the site
agrees, 1 when it does not, 2 when there is nothing to check (no site folder,
an unreadable file), as :mod:`site_builder.errors` maps them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..cache import Store
from ..errors import shown
from ..numerals import ALLOWED, Allowed
from ..pipeline import refresh_command
from ..project import Project
from .document import Facts, PageReport, check_document, check_heading, check_svg, parse_html, parse_svg
from .fresh import Fresh, FreshPage, collect, html_path
from .problems import Problem, Result
from .site import Setup, SiteError, check_page, check_site, check_tree, setup
from .verdicts import Verdicts

__all__ = [
    "ALLOWED",
    "Allowed",
    "Facts",
    "Fresh",
    "FreshPage",
    "PageReport",
    "Problem",
    "Result",
    "Setup",
    "SiteError",
    "check_document",
    "check_heading",
    "check_page",
    "check_site",
    "check_svg",
    "check_tree",
    "collect",
    "html_path",
    "parse_html",
    "parse_svg",
    "refresh_command",
    "run",
    "setup",
    "Verdicts",
]


def _warn(line: str) -> None:
    print(shown(line, 600), file=sys.stderr)


def run(
    site_dir: Path, project: Project | None = None, *, fresh: bool = False, languages: frozenset[str] | None = None
) -> int:
    """Check ``site_dir``, print the problems and a summary; 0 agrees, 1 disagrees (errors are raised).

    A document found clean by an earlier check with exactly the same inputs is not read again (the verdict
    cache, :mod:`~site_builder.check.verdicts`); what the caches say (a damaged or unwritable file) is a line
    on standard error. ``fresh`` re-runs every page's fixtures instead of using the entries of the fixture cache
    proven current, and neither reads nor writes the verdict cache. ``languages`` checks only the pages in those.
    """
    prepared = setup(project, rerun=fresh, languages=languages)
    project = prepared.project
    store = None if fresh else Store(project.cache_dir, _warn, project.display, "the site is checked without it")
    result = check_site(Path(site_dir), prepared, Verdicts(store) if store is not None else None)
    if store is not None:
        store.prune()  # the verdicts of this check's documents, and nothing else of that kind
    sys.stdout.write(result.render())
    return 0 if result.ok else 1
