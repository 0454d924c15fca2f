"""The pages as the pipeline runs them now, made once and shared by every check."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..cache import Store
from ..i18n import SOURCE
from ..pipeline import PageRun, Pipeline, version_of
from ..pipeline.golden import golden_issues
from ..project import Page, Project, served_folder
from ..trace import layout_of
from .document import Facts
from .problems import Problem


@dataclass(frozen=True)
class FreshPage:
    """One generated page: its fresh run, or why its fixtures did not finish."""

    source: Page
    run: PageRun | None
    error: str | None = None
    keys: tuple[str, ...] = ()  # every field key of its trace (each must be shown on the page)
    downloads: Mapping[str, str] | None = None  # file name -> kind, published beside it

    @property
    def facts(self) -> Mapping[str, Any] | None:
        return self.run.facts if self.run is not None else None

    @property
    def html_path(self) -> str:
        return self.source.html_path

    @property
    def folder(self) -> str:
        """The site folder the page is built into; its downloads and drawings sit there."""
        return served_folder(self.source.page_path)

    def text(self, kind: str) -> str | None:
        return self.run.text(kind) if self.run is not None else None

    @property
    def charts(self) -> Mapping[str, str]:
        """The page's charts in its language, drawn from the fresh run (none when its fixtures failed)."""
        return self.run.charts_for(self.source.lang) if self.run is not None else {}


@dataclass(frozen=True)
class Fresh:
    project: Project
    pages: tuple[FreshPage, ...]
    store: Store | None = None  # the cache store a rendered page is taken from when its entry is proven current

    def diagrams(self, page: FreshPage) -> Mapping[str, str]:
        """The page's diagrams (id -> inline SVG) drawn from its fresh run, as its page renders them now."""
        return self._diagrams.get((page.source.slug, page.source.lang), {})

    @cached_property
    def _diagrams(self) -> dict[tuple[str, str], dict[str, str]]:
        from .diagrams import drawn_diagrams

        return drawn_diagrams(self.project, [p for p in self.pages if p.run is not None], self.store)

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


def collect(project: Project, pipeline: Pipeline | None = None, *, fresh: bool = False) -> Fresh:
    """Every page's run: a fixture-cache entry is used only where it is proven current (made for exactly the
    current sources and whole by its checksum, see :mod:`site_builder.cache`); every other page runs
    fresh. With ``fresh``, the cache is neither read nor written and every page runs.

    A page that fails is a finding.
    """
    pipeline = pipeline or Pipeline(project, warn=lambda line: None)
    pages = project.pages()
    attempt = pipeline.attempt(pages, use_cache=not fresh)
    found = {run.page.slug: run for run in attempt.runs}
    runs = [found.get(p.slug) or attempt.failed.get(p.slug, "the fixtures gave no answer") for p in pages]
    store = None if fresh else Store(project.cache_dir, lambda line: None, project.display)
    return fresh_from(project, pages, runs, store)


def fresh_from(
    project: Project, pages: Sequence[Page], runs: Sequence[PageRun | str], store: Store | None = None
) -> Fresh:
    """The check's view of ``pages`` given their runs (a run that failed is its one-line error); ``store``: where
    a page rendered with exactly the current inputs is found (None: every page with a diagram is rendered now)."""
    out: list[FreshPage] = []
    for page, run in zip(pages, runs):
        if isinstance(run, str):
            out += [FreshPage(page.twin(lang), None, run) for lang in page.languages]
            continue
        keys = layout_of(project.module(page, "trace").Trace).keys()
        downloads = page.download_names(version_of(project, page))
        # Each translation is checked as its own page, against the same run: every rule holds in every language.
        out += [FreshPage(page.twin(lang), run, None, keys, downloads) for lang in page.languages]
    return Fresh(project, tuple(out), store)


def check_goldens(fresh: Fresh, overrides: Mapping[tuple[str, str], Path] | None = None) -> list[Problem]:
    """Each page's golden trace and report against its fresh run."""
    project = fresh.project
    problems: list[Problem] = []
    for p in fresh.pages:
        if p.source.lang != SOURCE:
            continue  # a translation has its English page's goldens
        if p.run is None:
            where = project.display(p.source.folder)
            problems.append(Problem(where, 0, "fixtures", "a run that completes", p.error or "?", group=0))
            continue
        paths = {kind: path for (slug, kind), path in (overrides or {}).items() if slug == p.source.slug}
        for issue in golden_issues(project, p.source, p.run.trace_text, p.run.report_text, paths):
            order = 0 if issue.kind == "trace" else 1
            kind = issue.kind
            expected = f"{issue.expected} ({'write' if issue.found == 'none' else 'refresh'}: {issue.command})"
            found = issue.found
            if issue.line and issue.found == "a malformed file":
                found = f"a malformed file ({issue.problem} at line {issue.line})"
            problems.append(Problem(issue.path, order, f"golden {kind}", expected, found, issue.diff, group=0))
    return problems


def pages_of(fresh: Fresh) -> Sequence[Page]:
    return [p.source for p in fresh.pages]
