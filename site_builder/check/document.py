"""One page (HTML) or drawing (SVG) against the facts of a fresh run.

Three things are checked on a parsed document:

- every element carrying ``data-trace`` shows exactly the text that
  :func:`site_builder.facts.format_fact` gives for its key and format;
- every code excerpt whose container carries ``data-source`` equals the
  current source region;
- no other text a reader sees contains a number, unless an entry of
  :data:`site_builder.check.numbers.ALLOWED` covers it. What a reader sees is
  the page ``<title>``, the page content (``<article>`` in Material's
  ``.md-content``), the navigation labels and every SVG; scripts, styles and
  attribute values are not text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Iterable, Iterator, Mapping

from lxml import etree

from ..facts import FORMATS, UnknownFact, format_fact, formatter
from .coverage import Node, Shown
from .excerpts import RegionError, Sources, compare
from .numbers import ALLOWED, Allowed, scan
from .problems import Problem, quote

# Inline HTML elements: their text runs on with the text around them.
INLINE = frozenset(
    "a abbr b bdi bdo cite code data del dfn em i ins kbd mark q s samp small span strong sup time u var wbr".split()
)
SKIPPED = frozenset({"script", "style", "template"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
MATHML_SUBSCRIPT_PARENTS = frozenset({"msub", "msubsup", "munder", "munderover"})
_WS = re.compile(r"\s+")
_SEP = "\n"  # between blocks: numbers never run across it
_HOLE = "\ue000"  # where a verified element (data-trace, data-source) sat


def local(tag: Any) -> str:
    """Tag name without namespace; '' for comments and processing instructions."""
    if not isinstance(tag, str):
        return ""
    return _local(tag)


@lru_cache(maxsize=512)
def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].lower()


@dataclass(frozen=True)
class Facts:
    """What a page may show: its facts (``None`` when its fixtures failed) and the names among them."""

    values: Mapping[str, Any] | None
    ambiguous: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # key -> pages that disagree on it

    @cached_property
    def names(self) -> frozenset[str]:
        return _names(self.values or {})


def _names(values: Mapping[str, Any]) -> frozenset[str]:
    out: set[str] = set()
    for v in values.values():
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (tuple, list)):
            out.update(x for x in v if isinstance(x, str))
    return frozenset(out)


@dataclass
class PageReport:
    problems: list[Problem] = field(default_factory=list)
    values: int = 0
    shown: list[Shown] = field(default_factory=list)  # every data-trace element, with where it sits
    links: set[str] = field(default_factory=set)  # every <a href> on the page, as written


_HTML_PARSER = etree.HTMLParser(encoding="utf-8", no_network=True, remove_comments=False, default_doctype=False)


def parse_html(text: str | bytes) -> etree._Element:
    """An HTML page (UTF-8, as MkDocs writes it) as a tree; inline SVG and MathML keep their tag names, lower-cased."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    root = etree.fromstring(text, _HTML_PARSER)
    if root is None:
        raise ValueError("an empty file")
    return root


def parse_svg(data: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=False)
    return etree.fromstring(data, parser)


