"""Strict reading and writing of trace lines: ``KIND field=value field=value ...``.

A trace module declares each record's fields with a :class:`Field` (name and
value kind); :func:`parse_record` reads one line against that declaration and
reports any deviation with its line and column, and :func:`render_record`
writes it back. Nothing here knows a particular chapter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import SiteBuilderError, shown
from .numbers import (
    INT_RE,
    NAME_RE,
    REAL_RE,
    SCI_RE,
    Measurement,
    flat,
    format_bool,
    format_decimals,
    format_names,
    format_real,
    format_sci,
    format_shape_brackets,
    format_shape_x,
    format_vector,
    measured_text,
)

V = TypeVar("V")


class TraceParseError(SiteBuilderError, ValueError):
    """A trace text broke a rule; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int, source: str = "trace"):
        self.reason = shown(message, 300)  # a value it quotes may be megabytes long: shown cut, with its length
        self.line = line
        self.column = column
        self.source = source
        super().__init__(f"{source}:{line}:{column}: {self.reason}")


class ValueSyntaxError(ValueError):
    """Raised by a value reader; ``offset`` is the 0-based position inside the value."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def _read_real(text: str) -> float:
    if not REAL_RE.fullmatch(text):
        raise ValueSyntaxError(f"expected a real number with exactly six decimals, found {text!r}")
    if text == "-0.000000":
        raise ValueSyntaxError("negative zero is written 0.000000, found '-0.000000'")
    return float(text)


def _read_sci(text: str) -> float:
    if not SCI_RE.fullmatch(text):
        raise ValueSyntaxError(f"expected a real in scientific notation like 1.234560e-07, found {text!r}")
    if text == "-0.000000e+00":
        raise ValueSyntaxError("negative zero is written 0.000000e+00, found '-0.000000e+00'")
    value = float(text)
    if format_sci(value) != text:
        raise ValueSyntaxError(f"not in canonical %.6e form: {text!r} is written {format_sci(value)!r}")
    return value


def _read_items(text: str, read: Callable[[str], V], start: int) -> tuple[V, ...]:
    """Comma-separated items, each read by ``read``; a bad item's error points at its first character.

    ``start`` is where ``text`` begins inside the value (1 after a vector's ``[``).
    """
    items: list[V] = []
    offset = start
    for item in text.split(","):
        try:
            items.append(read(item))
        except ValueSyntaxError as exc:
            raise ValueSyntaxError(str(exc), offset) from None
        offset += len(item) + 1
    return tuple(items)


def _read_vector(text: str) -> tuple[float, ...]:
    if text.startswith("[") and not text.endswith("]"):
        raise ValueSyntaxError("vector is not closed by ']' (a vector contains no spaces)", len(text))
    if not (text.startswith("[") and text.endswith("]")) or len(text) < 3:
        raise ValueSyntaxError(f"expected a vector like [1.000000,-2.000000], found {text!r}")
    return _read_items(text[1:-1], _read_real, start=1)


_SCALED = r"-?(?:0|[1-9][0-9]*)e-?(?:0|[1-9][0-9]*)"
_MEASURED_RE = re.compile(rf"({_SCALED})\[({_SCALED}),({_SCALED})\]~({_SCALED})~({_SCALED})")


def _read_measured(text: str) -> Measurement:
    match = _MEASURED_RE.fullmatch(text)
    if not match:
        raise ValueSyntaxError(
            f"expected a measured result like 28e-2[213e-3,35e-2]~3e-2~1e-4 (median[low,high]~seeds~float path), "
            f"found {text!r}"
        )
    value = Measurement(*(float(part) for part in match.groups()))
    if value.seeds < 0 or value.float_path < 0:
        raise ValueSyntaxError(f"an uncertainty is never negative, found {text!r}")
    if measured_text(value) != text:
        raise ValueSyntaxError(
            f"not written with the digits its uncertainty leaves standing: {text!r} is written {measured_text(value)!r}"
        )
    return value


def _write_measured(value: object) -> str:
    if not isinstance(value, Measurement):
        raise ValueError(f"a measured field holds a Measurement (median, seeds, float path), not {value!r}")
    return measured_text(value)


def _read_text(text: str) -> str:
    if not text or text != text.strip(" ") or "\n" in text:
        raise ValueSyntaxError(f"expected text without leading or trailing spaces, found {text!r}")
    return text


def _write_bool(value: object) -> str:
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise ValueError(f"a boolean field holds true or false, not {value!r}")
    return format_bool(bool(value))


def _write_int(value: object) -> str:
    number = int(value)  # type: ignore[call-overload]  # any value; a non-number raises, as it should
    if number != value or number < 0:
        raise ValueError(f"an integer field holds a non-negative whole number, not {value!r}")
    return str(number)


def _read_shape_brackets(text: str) -> tuple[int, ...]:
    if not (text.startswith("[") and text.endswith("]")) or len(text) < 3:
        raise ValueSyntaxError(f"expected a shape like [2,2], found {text!r}")
    dims: list[int] = []
    offset = 1
    for item in text[1:-1].split(","):
        if not INT_RE.fullmatch(item) or item == "0":
            raise ValueSyntaxError(f"expected a positive dimension, found {item!r}", offset)
        dims.append(int(item))
        offset += len(item) + 1
    return tuple(dims)


def _read_shape_x(text: str) -> tuple[int, ...]:
    dims: list[int] = []
    offset = 0
    for item in text.split("x"):
        if not INT_RE.fullmatch(item) or item == "0":
            raise ValueSyntaxError(f"expected a shape like 2x2, found {text!r}", offset)
        dims.append(int(item))
        offset += len(item) + 1
    return tuple(dims)


def _read_bool(text: str) -> bool:
    if text == "true":
        return True
    if text == "false":
        return False
    raise ValueSyntaxError(f"expected true or false, found {text!r}")


def _read_int(text: str) -> int:
    if not INT_RE.fullmatch(text):
        raise ValueSyntaxError(f"expected a non-negative integer, found {text!r}")
    return int(text)


def _read_name(text: str) -> str:
    if not NAME_RE.fullmatch(text):
        raise ValueSyntaxError(f"expected a name like residual.branch.weight, found {text!r}")
    return text


def _read_names(text: str) -> tuple[str, ...]:
    return _read_items(text, _read_name, start=0)


@dataclass(frozen=True)
class Kind:
    """How one kind of value is read from and written to a trace."""

    name: str
    read: Callable[[str], Any]
    write: Callable[[Any], str]


REAL = Kind("real", _read_real, format_real)
VECTOR = Kind("vector", _read_vector, format_vector)
SHAPE = Kind("shape", _read_shape_brackets, lambda v: format_shape_brackets(tuple(flat(v))))
SHAPE_X = Kind("shape-x", _read_shape_x, lambda v: format_shape_x(tuple(flat(v))))
BOOL = Kind("bool", _read_bool, _write_bool)
SCI = Kind("sci", _read_sci, format_sci)
INT = Kind("int", _read_int, _write_int)
NAME = Kind("name", _read_name, str)
NAMES = Kind("names", _read_names, format_names)
TEXT = Kind("text", _read_text, str)
MEASURED = Kind("measured", _read_measured, _write_measured)


def decimals(places: int) -> Kind:
    """A real written in fixed notation with exactly ``places`` decimals (``REAL`` is six)."""
    if places == 6:
        return REAL
    pattern = re.compile(rf"-?(0|[1-9][0-9]*)\.[0-9]{{{places}}}")
    zero = "-" + format_decimals(0.0, places)

    def read(text: str) -> float:
        if not pattern.fullmatch(text):
            raise ValueSyntaxError(f"expected a real number with exactly {places} decimals, found {text!r}")
        if text == zero:
            raise ValueSyntaxError(f"negative zero is written {zero[1:]}, found {text!r}")
        return float(text)

    return Kind(f"real with {places} decimals", read, lambda v: format_decimals(v, places))


def choice(*words: str) -> Kind:
    """A field whose value is one of ``words`` (a verdict, a category)."""
    allowed = tuple(words)

    def read(text: str) -> str:
        if text not in allowed:
            raise ValueSyntaxError(f"expected one of {', '.join(allowed)}, found {text!r}")
        return text

    def write(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"{value!r} is not one of {', '.join(allowed)}")
        return value

    return Kind(f"one of {'/'.join(allowed)}", read, write)


def literal(word: str) -> Kind:
    """A field whose value must be exactly ``word``."""

    def read(text: str) -> str:
        if text != word:
            raise ValueSyntaxError(f"expected {word!r}, found {text!r}")
        return text

    return Kind(f"literal {word}", read, lambda v: word)


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    attr: str = ""

    @property
    def attribute(self) -> str:
        return self.attr or self.name.replace("-", "_")


def render_record(kind: str, fields: Sequence[Field], obj: object, sep: str = " ") -> str:
    """``KIND name=value ...``, fields joined by ``sep``; a value that would contain ``sep`` is refused."""
    parts = [kind]
    for f in fields:
        written = f.kind.write(getattr(obj, f.attribute))
        if sep in written or "\n" in written:
            raise ValueError(f"{kind}.{f.name}: the value {written!r} contains {sep!r} or a line break")
        parts.append(f"{f.name}={written}")
    return sep.join(parts)


_FIELD_NAME_RE = re.compile(r"[a-z][a-z0-9-]*")


def parse_record(
    line: str, lineno: int, kind: str, fields: Sequence[Field], source: str = "trace", separator: str = " "
) -> dict[str, Any]:
    """Read ``line`` as record ``kind`` with exactly ``fields`` in order; return attribute -> value."""
    head, sep, rest = line.partition(separator)
    if head != kind:
        raise TraceParseError(f"expected a {kind} record, found {head!r}", lineno, 1, source)
    if not sep or not rest:
        raise TraceParseError(f"{kind} record has no fields", lineno, len(head) + 1, source)
    column = len(head) + 2
    tokens = rest.split(separator)
    values: dict[str, Any] = {}
    for i, token in enumerate(tokens):
        if token == "":
            between = "one space" if separator == " " else f"one {separator!r}"
            raise TraceParseError(f"fields are separated by exactly {between}", lineno, column, source)
        name, eq, value = token.partition("=")
        if i >= len(fields):
            raise TraceParseError(f"unexpected extra field {name!r} in {kind}", lineno, column, source)
        expected = fields[i]
        if not eq:
            raise TraceParseError(f"expected field={expected.name}=..., found {token!r}", lineno, column, source)
        if name != expected.name:
            if any(f.name == name for f in fields):
                why = f"field {name!r} is out of order or repeated: expected {expected.name!r} here"
            elif _FIELD_NAME_RE.fullmatch(name):
                why = f"unknown field {name!r} in {kind}: expected {expected.name!r}"
            else:
                why = f"malformed field name {name!r}: expected {expected.name!r}"
            raise TraceParseError(why, lineno, column, source)
        value_column = column + len(name) + 1
        try:
            values[expected.attribute] = expected.kind.read(value)
        except ValueSyntaxError as exc:
            raise TraceParseError(f"field {name!r}: {exc}", lineno, value_column + exc.offset, source) from None
        column += len(token) + 1
    if len(tokens) < len(fields):
        missing = ", ".join(repr(f.name) for f in fields[len(tokens) :])
        raise TraceParseError(f"{kind} record is missing field(s) {missing}", lineno, len(line) + 1, source)
    return values


def split_lines(text: str, source: str = "trace") -> list[str]:
    """Check the whole-text rules (LF only, one final LF, no blank lines or trailing spaces)."""
    if not text:
        raise TraceParseError("the text is empty", 1, 1, source)
    if "\r" in text:
        idx = text.index("\r")
        row = text.count("\n", 0, idx) + 1
        col = idx - (text.rfind("\n", 0, idx) + 1) + 1
        raise TraceParseError("carriage return found: lines end with LF only", row, col, source)
    if not text.endswith("\n"):
        lines = text.split("\n")
        raise TraceParseError("missing final newline", len(lines), len(lines[-1]) + 1, source)
    lines = text[:-1].split("\n")
    for number, line in enumerate(lines, start=1):
        if line == "":
            what = "doubled final newline" if number == len(lines) else "blank line"
            raise TraceParseError(what, number, 1, source)
        if line != line.rstrip(" \t"):
            raise TraceParseError("trailing whitespace", number, len(line.rstrip(" \t")) + 1, source)
        if "\t" in line:
            raise TraceParseError(
                "tab character: fields are separated by one space", number, line.index("\t") + 1, source
            )
    return lines
