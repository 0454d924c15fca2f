"""Charts for generated pages: deterministic inline SVG whose every shown number is a fact.

A chart reads its data from a page's facts by key and draws it with fixed
geometry: no clock, no randomness, no embedded fonts, so the same facts give
the same bytes. Each number it shows (a tick label, a value in a legend entry,
a value above a bar) sits in a ``<text>`` or ``<tspan>`` carrying
``data-trace`` and ``data-format``, written with
:func:`site_builder.facts.format_fact`, so the checker verifies a chart as it
verifies prose. Titles, descriptions, axis names and the words of a legend hold
no digits.

One layout serves a phone and a desktop. The drawing is as wide as
:data:`WIDTH` units, about a phone's text column, and scales to its container
(``width="100%"``; the site's stylesheet caps it on wide screens), with type
large enough to stay legible at that scale. Nothing sits beside the plot: the
y axis is named above it, the x axis below it, and the legend comes last, one
entry per row. A value worth reading off a line goes into its legend entry
(:class:`Value`), so no number is drawn across a line or another label.

Colours come from the site palette through CSS variables, so a chart follows
the light and the dark scheme; line style and marker shape carry each
series' identity without colour, and forced-colours mode draws everything in
the system text colour.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..errors import SiteBuilderError
from ..facts import FactBook
from ..trace.numbers import Measurement, bound, standing_median, stands

WIDTH = 420  # viewBox units: about the text column of a 390 px phone
PLOT_HEIGHT = 220  # the plot area of a chart; the axes, their names and the legend add to it
FONT = 14  # type size in viewBox units (about 12 px on a phone)
SMALL = 13  # values written above bars
CHAR = 0.62  # a generous average advance of one character, in ems, for layout estimates
TOP = 32  # room above the plot for the y axis's name
RIGHT = 20  # room right of the plot for the last x tick's label
ROW = 22  # one legend entry
# Below the x axis, in order: the tick labels' baseline, the axis name's baseline, the first legend entry's centre.
TICKS_BELOW = 20
NAME_BELOW = TICKS_BELOW + FONT + 8
LEGEND_BELOW = NAME_BELOW + 26


class ChartError(SiteBuilderError, ValueError):
    """A chart was asked to draw something it cannot show faithfully."""


@dataclass(frozen=True)
class Style:
    colour: str  # a CSS colour, normally a palette variable
    dash: str  # stroke-dasharray ("" for solid)
    marker: str  # circle, square, triangle, diamond, or none


STYLES: dict[str, Style] = {
    # The chapter's vocabulary: the identity path is solid, the learned branch dashed. Each style that draws data
    # has a colour of its own (site.css sets each palette's, every one at least 4.5:1 against its background), a
    # dash of its own and a marker of its own, so a series is told apart without its colour as well as with it.
    "identity": Style("var(--dg-identity)", "", "square"),
    "learned": Style("var(--dg-learned)", "6 3", "circle"),
    "merge": Style("var(--dg-merge)", "2 3", "triangle"),
    "plain": Style("var(--dg-plain)", "1 3", "diamond"),
    "alternate": Style("var(--dg-alternate)", "8 3 2 3", "down"),
    # Rates to compare the data with: thin, grey, no markers.
    "guide": Style("var(--dg-guide)", "1 3", "none"),
    "guide-long": Style("var(--dg-guide)", "8 3 1 3", "none"),
}
# The styles that draw data (a page's arms); the guides draw rates to compare them with.
DATA_STYLES = ("identity", "learned", "merge", "plain", "alternate")

_CSS = (
    f".ev-chart text{{fill:var(--md-default-fg-color);font-size:{FONT}px}}"
    f".ev-chart .ev-small{{font-size:{SMALL}px}}"
    ".ev-chart .ev-grid{stroke:var(--md-default-fg-color--lightest);stroke-width:1}"
    ".ev-chart .ev-axis{stroke:var(--md-default-fg-color--light);stroke-width:1.2}"
    ".ev-chart .ev-line{fill:none;stroke-width:2}"
    ".ev-chart .ev-guide{fill:none;stroke-width:1.4}"
    ".ev-chart .ev-bar{stroke-width:1.4}"
    ".ev-chart .ev-band{fill-opacity:0.14;stroke:none}"
    "@media (forced-colors: active){.ev-chart text{fill:CanvasText}"
    ".ev-chart .ev-line,.ev-chart .ev-guide,.ev-chart .ev-axis,.ev-chart .ev-grid,.ev-chart .ev-bar{stroke:CanvasText}"
    ".ev-chart .ev-mark{fill:CanvasText;stroke:CanvasText}.ev-chart .ev-band{fill:CanvasText;fill-opacity:0.1}"
    ".ev-chart .ev-mark.ev-hollow{fill:Canvas}}"
    ".ev-chart .ev-hollow{stroke-width:1.6}"
)


@dataclass(frozen=True)
class Value:
    """A fact written among words (a legend entry): a ``<tspan>`` with its provenance."""

    key: str
    fmt: str


# Words a reader sees: plain text, or text with facts in it ("residual, ", Value(KEY, "six"), " at depth ", …).
Words = str | tuple[str | Value, ...]


@dataclass(frozen=True)
class Axis:
    """``kind``: ``linear`` or ``log`` (ticks are data values), ``exponent`` (ticks are powers of ten)."""

    label: str
    ticks_key: str  # a vector-valued fact; the first and last tick bound the axis
    tick_format: str
    kind: str = "linear"


@dataclass(frozen=True)
class Series:
    label: Words
    points: tuple[tuple[str, str], ...]  # (x key, y key) per point
    style: str
    # Every value is exactly zero: drawn on a row of its own below a logarithmic y axis (which has no
    # place for zero), past a break in the axis, the row labelled with the value itself.
    floor: bool = False
    # Every y value is a measured result: a band from its smallest to its largest seed is drawn under the
    # line through the medians, in the series' colour. A median whose leading digit does not stand (the page
    # shows a bound) is drawn hollow; one that rounds to zero, which a logarithmic axis has no place for, is drawn
    # hollow at its bound, on a bar from the axis's foot up to it, and the line does not pass through it.
    band: bool = False


# The format of a measured median among the words of a legend, per language.
MEASURED = {"en": "measured", "ru": "measured-ru"}


def language(lang: str) -> str:
    """``lang`` if the charts have words for it; a clear error otherwise."""
    if lang not in MEASURED:
        raise ChartError(f"no chart words in the language {lang!r}; known: {', '.join(MEASURED)}")
    return lang


def in_language(words: Mapping[str, Mapping[str, Any]], lang: str) -> Mapping[str, Any]:
    """A figures module's table of words in ``lang``; every language of the table must name the same words."""
    table = words[language(lang)]
    for other, its in words.items():
        if set(its) != set(table):
            missing = sorted(set(table) ^ set(its))
            raise ChartError(f"the chart words in {other!r} and {lang!r} differ in {', '.join(missing)}")
    return table


