"""Provenance: every number a page shows is a *fact* looked up by key and formatted by code.

A page never carries a typed number. Templates call ``facts.html(key, fmt)``
(or the ``tv`` template global), which returns the formatted value wrapped as

    <span class="tv" data-trace="FORWARD.output[1]" data-format="short">−3.25</span>

and diagrams attach the same two attributes to the SVG ``<text>`` that shows
the value. The checker reads those attributes back, looks the key up in a
fresh run's facts, formats it with the same function, and compares the text.

Keys
    ``RECORD.field``            a trace field (``FORWARD.output``, ``GRADCHECK.tolerance``)
    ``STACK[d].field``          a repeated record, indexed by its depth
    ``KEY[i]``                  element ``i`` of a vector-valued key (row-major)
    ``REPORT.name.part``        a report value the trace does not carry
    ``DERIVED.name``            a value computed by code from the above (named in the chapter)
    ``MEASURED.name``           a value a fixture measured that the trace format has no field for

Formats
    :data:`FORMAT_DESCRIPTIONS` names every format and what it shows (AUTHORING.md's table is made from it).
Negative numbers are shown with the minus sign U+2212; :func:`normalize` maps it back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from html import escape
from typing import Any

from .trace.numbers import (
    Measurement,
    bound,
    format_bool,
    format_real,
    format_sci,
    format_shape_brackets,
    settled,
    short_form,
    standing_end,
    standing_median,
    stands,
    uncertainty_up,
)

MINUS = "\u2212"


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def _vector(values: Any, one: Callable[[float], str]) -> str:
    return "[" + ", ".join(one(v) for v in values) + "]"


def _exact(value: float) -> str:
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"cannot show {v!r}")
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _pow10(value: float) -> str:
    """``10⁻⁶`` for an exact power of ten (as the float nearest it), else the scientific form."""
    v = float(value)
    if v > 0 and math.isfinite(v):
        exponent = round(math.log10(v))
        if float(f"1e{exponent}") == v:
            return "10" + str(exponent).translate(_SUPERSCRIPT)
    return _minus(format_sci(v))


def _significant(value: Any, digits: int) -> str:
    """``value`` rounded to ``digits`` significant digits, half away from zero, its trailing zeros kept as digits it
    stands behind: ``1.26``, ``0.000123``, ``1.00``; below a ten-thousandth (and from a million up) as
    ``2.22 × 10⁻¹⁶``. A vector is each of its entries so, in brackets."""
    if isinstance(value, (tuple, list)):
        return _vector(value, lambda v: _significant(v, digits))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"format 'sig{digits}' shows a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"cannot show {v!r}")
    if v == 0:
        return "0"
    rounded = Context(prec=digits, rounding=ROUND_HALF_UP).plus(Decimal(repr(v)))
    exponent = rounded.adjusted()
    rounded = rounded.quantize(Decimal(1).scaleb(exponent - digits + 1))  # 0.0003 as 0.000300: every digit shown
    if -4 <= exponent < 6:
        text = format(rounded, "f")
    else:
        mantissa = format(rounded.scaleb(-exponent), "f")
        text = f"{mantissa} \u00d7 10{str(exponent).translate(_SUPERSCRIPT)}"
    return _minus(text)


def _short_or_sci(value: float) -> str:
    """``short`` from a thousandth up (and for zero); ``sci`` below, where ``short``'s six decimals would lose the digits."""
    return short_form(value) if value == 0 or abs(value) >= 1e-3 else format_sci(value)


def _percent(value: float) -> str:
    return format(float(value) * 100.0, ".2f") + "%"


def _name(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"format 'name' shows a single name, got {value!r}")
    return value


def _bool(value: Any) -> str:
    if not isinstance(value, bool):
        raise TypeError(f"format 'bool' shows true or false, got {value!r}")
    return format_bool(value)


def _measurement(value: Any, fmt: str) -> Measurement:
    if not isinstance(value, Measurement):
        raise TypeError(f"format {fmt!r} shows a measured result (a field of kind Measured), got {value!r}")
    return value


def _decimal_text(value: Decimal, place: int) -> str:
    """A value that is a multiple of ``10**place``, every digit of it standing: ``0.28``, ``120``, ``6.1 × 10⁻⁵``."""
    if value == 0 or value.adjusted() >= -3:
        return format(value, "f")
    exponent = value.adjusted()
    mantissa = format(value.scaleb(-exponent), "f")
    return f"{mantissa} \u00d7 10{str(exponent).translate(_SUPERSCRIPT)}"


# The words around a measured result, per language: a bound, a bound on both sides, a range.
_MEASURED_WORDS: dict[str, tuple[str, str, str]] = {
    "en": ("below {0}", "between -{0} and {0}", "{0} to {1}"),
    "ru": ("меньше {0}", "от -{0} до {0}", "от {0} до {1}"),
}


def _measured(value: Any, lang: str = "en") -> str:
    """The median with the digits its uncertainty leaves standing; a bound where it may move by half its value."""
    m = _measurement(value, "measured" if lang == "en" else f"measured-{lang}")
    median, place = standing_median(m)
    if stands(m):
        return _decimal_text(median, place)
    limit = bound(m)
    text = _decimal_text(limit, limit.adjusted())
    below, between, _ = _MEASURED_WORDS[lang]
    return (below if standing_end(m.low, m)[0] >= 0 else between).format(text)


