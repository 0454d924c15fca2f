"""Golden files: the frozen trace and report of a page must equal what its fixtures print now.

:func:`compare` reads a golden file and says what is wrong with it, if
anything: missing, unreadable, not UTF-8, malformed (with its line and column),
or stale (with its first differing line and a diff). Every answer ends with
the one command that rewrites the file. The build stops on the first one (or
only warns under ``mkdocs serve``); the checker lists them all.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SiteBuilderError, os_error, shown
from ..project import Page, Project
from ..trace import TraceParseError

DIFF_LINES = 40  # a stale golden's diff is cut after this many lines
LINE_CHARS = 160  # and each line of it after this many characters


class GoldenError(SiteBuilderError):
    """A golden file is missing, unreadable, malformed or stale."""


def refresh_command(page: Page, kind: str) -> str:
    """The command that rewrites this page's golden ``kind`` (trace or report)."""
    return f"site-builder {kind} --page {page.slug} --write-golden"


@dataclass(frozen=True)
class GoldenIssue:
    """What is wrong with one golden file."""

    page: Page
    kind: str
    path: str  # as messages name it
    line: int | None
    column: int | None
    problem: str  # what is wrong, one line
    expected: str  # what the checker expected to find there
    found: str
    diff: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        return refresh_command(self.page, self.kind)

    def message(self) -> str:
        where = self.path + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return f"{where}: {self.problem}; {'write' if self.found == 'none' else 'refresh'} it with `{self.command}`"


def _bounded(lines: list[str]) -> tuple[str, ...]:
    cut = [shown(line, LINE_CHARS) for line in lines[:DIFF_LINES]]
    if len(lines) > DIFF_LINES:
        cut.append(f"… {len(lines) - DIFF_LINES} more lines of diff")
    return tuple(cut)


def changed_word(old: str, new: str) -> tuple[str, str, str]:
    """The first word (its record) of two lines and their first differing space-separated words: a trace line
    is ``RECORD field=value ...``, so this names the field that changed, however long the line is."""
    a, b = old.split(" "), new.split(" ")
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return a[0], (a[i] if i < len(a) else "(end of line)"), (b[i] if i < len(b) else "(end of line)")


def compare(
    project: Project, page: Page, kind: str, fresh: str, parse: Callable[[str, str], Any], path: Path | None = None
) -> GoldenIssue | None:
    """None when the golden ``kind`` of ``page`` (or the file at ``path``) holds exactly ``fresh``; else what is wrong."""
    path = Path(path) if path is not None else page.golden(kind)
    name = project.display(path)

    def issue(
        problem: str,
        expected: str,
        found: str,
        line: int | None = None,
        column: int | None = None,
        diff: tuple[str, ...] = (),
    ) -> GoldenIssue:
        return GoldenIssue(page, kind, name, line, column, problem, expected, found, diff)

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return issue(f"golden {kind} file is missing", "a golden file", "none")
    except IsADirectoryError:
        return issue(f"golden {kind} is a folder, not a file", "a golden file", "a folder")
    except OSError as exc:
        reason = os_error(exc).cause
        return issue(f"golden {kind} cannot be read: {reason}", "a readable golden file", reason)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        found = f"bytes that are not UTF-8 ({exc.reason} at byte {exc.start})"
        return issue(f"golden {kind} is not UTF-8 ({exc.reason} at byte {exc.start})", "a UTF-8 text", found)
    if text == fresh:
        return None
    try:
        parse(text, name)
    except TraceParseError as exc:
        return issue(
            f"{exc.reason} (malformed golden {kind})", f"a well-formed {kind}", "a malformed file", exc.line, exc.column
        )
    old, new = text.split("\n"), fresh.split("\n")
    number = next((n for n, (a, b) in enumerate(zip(old, new), start=1) if a != b), None)
    if number is not None:  # a line changed: name its record and the field
        record, was, now = changed_word(old[number - 1], new[number - 1])
        problem = (
            f"golden {kind} is stale: its {shown(record, 40)} line has {shown(repr(was), 120)} "
            f"where the fixtures now print {shown(repr(now), 120)}"
        )
    else:  # one text is the other with lines added at its end
        number = min(len(old), len(new)) + 1
        a = old[number - 1] if number <= len(old) else "(end of file)"
        b = new[number - 1] if number <= len(new) else "(end of file)"
        problem = f"golden {kind} is stale: the file has {shown(repr(a), 120)} where the fixtures now print {shown(repr(b), 120)}"
    diff = list(
        difflib.unified_diff(
            text.splitlines(), fresh.splitlines(), f"{name} (golden)", f"{kind} (fresh run)", lineterm=""
        )
    )
    return issue(
        problem,
        f"the fresh run's {kind} (first difference on line {number})",
        "a stale golden file",
        number,
        None,
        _bounded(diff) or ("(the texts differ only in line endings or the final newline)",),
    )


def golden_issues(
    project: Project,
    page: Page,
    trace_text: str,
    report_text: str | None,
    paths: Mapping[str, Path] | None = None,
) -> list[GoldenIssue]:
    """Every golden file of ``page`` (or, by kind, the file in ``paths``) that does not hold exactly ``trace_text``
    (and ``report_text``, when the page has a report): what the build and ``site-builder check`` both ask.
    The page's ``trace.py`` or ``report.py`` is imported only to read a golden that differs."""
    from ..trace import layout_of

    def parser(kind: str) -> Callable[[str, str], Any]:
        def parse(text: str, name: str) -> Any:
            if kind == "trace":
                return layout_of(project.module(page, "trace").Trace).parse(text, name)
            return project.module(page, "report").REPORT.parse(text, name)

        return parse

    texts = (("trace", trace_text), ("report", report_text))
    found = [
        compare(project, page, kind, text, parser(kind), (paths or {}).get(kind))
        for kind, text in texts
        if text is not None
    ]
    return [issue for issue in found if issue is not None]
