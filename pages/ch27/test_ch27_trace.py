"""Trace self-attention-v1: the course's twenty-one lines, exact text, strict parsing with line and column."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import REALS, CourseTrace

from pages.ch27.trace import TERMS, Trace

G = CourseTrace("ch27", Trace)
GOLDEN, parse, render = G.text, G.parse, G.render
test_fresh_trace_is_the_golden_text = G.fresh_test()


def test_twenty_one_lines_in_the_course_grammar():
    lines = GOLDEN.split("\n")
    assert lines[-1] == "" and len(lines) == 22
    assert [line.split("|", 1)[0] for line in lines[:-1]] == [
        "META",
        "QUERY",
        "KEY",
        "VALUE",
        "DOT_PRODUCTS",
        "SCALED_SCORES",
        "PROBABILITY_ROW",
        "PROBABILITY_ROW",
        "MIXTURE_ROW",
        "MIXTURE_ROW",
        "BACKWARD",
        "BATCH_SHAPE",
        "SINGLE_TOKEN",
        *["ERROR"] * 5,
        "HISTORY",
        "PROOF",
        "NEXT",
    ]
    assert "rust-authored" not in GOLDEN and "site_arithmetic" not in GOLDEN and " " not in GOLDEN


def test_round_trips_and_is_typed():
    trace = parse(GOLDEN)
    assert render(trace) == GOLDEN
    assert trace.meta.scale == 0.707107 and trace.meta.masked is False and trace.meta.softmax_axis == "key"
    assert trace.mixture_row[0].terms == (0.042498, -0.042498, 0.985834, 2.957502)
    assert [row.query for row in trace.probability_row] == [0, 1]
    assert trace.rank_error[0].operand == "query" and trace.rank_error[0].rank == 2
    assert [(e.case, e.query, e.key, e.value) for e in trace.count_error] == [
        ("batch-mismatch", 1, 2, 1),
        ("token-mismatch", 2, 3, 2),
    ]
    assert trace.proof.row_sum_tolerance == 1e-12 and trace.next.chapter == "28-causal-masking"
    facts = trace.facts()
    assert facts["ERROR[query-key-width].key"] == 3 and facts["ERROR[empty-tokens].tokens"] == 0


def _cases():
    lines = GOLDEN.split("\n")
    meta, mix0, mix1 = G.number("META"), G.number("MIXTURE_ROW|query=0"), G.number("MIXTURE_ROW|query=1")
    batch_err, token_err = G.number("ERROR|case=batch-mismatch"), G.number("ERROR|case=token-mismatch")
    proof = G.number("PROOF")
    terms = G.column(mix0, "terms=") + 6
    yield G.value_case("scale with seven decimals", meta, "scale=0.707107", "scale=0.7071068", "six decimals")
    yield G.value_case("masked", meta, "masked=false", "masked=true", "expected masked=false")
    yield G.value_case("another softmax axis", meta, "softmax_axis=key", "softmax_axis=query", "'key'")
    yield (
        "terms as a flat vector",
        G.replaced(
            mix0, "terms=[[0.042498,-0.042498],[0.985834,2.957502]]", "terms=[0.042498,-0.042498,0.985834,2.957502]"
        ),
        mix0,
        terms,
        "expected rows",
    )
    yield (
        "a term row of three",
        G.replaced(mix0, "[0.985834,2.957502]]", "[0.985834,2.957502,1.000000]]"),
        mix0,
        G.column(mix0, "[0.985834"),
        "holds 2 values",
    )
    yield (
        "five decimals in a term",
        G.replaced(mix0, "[[0.042498,", "[[0.04249,"),
        mix0,
        terms + 2,
        "six decimals",
    )
    yield (
        "negative zero in a term",
        G.replaced(mix1, "[0.000849,", "[-0.000000,"),
        mix1,
        G.column(mix1, "[0.000849,") + 1,
        "negative zero",
    )
    yield G.swapped_case("mixture rows swapped", mix0, mix1, "query=", "expected query=0")
    yield G.value_case(
        "an error kind for another case",
        batch_err,
        "kind=batch-mismatch",
        "kind=token-mismatch",
        "expected kind=batch-mismatch",
    )
    yield (
        "a message where the course prints none",
        G.replaced(token_err, "rejected=true", "rejected=true|message=token counts differ"),
        token_err,
        len(lines[token_err - 1]) + 2,
        "extra field",
    )
    yield G.swapped_case("errors swapped", batch_err, token_err, "case=", "expected case=batch-mismatch")
    rank = G.number("ERROR|case=query-rank")
    yield G.value_case("a rank error for the key", rank, "operand=query", "operand=key", "expected operand=query")
    yield G.value_case("a negative rank", rank, "rank=2", "rank=-2", "non-negative integer")
    yield (
        "the tolerance with six decimals",
        G.replaced(proof, "row_sum_tolerance=0.000000000001", "row_sum_tolerance=0.000000"),
        proof,
        G.column(proof, "row_sum_tolerance=") + 18,
        "12 decimals",
    )
    yield G.value_case("masked proof", proof, "unmasked=true", "unmasked=false", "expected unmasked=true")


CASES = [*G.shared_cases("28-causal-masking"), *_cases()]
test_parser_rejects_with_line_and_column = G.rejection_test(CASES)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(REALS, REALS), min_size=1, max_size=4))
def test_terms_round_trip_property(rows):
    flat = tuple(v for row in rows for v in row)
    text = TERMS.write(flat)
    assert TERMS.read(text) == flat and text.startswith("[[") and text.count("],[") == len(rows) - 1
    base = parse(GOLDEN)
    trace = dataclasses.replace(
        base, mixture_row=(dataclasses.replace(base.mixture_row[0], terms=flat), base.mixture_row[1])
    )
    assert parse(render(trace)) == trace
