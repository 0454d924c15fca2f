"""The rendered-page cache: a page whose inputs are all unchanged is not rendered again.

An entry is ``.cache/pages/<slug>.json``, checksummed like every cache entry
(:mod:`site_builder.files`). It holds
what rendering the page gave (its Markdown, its downloads, the names of its
facts for the number scan, its trace and report texts for the golden
comparison, the diagram layouts it used) and the key it was made for: the
SHA-256 of

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
of the page's files. A damaged entry is rendered again with one warning; an
entry that cannot be written is a warning; entries of deleted pages are
removed. Deleting it is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import os_error
from ..files import DamagedEntry as DamagedEntry  # noqa: F401 - re-exported: callers catch it from this module
from ..files import load_entry, remove_entry, store_entry

CACHE_FORMAT = "site-builder rendered pages 1"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # site_builder/


@dataclass(frozen=True)
class Entry:
    key: str
    markdown: str
    files: dict[str, str]
    records: int
    names: tuple[str, ...]
    trace: str
    report: str | None
    diagrams: tuple[str, ...] = field(default=())


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
        site = [(p.slug, p.title, p.page_path, p.chapter, p.url) for p in pages]
        shared.update(json.dumps(site, sort_keys=True, default=str).encode("utf-8"))
        self.shared = shared.digest()

    def key(self, page: Any, fixture_key: str) -> str:
        digest = hashlib.sha256(self.shared)
        digest.update(fixture_key.encode("ascii") + b"\0" + page.slug.encode("utf-8") + b"\0")
        folder = Path(page.folder)
        _files_digest(digest, folder, lambda p: "golden" in p.relative_to(folder).parts[:1])
        return digest.hexdigest()


def entry_path(cache_dir: Path, slug: str) -> Path:
    return Path(cache_dir) / "pages" / f"{slug}.json"


def _entry(data: Any) -> Entry | None:
    if data.get("format") != CACHE_FORMAT:
        return None
    return Entry(
        key=str(data["key"]),
        markdown=str(data["markdown"]),
        files={str(k): str(v) for k, v in data["files"].items()},
        records=int(data["records"]),
        names=tuple(str(n) for n in data["names"]),
        trace=str(data["trace"]),
        report=None if data["report"] is None else str(data["report"]),
        diagrams=tuple(str(d) for d in data["diagrams"]),
    )


def load(path: Path) -> Entry | None:
    """The entry at ``path``; None when there is none; :class:`DamagedEntry` when damaged."""
    return load_entry(path, _entry, "a rendered page")


def store(path: Path, entry: Entry) -> None:
    """Write ``entry`` atomically; raises OSError when it cannot be written."""
    body = json.dumps({"format": CACHE_FORMAT, **vars(entry)}, sort_keys=True).encode("utf-8")
    store_entry(path, body)


def prune(cache_dir: Path, slugs: Iterable[str], warn: Callable[[str], None], display: Callable[[Path], str]) -> None:
    """Remove the entries of pages that no longer exist."""
    keep = set(slugs)
    folder = Path(cache_dir) / "pages"
    try:
        stale = [f for f in folder.iterdir() if f.suffix == ".json" and f.stem not in keep]
    except OSError:
        return
    for file in stale:
        try:
            remove_entry(file)
        except OSError as exc:
            warn(str(os_error(exc, display(file), "cannot remove a stale cache entry")))
