"""A project: where its page folders, shared templates, hand-written docs and caches are, and its pages.

A *page folder* is everything one generated page is::

    pages/ch24/
        page.toml      title, URL, navigation order, citations, literal numbers, diagram roles
        trace.py       the trace's records, declared once (``Trace``, see site_builder.trace.declare)
        fixtures.py    ``run() -> Run``: the experiments on the autograd engine
        report.py      optional: ``REPORT``, the learner report's keys (a page that publishes one)
        figures.py     optional: ``chart_facts(trace)`` and ``charts(trace, facts)``
        page.md.j2     the page template, beside its partials (``_*.j2``) and diagrams (``*.dot.j2``)
        golden/        trace.txt (and report.txt): the frozen expected output

Pages are found by scanning the pages folder for sub-folders holding a
``page.toml``; nothing outside a folder names its page. Their Python files are
imported as the package ``pages.<slug>``.
"""

from __future__ import annotations

import importlib
import posixpath
import re
import sys
import tomllib
import types
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import FileAccessError, SiteBuilderError, UsageError, os_error
from .i18n import TRANSLATED

PACKAGE = "pages"  # the import name of the pages folder
SLUG_RE = re.compile(r"[a-z][a-z0-9_]*")
ID_RE = re.compile(r"[a-z][a-z0-9-]*")
URL_RE = re.compile(r"(?:[a-z0-9][a-z0-9-]*/)+")


class PageConfigError(SiteBuilderError):
    """A page folder's ``page.toml`` is missing, malformed or says something impossible."""


def title_problem(title: str) -> str | None:
    """Why ``title`` cannot be a page's title, if it cannot: it must be one line, and hold no number, since it
    is shown in every page's navigation, where a number without provenance is refused (write it in words)."""
    if not title or "\n" in title:
        return "title must be one non-empty line"
    if not any(unicodedata.category(c)[0] == "N" for c in title):
        return None  # no character a reader reads as a number: the scanner (and its imports) is not needed
    from .numerals import scan

    found = scan(title)
    if found:
        return (
            f"the title {title!r} holds the number {found[0].text!r}; a title is shown in every page's navigation, "
            "where no number may appear without provenance: write it in words"
        )
    return None