# The legend's words for the marks of a median the page shows as a bound, per language: a hollow mark, and a
# hollow mark on a bar (the median lies below the mark).
BOUND_WORDS: dict[str, tuple[str, str]] = {
    "en": ("hollow: the median's digit does not stand", "on a bar: the median lies below the mark"),
    "ru": ("полый: цифра медианы не надёжна", "на столбике: медиана ниже метки"),
}


@dataclass(frozen=True)
class ValueLabel:
    """A fact written beside a point: ``anchor`` start/end, offset in units. Prefer a :class:`Value` in the legend."""

    key: str
    fmt: str
    x_key: str
    y_key: str
    dx: float = 6.0
    dy: float = -6.0
    anchor: str = "start"


@dataclass(frozen=True)
class Reference:
    """A horizontal line at a fact's value; its legend entry reads ``label, value``."""

    key: str
    fmt: str
    label: str


@dataclass(frozen=True)
class Guide:
    """A straight line of slope ``slope`` on log-log axes through one data point: a rate to compare the data with."""

    label: Words
    slope: float
    x_key: str
    y_key: str
    style: str = "guide"


@dataclass(frozen=True)
class BarGroup:
    label: Words
    keys: tuple[str, ...]  # one value per category
    fmt: str | None  # how the value above each bar is written; None writes no values
    style: str
    filled: bool = True


