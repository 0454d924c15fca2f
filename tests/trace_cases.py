"""What the trace tests share: edits of a golden text, and the checks on a rejected text or a failing fixture."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from hypothesis import strategies as st

from helpers import fresh_trace, golden
from site_builder.run import FixtureError
from site_builder.trace import TraceParseError, format_real, layout_of

# (description, text, line, column, words): a text a parser must reject, where, and what the message says.
Case = tuple[str, str, int, int, str]


class Golden:
    """A golden trace, and copies of it with one line edited."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")

    def number(self, prefix: str) -> int:
        """The 1-based number of the first line that starts with ``prefix``."""
        return next(n for n, line in enumerate(self.lines, start=1) if line.startswith(prefix))

    def column(self, n: int, needle: str) -> int:
        """The 1-based column of ``needle`` on line ``n``."""
        return self.lines[n - 1].index(needle) + 1

    def replaced(self, n: int, old: str, new: str) -> str:
        """The text with the first ``old`` on line ``n`` replaced by ``new``."""
        line = self.lines[n - 1]
        assert old in line, (n, old, line)
        lines = list(self.lines)
        lines[n - 1] = line.replace(old, new, 1)
        return "\n".join(lines)

    def value_case(self, description: str, n: int, old: str, new: str, words: str) -> Case:
        """``old`` (a ``field=value`` on line ``n``) becomes ``new``; the parser must point at the value."""
        field = old.split("=", 1)[0]
        return description, self.replaced(n, old, new), n, self.column(n, old) + len(field) + 1, words


# Finite reals as a trace writes them (six decimals), for the round-trip properties.
REALS = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False).map(
    lambda v: float(format_real(v))
)


class CourseTrace(Golden):
    """A course chapter's golden trace (``|``-separated records, no bookends, ``NEXT`` last) with its parser and
    renderer, the edits every such trace refuses, and the tests every chapter runs on them."""

    def __init__(self, slug: str, trace: type[Any]):
        super().__init__(golden(slug))
        layout = layout_of(trace)
        self.slug, self.version = slug, layout.version
        self.parse, self.render = layout.parse, layout.render

    def swapped(self, n: int, m: int) -> str:
        """The text with lines ``n`` and ``m`` (``n < m``, 1-based) trading places."""
        lines = list(self.lines)
        lines[n - 1], lines[m - 1] = lines[m - 1], lines[n - 1]
        return "\n".join(lines)

    def swapped_case(self, description: str, n: int, m: int, field: str, words: str) -> Case:
        """Lines ``n`` and ``m`` trading places: the parser must point at ``field``'s value on line ``n``, now
        the line that was ``m``."""
        return description, self.swapped(n, m), n, self.column(m, field) + len(field), words

    def trailing_space(self, description: str, n: int, end: str) -> Case:
        """Line ``n`` (a message ending ``end``) with a space after its last character."""
        return description, self.replaced(n, end, end + " "), n, len(self.lines[n - 1]) + 1, "trailing whitespace"

    def shared_cases(self, next_chapter: str) -> Iterator[Case]:
        """What every course trace refuses: other line ends, no final newline, a space for the separator, the
        bookend lines of other trace versions, and a chapter after this one other than the course's."""
        last = self.number("NEXT")
        yield "CRLF", self.text.replace("\n", "\r\n"), 1, len(self.lines[0]) + 1, "carriage return"
        yield "missing final newline", self.text[:-1], last, len(self.lines[last - 1]) + 1, "final newline"
        yield "space separator", self.replaced(last, "NEXT|", "NEXT "), last, 1, "unknown record"
        yield "bookend line", f"TRACE {self.version} BEGIN\n" + self.text, 1, 1, "unknown record"
        old = f"chapter={next_chapter}"
        yield self.value_case("another next chapter", last, old, old + "-elsewhere", f"'{next_chapter}'")

    def fresh_test(self) -> Callable[[], None]:
        """The test that a fresh in-process run of the chapter's fixtures writes exactly the golden text."""

        def test() -> None:
            assert fresh_trace(self.slug) == self.text

        return test

    def rejection_test(self, cases: Iterable[Case]) -> Callable[..., None]:
        """The test that the parser refuses each of ``cases`` (each an edit of the golden) where it says."""

        @rejections(cases)
        def test(text: str, line: int, column: int, words: str) -> None:
            assert text != self.text
            assert_rejects(self.parse, text, line, column, words, source="golden/trace.txt")

        return test


def rejections(cases: Iterable[Case]):
    """Parametrize a test over ``cases`` as ``text, line, column, words``, each named by its description."""
    cases = list(cases)
    return pytest.mark.parametrize("text,line,column,words", [c[1:] for c in cases], ids=[c[0] for c in cases])


def assert_rejects(parse: Callable[..., object], text: str, line: int, column: int, words: str, source: str) -> None:
    """``parse`` refuses ``text`` with a message that starts ``source:line:column:`` and contains ``words``."""
    with pytest.raises(TraceParseError) as info:
        parse(text, source=source)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert words in str(err), str(err)
    assert str(err).startswith(f"{source}:{line}:{column}: "), str(err)


def fixture_error(run: Callable[[], object], fixture: str) -> FixtureError:
    """``run`` fails with a :class:`FixtureError` that names ``fixture``, as an attribute and in its message."""
    with pytest.raises(FixtureError) as info:
        run()
    assert info.value.fixture == fixture
    assert f"fixture '{fixture}'" in str(info.value)
    return info.value
