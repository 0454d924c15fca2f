"""Charts against the trace: each chart on a page is the one its page's figures draw from a fresh run.

A chart's numbers carry ``data-trace`` like every other value, but where a
point, a line or a bar sits is geometry, not text: a point moved up the axis
keeps every label intact. So the checker draws every chart of the page again
(``figures.charts`` on the fresh run's trace and facts, the same call the
build makes) and compares the drawing on the page with it, element by
element: the same elements in the same order, the same attributes (every
coordinate, every ``points`` list, every ``data-trace`` key), the same words.
The text of a ``data-trace`` element is left to the value check, so a
changed value is reported once.

A chart is found by its ``id`` (the ``chart_id`` it was drawn with); an
``svg.ev-chart`` with an id the figures do not draw, and a drawn chart
missing from its page, are problems too. Diagrams (``svg.dg``, Graphviz's
drawings) are compared in the same way with the page's diagrams drawn again
(:mod:`site_builder.check.diagrams`): :func:`check_diagrams`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from lxml import etree

from .document import local, parse_html
from .problems import Problem, quote

CHART_CLASS = "ev-chart"
_WS = re.compile(r"\s+")


def _classes(el: etree._Element) -> list[str]:
    return (el.get("class") or "").split()


def _drawn(svg: str) -> etree._Element | None:
    """A drawn chart parsed as a page holds it (the same HTML parser, so names and attributes compare)."""
    root = parse_html(f"<html><body>{svg}</body></html>")
    return next((el for el in root.iter("svg", "{*}svg")), None)


def _words(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def _attributes(el: etree._Element) -> dict[str, str]:
    return {local(k): v for k, v in el.attrib.items()}


def _path(el: etree._Element, top: etree._Element) -> str:
    """``svg#id polyline[2]``: the element's tag and its position among its siblings of that tag."""
    parts: list[str] = []
    node = el
    while node is not None and node is not top:
        parent = node.getparent()
        same = [c for c in parent if c.tag == node.tag] if parent is not None else [node]
        parts.append(f"{local(node.tag)}[{same.index(node) + 1}]" if len(same) > 1 else local(node.tag))
        node = parent
    return " ".join([f"svg#{top.get('id')}", *reversed(parts)])


def _attribute_difference(name: str, want: str, got: str) -> tuple[str, str]:
    """A long attribute (``points``, a path's ``d``) by its first differing item: ``points item 3 "108.00,40.00"``."""
    a, b = want.split(), got.split()
    if len(a) > 1 and len(a) == len(b):
        i = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        return f"{name} item {i + 1} of {len(a)} {quote(a[i], 80)} (drawn from the trace)", quote(b[i], 80)
    return f"{name}={quote(want, 80)} (drawn from the trace)", f"{name}={quote(got, 80)}"


def first_difference(
    want: etree._Element, got: etree._Element, top: etree._Element | None = None
) -> tuple[str, str, str] | None:
    """(where, expected, found) of the first way ``got`` is not the drawing ``want``; None when it is."""
    top = top if top is not None else got
    if local(want.tag) != local(got.tag):
        return _path(got, top), f"a <{local(want.tag)}> element", f"<{local(got.tag)}>"
    a, b = _attributes(want), _attributes(got)
    for name in sorted(a.keys() | b.keys()) if a != b else ():
        if a.get(name) != b.get(name):
            if name in a and name in b:
                return _path(got, top), *_attribute_difference(name, a[name], b[name])
            expected = f"{name}={quote(a[name], 80)}" if name in a else f"no {name} attribute"
            found = f"{name}={quote(b[name], 80)}" if name in b else f"no {name} attribute"
            return _path(got, top), f"{expected} (drawn from the trace)", found
    if want.get("data-trace") is None and want.text != got.text and _words(want.text) != _words(got.text):
        return _path(got, top), f"the words {quote(_words(want.text), 80)}", quote(_words(got.text), 80)
    kids_a = [c for c in want if isinstance(c.tag, str)]
    kids_b = [c for c in got if isinstance(c.tag, str)]
    for x, y in zip(kids_a, kids_b):
        inner = first_difference(x, y, top)
        if inner is not None:
            return inner
        if x.tail != y.tail and _words(x.tail) != _words(y.tail):
            return _path(y, top), f"the words {quote(_words(x.tail), 80)} after it", quote(_words(y.tail), 80)
    if len(kids_a) != len(kids_b):
        return (
            _path(got, top),
            f"{len(kids_a)} elements inside (drawn from the trace)",
            f"{len(kids_b)} elements inside",
        )
    return None


def check_charts(root: etree._Element, page: str, charts: Mapping[str, str]) -> list[Problem]:
    """Each chart on the page drawn exactly as its page's figures draw it from the fresh run."""
    return _check_drawn(root, page, charts, lambda classes: CHART_CLASS in classes, "chart", "the page's figures")


def check_diagrams(root: etree._Element, page: str, diagrams: Mapping[str, str]) -> list[Problem]:
    """Each diagram on the page drawn exactly as rendering the page draws it from the fresh run."""
    from .diagrams import is_diagram

    return _check_drawn(root, page, diagrams, is_diagram, "diagram", "the page's DOT templates")


def _check_drawn(
    root: etree._Element,
    page: str,
    charts: Mapping[str, str],
    kind_of: Callable[[list[str]], bool],
    kind: str,
    drawer: str,
) -> list[Problem]:
    drawn: dict[str, tuple[str, etree._Element]] = {}
    for name, svg in charts.items():
        el = _drawn(svg)
        if el is not None and el.get("id"):
            drawn[el.get("id")] = (name, el)
    problems: list[Problem] = []
    seen: set[str] = set()
    for order, svg in enumerate(root.iter("svg", "{*}svg")):
        chart_id = svg.get("id") or ""
        if chart_id in drawn:
            seen.add(chart_id)
            name, want = drawn[chart_id]
            difference = first_difference(want, svg)
            if difference is not None:
                where, expected, found = difference
                problems.append(Problem(page, 10**8 + order, where, expected, found))
        elif kind_of(_classes(svg)):
            problems.append(
                Problem(
                    page,
                    10**8 + order,
                    f"svg#{chart_id}" if chart_id else f"svg.{' '.join(_classes(svg))}",
                    f"a {kind} {drawer} draw ({', '.join(sorted(drawn)) or 'none'})",
                    f"a {kind} they do not draw",
                )
            )
    for chart_id, (name, _) in sorted(drawn.items()):
        if chart_id not in seen:
            problems.append(
                Problem(
                    page, 10**9 - 2, f"svg#{chart_id}", f"the {kind} {name!r} drawn from the trace", "not on the page"
                )
            )
    return problems
