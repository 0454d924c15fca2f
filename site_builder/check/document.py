"""One page (HTML) or drawing (SVG) against the facts of a fresh run.

Three things are checked on a parsed document:

- every element carrying ``data-trace`` shows exactly the text that
  :func:`site_builder.facts.format_fact` gives for its key and format;
- every code excerpt whose container carries ``data-source`` equals the
  current source region;
- no other text a reader sees or hears contains a number (see
  :mod:`site_builder.numerals`), unless an entry of
  :data:`site_builder.numerals.ALLOWED` covers it.

What a reader sees or hears is everything of the page: its ``<title>`` and
description, the whole ``<body>`` (content, navigation, header, footer, every
SVG and MathML formula, the caption of a code excerpt), the attributes a
browser shows or a screen reader speaks (``alt``, ``title``, ``aria-label``,
``aria-description`` and the others in :data:`SHOWN_ATTRIBUTES`), and what
style sheets write with ``content:`` (strings, and attributes shown with
``attr()``). Scripts and templates are not text; the code of an excerpt is
compared with its source instead of read for numbers.

Sub- and superscripts: the text of an HTML ``<sub>`` or ``<sup>`` is read as
its own run, so a number in it is a number even right after a letter
(``x<sub>2</sub>`` is flagged; write an index in math). In MathML, a subscript
made of letters and whole numbers joined by ``+``, ``−`` or commas (``W_2``,
``x_{l+1}``, ``\\log_{10}``) is an index, not a quantity: the math renderer
refuses a typed digit anywhere else.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import json
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from lxml import etree

from ..errors import shown
from ..facts import FORMATS, FactBook, UnknownFact, fact_names, formatter
from ..numerals import ALLOWED, Allowed, Found, scan
from .coverage import Node, Shown
from .excerpts import RegionError, Sources, compare
from .problems import Problem, quote

# Inline HTML elements: their text runs on with the text around them.
INLINE = frozenset(
    "a abbr b bdi bdo cite code data del dfn em i ins kbd mark q s samp small span strong sub sup time u var wbr".split()
)
SKIPPED = frozenset({"script", "style", "template"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
MATHML_SUBSCRIPT_PARENTS = frozenset({"msub", "msubsup"})  # an under-script (a bound) is a quantity
_WS = re.compile(r"\s+")
_SEP = "\n"  # between blocks: numbers never run across it
_HOLE = "\ue000"  # where a verified element (data-trace, data-source) sat


_LOCALS: dict[Any, str] = {}  # tag -> local name: a page asks this for every element, several times


def local(tag: Any) -> str:
    """Tag name without namespace; '' for comments and processing instructions."""
    found = _LOCALS.get(tag)
    if found is None:
        found = _local(tag) if isinstance(tag, str) else ""
        if len(_LOCALS) < 4096:  # a page inventing tag names cannot grow it without bound
            _LOCALS[tag] = found
    return found


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
        return fact_names(self.values or {})


@dataclass
class PageReport:
    problems: list[Problem] = field(default_factory=list)
    values: int = 0
    shown: list[Shown] = field(default_factory=list)  # every data-trace element, with where it sits
    links: set[str] = field(default_factory=set)  # every <a href> on the page, as written


# huge_tree: libxml2's HTML parser otherwise drops, without a word, whatever is nested more than 256 deep.
_HTML_PARSER = etree.HTMLParser(
    encoding="utf-8", no_network=True, remove_comments=False, default_doctype=False, huge_tree=True
)
MAX_DEPTH = 200  # elements nested deeper than this are refused (a page built here is nested about 30 deep)


def parse_html(text: str | bytes) -> etree._Element:
    """An HTML page (UTF-8, as MkDocs writes it) as a tree; inline SVG and MathML keep their tag names, lower-cased.

    Raises ValueError for an empty file and for one nested deeper than :data:`MAX_DEPTH`, which a browser
    shows whole but a check could only read in part.
    """
    if isinstance(text, str):
        text = text.encode("utf-8")
    root = etree.fromstring(text, _HTML_PARSER)
    if root is None:
        raise ValueError("an empty file")
    return _shallow(root)


def parse_svg(data: bytes) -> etree._Element:
    """A standalone SVG drawing. Entities are never expanded; a drawing that declares any is refused (ValueError),
    since a viewer would show text the check cannot see."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=False, huge_tree=True)
    root = etree.fromstring(data, parser)
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise ValueError("entity declarations (<!ENTITY …>), whose text a viewer shows and the check cannot verify")
    return _shallow(root)


# An element nested in MAX_DEPTH others (the root is at depth 1): one step per level, evaluated in libxml2.
_TOO_DEEP = etree.XPath("boolean(self::*" + "/*" * MAX_DEPTH + ")")


def _shallow(root: etree._Element) -> etree._Element:
    if _TOO_DEEP(root):
        raise ValueError(f"elements nested more than {MAX_DEPTH} deep")
    return root