def _line_of(path: Path, key: str) -> int:
    """The line of ``path`` (a TOML file) where the top-level ``key`` is set; 1 when it cannot be found."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
    return next((n for n, line in enumerate(lines, start=1) if pattern.match(line)), 1)


@dataclass(frozen=True)
class Citation:
    """A source a page cites: shown by ``cite(id)``, its year and identifiers verified like any number."""

    id: str
    authors: str
    year: int
    title: str
    arxiv: str | None = None  # e.g. "1512.03385"
    url: str | None = None  # when the source is not on arXiv
    lecture: int | None = None  # a numbered lecture of a course

    @property
    def href(self) -> str:
        return self.url or f"https://arxiv.org/abs/{self.arxiv}"

    @property
    def numbered_title(self) -> bool:
        """A title with a digit in it ("… in 1 Hour") is shown as a verified fact, like the year."""
        return any(ch.isdigit() for ch in self.title)


@dataclass(frozen=True)
class Literal:
    """A number the page may show without a trace behind it (an exponent, a count in a definition)."""

    id: str
    value: int | float | str
    reason: str


# Diagram roles every page has: a neutral set. A page adds its own in page.toml ([roles.nodes] / [roles.edges]).
NODE_ROLES: dict[str, str] = {
    "input": 'class="input", style="rounded"',
    "output": 'class="output", style="rounded,bold"',
    "step": 'class="step", style="rounded"',
}
EDGE_ROLES: dict[str, str] = {
    "flow": 'class="flow", style="solid"',
    "aside": 'class="aside", style="dashed"',
}


@dataclass(frozen=True)
class Page:
    """One discovered page folder and what its ``page.toml`` declares."""

    slug: str
    folder: Path
    title: str
    url: str  # where the page is served, e.g. "chapter-24/"
    order: float
    section: str | None = None  # the navigation section the page sits in
    chapter: int | None = None  # a course chapter number, shown before the title
    downloads: Mapping[str, str] = field(default_factory=dict)  # file name -> "trace" or "report"
    citations: tuple[Citation, ...] = ()
    literals: tuple[Literal, ...] = ()
    node_roles: Mapping[str, str] = field(default_factory=dict)
    edge_roles: Mapping[str, str] = field(default_factory=dict)
    shows: tuple[str, ...] = ()  # where values must be drawn: "svg#ID g.node.ROLE KEY", "table#ID KEY"
    lang: str = "en"  # the language of this page: "en", or a translation's (see twin())
    translations: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # lang -> its title and section

    @property
    def template(self) -> str:
        """The page template of this language: ``page.md.j2``, or its translation ``page.ru.md.j2``."""
        from .i18n import localized_name

        return localized_name("page.md.j2", self.lang)

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages the page is published in: English, then each translation its folder holds."""
        return ("en", *sorted(self.translations))

    def twin(self, lang: str) -> Page:
        """The page in ``lang``: its translated title and section, served under ``LANG/``; itself for English."""
        if lang == self.lang:
            return self
        if lang not in self.translations:
            raise KeyError(f"page {self.slug} has no {lang} translation")
        words = self.translations[lang]
        return replace(self, title=words["title"], url=f"{lang}/{self.url}", section=words.get("section"), lang=lang)

    @property
    def page_path(self) -> str:
        """The generated Markdown page's path inside the site (a virtual file, never written to docs/)."""
        return f"{self.url}index.md"

    @property
    def html_path(self) -> str:
        return f"{self.url}index.html"

    @property
    def heading(self) -> str:
        """The page's ``<h1>`` as text: the title, after ``Chapter N:`` for a chapter."""
        from .i18n import word

        return f"{word(self.lang, 'chapter')} {self.chapter}: {self.title}" if self.chapter is not None else self.title

    @property
    def golden_trace(self) -> Path:
        return self.folder / "golden" / "trace.txt"

    @property
    def golden_report(self) -> Path:
        return self.folder / "golden" / "report.txt"

    @property
    def golden_shown(self) -> Path:
        """The golden list of the values this page shows in its language (see :mod:`site_builder.check.places`)."""
        return self.folder / "golden" / f"shown.{self.lang}.txt"

    @property
    def has_report(self) -> bool:
        return (self.folder / "report.py").is_file()

    def golden(self, kind: str) -> Path:
        return self.golden_trace if kind == "trace" else self.golden_report

    def citation(self, cid: str) -> Citation:
        for c in self.citations:
            if c.id == cid:
                return c
        known = ", ".join(c.id for c in self.citations) or "none"
        raise KeyError(f"page {self.slug} declares no citation {cid!r} in page.toml (declared: {known})")

    def literal(self, lid: str) -> Literal:
        for lit in self.literals:
            if lit.id == lid:
                return lit
        known = ", ".join(lit.id for lit in self.literals) or "none"
        raise KeyError(f"page {self.slug} declares no literal {lid!r} in page.toml (declared: {known})")

    def download_names(self, version: str) -> dict[str, str]:
        """File name -> kind of every file published beside the page (page.toml's, or the default names)."""
        if self.downloads:
            return dict(self.downloads)
        names = {f"{version}.trace.txt": "trace"}
        if self.has_report:
            names[f"{self.url.rstrip('/').rsplit('/', 1)[-1]}-report.txt"] = "report"
        return names


_PAGE_KEYS = {
    "title": str,
    "url": str,
    "order": (int, float),
    "section": str,
    "chapter": int,
    "downloads": dict,
    "citations": list,
    "literals": dict,
    "roles": dict,
    "shows": list,
    **{lang: dict for lang in TRANSLATED},  # a translation's title and section: [ru] title = "…"
}
_CITATION_KEYS = {"id": str, "authors": str, "year": int, "title": str, "arxiv": str, "url": str, "lecture": int}


