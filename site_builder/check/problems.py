"""What the checker found: one problem per line, in a stable order."""

from __future__ import annotations

from dataclasses import dataclass, field


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
        return f"{self.page}: {self.element}: expected {self.expected}, found {self.found}"

    def text(self) -> str:
        return "\n".join([self.line(), *("    " + d for d in self.detail)])


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
        lines = [p.text() for p in sorted(self.problems, key=_sort_key)]
        return "\n".join([*lines, self.summary()]) + "\n"


def _sort_key(p: Problem) -> tuple[int, str, int, str, str, str]:
    # Repository files (goldens) first, then site files by path, each in document order.
    return (p.group, p.page, p.order, p.element, p.expected, p.found)


def quote(text: str, limit: int = 120) -> str:
    """Text as shown in a message: double-quoted, newlines visible, long text cut in the middle."""
    text = text.replace("\n", "\\n")
    if len(text) > limit:
        half = (limit - 1) // 2
        text = text[:half] + "…" + text[-half:]
    return f'"{text}"'