@dataclass
class _Doc:
    """A parsed document with the lookups every message needs (made when the first message is)."""

    root: etree._Element
    page: str

    @classmethod
    def of(cls, root: etree._Element, page: str) -> _Doc:
        return cls(root, page)

    @cached_property
    def _lookups(self) -> tuple[dict[etree._Element, int], list[tuple[int, str]], dict[etree._Element, int]]:
        order: dict[etree._Element, int] = {}
        headings: list[tuple[int, str]] = []
        svg_index: dict[etree._Element, int] = {}
        for i, el in enumerate(self.root.iter()):
            order[el] = i
            name = local(el.tag)
            if name in HEADINGS and el.get("id"):
                headings.append((i, el.get("id")))
            elif name == "svg":
                svg_index[el] = len(svg_index) + 1
        return order, headings, svg_index

    @property
    def order(self) -> dict[etree._Element, int]:
        """Every node of the document by its position in document order."""
        return self._lookups[0]

    @property
    def headings(self) -> list[tuple[int, str]]:
        """(order, id) of the headings with an id."""
        return self._lookups[1]

    @property
    def svg_index(self) -> dict[etree._Element, int]:
        """Each ``<svg>`` by its number on the page, from 1."""
        return self._lookups[2]

    def problem(
        self, el: etree._Element, element: str, expected: str, found: str, detail: tuple[str, ...] = ()
    ) -> Problem:
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


_NODES: dict[tuple[str, str | None, str | None], Node] = {}  # (tag, id, class) -> its Node, which never changes


def _chain(
    el: etree._Element, memo: dict[etree._Element, tuple[Node, ...]], maths: dict[etree._Element, bool] | None = None
) -> tuple[Node, ...]:
    """The elements from the root down to ``el``, as selectors see them (shared prefixes computed once).

    ``maths`` (when given) notes for each element of the chain whether it is, or is inside, a ``<math>``.
    """
    chain = memo.get(el)
    if chain is not None:
        return chain
    parent = el.getparent()
    head = _chain(parent, memo, maths) if parent is not None else ()
    name = local(el.tag)
    seen = (name, el.get("id"), el.get("class"))
    node = _NODES.get(seen)
    if node is None:
        node = Node(name, seen[1], frozenset((seen[2] or "").split()))
        if len(_NODES) < 4096:  # a page inventing ids cannot grow it without bound
            _NODES[seen] = node
    memo[el] = chain = (*head, node)
    if maths is not None:
        maths[el] = name == "math" or (parent is not None and maths[parent])
    return chain


def _text(el: etree._Element) -> str:
    return _WS.sub(" ", "".join(el.itertext())).strip()


# -- data-trace -------------------------------------------------------------------------


# Elements carrying data-trace or data-format, the root included, in document order (found by libxml2).
_TRACE_ELEMENTS = etree.XPath("descendant-or-self::*[@data-trace or @data-format]")


def check_values(doc: _Doc, facts: Facts, report: PageReport) -> None:
    chains: dict[etree._Element, tuple[Node, ...]] = {}
    maths: dict[etree._Element, bool] = {}
    book = FactBook(facts.values) if facts.values is not None else None  # format_fact, without one per value
    for el in _TRACE_ELEMENTS(doc.root):
        key, fmt = el.get("data-trace"), el.get("data-format")

        def fail(expected: str, found: str) -> None:
            label = f"[data-trace={key}]" if key is not None else f"[data-format={fmt}]"
            report.problems.append(doc.problem(el, doc.describe(el, local(el.tag) + label), expected, found))

        if key is not None:
            report.shown.append(Shown(key, _chain(el, chains, maths)))
        if key is None or not key.strip():
            fail("a data-trace key beside data-format", "none")
            continue
        if fmt is None or not fmt.strip():
            fail("a data-format beside data-trace", "none")
            continue
        if book is None:
            continue  # the page's fixtures failed; that is reported once, not per value
        report.values += 1
        if key in facts.ambiguous:
            fail("a key with one value across the site", f"different values on {', '.join(facts.ambiguous[key])}")
            continue
        if formatter(fmt) is None:
            fail(f"a known format ({', '.join(sorted(FORMATS))}, bool:YES|NO)", f"data-format={fmt!r}")
            continue
        try:
            expected = book.text(key, fmt)
        except UnknownFact:
            fail("a key of the page's trace facts", f"unknown key {key!r}")
            continue
        except (TypeError, ValueError) as exc:
            fail(f"a value that format {fmt!r} can show", f"{type(exc).__name__}: {exc}")
            continue
        unseen = _unseen(el, maths[el])
        if unseen is not None:
            fail(*unseen)
            continue
        found = "".join(el.itertext())
        if found == expected:
            continue
        if maths[el]:  # in math, or math itself
            same = _WS.sub("", found) == _WS.sub("", expected)
        else:
            same = _WS.sub(" ", found).strip() == _WS.sub(" ", expected).strip()
        if not same:
            fail(quote(expected), quote(_WS.sub(" ", found).strip()))


