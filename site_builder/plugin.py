"""The MkDocs plugin ``chapter-trace``: ``mkdocs build`` runs the pages' fixtures and renders the generated pages.

Order of work, chosen so that a failure never costs the previous site:

``on_config``
    discover the page folders, add their pages to the navigation (in their
    declared order and sections); for ``mkdocs build``, take the build lock
    of ``site/``, remove what a killed build left behind, and point
    ``site_dir`` at a fresh staging sibling (``.site-NAME-…``, see
    :mod:`site_builder.publish`);
``on_pre_build``
    everything that can fail: the pipeline (fixtures, cached in
    ``.cache/fixtures``; golden comparison) and rendering (compiled templates
    kept in ``.cache/templates``, Graphviz layouts in ``.cache/diagrams``);
``on_files``
    add the generated pages and downloads as virtual files (nothing is
    written into ``docs/``);
``on_pre_page``
    date every page by the site's sources, not the clock (the sitemap's
    ``lastmod`` and the ``sitemap.xml.gz`` header): ``SOURCE_DATE_EPOCH`` if
    set, else the last commit's date, else 1970-01-01;
``on_post_page``
    scan each built page for numbers with no provenance: a warning naming
    the page, the number and, where it can be found, the template line (so
    ``--strict`` fails the build, and ``mkdocs serve`` only warns);
``on_post_build`` (last)
    swap the staging directory into place atomically, unless strict mode
    counted a warning, in which case MkDocs aborts next and the old site stays.

SIGTERM ends a build as Ctrl-C does: the staging folder is removed and the
site is left as it was. Every failure is one :class:`~mkdocs.exceptions.PluginError`
naming the file and the cause, which MkDocs prints without a traceback; an
I/O failure inside MkDocs itself (a full disk while it copies the theme) is
turned into one such line too. A cache entry found damaged, a cache that
cannot be written, or a previous build's folder that cannot be removed is a
warning that does not fail ``--strict``: the site built is right.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files

from . import publish
from .errors import SiteBuilderError, os_error, shown
from .project import Page, Project
from .render.pages import PageRenderer, RenderedPage

log = logging.getLogger("mkdocs.plugins.chapter_trace")
NAME = "chapter-trace"
PACKAGE_DIR = Path(__file__).resolve().parent


class ChapterTraceConfig(base.Config):
    pages_dir = c.Type(str, default="pages")  # one folder per generated page, relative to mkdocs.yml
    templates_dir = c.Type(str, default="templates")  # shared partials and macros, relative to mkdocs.yml
    cache_dir = c.Type(str, default=".cache")  # relative to mkdocs.yml


class _WarningCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class _OSErrorEcho(logging.Filter):
    """Drops MkDocs's own ``Error building page 'x': [Errno 28] …`` line: on_build_error says it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Error building page ") and re.search(r"': \[Errno \d+\] ", message))


_ECHO = _OSErrorEcho()
_MKDOCS_BUILD_LOG = "mkdocs.commands.build"


def _fail(message: str) -> PluginError:
    return PluginError(f"{NAME}: {shown(message, 2000)}")


