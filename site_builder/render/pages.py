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
import re
from collections.abc import Mapping
from functools import cached_property, lru_cache
from html import escape, unescape
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..cache import Store
from ..errors import SiteBuilderError
from ..facts import FactBook, fact_names
from ..project import Page, Project, served_folder
from ..trace.layout import TraceLayout
from .cache import RenderedPage
from .diagrams import DiagramRenderer, dot_environment, legend_swatch
from .keyed import key_of, trace_view
from .math import MathRenderer
from .regions import extract_region
from .templating import describe_failure, page_environment

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding site_builder/


# Every name a page template (and its partials) sees: name -> (how it is called, what it gives). AUTHORING.md's table
# is made from it, and tests/test_authoring_guide.py checks that it names exactly what PageTemplate gives.
TEMPLATE_GLOBALS: dict[str, tuple[str, str]] = {
    "tv": (
        "tv(key, fmt)",
        "the value as a provenance span (see `site_builder/facts.py`); `key` is a fact key or a field read from a "
        'record of `trace` (`tv(row.plain, "vector")`)',
    ),
    "fact": ("fact(key)", "the raw value of a key, for loops and choosing words, never for display"),
    "keys": ("keys(key)", '`["key[0]", "key[1]", …]` for a vector-valued fact (a key, or a field of a record)'),
    "math": (
        "math(latex, spoken=None, **values)",
        "inline MathML, numbers through `\\tv`, `\\tvec`, `\\tmat` and `\\lit` (`render/math.py`); `spoken` "
        "names math that stands alone as a table header; `\\tv{x}{short}` with `x=row.x` shows that record's field",
    ),
    "display_math": ("display_math(latex, **values)", "the same as a block of its own"),
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
    "href": (
        "href(slug, anchor='')",
        "a link target to another generated page, for a Markdown link (MkDocs checks it)",
    ),
    "url": ("url(slug, anchor='')", "the same page's address as the built site serves it, for a link in raw HTML"),
    "title_of": ("title_of(slug)", "another generated page's title"),
    "has_page": ("has_page(slug)", "whether a page folder of that slug exists (to link to it once it does)"),
    "page": ("page", "this page's `Page` (`page.slug`, `page.title`, `page.chapter`, …; `site_builder/project.py`)"),
    "trace": (
        "trace",
        "the typed trace, read back from its text, whose fields know their keys (`trace.stack[3].plain` is "
        '`STACK[3].plain`); `trace.starts.at(32, "plain")` finds a record by its index (`render/keyed.py`)',
    ),
    "charts": (
        "charts",
        "chart id -> inline SVG in the page's language, as `figures.charts(trace, facts[, lang])` returned them",
    ),
    "downloads": ("downloads", '`[{"name", "kind", "href"}]` published beside the page'),
}


_DATA_TRACE = re.compile(r'data-trace="([^"]*)"')  # an element that shows a fact: a span, an SVG text, a MathML row
_ELEMENT = re.compile(r"\[\d+\]$")  # KEY[i], one element of a vector-valued fact, shows KEY


class UnshownFieldError(SiteBuilderError):
    """A field of a page's trace that the page never shows: one line, at the line that declares the field."""

    def __init__(self, project: Project, page: Page, layout: TraceLayout[Any], missing: list[str]) -> None:
        self.missing = missing
        named = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        fields = "the trace field" if len(missing) == 1 else f"{len(missing)} fields of its trace,"
        super().__init__(
            f"{_declared_at(project, page, layout, missing[0])}: {project.display(page.folder)} never shows "
            f"{fields} {named}: every field of a page's trace appears on it (show it with tv(), or drop it)"
        )


