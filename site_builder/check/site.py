"""A whole built site: every page, every drawing, every download, against one fresh run."""

from __future__ import annotations

import difflib
import importlib.resources
import itertools
import json
import os
import posixpath
import re
import stat
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from lxml import etree

from ..errors import UsageError, os_error
from ..i18n import LANGUAGES, SOURCE, localized_path, source_name
from ..numerals import scan
from ..project import Project, read_mkdocs_yml
from . import places
from .charts import check_charts, check_diagrams
from .coverage import EntryError, Node, Shown, index, is_shown, parse_entry
from .document import (
    Facts,
    PageReport,
    check_document,
    check_heading,
    css_content,
    css_refused,
    parse_html,
    parse_svg,
    visible_text,
)
from .excerpts import Sources
from .fresh import Fresh, FreshPage, check_goldens, collect, html_path
from .problems import DETAIL_LINES, Problem, Result, quote
from .verdicts import Reads, Verdicts

_WS = re.compile(r"\s+")


class SiteError(UsageError):
    """The site folder cannot be checked at all (usage or I/O), as opposed to a site that disagrees."""


@dataclass(frozen=True)
class Setup:
    """Everything a check needs besides the site: computed once, reusable across many checks."""

    fresh: Fresh
    sources: Sources
    docs_dir: Path
    goldens: Mapping[tuple[str, str], Path] | None = None
    languages: frozenset[str] | None = None  # the languages checked; None: every one the project publishes

    @property
    def project(self) -> Project:
        return self.fresh.project

    def shown_golden(self, page: FreshPage) -> Path:
        """The golden list of the values ``page`` shows (a test may put another file in its place)."""
        return (self.goldens or {}).get((page.source.slug, "shown")) or page.source.golden_shown

    def facts_for(self, page: str) -> Facts:
        """A generated page gets its own facts; every other page (hand-written) the union of all."""
        owner = self.fresh.owner(page)
        return Facts(owner.facts) if owner is not None else self.fresh.union


def setup(
    project: Project | None = None,
    *,
    fresh: Fresh | None = None,
    goldens: Mapping[tuple[str, str], Path] | None = None,
    rerun: bool = False,
    languages: frozenset[str] | None = None,
) -> Setup:
    """What a check compares a site against: the pages' runs, the source regions, the hand-written pages.

    ``rerun`` runs every page's fixtures regardless of the cache (``site-builder check --fresh``). ``languages``
    limits the check to the pages in those languages (``--languages en`` for the English export); every
    language the project publishes, by default.
    """
    project = project or (fresh.project if fresh is not None else Project.find())
    fresh = fresh or collect(project, fresh=rerun)
    if languages is not None:
        fresh = replace(fresh, pages=tuple(p for p in fresh.pages if p.source.lang in languages))
    return Setup(fresh, Sources(project.root), project.docs_dir, goldens, languages)


def check_tree(setup: Setup, page: str, root: etree._Element) -> PageReport:
    """One parsed HTML page (only read, never changed), with the coverage of its ``shows`` when it is generated.

    Coverage here counts the page's own HTML only; :func:`check_site` also counts
    standalone drawings in the page's folder.
    """
    report = check_document(root, page, setup.facts_for(page), setup.sources)
    fresh_page = setup.fresh.by_html_path.get(page)
    if fresh_page is not None:
        report.problems += check_heading(root, page, fresh_page.source.heading)
        report.problems += check_charts(root, page, fresh_page.charts)
        report.problems += check_diagrams(root, page, setup.fresh.diagrams(fresh_page))
        report.problems += check_places(setup, fresh_page, root)
        report.problems += check_coverage(fresh_page, report.shown)
    return report


def check_places(setup: Setup, page: FreshPage, root: etree._Element) -> list[Problem]:
    """Each value in its place: a table's values by their rows' records, and the page's values against its golden
    list (section, place, key, text), so that a value lost, moved or added is named with its place."""
    path = setup.shown_golden(page)
    values = places.shown_values(root)
    _, problems = places.against_golden(values, page.html_path, path, setup.project.display(path))
    return places.misplaced(root, page.html_path) + problems


def _golden_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def check_page(setup: Setup, page: str, text: str | bytes) -> PageReport:
    """One HTML page from its text, e.g. a tampered copy, without re-running any fixture."""
    return check_tree(setup, page, parse_html(text))