def _notices() -> logging.Logger:
    """Where cache repairs and leftovers are reported: shown like MkDocs's warnings, outside its logger, so
    --strict does not count them (they say nothing about the site being built)."""
    logger = logging.getLogger("site_builder.notices")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("WARNING -  %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
        logger.setLevel(logging.WARNING)
    return logger


class CacheNotices:
    """Warnings about the caches, shown but not counted by --strict; a cache that cannot be written is one line.

    A damaged entry is named each time (it is repaired); a write that fails (a full disk, a read-only folder)
    is said once per cache and cause, not once per entry.
    """

    def __init__(self) -> None:
        self.said: set[str] = set()

    def __call__(self, line: str) -> None:
        _, sep, cause = line.partition(": cannot write the ")
        if sep:
            if cause in self.said:
                return
            self.said.add(cause)
        notice(line)


def notice(line: str) -> None:
    _notices().warning(f"{NAME}: {shown(line, 600)}")


def site_date(root: Path) -> str:
    """The date pages carry (``YYYY-MM-DD``, UTC): ``SOURCE_DATE_EPOCH``, else the last commit's, else 1970-01-01.

    Never the clock: two builds of the same sources on different days are byte for byte the same.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        try:
            done = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True,
                                  text=True, timeout=30)
            epoch = done.stdout.strip() if done.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            epoch = None
    try:
        return datetime.fromtimestamp(int(epoch or 0), timezone.utc).strftime("%Y-%m-%d")
    except (ValueError, OverflowError, OSError):
        raise _fail(f"SOURCE_DATE_EPOCH={epoch!r} is not a number of seconds since 1970") from None


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


def nav_entries(pages: list[Page]) -> list[dict[str, Any]]:
    """Navigation entries for generated pages, in their order; pages naming one section share an entry."""
    entries: list[dict[str, Any]] = []
    sections: dict[str, list[dict[str, str]]] = {}
    for page in pages:
        item = {page.title: page.page_path}
        if page.section is None:
            entries.append(item)
        elif page.section in sections:
            sections[page.section].append(item)
        else:
            sections[page.section] = [item]
            entries.append({page.section: sections[page.section]})
    return entries


class ChapterTracePlugin(BasePlugin[ChapterTraceConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command: str | None = None
        self.dirty = False
        self.project: Project | None = None
        self.pages: list[Page] = []
        self.rendered: list[RenderedPage] = []
        self.origins: dict[str, tuple[Path, ...]] = {}  # built page path -> files a number in it may come from
        self.names: dict[str, frozenset[str]] = {}  # built page path -> the names its trace carries
        self.final_site: Path | None = None
        self.staging: Path | None = None
        self.lock: publish.SiteLock | None = None
        self.date = "1970-01-01"
        self.previous_sigterm: Any = None
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
        root = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
        self.project = Project.at(
            root,
            pages_dir=self.config.pages_dir,
            templates_dir=self.config.templates_dir,
            docs_dir=str(Path(config.docs_dir).resolve()),
            cache_dir=self.config.cache_dir,
        )
        if config.strict:
            self.counter = _WarningCounter()
            logging.getLogger("mkdocs").addHandler(self.counter)
        try:
            self.pages = self.project.pages()
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        if config.nav is not None:
            listed = _nav_paths(config.nav)
            config.nav.extend(nav_entries([p for p in self.pages if p.page_path not in listed]))
        self.date = site_date(root)
        if not self.serving:
            self._terminate_like_interrupt()
            logging.getLogger(_MKDOCS_BUILD_LOG).addFilter(_ECHO)
            self.final_site = Path(config.site_dir).resolve()
            try:
                self.lock = publish.SiteLock(self.final_site, lambda line: log.info(f"{NAME}: {line}"))
                self.lock.acquire()
                publish.clean_leftovers(self.final_site, notice)
                self.staging = publish.staging_name(self.final_site)
                if self.dirty and self.final_site.is_dir():
                    shutil.copytree(self.final_site, self.staging, symlinks=True)
                else:
                    self.staging.mkdir()
            except SiteBuilderError as exc:
                raise _fail(str(exc)) from None
            except OSError as exc:
                raise _fail(str(os_error(exc, self.staging, "cannot create the staging folder"))) from None
            config.site_dir = str(self.staging)
        return config

    def _terminate_like_interrupt(self) -> None:
        """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so the build cleans up its staging folder."""
        if threading.current_thread() is not threading.main_thread():
            return

        def interrupt(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

        self.previous_sigterm = signal.signal(signal.SIGTERM, interrupt)

    def on_pre_build(self, config: MkDocsConfig) -> None:
        from .pipeline import Pipeline

        assert self.project is not None
        started = time.perf_counter()
        project = self.project
        if not project.templates_dir.is_dir():
            raise _fail(f"templates folder {project.display(project.templates_dir)} does not exist (option templates_dir)")
        notices = CacheNotices()
        pipeline = Pipeline(project, progress=lambda line: log.info(f"{NAME}: {line}"), warn=notices)
        try:
            runs = pipeline.run(self.pages)
            for issue in pipeline.goldens(runs):
                if not self.serving:
                    raise _fail(issue.message())
                log.warning(f"{NAME}: {issue.message()} (serving the fresh values)")
            renderer = PageRenderer(project, self.pages, warn=notices)
            self.rendered = [renderer.render(run.page, run) for run in runs]
            renderer.diagrams.prune()
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        except OSError as exc:
            raise _fail(str(os_error(exc))) from None
        from .check.document import Facts

        self.origins = {p.page.html_path: (p.page.folder, project.templates_dir) for p in self.rendered}
        self.names = {run.page.html_path: Facts(run.facts).names for run in runs}
        self.names[""] = frozenset().union(*self.names.values()) if self.names else frozenset()
        diagrams = renderer.diagrams
        total = diagrams.rendered + diagrams.cached
        records = sum(p.records for p in self.rendered)
        count = len(self.rendered)
        log.info(
            f"{NAME}: {count} page{'' if count == 1 else 's'}, {records} records, "
            f"{total} diagram{'' if total == 1 else 's'} ({diagrams.rendered} rendered, {diagrams.cached} cached), "
            f"{time.perf_counter() - started:.2f} s"
        )

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        for page in self.rendered:
            generated = {page.page.page_path: page.markdown, **page.files}
            for path, content in generated.items():
                existing = files.get_file_from_path(path)
                if existing is not None and not existing.generated_by:
                    raise _fail(
                        f"{Path(config.docs_dir).name}/{path} collides with a generated file of page "
                        f"{page.page.slug}; remove it from the docs folder"
                    )
                if existing is not None:
                    files.remove(existing)
                files.append(File.generated(config, path, content=content))
        return files

    def on_pre_page(self, page: Any, *, config: MkDocsConfig, files: Files) -> Any:
        page.update_date = self.date  # the sitemap's lastmod and the sitemap.xml.gz header, from the sources
        return page

    def on_post_page(self, output: str, *, page: Any, config: MkDocsConfig) -> str:
        """Every number a reader sees must carry its provenance: warn (fail under --strict) about any other."""
        from .check.document import _Doc, PageReport, check_numbers, parse_html

        built = page.file.dest_uri
        try:
            root = parse_html(output)
        except ValueError as exc:
            log.warning(f"{NAME}: {built}: the page cannot be checked for numbers: {exc}")
            return output
        report = PageReport()
        check_numbers(_Doc.of(root, built), self.names.get(built, self.names.get("", frozenset())), report)
        origins = self.origins.get(built) or ((Path(config.docs_dir) / page.file.src_uri,) if page.file.src_uri else ())
        for problem in report.problems:
            number = problem.found.split("'")[1] if "'" in problem.found else problem.found
            where = _locate(number, origins, self.project)
            at = f" ({where})" if where else ""
            log.warning(shown(f"{NAME}: {built}: {problem.element}: {problem.found} has no provenance{at}", 1000))
        return output

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # MkDocs already watches docs/ and mkdocs.yml; add the page folders, shared templates and the package.
        assert self.project is not None
        for path in (PACKAGE_DIR, self.project.pages_dir, self.project.templates_dir):
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
        try:
            publish.swap_in(staging, final, notice)
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        config.site_dir = str(final)
        self.staging = None
        self._cleanup()

    def on_build_error(self, *, error: Exception) -> None:
        where = self._published(error.filename) if isinstance(error, OSError) and error.filename else self.final_site
        self._cleanup()
        if isinstance(error, OSError):
            # An I/O failure inside MkDocs itself (a full disk while it copies the theme or writes a page).
            log.error(f"{NAME}: {shown(str(os_error(error, where, 'cannot build the site')), 2000)}")
            raise Abort("Aborted with a BuildError!") from None

    def _published(self, path: str) -> str:
        """A path in the staging folder as the reader knows it: where it would have been published."""
        if self.staging is not None and self.final_site is not None:
            try:
                return str(self.final_site / Path(os.fsdecode(path)).relative_to(self.staging))
            except ValueError:
                pass
        return os.fsdecode(path)

    def _cleanup(self) -> None:
        if self.staging is not None:
            publish.remove_tree(self.staging, notice)
            self.staging = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if self.previous_sigterm is not None:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, self.previous_sigterm)
            self.previous_sigterm = None
        if self.counter is not None:
            logging.getLogger("mkdocs").removeHandler(self.counter)
            self.counter = None

    def on_shutdown(self) -> None:
        self._cleanup()
        logging.getLogger(_MKDOCS_BUILD_LOG).removeFilter(_ECHO)


_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")


def _locate(number: str, origins: tuple[Path, ...], project: Project | None) -> str | None:
    """``FILE:LINE`` of the first template or docs line that types ``number`` outside a Jinja tag."""
    digits = number.lstrip("+-\u2212")
    if not digits:
        return None
    pattern = re.compile(rf"(?<![A-Za-z0-9_.]){re.escape(digits)}(?![0-9])")
    files: list[Path] = []
    for origin in origins:
        if origin.is_dir():
            files += sorted(origin.rglob("*.j2"))
        elif origin.is_file():
            files.append(origin)
    for file in files:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number_, line in enumerate(lines, start=1):
            if pattern.search(_JINJA.sub(" ", line)):
                shown = project.display(file) if project else str(file)
                return f"{shown}:{number_}"
    return None