def _declared_at(project: Project, page: Page, layout: TraceLayout[Any], key: str) -> str:
    """``FILE:LINE`` that declares the field ``key`` names: its line in the record's class, else the line of the
    trace's attribute that holds the record (a record class made by a function has no lines of its own)."""
    import inspect

    trace_py = page.folder / "trace.py"
    for slot in layout.slots:
        for f in slot.fields:
            if f"{slot.record.key(slot.fixed)}.{f.name}" != key:
                continue
            try:
                lines, start = inspect.getsourcelines(slot.record.type)
                file = Path(inspect.getsourcefile(slot.record.type) or "")
            except (OSError, TypeError):
                lines, start, file = [], 0, trace_py
            for offset, text in enumerate(lines):
                if re.match(rf"\s+{f.attribute}\s*:", text):
                    return f"{project.display(file)}:{start + offset}"
            try:
                source = trace_py.read_text(encoding="utf-8").splitlines()
            except OSError:
                source = []
            for number, text in enumerate(source, start=1):
                if re.match(rf"\s+{slot.record.attr}\s*:", text):
                    return f"{project.display(trace_py)}:{number}"
    return project.display(trace_py)


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


UNDER_TITLE = "_under_title.md.j2"  # the shared partial rendered under every page's title


def front_matter(page: Page) -> str:
    """The page's YAML front matter: its title as a double-quoted scalar, so any character is safe; and the
    page's language, which the theme's templates read (``lang``, the interface's words, the search)."""
    return f"---\ntitle: {double_quoted(page.title)}\nlang: {page.lang}\n---\n\n"


def heading_html(page: Page, book: FactBook) -> str:
    """The page's ``<h1>``: the title, after ``Chapter N:`` (a verified value) for a chapter."""
    from ..i18n import word

    prefix = f"{word(page.lang, 'chapter')} {book.html('PAGE.chapter', 'count')}: " if page.chapter is not None else ""
    return f'<h1 id="top">{prefix}{escape(page.title)}</h1>\n\n'


class PageRenderer:
    """Renders every generated page of one build; one Graphviz cache, compiled-template cache and counters for all."""

    def __init__(self, project: Project, pages: list[Page], store: Store | None = None) -> None:
        self.project = project
        self.pages = {p.slug: p for p in pages}
        self.store = store  # compiled templates and diagram layouts are kept there
        self.diagrams = DiagramRenderer(store, project.display)

    def environment(self, page: Page) -> jinja2.Environment:
        return page_environment([page.folder, self.project.templates_dir], self.store, page.lang)

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
        """Markdown for ``page`` and each of its translations, from one :class:`~site_builder.pipeline.PageRun`."""
        book = FactBook(run.facts)
        self.diagrams.drawn = []
        files: dict[str, str] = {}
        markdown: dict[str, str] = {}
        for lang in page.languages:
            twin = page.twin(lang)
            downloads_files, downloads = self._downloads(twin, run)
            files.update(downloads_files)
            markdown[lang] = self._markdown(twin, run, book, downloads)
        return RenderedPage(
            markdown.pop(page.lang),
            files,
            run.records,
            tuple(sorted(fact_names(run.facts))),
            run.trace_text,
            run.report_text,
            tuple(sorted(set(self.diagrams.drawn))),
            markdown,
        )

    def _markdown(self, page: Page, run: Any, book: FactBook, downloads: list[dict[str, str]]) -> str:
        env = self.environment(page)
        helpers = PageTemplate(self, page, run, book, downloads, env)
        context = template_context(helpers)
        try:
            under = self._under_title(page, env, context)
            body = env.get_template("page.md.j2").render(context)
        except Exception as exc:
            raise describe_failure(exc, [page.folder, self.project.templates_dir], self.project.root) from exc
        markdown = front_matter(page) + heading_html(page, book) + under + body
        self._check_shown(page, run.trace, markdown)
        return markdown

    def _under_title(self, page: Page, env: jinja2.Environment, context: dict[str, Any]) -> str:
        """What every page shows between its title and its first paragraph: the shared partial
        ``_under_title.md.j2`` (the page folder's own, or ``templates/``), rendered with the page's helpers;
        nothing where neither folder has one."""
        if not any((folder / UNDER_TITLE).is_file() for folder in (page.folder, self.project.templates_dir)):
            return ""
        text = env.get_template(UNDER_TITLE).render(context).strip()
        return text + "\n\n" if text else ""

    def _downloads(self, page: Page, run: Any) -> tuple[dict[str, str], list[dict[str, str]]]:
        """The files published beside the page (site path -> text), and how its template links to each."""
        from ..pipeline import version_of

        folder = served_folder(page.page_path)
        source_folder = posixpath.dirname(page.page_path) or "."
        texts = {"trace": run.trace_text, "report": run.report_text}
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
            downloads.append({"name": name, "kind": kind, "href": posixpath.relpath(target, source_folder)})
        return files, downloads

    def _check_shown(self, page: Page, trace: Any, markdown: str) -> None:
        """Every field of the page's trace is shown on the page (an element carries its key, or an element's)."""
        layout = getattr(type(trace), "layout", None)
        if not isinstance(layout, TraceLayout):
            return
        shown = {_ELEMENT.sub("", unescape(key)) for key in _DATA_TRACE.findall(markdown)}
        missing = [key for key in layout.keys() if key not in shown]
        if missing:
            raise UnshownFieldError(self.project, page, layout, missing)

    def page_of(self, slug: str, lang: str = "en") -> Page:
        """The generated page of ``slug`` in ``lang``, or in English when it has no translation into ``lang``."""
        if slug not in self.pages:
            raise KeyError(f"no generated page {slug!r} (pages: {', '.join(self.pages)})")
        page = self.pages[slug]
        return page.twin(lang) if lang in page.languages else page


