"""Diagrams: a DOT template rendered with Jinja, laid out by Graphviz's ``dot``, cleaned into inline SVG.

Templates ask for a role (``node("merge")``, ``edge("learned")``) instead of
writing attributes; each page declares its roles in ``page.toml`` beside a
neutral default set (see :mod:`site_builder.project`), so the visual grammar
of a page lives in one place.

A template writes every number through ``value(NODE, KEY, FMT)`` (or
``html_value`` inside an HTML-like label). That call
remembers which node shows which fact; after layout the matching SVG
``<text>`` gets ``data-trace`` and ``data-format`` so the checker can verify
diagrams as it verifies prose. Graphviz's colours are replaced by CSS classes,
so the palette (light or dark, or forced colours) decides them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import graphviz
import jinja2

from ..cache import Store, name
from ..errors import SiteBuilderError, ToolMissingError, os_error, shown
from ..facts import FactBook
from .cache import DIAGRAMS
from .keyed import key_of
from .templating import TemplateFailure, literal_lines, strict_environment

DOT_NOT_FOUND = "Graphviz's `dot` was not found; install the Debian package graphviz (apt-get install graphviz)"

_GRAPH_DEFAULTS = (
    'graph [rankdir=TB, bgcolor="transparent", nodesep="0.35", ranksep="0.45", pad="0.1", '
    'fontname="Helvetica,Arial,sans-serif"];\n'
    'node [shape=box, style="rounded", fontname="Helvetica,Arial,sans-serif", fontsize="11", '
    'margin="0.14,0.06", penwidth="1.4"];\n'
    'edge [fontname="Helvetica,Arial,sans-serif", fontsize="10", arrowsize="0.8", penwidth="1.4"];'
)

_SHAPES = {"polygon", "ellipse", "path", "polyline", "rect", "circle"}


# What a DOT template sees besides every name a page template sees (render.pages.TEMPLATE_GLOBALS): name -> (how it
# is called, what it gives). AUTHORING.md's table is made from it; tests/test_authoring_guide.py checks that it names
# exactly what DiagramRenderer.dot_source passes.
DOT_GLOBALS: dict[str, tuple[str, str]] = {
    "defaults": (
        "defaults",
        "the graph, node and edge defaults every diagram starts with (fonts, spacing, rounded boxes)",
    ),
    "node": ("node(role)", "a node role's DOT attributes: `input`, `output`, `step`, or one page.toml declares"),
    "edge": ("edge(role)", "an edge role's DOT attributes: `flow`, `aside`, or one page.toml declares"),
    "value": (
        "value(node, key, fmt)",
        "a fact (a key, or a field read from a record of `trace`) as a whole line of that node's quoted label "
        '(`label="…"`), given its provenance in the SVG',
    ),
    "html_value": ("html_value(node, key, fmt)", "the same inside an HTML-like label (`label=<…>`)"),
}


class DiagramError(SiteBuilderError):
    """Graphviz failed, or the drawn SVG lost a value the template put in."""


class DotSyntaxError(DiagramError):
    """``dot`` refused the DOT text at one of its lines."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def template_line(template: str, dot_text: str, dot_line: int) -> int | None:
    """The line of ``template`` that wrote line ``dot_line`` of the DOT text it rendered: the line whose literal
    words (outside its Jinja tags, :func:`literal_lines`) appear, in order, in that DOT line, the most literal text
    winning; None when no line of this template wrote it (it came from an included one, or from a value)."""
    lines = dot_text.splitlines()
    if not 1 <= dot_line <= len(lines):
        return None
    written = lines[dot_line - 1]
    best: tuple[int, int] | None = None  # (literal characters, line)
    for number, line in enumerate(literal_lines(template), start=1):
        parts = line.split()
        if not parts:
            continue
        at = 0
        for part in parts:
            at = written.find(part, at)
            if at < 0:
                break
            at += len(part)
        else:
            size = sum(map(len, parts))
            if best is None or size > best[0]:
                best = (size, number)
    return best[1] if best else None


class DotNotFoundError(ToolMissingError):
    def __init__(self) -> None:
        super().__init__(DOT_NOT_FOUND)


class DotText(str):
    """DOT source that is already escaped (attributes, escaped values)."""


def dot_escape(text: str) -> str:
    """``text`` as the inside of a double-quoted DOT string, shown literally.

    Graphviz decodes HTML entities even in quoted labels, so ``&`` is escaped too.
    """
    text = str(text).replace("&", "&amp;")
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _finalize(value: Any) -> str:
    return value if isinstance(value, DotText) else dot_escape("" if value is None else str(value))


