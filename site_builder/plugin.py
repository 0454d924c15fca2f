"""The MkDocs plugin ``chapter-trace``: ``mkdocs build`` runs the pages' fixtures and renders the generated pages.

Order of work, chosen so that a failure never costs the previous site:

``on_config``
    discover the page folders, add their pages to the navigation (in their
    declared order and sections); for ``mkdocs build``, take the build lock
    of ``site/``, remove what a killed build left behind, and point
    ``site_dir`` at a fresh staging sibling (``.site-NAME-…``, see
    :mod:`site_builder.publish`);
``on_pre_build``
    everything that can fail: a page whose inputs are all unchanged is read
    from the rendered-page cache (``.cache/pages``); the others go through the
    pipeline (fixtures, cached in ``.cache/fixtures``) and rendering (compiled
    templates kept in ``.cache/templates``, Graphviz layouts in
    ``.cache/diagrams``); every golden file is compared with its page's trace.
    Under ``mkdocs serve`` a page that fails is shown as its one-line error
    instead of stopping the build (a failed build would hang every request);
``on_files``
    add the generated pages and downloads as virtual files (nothing is
    written into ``docs/``);
``on_page_markdown``
    convert each page with its drawings, formulas, code excerpts, tables and
    collapsed blocks set aside (:mod:`site_builder.render.stash`); under
    ``mkdocs serve``, reuse the conversion of a page whose Markdown and
    surroundings did not change;
``on_pre_page``
    date every page by the site's sources, not the clock (the sitemap's
    ``lastmod`` and the ``sitemap.xml.gz`` header): ``SOURCE_DATE_EPOCH`` if
    set, else the last commit's date, else 1970-01-01;
``on_post_page``
    scan each built page for numbers with no provenance (a page whose HTML
    and facts were found clean before is not parsed again,
    ``.cache/scan.json``): a warning naming the page, the number and, where it
    can be found, the template line (so ``--strict`` fails the build, and
    ``mkdocs serve`` only warns);
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

import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
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


def _own_logger(name: str, level: int, label: str) -> logging.Logger:
    """A logger outside MkDocs's that writes to stderr in MkDocs's look (``label`` before each message), so
    neither --strict nor ``mkdocs serve`` counts what it says."""
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"{label}%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
        logger.setLevel(level)
    return logger


def _notices() -> logging.Logger:
    """Where cache repairs and leftovers are reported: shown like MkDocs's warnings, outside its logger, so
    --strict does not count them (they say nothing about the site being built)."""
    return _own_logger("site_builder.notices", logging.WARNING, "WARNING -  ")


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


def _serve_errors() -> logging.Logger:
    """Where ``mkdocs serve`` reports a page that failed to build: an error line outside MkDocs's logger, so a
    served site is never held back by it (the page itself shows the error)."""
    return _own_logger("site_builder.serve_errors", logging.ERROR, "ERROR   -  ")


@dataclass
class Built:
    """One generated page of this build: its Markdown and its downloads (rendered now, or from the cache)."""

    page: Page
    markdown: str
    files: dict[str, str]
    records: int
    cached: bool = False
    error: str | None = None  # mkdocs serve: why the page shows an error instead of its content


def error_page(page: Page, message: str) -> str:
    """What ``mkdocs serve`` shows in place of a page that failed to build: its title and the one-line error."""
    from html import escape

    from .render.pages import front_matter

    return (
        front_matter(page) + f'<h1 id="top">{escape(page.title)}</h1>\n\n'
        '<div class="admonition failure build-error" role="alert"><p class="admonition-title">'
        "This page did not build</p>\n"
        f"<p><code>{escape(message)}</code></p>\n"
        "<p>Fix the cause and save: the page is built again.</p></div>\n"
    )


SCAN_FORMAT = "site-builder number scan 1"
SERVE_POLL_SECONDS = 0.1  # how often mkdocs serve looks for edits (MkDocs polls every 0.5 s)

# mkdocs serve only: a page's Markdown converted to HTML by an earlier build of this process, by the SHA-256 of
# everything the conversion reads (the configuration, every file's path and URL, the page's path and Markdown).
_CONVERTED: dict[str, tuple[Any, ...]] = {}
_CONVERTED_LIMIT = 512


class _Heard(logging.Handler):
    """Keeps the records logged while a page converts, to say them again when the conversion is reused."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def _poll_faster(server: Any) -> None:
    """Have mkdocs serve look for edits every SERVE_POLL_SECONDS instead of every 0.5 s (a stat of each watched
    file, a few milliseconds). Only before its watcher starts, and only where it is the polling watcher
    MkDocs 1.6 builds; anything else is left as it is."""
    observer = getattr(server, "observer", None)
    if observer is None or not hasattr(observer, "_timeout") or observer.is_alive():
        return
    observer._timeout = SERVE_POLL_SECONDS
    for emitter in list(getattr(observer, "emitters", ())):
        if hasattr(emitter, "_timeout"):
            emitter._timeout = SERVE_POLL_SECONDS


