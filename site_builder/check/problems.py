"""What the checker found: one problem per line, in a stable order."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby

from ..errors import shown

LINE_CHARS = 1000  # a problem's line is cut after this many characters (each quoted value has its own, lower limit)
DETAIL_LINES = 40  # detail lines (a diff) printed under one problem
DETAIL_CHARS = 160  # and characters of each
PER_FILE = 25  # problems printed for one file; the rest are counted on one line


@dataclass(frozen=True)
class Problem:
    """``PAGE: ELEMENT: expected X, found Y`` (``detail`` lines follow, indented, e.g. a diff)."""

    page: str
    order: int  # position inside the page (document order), so problems print as a reader meets them
    element: str
    expected: str
    found: str
    detail: tuple[str, ...] = field(default=(), compare=False)
    group: int = 1  # 0: repository files (goldens, fixtures), 1: the built site

    def line(self) -> str:
        """One line, whatever the page held: control characters escaped, cut to a bounded length."""
        return shown(f"{self.page}: {self.element}: expected {self.expected}, found {self.found}", LINE_CHARS)

    def text(self) -> str:
        details = [shown(d, DETAIL_CHARS) for d in self.detail[:DETAIL_LINES]]
        if len(self.detail) > DETAIL_LINES:
            details.append(f"… {len(self.detail) - DETAIL_LINES} more lines")
        return "\n".join([self.line(), *("    " + d for d in details)])


@dataclass
class Result:
    """Every problem, how many pages were read and how many shown values were compared."""

    problems: list[Problem] = field(default_factory=list)
    pages: int = 0
    values: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        return f"check: {self.pages} pages, {self.values} values verified, {len(self.problems)} problems"

    def sort(self) -> None:
        self.problems.sort(key=_sort_key)

    def render(self) -> str:
        """Every problem in order, at most :data:`PER_FILE` of one file (the rest counted), then the summary."""
        lines: list[str] = []
        for page, grouped in groupby(sorted(self.problems, key=_sort_key), key=lambda p: (p.group, p.page)):
            problems = list(grouped)
            lines += [p.text() for p in problems[:PER_FILE]]
            if len(problems) > PER_FILE:
                lines.append(
                    shown(
                        f"{page[1]}: … {len(problems) - PER_FILE} more problems in this file ({len(problems)} in all)",
                        LINE_CHARS,
                    )
                )
        return "\n".join([*lines, self.summary()]) + "\n"


def _sort_key(p: Problem) -> tuple[int, str, int, str, str, str]:
    # Repository files (goldens) first, then site files by path, each in document order.
    return (p.group, p.page, p.order, p.element, p.expected, p.found)


def quote(text: str, limit: int = 120) -> str:
    """Text as shown in a message: double-quoted, control characters escaped, long text cut with its length."""
    return f'"{shown(text, limit)}"'
