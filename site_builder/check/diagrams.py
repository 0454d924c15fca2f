"""The diagrams a page draws, drawn again from its fresh run for the check to compare, as charts are.

A diagram's values carry ``data-trace``, but where a node, an edge or a glyph sits is geometry: two nodes'
``x=`` swapped, a per-glyph ``x=`` list that reorders a value's characters, or an edge's path moved keep every
label intact. So the check takes each page's diagrams as rendering the page now draws them (Jinja, then
Graphviz, from the page's fresh facts) and compares each with the page's ``svg.dg`` of the same id, element
by element (:func:`site_builder.check.charts.check_diagrams`).

A page is rendered only when it has a DOT template (``*.dot.j2``, in its folder or the shared templates).
Its rendering is taken from the rendered-page cache only where the entry is proven current (its key is made
from exactly the current sources, fixtures and code, as the build makes it); every other page is rendered
now. With no store (``site-builder check --fresh``) every such page is rendered now.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..cache import Store
from ..i18n import SOURCE
from ..project import Project
from .document import local, parse_html

if TYPE_CHECKING:
    from ..render.cache import RenderedPage
    from .fresh import FreshPage

DIAGRAM_CLASS = "dg"
SWATCH_CLASS = "dg-swatch"  # a legend's sample of a line style: drawn by code, holds no value


def is_diagram(classes: Sequence[str]) -> bool:
    return DIAGRAM_CLASS in classes and SWATCH_CLASS not in classes


def diagrams_in(markdown: str) -> dict[str, str]:
    """Each diagram of a rendered page (id -> its SVG as the page holds it)."""
    from lxml import etree

    root = parse_html(f"<html><body>{markdown}</body></html>")
    out: dict[str, str] = {}
    for svg in root.iter("svg", "{*}svg"):
        if local(svg.tag) == "svg" and is_diagram((svg.get("class") or "").split()) and svg.get("id"):
            out[svg.get("id")] = etree.tostring(svg, encoding="unicode", with_tail=False)
    return out


def _draws(project: Project, page: FreshPage) -> bool:
    return any(page.source.folder.glob("*.dot.j2")) or any(project.templates_dir.glob("*.dot.j2"))


def drawn_diagrams(
    project: Project, pages: Sequence[FreshPage], store: Store | None
) -> dict[tuple[str, str], dict[str, str]]:
    """(slug, language) -> the page's diagrams in that language (id -> SVG), for every page of ``pages`` that draws
    any: a translation draws its own labels from the same run."""
    from ..pipeline import cache as fixture_cache
    from ..render import cache as page_cache

    drawing = [p for p in pages if p.run is not None and _draws(project, p)]
    if not drawing:
        return {}
    sources = project.pages()
    out: dict[tuple[str, str], dict[str, str]] = {}
    missing = list(drawing)
    if store is not None:
        fixture_keys = fixture_cache.page_keys(project, sources, store)
        keys = page_cache.Keys(project.templates_dir, sources)
        missing = []
        for p in drawing:
            entry = page_cache.load(store, keys.key(p.source, fixture_keys[p.source.slug]))
            if entry is not None and p.run is not None and entry.trace == p.run.trace_text:
                out[p.source.slug, p.source.lang] = diagrams_in(_in_language(entry, p.source.lang))
            else:
                missing.append(p)
    if missing:
        from ..render.pages import PageRenderer

        renderer = PageRenderer(project, sources, store)
        rendered: dict[str, RenderedPage] = {}
        for p in missing:
            assert p.run is not None
            slug = p.source.slug
            if slug not in rendered:  # one rendering gives every language of the page
                rendered[slug] = renderer.render(project.page(slug), p.run)
            out[slug, p.source.lang] = diagrams_in(_in_language(rendered[slug], p.source.lang))
    return out


def _in_language(page: RenderedPage, lang: str) -> str:
    return page.translations[lang] if lang != SOURCE else page.markdown
