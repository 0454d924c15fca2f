"""Building the generated pages of one site build: each page from the rendered-page cache, or run and rendered.

:func:`build_pages` is the one place that decides, for every page, where its Markdown comes from:

1. every page's keys are computed (its fixture key, then its render key, :mod:`site_builder.render.cache`);
2. a page whose rendered entry is in the cache store is taken as it is, and its golden files compared with
   the trace the entry holds (a golden file is not an input of the render key: an edited golden is caught);
3. the other pages go through the pipeline (their fixtures, from the fixture cache or run) and the golden
   comparison, then rendering; each result is stored for the next build.

With ``keep_going`` (``mkdocs serve``) a page that fails is left out and its one-line error returned, a golden
file that disagrees is a warning, and the other pages go on; without it, the first failure raises.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cache import Store
from .errors import SiteBuilderError
from .project import Page, Project
from .render.cache import RenderedPage

if TYPE_CHECKING:
    from .pipeline.golden import GoldenIssue

Say = Callable[[str], None]


@dataclass
class Built:
    """What a build of the generated pages gives the site."""

    pages: dict[str, RenderedPage] = field(default_factory=dict)  # slug -> page, in navigation order
    failed: dict[str, str] = field(default_factory=dict)  # slug -> why the page did not build (keep_going only)
    goldens: list[GoldenIssue] = field(default_factory=list)  # golden files that disagree (keep_going only)
    cached: int = 0  # pages taken from the rendered-page cache
    laid_out: int = 0  # diagrams Graphviz laid out now
    reused: int = 0  # diagrams taken from the cache
    seconds: float = 0.0
    code: bytes = b""  # the digest of our code and what it runs on (part of every render key)

    def summary(self) -> str:
        """One line for the build log: pages, records, diagrams and time."""
        count = len(self.pages) + len(self.failed)
        records = sum(p.records for p in self.pages.values())
        drawn = self.laid_out + self.reused
        return (
            f"{count} page{'' if count == 1 else 's'} ({self.cached} unchanged, {count - self.cached} rendered), "
            f"{records} records, {drawn} diagram{'' if drawn == 1 else 's'} drawn ({self.laid_out} laid out, "
            f"{self.reused} cached), {self.seconds:.2f} s"
        )


def build_pages(
    project: Project, pages: list[Page], store: Store, *, keep_going: bool = False, progress: Say | None = None
) -> Built:
    """Every page of ``pages``, from the cache or rendered now (see the module's documentation)."""
    from .pipeline import cache as fixture_cache
    from .pipeline.golden import golden_issues
    from .render import cache as page_cache

    started = time.perf_counter()
    built = Built()
    if not project.templates_dir.is_dir():
        raise SiteBuilderError(
            f"templates folder {project.display(project.templates_dir)} does not exist (option templates_dir)"
        )
    fixture_keys = fixture_cache.page_keys(project, pages, store)
    render_keys = page_cache.Keys(project.templates_dir, pages)
    built.code = render_keys.package
    wanted = {page.slug: render_keys.key(page, fixture_keys[page.slug]) for page in pages}
    found: dict[str, RenderedPage] = {}
    for page in pages:
        entry = page_cache.load(store, wanted[page.slug])
        if entry is not None:
            found[page.slug] = entry
            store.keep(fixture_cache.KIND, (fixture_cache.entry_name(page.slug, fixture_keys[page.slug]),))
            store.keep(page_cache.DIAGRAMS, entry.diagrams)
            _goldens(built, golden_issues(project, page, entry.trace, entry.report), keep_going)
    built.cached = len(found)
    misses = [p for p in pages if p.slug not in found]
    if misses:  # what only rendering needs is imported only then: a warm build is a few hashes and reads
        from .pipeline import Pipeline
        from .render.pages import PageRenderer

        pipeline = Pipeline(project, progress=progress, warn=store.warn, store=store)
        attempt = pipeline.attempt(misses, keys=fixture_keys, keep_going=keep_going)
        built.failed.update(attempt.failed)
        _goldens(built, pipeline.goldens(attempt.runs), keep_going)
        renderer = PageRenderer(project, pages, store)
        for run in attempt.runs:
            try:
                rendered = renderer.render(run.page, run)
            except SiteBuilderError as exc:
                if not keep_going:
                    raise
                built.failed[run.page.slug] = str(exc)
                continue
            page_cache.store_page(store, wanted[run.page.slug], rendered)
            found[run.page.slug] = rendered
        built.laid_out, built.reused = renderer.diagrams.rendered, renderer.diagrams.cached
    built.pages = {p.slug: found[p.slug] for p in pages if p.slug in found}
    built.seconds = time.perf_counter() - started
    return built


def _goldens(built: Built, issues: list[GoldenIssue], keep_going: bool) -> None:
    """A golden file that disagrees with its page's trace stops the build; with ``keep_going`` it is kept."""
    if issues and not keep_going:
        raise SiteBuilderError(issues[0].message())
    built.goldens += issues
