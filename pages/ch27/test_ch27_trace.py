"""Trace self-attention-v1: the course's twenty-one lines, exact text, strict parsing with line and column."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import Golden, assert_rejects, rejections

from helpers import fresh_trace, golden
from pages.ch27.trace import TERMS, Trace
from site_builder.trace import format_real, layout_of

GOLDEN = golden("ch27")
parse, render = layout_of(Trace).parse, layout_of(Trace).render
G = Golden(GOLDEN)


def test_fresh_trace_is_the_golden_text():
    assert fresh_trace("ch27") == GOLDEN


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
    proof, last = G.number("PROOF"), G.number("NEXT")
    terms = G.column(mix0, "terms=") + 6
    yield "CRLF", GOLDEN.replace("\n", "\r\n"), 1, len(lines[0]) + 1, "carriage return"
    yield "missing final newline", GOLDEN[:-1], last, len(lines[last - 1]) + 1, "final newline"
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
    swapped = "\n".join(lines[: mix0 - 1] + [lines[mix1 - 1], lines[mix0 - 1]] + lines[mix1:])
    yield "mixture rows swapped", swapped, mix0, G.column(mix1, "query=") + 6, "expected query=0"
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
    swapped_errors = "\n".join(
        lines[: batch_err - 1] + [lines[token_err - 1], lines[batch_err - 1]] + lines[token_err:]
    )
    yield "errors swapped", swapped_errors, batch_err, G.column(token_err, "case=") + 5, "expected case=batch-mismatch"
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
    yield G.value_case("another next chapter", last, "chapter=28-causal-masking", "chapter=28-masking", "'28-causal")
    yield "space separator", G.replaced(last, "NEXT|", "NEXT "), last, 1, "unknown record"


CASES = list(_cases())


@rejections(CASES)
def test_parser_rejects_with_line_and_column(text, line, column, words):
    assert text != GOLDEN
    assert_rejects(parse, text, line, column, words, source="golden/trace.txt")


reals = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False).map(
    lambda v: float(format_real(v))
)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(reals, reals), min_size=1, max_size=4))
def test_terms_round_trip_property(rows):
    flat = tuple(v for row in rows for v in row)
    text = TERMS.write(flat)
    assert TERMS.read(text) == flat and text.startswith("[[") and text.count("],[") == len(rows) - 1
    base = parse(GOLDEN)
    trace = dataclasses.replace(
        base, mixture_row=(dataclasses.replace(base.mixture_row[0], terms=flat), base.mixture_row[1])
    )
    assert parse(render(trace)) == trace
