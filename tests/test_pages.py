"""What every discovered page shares: goldens, strict parsing, facts, declared metadata, the command line.

Nothing here lists the pages: each test runs over every folder under pages/,
so a new page (``site-builder new``) is covered the day it appears.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_cases import assert_rejects

from helpers import PAGES, PROJECT, SLUGS, golden, layout, page
from site_builder.cli import main as cli_main
from site_builder.trace import SCI, NonFiniteValueError, TraceParseError, choice, format_sci

REPORTS = [p.slug for p in PAGES if p.has_report]


# ------------------------------------------------------------------ goldens and round trips
@pytest.mark.parametrize("slug", SLUGS)
def test_golden_trace_equals_a_fresh_run(slug, runs):
    assert runs[slug].trace_text == golden(slug)


@pytest.mark.parametrize("slug", REPORTS)
def test_golden_report_equals_a_fresh_run_and_parses(slug, runs):
    assert runs[slug].report_text == golden(slug, "report")
    keys = PROJECT.module(page(slug), "report").REPORT.parse(golden(slug, "report"))
    assert list(keys) == list(PROJECT.module(page(slug), "report").REPORT.keys)


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_two_fresh_processes_compute_the_same_bits_with_one_or_two_blas_threads(slug, runs, two_thread_digests):
    # The page's run came from a fixture interpreter with one BLAS thread, as every build's does; the digest covers
    # every value at full precision, before it was rounded into the trace's text.
    assert runs[slug].digest == two_thread_digests.of(slug)


@pytest.mark.parametrize("slug", SLUGS)
def test_round_trips(slug, runs):
    text, lay = golden(slug), layout(slug)
    trace = lay.parse(text)
    assert lay.render(trace) == text
    assert trace == runs[slug].trace
    assert lay.parse(lay.render(runs[slug].trace)) == runs[slug].trace


@pytest.mark.parametrize("slug", SLUGS)
def test_text_rules(slug):
    text = golden(slug)
    lines = text.split("\n")
    lay = layout(slug)
    if lay.bookends:
        assert lines[0] == lay.begin and lines[-2] == lay.end
    assert len(lines) - 1 == lay.lines
    assert lines[-1] == "" and "" not in lines[:-1]
    assert "\r" not in text and "\t" not in text
    assert all(line == line.rstrip() for line in lines)
    assert not re.search(r"(?<![0-9])-0\.0+(?:e[+-]00)?(?![0-9])", text)  # no negative zero, fixed or scientific
    assert "nan" not in text.lower() and "inf" not in text.lower()


@pytest.mark.parametrize("slug", SLUGS)
def test_every_trace_field_is_a_fact_and_derived_values_are_finite(slug, runs):
    facts = runs[slug].facts
    trace_facts = layout(slug).parse(golden(slug)).facts()
    assert tuple(trace_facts) == layout(slug).keys()
    assert trace_facts and all(facts[k] == v for k, v in trace_facts.items())
    for key, value in runs[slug].derived.items():
        assert not key.startswith(("PAGE", "CITE.", "LIT.")), key
        for v in value if isinstance(value, (list, tuple)) else (value,):
            assert not isinstance(v, float) or math.isfinite(v), key


@pytest.mark.parametrize("slug", SLUGS)
def test_what_the_page_folder_declares_is_a_fact(slug, runs):
    p, facts = page(slug), runs[slug].facts
    if p.chapter is not None:
        assert facts["PAGE.chapter"] == p.chapter
    for c in p.citations:
        assert facts[f"CITE.{c.id}.year"] == c.year
        # A title with a number in it ("The Llama 3 Herd of Models") is shown as a verified fact, like the year.
        assert facts.get(f"CITE.{c.id}.title") == (c.title if any(ch.isdigit() for ch in c.title) else None)
    for lit in p.literals:
        assert facts[f"LIT.{lit.id}"] == lit.value
    assert p.title and p.url.endswith("/") and p.page_path == p.url + "index.md"


def test_pages_come_in_their_declared_order_with_unique_urls():
    orders = [p.order for p in PAGES]
    assert orders == sorted(orders)
    assert len({p.url for p in PAGES}) == len(PAGES)
    assert SLUGS[0] == "ch24"


# ------------------------------------------------------------------ strict parsing, shared rules
def _join(lines):
    return "\n".join(lines)


def _generic_cases(slug):
    """(description, text, line, column, words) for rules every trace follows."""
    text, lines = golden(slug), golden(slug).split("\n")
    lay = layout(slug)
    sep = lay.separator
    n = len(lines) - 1  # lines in the text (the last split item is the empty string after the final LF)
    first = 1 if lay.bookends else 0  # the index of the first record line
    record = lines[first]
    kind = record.split(sep, 1)[0]
    yield "CRLF", text.replace("\n", "\r\n"), 1, len(lines[0]) + 1, "carriage return"
    yield "missing final newline", text[:-1], n, len(lines[n - 1]) + 1, "final newline"
    yield "doubled final newline", text + "\n", n + 1, 1, "doubled final newline"
    yield "blank line", _join(lines[: first + 1] + [""] + lines[first + 1 :]), first + 2, 1, "blank line"
    yield (
        "trailing space",
        _join(lines[:first] + [record + " "] + lines[first + 1 :]),
        first + 1,
        len(record) + 1,
        "trailing whitespace",
    )
    yield (
        "unknown record",
        _join(lines[:first] + ["MYSTERY" + sep + record.split(sep, 1)[1]] + lines[first + 1 :]),
        first + 1,
        1,
        "unknown record",
    )
    yield "text after the end", text + record + "\n", n + 1, 1, "continues after"
    name = record.split(sep)[1].split("=")[0]
    column = len(kind) + 2
    yield (
        "unknown field",
        _join(lines[:first] + [record.replace(f"{sep}{name}=", f"{sep}zzz=", 1)] + lines[first + 1 :]),
        first + 1,
        column,
        "unknown field",
    )
    yield (
        "extra field",
        _join(lines[:first] + [record + f"{sep}extra=1"] + lines[first + 1 :]),
        first + 1,
        len(record) + 2,
        "extra field",
    )
    cut = record.rsplit(sep, 1)[0]
    yield "missing field", _join(lines[:first] + [cut] + lines[first + 1 :]), first + 1, len(cut) + 1, "missing field"
    fields = record.split(sep)
    if len(fields) > 2:
        swapped = sep.join([fields[0], fields[2], fields[1], *fields[3:]])
        yield (
            "fields out of order",
            _join(lines[:first] + [swapped] + lines[first + 1 :]),
            first + 1,
            column,
            "out of order",
        )
    doubled = record.replace(sep, sep + sep, 1)
    yield "doubled separator", _join(lines[:first] + [doubled] + lines[first + 1 :]), first + 1, column, "exactly one"
    yield "missing record", _join(lines[:first] + lines[first + 1 :]), first + 1, 1, "expected " + kind
    yield "empty", "", 1, 1, "empty"
    if lay.bookends:
        yield "wrong BEGIN", text.replace(f"{lay.version} BEGIN", "v0 BEGIN"), 1, 1, "first line"
        yield "missing END", _join(lines[: n - 1] + [""]), n - 1, len(lines[n - 2]) + 1, "missing final"
        yield "early END", _join([lines[0], lines[n - 1], ""]), 2, 1, "ends early"


CASES = [(slug, *case) for slug in SLUGS for case in _generic_cases(slug)]


@pytest.mark.parametrize(
    "slug,text,line,column,words", [c[:1] + c[2:] for c in CASES], ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_parser_rejects_with_line_and_column(slug, text, line, column, words):
    assert text != golden(slug)
    assert_rejects(layout(slug).parse, text, line, column, words, source="golden/trace.txt")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_record_line_doubled_is_rejected(slug):
    lines = golden(slug).split("\n")
    first = 1 if layout(slug).bookends else 0
    for number in range(first + 1, len(lines) - (1 + first)):
        doubled = _join(lines[:number] + [lines[number - 1]] + lines[number:])
        with pytest.raises(TraceParseError) as info:
            layout(slug).parse(doubled)
        assert info.value.line == number + 1, (number, str(info.value))


@pytest.mark.parametrize("slug", SLUGS)
def test_a_nan_in_any_trace_field_is_refused_naming_its_key(slug, runs):
    import dataclasses

    lay = layout(slug)
    trace = runs[slug].trace
    slot, record = next(
        (s, r) for s, r in lay.records_of(trace) if any(f.kind.name in ("real", "sci", "vector") for f in s.fields)
    )
    field = next(f for f in slot.fields if f.kind.name in ("real", "sci", "vector"))
    value = getattr(record, field.attribute)
    bad = (float("nan"),) * len(value) if isinstance(value, tuple) else float("nan")
    changed = dataclasses.replace(record, **{field.attribute: bad})
    attr = slot.record.attr
    current = getattr(trace, attr)
    if slot.record.repeated:
        replacement = tuple(changed if r is record else r for r in current)
    else:
        replacement = changed
    with pytest.raises(NonFiniteValueError, match=re.escape(f"{slot.record.key_of(record)}.{field.name}")):
        lay.render(dataclasses.replace(trace, **{attr: replacement}))


# ------------------------------------------------------------------ the shared kinds
@pytest.mark.parametrize(
    "value,text",
    [
        (1.5e-7, "1.500000e-07"),
        (-2.0, "-2.000000e+00"),
        (0.0, "0.000000e+00"),
        (-0.0, "0.000000e+00"),
        (1e-300, "1.000000e-300"),
        (123456789.0, "1.234568e+08"),
        (-1e-9 / 3, "-3.333333e-10"),
    ],
)
def test_sci_writes_like_format_e(value, text):
    assert format_sci(value) == text == SCI.write(value)
    assert SCI.read(text) == float(text)


@pytest.mark.parametrize(
    "text,words",
    [
        ("-0.000000e+00", "negative zero"),
        ("1.0e-07", "scientific"),
        ("1.000000e-007", "canonical"),
        ("1.000000E+00", "scientific"),
        ("12.000000e+00", "scientific"),
        ("0.100000e+00", "canonical"),
        ("nan", "scientific"),
        ("1.000000", "scientific"),
        ("+1.000000e+00", "scientific"),
        ("1.000000e+0", "scientific"),
    ],
)
def test_sci_reader_is_strict(text, words):
    from site_builder.trace.format import ValueSyntaxError

    with pytest.raises(ValueSyntaxError, match=words):
        SCI.read(text)


def test_sci_never_writes_nan_or_infinity():
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(NonFiniteValueError):
            format_sci(bad)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_sci_round_trips_every_finite_float(value):
    text = format_sci(value)
    assert SCI.write(SCI.read(text)) == text


def test_choice_kind_reads_and_writes_only_its_words():
    from site_builder.trace.format import ValueSyntaxError

    verdict = choice("holds", "does-not-hold")
    assert verdict.read("holds") == "holds" and verdict.write("does-not-hold") == "does-not-hold"
    with pytest.raises(ValueSyntaxError, match="one of holds, does-not-hold"):
        verdict.read("maybe")
    with pytest.raises(ValueError):
        verdict.write("maybe")


# ------------------------------------------------------------------ the command line
@pytest.mark.parametrize("slug", SLUGS)
def test_cli_prints_each_page_trace(slug, runs, capsys, monkeypatch):
    """From the repository's cache, which the session's fresh run of the fixtures (``runs``) joined."""
    monkeypatch.chdir(PROJECT.root)
    assert cli_main(["trace", "--page", slug]) == 0
    assert capsys.readouterr().out == golden(slug)


@pytest.mark.parametrize("slug", REPORTS)
def test_cli_prints_each_page_report(slug, runs, capsys, monkeypatch):
    monkeypatch.chdir(PROJECT.root)
    assert cli_main(["report", "--page", slug]) == 0
    assert capsys.readouterr().out == golden(slug, "report")


def test_cli_names_an_unknown_page_and_a_missing_report(capsys, monkeypatch):
    monkeypatch.chdir(PROJECT.root)
    assert cli_main(["trace", "--page", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no page 'nope'" in err and "ch24" in err
    without = next(p.slug for p in PAGES if not p.has_report)
    assert cli_main(["report", "--page", without]) == 2
    assert "publishes no report" in capsys.readouterr().err


def test_cli_needs_a_page_and_its_help_names_none(capsys):
    with pytest.raises(SystemExit):
        cli_main(["trace"])
    assert "--page" in capsys.readouterr().err
    from site_builder.cli import parser

    help_text = parser().format_help()
    assert not re.search(r"ch\d|chapter \d|residual", help_text, re.IGNORECASE)