def check_site(site_dir: Path, prepared: Setup | None = None, verdicts: Verdicts | None = None) -> Result:
    """Every check on a built site. Raises :class:`SiteError` when there is no site to check.

    With ``verdicts`` (``site-builder check``), a document an earlier check found clean with exactly the same
    inputs is not read again (see :mod:`~site_builder.check.verdicts`); the caller saves them afterwards.
    """
    site_dir = Path(site_dir)
    if not site_dir.exists():
        raise SiteError(f"no site folder at {site_dir} (build it first: mkdocs build)")
    if not site_dir.is_dir():
        raise SiteError(f"{site_dir} is not a folder (give the built site's folder)")
    prepared = prepared or setup()
    result = Result()
    result.problems += check_goldens(prepared.fresh, prepared.goldens)

    files, special = site_files(site_dir)
    for page, kind in special:
        result.problems.append(Problem(page, 0, "file", "a regular file", f"{kind} (skipped)"))
    kinds = {f: kind_of(f) for f in files}
    styles = [f for f in files if kinds[f] == ".css"]
    shown_attributes: set[str] = set()
    for file in styles:
        page = file.relative_to(site_dir).as_posix()
        text = _decoded(_read(file), page, "CSS style sheet")
        if isinstance(text, Problem):
            result.problems.append(text)
            continue
        strings, named = css_content(text)
        shown_attributes |= named
        for i, what in enumerate(css_refused(text)):
            result.problems.append(
                Problem(page, i, "style sheet", "a style that writes only what the check reads", what)
            )
        for i, string in enumerate(strings):
            for found in scan(string, (), page):
                result.problems.append(
                    Problem(
                        page,
                        i,
                        "content",
                        "a number with provenance (data-trace) or an allowed one",
                        f"{found.text!r} in {quote(string, 80)}",
                    )
                )

    shown: dict[str, list[Shown]] = {}
    links: dict[str, set[str]] = {}
    texts: dict[str, str] = {}  # built page -> what it shows, without spaces (for the search index)
    documents: list[tuple[Path, Callable[[bytes], etree._Element], str]]
    documents = [(f, parse_html, "HTML") for f in files if kinds[f] == ".html"]
    documents += [(f, parse_svg, "SVG") for f in files if kinds[f] == ".svg"]
    attributes = frozenset(shown_attributes)
    for file, parse, kind in documents:
        page = file.relative_to(site_dir).as_posix()
        raw = _read(file)
        facts = prepared.facts_for(page)
        generated = prepared.fresh.by_html_path.get(page)
        key = None
        if verdicts is not None:
            key = verdicts.key(
                page,
                raw,
                facts,
                attributes,
                *(
                    (
                        generated.source.heading,
                        generated.charts,
                        prepared.fresh.diagrams(generated),
                        _golden_bytes(prepared.shown_golden(generated)),
                    )
                    if generated is not None
                    else ()
                ),
            )
        known = verdicts.reuse(key, prepared.sources) if verdicts is not None and key is not None else None
        if known is not None:  # found clean before, with these very inputs
            report = PageReport(values=known.values, shown=list(known.shown), links=set(known.links))
            visible = known.text
        else:
            decoded = _decoded(raw, page, f"{kind} document")
            if isinstance(decoded, Problem):
                result.problems.append(decoded)
                continue
            try:
                root = parse(raw)
            except (etree.XMLSyntaxError, ValueError) as exc:
                result.problems.append(Problem(page, 0, "file", f"a readable {kind} document", str(exc)))
                continue
            reads = Reads(prepared.sources)
            report = check_document(root, page, facts, reads, attributes)
            if generated is not None:
                report.problems += check_heading(root, page, generated.source.heading)
                report.problems += check_charts(root, page, generated.charts)
                report.problems += check_diagrams(root, page, prepared.fresh.diagrams(generated))
                report.problems += check_places(prepared, generated, root)
            visible = visible_text(root) if kind == "HTML" else None
            if verdicts is not None and key is not None and not report.problems:
                verdicts.keep(key, report, visible, reads.read)
        _add(result, report)
        owner = prepared.fresh.owner(page)
        if owner is not None:
            shown.setdefault(owner.html_path, []).extend(report.shown)
        links[page] = report.links
        if kind == "HTML" and visible is not None:
            texts[page] = visible

    for lang in LANGUAGES:
        result.problems += check_search_index(site_dir, texts, lang)
    for fresh_page in prepared.fresh.pages:
        result.problems += check_coverage(fresh_page, shown.get(fresh_page.html_path))
        result.problems += check_downloads(site_dir, fresh_page, prepared, links.get(fresh_page.html_path))
    result.problems += check_twins(prepared.fresh, shown)
    result.problems += check_missing(site_dir, prepared)
    result.problems += check_unexpected(site_dir, prepared)
    result.sort()
    return result


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)
CHECKED = (".html", ".svg", ".css")  # the files of a site a reader reads: pages, drawings, style sheets
_SNIFFED = 1024  # bytes read of a file of another name, to tell a page or a drawing by its content


