"""The shared trace layout on a small made-up version: declaration rules, keys, strict reading."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from site_builder.trace import INT, REAL, Field, LaidOut, Record, TraceLayout

from trace_cases import Golden, assert_rejects, rejections


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
        "HEAD.size": 2, "ROW[1].step": 1, "ROW[1].value": 0.5, "ROW[2].step": 2, "ROW[2].value": -1.25
    }
    assert LAYOUT.keys() == tuple(LAYOUT.facts(TOY))
    assert (LAYOUT.begin, LAYOUT.end) == ("TRACE toy-v1 BEGIN", "TRACE toy-v1 END")


G = Golden(TEXT)
CASES = [
    ("duplicate index", G.replaced(4, "step=2", "step=1"), 4, 10, "duplicate ROW[1] record: expected step=2 here"),
    ("index out of order", G.replaced(3, "step=1", "step=2"), 3, 10, "ROW step=2 out of order: expected step=1 here"),
    ("duplicate record", G.replaced(3, "ROW step=1 value=0.500000", "HEAD size=2"), 3, 1, "duplicate HEAD record: expected ROW"),
    ("past the last line", TEXT.replace("TRACE toy-v1 END", "ROW step=3 value=0.000000"), 5, 1, "expected 'TRACE toy-v1 END'"),
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
        (lambda: Record("ROW", Row, "rows", ROWS.fields, index=("step",), lines=({"step": 1}, {"step": 1})), "both ROW[1]"),
        (lambda: Record("ROW", Row, "rows", ROWS.fields, index=("step",), lines=({"value": 1.0},)), "does not fix"),
        (lambda: Record("ROW", Row, "rows", ROWS.fields, index=("step",), lines=({"step": 1.5},)), "reads back"),
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
