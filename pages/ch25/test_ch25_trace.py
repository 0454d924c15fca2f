"""Trace rmsnorm-v1: the course's fourteen lines, exact text, strict parsing with line and column, round trips."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import REALS, CourseTrace

from pages.ch25.trace import Primary, Trace

G = CourseTrace("ch25", Trace)
GOLDEN, parse, render = G.text, G.parse, G.render
test_fresh_trace_is_the_golden_text = G.fresh_test()


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
    meta, primary, ideal, production, near = (
        G.number(p) for p in ("META", "PRIMARY", "SCALE|mode=ideal", "SCALE|mode=production", "SCALE|mode=near-zero")
    )
    batch, proof = G.number("BATCH"), G.number("PROOF")
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
    yield G.swapped_case("scale lines swapped", ideal, production, "max_abs_diff=", "18 decimals")
    yield G.value_case("scale mode out of order", ideal, "mode=ideal", "mode=production", "expected mode=ideal")
    yield "records out of order", G.swapped(batch - 1, batch), batch - 1, 1, "out of order"
    yield (
        "kebab field name",
        G.replaced(G.number("BACKWARD"), "input_gradient=", "input-gradient="),
        G.number("BACKWARD"),
        G.column(G.number("BACKWARD"), "input_gradient="),
        "expected 'input_gradient'",
    )
    yield G.value_case(
        "another provenance token", proof, "trace=rust-authored", "trace=python-authored", "'rust-authored'"
    )
    yield G.value_case("replay mismatch", proof, "replay=bitwise", "replay=mismatch", "'bitwise'")
    yield G.value_case("another axis", batch, "axis=last", "axis=first", "'last'")
    error = G.number("ERROR|case=rank-zero")
    yield G.trailing_space("message with a trailing space", error, "one axis")


CASES = [*G.shared_cases("26-qkv-projections"), *_cases()]
test_parser_rejects_with_line_and_column = G.rejection_test(CASES)


vectors = st.lists(REALS, min_size=1, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(primary=st.tuples(*[vectors] * 6), diff=st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_render_parse_round_trip_property(primary, diff):
    base = parse(GOLDEN)
    ideal = dataclasses.replace(base.scale[0], max_abs_diff=float(format(diff, ".18f")))
    trace = dataclasses.replace(base, primary=Primary(*primary), scale=(ideal, *base.scale[1:]))
    text = render(trace)
    assert parse(text) == trace and render(parse(text)) == text
    assert "-0.000000" not in text