def kind_of(path: Path) -> str | None:
    """``.html``, ``.svg`` or ``.css`` for a file a reader reads, by its name in any case (``fig.SVG``) or, for
    any other name, by its content (a page or a drawing saved as ``notes.txt``); None for any other file."""
    suffix = path.suffix.lower()
    if suffix in CHECKED:
        return suffix
    if suffix in (".htm", ".xhtml", ".shtml"):
        return ".html"
    try:
        with path.open("rb") as f:
            head = f.read(_SNIFFED)
    except OSError:
        return None
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return ".html"
    if head.startswith(b"<svg") or (head.startswith((b"<?xml", b"<!doctype svg")) and b"<svg" in head):
        return ".svg"
    return None


def site_files(site_dir: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Regular files the checker reads (pages, drawings, style sheets, by :func:`kind_of`), sorted; and every
    entry that is no regular file.

    Nothing but a regular file is ever opened: a named pipe would block the check, a device would never end.
    Symbolic links are followed to files; a link to a folder is reported, never followed (a page behind it
    would go unchecked).
    """
    files: list[Path] = []
    special: list[tuple[str, str]] = []
    for folder, dirs, names in os.walk(site_dir):
        dirs.sort()
        for name in [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            special.append(
                ((Path(folder) / name).relative_to(site_dir).as_posix(), "a link to a folder (not followed)")
            )
        for name in sorted(names):
            path = Path(folder) / name
            relative = path.relative_to(site_dir).as_posix()
            try:
                mode = path.stat().st_mode
            except FileNotFoundError:
                special.append((relative, "a link to nothing"))
                continue
            except OSError as exc:
                raise os_error(exc, path, "cannot read") from None
            if stat.S_ISREG(mode):
                if kind_of(path) is not None:
                    files.append(path)
            else:
                special.append((relative, next((what for test, what in _KINDS if test(mode)), "not a regular file")))
    return sorted(files), special


def _decoded(raw: bytes, page: str, kind: str) -> str | Problem:
    """A file's text, or the problem that it is not UTF-8 (a garbage page is one line, not its mojibake)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(
            page, 0, "file", f"a UTF-8 {kind}", f"bytes that are not UTF-8 ({exc.reason} at byte {exc.start})"
        )


def _add(result: Result, report: PageReport) -> None:
    result.problems += report.problems
    result.values += report.values
    result.pages += 1


