"""The translated pages inside the one MkDocs build: their files, their navigation, their alternates, their search.

One build makes both languages (the fixtures run once): the English pages keep their URLs, and each translated
page is one more virtual file at ``ru/`` plus its URL, out of MkDocs's navigation. This module gives MkDocs what
sets the two apart:

- :func:`hand_written` turns ``docs/NAME.ru.md`` (a translation beside its English page) into ``ru/NAME.md``;
- :class:`Languages` knows every page's twin: a navigation per language (the Russian one lists the translated
  pages, then the pages that are not translated yet, linked in English), and per page the alternates (``hreflang``
  links and the language switcher, which stays on the same page where it has a twin);
- :func:`split_search_index` gives each language its own search index (``search/`` and ``ru/search/``), in its own
  language, since the theme's search reads the index below its ``base``.

:class:`Localized` is what the plugin's hooks call: the translated hand-written pages added as files
(``on_files``), a navigation per language (``on_nav``), each page's language, twins and site name
(``on_page_context``), and the built site's search indexes (``on_post_build``).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .i18n import LANGUAGES, SOURCE, TRANSLATED, WORDS, localized_path, source_name, strip_record, word
from .project import Page

SEARCH_INDEX = "search/search_index.json"
HOME = {"en": "Home", "ru": "Главная"}


def page_language(src_uri: str) -> str:
    """The language of a site page by its path: ``ru/…`` is Russian, every other page English."""
    first = src_uri.split("/", 1)[0]
    return first if first in TRANSLATED and "/" in src_uri else SOURCE


def hand_written(src_uri: str, text: str) -> tuple[str, str, str] | None:
    """(language, site path, Markdown) of a translated hand-written page ``docs/NAME.LANG.md``; None for others.

    Its Markdown loses the record line and gains its language in the front matter, as a generated page has.
    """
    folder, _, name = src_uri.rpartition("/")
    english, lang = source_name(name)
    if lang == SOURCE or not name.endswith(".md"):
        return None
    path = localized_path(posixpath.join(folder, english) if folder else english, lang)
    body = strip_record(text)
    if body.startswith("---\n"):
        body = f"---\nlang: {lang}\n" + body[len("---\n") :]
    else:
        body = f"---\nlang: {lang}\n---\n\n" + body
    return lang, path, body


@dataclass
class Languages:
    """Which site page is which page in another language, filled while the build adds the pages' files."""

    twins: dict[str, dict[str, str]] = field(default_factory=dict)  # site path -> {lang: site path}, both ways
    generated: list[Page] = field(default_factory=list)  # the generated pages, in navigation order

    def add(self, paths: Mapping[str, str]) -> None:
        """One page in several languages: lang -> its site path."""
        for path in paths.values():
            self.twins[path] = dict(paths)

    def of(self, src_uri: str) -> dict[str, str]:
        return self.twins.get(src_uri, {page_language(src_uri): src_uri})

    def navigation(self, nav: Any, files: Any, lang: str) -> Any:
        """The navigation of ``lang``: home, the translated pages in their order (in their sections), then the
        pages not translated yet, linked in English under one heading; previous, next and parent links set."""
        from mkdocs.structure.nav import Link, Navigation, Section, _add_parent_links, _add_previous_and_next_links

        items: list[Any] = []
        home = files.get_file_from_path(localized_path("index.md", lang))
        if home is not None and home.page is not None:
            home.page.title = HOME.get(lang, home.page.title)
            items.append(home.page)
        sections: dict[str, Any] = {}
        untranslated: list[Any] = []
        for page in self.generated:
            if lang not in page.languages:
                untranslated.append(Link(page.title, page.url))
                continue
            twin = page.twin(lang)
            file = files.get_file_from_path(twin.page_path)
            if file is None or file.page is None:
                continue
            if twin.section is None:
                items.append(file.page)
            elif twin.section in sections:
                sections[twin.section].children.append(file.page)
            else:
                sections[twin.section] = Section(twin.section, [file.page])
                items.append(sections[twin.section])
        if untranslated:
            items.append(Section(word(lang, "untranslated"), untranslated))
        pages = [item for item in _flat(items) if not isinstance(item, (Link, Section))]
        for item in items:
            item.parent = None
        _add_previous_and_next_links(pages)
        _add_parent_links(items)
        localized = Navigation(items, pages)
        localized.homepage = items[0] if items and home is not None else None
        return localized

    def alternates(self, src_uri: str, url_of: Any) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
        """The page's ``hreflang`` alternates (itself and each twin) and the language switcher's entries (every
        language: the twin where there is one, else that language's home page)."""
        twins = self.of(src_uri)
        alternates = [{"name": LANGUAGES[lang], "lang": lang, "link": url_of(path)} for lang, path in twins.items()]
        menu = [
            {"name": LANGUAGES[lang], "lang": lang, "link": url_of(twins.get(lang, localized_path("index.md", lang)))}
            for lang in LANGUAGES
        ]
        return sorted(alternates, key=lambda a: list(LANGUAGES).index(a["lang"])), menu


