"""Trace qkv-projections-v1: the course's seventeen lines, exact text, strict parsing with line and column."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import REALS, CourseTrace

from pages.ch26.trace import Input, Trace

G = CourseTrace("ch26", Trace)
GOLDEN, parse, render = G.text, G.parse, G.render
test_fresh_trace_is_the_golden_text = G.fresh_test()


def test_seventeen_lines_in_the_course_grammar():
    lines = GOLDEN.split("\n")
    assert lines[-1] == "" and len(lines) == 18
    assert [line.split("|", 1)[0] for line in lines[:-1]] == [
        "META",
        "INPUT",
        *["PROJECTION"] * 3,
        "BACKWARD",
        *["WEIGHT_GRADIENT"] * 3,
        "INDEPENDENCE",
        "EMPTY_SHAPES",
        *["ERROR"] * 3,
        "HISTORY",
        "PROOF",
        "NEXT",
    ]
    # The course removed both tokens when it published the chapter; its test asserts their absence.
    assert "rust-authored" not in GOLDEN and "site_arithmetic" not in GOLDEN
    assert all(" " not in line for line in lines[:-1] if not line.startswith("ERROR|"))  # only messages have spaces


def test_round_trips_and_is_typed():
    trace = parse(GOLDEN)
    assert render(trace) == GOLDEN
    assert trace.meta.input_shape == (1, 2, 3) and trace.meta.parameter_count == 18
    assert trace.meta.branch_order == ("query", "key", "value") and trace.meta.bias is False
    assert [(p.role, p.tensor) for p in trace.projection] == [("query", "Q"), ("key", "K"), ("value", "V")]
    assert trace.projection[2].output == (3.0, -3.0, 1.0, 3.0)
    assert trace.empty_shapes.batch_input == (0, 2, 3) and trace.empty_shapes.token_value == (2, 0, 2)
    assert trace.independence.key_output == "bitwise-unchanged"
    assert [e.case for e in trace.error] == ["rank-two", "input-width", "branch-mismatch"]
    assert trace.error[0].message == "Q/K/V input must have rank three [batch, tokens, model_width], got rank 2"
    assert (trace.proof.replay, trace.proof.names, trace.proof.initialization) == ("bitwise", "unique", "transactional")
    assert trace.next.chapter == "27-self-attention"


def _cases():
    lines = GOLDEN.split("\n")
    meta, inp, query, key = (G.number(p) for p in ("META", "INPUT", "PROJECTION|role=query", "PROJECTION|role=key"))
    empty, independence, history = G.number("EMPTY_SHAPES"), G.number("INDEPENDENCE"), G.number("HISTORY")
    proof = G.number("PROOF")
    yield (
        "negative zero",
        G.replaced(inp, ",0.000000,", ",-0.000000,"),
        inp,
        G.column(inp, ",0.000000,") + 1,
        "negative zero",
    )
    yield (
        "five decimals in a vector",
        G.replaced(inp, "values=[1.000000", "values=[1.00000"),
        inp,
        G.column(inp, "[1.000000") + 1,
        "six decimals",
    )
    yield (
        "a zero in the input shape",
        G.replaced(meta, "input_shape=[1,2,3]", "input_shape=[0,2,3]"),
        meta,
        G.column(meta, "input_shape=") + 13,
        "positive dimension",
    )
    yield G.value_case(
        "branch order changed", meta, "branch_order=query,key,value", "branch_order=query,value,key", "out of order"
    )
    yield G.value_case("another tensor for the query", query, "tensor=Q", "tensor=K", "expected tensor=Q")
    yield G.value_case("a lower-case tensor", query, "tensor=Q", "tensor=q", "one of Q, K, V")
    yield G.swapped_case("projections swapped", query, key, "role=", "expected role=query")
    yield (
        "a shape with a leading zero",
        G.replaced(empty, "batch_input=[0,2,3]", "batch_input=[00,2,3]"),
        empty,
        G.column(empty, "batch_input=") + 13,
        "zero allowed",
    )
    yield (
        "a negative dimension",
        G.replaced(empty, "token_input=[2,0,3]", "token_input=[2,-1,3]"),
        empty,
        G.column(empty, "token_input=") + 15,
        "zero allowed",
    )
    yield G.value_case(
        "an unknown verdict", independence, "key_output=bitwise-unchanged", "key_output=unchanged", "one of"
    )
    error = G.number("ERROR|case=rank-two")
    yield G.trailing_space("message with a trailing space", error, "got rank 2")
    yield G.value_case("error case out of order", error, "case=rank-two", "case=input-width", "expected case=rank-two")
    yield G.value_case(
        "another reading of history", history, "mapping=retrospective", "mapping=literal", "'retrospective'"
    )
    yield G.value_case("replay mismatch", proof, "replay=bitwise", "replay=mismatch", "'bitwise'")
    yield (
        "the removed provenance token",
        G.replaced(proof, "initialization=transactional", "initialization=transactional|trace=rust-authored"),
        proof,
        len(lines[proof - 1]) + 2,
        "extra field",
    )
    yield (
        "kebab field name",
        G.replaced(G.number("BACKWARD"), "input_gradient=", "input-gradient="),
        G.number("BACKWARD"),
        G.column(G.number("BACKWARD"), "|input_gradient=") + 1,
        "expected 'input_gradient'",
    )


CASES = [*G.shared_cases("27-self-attention"), *_cases()]
test_parser_rejects_with_line_and_column = G.rejection_test(CASES)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(REALS, min_size=1, max_size=8).map(tuple), shape=st.lists(st.integers(0, 9), min_size=1))
def test_render_parse_round_trip_property(values, shape):
    base = parse(GOLDEN)
    empty = dataclasses.replace(base.empty_shapes, batch_input=tuple(shape))
    trace = dataclasses.replace(base, input=Input(values), empty_shapes=empty)
    text = render(trace)
    assert parse(text) == trace and render(parse(text)) == text
    assert "-0.000000" not in text