def dot_environment(loader: jinja2.BaseLoader, store: Store | None = None) -> jinja2.Environment:
    """Jinja for DOT: every ``{{ }}`` is DOT-escaped unless it is :class:`DotText`."""
    return strict_environment(loader, store, autoescape=False, finalize=_finalize)


def html_label_escape(text: str) -> str:
    """``text`` inside a Graphviz HTML-like label (``label=<…>``), shown literally."""
    return escape(str(text), quote=True)


@dataclass
class _Values:
    """(node name, shown text) -> (key, format), filled while the DOT template renders.

    ``value(NODE, KEY, FMT)`` is escaped for a quoted label (``label="…"``),
    ``html_value(NODE, KEY, FMT)`` for an HTML-like label (``label=<…>``).
    """

    book: FactBook
    table: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def _register(self, node: str, fact: Any, fmt: str) -> str:
        key = key_of(fact, "value")  # a key, or a field read from a record of `trace`
        text = self.book.text(key, fmt)
        previous = self.table.setdefault((node, text), (key, fmt))
        if previous != (key, fmt):
            raise DiagramError(
                f"node {node!r} shows {text!r} for both {previous[0]} and {key}; give them separate nodes"
            )
        return text

    def __call__(self, node: str, key: Any, fmt: str) -> DotText:
        return DotText(dot_escape(self._register(node, key, fmt)))

    def html(self, node: str, key: Any, fmt: str) -> DotText:
        return DotText(html_label_escape(self._register(node, key, fmt)))


def _role(table: Mapping[str, str], kind: str) -> Callable[[str], DotText]:
    def attrs(role: str) -> DotText:
        if role not in table:
            raise DiagramError(
                f"unknown {kind} role {role!r}; known: {', '.join(sorted(table))} (declare it in page.toml under roles)"
            )
        return DotText(table[role])

    return attrs


def dot_version() -> str:
    """``dot -V`` output (part of every cache key), or :class:`DotNotFoundError`."""
    dot = shutil.which("dot")
    if dot is None:
        raise DotNotFoundError()
    try:
        done = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise DiagramError(f"`{dot} -V` failed: {exc}") from exc
    return (done.stdout + done.stderr).strip()


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def _strip_namespaces(root: ET.Element) -> None:
    for el in root.iter():
        if isinstance(el.tag, str):
            el.tag = _local(el.tag)
        for attr in list(el.attrib):
            if attr.startswith("{"):
                el.attrib[_local(attr)] = el.attrib.pop(attr)


def _add_class(el: ET.Element, cls: str) -> None:
    el.set("class", (el.get("class", "") + " " + cls).strip())


_SUBSCRIPT = re.compile(r"_(\w)")


def _subscripts(text_el: ET.Element) -> None:
    """``J_F`` in a label line becomes J with a subscript F (a ``<tspan>``), centred as one line."""
    text = text_el.text or ""
    parts = _SUBSCRIPT.split(text)
    if len(parts) == 1:
        return
    text_el.text = parts[0]
    for sub, after in zip(parts[1::2], parts[2::2]):
        span = ET.SubElement(text_el, "tspan", {"class": "dg-sub", "baseline-shift": "-18%", "font-size": "72%"})
        span.text = sub
        span.tail = after


def _px(length: str) -> str:
    match = re.fullmatch(r"([0-9.]+)pt", length)
    return f"{float(match[1]) * 4 / 3:.0f}" if match else length


@dataclass
class Diagram:
    svg: str  # inline SVG, ready for HTML
    cached: bool  # the layout came from the cache, not a fresh ``dot`` run


KIND = DIAGRAMS  # named in render/cache.py, which a warm build reads without importing Graphviz
CACHE_FORMAT = "site-builder diagram cache 3"  # part of every name: entries of another format are never read


def svg_problem(text: str) -> str | None:
    """Why ``text`` is not an SVG drawing Graphviz made (None when it is one): checked before it is cached or used."""
    at = text.find("<svg")
    if at < 0:
        return "no <svg> element"
    try:
        root = ET.fromstring(text[at:])
    except ET.ParseError as exc:
        return f"not well-formed XML: {exc}"
    if _local(root.tag) != "svg":
        return f"a <{_local(root.tag)}> document, not <svg>"
    if not any(_local(child.tag) == "g" for child in root):
        return "an <svg> without a graph group"
    return None


