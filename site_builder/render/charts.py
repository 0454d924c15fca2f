"""Charts for generated pages: deterministic inline SVG whose every shown number is a fact.

A chart reads its data from a page's facts by key and draws it with fixed
geometry: no clock, no randomness, no embedded fonts, so the same facts give
the same bytes. Each number it shows (a tick label, a value beside a point or
a bar) is a ``<text>`` carrying ``data-trace`` and ``data-format``, written
with :func:`site_builder.facts.format_fact`, so the checker verifies a chart
as it verifies prose. Titles, legends and axis labels hold words only.

Colours come from the site palette through CSS variables, so a chart follows
the light and the dark scheme; line style and marker shape carry each
series' identity without colour, and forced-colours mode draws everything in
the system text colour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any, Mapping, Sequence

from ..errors import SiteBuilderError
from ..facts import FactBook

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 132, 16, 52


class ChartError(SiteBuilderError, ValueError):
    """A chart was asked to draw something it cannot show faithfully."""


@dataclass(frozen=True)
class Style:
    colour: str  # a CSS colour, normally a palette variable
    dash: str  # stroke-dasharray ("" for solid)
    marker: str  # circle, square, triangle or diamond


STYLES: dict[str, Style] = {
    # The chapter's vocabulary: the identity path is solid, the learned branch dashed.
    "identity": Style("var(--dg-identity)", "", "square"),
    "learned": Style("var(--dg-learned)", "6 3", "circle"),
    "merge": Style("var(--dg-merge)", "2 3", "triangle"),
    "plain": Style("var(--md-default-fg-color--light)", "1 3", "diamond"),
}

_CSS = (
    ".ev-chart text{fill:var(--md-default-fg-color);font-size:12px}"
    ".ev-chart .ev-small{font-size:11px}"
    ".ev-chart .ev-grid{stroke:var(--md-default-fg-color--lightest);stroke-width:1}"
    ".ev-chart .ev-axis{stroke:var(--md-default-fg-color--light);stroke-width:1}"
    ".ev-chart .ev-line{fill:none;stroke-width:1.8}"
    ".ev-chart .ev-bar{stroke-width:1.4}"
    "@media (forced-colors: active){.ev-chart text{fill:CanvasText}"
    ".ev-chart .ev-line,.ev-chart .ev-axis,.ev-chart .ev-grid,.ev-chart .ev-bar{stroke:CanvasText}"
    ".ev-chart .ev-mark{fill:CanvasText;stroke:CanvasText}}"
)


@dataclass(frozen=True)
class Axis:
    """``kind``: ``linear`` or ``log`` (ticks are data values), ``exponent`` (ticks are powers of ten)."""

    label: str
    ticks_key: str  # a vector-valued fact; the first and last tick bound the axis
    tick_format: str
    kind: str = "linear"


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[tuple[str, str], ...]  # (x key, y key) per point
    style: str
    floor: bool = False  # every value is exactly zero: drawn along the bottom of a log axis


@dataclass(frozen=True)
class ValueLabel:
    """A fact written beside a point: ``anchor`` start/end, offset in pixels."""

    key: str
    fmt: str
    x_key: str
    y_key: str
    dx: float = 6.0
    dy: float = -6.0
    anchor: str = "start"


@dataclass(frozen=True)
class Reference:
    """A horizontal line at a fact's value, named by ``label`` and the value itself."""

    key: str
    fmt: str
    label: str


@dataclass(frozen=True)
class BarGroup:
    label: str
    keys: tuple[str, ...]  # one value per category
    fmt: str  # how the value above each bar is written
    style: str
    filled: bool = True


def _num(v: float) -> str:
    return format(v, ".2f")


def _text(x: float, y: float, body: str, *, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}"{c}{extra}>{body}</text>'


class _Book:
    def __init__(self, facts: Mapping[str, Any]) -> None:
        self.book = FactBook(facts)

    def value(self, key: str) -> Any:
        return self.book.value(key)

    def number(self, key: str) -> float:
        v = float(self.book.value(key))
        if not math.isfinite(v):
            raise ChartError(f"{key} is not finite")
        return v

    def shown(self, x: float, y: float, key: str, fmt: str, **kw: Any) -> str:
        """A ``<text>`` showing one fact, with its provenance."""
        attrs = f' data-trace="{escape(key)}" data-format="{escape(fmt)}"'
        return _text(x, y, escape(self.book.text(key, fmt)), extra=attrs + kw.pop("extra", ""), **kw)