def _num(v: float) -> str:
    return format(v, ".2f")


def _text(x: float, y: float, body: str, *, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}"{c}{extra}>{body}</text>'


def _line(cls: str, x1: float, y1: float, x2: float, y2: float, style: str = "") -> str:
    s = f' style="{style}"' if style else ""
    return f'<line class="{cls}" x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}"{s}/>'


_DIGIT = re.compile(r"[0-9]")


def _words_only(words: str, what: str) -> str:
    if _DIGIT.search(words):
        raise ChartError(f"{what} holds words only (a number must be a fact), found {words!r}")
    return words


def _width(chars: int, size: float = FONT) -> float:
    """A generous estimate of the width of ``chars`` characters: layout never relies on it being exact."""
    return chars * CHAR * size


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

    def text(self, key: str, fmt: str) -> str:
        return self.book.text(key, fmt)

    def shown(self, x: float, y: float, key: str, fmt: str, **kw: Any) -> str:
        """A ``<text>`` showing one fact, with its provenance."""
        attrs = f' data-trace="{escape(key)}" data-format="{escape(fmt)}"'
        return _text(x, y, escape(self.text(key, fmt)), extra=attrs + kw.pop("extra", ""), **kw)

    def words(self, words: Words, what: str) -> tuple[str, int]:
        """The markup of ``words`` (facts as ``<tspan>`` with provenance) and its length in characters."""
        parts = (words,) if isinstance(words, str) else words
        body, chars = [], 0
        for part in parts:
            if isinstance(part, Value):
                shown = self.text(part.key, part.fmt)
                body.append(
                    f'<tspan data-trace="{escape(part.key)}" data-format="{escape(part.fmt)}">{escape(shown)}</tspan>'
                )
            else:
                shown = _words_only(part, what)
                body.append(escape(shown))
            chars += len(shown)
        return "".join(body), chars


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

    def at(self, t: float) -> float:
        """The position of ``t`` on the axis's own scale (a value, or its base-ten logarithm)."""
        return self.a + (t - self.lo) / (self.hi - self.lo) * (self.b - self.a)

    def data(self, v: float) -> float:
        t = self._t(v)
        if not (self.lo - 1e-9 <= t <= self.hi + 1e-9):
            raise ChartError(f"value {v!r} lies outside the axis")
        return self.at(t)

    def tick(self, v: float) -> float:
        return self.at(self._t(v, tick=True))


def _marker(kind: str, x: float, y: float, colour: str, hollow: bool = False) -> str:
    """A series' mark at (x, y): filled, or ``hollow`` (outlined, the page's background inside)."""
    fill = "var(--md-default-bg-color)" if hollow else colour
    style = f' class="ev-mark{" ev-hollow" if hollow else ""}" style="fill:{fill};stroke:{colour}"'
    if kind == "none":
        return ""
    if kind == "circle":
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="4"{style}/>'
    if kind == "square":
        return f'<rect x="{_num(x - 3.8)}" y="{_num(y - 3.8)}" width="7.6" height="7.6"{style}/>'
    if kind == "triangle":
        pts = f"{_num(x)},{_num(y - 4.8)} {_num(x - 4.6)},{_num(y + 3.5)} {_num(x + 4.6)},{_num(y + 3.5)}"
        return f'<polygon points="{pts}"{style}/>'
    if kind == "down":
        pts = f"{_num(x)},{_num(y + 4.8)} {_num(x - 4.6)},{_num(y - 3.5)} {_num(x + 4.6)},{_num(y - 3.5)}"
        return f'<polygon points="{pts}"{style}/>'
    if kind == "diamond":
        pts = f"{_num(x)},{_num(y - 4.8)} {_num(x - 4.8)},{_num(y)} {_num(x)},{_num(y + 4.8)} {_num(x + 4.8)},{_num(y)}"
        return f'<polygon points="{pts}"{style}/>'
    raise ChartError(f"unknown marker {kind!r}")


