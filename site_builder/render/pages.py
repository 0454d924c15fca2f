"""One generated page: its run's facts through the page folder's Jinja template into Markdown, plus its downloads.

The renderer writes the page's front matter and its ``<h1>`` from ``page.toml``
itself, so a title can hold any character; the template starts with the first
paragraph. Templates are looked up in the page folder first, then in the shared
``templates/`` folder (partials and macros every page may use).

Every name a template sees is in :data:`TEMPLATE_GLOBALS`, with what it gives; every number a template shows
goes through one of them. AUTHORING.md's table of them is made from it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..cache import Store
from ..errors import SiteBuilderError
from ..facts import FactBook, fact_names
from ..project import Page, Project, served_folder
from .diagrams import DiagramRenderer, dot_environment, legend_swatch
from .math import MathRenderer
from .regions import extract_region
from .templating import describe_failure, page_environment

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding site_builder/


# Every name a page template (and its partials) sees: name -> (how it is called, what it gives). AUTHORING.md's table
# is made from it, and tests/test_authoring_guide.py checks that it names exactly what PageRenderer.render passes.
TEMPLATE_GLOBALS: dict[str, tuple[str, str]] = {
    "tv": ("tv(key, fmt)", "the value as a provenance span (see `site_builder/facts.py`)"),
    "fact": ("fact(key)", "the raw value, for loops and choosing words, never for display"),
    "keys": ("keys(key)", '`["key[0]", "key[1]", …]` for a vector-valued fact'),
    "math": (
        "math(latex, spoken=None)",
        "inline MathML, numbers through `\\tv`, `\\tvec`, `\\tmat` and `\\lit` (`render/math.py`); `spoken` "
        "names math that stands alone as a table header",
    ),
    "display_math": ("display_math(latex)", "the same as a block of its own"),
    "diagram": (
        "diagram(template, id, title, description)",
        "a DOT template drawn as inline SVG in a scrollable region (`render/diagrams.py`)",
    ),
    "chart": ("chart(svg)", "a chart the page's figures drew; it fits its column, so it never scrolls"),
    "swatch": ("swatch(role)", "a legend sample of a diagram role's line style or border"),
    "excerpt": (
        "excerpt(path, region, language='python')",
        "a live code excerpt: a file of the page folder, or `site_builder/…`",
    ),
    "cite": ("cite(id)", "a citation declared in page.toml, linked, its year and ids verified"),
    "literal": ("literal(id, fmt='count')", "a literal number declared in page.toml"),
    "href": ("href(slug, anchor='')", "a link target to another generated page"),
    "title_of": ("title_of(slug)", "another generated page's title"),
    "has_page": ("has_page(slug)", "whether a page folder of that slug exists (to link to it once it does)"),
    "page": ("page", "this page's `Page` (`page.slug`, `page.title`, `page.chapter`, …; `site_builder/project.py`)"),
    "trace": ("trace", "the typed trace, read back from its text (`trace.stack[3].plain`), for loops and wording"),
    "charts": ("charts", "chart id -> inline SVG, as `figures.charts(trace, facts)` returned them"),
    "downloads": ("downloads", '`[{"name", "kind", "href"}]` published beside the page'),
}


@dataclass
class RenderedPage:
    """A generated page as the site uses it, rendered now or read from the rendered-page cache."""

    markdown: str
    files: dict[str, str]  # site path -> text (the downloads)
    records: int  # lines of the trace
    names: tuple[str, ...]  # the names its facts carry, sorted (what the number scan accepts on it)
    trace: str  # its trace and report texts, compared with its golden files on every build
    report: str | None
    diagrams: tuple[str, ...]  # the cache entries of the diagram layouts it drew, sorted


def _scroll_region(label: str, drawing: str) -> Markup:
    """A drawing in a region that scrolls sideways on narrow screens, named for a screen reader."""
    return Markup(
        f'<div class="diagram-scroll" role="region" tabindex="0" '
        f'aria-label="{escape(label)} (scrolls sideways on narrow screens)">{drawing}</div>'
    )


@lru_cache(maxsize=32)
def _highlighter(language: str) -> tuple[Any, Any]:
    """Pygments' lexer and formatter for ``language``, found once per process (finding a lexer by name looks
    through every lexer and the installed plugins)."""
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    return get_lexer_by_name(language), HtmlFormatter(nowrap=True)


def code_figure(source: str, path: str, region: str, code: str, language: str) -> str:
    """A code excerpt as one raw HTML block (highlighted here, so it works inside collapsed blocks too)."""
    from pygments import highlight

    lexer, formatter = _highlighter(language)
    # One line of HTML (line breaks as character references): no blank line can end the block early.
    body = highlight(code, lexer, formatter).replace("\n", "&#10;")
    return (
        f'<figure class="code-excerpt" data-source="{escape(source)}">'
        f"<figcaption><code>{escape(path)}</code>, region <code>{escape(region)}</code></figcaption>"
        f'<div class="language-{escape(language)} highlight"><pre><span></span><code>{body}</code></pre></div>'
        "</figure>"
    )


def double_quoted(text: str) -> str:
    """``text`` as a double-quoted string that YAML and TOML both read back as ``text``: printable characters
    (an emoji among them) as they are, a quote and a backslash escaped, anything else as its code point.

    (``json.dumps`` would write an emoji as two surrogate escapes, which YAML reads as two broken characters
    and TOML refuses.)
    """

    def escaped(c: str) -> str:
        if c in '"\\':
            return "\\" + c
        if c.isprintable():
            return c
        return f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"

    return '"' + "".join(map(escaped, text)) + '"'


def front_matter(page: Page) -> str:
    """The page's YAML front matter: its title as a double-quoted scalar, so any character is safe."""
    return f"---\ntitle: {double_quoted(page.title)}\n---\n\n"


