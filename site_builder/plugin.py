"""The MkDocs plugin ``chapter-trace``: ``mkdocs build`` runs the fixtures and renders the generated pages.

Order of work, chosen so that a failure never costs the previous site:

``on_config``
    load the page list, add missing pages to the navigation, and point
    ``site_dir`` at a staging sibling (``.site-NAME-…``) for ``mkdocs build``;
``on_pre_build``
    everything that can fail: fixtures (cached in ``.cache/fixtures``),
    golden comparison, templates (compiled ones kept in ``.cache/templates``),
    Graphviz (cached in ``.cache/diagrams``);
``on_files``
    add the generated pages and downloads as virtual files (nothing is
    written into ``docs/``);
``on_post_build`` (last)
    swap the staging directory into place, unless strict mode counted a
    warning, in which case MkDocs aborts next and the old site stays.

Every failure is one :class:`~mkdocs.exceptions.PluginError` naming the file
and the cause, which MkDocs prints without a traceback.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files

from .chapters import PageSource
from .render.fixtures import DEFAULT_PAGES, FixtureRunError, load_pages, run_fixtures
from .render.golden import GoldenError, check_golden
from .render.pages import PageRenderer, RenderedPage

log = logging.getLogger("mkdocs.plugins.chapter_trace")
NAME = "chapter-trace"
PACKAGE_DIR = Path(__file__).resolve().parent


class ChapterTraceConfig(base.Config):
    pages = c.Type(str, default=DEFAULT_PAGES)  # module:attribute holding the PageSource list
    templates_dir = c.Type(str, default="templates")  # relative to mkdocs.yml
    cache_dir = c.Type(str, default=".cache")  # relative to mkdocs.yml
    # When set, golden files are read from GOLDEN_DIR/<slug>/<file name> instead of the package.
    golden_dir = c.Optional(c.Type(str))


class _WarningCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _fail(message: str) -> PluginError:
    return PluginError(f"{NAME}: {message}")


def _nav_paths(nav: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(nav, str):
        found.add(nav)
    elif isinstance(nav, dict):
        for value in nav.values():
            found |= _nav_paths(value)
    elif isinstance(nav, list):
        for item in nav:
            found |= _nav_paths(item)
    return found


def _nav_entries(pages: list[PageSource]) -> list[dict[str, Any]]:
    """Navigation entries for generated pages the nav does not list yet.

    Pages that share a folder (``evidence/deep-stack.md``, ``evidence/claims.md``)
    become one section named after it; any other page is an entry of its own.
    """
    groups: dict[str, list[PageSource]] = {}
    for page in pages:
        folder, _, name = page.page_path.rpartition("/")
        groups.setdefault(folder if folder and name != "index.md" else page.page_path, []).append(page)
    entries: list[dict[str, Any]] = []
    for key, members in groups.items():
        if len(members) > 1:
            title = key.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ").capitalize()
            entries.append({title: [{p.title: p.page_path} for p in members]})
        else:
            entries += [{p.title: p.page_path} for p in members]
    return entries


class ChapterTracePlugin(BasePlugin[ChapterTraceConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command: str | None = None
        self.dirty = False
        self.root = Path.cwd()
        self.pages: list[PageSource] = []
        self.rendered: list[RenderedPage] = []
        self.final_site: Path | None = None
        self.staging: Path | None = None
        self.counter: _WarningCounter | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command = command
        self.dirty = dirty

    @property
    def serving(self) -> bool:
        return self.command == "serve"

    @event_priority(100)
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self._cleanup()
        self.root = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
        if config.strict:
            self.counter = _WarningCounter()
            logging.getLogger("mkdocs").addHandler(self.counter)
        try:
            self.pages = load_pages(self.config.pages, self.root)
        except Exception as exc:
            raise _fail(f"cannot load the page list {self.config.pages!r}: {exc}") from exc
        if config.nav is not None:
            config.nav.extend(_nav_entries([p for p in self.pages if p.page_path not in _nav_paths(config.nav)]))
        if not self.serving:
            self.final_site = Path(config.site_dir).resolve()
            self.staging = self.final_site.parent / f".site-{self.final_site.name}-{uuid.uuid4().hex[:12]}"
            if self.dirty and self.final_site.is_dir():
                shutil.copytree(self.final_site, self.staging, symlinks=True)
            config.site_dir = str(self.staging)
        return config

    def on_pre_build(self, config: MkDocsConfig) -> None:
        started = time.perf_counter()
        templates = self.root / self.config.templates_dir
        cache = self.root / self.config.cache_dir
        if not templates.is_dir():
            raise _fail(f"templates folder {templates} does not exist (option templates_dir)")
        renderer = PageRenderer(templates, cache, PACKAGE_DIR.parent, self.root)
        rendered: list[RenderedPage] = []
        try:
            runs = run_fixtures(self.pages, self.config.pages, cache / "fixtures", self.root)
        except FixtureRunError as exc:
            raise _fail(str(exc)) from None
        for page, run in zip(self.pages, runs):
            self._check_golden(page, run.result)
            try:
                rendered.append(renderer.render(page, run.result))
            except Exception as exc:
                raise _fail(str(exc)) from None
        self.rendered = rendered
        diagrams = renderer.diagrams
        total = diagrams.rendered + diagrams.cached
        records = sum(p.records for p in rendered)
        log.info(
            f"{NAME}: {len(rendered)} page{'' if len(rendered) == 1 else 's'}, {records} records, "
            f"{total} diagram{'' if total == 1 else 's'} ({diagrams.rendered} rendered, {diagrams.cached} cached), "
            f"{time.perf_counter() - started:.2f} s"
        )

    def _golden_path(self, page: PageSource, path: Path) -> Path:
        if self.config.golden_dir:
            return self.root / self.config.golden_dir / page.slug / path.name
        return path

    def _check_golden(self, page: PageSource, result: Any) -> None:
        pairs = [("trace", page.golden_trace, result.trace_text)]
        if page.golden_report is not None and result.report_text is not None:
            pairs.append(("report", page.golden_report, result.report_text))
        for kind, path, fresh in pairs:
            try:
                check_golden(page, kind, self._golden_path(page, path), fresh, self.root)
            except GoldenError as exc:
                if self.serving:
                    log.warning(f"{NAME}: {exc} (serving the fresh values)")
                else:
                    raise _fail(str(exc)) from None

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        for page in self.rendered:
            generated = {page.source.page_path: page.markdown, **page.files}
            for path, content in generated.items():
                existing = files.get_file_from_path(path)
                if existing is not None and not existing.generated_by:
                    raise _fail(
                        f"{Path(config.docs_dir).name}/{path} collides with a generated file of page "
                        f"{page.source.slug}; remove it from the docs folder"
                    )
                if existing is not None:
                    files.remove(existing)
                files.append(File.generated(config, path, content=content))
        return files

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # MkDocs already watches docs/ and mkdocs.yml; add the package and the templates.
        for path in (PACKAGE_DIR, self.root / self.config.templates_dir):
            if path.exists():
                server.watch(str(path))
        return server

    @event_priority(-100)
    def on_post_build(self, config: MkDocsConfig) -> None:
        if self.staging is None or self.final_site is None:
            return
        if config.strict and self.counter is not None and self.counter.count:
            # MkDocs raises its strict-mode abort right after this event: keep the old site.
            self._cleanup()
            return
        staging, final = self.staging, self.final_site
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():
            old = final.parent / f".site-{final.name}-old-{uuid.uuid4().hex[:12]}"
            os.replace(final, old)
            os.replace(staging, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, final)
        config.site_dir = str(final)
        self.staging = None
        self._cleanup()

    def on_build_error(self, *, error: Exception) -> None:
        self._cleanup()

    def on_shutdown(self) -> None:
        self._cleanup()

    def _cleanup(self) -> None:
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        if self.counter is not None:
            logging.getLogger("mkdocs").removeHandler(self.counter)
            self.counter = None
