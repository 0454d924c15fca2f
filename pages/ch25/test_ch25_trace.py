"""Trace rmsnorm-v1: the course's fourteen lines, exact text, strict parsing with line and column, round trips."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import Golden, assert_rejects, rejections

from helpers import fresh_trace, golden
from pages.ch25.trace import Primary, Trace
from site_builder.trace import format_real, layout_of

GOLDEN = golden("ch25")
parse, render = layout_of(Trace).parse, layout_of(Trace).render
G = Golden(GOLDEN)


def test_fresh_trace_is_the_golden_text():
    assert fresh_trace("ch25") == GOLDEN


def test_fourteen_lines_in_the_course_grammar():
    lines = GOLDEN.split("\n")
    assert lines[-1] == "" and len(lines) == 15
    assert [line.split("|", 1)[0] for line in lines[:-1]] == [
        "META",
        "PRIMARY",
        "BACKWARD",
        "SCALE",
        "SCALE",
        "SCALE",
        "ZERO",
        "BATCH",
        "HISTORY",
        "ERROR",
        "ERROR",
        "ERROR",
        "PROOF",
        "NEXT",
    ]
    assert "TRACE" not in GOLDEN
    assert all(" " not in line for line in lines[:-1] if not line.startswith("ERROR|"))  # only messages have spaces
    assert "input_gradient=" in GOLDEN and "input-gradient" not in GOLDEN


def test_each_scale_mode_prints_its_own_decimals():
    modes = [line for line in GOLDEN.splitlines() if line.startswith("SCALE|")]
    decimals = [len(line.rsplit("max_abs_diff=", 1)[1].split(".")[1]) for line in modes]
    assert [m.split("|")[1] for m in modes] == ["mode=ideal", "mode=production", "mode=near-zero"]
    assert decimals == [18, 9, 6]


def test_round_trips_and_is_typed():
    trace = parse(GOLDEN)
    assert render(trace) == GOLDEN
    assert trace.meta.feature_width == 2 and trace.meta.no_decay is True
    assert trace.primary.mean_square == (12.5,)
    assert [s.mode for s in trace.scale] == ["ideal", "production", "near-zero"]
    assert trace.batch.shape == (2, 2) and trace.batch.axis == "last"
    assert [e.case for e in trace.error] == ["rank-zero", "width-mismatch", "zero-energy-epsilon-zero"]
    assert trace.error[1].message == "RMSNorm input feature width must be 2, got 3"
    assert (trace.proof.replay, trace.proof.trace, trace.next.chapter) == (
        "bitwise",
        "rust-authored",
        "26-qkv-projections",
    )


def _cases():
    lines = GOLDEN.split("\n")
    meta, primary, ideal, production, near = (
        G.number(p) for p in ("META", "PRIMARY", "SCALE|mode=ideal", "SCALE|mode=production", "SCALE|mode=near-zero")
    )
    batch, proof, last = G.number("BATCH"), G.number("PROOF"), G.number("NEXT")
    yield "CRLF", GOLDEN.replace("\n", "\r\n"), 1, len(lines[0]) + 1, "carriage return"
    yield "missing final newline", GOLDEN[:-1], last, len(lines[last - 1]) + 1, "final newline"
    yield (
        "negative zero",
        G.replaced(G.number("ZERO"), "output=[0.000000", "output=[-0.000000"),
        G.number("ZERO"),
        G.column(G.number("ZERO"), "output=") + 8,
        "negative zero",
    )
    yield (
        "negative zero, eighteen decimals",
        G.replaced(ideal, "max_abs_diff=0.000000000000000222", "max_abs_diff=-0.000000000000000000"),
        ideal,
        G.column(ideal, "max_abs_diff=") + 13,
        "negative zero",
    )
    yield G.value_case(
        "ideal with six decimals", ideal, "max_abs_diff=0.000000000000000222", "max_abs_diff=0.000000", "18 decimals"
    )
    yield G.value_case(
        "production with six decimals", production, "max_abs_diff=0.000000448", "max_abs_diff=0.000000", "9 decimals"
    )
    yield G.value_case(
        "near-zero with nine decimals", near, "max_abs_diff=0.717566", "max_abs_diff=0.717566171", "six decimals"
    )
    yield (
        "five decimals in a vector",
        G.replaced(primary, "input=[3.000000", "input=[3.00000"),
        primary,
        G.column(primary, "[3.000000") + 1,
        "six decimals",
    )
    yield G.value_case("scientific notation", meta, "epsilon=0.000010", "epsilon=1e-05", "six decimals")
    swapped = "\n".join(lines[: ideal - 1] + [lines[production - 1], lines[ideal - 1]] + lines[production:])
    yield "scale lines swapped", swapped, ideal, G.column(production, "max_abs_diff=") + 13, "18 decimals"
    yield G.value_case("scale mode out of order", ideal, "mode=ideal", "mode=production", "expected mode=ideal")
    records = "\n".join(lines[: batch - 2] + [lines[batch - 1], lines[batch - 2]] + lines[batch:])
    yield "records out of order", records, batch - 1, 1, "out of order"
    yield (
        "kebab field name",
        G.replaced(G.number("BACKWARD"), "input_gradient=", "input-gradient="),
        G.number("BACKWARD"),
        G.column(G.number("BACKWARD"), "input_gradient="),
        "expected 'input_gradient'",
    )
    yield "space separator", G.replaced(last, "NEXT|", "NEXT "), last, 1, "unknown record"
    yield "bookend line", "TRACE rmsnorm-v1 BEGIN\n" + GOLDEN, 1, 1, "unknown record"
    yield G.value_case(
        "another provenance token", proof, "trace=rust-authored", "trace=python-authored", "'rust-authored'"
    )
    yield G.value_case("replay mismatch", proof, "replay=bitwise", "replay=mismatch", "'bitwise'")
    yield G.value_case("another axis", batch, "axis=last", "axis=first", "'last'")
    yield G.value_case(
        "another next chapter", last, "chapter=26-qkv-projections", "chapter=27-attention", "'26-qkv-projections'"
    )
    error = G.number("ERROR|case=rank-zero")
    yield (
        "message with a trailing space",
        G.replaced(error, "one axis", "one axis "),
        error,
        len(lines[error - 1]) + 1,
        "trailing whitespace",
    )


CASES = list(_cases())


@rejections(CASES)
def test_parser_rejects_with_line_and_column(text, line, column, words):
    assert text != GOLDEN
    assert_rejects(parse, text, line, column, words, source="golden/trace.txt")


reals = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False).map(
    lambda v: float(format_real(v))
)
vectors = st.lists(reals, min_size=1, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(primary=st.tuples(*[vectors] * 6), diff=st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_render_parse_round_trip_property(primary, diff):
    base = parse(GOLDEN)
    ideal = dataclasses.replace(base.scale[0], max_abs_diff=float(format(diff, ".18f")))
    trace = dataclasses.replace(base, primary=Primary(*primary), scale=(ideal, *base.scale[1:]))
    text = render(trace)
    assert parse(text) == trace and render(parse(text)) == text
    assert "-0.000000" not in text