def heading_html(page: Page, book: FactBook) -> str:
    """The page's ``<h1>``: the title, after ``Chapter N:`` (a verified value) for a chapter."""
    prefix = f"Chapter {book.html('PAGE.chapter', 'count')}: " if page.chapter is not None else ""
    return f'<h1 id="top">{prefix}{escape(page.title)}</h1>\n\n'


class PageRenderer:
    """Renders every generated page of one build; one Graphviz cache, compiled-template cache and counters for all."""

    def __init__(self, project: Project, pages: list[Page], store: Store | None = None) -> None:
        self.project = project
        self.pages = {p.slug: p for p in pages}
        self.store = store  # compiled templates and diagram layouts are kept there
        self.diagrams = DiagramRenderer(store, project.display)

    def environment(self, page: Page) -> jinja2.Environment:
        return page_environment([page.folder, self.project.templates_dir], self.store)

    def excerpt_file(self, page: Page, path: str) -> tuple[Path, str]:
        """(root, path) of an excerpt: a file of the page folder, or a file of the ``site_builder`` package."""
        if (page.folder / path).is_file():
            return self.project.root, self.project.display(page.folder / path)
        if path.startswith("site_builder/"):
            return PACKAGE_ROOT, path
        raise SiteBuilderError(
            f"excerpt {path!r}: no such file in {self.project.display(page.folder)} and not a site_builder/ path"
        )

    def render(self, page: Page, run: Any) -> RenderedPage:
        """Markdown for ``page`` from its :class:`~site_builder.pipeline.PageRun`."""
        book = FactBook(run.facts)
        self.diagrams.drawn = []
        maths = MathRenderer(book)
        folder = served_folder(page.page_path)
        source_folder = posixpath.dirname(page.page_path)
        texts = {"trace": run.trace_text, "report": run.report_text}
        from ..pipeline import version_of

        files: dict[str, str] = {}
        downloads = []
        for name, kind in page.download_names(version_of(self.project, page)).items():
            text = texts.get(kind)
            if text is None:
                raise SiteBuilderError(
                    f"{self.project.display(page.folder)}/page.toml: download {name!r} asks for the {kind}, "
                    "which this page does not produce"
                )
            target = posixpath.join(folder, name)
            files[target] = text
            downloads.append({"name": name, "kind": kind, "href": posixpath.relpath(target, source_folder or ".")})

        env = self.environment(page)
        dot_env = dot_environment(env.loader, self.store)  # type: ignore[arg-type]  # environment() always sets a loader

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

        context: dict[str, Any] = {"trace": run.trace, "charts": run.charts}

        def diagram(template: str, diagram_id: str, title: str, description: str) -> Markup:
            drawn = self.diagrams.render(
                dot_env,
                template,
                book,
                {**context, "tv": tv, "fact": book.value, "keys": keys},
                node_roles=page.node_roles,
                edge_roles=page.edge_roles,
                diagram_id=diagram_id,
                title=title,
                description_html=str(description).strip(),
            )
            return _scroll_region(title, drawn.svg)

        def excerpt(path: str, region: str, language: str = "python") -> Markup:
            root, shown_path = self.excerpt_file(page, path)
            found = extract_region(root, shown_path, region)
            return Markup(code_figure(found.source, found.path, found.name, found.text, language))

        def chart(svg: str) -> Markup:
            return Markup(f'<div class="chart-box">{svg}</div>')

        def swatch(role: str) -> Markup:
            return Markup(legend_swatch(role, page.node_roles, page.edge_roles))

        def cite(cid: str) -> Markup:
            c = page.citation(cid)
            at = f"CITE.{c.id}"
            parts = [f"{escape(c.authors)} ({book.html(at + '.year', 'count')}), <cite>{escape(c.title)}</cite>"]
            if c.lecture is not None:
                parts.append(f"lecture {book.html(at + '.lecture', 'count')}")
            if c.arxiv:
                parts.append(f"arXiv:{book.html(at + '.arxiv', 'name')}")
            return Markup(f'<a class="citation" href="{escape(c.href)}">{", ".join(parts)}</a>')

        def literal(lid: str, fmt: str = "count") -> Markup:
            page.literal(lid)
            return tv(f"LIT.{lid}", fmt)

        def href(slug: str, anchor: str = "") -> str:
            other = self._page(slug)
            target = posixpath.relpath(other.page_path, source_folder or ".")
            return target + (f"#{anchor}" if anchor else "")

        def title_of(slug: str) -> str:
            return self._page(slug).title

        def has_page(slug: str) -> bool:
            return slug in self.pages

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
            cite=cite,
            literal=literal,
            href=href,
            title_of=title_of,
            has_page=has_page,
            downloads=downloads,
        )
        try:
            body = env.get_template("page.md.j2").render(context)
        except Exception as exc:
            raise describe_failure(exc, [page.folder, self.project.templates_dir], self.project.root) from exc
        markdown = front_matter(page) + heading_html(page, book) + body
        return RenderedPage(
            markdown,
            files,
            run.records,
            tuple(sorted(fact_names(run.facts))),
            run.trace_text,
            run.report_text,
            tuple(sorted(set(self.diagrams.drawn))),
        )

    def _page(self, slug: str) -> Page:
        if slug not in self.pages:
            raise KeyError(f"no generated page {slug!r} (pages: {', '.join(self.pages)})")
        return self.pages[slug]
