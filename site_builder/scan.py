"""What the build reads in each page it writes: numbers without provenance, and the values its golden list holds.

:class:`NumberScan`: every number a built page shows must carry its provenance.

Each page MkDocs writes is read for numbers that come from no trace (:func:`site_builder.check.document.unproven_numbers`);
each one found is a warning naming the page, the element, the number and, where it can be found, the template
or docs line that typed it (so ``--strict`` fails the build and ``mkdocs serve`` only warns). A page found clean
is kept in the cache store (``.cache/scan/NAME``, NAME the SHA-256 of the scanner's code, the names the page's
facts carry and its HTML), so the same HTML with the same facts is not parsed again.

:class:`ShownLists`: each generated page's shown values against its golden list (:mod:`site_builder.check.places`,
written by ``site-builder shown --write-golden``, see :mod:`site_builder.shown`). A list that differs stops the
build before it publishes (a warning under ``mkdocs serve``); a missing one is written. A page found to agree
with its list is kept in the cache store (``.cache/shown/NAME``, NAME the SHA-256 of our code, the page's path
and HTML and the list's bytes): a build that writes the same page against the same list parses neither again,
and so never imports the HTML parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import logs
from .cache import Store, name
from .errors import os_error, shown
from .project import Page, Project

if TYPE_CHECKING:
    from .build import Built
    from .check import places

KIND = "scan"
SCAN_FORMAT = "site-builder number scan 2"
SHOWN_KIND = "shown"
SHOWN_FORMAT = "site-builder shown values agree 1"
Collected = dict[str, tuple["places.ShownValue", ...]]  # built path -> the values it shows


@dataclass(frozen=True)
class Scanned:
    """What a page may show as words (its facts' names), and where a number typed on it may have come from."""

    names: frozenset[str]
    origins: tuple[Path, ...]  # template folders or docs files, searched for the line that typed a number


class NumberScan:
    """The scan of one build: ``pages`` by built path (``""`` for every page not generated, which may show the
    names of any page's facts); ``code`` is the digest of the scanner's own code."""

    def __init__(
        self,
        project: Project,
        store: Store,
        code: bytes,
        pages: Mapping[str, Scanned],
        skip: frozenset[str] = frozenset(),
    ) -> None:
        self.project = project
        self.store = store
        self.code = code
        self.pages = dict(pages)
        self.skip = skip  # built paths of pages that show their build error (mkdocs serve), not scanned

    @classmethod
    def of_build(cls, project: Project, pages: Sequence[Page], built: Built, store: Store) -> NumberScan:
        """The scan of the site whose generated pages are ``built``: each may show its own facts' names, and a
        number typed on it is looked for in its folder's and the shared templates; any other page may show the
        names of every page's facts."""
        scanned = {
            p.twin(lang).html_path: Scanned(frozenset(built.pages[p.slug].names), (p.folder, project.templates_dir))
            for p in pages
            if p.slug in built.pages
            for lang in p.languages
        }
        scanned[""] = Scanned(frozenset().union(*(s.names for s in scanned.values())), ())
        failed = frozenset(p.twin(lang).html_path for p in pages if p.slug in built.failed for lang in p.languages)
        return cls(project, store, built.code, scanned, failed)

    def warnings(self, html: str, built: str, source: Path | None) -> list[str]:
        """One line per number without provenance on the page MkDocs built at ``built`` (``source``: its docs file)."""
        if built in self.skip:
            return []
        scanned = self.pages.get(built) or self.pages.get("") or Scanned(frozenset(), ())
        entry = name(SCAN_FORMAT, self.code, "\0".join(sorted(scanned.names)), html)
        if self.store.get(KIND, entry, "scanning the page again") is not None:
            return []  # this very HTML, with these facts, was found clean before
        from .check.document import unproven_numbers

        try:
            problems = unproven_numbers(html, built, scanned.names)
        except ValueError as exc:
            return [f"{built}: the page cannot be checked for numbers: {exc}"]
        if not problems:
            self.store.put(KIND, entry, b"clean")
            return []
        origins = scanned.origins if built in self.pages else ((source,) if source else ())
        lines = []
        for problem in problems:
            number = problem.found.split("'")[1] if "'" in problem.found else problem.found
            where = locate(number, origins, self.project)
            at = f" ({where})" if where else ""
            lines.append(shown(f"{built}: {problem.element}: {problem.found} has no provenance{at}", 1000))
        return lines


def locate(number: str, origins: tuple[Path, ...], project: Project | None) -> str | None:
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
                return f"{project.display(file) if project else file}:{number_}"
    return None


class ShownLists:
    """What a build's generated pages show, page by page, against their golden lists; with ``collected`` (an empty
    mapping, ``site-builder shown``) the values are collected instead of compared."""

    def __init__(
        self,
        project: Project,
        built: Iterable[Page],
        *,
        store: Store,
        code: bytes,
        serving: bool,
        collected: Collected | None,
    ) -> None:
        self.project = project
        self.store = store
        self.code = code  # the digest of our code (see site_builder.build.Built.code)
        self.by_path = {twin.html_path: twin for page in built for twin in map(page.twin, page.languages)}
        self.serving = serving
        self.collected = collected
        self.stale: list[str] = []  # the lists the built pages disagree with: the build stops before it publishes

    def page(self, output: str, built: str) -> None:
        """The built page ``built`` (its HTML ``output``): collected, or compared with its golden list, or that
        list written when there is none; a :class:`SiteBuilderError` when the list cannot be read or written."""
        page = self.by_path.get(built)
        if page is None:
            return
        if self.collected is not None:
            if (values := self._values(output)) is not None:
                self.collected[built] = values
            return
        path = page.golden_shown
        try:
            raw: bytes | None = path.read_bytes()
        except OSError:
            raw = None  # none, or unreadable: read_golden below says which
        entry = name(SHOWN_FORMAT, self.code, built, output, raw or b"")
        if raw is not None and self.store.get(SHOWN_KIND, entry, "comparing the page with its list again") is not None:
            return  # this very page was found to agree with this very list before
        if (values := self._values(output)) is None:
            return
        from .check import places

        shown_as = self.project.display(path)
        golden = places.read_golden(path, shown_as) if raw is None else places.parse_golden(raw, shown_as)
        if golden is None:
            self._write(values, built, path, page.lang, shown_as)
        elif changes := places.compare(golden, values):
            self._stale(places.stale_message(changes, built, shown_as))
        else:
            self.store.put(SHOWN_KIND, entry, b"agrees")

    @staticmethod
    def _values(output: str) -> tuple[places.ShownValue, ...] | None:
        from .check import places
        from .check.document import parse_html

        try:
            return places.shown_values(parse_html(output))
        except ValueError:
            return None  # the number scan has said why the page cannot be read

    @staticmethod
    def _write(values: tuple[places.ShownValue, ...], built: str, path: Path, lang: str, name: str) -> None:
        from .check import places

        try:
            places.write_golden(values, built, path, lang)
        except OSError as exc:
            raise os_error(exc, path, "cannot write") from None
        logs.info(f"wrote {name}: the {len(values)} values {built} shows; review and commit it")

    def _stale(self, line: str) -> None:
        if self.serving:
            logs.warning(line)
        else:
            self.stale.append(line)