_HIDING = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|content-visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|(?:unicode-bidi|direction|content"
    r"|transform|position|clip|clip-path)\s*:)",
    re.I,
)
_SIGN_BEFORE = re.compile(r"(?<![^\W_])[-\u2212+\u00b1\u2213]\s*$")  # a hyphen glued to a word (GPT-2) is no sign
_UNIT_AFTER = re.compile(r"^\s*[%\u2030\u2031\u2032\u2033]")
_SIGNS = frozenset("-\u2212+\u00b1\u2213")


def _hides(el: etree._Element) -> str | None:
    """Why a reader does not see ``el`` as its text reads (hidden, reordered, restyled), or None."""
    name = local(el.tag)
    if name in SKIPPED or name == "noscript":
        return f"<{name}> inside it"
    if el.get("hidden") is not None:
        return f"a hidden <{name}>"
    if name == "bdo" or (el.get("dir") or "").strip().lower() in ("rtl", "auto"):
        return f"a bidi override (<{name} dir={el.get('dir')}>)"
    style = el.get("style")
    if style and _HIDING.search(style):
        return f"<{name} style={quote(style, 60)}>"
    return None


def _unseen(el: etree._Element, in_math: bool) -> tuple[str, str] | None:
    """(expected, found) when a reader would not read a value as its text says: part of it hidden, its order
    overridden, or a sign or unit typed beside it that changes what it reads."""
    for node in (el, *el.iterancestors()):
        if not isinstance(node.tag, str):
            continue
        why = _hides(node) if node is el or local(node.tag) in ("bdo", "span", "div", "p", "td", "th", "li") else None
        if why is None and node is not el and (node.get("hidden") is not None or local(node.tag) == "bdo"):
            why = _hides(node)
        if why is not None:
            return "a value a reader sees as its text reads", why if node is el else f"{why} around it"
    for inner in el.iterdescendants():
        why = _hides(inner) if isinstance(inner.tag, str) else None
        if why is not None:
            return "a value whose every character a reader sees, in its order", why
    before = _text_before(el)
    after = el.tail or ""
    if in_math and not (el.get("data-trace") or "").startswith("LIT."):  # a literal's sign is the formula's
        sign = _math_sign_before(el)
        if sign is not None:
            return "no sign written before a value", f"<mo>{sign}</mo> before it"
    elif _SIGN_BEFORE.search(before):
        return "no sign written before a value", quote(before[-12:].lstrip(), 20) + " before it"
    if _UNIT_AFTER.match(after):
        return "no unit written after a value", quote(after[:12].rstrip(), 20) + " after it"
    return None


def _text_before(el: etree._Element) -> str:
    previous = el.getprevious()
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()  # a comment: the text before it runs on
    if previous is not None:
        return previous.tail or ""
    parent = el.getparent()
    return (parent.text or "") if parent is not None else ""


def _math_sign_before(el: etree._Element) -> str | None:
    """A MathML ``<mo>`` sign right before a value that is not a binary operator (nothing but an operator, or
    nothing at all, before it): a minus typed in front of a verified value."""
    previous = el.getprevious()
    if previous is None or local(previous.tag) != "mo":
        return None
    sign = (previous.text or "").strip()
    if sign not in _SIGNS:
        return None
    before = previous.getprevious()
    if before is None or (local(before.tag) == "mo" and (before.text or "").strip() not in (")", "]", "}", "|")):
        return sign
    return None


# -- data-source ------------------------------------------------------------------------


def _code_text(container: etree._Element) -> str:
    """The code of an excerpt: its ``<pre>`` text without line numbers."""
    parts: list[str] = []
    for pre in container.iter("pre", "{*}pre"):
        if any(
            "linenos" in (a.get("class") or "") or "linenodiv" in (a.get("class") or "") for a in pre.iterancestors()
        ):
            continue
        parts.append("".join(_code_pieces(pre)))
    if not parts:  # an excerpt without <pre>: the whole container is the code
        return "".join(container.itertext())
    return "\n".join(parts)


_NUMBERED = etree.XPath("descendant::*[contains(@class, 'linenos')]")


def _code_pieces(pre: etree._Element) -> list[str]:
    """The texts of ``pre`` in order, leaving out elements (and their contents) of class ``linenos``."""
    if pre.getroottree().docinfo.xml_version is None and not _NUMBERED(pre):
        # from the HTML parser (no entities), and no line numbers inside: its whole text, as libxml2 writes it
        text = etree.tostring(pre, method="text", encoding="unicode", with_tail=False)
        return [text] if "linenos" not in (pre.get("class") or "") else [text[len(pre.text or "") :]]
    pieces: list[str] = []
    add = pieces.append

    def walk(el: etree._Element) -> None:
        for child in el:
            if isinstance(child.tag, str) and "linenos" not in (child.get("class") or ""):
                if child.text:
                    add(child.text)
                walk(child)  # noqa: F821 - bound while it runs; `del walk` below only unbinds it afterwards
            if child.tail:
                add(child.tail)

    if pre.text and "linenos" not in (pre.get("class") or ""):
        add(pre.text)
    walk(pre)
    del walk  # a recursive closure refers to itself: unbound, the tree it read is freed now, not by the next GC pass
    return pieces


