"""The rendered-page cache: a page whose inputs are all unchanged is not rendered again.

An entry is ``.cache/pages/KEY`` in the one cache store (:mod:`site_builder.cache`).
It holds what rendering the page gave, a :class:`RenderedPage`
(its Markdown, its downloads, the names of its facts for the number scan, its
trace and report texts for the golden comparison, the diagram layouts it
used). KEY is the SHA-256 of

- the page's fixture-cache key (every source its fixtures import, the Python
  and NumPy versions),
- every file of the page folder except its golden files (``page.toml``, its
  templates, ``figures.py``, excerpted files, data),
- every file of the shared ``templates/`` folder,
- every ``.py`` file of the ``site_builder`` package (the renderer's own code,
  the facts and formats, the trace machinery),
- what every page tells the others (slug, title, path, chapter),
- the installed distributions and their versions (Jinja, latex2mathml,
  Pygments, …), the Python version, and the ``dot`` executable (its path,
  size and modification time).

Every input is read and hashed on every build, never judged by a time stamp
of the page's files. A damaged entry is rendered again with one warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cache import Store


@dataclass
class RenderedPage:
    """A generated page as the site uses it, rendered now or read from the rendered-page cache."""

    markdown: str
    files: dict[str, str]  # site path -> text (the downloads)
    records: int  # lines of the trace
    names: tuple[str, ...]  # the names its facts carry, sorted (what the number scan accepts on it)
    trace: str  # its trace and report texts, compared with its golden files on every build
    report: str | None
    diagrams: tuple[str, ...]  # the cache entries of the diagram layouts it drew, sorted
    translations: dict[str, str] = field(default_factory=dict)  # lang -> the Markdown of the page's translation


KIND = "pages"
DIAGRAMS = "diagrams"  # the kind of the layouts a page drew (render/diagrams.py, which imports Graphviz)
CACHE_FORMAT = "site-builder rendered pages 3"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # site_builder/


def _files_digest(digest: hashlib._Hash, folder: Path, skip: Callable[[Path], bool] = lambda p: False) -> None:
    """Every regular file under ``folder`` (relative path and bytes), in a fixed order."""
    if not folder.is_dir():
        digest.update(b"(no folder)\0")
        return
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in names:
            path = Path(root) / name
            if not name.endswith(".pyc") and not skip(path):
                files.append(path)
    for path in sorted(files, key=lambda p: p.relative_to(folder).as_posix()):
        digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())


def _dot_stamp() -> str:
    dot = shutil.which("dot")
    if dot is None:
        return "no dot"
    try:
        info = os.stat(dot)
    except OSError:
        return f"{dot}: cannot stat"
    return f"{os.path.realpath(dot)}:{info.st_size}:{info.st_mtime_ns}"


def package_digest() -> bytes:
    """Our code and what it runs on: every ``.py`` file of ``site_builder``, the installed distributions and
    their versions, the Python version (read and hashed on every call, never judged by a time stamp)."""
    from ..pipeline.sources import distributions

    package = hashlib.sha256(CACHE_FORMAT.encode() + b"\0")
    for part in (sys.version, json.dumps(sorted(distributions().items()))):
        package.update(part.encode("utf-8") + b"\0")
    _files_digest(package, PACKAGE_DIR, lambda p: p.suffix != ".py")
    return package.digest()


class Keys:
    """The render keys of one build: what all pages share is read and hashed once."""

    def __init__(self, templates_dir: Path, pages: Sequence[Any]) -> None:
        self.package = package_digest()  # our code and what it runs on
        shared = hashlib.sha256(self.package + _dot_stamp().encode("utf-8") + b"\0templates\0")
        _files_digest(shared, Path(templates_dir))
        site = [(p.slug, p.title, p.page_path, p.chapter, p.url, p.translations) for p in pages]
        shared.update(json.dumps(site, sort_keys=True, default=str).encode("utf-8"))
        self.shared = shared.digest()

    def key(self, page: Any, fixture_key: str) -> str:
        digest = hashlib.sha256(self.shared)
        digest.update(fixture_key.encode("ascii") + b"\0" + page.slug.encode("utf-8") + b"\0")
        folder = Path(page.folder)
        _files_digest(digest, folder, lambda p: "golden" in p.relative_to(folder).parts[:1])
        return digest.hexdigest()


def load(store: Store, key: str) -> RenderedPage | None:
    """The page rendered for ``key``; None when there is none or it is damaged (said once, by the store)."""
    return store.read(KIND, key, _page, "a rendered page", "rendering the page again")


def _page(data: Any) -> RenderedPage:
    if data.get("format") != CACHE_FORMAT:
        raise ValueError("another format")
    return RenderedPage(
        markdown=str(data["markdown"]),
        files={str(k): str(v) for k, v in data["files"].items()},
        records=int(data["records"]),
        names=tuple(str(n) for n in data["names"]),
        trace=str(data["trace"]),
        report=None if data["report"] is None else str(data["report"]),
        diagrams=tuple(str(d) for d in data["diagrams"]),
        translations={str(k): str(v) for k, v in data["translations"].items()},
    )


def store_page(store: Store, key: str, page: RenderedPage) -> None:
    store.put_json(KIND, key, {"format": CACHE_FORMAT, **vars(page)})