class _Scale:
    def __init__(self, kind: str, lo: float, hi: float, a: float, b: float) -> None:
        if kind not in ("linear", "log", "exponent"):
            raise ChartError(f"unknown axis kind {kind!r}")
        self.kind = kind
        self.lo, self.hi = self._t(lo, tick=True), self._t(hi, tick=True)
        if not self.hi > self.lo:
            raise ChartError("an axis needs increasing ticks")
        self.a, self.b = a, b

    def _t(self, v: float, tick: bool = False) -> float:
        if self.kind == "linear":
            return v
        if self.kind == "exponent" and tick:
            return v  # ticks are already exponents
        if v <= 0:
            raise ChartError(f"{v!r} cannot sit on a logarithmic axis")
        return math.log10(v)

    def data(self, v: float) -> float:
        t = self._t(v)
        if not (self.lo - 1e-9 <= t <= self.hi + 1e-9):
            raise ChartError(f"value {v!r} lies outside the axis")
        return self.a + (t - self.lo) / (self.hi - self.lo) * (self.b - self.a)

    def tick(self, v: float) -> float:
        return self.a + (self._t(v, tick=True) - self.lo) / (self.hi - self.lo) * (self.b - self.a)


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    style = f' class="ev-mark" style="fill:{colour};stroke:{colour}"'
    if kind == "circle":
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="3.6"{style}/>'
    if kind == "square":
        return f'<rect x="{_num(x - 3.4)}" y="{_num(y - 3.4)}" width="6.8" height="6.8"{style}/>'
    if kind == "triangle":
        pts = f"{_num(x)},{_num(y - 4.4)} {_num(x - 4.2)},{_num(y + 3.2)} {_num(x + 4.2)},{_num(y + 3.2)}"
        return f'<polygon points="{pts}"{style}/>'
    if kind == "diamond":
        pts = f"{_num(x)},{_num(y - 4.4)} {_num(x - 4.4)},{_num(y)} {_num(x)},{_num(y + 4.4)} {_num(x + 4.4)},{_num(y)}"
        return f'<polygon points="{pts}"{style}/>'
    raise ChartError(f"unknown marker {kind!r}")


def _frame(chart_id: str, title: str, description: str, body: list[str], width: int, height: int) -> str:
    for words in (title, description):
        if any(ch.isdigit() for ch in words):
            raise ChartError(f"chart {chart_id}: titles and descriptions hold words only, found {words!r}")
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ev-chart" id="{escape(chart_id)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="{escape(chart_id)}-title {escape(chart_id)}-desc">'
        f'<title id="{escape(chart_id)}-title">{escape(title)}</title>'
        f'<desc id="{escape(chart_id)}-desc">{escape(description)}</desc>'
        f"<style>{_CSS}</style>"
    )
    return head + "".join(body) + "</svg>"


def _dash(style: Style) -> str:
    """The ``style`` attribute's dash declaration for a series drawn in ``style`` ("" when solid)."""
    return f";stroke-dasharray:{style.dash}" if style.dash else ""


def _y_grid(book: _Book, y: Axis, sy: _Scale, x0: float, x1: float) -> list[str]:
    """A grid line across the plot at each y tick, with the tick's value at its left."""
    out: list[str] = []
    for i, tick in enumerate(book.value(y.ticks_key)):
        py = sy.tick(float(tick))
        out.append(f'<line class="ev-grid" x1="{_num(x0)}" y1="{_num(py)}" x2="{_num(x1)}" y2="{_num(py)}"/>')
        out.append(book.shown(x0 - 8, py + 4, f"{y.ticks_key}[{i}]", y.tick_format, anchor="end"))
    return out