class PageTemplate:
    """What the templates of one page see while it renders: each public name here is one of
    :data:`TEMPLATE_GLOBALS` (the methods are the helpers), and nothing else is."""

    page: Page
    trace: Any  # a keyed view of the typed trace (render/keyed.py)
    charts: Mapping[str, str]
    downloads: list[dict[str, str]]

    def __init__(
        self,
        renderer: PageRenderer,
        page: Page,
        run: Any,
        book: FactBook,
        downloads: list[dict[str, str]],
        env: jinja2.Environment,
    ) -> None:
        self._renderer = renderer
        self._env = env
        self._book = book
        self._maths = MathRenderer(book)
        self._source_folder = posixpath.dirname(page.page_path) or "."
        self.page = page
        self.trace = trace_view(run.trace)
        self.charts = run.charts_for(page.lang)
        self.downloads = downloads

    def tv(self, key: Any, fmt: str) -> Markup:
        return Markup(self._book.html(key_of(key, "tv"), fmt))

    def fact(self, key: Any) -> Any:
        return self._book.value(key_of(key, "fact"))

    def keys(self, key: Any) -> list[str]:
        name = key_of(key, "keys")
        return [f"{name}[{i}]" for i in range(len(self._book.value(name)))]

    def math(self, latex: str, spoken: str | None = None, **values: Any) -> Markup:
        # Wrapped in a span: Markdown treats <math> at the start of a line as a block of its own.
        shown = self._maths.render(_named_keys(latex, values), spoken=spoken)
        return Markup(f'<span class="math-inline">{shown}</span>')

    def display_math(self, latex: str, **values: Any) -> Markup:
        return Markup(f'<div class="math-block">{self._maths.render(_named_keys(latex, values), display=True)}</div>')

    def diagram(self, template: str, diagram_id: str, title: str, description: str) -> Markup:
        renderer, page = self._renderer, self.page
        drawn = renderer.diagrams.render(
            self._dot_env,
            template,
            self._book,
            template_context(self),
            node_roles=page.node_roles,
            edge_roles=page.edge_roles,
            diagram_id=diagram_id,
            title=title,
            description_html=str(description).strip(),
        )
        return _scroll_region(title, drawn.svg)

    @cached_property
    def _dot_env(self) -> jinja2.Environment:
        """Jinja for the page's DOT templates, made at its first diagram: the same folders as the page's."""
        renderer = self._renderer
        return dot_environment(self._env.loader, renderer.store)  # type: ignore[arg-type]  # environment() always sets a loader

    def chart(self, svg: str) -> Markup:
        return Markup(f'<div class="chart-box">{svg}</div>')

    def swatch(self, role: str) -> Markup:
        return Markup(legend_swatch(role, self.page.node_roles, self.page.edge_roles))

    def excerpt(self, path: str, region: str, language: str = "python") -> Markup:
        root, shown_path = self._renderer.excerpt_file(self.page, path)
        found = extract_region(root, shown_path, region)
        return Markup(code_figure(found.source, found.path, found.name, found.text, language))

    def cite(self, cid: str) -> Markup:
        c, book = self.page.citation(cid), self._book
        at = f"CITE.{c.id}"
        title = book.html(at + ".title", "name") if c.numbered_title else escape(c.title)
        parts = [f"{escape(c.authors)} ({book.html(at + '.year', 'count')}), <cite>{title}</cite>"]
        if c.lecture is not None:
            parts.append(f"lecture {book.html(at + '.lecture', 'count')}")
        if c.arxiv:
            parts.append(f"arXiv:{book.html(at + '.arxiv', 'name')}")
        return Markup(f'<a class="citation" href="{escape(c.href)}">{", ".join(parts)}</a>')

    def literal(self, lid: str, fmt: str = "count") -> Markup:
        self.page.literal(lid)
        return self.tv(f"LIT.{lid}", fmt)

    def href(self, slug: str, anchor: str = "") -> str:
        target = posixpath.relpath(self._renderer.page_of(slug, self.page.lang).page_path, self._source_folder)
        return target + (f"#{anchor}" if anchor else "")

    def url(self, slug: str, anchor: str = "") -> str:
        target = self._renderer.page_of(slug, self.page.lang).page_path
        if posixpath.basename(target) != "index.md":
            raise ValueError(f"url({slug!r}): {target} is not served as a folder; link it with href() in Markdown")
        folder = posixpath.relpath(posixpath.dirname(target) or ".", self._source_folder)
        return ("./" if folder == "." else folder + "/") + (f"#{anchor}" if anchor else "")

    def title_of(self, slug: str) -> str:
        return self._renderer.page_of(slug, self.page.lang).title

    def has_page(self, slug: str) -> bool:
        return slug in self._renderer.pages


