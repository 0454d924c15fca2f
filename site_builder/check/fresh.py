"""A fresh run of every generated page's fixtures, made once and shared by every check."""

from __future__ import annotations

import difflib
import posixpath
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..chapters import PACKAGE_DIR, PAGES, PageSource
from ..render.golden import display_path, refresh_command
from ..render.pages import served_folder
from .document import Facts
from .problems import Problem

REPO_ROOT = PACKAGE_DIR.parent


@dataclass(frozen=True)
class FreshPage:
    source: PageSource
    trace_text: str | None
    report_text: str | None
    facts: Mapping[str, Any] | None
    error: str | None = None  # why the fixtures did not finish

    @property
    def html_path(self) -> str:
        return html_path(self.source.page_path)

    @property
    def folder(self) -> str:
        """The site folder the page is built into; its downloads and drawings sit there."""
        return served_folder(self.source.page_path)

    def text(self, kind: str) -> str | None:
        return self.trace_text if kind == "trace" else self.report_text


@dataclass(frozen=True)
class Fresh:
    pages: tuple[FreshPage, ...]

    @cached_property
    def by_html_path(self) -> dict[str, FreshPage]:
        return {p.html_path: p for p in self.pages}

    @cached_property
    def by_folder(self) -> dict[str, FreshPage]:
        return {p.folder: p for p in self.pages}

    def owner(self, file: str) -> FreshPage | None:
        """The generated page a site file belongs to: the page itself, or the page whose folder holds the file.

        Files at the top of the site belong to no generated page (hand-written pages sit there).
        """
        folder = posixpath.dirname(file)
        return self.by_html_path.get(file) or (self.by_folder.get(folder) if folder else None)

    @cached_property
    def union(self) -> Facts:
        """Facts of every page together, for hand-written pages; a key two pages disagree on is ambiguous."""
        values: dict[str, Any] = {}
        owner: dict[str, str] = {}
        ambiguous: dict[str, list[str]] = {}
        for p in self.pages:
            for key, value in (p.facts or {}).items():
                if key in values and values[key] != value:
                    ambiguous.setdefault(key, [owner[key]]).append(p.source.slug)
                else:
                    values.setdefault(key, value)
                    owner.setdefault(key, p.source.slug)
        return Facts(values, {k: tuple(v) for k, v in ambiguous.items()})


def html_path(page_path: str) -> str:
    """Where MkDocs (``use_directory_urls``) writes a page: ``chapter-24/index.md`` -> ``chapter-24/index.html``."""
    return posixpath.join(served_folder(page_path), "index.html")


def collect(pages: Sequence[PageSource] = PAGES) -> Fresh:
    """Run every page's fixtures once."""
    out: list[FreshPage] = []
    for source in pages:
        try:
            run = source.run()
        except Exception as exc:  # a failed fixture is a finding about that page, not a crash of the checker
            out.append(FreshPage(source, None, None, None, f"{type(exc).__name__}: {exc}"))
            continue
        out.append(FreshPage(source, run.trace_text, run.report_text, dict(run.facts)))
    return Fresh(tuple(out))


def golden_path(source: PageSource, kind: str, overrides: Mapping[tuple[str, str], Path] | None) -> Path | None:
    if overrides and (source.slug, kind) in overrides:
        return Path(overrides[(source.slug, kind)])
    return source.golden_trace if kind == "trace" else source.golden_report


def shown_path(path: Path) -> str:
    """A repository file as messages name it (relative to the repository when inside it)."""
    return display_path(path, REPO_ROOT)


def check_goldens(fresh: Fresh, overrides: Mapping[tuple[str, str], Path] | None = None) -> list[Problem]:
    """Each page's golden trace and report against its fresh run."""
    problems: list[Problem] = []
    for p in fresh.pages:
        if p.error is not None:
            where = shown_path(p.source.golden_trace.parent.parent)
            problems.append(Problem(where, 0, "fixtures", "a run that completes", p.error, group=0))
            continue
        for order, kind in enumerate(("trace", "report")):
            path, text = golden_path(p.source, kind, overrides), p.text(kind)
            if path is None or text is None:
                continue
            where = shown_path(path)
            command = refresh_command(p.source, kind)
            try:
                golden = path.read_bytes().decode("utf-8")
            except FileNotFoundError:
                problems.append(
                    Problem(where, order, f"golden {kind}", f"a golden file (write it: {command})", "none", group=0)
                )
                continue
            except UnicodeDecodeError as exc:
                problems.append(
                    Problem(
                        where, order, f"golden {kind}", f"a UTF-8 text (refresh: {command})",
                        f"bytes that are not UTF-8 ({exc.reason} at byte {exc.start})", group=0,
                    )
                )
                continue
            if golden != text:
                diff = tuple(
                    difflib.unified_diff(
                        golden.splitlines(), text.splitlines(), f"{where} (golden)", f"{kind} (fresh run)", lineterm=""
                    )
                )
                first = _first_difference(golden, text)
                problems.append(
                    Problem(
                        where,
                        order,
                        f"golden {kind}",
                        f"the fresh run's {kind} ({first}; refresh: {command})",
                        "a stale golden file",
                        diff or ("(the texts differ only in line endings or the final newline)",),
                        group=0,
                    )
                )
    return problems


def _first_difference(old: str, new: str) -> str:
    a, b = old.split("\n"), new.split("\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first difference on line {i + 1}"
    return f"first difference on line {min(len(a), len(b)) + 1}"