class DiagramRenderer:
    """Renders DOT templates to accessible inline SVG, caching Graphviz's output by content.

    A cache entry (``.cache/diagrams/NAME``, NAME the SHA-256 of the DOT text and the ``dot`` version) is written
    to the cache store only after the SVG was checked, and checked again when read: a damaged entry is drawn
    again with one warning (by the store), never used.
    """

    def __init__(self, store: Store | None, display: Callable[[Path], str] = str) -> None:
        self.store = store
        self.display = display
        self._version: str | None = None
        self.rendered = 0
        self.cached = 0
        self.drawn: list[str] = []  # the cache entries of the layouts drawn since the caller last emptied it

    @property
    def version(self) -> str:
        if self._version is None:
            self._version = dot_version()
        return self._version

    def dot_source(
        self,
        env: jinja2.Environment,
        template: str,
        book: FactBook,
        context: dict[str, Any],
        node_roles: Mapping[str, str],
        edge_roles: Mapping[str, str],
    ) -> tuple[str, _Values]:
        values = _Values(book)
        text = env.get_template(template).render(
            **context,
            defaults=DotText(_GRAPH_DEFAULTS),
            node=_role(node_roles, "node"),
            edge=_role(edge_roles, "edge"),
            value=values,
            html_value=values.html,
        )
        return text, values

    def layout(self, dot_text: str) -> tuple[str, bool]:
        """Graphviz's SVG for ``dot_text`` (from the cache when the same DOT and ``dot`` ran before)."""
        entry = name(CACHE_FORMAT, dot_text, self.version)
        self.drawn.append(entry)
        svg = self._load(entry)
        if svg is not None:
            self.cached += 1
            return svg, True
        svg = self._dot(dot_text)
        problem = svg_problem(svg)
        if problem is not None:
            raise DiagramError(f"`dot` gave output that is not an SVG drawing ({problem}); nothing was cached")
        if self.store is not None:
            self.store.put(KIND, entry, svg.encode("utf-8"))
        self.rendered += 1
        return svg, False

    def _dot(self, dot_text: str) -> str:
        try:
            return graphviz.Source(dot_text).pipe(format="svg", engine="dot", encoding="utf-8")
        except graphviz.ExecutableNotFound:
            raise DotNotFoundError() from None
        except graphviz.CalledProcessError as exc:
            detail = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else str(exc.stderr)
            said = detail.strip()
            found = re.search(r"syntax error in line (\d+)", said)
            if found:
                raise DotSyntaxError(f"dot rejected the diagram: {shown(said, 300)}", int(found.group(1))) from None
            raise DiagramError(f"dot rejected the diagram: {shown(said, 300)}") from None
        except UnicodeDecodeError as exc:
            raise DiagramError(
                f"`dot` gave output that is not UTF-8 ({exc.reason} at byte {exc.start}); nothing was cached"
            ) from None
        except OSError as exc:
            raise DiagramError(f"`dot` could not run: {os_error(exc).cause}") from None

    def _load(self, entry: str) -> str | None:
        """The cached SVG of ``entry``; None when there is none, or (said by the store) when it cannot be trusted."""
        if self.store is None:
            return None
        body = self.store.get(KIND, entry, "drawing it again")
        if body is None:
            return None
        try:
            svg = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.store.damaged(KIND, entry, f"not UTF-8: {exc.reason} at byte {exc.start}", "drawing it again")
            return None
        problem = svg_problem(svg)
        if problem is not None:
            self.store.damaged(KIND, entry, problem, "drawing it again")
            return None
        return svg

    def render(
        self,
        env: jinja2.Environment,
        template: str,
        book: FactBook,
        context: dict[str, Any],
        *,
        node_roles: Mapping[str, str],
        edge_roles: Mapping[str, str],
        diagram_id: str,
        title: str,
        description_html: str,
    ) -> Diagram:
        dot_text, values = self.dot_source(env, template, book, context, node_roles, edge_roles)
        try:
            raw, was_cached = self.layout(dot_text)
        except DotSyntaxError as exc:
            source = env.get_template(template)
            path = Path(source.filename) if source.filename else None
            line = template_line(path.read_text(encoding="utf-8"), dot_text, exc.line) if path else None
            raise TemplateFailure(str(exc), self.display(path) if path else template, line) from None
        try:
            svg = postprocess(raw, values.table, diagram_id=diagram_id, title=title, description_html=description_html)
        except DiagramError as exc:
            raise DiagramError(f"{template}: {exc}") from None
        return Diagram(svg, was_cached)