def _axis_lines(x_label: str, y_label: str, x0: float, x1: float, y0: float, y1: float) -> list[str]:
    """Both axis lines and their labels, the y label turned to run up the left edge."""
    return [
        f'<line class="ev-axis" x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x1)}" y2="{_num(y0)}"/>',
        f'<line class="ev-axis" x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x0)}" y2="{_num(y1)}"/>',
        _text((x0 + x1) / 2, y0 + 40, escape(x_label), anchor="middle"),
        f'<text x="0" y="0" text-anchor="middle" transform="translate({_num(16)},{_num((y0 + y1) / 2)}) rotate(-90)">'
        f"{escape(y_label)}</text>",
    ]


def _axes(book: _Book, x: Axis, y: Axis, sx: _Scale, sy: _Scale, x0: float, x1: float, y0: float, y1: float) -> list[str]:
    out = _y_grid(book, y, sy, x0, x1)
    for i, tick in enumerate(book.value(x.ticks_key)):
        px = sx.tick(float(tick))
        out.append(f'<line class="ev-axis" x1="{_num(px)}" y1="{_num(y0)}" x2="{_num(px)}" y2="{_num(y0 + 5)}"/>')
        out.append(book.shown(px, y0 + 18, f"{x.ticks_key}[{i}]", x.tick_format, anchor="middle"))
    return out + _axis_lines(x.label, y.label, x0, x1, y0, y1)


def _legend(entries: Sequence[tuple[str, Style]], x: float, y: float) -> list[str]:
    out: list[str] = []
    for i, (label, style) in enumerate(entries):
        cy = y + 18 * i
        out.append(
            f'<line class="ev-line" x1="{_num(x)}" y1="{_num(cy)}" x2="{_num(x + 22)}" y2="{_num(cy)}" '
            f'style="stroke:{style.colour}{_dash(style)}"/>'
        )
        out.append(_marker(style.marker, x + 11, cy, style.colour))
        out.append(_text(x + 28, cy + 4, escape(label), cls="ev-small"))
    return out