# The key arguments of \\tv{KEY}{FMT}, \\tvec{KEY} and \\tmat{KEY}{SHAPE-KEY}: the first, and \\tmat's second.
_KEY_ARGUMENTS = (
    re.compile(r"(?P<head>\\tmat\{[^{}]+\}\{)(?P<name>[^{}]+)(?=\})"),
    re.compile(r"(?P<head>\\(?:tv|tvec|tmat)\{)(?P<name>[^{}]+)(?=\})"),
)


def _named_keys(latex: str, values: Mapping[str, Any]) -> str:
    """``\\tv{alpha}{short}`` with ``alpha=row.alpha`` -> ``\\tv{CLAIM[1].alpha}{short}``: a key argument of ``\\tv``,
    ``\\tvec`` or ``\\tmat`` that names a keyword argument stands for that value's key (or for the key it is)."""
    if not values:
        return latex

    def key(m: re.Match[str]) -> str:
        name = m["name"]
        return m["head"] + key_of(values[name], "math") if name in values else m[0]

    for arguments in _KEY_ARGUMENTS:
        latex = arguments.sub(key, latex)
    return latex


def template_context(helpers: PageTemplate) -> dict[str, Any]:
    """The names a page's templates (and its DOT templates, beside theirs) see, as :data:`TEMPLATE_GLOBALS` lists them."""
    return {name: getattr(helpers, name) for name in TEMPLATE_GLOBALS}
