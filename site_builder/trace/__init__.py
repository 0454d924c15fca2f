"""Shared text rules for traces and reports: number formatting, strict parsing, records declared once."""

from .declare import (
    Bool,
    Choice,
    Decimals,
    Int,
    Name,
    Names,
    Real,
    Sci,
    Shape,
    ShapeX,
    Text,
    Vector,
    Word,
    layout_of,
    lines,
    record,
    trace_format,
)
from .format import (
    BOOL,
    INT,
    NAME,
    NAMES,
    REAL,
    SCI,
    SHAPE,
    SHAPE_X,
    TEXT,
    VECTOR,
    Field,
    Kind,
    TraceParseError,
    choice,
    decimals,
    literal,
    parse_record,
    render_record,
    split_lines,
)
from .layout import LaidOut, Record, TraceLayout
from .numbers import (
    NonFiniteValueError,
    format_bool,
    format_decimals,
    format_real,
    format_sci,
    format_shape_brackets,
    format_shape_x,
    format_vector,
    short_form,
)
from .report import KeyValueReport

__all__ = [
    "BOOL", "INT", "NAME", "NAMES", "REAL", "SCI", "SHAPE", "SHAPE_X", "TEXT", "VECTOR",
    "Bool", "Choice", "Decimals", "Field", "Int", "KeyValueReport", "Kind", "LaidOut", "Name", "Names",
    "NonFiniteValueError", "Real", "Record", "Sci", "Shape", "ShapeX", "Text", "TraceLayout", "TraceParseError",
    "Vector", "Word", "choice", "decimals", "format_bool", "format_decimals", "format_real", "format_sci",
    "format_shape_brackets", "format_shape_x", "format_vector", "layout_of", "lines", "literal", "parse_record",
    "record", "render_record", "short_form", "split_lines", "trace_format",
]