def line_chart(
    facts: Mapping[str, Any],
    *,
    chart_id: str,
    title: str,
    description: str,
    x: Axis,
    y: Axis,
    series: Sequence[Series],
    labels: Sequence[ValueLabel] = (),
    references: Sequence[Reference] = (),
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """Series of points joined by lines, with a legend at the right and every number a fact."""
    book = _Book(facts)
    x0, x1, y0, y1 = LEFT, width - RIGHT, height - BOTTOM, TOP
    xt, yt = book.value(x.ticks_key), book.value(y.ticks_key)
    sx = _Scale(x.kind, float(xt[0]), float(xt[-1]), x0, x1)
    sy = _Scale(y.kind, float(yt[0]), float(yt[-1]), y0, y1)
    body = _axes(book, x, y, sx, sy, x0, x1, y0, y1)
    for ref in references:
        py = sy.data(book.number(ref.key))
        body.append(
            f'<line class="ev-line" x1="{_num(x0)}" y1="{_num(py)}" x2="{_num(x1)}" y2="{_num(py)}" '
            f'style="stroke:var(--md-default-fg-color--light);stroke-dasharray:1 4"/>'
        )
        body.append(_text(x1 + 6, py - 2, escape(ref.label), cls="ev-small"))
        body.append(book.shown(x1 + 6, py + 12, ref.key, ref.fmt, cls="ev-small"))
    for s in series:
        style = STYLES[s.style]
        pts = []
        for xk, yk in s.points:
            px = sx.data(book.number(xk))
            if s.floor:
                if book.number(yk) != 0.0:
                    raise ChartError(f"series {s.label!r} is drawn on the floor but {yk} is not zero")
                py = y0 - 3.0
            else:
                py = sy.data(book.number(yk))
            pts.append((px, py))
        path = " ".join(f"{_num(px)},{_num(py)}" for px, py in pts)
        body.append(f'<polyline class="ev-line" points="{path}" style="stroke:{style.colour}{_dash(style)}"/>')
        body += [_marker(style.marker, px, py, style.colour) for px, py in pts]
    for lab in labels:
        px, py = sx.data(book.number(lab.x_key)), sy.data(book.number(lab.y_key))
        body.append(book.shown(px + lab.dx, py + lab.dy, lab.key, lab.fmt, anchor=lab.anchor, cls="ev-small"))
    body += _legend([(s.label, STYLES[s.style]) for s in series], x1 + 10, y0 - 18 * (len(series) - 1) - 8)
    return _frame(chart_id, title, description, body, width, height)


def bar_chart(
    facts: Mapping[str, Any],
    *,
    chart_id: str,
    title: str,
    description: str,
    categories_key: str,
    category_format: str,
    x_label: str,
    y: Axis,
    groups: Sequence[BarGroup],
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """Side-by-side bars per category (solid or outlined), each bar's value written above it."""
    book = _Book(facts)
    x0, x1, y0, y1 = LEFT, width - RIGHT, height - BOTTOM, TOP + 13 * len(groups)  # room for the values on top
    yt = book.value(y.ticks_key)
    sy = _Scale(y.kind, float(yt[0]), float(yt[-1]), y0, y1)
    categories = book.value(categories_key)
    slot = (x1 - x0) / len(categories)
    bar = slot * 0.7 / len(groups)
    body = _y_grid(book, y, sy, x0, x1)
    for group in groups:
        if len(group.keys) != len(categories):
            raise ChartError(f"bar group {group.label!r} has {len(group.keys)} values for {len(categories)} categories")
    for c in range(len(categories)):
        centre = x0 + slot * (c + 0.5)
        body.append(book.shown(centre, y0 + 18, f"{categories_key}[{c}]", category_format, anchor="middle"))
        tops = [sy.data(book.number(group.keys[c])) for group in groups]
        for g, group in enumerate(groups):
            style = STYLES[group.style]
            left = centre - bar * len(groups) / 2 + bar * g
            fill = style.colour if group.filled else "none"
            body.append(
                f'<rect class="ev-bar" x="{_num(left + 1)}" y="{_num(tops[g])}" width="{_num(bar - 2)}" '
                f'height="{_num(y0 - tops[g])}" style="fill:{fill};stroke:{style.colour}{_dash(style)}"/>'
            )
            # Values stack above the category's tallest bar, first group lowest, so neighbours never collide.
            label_y = min(tops) - 5 - 13 * (len(groups) - 1 - g)
            body.append(book.shown(left + bar / 2, label_y, group.keys[c], group.fmt, anchor="middle", cls="ev-small"))
    body += _axis_lines(x_label, y.label, x0, x1, y0, y1)
    for g, group in enumerate(groups):
        style = STYLES[group.style]
        cy = y1 + 6 + 18 * g
        fill = style.colour if group.filled else "none"
        body.append(
            f'<rect class="ev-bar" x="{_num(x1 + 10)}" y="{_num(cy - 6)}" width="16" height="12" '
            f'style="fill:{fill};stroke:{style.colour}{_dash(style)}"/>'
        )
        body.append(_text(x1 + 32, cy + 4, escape(group.label), cls="ev-small"))
    return _frame(chart_id, title, description, body, width, height)


# -- ticks, computed from the data and published as facts ---------------------------------


def exponent_ticks(values: Sequence[float], most: int = 6) -> tuple[int, ...]:
    """Powers of ten (as exponents) that bracket ``values``, at most ``most`` of them, evenly spaced."""
    positive = [v for v in values if v > 0]
    if not positive:
        raise ChartError("no positive value to place on a logarithmic axis")
    lo = math.floor(math.log10(min(positive)))
    hi = math.ceil(math.log10(max(positive)))
    if hi == lo:
        hi = lo + 1
    for step in (1, 2, 5, 10, 20, 50):
        first = lo - (lo % step)
        last = hi + (-hi % step)
        if (last - first) // step + 1 <= most:
            return tuple(range(first, last + 1, step))
    raise ChartError("values span too many orders of magnitude")


def linear_ticks(lo: float, hi: float, most: int = 6) -> tuple[float, ...]:
    """Round ticks from at or below ``lo`` to at or above ``hi``: steps of 1, 2 or 5 times a power of ten."""
    if not hi > lo:
        raise ChartError("an axis needs hi > lo")
    span = hi - lo
    for power in range(math.floor(math.log10(span)) - 1, math.floor(math.log10(span)) + 2):
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0**power
            first = math.floor(lo / step) * step
            last = math.ceil(hi / step) * step
            count = round((last - first) / step) + 1
            if count <= most:
                return tuple(float(format(first + i * step, ".12g")) for i in range(count))
    raise ChartError("no tick step fits")