def _typed(where: str, table: Mapping[str, Any], allowed: Mapping[str, Any], required: tuple[str, ...]) -> None:
    for key, value in table.items():
        if key not in allowed:
            raise PageConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(allowed))})")
        kind = allowed[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise PageConfigError(f"{where}: {key} must be a {names}, found {value!r}")
    for key in required:
        if key not in table:
            raise PageConfigError(f"{where}: the key {key!r} is missing")


def read_page(folder: Path, display: str) -> Page:
    """The page declared by ``folder/page.toml``; one-line :class:`PageConfigError` on any mistake."""
    where = f"{display}/page.toml"
    try:
        data = tomllib.loads((folder / "page.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise PageConfigError(f"{where}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise PageConfigError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise os_error(exc, where, "cannot read") from None
    _typed(where, data, _PAGE_KEYS, ("title", "order"))
    slug = folder.name
    title = data["title"].strip()
    problem = title_problem(title)
    if problem:
        raise PageConfigError(f"{where}:{_line_of(folder / 'page.toml', 'title')}: {problem}")
    url = data.get("url", slug.replace("_", "-") + "/")
    if not URL_RE.fullmatch(url):
        raise PageConfigError(
            f"{where}: url must be lower-case folder names ending in '/', like 'chapter-24/', found {url!r}"
        )
    downloads = data.get("downloads", {})
    for name, kind in downloads.items():
        if kind not in ("trace", "report") or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise PageConfigError(
                f"{where}: downloads maps a file name to 'trace' or 'report', found {name!r} = {kind!r}"
            )
    citations = []
    for i, raw in enumerate(data.get("citations", [])):
        at = f"{where}: citations[{i}]"
        if not isinstance(raw, dict):
            raise PageConfigError(f"{at} must be a table")
        _typed(at, raw, _CITATION_KEYS, ("id", "authors", "year", "title"))
        if not ID_RE.fullmatch(raw["id"]):
            raise PageConfigError(f"{at}: id must be lower-case letters, digits and '-', found {raw['id']!r}")
        if not raw.get("arxiv") and not raw.get("url"):
            raise PageConfigError(f"{at}: give an arxiv id or a url to link")
        if raw.get("arxiv") and not re.fullmatch(r"[0-9]{4}\.[0-9]{4,5}", raw["arxiv"]):
            raise PageConfigError(f"{at}: arxiv must look like 1512.03385, found {raw['arxiv']!r}")
        citations.append(Citation(**raw))
    literals = []
    for lid, raw in data.get("literals", {}).items():
        at = f"{where}: literals.{lid}"
        if not ID_RE.fullmatch(lid) or not isinstance(raw, dict):
            raise PageConfigError(f'{at}: write it as {lid} = {{ value = …, reason = "…" }}')
        _typed(at, raw, {"value": (int, float, str), "reason": str}, ("value", "reason"))
        literals.append(Literal(lid, raw["value"], raw["reason"]))
    roles = data.get("roles", {})
    _typed(f"{where}: roles", roles, {"nodes": dict, "edges": dict}, ())
    for group in ("nodes", "edges"):
        for name, attrs in roles.get(group, {}).items():
            if not ID_RE.fullmatch(name) or not isinstance(attrs, str):
                raise PageConfigError(f"{where}: roles.{group}.{name} must be a string of DOT attributes")
    shows = data.get("shows", [])
    if not all(isinstance(s, str) and s.split() for s in shows):
        raise PageConfigError(f'{where}: shows is a list of entries like "svg#ID g.node.ROLE KEY"')
    translations = _translations(folder, where, data)
    ids = [c.id for c in citations]
    if len(set(ids)) != len(ids):
        raise PageConfigError(f"{where}: two citations share an id")
    return Page(
        slug=slug,
        folder=folder,
        title=title,
        url=url,
        order=float(data["order"]),
        section=data.get("section") or None,
        chapter=data.get("chapter"),
        downloads=downloads,
        citations=tuple(citations),
        literals=tuple(literals),
        node_roles={**NODE_ROLES, **roles.get("nodes", {})},
        edge_roles={**EDGE_ROLES, **roles.get("edges", {})},
        shows=tuple(shows),
        translations=translations,
    )


def _translations(folder: Path, where: str, data: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """lang -> its title (and section) for each translation of the page: a ``page.LANG.md.j2`` in the folder and a
    ``[LANG]`` table in page.toml go together."""
    from .i18n import localized_name

    out: dict[str, dict[str, str]] = {}
    for lang in TRANSLATED:
        template = (folder / localized_name("page.md.j2", lang)).is_file()
        table = data.get(lang)
        if table is None and not template:
            continue
        if table is None:
            raise PageConfigError(
                f"{where}: the folder holds {localized_name('page.md.j2', lang)}, so page.toml needs its title: "
                f'[{lang}] title = "…"'
            )
        if not template:
            raise PageConfigError(
                f"{where}: [{lang}] gives a translation whose template "
                f"{localized_name('page.md.j2', lang)} is not in the folder"
            )
        _typed(f"{where}: [{lang}]", table, {"title": str, "section": str}, ("title",))
        title = table["title"].strip()
        problem = title_problem(title)
        if problem:
            raise PageConfigError(f"{where}: [{lang}] {problem}")
        out[lang] = {"title": title, **({"section": table["section"]} if table.get("section") else {})}
    return out


@dataclass(frozen=True)
class Project:
    """The folders one site is made from. ``root`` holds ``mkdocs.yml``."""

    root: Path
    pages_dir: Path
    templates_dir: Path
    docs_dir: Path
    cache_dir: Path

    @classmethod
    def at(
        cls,
        root: Path,
        *,
        pages_dir: str = "pages",
        templates_dir: str = "templates",
        docs_dir: str = "docs",
        cache_dir: str = ".cache",
    ) -> Project:
        root = Path(root).resolve()
        return cls(root, root / pages_dir, root / templates_dir, root / docs_dir, root / cache_dir)

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        """The project whose ``mkdocs.yml`` is in ``start`` (default: the working folder) or above it."""
        here = Path(start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            config = folder / "mkdocs.yml"
            if config.is_file():
                return cls.at(folder, **_plugin_options(config))
        raise UsageError(f"no mkdocs.yml in {here} or any folder above it: run the command inside a project")

    def display(self, path: Path) -> str:
        """A path as messages name it: relative to the project when inside it."""
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    @cached_property
    def _pages(self) -> tuple[Page, ...]:
        if not self.pages_dir.is_dir():
            raise UsageError(f"{self.display(self.pages_dir)}: no pages folder (one sub-folder per generated page)")
        found: list[Page] = []
        try:
            folders = sorted(p for p in self.pages_dir.iterdir() if (p / "page.toml").is_file())
        except OSError as exc:
            raise os_error(exc, self.display(self.pages_dir), "cannot list") from None
        for folder in folders:
            if not SLUG_RE.fullmatch(folder.name):
                raise PageConfigError(
                    f"{self.display(folder)}: a page folder's name is its slug: lower-case letters, digits and '_'"
                )
            found.append(read_page(folder, self.display(folder)))
        urls: dict[str, str] = {}
        for p in found:
            if p.url in urls:
                raise PageConfigError(f"{self.display(p.folder)}/page.toml: url {p.url!r} is also page {urls[p.url]}'s")
            urls[p.url] = p.slug
        return tuple(sorted(found, key=lambda p: (p.order, p.slug)))

    def pages(self) -> list[Page]:
        """Every page folder, in navigation order."""
        return list(self._pages)

    def page(self, slug: str) -> Page:
        for p in self._pages:
            if p.slug == slug:
                return p
        known = ", ".join(p.slug for p in self._pages) or "none"
        raise UsageError(f"no page {slug!r} in {self.display(self.pages_dir)} (pages: {known})")

    # -------------------------------------------------------------------- page code
    def module(self, page: Page, name: str) -> types.ModuleType:
        """The page folder's module ``name`` (``trace``, ``fixtures``, ``figures``, ``report``), imported."""
        bind_pages(self.pages_dir)
        return importlib.import_module(f"{PACKAGE}.{page.slug}.{name}")

    def has_module(self, page: Page, name: str) -> bool:
        return (page.folder / f"{name}.py").is_file()


def served_folder(page_path: str) -> str:
    """The folder a page's HTML lands in with directory URLs; downloads are published there, beside it.

    ``chapter-24/index.md`` -> ``chapter-24``; ``evidence/claims.md`` -> ``evidence/claims``.
    """
    stem, _ = posixpath.splitext(posixpath.basename(page_path))
    if stem in ("index", "README"):
        return posixpath.dirname(page_path)
    return posixpath.splitext(page_path)[0]


def bind_pages(pages_dir: Path) -> None:
    """Make ``pages`` import from ``pages_dir``; a different folder than before drops every module imported from the old one."""
    wanted = [str(Path(pages_dir).resolve())]
    current = sys.modules.get(PACKAGE)
    if current is not None and list(getattr(current, "__path__", [])) == wanted:
        return
    forget_pages()
    package = types.ModuleType(PACKAGE, "The page folders of the project being built.")
    package.__path__ = wanted
    sys.modules[PACKAGE] = package


_SEEN: dict[str, tuple[tuple[str, int, int], ...]] = {}


def refresh_pages(pages_dir: Path) -> None:
    """Forget the imported page modules when a Python file under ``pages_dir`` changed since they were imported."""
    folder = Path(pages_dir).resolve()
    state = (
        tuple(
            sorted(
                (str(p), p.stat().st_mtime_ns, p.stat().st_size)
                for p in folder.rglob("*.py")
                if "__pycache__" not in p.parts
            )
        )
        if folder.is_dir()
        else ()
    )
    if _SEEN.get(str(folder)) != state:
        forget_pages()
        _SEEN.clear()
        _SEEN[str(folder)] = state
    bind_pages(folder)


def forget_pages() -> None:
    """Drop every imported page module, so the next import reads the files again (``mkdocs serve``)."""
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def read_mkdocs_yml(config: Path, *, ignore_tags: bool = False) -> dict[str, Any]:
    """``mkdocs.yml`` as data, the one way the project reads it. Tags such as ``!!python/name`` are refused (a
    copy written back would lose them), or read as nothing with ``ignore_tags`` (for the options beside them)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    if ignore_tags:
        Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    try:
        data = yaml.load(config.read_text(encoding="utf-8"), Loader=Loader) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise FileAccessError(config, f"cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{config}: not valid YAML here: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{config}: not a MkDocs configuration (its top level is not a mapping)")
    return data


def _plugin_options(config: Path) -> dict[str, str]:
    """The folder options of the ``chapter-trace`` plugin in ``mkdocs.yml``."""
    data = read_mkdocs_yml(config, ignore_tags=True)
    options: dict[str, str] = {}
    docs = data.get("docs_dir")
    if isinstance(docs, str):
        options["docs_dir"] = docs
    for entry in data.get("plugins") or []:
        if isinstance(entry, dict) and isinstance(entry.get("chapter-trace"), dict):
            for key in ("pages_dir", "templates_dir", "cache_dir"):
                value = entry["chapter-trace"].get(key)
                if isinstance(value, str):
                    options[key] = value
    return options


def nav_paths(nav: Any) -> set[str]:
    """Every page path a MkDocs navigation lists, however deep in its sections."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*map(nav_paths, nav.values())) if nav else set()
    if isinstance(nav, list):
        return set().union(*map(nav_paths, nav)) if nav else set()
    return set()


def nav_additions(nav: Any, pages: list[Page]) -> list[dict[str, Any]]:
    """Navigation entries for the generated pages ``nav`` does not list, in their order; pages naming one section
    share an entry."""
    listed = nav_paths(nav)
    entries: list[dict[str, Any]] = []
    sections: dict[str, list[dict[str, str]]] = {}
    for page in pages:
        if page.page_path in listed:
            continue
        item = {page.title: page.page_path}
        if page.section is None:
            entries.append(item)
        elif page.section in sections:
            sections[page.section].append(item)
        else:
            sections[page.section] = [item]
            entries.append({page.section: sections[page.section]})
    return entries


def site_date(root: Path) -> str:
    """The date pages carry (``YYYY-MM-DD``, UTC): ``SOURCE_DATE_EPOCH``, else the last commit's, else 1970-01-01.

    Never the clock: two builds of the same sources on different days are byte for byte the same.
    """
    import os
    import subprocess
    from datetime import UTC, datetime

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
        raise UsageError(f"SOURCE_DATE_EPOCH={epoch!r} is not a number of seconds since 1970") from None