def postprocess(
    raw: str,
    values: dict[tuple[str, str], tuple[str, str]],
    *,
    diagram_id: str,
    title: str,
    description_html: str,
) -> str:
    """Graphviz SVG -> inline SVG: no prolog, classes instead of colours, provenance on value texts."""
    body = raw[raw.index("<svg") :]  # drop the XML prolog, doctype and generator comments
    root = ET.fromstring(body)
    _strip_namespaces(root)
    unmatched = dict(values)

    graph = root.find("g")
    if graph is None:
        raise DiagramError("Graphviz output has no graph group")
    for child in list(graph):
        if child.tag == "title" or (child.tag == "polygon" and child.get("class") is None):
            graph.remove(child)  # the graph's name and its background rectangle

    for group in root.iter("g"):
        classes = group.get("class", "").split()
        title_el = group.find("title")
        name = title_el.text if title_el is not None and title_el.text else ""
        if title_el is not None:
            group.remove(title_el)  # hover tooltips with internal node names
        if "node" in classes or "edge" in classes:
            for el in group:
                if el.tag in _SHAPES:
                    el.attrib.pop("fill", None)
                    el.attrib.pop("stroke", None)
                    if "node" in classes:
                        _add_class(el, "dg-shape")
                    else:
                        _add_class(el, "dg-arrow" if el.tag == "polygon" else "dg-line")
                elif el.tag == "text":
                    el.attrib.pop("fill", None)
                    text = el.text or ""
                    found = unmatched.pop((name, text), None) if "node" in classes else None
                    if found is None and "node" in classes and (name, text) in values:
                        found = values[(name, text)]
                    if found:
                        el.set("data-trace", found[0])
                        el.set("data-format", found[1])
                        _add_class(el, "dg-value")
                    else:
                        _add_class(el, "dg-label")
                        _subscripts(el)
    if unmatched:
        (node, text), (key, _fmt) = next(iter(unmatched.items()))
        raise DiagramError(
            f"value {key} ({text!r}) of node {node!r} is missing from the drawn SVG: a value() must be a whole "
            "line of its own node's label (write it after a \\n, in the node it names)"
        )

    for el in root.iter():
        if "id" in el.attrib:
            el.set("id", f"{diagram_id}-{el.get('id')}")
    for dim in ("width", "height"):
        if dim in root.attrib:
            root.set(dim, _px(root.attrib[dim]))
    root.set("role", "img")
    root.set("class", "dg")
    root.set("id", diagram_id)
    root.set("aria-labelledby", f"{diagram_id}-title {diagram_id}-desc")
    root.set("focusable", "false")
    title_el = ET.Element("title", {"id": f"{diagram_id}-title"})
    title_el.text = title
    desc_el = ET.Element("desc", {"id": f"{diagram_id}-desc"})
    desc_el.text = "\x00DESC\x00"
    root.insert(0, desc_el)
    root.insert(0, title_el)
    for el in root.iter():
        el.tail = "\n" if el.tail and el.tail.strip() == "" else el.tail
        if el.tag == "g" and el.text and not el.text.strip():
            el.text = "\n"
    svg = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    svg = svg.replace("\x00DESC\x00", description_html)
    return re.sub(r"\n\s*\n", "\n", svg).strip() + "\n"


def legend_swatch(role: str, node_roles: Mapping[str, str], edge_roles: Mapping[str, str]) -> str:
    """A tiny inline SVG sample of a role for a legend: a double border for a node drawn with two, else its line style."""
    node, edge = node_roles.get(role, ""), edge_roles.get(role, "")
    if not node and not edge:
        raise DiagramError(
            f"no role {role!r} to draw in a legend; known: {', '.join(sorted({*node_roles, *edge_roles}))}"
        )
    if re.search(r'peripheries="?2', node) and not edge:
        shape = '<circle class="dg-shape" cx="14" cy="12" r="9"/><circle class="dg-shape" cx="14" cy="12" r="6"/>'
    else:
        dash = ' stroke-dasharray="5,3"' if "dashed" in (edge or node) else ""
        dash = ' stroke-dasharray="1,3"' if "dotted" in (edge or node) else dash
        shape = f'<path class="dg-line" d="M2 12 H30"{dash}/>'
    return (
        f'<svg class="dg dg-swatch {escape(role)}" width="32" height="24" viewBox="0 0 32 24" '
        f'aria-hidden="true" focusable="false">{shape}</svg>'
    )