def _caption(container: etree._Element) -> etree._Element | None:
    """The ``<figcaption>`` of an excerpt's figure, which names the file and the region it shows."""
    return next((c for c in container if local(c.tag) == "figcaption"), None)


def excerpt_caption(ref: str) -> str:
    """What an excerpt's caption reads for ``data-source="PATH#REGION"``: ``PATH, region REGION``."""
    path, _, name = ref.partition("#")
    return f"{path}, region {name}"


# Elements carrying data-source, the root included, in document order.
_EXCERPTS = etree.XPath("descendant-or-self::*[@data-source]")


def check_excerpts(doc: _Doc, sources: Sources, report: PageReport) -> None:
    for el in _EXCERPTS(doc.root):
        ref = el.get("data-source")
        where = lambda: doc.describe(el, f"{local(el.tag)}[data-source={ref}]")  # noqa: E731 - only for a message
        caption = _caption(el)
        if caption is not None and _text(caption) != excerpt_caption(ref):
            report.problems.append(
                doc.problem(
                    caption,
                    doc.describe(caption, f"figcaption of [data-source={ref}]"),
                    quote(excerpt_caption(ref)),
                    quote(_text(caption)),
                )
            )
        try:
            region = sources.region(ref)
        except RegionError as exc:
            report.problems.append(doc.problem(el, where(), exc.expected, exc.found))
            continue
        outcome = compare(region, _code_text(el), ref)
        if outcome is not None:
            expected, found, diff = outcome
            report.problems.append(doc.problem(el, where(), expected, found, diff))


# -- numbers without provenance ---------------------------------------------------------

# Attributes a reader sees or hears on any element: a tooltip, a text alternative, an accessible name or value.
SHOWN_ATTRIBUTES = frozenset(
    {
        "alt",
        "title",
        "label",
        "placeholder",
        "aria-label",
        "aria-description",
        "aria-roledescription",
        "aria-placeholder",
        "aria-valuetext",
        "aria-valuenow",
        "aria-valuemin",
        "aria-valuemax",
        "aria-braillelabel",
        "aria-brailleroledescription",
        # numbers a screen reader speaks: a heading's level, an item's place in its set, a cell's row and column
        "aria-level",
        "aria-posinset",
        "aria-setsize",
        "aria-rowindex",
        "aria-rowindextext",
        "aria-rowcount",
        "aria-rowspan",
        "aria-colindex",
        "aria-colindextext",
        "aria-colcount",
        "aria-colspan",
        "alttext",  # MathML's text alternative of a formula
    }
)
# <meta> whose content a browser or a link preview shows: the description, Open Graph and Twitter cards
_SHOWN_META = re.compile(r"^(?:description|title|keywords|author|application-name|og:.*|twitter:.*)$", re.I)
# Attributes a reader sees on particular elements: a list's first number, a gauge's value, a button's text.
SHOWN_ATTRIBUTES_OF = {
    "ol": frozenset({"start"}),
    "li": frozenset({"value"}),
    "input": frozenset({"value"}),
    "progress": frozenset({"value", "max"}),
    "meter": frozenset({"value", "min", "max", "low", "high", "optimum"}),
}
_EDGE = "\ue001"  # where a <sub> or <sup> begins or ends: its digits never join the word before them
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CSS_CONTENT = re.compile(r"(?<![-\w])content\s*:\s*([^;}]*)")
_CSS_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'', re.S)
_CSS_ATTR = re.compile(r"attr\(\s*([-\w:]+)")
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|(.))", re.S)


def _css_unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m[1]:
            code = int(m[1], 16)
            return chr(code) if 0 < code <= 0x10FFFF else "\ufffd"
        return m[2]

    return _CSS_ESCAPE.sub(one, text)


_CSS_DATA_URL = re.compile(r"""url\(\s*(["']?)(data:[^"')]*)\1\s*\)""", re.I)
_DATA_URI = re.compile(r"data:(?P<type>[^,;]*)(?P<params>(?:;[^,;]*)*),(?P<data>.*)", re.I | re.S)
_DRAWN = ("image/svg+xml", "text/html", "application/xhtml+xml", "text/plain")


def data_uri_text(uri: str) -> str | None:
    """The text a reader sees in a ``data:`` URI of a drawing or a page (SVG, HTML, plain text); None otherwise."""
    m = _DATA_URI.fullmatch(uri.strip())
    if m is None or m["type"].strip().lower() not in _DRAWN:
        return None
    try:
        if ";base64" in m["params"].lower():
            raw = base64.b64decode(m["data"], validate=False)
        else:
            raw = urllib.parse.unquote_to_bytes(m["data"])
    except (ValueError, binascii.Error):
        return ""
    text = raw.decode("utf-8", "replace")
    if m["type"].strip().lower() == "text/plain":
        return text
    try:
        root = parse_html(f"<html><body>{text}</body></html>")
    except (ValueError, etree.XMLSyntaxError):
        return text
    return " ".join(t for el in root.iter() if local(el.tag) not in SKIPPED for t in (el.text, el.tail) if t)


