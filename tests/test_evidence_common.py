"""What every evidence page's trace shares: the text rules, strict parsing, goldens, registration, CLI."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from site_builder import chapters
from site_builder.chapters import PAGES, RunResult, claims, deep_stack, identity_init, path_expansion
from site_builder.cli import main as cli_main
from site_builder.trace import SCI, NonFiniteValueError, TraceParseError, choice, format_sci

from trace_cases import assert_rejects

MODULES = {m.SLUG: m for m in (deep_stack, identity_init, path_expansion, claims)}
SLUGS = list(MODULES)


@pytest.fixture(scope="module")
def fresh():
    return {slug: module.run() for slug, module in MODULES.items()}


def golden(slug: str) -> str:
    return MODULES[slug].GOLDEN_TRACE.read_text(encoding="utf-8")


# ------------------------------------------------------------------ goldens and round trips
@pytest.mark.parametrize("slug", SLUGS)
def test_golden_equals_a_fresh_run(slug, fresh):
    assert fresh[slug].trace_text == golden(slug)


@pytest.mark.parametrize("slug", SLUGS)
def test_round_trips(slug, fresh):
    module, text = MODULES[slug], golden(slug)
    trace = module.parse(text)
    assert module.render(trace) == text
    assert module.parse(module.render(fresh[slug].trace)) == fresh[slug].trace
    assert trace == fresh[slug].trace


@pytest.mark.parametrize("slug", SLUGS)
def test_text_rules(slug):
    text = golden(slug)
    lines = text.split("\n")
    assert lines[0] == f"TRACE {MODULES[slug].VERSION} BEGIN" and lines[-2] == f"TRACE {MODULES[slug].VERSION} END"
    assert lines[-1] == "" and "" not in lines[:-1]
    assert "\r" not in text and "\t" not in text and "  " not in text
    assert all(line == line.rstrip() for line in lines)
    assert not re.search(r"(?<![0-9])-0\.000000(?:e[+-]00)?(?![0-9])", text)  # no negative zero, fixed or scientific
    assert "nan" not in text.lower() and "inf" not in text.lower()


@pytest.mark.parametrize("slug", SLUGS)
def test_every_trace_field_is_a_fact(slug, fresh):
    facts = fresh[slug].facts
    trace_facts = MODULES[slug].parse(golden(slug)).facts()
    assert trace_facts and all(facts[k] == v for k, v in trace_facts.items())
    derived = [facts[k] for k in facts if k.startswith("DERIVED.")]
    values = [float(x) for v in derived for x in (v if isinstance(v, tuple) else (v,))]
    assert derived and all(math.isfinite(v) for v in values)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_trace_field_must_be_shown_on_the_page(slug, fresh):
    import importlib

    keys = importlib.import_module(f"{MODULES[slug].__name__}.trace").all_keys()
    assert tuple(fresh[slug].trace.facts()) == keys
    assert chapters.page(slug).shows == keys


# ------------------------------------------------------------------ strict parsing, shared rules
def _lines(slug):
    return golden(slug).split("\n")


def _join(lines):
    return "\n".join(lines)


def _generic_cases(slug):
    """(description, text, line, column, words) for rules every evidence trace follows."""
    text, lines = golden(slug), _lines(slug)
    n = len(lines) - 1  # lines in the text (the last split item is the empty string after the final LF)
    version = MODULES[slug].VERSION
    second_kind = lines[1].split(" ", 1)[0]
    yield "CRLF", text.replace("\n", "\r\n"), 1, len(lines[0]) + 1, "carriage return"
    yield "missing final newline", text[:-1], n, len(lines[n - 1]) + 1, "final newline"
    yield "doubled final newline", text + "\n", n + 1, 1, "doubled final newline"
    yield "blank line", _join(lines[:2] + [""] + lines[2:]), 3, 1, "blank line"
    yield "trailing space", _join([lines[0], lines[1] + " "] + lines[2:]), 2, len(lines[1]) + 1, "trailing whitespace"
    yield "tab", _join([lines[0], lines[1].replace(" ", "\t", 1)] + lines[2:]), 2, len(second_kind) + 1, "tab"
    yield "wrong BEGIN", text.replace(f"{version} BEGIN", "v0 BEGIN"), 1, 1, "first line"
    yield "unknown record", _join([lines[0], "MYSTERY " + lines[1].split(" ", 1)[1]] + lines[2:]), 2, 1, "unknown record"
    yield "missing END", _join(lines[: n - 1] + [""]), n - 1, len(lines[n - 2]) + 1, "missing final"
    yield "text after END", text + lines[1] + "\n", n + 1, 1, "continues after"
    yield "early END", _join([lines[0], lines[n - 1], ""]), 2, 1, "ends early"
    first_field = lines[1].split(" ")[1]
    name = first_field.split("=")[0]
    column = len(second_kind) + 2
    yield "unknown field", _join([lines[0], lines[1].replace(f" {name}=", " zzz=", 1)] + lines[2:]), 2, column, "unknown field"
    yield "extra field", _join([lines[0], lines[1] + " extra=1"] + lines[2:]), 2, len(lines[1]) + 2, "extra field"
    yield "missing field", _join([lines[0], lines[1].rsplit(" ", 1)[0]] + lines[2:]), 2, len(lines[1].rsplit(" ", 1)[0]) + 1, "missing field"
    fields = lines[1].split(" ")
    swapped = " ".join([fields[0], fields[2], fields[1], *fields[3:]])
    yield "fields out of order", _join([lines[0], swapped] + lines[2:]), 2, column, "out of order"
    yield "double space", _join([lines[0], lines[1].replace(" ", "  ", 1)] + lines[2:]), 2, column, "one space"
    yield "missing record", _join([lines[0]] + lines[2:]), 2, 1, "expected " + second_kind
    yield "empty", "", 1, 1, "empty"


CASES = [(slug, *case) for slug in SLUGS for case in _generic_cases(slug)]


@pytest.mark.parametrize("slug,text,line,column,words", [c[:1] + c[2:] for c in CASES], ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_parser_rejects_with_line_and_column(slug, text, line, column, words):
    assert text != golden(slug)
    assert_rejects(MODULES[slug].parse, text, line, column, words, source="golden/trace.txt")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_repeated_record_rejects_a_duplicate(slug):
    lines = _lines(slug)
    for number in range(2, len(lines) - 2):
        doubled = _join(lines[:number] + [lines[number - 1]] + lines[number:])
        with pytest.raises(TraceParseError) as info:
            MODULES[slug].parse(doubled)
        assert info.value.line == number + 1, (number, str(info.value))
        assert "duplicate" in str(info.value) or "too many" in str(info.value), str(info.value)


# ------------------------------------------------------------------ the shared kinds
@pytest.mark.parametrize(
    "value,text",
    [(1.5e-7, "1.500000e-07"), (-2.0, "-2.000000e+00"), (0.0, "0.000000e+00"), (-0.0, "0.000000e+00"),
     (1e-300, "1.000000e-300"), (123456789.0, "1.234568e+08"), (-1e-9 / 3, "-3.333333e-10")],
)
def test_sci_writes_like_format_e(value, text):
    assert format_sci(value) == text == SCI.write(value)
    assert SCI.read(text) == float(text)


@pytest.mark.parametrize(
    "text,words",
    [("-0.000000e+00", "negative zero"), ("1.0e-07", "scientific"), ("1.000000e-007", "canonical"),
     ("1.000000E+00", "scientific"), ("12.000000e+00", "scientific"), ("0.100000e+00", "canonical"),
     ("nan", "scientific"), ("1.000000", "scientific"), ("+1.000000e+00", "scientific"), ("1.000000e+0", "scientific")],
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


# ------------------------------------------------------------------ registration and CLI
@pytest.mark.parametrize("slug", SLUGS)
def test_registered_after_the_chapter(slug, fresh):
    source = chapters.page(slug)
    assert [p.slug for p in PAGES][:1] == ["ch24"] and PAGES.index(source) >= 1
    module = MODULES[slug]
    assert source.trace_id == module.VERSION and source.golden_trace == module.GOLDEN_TRACE.resolve()
    assert source.golden_report is None and source.template == f"{slug}/page.md.j2"
    assert source.page_path.startswith("evidence/") and source.page_path.endswith(".md")
    assert source.downloads == {f"{module.VERSION}.trace.txt": "trace"}
    result = source.run()
    assert isinstance(result, RunResult) and result.report_text is None
    assert result.trace_text == fresh[slug].trace_text and result.context["trace"] == fresh[slug].trace
    assert dict(result.facts) == fresh[slug].facts


@pytest.mark.parametrize("slug", SLUGS)
def test_cli_prints_and_writes_the_page_trace(slug, tmp_path, monkeypatch, capsys):
    assert cli_main(["trace", "--page", slug]) == 0
    assert capsys.readouterr().out == golden(slug)
    target = tmp_path / "trace.txt"
    real = chapters.page
    monkeypatch.setattr(chapters, "page", lambda s: dataclasses.replace(real(s), golden_trace=target))
    assert cli_main(["trace", "--page", slug, "--write-golden"]) == 0
    assert target.read_text(encoding="utf-8") == golden(slug)
    assert [p.name for p in tmp_path.iterdir()] == ["trace.txt"]


def test_cli_names_an_unknown_page_and_a_missing_report(capsys):
    assert cli_main(["trace", "--page", "nope"]) == 2
    assert "no generated page 'nope'" in capsys.readouterr().err
    assert cli_main(["report", "--page", "claims"]) == 2
    assert "has no report" in capsys.readouterr().err


def test_cli_default_page_is_still_the_chapter(capsys):
    assert cli_main(["trace"]) == 0
    assert capsys.readouterr().out.startswith("TRACE residual-connections-v1 BEGIN\n")