def _frame(chart_id: str, title: str, description: str, body: list[str], width: float, height: float) -> str:
    for words in (title, description):
        if any(ch.isdigit() for ch in words):
            raise ChartError(f"chart {chart_id}: titles and descriptions hold words only, found {words!r}")
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ev-chart" id="{escape(chart_id)}" '
        f'viewBox="0 0 {_num(width)} {_num(height)}" width="100%" role="img" '
        f'aria-labelledby="{escape(chart_id)}-title {escape(chart_id)}-desc">'
        f'<title id="{escape(chart_id)}-title">{escape(title)}</title>'
        f'<desc id="{escape(chart_id)}-desc">{escape(description)}</desc>'
        f"<style>{_CSS}</style>"
    )
    return head + "".join(body) + "</svg>"


def _dash(style: Style) -> str:
    """The ``style`` attribute's dash declaration for a series drawn in ``style`` ("" when solid)."""
    return f";stroke-dasharray:{style.dash}" if style.dash else ""


def _left(book: _Book, y: Axis, extra: Sequence[tuple[str, str]] = ()) -> float:
    """The plot's left edge: room for the widest y tick label (and any other label written at the left)."""
    texts = [book.text(f"{y.ticks_key}[{i}]", y.tick_format) for i in range(len(book.value(y.ticks_key)))]
    texts += [book.text(key, fmt) for key, fmt in extra]
    return max(28.0, _width(max(len(t) for t in texts)) + 14)


def _y_grid(book: _Book, y: Axis, sy: _Scale, x0: float, x1: float) -> list[str]:
    """A grid line across the plot at each y tick, with the tick's value at its left."""
    out: list[str] = []
    for i, tick in enumerate(book.value(y.ticks_key)):
        py = sy.tick(float(tick))
        out.append(_line("ev-grid", x0, py, x1, py))
        out.append(book.shown(x0 - 8, py + FONT * 0.35, f"{y.ticks_key}[{i}]", y.tick_format, anchor="end"))
    return out


def _axis_names(x_label: str, y_label: str, x0: float, x1: float, xa: float, width: float) -> list[str]:
    """The y axis named above the plot (read without turning the head), the x axis below its tick labels."""
    for label in (x_label, y_label):
        if _width(len(label)) + 8 > width:
            raise ChartError(f"the axis name {label!r} does not fit a chart {width:g} units wide")
    return [
        _text(4, FONT + 2, escape(y_label)),
        _text((x0 + x1) / 2, xa + NAME_BELOW, escape(x_label), anchor="middle"),
    ]


def _x_ticks(book: _Book, x: Axis, sx: _Scale, xa: float) -> list[str]:
    out: list[str] = []
    for i, tick in enumerate(book.value(x.ticks_key)):
        px = sx.tick(float(tick))
        out.append(_line("ev-axis", px, xa, px, xa + 5))
        out.append(book.shown(px, xa + TICKS_BELOW, f"{x.ticks_key}[{i}]", x.tick_format, anchor="middle"))
    return out


@dataclass(frozen=True)
class _Entry:
    words: Words
    style: Style
    kind: str = "line"  # line (a stroke and its marker), bar (a box, filled or outlined), hollow, or bound
    filled: bool = True