@dataclass
class _Doc:
    """A parsed document with the lookups every message needs."""

    root: etree._Element
    page: str
    order: dict[etree._Element, int]
    headings: list[tuple[int, str]]  # (order, id) of headings with an id
    svg_index: dict[etree._Element, int]

    @classmethod
    def of(cls, root: etree._Element, page: str) -> "_Doc":
        order: dict[etree._Element, int] = {}
        headings: list[tuple[int, str]] = []
        svg_index: dict[etree._Element, int] = {}
        for i, el in enumerate(root.iter()):
            order[el] = i
            name = local(el.tag)
            if name in HEADINGS and el.get("id"):
                headings.append((i, el.get("id")))
            elif name == "svg":
                svg_index[el] = len(svg_index) + 1
        return cls(root, page, order, headings, svg_index)

    def problem(self, el: etree._Element, element: str, expected: str, found: str, detail: tuple[str, ...] = ()) -> Problem:
        return Problem(self.page, self.order.get(el, 0), element, expected, found, detail)

    # -- where an element is, in words -------------------------------------------------

    def describe(self, el: etree._Element, what: str | None = None) -> str:
        """``span[data-trace=KEY] (section #id)``, ``svg#forward node 'output' text``, ``td (row 2, column 3) …``."""
        what = what or local(el.tag)
        chain = list(el.iterancestors())
        names = [local(a.tag) for a in chain]
        if "svg" in names or local(el.tag) == "svg":
            return self._describe_svg(el, what, chain)
        if local(el.tag) == "title" and "head" in names:
            return "title"
        nav = next((a for a in chain if local(a.tag) == "nav"), None)
        if nav is not None:
            label = nav.get("aria-label")
            return f"nav[aria-label={label}] {what}" if label else f"nav {what}"
        parts = [what]
        if "math" in names and local(el.tag) != "math":
            parts.append("in math")
        cell = el if local(el.tag) in ("td", "th") else next((a for a in chain if local(a.tag) in ("td", "th")), None)
        if cell is not None:
            parts.append(self._cell(cell))
        details = next((a for a in chain if local(a.tag) == "details"), None)
        if details is not None:
            summary = next((c for c in details if local(c.tag) == "summary"), None)
            if summary is not None:
                parts.append(f"in details {quote(_text(summary), 40)}")
        section = self.section(el)
        if section:
            parts.append(f"(section #{section})")
        return " ".join(parts)

    def section(self, el: etree._Element) -> str | None:
        i = bisect.bisect_right(self.headings, (self.order.get(el, 0), "\uffff")) - 1
        return self.headings[i][1] if i >= 0 else None

    def _cell(self, cell: etree._Element) -> str:
        row = cell.getparent()
        column = 1 + [c for c in row if local(c.tag) in ("td", "th")].index(cell)
        table = next((a for a in cell.iterancestors() if local(a.tag) == "table"), None)
        rows = [r for r in table.iter() if local(r.tag) == "tr"] if table is not None else [row]
        label = f"table#{table.get('id')} " if table is not None and table.get("id") else "table "
        return f"in {label}row {rows.index(row) + 1}, column {column}"

    def _describe_svg(self, el: etree._Element, what: str, chain: list[etree._Element]) -> str:
        svg = el if local(el.tag) == "svg" else next(a for a in chain if local(a.tag) == "svg")
        if svg.get("id"):
            head = f"svg#{svg.get('id')}"
        else:
            title = next((c for c in svg if local(c.tag) == "title"), None)
            head = f"svg {quote(_text(title), 40)}" if title is not None else f"svg #{self.svg_index.get(svg, 1)}"
        parts = [head]
        for a in reversed(chain):
            kind = (a.get("class") or "").split()
            if local(a.tag) == "g" and kind and kind[0] in ("node", "edge", "cluster"):
                parts.append(f"{kind[0]} {_graph_item_name(a)!r}")
        if el is not svg:
            parts.append(what)
        return " ".join(parts)


def _graph_item_name(group: etree._Element) -> str:
    """A Graphviz node, edge or cluster by its name (``<title>``), else its label texts, else its id."""
    title = next((c for c in group if local(c.tag) == "title"), None)
    if title is not None and _text(title):
        return _text(title)
    labels = [_text(t) for t in group if local(t.tag) == "text" and t.get("data-trace") is None]
    label = " ".join(t for t in labels if t)
    return label or group.get("id") or "?"


def _chain(el: etree._Element, memo: dict[etree._Element, tuple[Node, ...]]) -> tuple[Node, ...]:
    """The elements from the root down to ``el``, as selectors see them (shared prefixes computed once)."""
    if el in memo:
        return memo[el]
    parent = el.getparent()
    head = _chain(parent, memo) if parent is not None else ()
    memo[el] = chain = (*head, Node(local(el.tag), el.get("id"), frozenset((el.get("class") or "").split())))
    return chain


def _text(el: etree._Element) -> str:
    return _WS.sub(" ", "".join(el.itertext())).strip()


def _in_math(el: etree._Element) -> bool:
    return local(el.tag) == "math" or any(local(a.tag) == "math" for a in el.iterancestors())


# -- data-trace -------------------------------------------------------------------------


def _trace_elements(root: etree._Element) -> Iterator[etree._Element]:
    for el in root.iter():
        if isinstance(el.tag, str) and (el.get("data-trace") is not None or el.get("data-format") is not None):
            yield el


