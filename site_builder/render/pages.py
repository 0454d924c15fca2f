"""One generated page: its fixtures' facts through a Jinja template into Markdown, plus its downloads.

Template globals (every number a template shows goes through one of these):

``tv(key, fmt)``                   the value as a provenance span (see :mod:`site_builder.facts`)
``fact(key)``                      the raw value, for loops and choosing words, never for display
``keys(key)``                      ``["key[0]", "key[1]", …]`` for a vector-valued fact
``math(latex)`` / ``display_math(latex)``   MathML, numbers through ``\\tv`` macros (:mod:`.math`)
``diagram(template, id, title, description)``   inline SVG in a scrollable region (:mod:`.diagrams`)
``chart(svg, label)``              a chart the page's run drew, in the same scrollable region
``swatch(kind)``                   a legend sample: ``identity``, ``learned`` or ``merge``
``excerpt(path, region)``          a live code excerpt from our own source (:mod:`.regions`)
``downloads``                      ``[{"name", "kind", "href"}]`` published beside the page
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..chapters import PageSource, RunResult
from ..facts import FactBook
from .diagrams import DiagramRenderer, dot_environment, legend_swatch
from .math import MathRenderer
from .regions import extract_region
from .templating import describe_failure, page_environment


@dataclass
class RenderedPage:
    source: PageSource
    markdown: str
    files: dict[str, str]  # site path -> text (the downloads)
    records: int  # lines of the trace


def served_folder(page_path: str) -> str:
    """The folder a page's HTML lands in with directory URLs; downloads are published there, beside it.

    ``chapter-24/index.md`` -> ``chapter-24``; ``evidence/claims.md`` -> ``evidence/claims``.
    """
    stem, _ = posixpath.splitext(posixpath.basename(page_path))
    if stem in ("index", "README"):
        return posixpath.dirname(page_path)
    return posixpath.splitext(page_path)[0]


def _scroll_region(label: str, drawing: str) -> Markup:
    """A drawing in a region that scrolls sideways on narrow screens, named for a screen reader."""
    return Markup(
        f'<div class="diagram-scroll" role="region" tabindex="0" '
        f'aria-label="{escape(label)} (scrolls sideways on narrow screens)">{drawing}</div>'
    )


def _fence(code: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


class PageRenderer:
    """Renders every generated page of one build; one Graphviz cache, compiled-template cache and counters for all."""

    def __init__(self, templates_dir: Path, cache_dir: Path, source_root: Path, display_base: Path) -> None:
        self.templates_dir = Path(templates_dir)
        self.source_root = Path(source_root)
        self.display_base = Path(display_base)
        compiled = Path(cache_dir) / "templates"
        self.env = page_environment(self.templates_dir, compiled)
        self.diagrams = DiagramRenderer(dot_environment(self.env.loader, compiled), Path(cache_dir) / "diagrams")  # type: ignore[arg-type]

    def render(self, page: PageSource, result: RunResult) -> RenderedPage:
        book = FactBook(result.facts)
        maths = MathRenderer(book)
        source_folder = posixpath.dirname(page.page_path)
        folder = served_folder(page.page_path)
        texts = {"trace": result.trace_text, "report": result.report_text}
        files: dict[str, str] = {}
        downloads = []
        for name, kind in page.downloads.items():
            text = texts.get(kind)
            if text is None:
                raise ValueError(f"page {page.slug}: download {name!r} asks for {kind!r}, which this page does not produce")
            target = posixpath.join(folder, name)
            files[target] = text
            downloads.append({"name": name, "kind": kind, "href": posixpath.relpath(target, source_folder or ".")})

        context: dict[str, Any] = dict(result.context)

        def tv(key: str, fmt: str) -> Markup:
            return Markup(book.html(key, fmt))

        def keys(key: str) -> list[str]:
            value = book.value(key)
            return [f"{key}[{i}]" for i in range(len(value))]

        def math(latex: str, spoken: str | None = None) -> Markup:
            # Wrapped in a span: Markdown treats <math> at the start of a line as a block of its own.
            return Markup(f'<span class="math-inline">{maths.render(latex, spoken=spoken)}</span>')

        def display_math(latex: str) -> Markup:
            return Markup(f'<div class="math-block">{maths.render(latex, display=True)}</div>')

        def diagram(template: str, diagram_id: str, title: str, description: str) -> Markup:
            drawn = self.diagrams.render(
                template,
                book,
                {**context, "tv": tv, "fact": book.value, "keys": keys},
                diagram_id=diagram_id,
                title=title,
                description_html=str(description).strip(),
            )
            return _scroll_region(title, drawn.svg)

        def excerpt(path: str, region: str, language: str = "python") -> Markup:
            found = extract_region(self.source_root, path, region)
            fence = _fence(found.text)
            return Markup(
                f'<figure class="code-excerpt" data-source="{escape(found.source)}" markdown="block">\n'
                f'<figcaption><code>{escape(found.path)}</code>, region <code>{escape(found.name)}</code></figcaption>\n\n'
                f"{fence}{language}\n{found.text}{fence}\n\n</figure>"
            )

        def chart(svg: str, label: str) -> Markup:
            return _scroll_region(label, svg)

        def swatch(kind: str) -> Markup:
            return Markup(legend_swatch(kind))

        context.update(
            page=page,
            tv=tv,
            fact=book.value,
            keys=keys,
            math=math,
            display_math=display_math,
            diagram=diagram,
            chart=chart,
            excerpt=excerpt,
            swatch=swatch,
            downloads=downloads,
        )
        try:
            markdown = self.env.get_template(page.template).render(context)
        except Exception as exc:
            raise describe_failure(exc, self.templates_dir, self.display_base) from exc
        records = len(result.trace_text.splitlines())
        return RenderedPage(page, markdown, files, records)