def _legend(book: _Book, entries: Sequence[_Entry], top: float, width: float) -> tuple[list[str], float]:
    """One entry per row below the plot; returns the markup and the bottom of the last row."""
    out: list[str] = []
    x = 6.0
    for i, e in enumerate(entries):
        cy = top + ROW * i
        if e.kind == "bar":
            fill = e.style.colour if e.filled else "none"
            out.append(
                f'<rect class="ev-bar" x="{_num(x + 4)}" y="{_num(cy - 7)}" width="18" height="14" '
                f'style="fill:{fill};stroke:{e.style.colour}{_dash(e.style)}"/>'
            )
        elif e.kind in ("hollow", "bound"):
            if e.kind == "bound":
                out.append(_line("ev-guide", x + 13, cy + 9, x + 13, cy, f"stroke:{e.style.colour}"))
            out.append(_marker(e.style.marker, x + 13, cy, e.style.colour, hollow=True))
        else:
            cls = "ev-guide" if e.style.marker == "none" else "ev-line"
            out.append(_line(cls, x, cy, x + 26, cy, f"stroke:{e.style.colour}{_dash(e.style)}"))
            out.append(_marker(e.style.marker, x + 13, cy, e.style.colour))
        body, chars = book.words(e.words, "a legend entry")
        if x + 34 + _width(chars) > width:
            raise ChartError(f"the legend entry {chars} characters long does not fit a chart {width:g} units wide")
        out.append(_text(x + 34, cy + FONT * 0.35, body))
    return out, top + ROW * (len(entries) - 1) + ROW / 2


