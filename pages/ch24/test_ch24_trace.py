"""Trace v1: exact text, strict parsing with line and column, round trips."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import Golden, assert_rejects, rejections

from helpers import fresh_trace, golden
from pages.ch24.trace import Backward, Forward, StackRow, Trace
from site_builder.trace import format_real, layout_of

GOLDEN = golden("ch24")
parse, render = layout_of(Trace).parse, layout_of(Trace).render

EXPECTED = """\
TRACE residual-connections-v1 BEGIN
CONFIG name=known-residual-linear shape=2 branch-parameter=residual.branch.weight
FORWARD input=[2.000000,-1.000000] branch=[-1.000000,-2.250000] output=[1.000000,-3.250000]
BACKWARD upstream=[1.000000,1.000000] identity=[1.000000,1.000000] branch=[-0.500000,2.250000] input=[0.500000,3.250000]
PARAMETER name=residual.branch.weight shape=2x2 gradient=[2.000000,2.000000,-1.000000,-1.000000]
ZERO-BRANCH output=[2.000000,-1.000000] input-gradient=[1.000000,1.000000] weight-gradient=[2.000000,2.000000,-1.000000,-1.000000] weight-gradient-nonzero=true
SHAPE-ERROR identity=[2,2] branch=[2] broadcastable=true rejected=true
STACK depth=0 plain=[2.000000,-1.000000] residual=[2.000000,-1.000000]
STACK depth=1 plain=[-0.500000,0.250000] residual=[1.500000,-0.750000]
STACK depth=2 plain=[0.125000,-0.062500] residual=[1.125000,-0.562500]
STACK depth=3 plain=[-0.031250,0.015625] residual=[0.843750,-0.421875]
STACK depth=4 plain=[0.007812,-0.003906] residual=[0.632812,-0.316406]
STACK-GRADIENT plain=[0.003906,0.003906] residual=[0.316406,0.316406] parameters=residual.stack.0.branch.weight,residual.stack.1.branch.weight,residual.stack.2.branch.weight,residual.stack.3.branch.weight
GRADCHECK input-checks=2 weight-checks=4 tolerance=0.000002 passed=true
PROOF identity=exact gradient=added parameters=branch-owned broadcast=forbidden
TRACE residual-connections-v1 END
"""


def test_fresh_trace_is_the_specified_text():
    assert fresh_trace("ch24") == EXPECTED == GOLDEN


def test_sixteen_lines_and_text_rules():
    lines = GOLDEN.split("\n")
    assert lines[-1] == "" and len(lines) == 17
    assert "\r" not in GOLDEN and "  " not in GOLDEN
    assert all(line == line.rstrip() for line in lines)


def test_round_trips():
    trace = parse(GOLDEN)
    assert isinstance(trace, Trace)
    assert render(trace) == GOLDEN
    assert parse(render(trace)) == trace


def test_parsed_trace_is_typed():
    trace = parse(GOLDEN)
    assert trace.forward.output == (1.0, -3.25)
    assert trace.config.shape == (2,)
    assert trace.parameter.shape == (2, 2)
    assert trace.shape_error.identity == (2, 2) and trace.shape_error.branch == (2,)
    assert [row.depth for row in trace.stack] == [0, 1, 2, 3, 4]
    assert trace.gradcheck.input_checks == 2 and trace.gradcheck.passed is True
    assert trace.stack_gradient.parameters[3] == "residual.stack.3.branch.weight"


G = Golden(GOLDEN)


# (description, text, expected line, expected column, words in the message)
def _cases():
    lines = GOLDEN.split("\n")
    yield "CRLF", GOLDEN.replace("\n", "\r\n"), 1, len(lines[0]) + 1, "carriage return"
    yield "missing final newline", GOLDEN[:-1], 16, len(lines[15]) + 1, "final newline"
    yield "doubled final newline", GOLDEN + "\n", 17, 1, "doubled final newline"
    yield "blank line", GOLDEN.replace("\nFORWARD", "\n\nFORWARD"), 3, 1, "blank line"
    yield "trailing space", G.replaced(3, "-3.250000]", "-3.250000] "), 3, len(lines[2]) + 1, "trailing whitespace"
    yield (
        "negative zero",
        G.replaced(3, "input=[2.000000", "input=[-0.000000"),
        3,
        G.column(3, "[2.000000") + 1,
        "negative zero",
    )
    yield (
        "five decimals",
        G.replaced(3, "output=[1.000000", "output=[1.00000"),
        3,
        G.column(3, "output=") + 8,
        "six decimals",
    )
    yield "exponent", G.replaced(3, "output=[1.000000", "output=[1e+00"), 3, G.column(3, "output=") + 8, "six decimals"
    yield "NaN", G.replaced(3, "output=[1.000000", "output=[nan"), 3, G.column(3, "output=") + 8, "six decimals"
    yield (
        "leading plus",
        G.replaced(4, "input=[0.500000", "input=[+0.500000"),
        4,
        G.column(4, "input=[") + 7,
        "six decimals",
    )
    yield (
        "space in vector",
        G.replaced(3, "[2.000000,-1.000000]", "[2.000000, -1.000000]"),
        3,
        G.column(3, "-1.000000]"),
        "contains no spaces",
    )
    yield "unknown field", G.replaced(3, "branch=", "brunch="), 3, G.column(3, "branch="), "unknown field"
    yield (
        "fields out of order",
        G.replaced(
            3,
            "branch=[-1.000000,-2.250000] output=[1.000000,-3.250000]",
            "output=[1.000000,-3.250000] branch=[-1.000000,-2.250000]",
        ),
        3,
        G.column(3, "branch="),
        "out of order",
    )
    yield (
        "missing field",
        G.replaced(3, " output=[1.000000,-3.250000]", ""),
        3,
        len(lines[2]) - len(" output=[1.000000,-3.250000]") + 1,
        "missing field",
    )
    yield (
        "extra field",
        G.replaced(14, "passed=true", "passed=true extra=1"),
        14,
        G.column(14, "passed=true") + len("passed=true "),
        "extra field",
    )
    yield "bad bool", G.replaced(14, "passed=true", "passed=yes"), 14, G.column(14, "passed=") + 7, "true or false"
    yield "bad shape", G.replaced(7, "branch=[2]", "branch=[2,]"), 7, G.column(7, "branch=[2]") + 10, "dimension"
    yield "bad x shape", G.replaced(5, "shape=2x2", "shape=2*2"), 5, G.column(5, "shape=") + 6, "shape like 2x2"
    yield (
        "duplicate record",
        GOLDEN.replace(lines[2] + "\n", lines[2] + "\n" + lines[2] + "\n"),
        4,
        1,
        "duplicate FORWARD",
    )
    yield "missing record", GOLDEN.replace(lines[3] + "\n", ""), 4, 1, "missing BACKWARD"
    yield "unknown record", G.replaced(6, "ZERO-BRANCH", "ZERO-BRUNCH"), 6, 1, "unknown record"
    yield "stack depth out of order", G.replaced(9, "depth=1", "depth=2"), 9, 13, "expected depth=1"
    yield "missing END", GOLDEN.replace(lines[15] + "\n", ""), 15, len(lines[14]) + 1, "missing final"
    yield "wrong BEGIN", GOLDEN.replace("v1 BEGIN", "v2 BEGIN"), 1, 1, "first line"
    yield "text after END", GOLDEN + "STACK depth=0\n", 17, 1, "continues after"
    yield "extra STACK", GOLDEN.replace(lines[11] + "\n", lines[11] + "\n" + lines[11] + "\n"), 13, 1, "too many STACK"
    yield (
        "literal PROOF changed",
        G.replaced(15, "gradient=added", "gradient=ignored"),
        15,
        G.column(15, "gradient=") + 9,
        "expected 'added'",
    )
    yield "empty", "", 1, 1, "empty"
    yield (
        "name with space",
        G.replaced(2, "name=known-residual-linear", "name=Known"),
        2,
        G.column(2, "name=") + 5,
        "name",
    )


CASES = list(_cases())


@rejections(CASES)
def test_parser_rejects_with_line_and_column(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="golden/trace.txt")


def test_every_case_is_really_different_from_the_golden():
    assert all(text != GOLDEN for _, text, *_ in CASES)


reals = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False).map(
    lambda v: float(format_real(v))
)
vectors = st.lists(reals, min_size=1, max_size=6).map(tuple)


@settings(max_examples=60, deadline=None)
@given(
    forward=st.tuples(vectors, vectors, vectors),
    upstream=vectors,
    depth_values=st.lists(st.tuples(vectors, vectors), min_size=5, max_size=5),
)
def test_render_parse_round_trip_property(forward, upstream, depth_values):
    base = parse(GOLDEN)
    trace = dataclasses.replace(
        base,
        forward=Forward(*forward),
        backward=Backward(upstream, upstream, upstream, upstream),
        stack=tuple(StackRow(d, p, r) for d, (p, r) in enumerate(depth_values)),
    )
    text = render(trace)
    assert parse(text) == trace
    assert render(parse(text)) == text
    assert "-0.000000" not in text


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9))
def test_format_real_matches_python_six_decimals(v):
    text = format_real(v)
    expected = format(v, ".6f")
    assert text == ("0.000000" if expected == "-0.000000" else expected)
