"""Where each shown value stands, and the frozen list of them: a page's shown values, place by place.

A value's *place* is where a reader meets it, in words a reviewer can read:

- its **section**: the ``id`` of the heading above it (``predict``, ``stack-depth``), or ``-`` before the first;
- its **place** inside the section: ``table#stack-table row 3 column 2``, ``svg#routes-forward node output``
  (a Graphviz node by its name), ``svg#gradient g.ticks-y`` (a chart's mark by its group), or the block that
  holds it (``p``, ``li``, ``caption``, ``summary``), with ``in details`` when a collapsed block holds it and
  ``in math`` for a formula;
- its **key** (``data-trace``) and its **text**, what the reader sees.

:func:`shown_values` reads them from a built page in document order. Each generated page's list is frozen
in ``golden/shown.LANG.txt`` beside its golden trace (one list per language the page is published in,
:attr:`~site_builder.project.Page.golden_shown`), written by ``site-builder shown --write-golden`` (or by a
build that finds none) and compared with the built page on every build
(:class:`site_builder.scan.ShownLists`) and by every check (:func:`compare`): a value lost, moved or added
fails with its place. ``git diff pages/SLUG/golden/`` and ``site-builder diff REV`` (:func:`changes`) are what
a reviewer reads when numbers change.

:func:`misplaced` checks what a page can say about its own places without the golden list: in a table row,
every value of a repeated record (``STACK[2].plain``) belongs to the same record as the row's other values
of that kind, so two swapped cells, or a template's loop index off by one, fail where they stand.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from lxml import etree

from ..errors import SiteBuilderError
from .problems import Problem, quote

LANGUAGE = "en"  # the language every page is published in; a twin in another language has a list of its own
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BLOCKS = frozenset(
    "p li dt dd caption figcaption summary blockquote h1 h2 h3 h4 h5 h6 td th pre div section article".split()
)
HEADER = "section\tplace\tkey\ttext"
_WS = re.compile(r"\s+")
_TRACE = etree.XPath("//*[@data-trace]")
_RECORD = re.compile(r"^(?P<kind>[A-Z][A-Z0-9-]*)\[(?P<index>[^\]]*)\]\.")  # STACK[2].plain -> STACK, 2
ORDER = 10**9 - 3  # golden-list problems print after the page's own, before its coverage


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


@dataclass(frozen=True, order=True)
class ShownValue:
    """One value a reader sees: the section and place it stands in, its key and its text."""

    section: str
    place: str
    key: str
    text: str

    def line(self) -> str:
        return "\t".join((self.section, self.place, self.key, self.text))

    def where(self) -> str:
        text = f" {quote(self.text, 60)}" if self.text else ""
        return f"{self.key}{text} ({self.place}, section #{self.section})"


def value_text(el: etree._Element) -> str:
    """A value's text as a golden list holds it: its characters with runs of spaces as one (none in math)."""
    text = "".join(el.itertext())
    if any(_local(a.tag) == "math" for a in el.iterancestors()) or _local(el.tag) == "math":
        return _WS.sub("", text)
    return _WS.sub(" ", text).strip()


class _Places:
    """The lookups that name a place: document order, the headings with an id, each table's rows."""

    def __init__(self, root: etree._Element) -> None:
        self.order: dict[etree._Element, int] = {}
        self.headings: list[tuple[int, str]] = []
        for i, el in enumerate(root.iter()):
            self.order[el] = i
            if _local(el.tag) in HEADINGS and el.get("id"):
                self.headings.append((i, el.get("id")))
        self.rows: dict[etree._Element, list[etree._Element]] = {}

    def section(self, el: etree._Element) -> str:
        i = bisect.bisect_right(self.headings, (self.order.get(el, 0), "\uffff")) - 1
        return self.headings[i][1] if i >= 0 else "-"

    def place(self, el: etree._Element) -> str:
        chain = list(el.iterancestors())
        names = [_local(a.tag) for a in chain]
        if "svg" in names:
            return self._drawn(chain)
        cell = next((a for a in chain if _local(a.tag) in ("td", "th")), None)
        if cell is not None:
            where = self._cell(cell)
        else:
            block = next((a for a in chain if _local(a.tag) in BLOCKS), None)
            where = _local(block.tag) if block is not None else "body"
        if "math" in names or _local(el.tag) == "math":
            where += " in math"
        if "details" in names:
            where += " in details"
        return where

    def _cell(self, cell: etree._Element) -> str:
        row = cell.getparent()
        table = next((a for a in cell.iterancestors() if _local(a.tag) == "table"), None)
        if table is None:
            return _local(cell.tag)
        if table not in self.rows:
            self.rows[table] = [r for r in table.iter("tr", "{*}tr")]
        column = 1 + [c for c in row if _local(c.tag) in ("td", "th")].index(cell)
        label = f"table#{table.get('id')}" if table.get("id") else "table"
        return f"{label} row {self.rows[table].index(row) + 1} column {column}"

    @staticmethod
    def _drawn(chain: list[etree._Element]) -> str:
        svg = next(a for a in chain if _local(a.tag) == "svg")
        parts = [f"svg#{svg.get('id')}" if svg.get("id") else "svg"]
        for a in reversed(chain[: chain.index(svg)]):
            kind = [k for k in (a.get("class") or "").split() if k != "graph"]
            if _local(a.tag) in ("desc", "title"):
                parts.append(_local(a.tag))
            elif _local(a.tag) == "g" and kind and kind[0] in ("node", "edge", "cluster"):
                parts.append(f"{kind[0]} {quote(_item_name(a), 40)}")
            elif _local(a.tag) == "g" and kind:
                parts.append("g." + ".".join(kind))
        return " ".join(parts)