def _read(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as exc:
        raise os_error(exc, file, "cannot read") from None


def check_coverage(p: FreshPage, shown: list[Shown] | None) -> list[Problem]:
    """Every field of the page's trace is on the page, and each ``shows`` entry of its page.toml where it says.

    See :mod:`site_builder.check.coverage` for the entries.
    """
    if shown is None or p.facts is None:
        return []  # a missing page or a failed run is reported elsewhere
    problems: list[Problem] = []
    by_key = index(shown)
    for i, entry in enumerate((*p.keys, *p.source.shows)):
        order = 10**9 + i  # after the page's own problems, in declaration order
        try:
            selectors, key = parse_entry(entry)
        except EntryError as exc:
            problems.append(Problem(p.html_path, order, f"shows {entry!r}", exc.expected, exc.found))
            continue
        scope = entry[: -len(key)].strip()
        where = f"{scope} [data-trace={key}]" if scope else f"[data-trace={key}]"
        if key not in p.facts:
            problems.append(Problem(p.html_path, order, where, "a key of the page's facts", "unknown key"))
        elif not is_shown(selectors, key, by_key):
            there = f"in {scope}" if scope else "on the page"
            problems.append(Problem(p.html_path, order, where, f"the value shown {there}", "not shown"))
    return problems


def resolve_links(page: str, hrefs: set[str]) -> set[str]:
    """The site paths the page's links reach: each href resolved against the page's URL, whatever its form.

    ``claims-v1.trace.txt``, ``./claims-v1.trace.txt``, ``../claims/claims-v1.trace.txt`` and
    ``/evidence/claims/claims-v1.trace.txt`` from ``evidence/claims/index.html`` all reach
    ``evidence/claims/claims-v1.trace.txt``. Links to other hosts reach nothing here.
    """
    from urllib.parse import unquote, urlsplit

    base = posixpath.dirname(page)
    out: set[str] = set()
    for href in hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path:
            continue
        path = unquote(parts.path)
        joined = path.lstrip("/") if path.startswith("/") else posixpath.join(base, path)
        resolved = posixpath.normpath(joined)
        if resolved.endswith("/") or path.endswith("/"):
            resolved = posixpath.join(resolved, "index.html")
        out.add("index.html" if resolved == "." else resolved)
    return out


def download_file(site_dir: Path, p: FreshPage, name: str) -> Path:
    """A download sits beside its page (in the page's folder)."""
    return site_dir / p.folder / name


def check_downloads(site_dir: Path, p: FreshPage, prepared: Setup, links: set[str] | None = None) -> list[Problem]:
    """Each download is published beside its page, linked from it, with exactly the golden file's bytes."""
    problems: list[Problem] = []
    for name, kind in sorted((p.downloads or {}).items()):
        file = download_file(site_dir, p, name)
        where = file.relative_to(site_dir).as_posix()
        if links is not None and where not in resolve_links(p.html_path, links):
            problems.append(
                Problem(p.html_path, 10**9 - 1, f"a[href={name}]", f"a link to the {kind} download", "none")
            )
        golden = (prepared.goldens or {}).get((p.source.slug, kind)) or p.source.golden(kind)
        if not file.is_file():
            problems.append(Problem(where, 0, "download", f"the published {kind} (the golden file's bytes)", "no file"))
            continue
        try:
            want = golden.read_bytes()
        except OSError:
            continue  # a missing, unreadable or folder golden is reported with the goldens
        got = _read(file)
        if got != want:
            old = want.decode("utf-8", "replace").splitlines()
            new = got.decode("utf-8", "replace").splitlines()
            shown = prepared.project.display(golden)
            diff = tuple(itertools.islice(difflib.unified_diff(old, new, shown, where, lineterm=""), DETAIL_LINES + 1))
            problems.append(
                Problem(
                    where,
                    0,
                    "download",
                    f"the bytes of {shown}",
                    f"{len(got)} bytes that differ",
                    diff or ("(the files differ only in line endings or the final newline)",),
                )
            )
    return problems


SEARCH_INDEX = "search/search_index.json"


def place(chain: tuple[Node, ...]) -> str:
    """Where on a page a value is shown, in words both languages share: the innermost element with an id that
    the page's template gave it (a diagram, a table, a figure), else the page's text."""
    for node in reversed(chain):
        if node.id and node.tag in ("svg", "table", "figure", "details", "div", "ol", "ul"):
            return f"{node.tag}#{node.id}"
    return "the text"


def check_twins(fresh: Fresh, shown: Mapping[str, list[Shown]]) -> list[Problem]:
    """A page and its translation show the same values in the same places: each key, counted where it is drawn
    (:func:`place`), as often on one as on the other. A value one shows and the other lacks is a problem naming
    both pages."""
    problems: list[Problem] = []
    by_slug: dict[str, dict[str, FreshPage]] = {}
    for p in fresh.pages:
        by_slug.setdefault(p.source.slug, {})[p.source.lang] = p
    for twins in by_slug.values():
        english = twins.get(SOURCE)
        if english is None or english.html_path not in shown:
            continue
        counted = Counter((s.key, place(s.chain)) for s in shown[english.html_path])
        for lang, twin in sorted(twins.items()):
            if lang == SOURCE or twin.html_path not in shown:
                continue  # a missing page is reported elsewhere
            theirs = Counter((s.key, place(s.chain)) for s in shown[twin.html_path])
            for i, (key, where) in enumerate(sorted(set(counted) | set(theirs))):
                ours, its = counted[(key, where)], theirs[(key, where)]
                if ours == its:
                    continue
                problems.append(
                    Problem(
                        twin.html_path,
                        2 * 10**9 + i,
                        f"{where} [data-trace={key}]",
                        f"the value as {english.html_path} shows it there ({_times(ours)})",
                        f"{_times(its)} on {twin.html_path}",
                    )
                )
    return problems


def _times(n: int) -> str:
    return "not shown" if n == 0 else ("once" if n == 1 else f"{n} times")


def check_search_index(site_dir: Path, texts: Mapping[str, str], lang: str = SOURCE) -> list[Problem]:
    """Search results show text from ``search/search_index.json`` (and each translation's ``LANG/search/…``, whose
    locations are below ``LANG/``): each number there must be one its page shows.

    The index holds each section's text with the markup stripped, so a number is looked for in the page's
    visible text with the spaces removed (a value and the code of an excerpt count as shown).
    """
    at = localized_path(SEARCH_INDEX, lang)
    file = site_dir / at
    if not file.is_file():
        return []

    def problem(order: int, element: str, expected: str, found: str) -> Problem:
        return Problem(at, order, element, expected, found)

    text = _decoded(_read(file), at, "JSON search index")
    if isinstance(text, Problem):
        return [text]
    try:
        docs = json.loads(text)["docs"]
        entries = [(str(d.get("location", "")), str(d.get("title", "")), str(d.get("text", ""))) for d in docs]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return [problem(0, "file", "a search index (JSON with a list of docs)", f"{type(exc).__name__}: {exc}")]
    problems: list[Problem] = []
    minus: dict[str, str] = {}  # built page -> what it shows, with the minus sign for every hyphen
    for i, (location, title, body) in enumerate(entries):
        page = html_path(location.split("#", 1)[0] + "index.md") if location.split("#", 1)[0] else "index.html"
        page = localized_path(page, lang)
        shown = texts.get(page)
        element = f"docs[{i}] ({location or '/'})"
        if shown is None:
            problems.append(problem(i, element, "an entry for a page of the site", f"no page {page}"))
            continue
        if page not in minus:
            minus[page] = shown.replace("-", "\u2212")
        words = title + "\n" + "".join(parse_html(f"<div>{body}</div>").itertext()) if body.strip() else title
        for found in scan(words, ()):
            if _WS.sub("", found.text).replace("-", "\u2212") not in minus[page]:
                problems.append(problem(i, element, f"a number {page} shows", f"{found.text!r} in {quote(words, 80)}"))
    return problems


def expected_pages(prepared: Setup) -> list[tuple[str, str]]:
    """(built path, where it comes from) for every generated page and every hand-written Markdown page."""
    out = [(p.html_path, f"generated page {prepared.project.display(p.source.folder)}") for p in prepared.fresh.pages]
    docs = prepared.docs_dir
    if docs.is_dir():
        for md in sorted(docs.rglob("*.md")):
            rel = md.relative_to(docs).as_posix()
            english, lang = source_name(md.name)
            if prepared.languages is not None and lang not in prepared.languages:
                continue
            built = localized_path(posixpath.join(posixpath.dirname(rel), english), lang)
            out.append((html_path(built), f"docs/{rel}"))
    return out


def check_missing(site_dir: Path, prepared: Setup) -> list[Problem]:
    problems: list[Problem] = []
    for page, origin in expected_pages(prepared):
        if not (site_dir / page).is_file():
            problems.append(Problem(page, 0, "page", f"the built page of {origin}", "no file"))
    return problems


# Files the build itself writes besides the pages: MkDocs's error page and sitemap, and each language's search
# index (the Russian one under ru/).
BUILT = frozenset(
    {
        "404.html",
        "sitemap.xml",
        "sitemap.xml.gz",
        *(localized_path(SEARCH_INDEX, lang) for lang in LANGUAGES),
    }
)


def copied_from(prepared: Setup) -> list[Path]:
    """The folders whose files the build copies into the site as they are, first match first: the theme's
    overrides (``custom_dir``), Material's own theme files, then ``docs/``."""
    folders: list[Path] = []
    config = prepared.project.root / "mkdocs.yml"
    if config.is_file():
        theme = read_mkdocs_yml(config, ignore_tags=True).get("theme")
        custom = theme.get("custom_dir") if isinstance(theme, dict) else None
        if isinstance(custom, str):
            folders.append(prepared.project.root / custom)
    folders.append(Path(str(importlib.resources.files("material") / "templates")))
    folders.append(prepared.docs_dir)
    return folders


def check_unexpected(site_dir: Path, prepared: Setup) -> list[Problem]:
    """Every file of the site is one the build writes: a page, a download, a file it builds (search index,
    sitemap), or a byte-identical copy of a theme or ``docs/`` file. Anything else a reader could be shown
    (a picture, a frame's document, a changed script) would never have been checked."""
    known = {page for page, _ in expected_pages(prepared)} | set(BUILT)
    for p in prepared.fresh.pages:
        known |= {download_file(site_dir, p, name).relative_to(site_dir).as_posix() for name in p.downloads or {}}
    folders = copied_from(prepared)
    problems: list[Problem] = []
    for folder, dirs, names in os.walk(site_dir):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            relative = path.relative_to(site_dir).as_posix()
            if relative in known or not path.is_file():
                continue  # a page, a download or a built file; what is no regular file is reported already
            source = next((f / relative for f in folders if (f / relative).is_file()), None)
            if source is None:
                problems.append(
                    Problem(
                        relative,
                        0,
                        "file",
                        "a file the build writes (a page, a download or a copied file)",
                        "a file no build step writes",
                    )
                )
            elif _read(path) != _read(source):
                problems.append(
                    Problem(
                        relative, 0, "file", f"the bytes of {prepared.project.display(source)}", "bytes that differ"
                    )
                )
    return problems