def _measured_range(value: Any, lang: str = "en") -> str:
    """The smallest and the largest seed's value, each with the digits the float path leaves standing."""
    m = _measurement(value, "measured-range" if lang == "en" else f"measured-range-{lang}")
    low, high = (_decimal_text(*standing_end(end, m)) for end in (m.low, m.high))
    return _MEASURED_WORDS[lang][2].format(low, high)


def _plus_minus(uncertainty: float) -> str:
    up = uncertainty_up(uncertainty)
    return "\u00b10" if up == 0 else "\u00b1" + _decimal_text(up, up.adjusted())


FORMATS: dict[str, Callable[[Any], str]] = {
    "six": lambda v: _minus(format_real(v)),
    "short": lambda v: _minus(short_form(v)),
    "int": lambda v: _minus(str(int(v))),
    "count": lambda v: str(int(v)),
    "exact": lambda v: _minus(_exact(v)),
    "percent": lambda v: _minus(_percent(v)),
    "sci": lambda v: _minus(format_sci(v)),
    "short-or-sci": lambda v: _minus(_short_or_sci(v)),
    "pow10": _pow10,
    "sig2": lambda v: _significant(v, 2),
    "sig3": lambda v: _significant(v, 3),
    "vector": lambda v: _minus(_vector(v, short_form)),
    "vector-six": lambda v: _minus(_vector(v, format_real)),
    "shape": lambda v: format_shape_brackets(v),
    "name": lambda v: _name(v),
    "words": lambda v: _name(v).replace("-", " "),
    "bool": lambda v: _bool(v),
    "measured": lambda v: _minus(_measured(v)),
    "measured-range": lambda v: _minus(_measured_range(v)),
    "measured-ru": lambda v: _minus(_measured(v, "ru")),
    "measured-range-ru": lambda v: _minus(_measured_range(v, "ru")),
    "measured-uncertainty": lambda v: _plus_minus(settled(_measurement(v, "measured-uncertainty")).uncertainty),
    "measured-float-path": lambda v: _plus_minus(settled(_measurement(v, "measured-float-path")).float_path),
}

# The only formats that show a measured result: any other would show digits its uncertainty does not determine.
MEASURED_FORMATS = frozenset(
    ("measured", "measured-range", "measured-ru", "measured-range-ru", "measured-uncertainty", "measured-float-path")
)

WORDS_FORMAT = "bool:YES|NO"  # a boolean as one of two words: any format bool:WORD|WORD
CHOICE_FORMAT = "as:NAME=WORDS|OTHER=WORDS"  # a name as the words given for it: any format as:NAME=WORDS|NAME=WORDS…

# What each format shows: the one list of them, in the order a reader meets them. AUTHORING.md's table of formats
# is made from it, and tests/test_authoring_guide.py checks that it names exactly the formats above.
FORMAT_DESCRIPTIONS: dict[str, str] = {
    "six": "six decimals, as the trace prints",
    "short": "the six-decimal value with its trailing zeros dropped (`-3.25`, `1`)",
    "int": "an integer",
    "count": "an integer written in plain digits (a year, a depth, a chapter number)",
    "exact": "the shortest text that round-trips (derived values)",
    "percent": "the value times a hundred, two decimals and `%`",
    "sci": "`%.6e` scientific, as the trace prints",
    "short-or-sci": "`short` from a thousandth up (and for zero), `sci` below: a loss near zero keeps its digits",
    "pow10": "a power of ten as `10⁻⁶` (any other value as `sci`)",
    "sig2": "the value rounded to two significant digits, for a sentence: `1.3`, `0.00012`, `−0.85`, `2.2 × 10⁻¹⁶` "
    "below a ten-thousandth; a vector as `[a, b, …]` of them",
    "sig3": "the value rounded to three significant digits, for a sentence: `1.26`, `0.000123`, `1.00` (the zeros "
    "are digits it stands behind), `1.25 × 10⁻⁷` below a ten-thousandth; a vector as `[a, b, …]` of them",
    "vector": "`[a, b, …]` of short forms",
    "vector-six": "`[a, b, …]` of six-decimal forms",
    "shape": "`[2,2]`",
    "name": "a name, as the trace writes it",
    "words": "a name read as words of a sentence, its hyphens as spaces (`does-not-hold`: does not hold)",
    "bool": "`true` / `false`, as the trace writes them",
    "measured": "a measured result (a `Measured` field): the median over the seeds with only the digits its "
    "uncertainty leaves standing (`0.28` for 0.28 known to 0.03, `0.8` for 0.8 known to 0.2, `6.1 × 10⁻⁵`), or a bound (`below 0.08`) where it may move by half its value or more. Any other "
    "format given a measured result is a build error",
    "measured-range": "a measured result's smallest and largest seed, each with the digits the float path leaves "
    "standing (`0.213 to 0.351`)",
    "measured-ru": "`measured` in a Russian sentence: a bound reads `меньше 0.08` or `от −0.1 до 0.1`",
    "measured-range-ru": "`measured-range` in a Russian sentence: `от 0.213 до 0.351`",
    "measured-uncertainty": "a measured median's uncertainty, seeds and float path together, rounded up to one "
    "digit (`±0.03`)",
    "measured-float-path": "how far a measured result moved when its float path changed, rounded up to one digit "
    "(`±0.0002`)",
    WORDS_FORMAT: "a boolean as one of two words of a sentence (`bool:accepted|refused`)",
    CHOICE_FORMAT: "a name as the words given for it, in a sentence of any language "
    "(`as:higher=выше|lower=ниже`); a name the format gives no words for is a build error",
}