def _item_name(group: etree._Element) -> str:
    """A Graphviz node, edge or cluster by the words of its label (its texts that are no value), else its name."""
    words = [_WS.sub(" ", "".join(t.itertext())).strip() for t in group if _local(t.tag) == "text"]
    label = " ".join(
        w for t, w in zip((t for t in group if _local(t.tag) == "text"), words) if w and t.get("data-trace") is None
    )
    if label:
        return label
    title = next((c for c in group if _local(c.tag) == "title"), None)
    return _WS.sub(" ", "".join(title.itertext())).strip() if title is not None else group.get("id") or "?"


def shown_values(root: etree._Element) -> tuple[ShownValue, ...]:
    """Every ``data-trace`` element of a built page, in document order, with its section and place."""
    places = _Places(root)
    return tuple(
        ShownValue(places.section(el), places.place(el), el.get("data-trace"), value_text(el)) for el in _TRACE(root)
    )


# -- the golden list ---------------------------------------------------------------------------


def render(values: Iterable[ShownValue], page: str, language: str = LANGUAGE) -> str:
    """The golden list's text: a comment naming the page, the column names, one tab-separated line per value."""
    lines = [
        f"# the values {page} shows ({language}), in page order; "
        "refresh with `site-builder shown --write-golden` and review its diff",
        HEADER,
        *(v.line() for v in values),
    ]
    return "\n".join(lines) + "\n"


class ShownListError(SiteBuilderError):
    """A golden list of shown values that cannot be read: its file, line and cause."""


@lru_cache(maxsize=64)
def parse(text: str, name: str) -> tuple[ShownValue, ...]:
    """A golden list read back; :class:`ShownListError` names the line that is not four tab-separated fields.

    Kept for the texts last read: checking many copies of a page reads its list once."""
    out: list[ShownValue] = []
    header = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        if not header:
            if line != HEADER:
                raise ShownListError(f"{name}:{number}: expected the header {HEADER!r}, found {line[:80]!r}")
            header = True
            continue
        fields = line.split("\t")
        if len(fields) != 4 or not fields[2]:
            raise ShownListError(
                f"{name}:{number}: expected four tab-separated fields (section, place, key, text), found {len(fields)}"
            )
        out.append(ShownValue(*fields))
    if not header:
        raise ShownListError(f"{name}: expected the header {HEADER!r}, found an empty file")
    return tuple(out)