def css_content(css: str) -> tuple[list[str], set[str]]:
    """What a style sheet writes on the page: its ``content:`` strings, the text of drawings it embeds as
    ``url(data:…)``, and the attributes it shows with ``attr()``."""
    strings: list[str] = []
    attributes: set[str] = set()
    css = _CSS_COMMENT.sub(" ", css)
    for m in _CSS_CONTENT.finditer(css):
        value = m[1]
        strings += [_css_unescape(s[0] or s[1]) for s in _CSS_STRING.findall(value)]
        attributes |= {a.lower() for a in _CSS_ATTR.findall(value)}
    for m in _CSS_DATA_URL.finditer(css):
        text = data_uri_text(m[2])
        if text:
            strings.append(text)
    return strings, attributes


# What a style sheet may not do, since the check cannot read what it writes (or where it moves what is read):
# write a counter or a quote mark, or a custom property's text, as content; number a list with symbols of its
# own; set a counter to a number; override the order of a text's characters.
_CSS_REFUSED = (
    (
        re.compile(r"(?<![-\w])content\s*:[^;}]*\bcounters?\(\s*(?!annotation\s*\))[-\w]+", re.I),
        "a counter() in content",
    ),
    (re.compile(r"(?<![-\w])content\s*:[^;}]*\b(?:open|close)-quote\b", re.I), "open-quote or close-quote in content"),
    (re.compile(r"(?<![-\w])content\s*:[^;}]*\bvar\(", re.I), "a var() in content"),
    (re.compile(r"(?<![-\w])quotes\s*:[^;}]*[\"']", re.I), "quotes: with strings of its own"),
    (re.compile(r"@counter-style\b", re.I), "@counter-style"),
    (re.compile(r"(?<![-\w])counter-(?:reset|set|increment)\s*:[^;}]*\d", re.I), "a counter set to a number"),
    (re.compile(r"(?<![-\w])unicode-bidi\s*:\s*(?:bidi-override|isolate-override|plaintext)", re.I), "a bidi override"),
)
# Material numbers its code annotations with counter(annotation), reset and increased without a number.


def css_refused(css: str) -> list[str]:
    """What a style sheet does that the check refuses (see :data:`_CSS_REFUSED`), each with its text."""
    css = _CSS_COMMENT.sub(" ", css)
    return [f"{what} ({quote(m[0], 60)})" for pattern, what in _CSS_REFUSED for m in pattern.finditer(css)]


@dataclass
class _Flat:
    """Text of a subtree as a reader meets it, with the element that owns each piece."""

    chunks: list[str] = field(default_factory=list)
    owners: list[etree._Element] = field(default_factory=list)
    _starts: list[int] | None = None  # where each chunk starts, counted when an owner is first asked for

    def add(self, text: str, owner: etree._Element) -> None:
        self.chunks.append(text)
        self.owners.append(owner)
        self._starts = None

    def owner(self, offset: int) -> etree._Element:
        if self._starts is None:
            self._starts = [0, *itertools.accumulate(map(len, self.chunks))][:-1]
        return self.owners[bisect.bisect_right(self._starts, offset) - 1]

    def text(self) -> str:
        return "".join(self.chunks)


_INDEX = re.compile(r"(?:[^\W\d_]+|[0-9]+)(?:[+\-\u2212,](?:[^\W\d_]+|[0-9]+))*")


def _is_index(el: etree._Element, parent: str, position: int) -> bool:
    """A MathML subscript that is an index, not a quantity: letters and whole numbers joined by ``+``, ``−`` or
    commas (``W_2``, ``x_{l+1}``, ``\\log_{10}``). The math renderer refuses a typed digit anywhere else; a
    subscript with a decimal point or any other sign is read as numbers."""
    return parent in MATHML_SUBSCRIPT_PARENTS and position == 1 and bool(_INDEX.fullmatch(_WS.sub("", _text(el))))


def _flatten(scope: etree._Element, flat: _Flat, html: bool) -> None:
    """Add the text of ``scope`` as a reader meets it to ``flat``: a verified element (a value, an excerpt's code
    and caption) is a hole, a block is set apart, scripts and styles are left out, and so is a MathML index."""
    chunks, owners = flat.chunks, flat.owners
    chunk, own = chunks.append, owners.append
    names = _LOCALS.get

    def walk(el: etree._Element, name: str, html: bool, sourced: bool) -> None:
        # ``sourced``: an ancestor of ``el`` carries data-source
        if name in SKIPPED:
            return
        attributes = el.keys()  # one call, where three get() calls cost twice as much
        if "data-trace" in attributes or "data-format" in attributes:
            chunk(_HOLE)
            own(el)
            return
        source = "data-source" in attributes
        if source and next(el.iter("pre", "{*}pre"), None) is None:
            chunk(_HOLE)  # an excerpt without <pre>: the whole container is the compared code
            own(el)
            return
        if sourced and (name == "pre" or name == "figcaption"):
            if name == "pre" or el.getparent().get("data-source") is not None:
                chunk(_HOLE)  # the code and the caption of an excerpt, both compared with its source
                own(el)
                return
        block = name not in INLINE
        edge = html and (name == "sub" or name == "sup")
        if block:
            chunk(_SEP)
            own(el)
        if edge:
            chunk(_EDGE)
            own(el)
        text = el.text
        if text:
            chunk(text)
            own(el)
        inner_html = html and name != "svg" and name != "math"
        inner_sourced = sourced or source
        indexed = name in MATHML_SUBSCRIPT_PARENTS
        for position, child in enumerate(el):
            tag = child.tag
            if isinstance(tag, str) and not (indexed and _is_index(child, name, position)):
                child_name = names(tag)
                walk(child, local(tag) if child_name is None else child_name, inner_html, inner_sourced)  # noqa: F821 - bound while it runs; `del walk` below only unbinds it afterwards
            tail = child.tail
            if tail:
                chunk(tail)
                own(el)
        if edge:
            chunk(_EDGE)
            own(el)
        if block:
            chunk(_SEP)
            own(el)

    flat._starts = None
    sourced = any(a.get("data-source") is not None for a in scope.iterancestors())
    walk(scope, local(scope.tag), html, sourced)
    del walk  # a recursive closure refers to itself: unbound, the tree it read is freed now, not by the next GC pass