def _clip_guide(
    slope: float, tx: float, ty: float, sx: _Scale, sy: _Scale
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The part of the line ``t_y = ty + slope * (t_x - tx)`` inside the plot, in axis units; None when outside."""
    lo, hi = sx.lo, sx.hi
    if slope:
        for bound in (sy.lo, sy.hi):
            cross = tx + (bound - ty) / slope
            if slope > 0 and bound == sy.lo or slope < 0 and bound == sy.hi:
                lo = max(lo, cross)
            else:
                hi = min(hi, cross)
    elif not sy.lo <= ty <= sy.hi:
        return None
    if not hi > lo:
        return None
    return (lo, ty + slope * (lo - tx)), (hi, ty + slope * (hi - tx))


def _band(book: _Book, s: Series, sx: _Scale, sy: _Scale, bottom: float) -> str:
    """The polygon from every point's smallest seed, left to right, back along its largest seed; a smallest seed
    below the axis (a loss whose standing digits round it to zero) is drawn at its ``bottom``."""
    ends: list[tuple[float, float, float]] = []
    for xk, yk in s.points:
        m = book.value(yk)
        if not isinstance(m, Measurement):
            raise ChartError(f"series {s.label!r} draws a band of the seeds, but {yk} is not a measured result")
        ends.append((sx.data(book.number(xk)), sy.data(max(m.low, bottom)), sy.data(max(m.high, bottom))))
    outline = [(x, lo) for x, lo, _ in ends] + [(x, hi) for x, _, hi in reversed(ends)]
    points = " ".join(f"{_num(px)},{_num(py)}" for px, py in outline)
    return f'<polygon class="ev-band" points="{points}" style="fill:{STYLES[s.style].colour}"/>'


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
    guides: Sequence[Guide] = (),
    width: float = WIDTH,
    height: float = PLOT_HEIGHT,
    lang: str = "en",
) -> str:
    """Series of points joined by lines over a plot ``height`` units tall, the legend below, every number a fact;
    ``lang`` is the language of the legend's words for a median shown as a bound."""
    book = _Book(facts)
    floors = [s for s in series if s.floor]
    if floors and y.kind == "linear":
        raise ChartError("a row for exact zeros belongs below a logarithmic axis; a linear axis has a place for zero")
    zero_key = floors[0].points[0][1] if floors else None  # the zero row is labelled with a zero of the data
    x0, x1 = _left(book, y, [(zero_key, "short")] if zero_key else []), width - RIGHT
    y1 = TOP
    y0 = y1 + height
    zero = y0 + 28 if floors else None  # the row of exact zeros, past a break in the y axis
    xa = zero + 16 if zero is not None else y0  # the x axis
    xt, yt = book.value(x.ticks_key), book.value(y.ticks_key)
    sx = _Scale(x.kind, float(xt[0]), float(xt[-1]), x0, x1)
    sy = _Scale(y.kind, float(yt[0]), float(yt[-1]), y0, y1)
    body = _y_grid(book, y, sy, x0, x1)
    if zero is None:
        body.append(_line("ev-axis", x0, y0, x0, y1))
    else:
        # The axis stops below its lowest tick and starts again for the zero row: two short strokes mark the break.
        body.append(_line("ev-axis", x0, y1, x0, y0 + 6))
        body += [_line("ev-axis", x0 - 6, y0 + 14 + d, x0 + 6, y0 + 8 + d) for d in (0, 6)]
        body.append(_line("ev-axis", x0, y0 + 22, x0, xa))
        body.append(_line("ev-grid", x0, zero, x1, zero))
        assert zero_key is not None
        body.append(book.shown(x0 - 8, zero + FONT * 0.35, zero_key, "short", anchor="end"))
    body.append(_line("ev-axis", x0, xa, x1, xa))
    body += _x_ticks(book, x, sx, xa)
    body += _axis_names(x.label, y.label, x0, x1, xa, width)
    entries: list[_Entry] = []
    for ref in references:
        py = sy.data(book.number(ref.key))
        body.append(_line("ev-guide", x0, py, x1, py, f"stroke:{STYLES['guide'].colour};stroke-dasharray:1 4"))
        entries.append(
            _Entry((_words_only(ref.label, "a reference's label") + ", ", Value(ref.key, ref.fmt)), STYLES["guide"])
        )
    for g in guides:
        if x.kind != "log" or y.kind not in ("log", "exponent"):
            raise ChartError(f"guide {g.label!r}: a straight line of a given slope needs logarithmic axes")
        clipped = _clip_guide(g.slope, math.log10(book.number(g.x_key)), math.log10(book.number(g.y_key)), sx, sy)
        style = STYLES[g.style]
        if clipped is not None:
            (ax, ay), (bx, by) = clipped
            body.append(
                _line("ev-guide", sx.at(ax), sy.at(ay), sx.at(bx), sy.at(by), f"stroke:{style.colour}{_dash(style)}")
            )
        entries.append(_Entry(g.label, style))
    for s in series:
        if s.band:
            body.append(_band(book, s, sx, sy, float(yt[0])))
    bounded: set[str] = set()  # the kinds of bound marks drawn: "hollow", "bound"
    for s in series:
        style = STYLES[s.style]
        runs: list[list[tuple[float, float]]] = [[]]  # the line breaks where a median is drawn at its bound
        marks: list[str] = []
        for xk, yk in s.points:
            px = sx.data(book.number(xk))
            hollow = False
            if s.floor:
                if book.number(yk) != 0.0:
                    raise ChartError(f"series {s.label!r} is drawn on the zero row but {yk} is not zero")
                assert zero is not None
                py = zero
            elif s.band and not stands(m := book.value(yk)):
                hollow = True
                if standing_median(m)[0] == 0 and y.kind != "linear":
                    # No digit stands and the median rounds to zero: the page says "below" a bound, so the mark
                    # sits at the bound, on a bar from the axis's foot, and the line of medians leaves it out.
                    py = sy.data(float(bound(m)))
                    body.append(_line("ev-guide", px, y0, px, py, f"stroke:{style.colour}"))
                    marks.append(_marker(style.marker, px, py, style.colour, hollow=True))
                    runs.append([])
                    bounded.add("bound")
                    continue
                bounded.add("hollow")
                py = sy.data(book.number(yk))
            else:
                py = sy.data(book.number(yk))
            runs[-1].append((px, py))
            marks.append(_marker(style.marker, px, py, style.colour, hollow=hollow))
        for run in runs:
            if run:
                path = " ".join(f"{_num(px)},{_num(py)}" for px, py in run)
                body.append(f'<polyline class="ev-line" points="{path}" style="stroke:{style.colour}{_dash(style)}"/>')
        body += marks
    for lab in labels:
        px, py = sx.data(book.number(lab.x_key)), sy.data(book.number(lab.y_key))
        body.append(book.shown(px + lab.dx, py + lab.dy, lab.key, lab.fmt, anchor=lab.anchor))
    entries = [_Entry(s.label, STYLES[s.style]) for s in series] + entries
    words = BOUND_WORDS.get(lang)
    if bounded and words is None:
        raise ChartError(f"chart {chart_id}: no words for a bound's marks in the language {lang!r}")
    sample = Style("var(--md-default-fg-color)", "", "circle")
    entries += [_Entry(w, sample, kind) for kind, w in zip(("hollow", "bound"), words or ()) if kind in bounded]
    legend, bottom = _legend(book, entries, xa + LEGEND_BELOW, width)
    return _frame(chart_id, title, description, body + legend, width, bottom + 8)


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
    width: float = WIDTH,
    height: float = PLOT_HEIGHT,
) -> str:
    """Side-by-side bars per category (solid or outlined), values above them where a group asks, the legend below."""
    book = _Book(facts)
    valued = [g for g in groups if g.fmt is not None]
    x0, x1 = _left(book, y), width - RIGHT
    y1 = TOP + (SMALL + 2) * len(valued)  # room for the values on top of the tallest bar
    y0 = TOP + height
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
        body.append(book.shown(centre, y0 + TICKS_BELOW, f"{categories_key}[{c}]", category_format, anchor="middle"))
        tops = [sy.data(book.number(group.keys[c])) for group in groups]
        row = 0
        for g, group in enumerate(groups):
            style = STYLES[group.style]
            left = centre - bar * len(groups) / 2 + bar * g
            fill = style.colour if group.filled else "none"
            body.append(
                f'<rect class="ev-bar" x="{_num(left + 1)}" y="{_num(tops[g])}" width="{_num(bar - 2)}" '
                f'height="{_num(y0 - tops[g])}" style="fill:{fill};stroke:{style.colour}{_dash(style)}"/>'
            )
            if group.fmt is None:
                continue
            if _width(len(book.text(group.keys[c], group.fmt)), SMALL) > slot:
                raise ChartError(f"the value {group.keys[c]} is wider than its category's slot")
            # Values stack above the category's tallest bar, first group lowest, so neighbours never collide.
            label_y = min(tops) - 5 - (SMALL + 2) * (len(valued) - 1 - row)
            body.append(book.shown(left + bar / 2, label_y, group.keys[c], group.fmt, anchor="middle", cls="ev-small"))
            row += 1
    body.append(_line("ev-axis", x0, y0, x1, y0))
    body.append(_line("ev-axis", x0, y0, x0, y1))
    body += _axis_names(x_label, y.label, x0, x1, y0, width)
    entries = [_Entry(g.label, STYLES[g.style], "bar", g.filled) for g in groups]
    legend, bottom = _legend(book, entries, y0 + LEGEND_BELOW, width)
    return _frame(chart_id, title, description, body + legend, width, bottom + 8)


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


