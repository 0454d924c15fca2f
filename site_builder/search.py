"""Material's search index, each page indexed once per content: its entries are kept in the cache store.

Material's search plugin reads every page it indexes with Python's HTML parser, on every build and on every
``mkdocs serve`` rebuild, which is most of a rebuild's time: the pages' drawings and formulas are thousands of
elements each. The entries a page gives depend on nothing but its HTML, its address, its table of contents, its
metadata and title, and the theme's version; :func:`index_from_store` has the index take them from the cache
store (``.cache/search/NAME``, NAME the SHA-256 of all of these) when it has them, and keep what it computes
otherwise. The index written is the one Material writes, entry for entry.

Neither MkDocs nor Material offers a hook for this: the plugin's public ``search_index`` object is given a
caching ``add_entry_from_context`` (the method Material calls for each page) before the first page is indexed.
"""

from __future__ import annotations

import json
from typing import Any

from .cache import Store, name

KIND = "search"
SEARCH_FORMAT = "site-builder search entries 1"


def _toc(items: Any) -> list[Any]:
    """A table of contents as what the index reads of it: each heading's id and address, nested."""
    return [[item.id, item.url, _toc(item.children)] for item in items]


def page_entry(page: Any, theme: str) -> str:
    """The name of a page's search entries: everything Material's index reads of the page (``theme``: the
    theme's version, and whether it segments Chinese)."""
    meta = json.dumps(page.meta, sort_keys=True, default=str, ensure_ascii=False)
    toc = json.dumps(_toc(page.toc), ensure_ascii=False)
    return name(SEARCH_FORMAT, theme, page.url, str(page.title), meta, toc, page.content or "")


def _entries(data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(e, dict) and "location" in e for e in data):
        raise ValueError("not a list of search entries")
    return data


def index_from_store(plugins: Any, store: Store) -> None:
    """Have Material's search index (if the site uses it) take each page's entries from ``store`` when it has
    them, and keep them there when it has not."""
    try:
        from material import __version__
        from material.plugins.search import plugin as material_search
    except ImportError:
        return
    theme = f"{__version__} jieba={getattr(material_search, 'jieba', None) is not None}"
    found = [p for p in plugins.values() if isinstance(p, material_search.SearchPlugin) and p.config.enabled]
    index = getattr(found[0], "search_index", None) if found else None
    if index is None:
        return
    add = type(index).add_entry_from_context

    def add_entry_from_context(page: Any) -> None:
        entry = page_entry(page, theme)
        kept = store.read(KIND, entry, _entries, "search entries", "indexing the page again")
        if kept is not None:
            index.entries.extend(kept)
            return
        start = len(index.entries)
        add(index, page)
        # in Material's key order (the index is written as the entries are, and put_json would sort them)
        store.put(KIND, entry, json.dumps(index.entries[start:], ensure_ascii=False, default=str).encode("utf-8"))

    index.add_entry_from_context = add_entry_from_context