def _scopes(root: etree._Element) -> list[etree._Element]:
    """The parts of a document a reader reads: an SVG drawing whole; a page's ``<title>`` and ``<body>``."""
    if local(root.tag) == "svg":
        return [root]
    if root.getroottree().docinfo.xml_version is None:  # the HTML parser names elements in lower case
        heads = {t for head in root.getroottree().iter("{*}head") for t in head.iter("title")}
        picked = [t for t in root.iter("title") if t in heads]
    else:
        picked = [t for t in root.iter("title") if any(local(a.tag) == "head" for a in t.iterancestors())]
    # what <noscript> in the head holds is shown with JavaScript off
    picked += [n for head in root.iter("head", "{*}head") for n in head.iter("noscript", "{*}noscript")]
    body = root.find("body")
    picked.append(body if body is not None else root)
    return picked


def _embedded(el: etree._Element) -> Iterator[tuple[str, str]]:
    """Text of documents an element embeds in an attribute: ``srcdoc``, and ``data:`` URIs of drawings and pages."""
    for attr, value in el.attrib.items():
        plain = _plain_attribute(attr)
        if plain == "srcdoc":
            try:
                root = parse_html(f"<html><body>{value}</body></html>")
                yield plain, " ".join(t for t in root.itertext() if t)
            except (ValueError, etree.XMLSyntaxError):
                yield plain, value
        elif plain in ("src", "href", "data", "poster") and value.lstrip()[:5].lower() == "data:":
            text = data_uri_text(value)
            if text:
                yield plain, text


@lru_cache(maxsize=1024)
def _plain_attribute(attr: str) -> str:
    """An attribute's name without namespace or prefix: ``xlink:title`` is a title."""
    return attr.rsplit("}", 1)[-1].rsplit(":", 1)[-1].lower()


_EMBEDDING = frozenset({"srcdoc", "src", "href", "data", "poster"})  # attributes :func:`_embedded` may read


def _attribute_runs(root: etree._Element, extra: frozenset[str]) -> Iterator[tuple[etree._Element, str, str]]:
    """(element, label, text) for every shown attribute, the description meta tag and each CSS ``content`` string.

    In document order, leaving out scripts and templates (and reading a ``<style>`` for what it writes).
    """
    shown = SHOWN_ATTRIBUTES | extra
    names = _LOCALS.get
    nodes = root.iter()  # every node, comments too, as iterdescendants() counts them
    for el in nodes:
        tag = el.tag
        name = names(tag)
        if name is None:
            name = local(tag)
        if name in SKIPPED or not name:
            if name == "style":
                for text in css_content("".join(el.itertext()))[0]:
                    yield el, "style content", text
            if name == "script" and el.get("id") == "__config":
                for text in _json_strings("".join(el.itertext())):
                    yield el, "script#__config string", text
            if len(el):  # nothing inside is read: pass over it
                inside = sum(1 for _ in el.iterdescendants())
                next(itertools.islice(nodes, inside, inside), None)
            continue
        if name == "meta" and el.get("content"):
            for attr in ("name", "property", "itemprop"):
                if _SHOWN_META.match(el.get(attr) or ""):
                    yield el, f"meta[{attr}={el.get(attr)}]", el.get("content")
                    break
        attributes = el.keys()
        if attributes:
            own = SHOWN_ATTRIBUTES_OF.get(name)
            embeds = False
            for attr in attributes:
                plain = _plain_attribute(attr)
                if plain in shown or (own is not None and plain in own):
                    yield el, f"{name}[{plain}]", el.get(attr)
                if plain in _EMBEDDING and (plain == "srcdoc" or el.get(attr).lstrip()[:5].lower() == "data:"):
                    embeds = True
            if embeds:
                for attr, value in _embedded(el):
                    yield el, f"{name}[{attr}]", value


def _json_strings(text: str) -> Iterator[str]:
    """Every string of a JSON document (the theme's configuration: the words its scripts show), or the text."""
    try:
        stack = [json.loads(text)]
    except ValueError:
        yield text
        return
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item


