"""The shared trace layout on a small made-up version: declaration rules, keys, strict reading."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from trace_cases import Golden, assert_rejects, rejections

from site_builder.trace import (
    INT,
    REAL,
    Choice,
    Field,
    Int,
    LaidOut,
    NonFiniteValueError,
    Real,
    Record,
    Text,
    TraceLayout,
    Vector,
    decimals,
    layout_of,
    lines,
    record,
    trace_format,
)


@dataclass(frozen=True)
class Head:
    size: int


@dataclass(frozen=True)
class Row:
    step: int
    value: float


@dataclass(frozen=True)
class Toy:
    head: Head
    rows: tuple[Row, ...]


HEAD = Record("HEAD", Head, "head", (Field("size", INT),))
ROWS = Record(
    "ROW", Row, "rows", (Field("step", INT), Field("value", REAL)), index=("step",), lines=({"step": 1}, {"step": 2})
)
LAYOUT = TraceLayout("toy-v1", Toy, (HEAD, ROWS))
TEXT = "TRACE toy-v1 BEGIN\nHEAD size=2\nROW step=1 value=0.500000\nROW step=2 value=-1.250000\nTRACE toy-v1 END\n"
TOY = Toy(Head(2), (Row(1, 0.5), Row(2, -1.25)))


def test_reads_writes_and_names_every_field():
    assert LAYOUT.parse(TEXT) == TOY and LAYOUT.render(TOY) == TEXT
    assert LAYOUT.facts(TOY) == {
        "HEAD.size": 2,
        "ROW[1].step": 1,
        "ROW[1].value": 0.5,
        "ROW[2].step": 2,
        "ROW[2].value": -1.25,
    }
    assert LAYOUT.keys() == tuple(LAYOUT.facts(TOY))
    assert (LAYOUT.begin, LAYOUT.end) == ("TRACE toy-v1 BEGIN", "TRACE toy-v1 END")


G = Golden(TEXT)
CASES = [
    ("duplicate index", G.replaced(4, "step=2", "step=1"), 4, 10, "duplicate ROW[1] record: expected step=2 here"),
    ("index out of order", G.replaced(3, "step=1", "step=2"), 3, 10, "ROW step=2 out of order: expected step=1 here"),
    (
        "duplicate record",
        G.replaced(3, "ROW step=1 value=0.500000", "HEAD size=2"),
        3,
        1,
        "duplicate HEAD record: expected ROW",
    ),
    (
        "past the last line",
        TEXT.replace("TRACE toy-v1 END", "ROW step=3 value=0.000000"),
        5,
        1,
        "expected 'TRACE toy-v1 END'",
    ),
    ("missing", G.replaced(2, "HEAD size=2", "ROW step=1 value=0.500000"), 2, 1, "missing HEAD record before it"),
    ("unknown", G.replaced(2, "HEAD", "TAIL"), 2, 1, "unknown record 'TAIL': expected HEAD"),
]


@rejections(CASES)
def test_rejects_with_line_and_column(text, line, column, words):
    assert_rejects(LAYOUT.parse, text, line, column, words, source="toy")


@pytest.mark.parametrize(
    "build,words",
    [
        (lambda: Record("ROW", Row, "rows", ROWS.fields, lines=({}, {})), "no index fields"),
        (
            lambda: Record("ROW", Row, "rows", ROWS.fields, index=("step",), lines=({"step": 1}, {"step": 1})),
            "both ROW[1]",
        ),
        (lambda: Record("ROW", Row, "rows", ROWS.fields, index=("step",), lines=({"value": 1.0},)), "does not fix"),
        (lambda: Record("ROW", Row, "rows", ROWS.fields, index=("step",), lines=({"step": 1.5},)), "whole number"),
        (
            lambda: Record(
                "ROW",
                Row,
                "rows",
                (Field("step", INT), Field("value", decimals(2))),
                index=("step",),
                lines=({"step": 1, "value": 0.125},),
            ),
            "reads back",
        ),
        (lambda: TraceLayout("toy-v1", Toy, (HEAD,)), "Toy has"),
        (lambda: TraceLayout("toy-v1", Toy, (HEAD, ROWS, HEAD)), "declared twice"),
    ],
)
def test_a_layout_that_could_not_be_read_back_is_refused(build, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        build()


@dataclass(frozen=True)
class NamedToy(LaidOut):
    head: Head
    rows: tuple[Row, ...]


NAMED_LAYOUT = TraceLayout("toy-v1", NamedToy, (HEAD, ROWS))


def test_a_laid_out_trace_names_its_own_fields_with_its_layout():
    assert NamedToy.layout is NAMED_LAYOUT
    assert NamedToy(TOY.head, TOY.rows).facts() == LAYOUT.facts(TOY)
    with pytest.raises(ValueError, match=re.escape("NamedToy is laid out by toy-v1 already")):
        TraceLayout("toy-v2", NamedToy, (HEAD, ROWS))


# ------------------------------------------------------------------ declared once, from annotations
@record("POINT")
class Point:
    index_value: Int
    coordinates: Vector


@record("SCALE", index="mode")
class Scale:
    mode: Choice("wide", "fine")
    difference: Real
    note: Text


@trace_format("pipe-v1", separator="|", bookends=False, field_names="snake")
class PipeTrace:
    point: Point
    scales: tuple[Scale, ...] = lines({"mode": "wide"}, {"mode": "fine", "difference": decimals(12)})


PIPE_TEXT = (
    "POINT|index_value=3|coordinates=[1.000000,-0.500000]\n"
    "SCALE|mode=wide|difference=0.250000|note=a note, with spaces\n"
    "SCALE|mode=fine|difference=0.000000000001|note=tiny\n"
)


def test_a_declared_trace_reads_writes_and_names_its_fields():
    trace = PipeTrace.layout.parse(PIPE_TEXT)
    assert trace == PipeTrace(
        Point(3, (1.0, -0.5)), (Scale("wide", 0.25, "a note, with spaces"), Scale("fine", 1e-12, "tiny"))
    )
    assert PipeTrace.layout.render(trace) == PIPE_TEXT
    assert trace.facts()["SCALE[fine].difference"] == 1e-12
    assert PipeTrace.layout.keys()[0] == "POINT.index_value"
    assert PipeTrace.layout.lines == 3


def test_full_precision_values_are_rounded_only_when_written():
    import numpy as np

    trace = PipeTrace(
        Point(3, np.array([[1.0000004, -0.5]])), (Scale("wide", 0.1 + 0.2, "x"), Scale("fine", 1e-12, "y"))
    )
    assert PipeTrace.layout.render(trace).splitlines()[:2] == [
        "POINT|index_value=3|coordinates=[1.000000,-0.500000]",
        "SCALE|mode=wide|difference=0.300000|note=x",
    ]


def test_a_nan_is_refused_with_its_key_and_a_separator_in_text_is_refused():
    nan = PipeTrace(Point(3, (1.0, float("nan"))), (Scale("wide", 0.0, "x"), Scale("fine", 0.0, "y")))
    with pytest.raises(NonFiniteValueError, match=re.escape("POINT.coordinates")):
        PipeTrace.layout.render(nan)
    piped = PipeTrace(Point(3, (1.0,)), (Scale("wide", 0.0, "a|b"), Scale("fine", 0.0, "y")))
    with pytest.raises(ValueError, match="contains"):
        PipeTrace.layout.render(piped)


@rejections(
    [
        (
            "per-line decimals",
            PIPE_TEXT.replace("difference=0.000000000001", "difference=0.000000"),
            3,
            28,
            "12 decimals",
        ),
        ("doubled separator", PIPE_TEXT.replace("POINT|index", "POINT||index"), 1, 7, "exactly one '|'"),
        ("a line too many", PIPE_TEXT + "SCALE|mode=fine|difference=0.000000000001|note=x\n", 4, 1, "continues after"),
    ]
)
def test_a_declared_trace_is_read_strictly(text, line, column, words):
    assert_rejects(PipeTrace.layout.parse, text, line, column, words, source="pipe")


def test_declaration_mistakes_are_named():
    with pytest.raises(TypeError, match="annotate it with a value kind"):

        @record("BAD")
        class Bad:
            value: float

    with pytest.raises(TypeError, match="declares no index field"):

        @trace_format("bad-v1")
        class BadTrace:
            points: tuple[Point, ...] = lines({"index_value": 1})


# ------------------------------------------------------------------ one kind, lines of different fields
@record("FAULT", index="case")
class RankFault:
    case: Text
    rank: Int


@record("FAULT", index="case")
class SizeFault:
    case: Text
    query: Int
    key: Int


@trace_format("faults-v1", separator="|", bookends=False)
class Faults:
    rank: tuple[RankFault, ...] = lines(case=["rank"])
    size: tuple[SizeFault, ...] = lines(case=["size"])


FAULTS_TEXT = "FAULT|case=rank|rank=2\nFAULT|case=size|query=1|key=2\n"


def test_one_kind_may_print_lines_of_different_fields_each_under_its_own_key():
    faults = layout_of(Faults).parse(FAULTS_TEXT)
    assert faults == Faults((RankFault("rank", 2),), (SizeFault("size", 1, 2),))
    assert layout_of(Faults).render(faults) == FAULTS_TEXT
    assert list(faults.facts()) == [
        "FAULT[rank].case",
        "FAULT[rank].rank",
        "FAULT[size].case",
        "FAULT[size].query",
        "FAULT[size].key",
    ]
    swapped = "FAULT|case=size|query=1|key=2\nFAULT|case=rank|rank=2\n"
    assert_rejects(layout_of(Faults).parse, swapped, 1, 17, "unknown field", source="t")


def test_a_shared_kind_needs_index_fields_and_keys_of_its_own():
    with pytest.raises(ValueError, match="declared twice"):
        TraceLayout("toy-v1", Toy, (HEAD, Record("HEAD", Row, "rows", ROWS.fields)))
    with pytest.raises(ValueError, match="share a key"):
        TraceLayout(
            "toy-v1",
            Toy,
            (Record("ROW", Head, "head", (Field("step", INT),), index=("step",), lines=({"step": 1},)), ROWS),
        )