def check_values(doc: _Doc, facts: Facts, report: PageReport) -> None:
    chains: dict[etree._Element, tuple[Node, ...]] = {}
    for el in _trace_elements(doc.root):
        key, fmt = el.get("data-trace"), el.get("data-format")

        def fail(expected: str, found: str) -> None:
            label = f"[data-trace={key}]" if key is not None else f"[data-format={fmt}]"
            report.problems.append(doc.problem(el, doc.describe(el, local(el.tag) + label), expected, found))

        if key is not None:
            report.shown.append(Shown(key, _chain(el, chains)))
        if key is None or not key.strip():
            fail("a data-trace key beside data-format", "none")
            continue
        if fmt is None or not fmt.strip():
            fail("a data-format beside data-trace", "none")
            continue
        if facts.values is None:
            continue  # the page's fixtures failed; that is reported once, not per value
        report.values += 1
        if key in facts.ambiguous:
            fail("a key with one value across the site", f"different values on {', '.join(facts.ambiguous[key])}")
            continue
        if formatter(fmt) is None:
            fail(f"a known format ({', '.join(sorted(FORMATS))}, bool:YES|NO)", f"data-format={fmt!r}")
            continue
        try:
            expected = format_fact(facts.values, key, fmt)
        except UnknownFact:
            fail("a key of the page's trace facts", f"unknown key {key!r}")
            continue
        except (TypeError, ValueError) as exc:
            fail(f"a value that format {fmt!r} can show", f"{type(exc).__name__}: {exc}")
            continue
        found = "".join(el.itertext())
        if _in_math(el):
            same = _WS.sub("", found) == _WS.sub("", expected)
        else:
            same = _WS.sub(" ", found).strip() == _WS.sub(" ", expected).strip()
        if not same:
            fail(quote(expected), quote(_WS.sub(" ", found).strip()))


# -- data-source ------------------------------------------------------------------------


def _code_text(container: etree._Element) -> str:
    """The code of an excerpt: its ``<pre>`` text without line numbers."""
    parts: list[str] = []
    for pre in container.iter("pre", "{*}pre"):
        if any("linenos" in (a.get("class") or "") or "linenodiv" in (a.get("class") or "") for a in pre.iterancestors()):
            continue
        parts.append("".join(_code_pieces(pre)))
    if not parts:  # an excerpt without <pre>: the whole container is the code
        return "".join(container.itertext())
    return "\n".join(parts)


def _code_pieces(el: etree._Element) -> Iterator[str]:
    if el.text and "linenos" not in (el.get("class") or ""):
        yield el.text
    for child in el:
        if isinstance(child.tag, str) and "linenos" not in (child.get("class") or ""):
            yield from _code_pieces(child)
        if child.tail:
            yield child.tail


def check_excerpts(doc: _Doc, sources: Sources, report: PageReport) -> None:
    for el in doc.root.iter():
        if not isinstance(el.tag, str) or el.get("data-source") is None:
            continue
        ref = el.get("data-source")
        where = doc.describe(el, f"{local(el.tag)}[data-source={ref}]")
        try:
            region = sources.region(ref)
        except RegionError as exc:
            report.problems.append(doc.problem(el, where, exc.expected, exc.found))
            continue
        outcome = compare(region, _code_text(el), ref)
        if outcome is not None:
            expected, found, diff = outcome
            report.problems.append(doc.problem(el, where, expected, found, diff))


# -- numbers without provenance ---------------------------------------------------------


@dataclass
class _Flat:
    """Text of a subtree as a reader meets it, with the element that owns each piece."""

    chunks: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    owners: list[etree._Element] = field(default_factory=list)
    length: int = 0

    def add(self, text: str, owner: etree._Element) -> None:
        self.starts.append(self.length)
        self.owners.append(owner)
        self.chunks.append(text)
        self.length += len(text)

    def owner(self, offset: int) -> etree._Element:
        return self.owners[bisect.bisect_right(self.starts, offset) - 1]

    def text(self) -> str:
        return "".join(self.chunks)


def _flatten(el: etree._Element, flat: _Flat, index: bool = False) -> None:
    name = local(el.tag)
    if name in SKIPPED:
        return
    if el.get("data-trace") is not None or el.get("data-format") is not None or el.get("data-source") is not None:
        flat.add(_HOLE, el)
        return
    block = name not in INLINE
    if name == "sub":
        index = True  # x<sub>2</sub>: an index, not a quantity
    if block:
        flat.add(_SEP, el)
    if el.text and not index:
        flat.add(el.text, el)
    for position, child in enumerate(el):
        if isinstance(child.tag, str):
            sub = index or (name in MATHML_SUBSCRIPT_PARENTS and position == 1)
            _flatten(child, flat, sub)
        if child.tail and not index:
            flat.add(child.tail, el)
    if block:
        flat.add(_SEP, el)


