"""What the trace tests share: edits of a golden text, and the checks on a rejected text or a failing fixture."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from site_builder.run import FixtureError
from site_builder.trace import TraceParseError

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