_INDEX_RE = re.compile(r"^(?P<base>.+)\[(?P<index>\d+)\]$")


class UnknownFact(KeyError):
    def __init__(self, key: str, known: Mapping[str, Any]):
        near = sorted(k for k in known if k.split(".")[0] == key.split(".")[0].split("[")[0])[:8]
        hint = f"; keys of that record: {', '.join(near)}" if near else ""
        super().__init__(f"unknown fact {key!r}{hint}")
        self.key = key


class TooManyDigits(ValueError):
    """A measured result asked for in a format that would show digits its uncertainty does not determine."""

    def __init__(self, key: str, fmt: str):
        super().__init__(
            f"{key} is a measured result: format {fmt!r} would show digits its seeds and float path do not "
            f"determine; show it with one of {', '.join(sorted(MEASURED_FORMATS))}"
        )
        self.key = key
        self.fmt = fmt


class UnknownFormat(KeyError):
    def __init__(self, fmt: str):
        super().__init__(
            f"unknown number format {fmt!r}; known: {', '.join(sorted(FORMATS))}, {WORDS_FORMAT}, {CHOICE_FORMAT}"
        )
        self.fmt = fmt


_WORDS_RE = re.compile(r"^bool:(?P<yes>[^|\d]+)\|(?P<no>[^|\d]+)$")
_CHOICE_RE = re.compile(r"^as:(?P<pairs>[^=|]+=[^=|\d]+(?:\|[^=|]+=[^=|\d]+)*)$")


def _choice(fmt: str, pairs: str) -> Callable[[Any], str]:
    words = dict(pair.split("=", 1) for pair in pairs.split("|"))

    def show(value: Any) -> str:
        name = _name(value)
        if name not in words:
            raise ValueError(f"format {fmt!r} gives no words for {name!r}; it gives words for {', '.join(words)}")
        return words[name]

    return show


def formatter(fmt: str) -> Callable[[Any], str] | None:
    """The function that shows a value in format ``fmt``, or None for an unknown format."""
    if fmt in FORMATS:
        return FORMATS[fmt]
    words = _WORDS_RE.match(fmt)
    if words:
        return lambda v: words["yes"] if _bool(v) == "true" else words["no"]
    choice = _CHOICE_RE.match(fmt)
    if choice:
        return _choice(fmt, choice["pairs"])
    return None


def normalize(text: str) -> str:
    """Displayed text back to ASCII for comparison (U+2212 → '-', no-break spaces → spaces)."""
    return text.replace(MINUS, "-").replace("\u00a0", " ").strip()


def fact_names(values: Mapping[str, Any]) -> frozenset[str]:
    """The names among a page's facts (every string value, and the strings in a list of values): a page may
    show them, digits and all, as words (a parameter named ``W1``)."""
    out: set[str] = set()
    for v in values.values():
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (tuple, list)):
            out.update(x for x in v if isinstance(x, str))
    return frozenset(out)


@dataclass
class FactBook:
    """The facts of one trace (plus derived values), and the shown text of each."""

    facts: Mapping[str, Any]
    used: set[str] | None = None

    def __post_init__(self) -> None:
        if self.used is None:
            self.used = set()

    def value(self, key: str) -> Any:
        if key in self.facts:
            return self.facts[key]
        match = _INDEX_RE.match(key)
        if match and match["base"] in self.facts:
            base = self.facts[match["base"]]
            index = int(match["index"])
            if isinstance(base, (tuple, list)) and index < len(base):
                return base[index]
        raise UnknownFact(key, self.facts)

    def text(self, key: str, fmt: str) -> str:
        show = formatter(fmt)
        if show is None:
            raise UnknownFormat(fmt)
        value = self.value(key)
        if isinstance(value, Measurement) and fmt not in MEASURED_FORMATS:
            raise TooManyDigits(key, fmt)
        assert self.used is not None
        self.used.add(key)
        return show(value)

    def html(self, key: str, fmt: str, cls: str = "tv") -> str:
        """The value wrapped in a span that carries its provenance."""
        return (
            f'<span class="{escape(cls)}" data-trace="{escape(key)}" data-format="{escape(fmt)}">'
            f"{escape(self.text(key, fmt))}</span>"
        )


def format_fact(facts: Mapping[str, Any], key: str, fmt: str) -> str:
    """The text a page must show for ``key`` in ``fmt`` (used by the checker)."""
    return FactBook(facts).text(key, fmt)