def _scopes(root: etree._Element) -> list[etree._Element]:
    """The parts of a page a reader reads, outermost first, none inside another."""
    if local(root.tag) == "svg":
        return [root]
    picked: list[etree._Element] = []
    picked += [t for t in root.iter("title") if any(local(a.tag) == "head" for a in t.iterancestors())]
    content = root.xpath("//*[contains(concat(' ', normalize-space(@class), ' '), ' md-content ')]//article")
    if not content:
        body = root.find("body")
        content = [body if body is not None else root]
    picked += content
    picked += root.iter("nav")
    picked += root.iter("svg", "{*}svg")
    chosen: list[etree._Element] = []
    seen: set[etree._Element] = set()
    for el in picked:
        if el in seen or any(a in seen for a in el.iterancestors()):
            continue
        seen.add(el)
        chosen.append(el)
    return chosen


def check_numbers(doc: _Doc, names: frozenset[str], report: PageReport, allow: Iterable[Allowed] = ALLOWED) -> None:
    allow = tuple(allow)
    for scope in _scopes(doc.root):
        flat = _Flat()
        _flatten(scope, flat)
        text = flat.text()
        for found in scan(text, allow):
            if found.is_name and found.text in names:
                continue
            owner = flat.owner(found.start)
            context = _context(text, found.start, found.end)
            if found.is_name:
                expected = "a name the page's trace carries"
                shown = f"{found.text!r} in {context}"
            else:
                expected = "a number with provenance (data-trace) or an allowed one"
                shown = f"{found.text!r} in {context}"
            report.problems.append(doc.problem(owner, doc.describe(owner), expected, shown))


def _context(text: str, start: int, end: int, width: int = 30) -> str:
    left = text[max(0, start - width) : start].split(_SEP)[-1]
    right = text[end : end + width].split(_SEP)[0]
    snippet = _WS.sub(" ", (left + text[start:end] + right).replace(_HOLE, "▯")).strip()
    return quote(snippet, 2 * width + end - start + 10)


# -- the page heading -------------------------------------------------------------------


def _article(root: etree._Element) -> etree._Element:
    found = root.xpath("//*[contains(concat(' ', normalize-space(@class), ' '), ' md-content ')]//article")
    if found:
        return found[0]
    body = root.find("body")
    return body if body is not None else root


def check_heading(root: etree._Element, page: str, heading: str) -> list[Problem]:
    """A generated page has one ``<h1>`` reading exactly its declared heading, and no front matter shown as text."""
    article = _article(root)
    problems: list[Problem] = []
    h1s = [el for el in article.iter() if local(el.tag) == "h1"]
    if len(h1s) != 1:
        problems.append(Problem(page, 0, "h1", "one <h1> with the page's title", f"{len(h1s)} <h1> elements"))
    elif _text(h1s[0]) != _WS.sub(" ", heading).strip():
        problems.append(Problem(page, 0, "h1", f"the title declared in page.toml, {quote(heading)}", quote(_text(h1s[0]))))
    for el in article.iter():
        if local(el.tag) in (*HEADINGS, "p") and re.match(r"title\s*:", _text(el)):
            problems.append(
                Problem(page, 0, local(el.tag), "front matter read by the site, never shown", quote(_text(el), 80))
            )
            break
    return problems


# -- a whole document -------------------------------------------------------------------


def check_document(root: etree._Element, page: str, facts: Facts, sources: Sources) -> PageReport:
    """Every check on one parsed HTML page or SVG drawing (the tree is only read)."""
    doc = _Doc.of(root, page)
    report = PageReport(links={a.get("href") for a in root.iter("a", "{*}a") if a.get("href")})
    check_values(doc, facts, report)
    check_excerpts(doc, sources, report)
    check_numbers(doc, facts.names, report)
    return report


def check_svg(data: bytes, page: str, facts: Facts, sources: Sources) -> PageReport:
    return check_document(parse_svg(data), page, facts, sources)