def site_date(root: Path) -> str:
    """The date pages carry (``YYYY-MM-DD``, UTC): ``SOURCE_DATE_EPOCH``, else the last commit's, else 1970-01-01.

    Never the clock: two builds of the same sources on different days are byte for byte the same.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True, timeout=30
            )
            epoch = done.stdout.strip() if done.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            epoch = None
    try:
        return datetime.fromtimestamp(int(epoch or 0), UTC).strftime("%Y-%m-%d")
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


def _stashed_render(page: Any, convert: Any) -> Any:
    """``page.render`` converting the page with its large raw HTML stashed, and put back into the HTML after."""

    def render(config: MkDocsConfig, files: Files) -> None:
        from .render.stash import stash

        whole = page.markdown
        stashed = stash(whole or "")
        if not stashed.elements:
            return convert(config, files)
        page.markdown = stashed.markdown
        try:
            convert(config, files)
        finally:
            page.markdown = whole
        restored = stashed.restore(page.content)
        if restored is None:
            return convert(config, files)  # an element did not come back as it went: the page converted whole
        page.content = restored
        if page.present_anchor_ids is not None:
            page.present_anchor_ids = page.present_anchor_ids | stashed.anchors()

    return render


class ChapterTracePlugin(BasePlugin[ChapterTraceConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command: str | None = None
        self.dirty = False
        self.project: Project | None = None
        self.pages: list[Page] = []
        self.rendered: list[Built] = []
        self.failed: set[str] = set()  # built page paths showing a build error (mkdocs serve only)
        self.code_digest = b""  # the package and its dependencies: part of every number-scan verdict's key
        self.name_digests: dict[str, bytes] = {}  # built page path ("" for every other page) -> digest of its names
        self.scan_known: set[str] | None = None  # keys of pages found clean by an earlier scan
        self.scan_used: set[str] = set()
        self.conversion_digest: bytes | None = None  # mkdocs serve: what every page's conversion reads
        self.notices = CacheNotices()  # one per build: a cache that cannot be written is said once
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
        from .pipeline import pin_numeric_environment

        pin_numeric_environment()  # page code this process runs computes as the fixture interpreters do
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
        """Every generated page: from the rendered-page cache when all its inputs are unchanged, else its fixtures
        (from their cache, or run) and its templates; then every golden file against its page's trace."""
        from .pipeline import cache as fixture_cache
        from .render import cache as page_cache

        assert self.project is not None
        started = time.perf_counter()
        project = self.project
        if not project.templates_dir.is_dir():
            raise _fail(
                f"templates folder {project.display(project.templates_dir)} does not exist (option templates_dir)"
            )
        notices = self.notices = CacheNotices()
        self.conversion_digest = None
        pages = self.pages
        self.failed = set()
        try:
            imports: dict[str, dict[str, list[str]]] = {}
            keys = fixture_cache.page_keys(project, pages, notices, imports)
            render_keys = page_cache.Keys(project.templates_dir, pages)
            self.code_digest = render_keys.package
            entries: dict[str, page_cache.Entry] = {}
            wanted: dict[str, str] = {}
            for page in pages:
                wanted[page.slug] = render_keys.key(page, keys[page.slug])
                path = page_cache.entry_path(project.cache_dir, page.slug)
                try:
                    entry = page_cache.load(path)
                except page_cache.DamagedEntry as exc:
                    notices(f"{project.display(path)}: damaged cache entry ({exc}); rendering the page again")
                    entry = None
                if entry is not None and entry.key == wanted[page.slug]:
                    entries[page.slug] = entry
            page_cache.prune(project.cache_dir, (p.slug for p in pages), notices, project.display)
            misses = [p for p in pages if p.slug not in entries]
            errors: dict[str, str] = {}
            diagrams = (0, 0)
            self._goldens(pages, entries)  # the pages rendered now are compared by the pipeline
            if misses:
                fresh, diagrams = self._render(misses, keys, imports, wanted, entries, notices, errors)
                entries.update(fresh)
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        except OSError as exc:
            raise _fail(str(os_error(exc))) from None

        self.rendered = []
        names: dict[str, frozenset[str]] = {}
        for page in pages:
            if page.slug in errors:
                _serve_errors().error(f"{NAME}: {shown(errors[page.slug], 2000)} (the page shows this error)")
                self.rendered.append(Built(page, error_page(page, errors[page.slug]), {}, 0, error=errors[page.slug]))
                self.failed.add(page.html_path)
                continue
            entry = entries[page.slug]
            self.rendered.append(Built(page, entry.markdown, entry.files, entry.records, page.slug not in misses))
            names[page.html_path] = frozenset(entry.names)
        self.origins = {p.page.html_path: (p.page.folder, project.templates_dir) for p in self.rendered}
        self.names = names
        self.names[""] = frozenset().union(*names.values()) if names else frozenset()
        self.name_digests = {
            path: hashlib.sha256("\0".join(sorted(values)).encode("utf-8")).digest() for path, values in names.items()
        }
        records = sum(p.records for p in self.rendered)
        count = len(self.rendered)
        rendered, cached = diagrams
        total = rendered + cached
        log.info(
            f"{NAME}: {count} page{'' if count == 1 else 's'} ({count - len(misses)} unchanged, "
            f"{len(misses)} rendered), {records} records, "
            f"{total} diagram{'' if total == 1 else 's'} drawn ({rendered} laid out, {cached} cached), "
            f"{time.perf_counter() - started:.2f} s"
        )

    def _render(
        self,
        misses: list[Page],
        keys: dict[str, str],
        imports: dict[str, Any],
        wanted: dict[str, str],
        entries: dict[str, Any],
        notices: CacheNotices,
        errors: dict[str, str],
    ) -> tuple[dict[str, Any], tuple[int, int]]:
        """Run (or read from the fixture cache) and render the pages whose rendered entry is missing or stale.

        Under ``mkdocs serve`` a page that fails (fixtures, a template) is put in ``errors`` and the others go on;
        under ``mkdocs build`` the first failure stops the build.
        """
        from .check.document import Facts
        from .pipeline import Pipeline
        from .render import cache as page_cache
        from .render.pages import PageRenderer

        project = self.project
        assert project is not None
        pipeline = Pipeline(project, progress=lambda line: log.info(f"{NAME}: {line}"), warn=notices)
        runs = pipeline.run(misses, keys=keys, imports=imports, failed=errors if self.serving else None)
        for issue in pipeline.goldens(runs):
            self._golden_issue(issue)
        renderer = PageRenderer(project, self.pages, warn=notices)
        fresh: dict[str, Any] = {}
        for run in runs:
            renderer.diagrams.used, used = set(), renderer.diagrams.used
            try:
                done = renderer.render(run.page, run)
            except SiteBuilderError as exc:
                if not self.serving:
                    raise
                errors[run.page.slug] = str(exc)
                continue
            finally:
                renderer.diagrams.used, drawn = used | renderer.diagrams.used, renderer.diagrams.used
            entry = page_cache.Entry(
                wanted[run.page.slug],
                done.markdown,
                done.files,
                done.records,
                tuple(sorted(Facts(run.facts).names)),
                run.trace_text,
                run.report_text,
                tuple(sorted(drawn)),
            )
            fresh[run.page.slug] = entry
            path = page_cache.entry_path(project.cache_dir, run.page.slug)
            try:
                page_cache.store(path, entry)
            except OSError as exc:
                notices(
                    f"{os_error(exc, project.display(path), 'cannot write the rendered-page cache')} "
                    "(the site is built without it)"
                )
        if not errors:
            for entry in entries.values():  # pages not rendered now still use their diagrams' layouts
                renderer.diagrams.used |= set(entry.diagrams)
            renderer.diagrams.prune()
        return fresh, (renderer.diagrams.rendered, renderer.diagrams.cached)

    def _goldens(self, pages: list[Page], entries: dict[str, Any]) -> None:
        """A page read from the rendered-page cache still has its golden files compared with its trace."""
        from .pipeline import golden_issues

        assert self.project is not None
        for page in pages:
            entry = entries.get(page.slug)
            if entry is not None:
                for issue in golden_issues(self.project, page, entry.trace, entry.report):
                    self._golden_issue(issue)

    def _golden_issue(self, issue: Any) -> None:
        """A golden file that disagrees with its page's trace: the build stops; mkdocs serve warns and goes on."""
        if not self.serving:
            raise _fail(issue.message())
        log.warning(f"{NAME}: {issue.message()} (serving the fresh values)")

    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """The theme's templates are compiled once and kept like ours (``.cache/templates``, checksummed; in memory
        across the rebuilds of mkdocs serve), instead of compiled again on every build."""
        from .render.templating import theme_cache

        assert self.project is not None
        if env.bytecode_cache is None:
            env.bytecode_cache = theme_cache(env, self.project.cache_dir / "templates", self.notices)
        return env

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

    def on_page_markdown(self, markdown: str, *, page: Any, config: MkDocsConfig, files: Files) -> str:
        """Every page is converted with its drawings, formulas and code excerpts stashed (see
        :mod:`site_builder.render.stash`). mkdocs serve: a page whose Markdown and surroundings are unchanged
        since the previous build of this process is not converted again (MkDocs converts every page on every
        rebuild)."""
        page.render = _stashed_render(page, page.render)
        if not self.serving:
            return markdown
        if self.conversion_digest is None:
            self.conversion_digest = _conversion_digest(config, files)
        digest = self.conversion_digest
        convert = page.render

        def render(config: MkDocsConfig, files: Files) -> None:
            import copy

            # The Markdown as it is converted, after every plugin had its say.
            key = hashlib.sha256(
                digest + page.file.src_uri.encode("utf-8") + b"\0" + (page.markdown or "").encode("utf-8")
            ).hexdigest()
            found = _CONVERTED.get(key)
            if found is not None:
                content, toc, title, anchors, links, said = found
                for name, level, message in said:  # what converting it said, said again
                    logging.getLogger(name).log(level, message)
                page.content, page.toc, page._title_from_render = content, copy.deepcopy(toc), title
                page.present_anchor_ids = set(anchors) if anchors is not None else None
                if links is not None:
                    page.links_to_anchors = {files.get_file_from_path(src): dict(targets) for src, targets in links}
                return
            heard = _Heard()
            loggers = [logging.getLogger("mkdocs"), logging.getLogger("MARKDOWN")]
            for logger in loggers:
                logger.addHandler(heard)
            try:
                convert(config, files)
            finally:
                for logger in loggers:
                    logger.removeHandler(heard)
            links = getattr(page, "links_to_anchors", None)
            if links is not None and any(files.get_file_from_path(f.src_uri) is not f for f in links):
                return  # a link to a file that is not part of this site: converted again every time
            if len(_CONVERTED) >= _CONVERTED_LIMIT:
                _CONVERTED.clear()
            anchors = page.present_anchor_ids
            _CONVERTED[key] = (
                page.content,
                copy.deepcopy(page.toc),
                page._title_from_render,
                frozenset(anchors) if anchors is not None else None,
                None if links is None else tuple((f.src_uri, tuple(t.items())) for f, t in links.items()),
                tuple(heard.records),
            )

        page.render = render
        return markdown

    def on_pre_page(self, page: Any, *, config: MkDocsConfig, files: Files) -> Any:
        page.update_date = self.date  # the sitemap's lastmod and the sitemap.xml.gz header, from the sources
        return page

    def on_post_page(self, output: str, *, page: Any, config: MkDocsConfig) -> str:
        """Every number a reader sees must carry its provenance: warn (fail under --strict) about any other."""
        built = page.file.dest_uri
        if built in self.failed:
            return output  # mkdocs serve: a page showing its build error
        names_digest = self.name_digests.get(built, self.name_digests.get("", b""))
        verdict = hashlib.sha256(
            SCAN_FORMAT.encode() + b"\0" + self.code_digest + names_digest + b"\0" + output.encode("utf-8")
        ).hexdigest()
        if self.scan_known is None:
            self.scan_known = self._load_scan()
        if verdict in self.scan_known:
            self.scan_used.add(verdict)  # this very HTML, with these facts, was found clean before
            return output
        from .check.document import PageReport, _Doc, check_numbers, parse_html

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
        if not report.problems:
            self.scan_used.add(verdict)
        return output

    def _scan_path(self) -> Path:
        assert self.project is not None
        return self.project.cache_dir / "scan.json"

    def _load_scan(self) -> set[str]:
        """The keys (SHA-256 of the code, the page's fact names and its HTML) of pages an earlier scan found clean."""
        from .files import DamagedEntry, load_entry

        path = self._scan_path()

        def clean(data: Any) -> set[str] | None:
            return set(map(str, data["clean"])) if data.get("format") == SCAN_FORMAT else None

        try:
            return load_entry(path, clean, "scan results") or set()
        except DamagedEntry as exc:
            notice(
                f"{self.project.display(path) if self.project else path}: damaged cache entry ({exc}); "
                "scanning the pages again"
            )
            return set()

    def _save_scan(self) -> None:
        """Keep the clean verdicts of this build's pages (only those), when they changed."""
        if self.scan_known is None or self.scan_used == self.scan_known:
            return
        from .files import store_entry

        path = self._scan_path()
        body = json.dumps({"format": SCAN_FORMAT, "clean": sorted(self.scan_used)}).encode("utf-8")
        try:
            store_entry(path, body)
        except OSError as exc:
            CacheNotices()(
                f"{os_error(exc, self.project.display(path) if self.project else path, 'cannot write the number-scan cache')} "
                "(the site is built without it)"
            )
        self.scan_known = set(self.scan_used)

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # MkDocs already watches docs/ and mkdocs.yml; add the page folders, shared templates and the package.
        assert self.project is not None
        _poll_faster(server)
        for path in (PACKAGE_DIR, self.project.pages_dir, self.project.templates_dir):
            if path.exists():
                server.watch(str(path))
        return server

    @event_priority(-100)
    def on_post_build(self, config: MkDocsConfig) -> None:
        self._save_scan()
        self.scan_known, self.scan_used = None, set()
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