def shown_by_styles(root: etree._Element) -> frozenset[str]:
    """Attributes the document's own ``<style>`` elements show with ``content: attr(…)``."""
    out: set[str] = set()
    for el in root.iter("style", "{*}style"):
        out |= css_content("".join(el.itertext()))[1]
    return frozenset(out)


def unproven_numbers(html: str, page: str, names: frozenset[str]) -> list[Problem]:
    """The numbers a built page (its HTML, at site path ``page``) shows without provenance; ValueError when the
    HTML cannot be read. What the build's number scan and ``site-builder render`` ask of every page."""
    report = PageReport()
    check_numbers(_Doc.of(parse_html(html), page), names, report)
    return report.problems


def check_numbers(
    doc: _Doc,
    names: frozenset[str],
    report: PageReport,
    allow: Iterable[Allowed] = ALLOWED,
    shown_attributes: frozenset[str] = frozenset(),
) -> None:
    """Every number a reader sees or hears on the document carries its provenance (or an allow-list entry covers it)."""
    allow = tuple(allow)
    html = local(doc.root.tag) != "svg"

    def flag(found: Found, owner: etree._Element, element: str, context: str) -> None:
        if found.is_name:
            expected = "a name the page's trace carries"
        else:
            expected = "a number with provenance (data-trace) or an allowed one"
        number = f"'{shown(found.text, 60)}'"
        report.problems.append(doc.problem(owner, doc.describe(owner, element), expected, f"{number} in {context}"))

    for scope in _scopes(doc.root):
        flat = _Flat()
        _flatten(scope, flat, html)
        text = flat.text()
        for found in scan(text, allow, doc.page):
            if found.is_name and found.text in names:
                continue
            owner = flat.owner(found.start)
            flag(found, owner, local(owner.tag), _context(text, found.start, found.end))
    for style in doc.root.iter("style", "{*}style"):
        for what in css_refused("".join(style.itertext())):
            report.problems.append(
                doc.problem(style, doc.describe(style), "a style that writes only what the check reads", what)
            )
    extra = shown_attributes | shown_by_styles(doc.root)
    for el, label, value in _attribute_runs(doc.root, extra):
        for found in scan(value, allow, doc.page):
            if found.is_name and found.text in names:
                continue
            flag(found, el, label, _context(value, found.start, found.end))


def visible_text(root: etree._Element) -> str:
    """Every text of the page a reader meets (body, then title; values and code included), without spaces."""
    parts: list[str] = []
    add = parts.append
    # The HTML parser names elements in lower case: in its trees, scripts, styles and templates are found by
    # name, and a subtree with none of them is read whole by libxml2 (its text output, like itertext, leaves out
    # comments and processing instructions, not the text after them, as walk() does).
    html = root.getroottree().docinfo.xml_version is None
    holding: set[etree._Element] = set()  # elements with a script, style or template inside

    def walk(el: etree._Element) -> None:
        if el.text:
            add(el.text)
        for child in el:
            tag = child.tag
            name = local(tag)
            if not name or name in SKIPPED:
                pass
            elif html and child not in holding:
                add(etree.tostring(child, method="text", encoding="unicode", with_tail=False))
            else:
                walk(child)  # noqa: F821 - bound while it runs; `del walk` below only unbinds it afterwards
            if child.tail:
                add(child.tail)

    for scope in reversed(_scopes(root)):
        name = local(scope.tag)
        if not name or name in SKIPPED:
            continue
        if html:
            holding.clear()
            for skipped in scope.iter(*(f"{{*}}{name}" for name in SKIPPED)):
                for a in skipped.iterancestors():
                    if a in holding:
                        break
                    holding.add(a)
        walk(scope)
    del walk  # a recursive closure refers to itself: unbound, the tree it read is freed now, not by the next GC pass
    return "".join("".join(parts).split())  # str.split() splits at the whitespace _WS matches


def _context(text: str, start: int, end: int, width: int = 30) -> str:
    left = text[max(0, start - width) : start].split(_SEP)[-1]
    right = text[end : end + width].split(_SEP)[0]
    snippet = _WS.sub(" ", (left + text[start:end] + right).replace(_HOLE, "▯").replace(_EDGE, "")).strip()
    return quote(snippet, 2 * width + min(end - start, 60) + 10)


# -- the page heading -------------------------------------------------------------------


_XML_SPACE = re.compile(r"[ \t\r\n]+")  # what XPath's normalize-space() collapses
_FRONT_MATTER = re.compile(r"title\s*:")


def _article(root: etree._Element) -> etree._Element:
    """The first ``<article>`` inside an element of class ``md-content`` (the page's content), else the body."""
    for article in root.getroottree().iter("article"):
        for a in article.iterancestors():
            if " md-content " in f" {_XML_SPACE.sub(' ', a.get('class') or '')} ":
                return article
    body = root.find("body")
    return body if body is not None else root


def _reads_title(el: etree._Element) -> bool:
    """Whether the text of ``el`` starts with ``title:``, reading no further than its first words when it does not."""
    head = ""
    for piece in el.itertext():
        head += piece
        if len(head.lstrip()) >= 5:
            break
    if not head.lstrip().startswith("title"):
        return False
    return bool(_FRONT_MATTER.match(_text(el)))