def decade_ticks(values: Sequence[float], most: int = 6) -> tuple[float, ...]:
    """Powers of ten that bracket ``values``, as values for a ``log`` axis (shown with the ``pow10`` format):
    the exponents :func:`exponent_ticks` picks, so a span of dozens of orders of magnitude keeps a few ticks."""
    return tuple(float(f"1e{k}") for k in exponent_ticks(values, most))


def log_ticks(values: Sequence[float], most: int = 7) -> tuple[float, ...]:
    """Values for a logarithmic axis that bracket ``values``: 1, 2 and 5 times powers of ten while at most
    ``most`` of them do, else powers of ten alone (written as values, so the axis reads in the data's units)."""
    positive = [v for v in values if v > 0]
    if not positive:
        raise ChartError("no positive value to place on a logarithmic axis")
    lo, hi = min(positive), max(positive)
    for mantissas in ((1, 2, 5), (1,)):
        ladder = [
            float(f"{m}e{e}")
            for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in mantissas
        ]
        first = max(t for t in ladder if t <= lo)
        last = min(t for t in ladder if t >= hi)
        ticks = tuple(t for t in ladder if first <= t <= last)
        if len(ticks) <= most:
            return ticks
    raise ChartError("values span too many orders of magnitude for one tick per power of ten")


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