def _conversion_digest(config: MkDocsConfig, files: Files) -> bytes:
    """What converting any page reads besides its own Markdown: the configuration file and the options MkDocs
    converts with, and every file of the site (links are resolved against them)."""
    digest = hashlib.sha256(b"site-builder conversions 1\0")
    try:
        digest.update(Path(config.config_file_path).read_bytes() if config.config_file_path else b"")
    except OSError:
        digest.update(os.urandom(16))  # unreadable: nothing is reused
    digest.update(
        repr(
            (
                config.markdown_extensions,
                config.mdx_configs,
                config.use_directory_urls,
                config.validation,
                config.site_url,
                logging.getLogger("mkdocs").getEffectiveLevel(),
            )
        ).encode("utf-8")
    )
    for file in sorted(files, key=lambda f: f.src_uri):
        digest.update(f"{file.src_uri}\0{file.dest_uri}\0{file.url}\0{file.inclusion}\0".encode())
    return digest.digest()


def _locate(number: str, origins: tuple[Path, ...], project: Project | None) -> str | None:
    """``FILE:LINE`` of the first template or docs line that types ``number`` outside a Jinja tag."""
    from .render.templating import literal_lines

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
            lines = literal_lines(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        for number_, line in enumerate(lines, start=1):
            if pattern.search(line):
                shown = project.display(file) if project else str(file)
                return f"{shown}:{number_}"
    return None