@dataclass
class Localized:
    """One build's languages, filled hook by hook: which page is which in another language, each language's
    navigation, and the site's own name (mkdocs.yml's) while a translated page shows its own."""

    languages: Languages = field(default_factory=Languages)
    navigations: dict[str, Any] = field(default_factory=dict)  # lang -> the navigation its pages show
    files_by_path: dict[str, Any] = field(default_factory=dict)  # site path -> MkDocs's File
    site_name: str | None = None

    def add_hand_written(self, files: Any, config: Any) -> None:
        """Each ``docs/NAME.LANG.md`` becomes the file ``LANG/NAME.md`` (served as ``LANG/NAME/``), out of the
        navigation, and the twin of its English page."""
        from mkdocs.structure.files import File, InclusionLevel

        for file in [f for f in files if not f.generated_by and f.src_uri.endswith(".md")]:
            translated = hand_written(file.src_uri, file.content_string)
            if translated is None:
                continue
            lang, path, markdown = translated
            files.remove(file)  # docs/index.ru.md is served as ru/index.html, never as index.ru/
            files.append(File.generated(config, path, content=markdown, inclusion=InclusionLevel.NOT_IN_NAV))
            english = source_name(file.src_uri.rpartition("/")[2])[0]
            self.languages.add({"en": posixpath.join(posixpath.dirname(file.src_uri), english), lang: path})

    def navigate(self, nav: Any, files: Any) -> None:
        """Each translated language's navigation, beside MkDocs's English one."""
        self.files_by_path = {f.src_uri: f for f in files}
        self.navigations = {lang: self.languages.navigation(nav, files, lang) for lang in TRANSLATED}

    def page_context(self, context: Any, page: Any, config: Any) -> None:
        """A page shows its language's navigation and site name, links its twins (``hreflang``) and switches
        language on the same page (``config.extra``, which the theme reads while this page renders)."""
        lang = page_language(page.file.src_uri)
        if lang in self.navigations:
            context["nav"] = self.navigations[lang]
        alternates, menu = self.languages.alternates(page.file.src_uri, self._url_of)
        if self.site_name is None:
            self.site_name = config.site_name
        config.site_name = WORDS[lang].get("site_name", self.site_name)  # the header and <title>
        config.extra["alternate"] = alternates  # the theme's hreflang links
        config.extra["language_menu"] = menu  # overrides/partials/alternate.html: the switcher

    def plain_context(self, config: Any) -> None:
        """A page that is not one of the site's (404.html, the sitemap) has no twins, and is in English."""
        if self.site_name is not None:
            config.site_name = self.site_name
        config.extra["alternate"] = []
        config.extra["language_menu"] = []

    def _url_of(self, path: str) -> str:  # the theme's templates make it relative to the page
        file = self.files_by_path.get(path)
        return file.url if file is not None else path

    def finish(self, site_dir: Path) -> None:
        """The built site's search index per language."""
        split_search_index(site_dir)


def _flat(items: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.append(item)
        out.extend(_flat(getattr(item, "children", None) or []))
    return out


def split_search_index(site_dir: Path) -> None:
    """Give each translated language its own search index below ``LANG/``, and leave the English index only the
    English pages: the theme's search reads ``search/search_index.json`` below the page's ``base``, and the Russian
    pages' base is ``ru/``.

    The index's ``lang`` makes the browser load that language's lunr functions (``lunr.ru``: its stop words), and
    ``pipeline`` stays the theme's (``stopWordFilter``): no stemmer, in either language. Material's search appends
    ``*`` to every typed word (``нормализации`` is searched as ``нормализации*``), and lunr passes a word with a
    wildcard through no search pipeline, so the typed word is never stemmed; with the stemmer in the pipeline, the
    index would hold stems (``нормализац``), which a longer typed form does not prefix, and a reader typing a whole
    Russian word would find nothing. Without it, the index holds the words as written: a typed form finds the pages
    that hold it, and a typed stem (``нормализац``, ``остаточн``) finds every form of the word."""
    path = site_dir / SEARCH_INDEX
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    docs = index.get("docs", [])
    by_lang: dict[str, list[dict[str, Any]]] = {lang: [] for lang in LANGUAGES}
    for doc in docs:
        lang = page_language(str(doc.get("location", "")) or "index.md")
        if lang != SOURCE:
            doc = {**doc, "location": str(doc["location"])[len(lang) + 1 :]}
        by_lang[lang].append(doc)
    for lang, entries in by_lang.items():
        target = site_dir / localized_path(SEARCH_INDEX, lang)
        target.parent.mkdir(parents=True, exist_ok=True)
        config = {**index.get("config", {}), "lang": [lang]}
        text = json.dumps({"config": config, "docs": entries}, ensure_ascii=False, separators=(",", ":"))
        target.write_text(text, encoding="utf-8")
