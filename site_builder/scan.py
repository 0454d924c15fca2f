"""The build's number scan: every number a built page shows must carry its provenance.

Each page MkDocs writes is read for numbers that come from no trace (:func:`site_builder.check.document.unproven_numbers`);
each one found is a warning naming the page, the element, the number and, where it can be found, the template
or docs line that typed it (so ``--strict`` fails the build and ``mkdocs serve`` only warns). A page found clean
is kept in the cache store (``.cache/scan/NAME``, NAME the SHA-256 of the scanner's code, the names the page's
facts carry and its HTML), so the same HTML with the same facts is not parsed again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import Store, name
from .errors import shown
from .project import Page, Project

if TYPE_CHECKING:
    from .build import Built

KIND = "scan"
SCAN_FORMAT = "site-builder number scan 2"


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
