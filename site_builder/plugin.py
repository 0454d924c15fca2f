"""The MkDocs plugin ``chapter-trace``: ``mkdocs build`` runs the pages' fixtures and renders the generated pages.

Each hook is a few named steps; the work is done by the modules that own it: :mod:`~site_builder.build` (the
generated pages, from the cache or run and rendered), :mod:`~site_builder.scan` (numbers without provenance),
:mod:`~site_builder.shown` (the golden lists of shown values), :mod:`~site_builder.localize` (the languages:
translated files, navigations, alternates, search indexes), :mod:`~site_builder.search` (each page's search
entries kept), :mod:`~site_builder.serve` (what ``mkdocs serve`` needs), :mod:`~site_builder.publish` (the
staging folder and the atomic swap), :mod:`~site_builder.cache` (the one cache store) and
:mod:`~site_builder.logs`.

Order of work, chosen so that a failure never costs the previous site:

``on_config``
    discover the page folders and add them to the navigation; for ``mkdocs build``, take the build lock of
    ``site/``, remove what a killed build left, and point ``site_dir`` at a fresh staging folder;
``on_pre_build``
    everything that can fail: build the generated pages (a failure stops the build; under ``mkdocs serve`` a
    page that fails shows its one-line error instead, since a failed build would hang every request); have the
    theme's search index take each page's entries from the cache store (:mod:`site_builder.search`);
``on_env``
    keep the theme's compiled templates in the cache store too;
``on_files``
    add the generated pages and downloads, and the translated hand-written pages, as virtual files (nothing is
    written into ``docs/``);
``on_nav``, ``on_page_context``, ``on_template_context``
    give each language its navigation, and each page its language's site name, its twins and the switcher;
``on_page_markdown``
    convert each page with its drawings, formulas and tables set aside (:mod:`site_builder.render.stash`);
    under ``mkdocs serve``, reuse the conversion of a page whose Markdown and surroundings did not change;
``on_pre_page``
    date every page by the site's sources, never the clock;
``on_post_page``
    scan each built page for numbers with no provenance: a warning each, so ``--strict`` fails; compare each
    generated page's shown values, place by place, with its golden list: one that differs stops the build
    before it publishes (a warning under ``mkdocs serve``), a missing one is written;
``on_post_build`` (last)
    stop at the first golden list of shown values a page disagrees with; write each language's search index;
    prune the cache, and swap the staging folder into place, unless strict mode counted a warning, in which
    case MkDocs aborts next and the old site stays.

SIGTERM ends a build as Ctrl-C does: the staging folder is removed and the site is left as it was. Every failure
is one :class:`~mkdocs.exceptions.PluginError` naming the file and the cause, which MkDocs prints without a
traceback; an I/O failure inside MkDocs itself (a full disk while it copies the theme) is one such line too.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files

from . import logs, publish
from .build import Built, build_pages
from .cache import Store
from .errors import SiteBuilderError, os_error, shown
from .i18n import stale_translation, translations_in
from .localize import Localized
from .project import Page, Project, nav_additions, site_date
from .scan import NumberScan
from .search import index_from_store

if TYPE_CHECKING:
    from .scan import Collected, ShownLists

NAME = logs.NAME
PACKAGE_DIR = Path(__file__).resolve().parent
_ECHO = logs.OSErrorEcho()
_MKDOCS_BUILD_LOG = "mkdocs.commands.build"


class ChapterTraceConfig(base.Config):
    pages_dir = c.Type(str, default="pages")  # one folder per generated page, relative to mkdocs.yml
    templates_dir = c.Type(str, default="templates")  # shared partials and macros, relative to mkdocs.yml
    cache_dir = c.Type(str, default=".cache")  # relative to mkdocs.yml


def _fail(message: str) -> PluginError:
    return PluginError(f"{NAME}: {shown(message, 2000)}")


class ChapterTracePlugin(BasePlugin[ChapterTraceConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command: str | None = None
        self.dirty = False
        self.project: Project | None = None
        self.pages: list[Page] = []
        self.store: Store | None = None  # the cache store of the build under way
        self.built = Built()
        self.scan: NumberScan | None = None
        self.staging: publish.Staging | None = None  # mkdocs build only
        self.restore_sigterm = lambda: None
        self.counter: logs.WarningCounter | None = None
        self.date = "1970-01-01"
        self.conversions: bytes | None = None  # mkdocs serve: what every page's conversion reads
        self.localized = Localized()  # the build's languages (site_builder.localize)
        self.collected: Collected | None = None  # `site-builder shown`: built path -> shown values
        self.shown: ShownLists | None = None  # the generated pages' shown values against their golden lists

    @property
    def serving(self) -> bool:
        return self.command == "serve"

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command, self.dirty = command, dirty

    @event_priority(100)
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        from .pipeline import pin_numeric_environment

        pin_numeric_environment()  # page code this process runs computes as the fixture interpreters do
        self._close()
        root = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
        self.project = Project.at(
            root,
            pages_dir=self.config.pages_dir,
            templates_dir=self.config.templates_dir,
            docs_dir=str(Path(config.docs_dir).resolve()),
            cache_dir=self.config.cache_dir,
        )
        if config.strict:
            self.counter = logs.WarningCounter()
            logging.getLogger("mkdocs").addHandler(self.counter)
        try:
            self.pages = self.project.pages()
            if config.nav is not None:
                config.nav.extend(nav_additions(config.nav, self.pages))
            self.date = site_date(root)
            if not self.serving:
                config.site_dir = str(self._stage(Path(config.site_dir).resolve()))
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        return config

    def _stage(self, site: Path) -> Path:
        """mkdocs build writes into a staging folder that takes the site's place only when the build is done."""
        self.restore_sigterm = publish.sigterm_interrupts()
        logging.getLogger(_MKDOCS_BUILD_LOG).addFilter(_ECHO)
        self.staging = publish.Staging(site, logs.info, logs.notice)
        return self.staging.start(self.dirty)

    def on_pre_build(self, config: MkDocsConfig) -> None:
        """Every generated page, from the cache or run and rendered (see :mod:`site_builder.build`)."""
        from .scan import ShownLists

        assert self.project is not None
        project = self.project
        store = self.store = Store(project.cache_dir, logs.notice, project.display)
        index_from_store(config.plugins, store)  # Material's search index reads each page once per content
        self.conversions = None
        self.shown = None
        try:
            built = self.built = build_pages(project, self.pages, store, keep_going=self.serving, progress=logs.info)
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        except OSError as exc:
            raise _fail(str(os_error(exc))) from None
        for issue in built.goldens:  # mkdocs serve: shown with the fresh values, not a stop
            logs.warning(f"{issue.message()} (serving the fresh values)")
        for error in built.failed.values():
            logs.serve_error(f"{error} (the page shows this error)")
        self.scan = NumberScan.of_build(project, self.pages, built, store)
        shows = [page for page in self.pages if page.slug in built.pages]
        self.shown = ShownLists(
            project, shows, store=store, code=built.code, serving=self.serving, collected=self.collected
        )
        for stale in self.stale_translations():
            logs.warning(stale)  # mkdocs serve shows the page and says so; --strict fails
        logs.info(built.summary())

    def stale_translations(self) -> list[str]:
        """Every translation in the page folders and the docs folder whose English changed since (or that has
        no record of its English)."""
        assert self.project is not None
        project = self.project
        folders = [page.folder for page in self.pages] + [project.templates_dir, project.docs_dir]
        return [
            line
            for folder in folders
            for path in translations_in(folder)
            if (line := stale_translation(path, project.display(path), project.root)) is not None
        ]

    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """The theme's templates are compiled once and kept in the cache store, like ours."""
        from .render.templating import compiled_cache

        if self.store is not None:
            env.bytecode_cache = compiled_cache(env, self.store)
        return env

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """The translated hand-written pages, and every generated page and download, as virtual files."""
        self.localized = Localized()
        self.localized.languages.generated = list(self.pages)
        self.localized.add_hand_written(files, config)
        for page in self.pages:
            self._add_generated(page, files, config)
        return files

    def _add_generated(self, page: Page, files: Files, config: MkDocsConfig) -> None:
        """A generated page in each of its languages and its downloads (or, under ``mkdocs serve``, its error)."""
        from mkdocs.structure.files import InclusionLevel

        from .serve import error_page

        rendered = self.built.pages.get(page.slug)
        twins = {lang: page.twin(lang) for lang in page.languages}
        if rendered is not None:
            generated = {page.page_path: rendered.markdown, **rendered.files}
            generated |= {twins[lang].page_path: text for lang, text in rendered.translations.items()}
        elif page.slug in self.built.failed:
            generated = {t.page_path: error_page(t, self.built.failed[page.slug]) for t in twins.values()}
        else:
            return
        self.localized.languages.add({lang: twin.page_path for lang, twin in twins.items()})
        out_of_nav = {t.page_path for t in twins.values() if t.lang != page.lang}
        for path, content in generated.items():
            existing = files.get_file_from_path(path)
            if existing is not None and not existing.generated_by:
                raise _fail(
                    f"{Path(config.docs_dir).name}/{path} collides with a generated file of page "
                    f"{page.slug}; remove it from the docs folder"
                )
            if existing is not None:
                files.remove(existing)
            inclusion = InclusionLevel.NOT_IN_NAV if path in out_of_nav else InclusionLevel.UNDEFINED
            files.append(File.generated(config, path, content=content, inclusion=inclusion))

    def on_nav(self, nav: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """The English navigation is MkDocs's; each translation gets its own, shown on its pages."""
        self.localized.navigate(nav, files)
        return nav

    def on_page_context(self, context: Any, *, page: Any, config: MkDocsConfig, nav: Any) -> Any:
        """A page in its language: its navigation and site name, its twins, a switcher to them."""
        self.localized.page_context(context, page, config)
        return context

    def on_template_context(self, context: Any, *, template_name: str, config: MkDocsConfig) -> Any:
        """A page that is not one of the site's (404.html, the sitemap) has no twins, and is in English."""
        self.localized.plain_context(config)
        return context

    def on_page_markdown(self, markdown: str, *, page: Any, config: MkDocsConfig, files: Files) -> str:
        from .render.stash import stashed_render

        stashed_render(page)
        if self.serving:
            from .serve import conversion_digest, reuse_conversions

            if self.conversions is None:
                self.conversions = conversion_digest(config, files)
            reuse_conversions(page, self.conversions)
        return markdown

    def on_pre_page(self, page: Any, *, config: MkDocsConfig, files: Files) -> Any:
        page.update_date = self.date  # the sitemap's lastmod and the sitemap.xml.gz header, from the sources
        return page

    def on_post_page(self, output: str, *, page: Any, config: MkDocsConfig) -> str:
        """Every number a reader sees must carry its provenance: warn (fail under --strict) about any other."""
        built = page.file.dest_uri
        if self.scan is None:
            return output
        source = Path(config.docs_dir) / page.file.src_uri if page.file.src_uri else None
        for line in self.scan.warnings(output, built, source):
            logs.warning(line)
        if self.shown is not None:
            try:
                self.shown.page(output, built)
            except SiteBuilderError as exc:
                raise _fail(str(exc)) from None
        return output

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        from .serve import poll_faster

        assert self.project is not None
        poll_faster(server)
        # MkDocs already watches docs/ and mkdocs.yml; add the page folders, shared templates and the package.
        for path in (PACKAGE_DIR, self.project.pages_dir, self.project.templates_dir):
            if path.exists():
                server.watch(str(path))
        return server

    @event_priority(-100)
    def on_post_build(self, config: MkDocsConfig) -> None:
        stale = self.shown.stale if self.shown is not None else []
        if stale:
            raise _fail(stale[0] + (f" ({len(stale) - 1} more pages differ)" if len(stale) > 1 else ""))
        try:
            self.localized.finish(Path(config.site_dir))
        except OSError as exc:
            raise _fail(str(os_error(exc, None, "cannot write the search index"))) from None
        if self.store is not None and not self.built.failed:
            self.store.prune()  # every page built: what this build did not use, no build will
        if self.staging is None:
            return
        if config.strict and self.counter is not None and self.counter.count:
            self._close()  # MkDocs raises its strict-mode abort right after this event: keep the old site
            return
        try:
            self.staging.publish()
        except SiteBuilderError as exc:
            raise _fail(str(exc)) from None
        config.site_dir = str(self.staging.site)
        self._close()

    def on_build_error(self, *, error: Exception) -> None:
        if isinstance(error, OSError):
            # An I/O failure inside MkDocs itself (a full disk while it copies the theme or writes a page).
            where = str(self.staging.site) if self.staging else None
            if error.filename and self.staging:
                where = self.staging.published(error.filename)
            logs.log.error(f"{NAME}: {shown(str(os_error(error, where, 'cannot build the site')), 2000)}")
            self._close()
            raise Abort("Aborted with a BuildError!") from None
        self._close()

    def on_shutdown(self) -> None:
        self._close()
        logging.getLogger(_MKDOCS_BUILD_LOG).removeFilter(_ECHO)

    def _close(self) -> None:
        """End what this build holds: the staging folder and the lock, the SIGTERM handler, the warning count."""
        if self.staging is not None:
            self.staging.close()
            self.staging = None
        self.restore_sigterm()
        self.restore_sigterm = lambda: None
        if self.counter is not None:
            logging.getLogger("mkdocs").removeHandler(self.counter)
            self.counter = None
