"""Shared text rules for traces and reports: number formatting, strict parsing, whole-trace layouts."""

from .format import (
    BOOL,
    INT,
    NAME,
    NAMES,
    REAL,
    SCI,
    SHAPE,
    SHAPE_X,
    VECTOR,
    Field,
    Kind,
    TraceParseError,
    choice,
    literal,
    parse_record,
    render_record,
    split_lines,
)
from .layout import LaidOut, Record, TraceLayout
from .numbers import (
    NonFiniteValueError,
    format_bool,
    format_real,
    format_sci,
    format_shape_brackets,
    format_shape_x,
    format_vector,
    short_form,
)

__all__ = [
    "BOOL", "INT", "NAME", "NAMES", "REAL", "SCI", "SHAPE", "SHAPE_X", "VECTOR",
    "Field", "Kind", "LaidOut", "NonFiniteValueError", "Record", "TraceLayout", "TraceParseError",
    "choice", "format_bool", "format_real", "format_sci", "format_shape_brackets", "format_shape_x", "format_vector",
    "literal", "parse_record", "render_record", "short_form", "split_lines",
]