def check_heading(root: etree._Element, page: str, heading: str) -> list[Problem]:
    """A generated page has one ``<h1>`` reading exactly its declared heading, and no front matter shown as text."""
    article = _article(root)
    problems: list[Problem] = []
    h1s: list[etree._Element] = []
    front: tuple[str, etree._Element] | None = None  # the first heading or paragraph reading "title:"
    names = _LOCALS.get
    for el in article.iter():
        tag = el.tag
        name = names(tag)
        if name is None:
            name = local(tag)
        if name == "h1":
            h1s.append(el)
        if front is None and (name in HEADINGS or name == "p") and _reads_title(el):
            front = name, el
    if len(h1s) != 1:
        problems.append(Problem(page, 0, "h1", "one <h1> with the page's title", f"{len(h1s)} <h1> elements"))
    elif _text(h1s[0]) != _WS.sub(" ", heading).strip():
        problems.append(
            Problem(page, 0, "h1", f"the title declared in page.toml, {quote(heading)}", quote(_text(h1s[0])))
        )
    if front is not None:
        problems.append(
            Problem(page, 0, front[0], "front matter read by the site, never shown", quote(_text(front[1]), 80))
        )
    return problems


# -- what a page embeds ------------------------------------------------------------------

# Elements that show another document inside the page: the check reads only one written into the page
# (``srcdoc``, a ``data:`` URI of text or a drawing); one fetched from elsewhere it would never see.
FRAMES = frozenset({"iframe", "frame", "object", "embed", "portal", "fencedframe"})
# Pictures whose pixels the check cannot read for numbers; a drawing (SVG) it reads like a page.
RASTER = re.compile(r"\.(?:png|apng|jpe?g|jfif|pjpeg|pjp|gif|webp|avif|bmp|ico|cur|tiff?|heic|heif|jxl)$", re.I)
_PICTURE_SOURCES = ("src", "srcset", "href", "data", "poster")


def _plain_attribute_values(el: etree._Element, names: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(plain name, value) of the element's attributes among ``names``, whatever their namespace."""
    for attr, value in el.attrib.items():
        plain = _plain_attribute(attr)
        if plain in names and value.strip():
            yield plain, value.strip()


def _raster(value: str, srcset: bool) -> bool:
    """Whether a picture's address names a raster picture: by its ``data:`` type, or by its file's suffix."""
    candidates = [c.strip().split()[0] for c in value.split(",") if c.strip()] if srcset else [value]
    for candidate in candidates:
        if candidate[:5].lower() == "data:":
            found = _DATA_URI.match(candidate)
            kind = found.group("type").strip().lower() if found else ""
            if kind.startswith("image/") and kind != "image/svg+xml":
                return True
            continue
        path = urllib.parse.urlsplit(candidate).path
        if RASTER.search(path):
            return True
    return False


def check_embedded(root: etree._Element, page: str) -> list[Problem]:
    """Frames of other documents and raster pictures: what a reader sees there, the check cannot read."""
    problems: list[Problem] = []
    for i, el in enumerate(root.iter()):
        if not isinstance(el.tag, str):
            continue
        name = local(el.tag)
        if name in FRAMES:
            sources = dict(_plain_attribute_values(el, ("src", "data", "srcdoc")))
            readable = "srcdoc" in sources or any(
                v[:5].lower() == "data:" and data_uri_text(v) is not None for v in sources.values()
            )
            if sources and not readable:
                where = quote(next(iter(sources.values())), 80)
                problems.append(
                    Problem(page, i, name, "no frame of another document (the check reads only this page)", where)
                )
        elif name in ("img", "source", "input", "image", "video", "picture", "use", "feimage"):
            for attr, value in _plain_attribute_values(el, _PICTURE_SOURCES):
                if _raster(value, attr == "srcset"):
                    problems.append(
                        Problem(
                            page,
                            i,
                            f"{name}[{attr}]",
                            "a drawing the check can read (SVG) or text",
                            f"a raster picture {quote(value, 80)}",
                        )
                    )
    return problems


# -- a whole document -------------------------------------------------------------------


def check_document(
    root: etree._Element, page: str, facts: Facts, sources: Sources, shown_attributes: frozenset[str] = frozenset()
) -> PageReport:
    """Every check on one parsed HTML page or SVG drawing (the tree is only read).

    ``shown_attributes`` names attributes the site's style sheets show (``content: attr(NAME)``).
    """
    doc = _Doc.of(root, page)
    report = PageReport(links={a.get("href") for a in root.iter("a", "{*}a") if a.get("href")})
    check_values(doc, facts, report)
    check_excerpts(doc, sources, report)
    check_numbers(doc, facts.names, report, shown_attributes=shown_attributes)
    report.problems += check_embedded(root, page)
    return report


def check_svg(data: bytes, page: str, facts: Facts, sources: Sources) -> PageReport:
    return check_document(parse_svg(data), page, facts, sources)