def read_golden(path: Path, name: str) -> tuple[ShownValue, ...] | None:
    """The golden list at ``path`` (None when there is none); :class:`ShownListError` when it cannot be read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ShownListError(f"{name}: cannot read the golden list of shown values: {exc.strerror}") from None
    return parse_golden(raw, name)


def parse_golden(raw: bytes, name: str) -> tuple[ShownValue, ...]:
    """The golden list whose file holds ``raw``; :class:`ShownListError` when it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ShownListError(f"{name}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return parse(text, name)


@dataclass(frozen=True)
class Change:
    """One difference between a golden list and a page: a value ``lost``, ``added`` or ``moved`` (or changed)."""

    kind: str
    golden: ShownValue | None
    page: ShownValue | None
    line: int  # the golden list's line it concerns (its header is line 2)


def compare(golden: Sequence[ShownValue], page: Sequence[ShownValue], texts: bool = True) -> list[Change]:
    """How ``page`` differs from ``golden``, value by value, in page order (empty when they are equal).

    Without ``texts`` only where each key stands is compared (the check, which verifies each text against the
    fresh run already, and so reports a changed value once).

    A value whose key stands at the same position of a changed run is ``moved`` (its place or section changed)
    or ``changed`` (its text); the others of the run are ``lost`` (in the golden list only) or ``added``.
    """
    if not texts:
        golden = [ShownValue(v.section, v.place, v.key, "") for v in golden]
        page = [ShownValue(v.section, v.place, v.key, "") for v in page]
    if list(golden) == list(page):
        return []
    changes: list[Change] = []
    lost: list[tuple[int, ShownValue]] = []
    added: list[tuple[int, ShownValue]] = []
    matcher = difflib.SequenceMatcher(None, list(golden), list(page), autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        old, new = list(golden[a0:a1]), list(page[b0:b1])
        paired = _pairs(old, new)
        for i, j in paired:
            o, n = old[i], new[j]
            kind = "changed" if (o.section, o.place) == (n.section, n.place) else "moved"
            changes.append(Change(kind, o, n, a0 + i + 3))
        lost += [(a0 + i + 3, v) for i, v in enumerate(old) if i not in {i for i, _ in paired}]
        added += [(a0 + 3, v) for j, v in enumerate(new) if j not in {j for _, j in paired}]
    # a value that left one run and came back in another (two swapped rows or cells) moved
    for line, o in list(lost):
        match = next((a for a in added if a[1].key == o.key and a[1].text == o.text), None)
        match = match or next((a for a in added if a[1].key == o.key), None)
        if match is not None:
            added.remove(match)
            lost.remove((line, o))
            changes.append(Change("moved" if match[1].text == o.text else "changed", o, match[1], line))
    changes += [Change("lost", v, None, line) for line, v in lost]
    changes += [Change("added", None, v, line) for line, v in added]
    return sorted(changes, key=lambda c: c.line)


def _pairs(old: list[ShownValue], new: list[ShownValue]) -> list[tuple[int, int]]:
    """Values of two changed runs that are one value: the same key, taken in order."""
    pairs: list[tuple[int, int]] = []
    free = list(range(len(new)))
    for i, o in enumerate(old):
        j = next((j for j in free if new[j].key == o.key), None)
        if j is not None:
            pairs.append((i, j))
            free.remove(j)
    return pairs


def stale_message(changes: Sequence[Change], page: str, name: str) -> str:
    """One line for the build: the golden list's file and line, the first difference, how many others, the fix."""
    c = changes[0]
    if c.golden is not None and c.page is not None:
        what = f"{c.golden.where()} is now {c.page.where()}"
    elif c.golden is not None:
        what = f"{c.golden.where()} is no longer shown"
    else:
        assert c.page is not None
        what = f"{page} shows {c.page.where()}, which the list does not hold"
    more = f" (and {len(changes) - 1} more differences)" if len(changes) > 1 else ""
    return (
        f"{name}:{c.line}: golden list of shown values is stale: {what}{more}; "
        f"if the change is meant, refresh it with `{REFRESH}` and review its diff"
    )


def problems(changes: Iterable[Change], page: str, golden_name: str) -> list[Problem]:
    """One problem per change: the value's key and place in the golden list, and on the page."""
    out: list[Problem] = []
    for n, c in enumerate(changes):
        at = f"{golden_name}:{c.line}"
        if c.kind == "lost" and c.golden is not None:
            out.append(
                Problem(page, ORDER + n, f"shown value {c.golden.key}", f"{c.golden.where()} ({at})", "not shown")
            )
        elif c.kind == "added" and c.page is not None:
            out.append(
                Problem(page, ORDER + n, f"shown value {c.page.key}", f"no such value (the list {at})", c.page.where())
            )
        elif c.golden is not None and c.page is not None:
            out.append(
                Problem(page, ORDER + n, f"shown value {c.golden.key}", f"{c.golden.where()} ({at})", c.page.where())
            )
    return out


# -- places a page proves by itself ------------------------------------------------------------


def misplaced(root: etree._Element, page: str) -> list[Problem]:
    """Table cells that show a value of another record than their row (or, in a table of records by column,
    their column) shows.

    Each value of a repeated record (``STACK[2].plain``, ``SHAPE[highway,4].backward``) stands in a row and a
    column. Each part of the record's index (the depth, the pattern) must follow the table's layout: one value
    per row, or one per column. ``STACK[1].depth`` in a row's header and ``STACK[2].plain`` in one of its cells
    is a value in the wrong row, whoever put it there (a tampered page, a template's loop index off by one).
    Values of records that do not repeat (``DERIVED.…``) may stand anywhere.
    """
    out: list[Problem] = []
    places: _Places | None = None
    for table in root.iter("table", "{*}table"):
        cells: dict[str, list[Cell]] = {}
        rows = [r for r in table.iter("tr", "{*}tr") if _owner_table(r) is table]
        for r, row in enumerate(rows):
            for c, cell in enumerate(x for x in row if _local(x.tag) in ("td", "th")):
                for el in cell.iter():
                    key = el.get("data-trace") if isinstance(el.tag, str) else None
                    m = _RECORD.match(key or "")
                    if m is not None and key is not None:
                        cells.setdefault(m["kind"], []).append(Cell(r, c, tuple(m["index"].split(",")), el, key))
        for found in cells.values():
            bad = _off_layout(found)
            if bad is not None:
                places = places or _Places(root)
                (el, key), (_, other) = bad
                out.append(
                    Problem(
                        page,
                        places.order.get(el, 0),
                        f"{places.place(el)} [data-trace={key}] (section #{places.section(el)})",
                        f"a value of the record its row shows (as {other} does)",
                        f"{key} {quote(value_text(el), 60)}",
                    )
                )
    return out


def _owner_table(el: etree._Element) -> etree._Element | None:
    return next((a for a in el.iterancestors() if _local(a.tag) == "table"), None)


class Cell(NamedTuple):
    """A value of a repeated record in a table: its row and column, its record's index parts, its element and key."""

    row: int
    column: int
    parts: tuple[str, ...]
    el: etree._Element
    key: str


def _off_layout(found: list[Cell]) -> tuple[tuple[etree._Element, str], tuple[etree._Element, str]] | None:
    """The first value whose index part disagrees with the row (and the column) it stands in, and the value it
    disagrees with; None when every part of the index is set by the row or by the column."""
    width = min(len(f.parts) for f in found)
    for part in range(width):
        for axis in (0, 1):
            first: dict[int, Cell] = {}
            for f in found:
                seen = first.setdefault(f.row if axis == 0 else f.column, f)
                if seen.parts[part] != f.parts[part]:
                    break
            else:
                break  # this part is set by the rows (axis 0) or by the columns (axis 1)
        else:
            by_row: dict[int, Cell] = {}
            for f in found:
                seen = by_row.setdefault(f.row, f)
                if seen.parts[part] != f.parts[part]:
                    return (f.el, f.key), (seen.el, seen.key)
    return None


def changes_text(changes: Iterable[Change]) -> list[str]:
    """Markdown list items for :func:`compare`'s changes, as ``site-builder diff`` prints them."""
    out: list[str] = []
    for c in changes:
        if c.kind == "lost" and c.golden is not None:
            out.append(f"- disappeared: `{c.golden.key}` {_md(c.golden.text)} ({_md_place(c.golden)})")
        elif c.kind == "added" and c.page is not None:
            out.append(f"- appeared: `{c.page.key}` {_md(c.page.text)} ({_md_place(c.page)})")
        elif c.golden is not None and c.page is not None:
            if c.kind == "changed":
                out.append(
                    f"- changed: `{c.golden.key}` {_md(c.golden.text)} → {_md(c.page.text)} ({_md_place(c.page)})"
                )
            else:
                out.append(
                    f"- moved: `{c.golden.key}` {_md(c.golden.text)} from {_md_place(c.golden)} "
                    f"to {_md_place(c.page)}" + ("" if c.golden.text == c.page.text else f", now {_md(c.page.text)}")
                )
    return out


def _md(text: str) -> str:
    return "`" + text.replace("`", "'") + "`" if text else "(no text)"


def _md_place(v: ShownValue) -> str:
    return f"{v.place}, section `#{v.section}`"


# -- the golden list against a built page --------------------------------------------------------

REFRESH = "site-builder shown --write-golden"


def against_golden(
    values: Sequence[ShownValue], page: str, path: Path, name: str
) -> tuple[tuple[ShownValue, ...] | None, list[Problem]]:
    """A built page's values against the golden list at ``path`` (shown as ``name``): the golden list (None when
    there is none) and one problem per difference, or the one problem that the list cannot be read."""
    try:
        golden = read_golden(path, name)
    except ShownListError as exc:
        return None, [
            Problem(name, 0, "golden list of shown values", f"a readable list ({REFRESH})", str(exc), group=0)
        ]
    if golden is None:
        return None, [Problem(page, ORDER, "golden list of shown values", f"{name} (write it: {REFRESH})", "none")]
    return golden, problems(compare(golden, values, texts=False), page, name)


def write_golden(values: Sequence[ShownValue], page: str, path: Path, language: str = LANGUAGE) -> bool:
    """Write the golden list (whole, through a temporary file and a rename); False when it already held it."""
    text = render(values, page, language)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    return True
