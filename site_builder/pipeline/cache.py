"""The fixture cache: one entry per page, reused only while the code that decides it is unchanged.

An entry is ``.cache/fixtures/<slug>.json``: a first line with the SHA-256 of
the rest, then a JSON object holding the key it was made for (the hash of
every source file the fixtures depend on, the Python and NumPy versions, the
environment the fixture interpreters run in), the
trace and report texts, the derived values and how long the run took. An entry
whose hash does not match its bytes, that does not parse, or that was made for
another key is never used: the page runs again and the entry is replaced. Only
the current entry of each page is kept.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import os_error
from ..files import DamagedEntry, load_entry, store_entry
from . import FIXTURE_ENVIRONMENT
from .sources import Roots, distributions, fixture_sources

CACHE_FORMAT = "site-builder fixture cache 2"


@dataclass(frozen=True)
class Entry:
    key: str
    trace: str
    report: str | None
    derived: Mapping[str, Any]
    seconds: float
    # The import list of each source the key was computed from, by the SHA-256 of its bytes (see sources.ImportMemo):
    # with the entry kept, the next key needs no parse even when every other cache was removed.
    imports: Mapping[str, Any] = field(default_factory=dict)


def _numpy_version() -> str:
    return distributions().get("numpy", "absent")


def cache_key(page_folder: Path, pages_dir: Path, roots: Roots | None = None) -> str:
    """SHA-256 over the fixtures' source files (paths and bytes) and the interpreter and NumPy versions."""
    roots = roots or Roots(pages_dir)
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    # The environment the fixture interpreters run in decides their floats too (threads, CPU code paths).
    for part in (page_folder.name, sys.version, _numpy_version(), json.dumps(FIXTURE_ENVIRONMENT, sort_keys=True)):
        digest.update(part.encode("utf-8") + b"\0")
    base = Path(pages_dir).resolve().parent
    for file in fixture_sources(page_folder, pages_dir, roots):
        try:
            name = file.relative_to(base).as_posix()
        except ValueError:
            name = (
                file.name
                if "site_builder" not in file.parts
                else "/".join(file.parts[file.parts.index("site_builder") :])
            )
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(roots.digest(file))  # the bytes, never a stamp: proven current
    return digest.hexdigest()


def page_keys(
    project: Any, pages: Any, warn: Any, imports: dict[str, dict[str, list[str]]] | None = None
) -> dict[str, str]:
    """Every page's key, the sources shared between pages read and hashed once.

    A source's import list comes from the memo (``.cache/imports.json``) or from the page's own fixture entry
    where its bytes were seen before; only new bytes are parsed. ``imports``, if given, receives each page's
    import lists, to be kept in its next fixture entry.
    """
    roots = Roots(project.pages_dir, Path(project.cache_dir) / "imports.json")
    for page in pages:  # checksummed, content-addressed entries: safe to take import lists from
        try:
            entry = load(entry_path(project.cache_dir, page.slug))
        except DamagedEntry:
            entry = None  # said when the pipeline reads it
        if entry is not None:
            roots.memo.seed(entry.imports)
    keys: dict[str, str] = {}
    try:
        for page in pages:
            roots.memo.used = set()
            keys[page.slug] = cache_key(page.folder, project.pages_dir, roots)
            if imports is not None:
                imports[page.slug] = {
                    k: roots.memo.entries[k] for k in sorted(roots.memo.used) if k in roots.memo.entries
                }
    except OSError as exc:
        raise os_error(exc, None, "cannot read a source of the fixtures") from None
    roots.memo.save(warn, project.display)
    return keys


def entry_path(cache_dir: Path, slug: str) -> Path:
    return Path(cache_dir) / "fixtures" / f"{slug}.json"


def _entry(data: Any) -> Entry | None:
    entry = Entry(
        key=str(data["key"]),
        trace=str(data["trace"]),
        report=None if data["report"] is None else str(data["report"]),
        derived=dict(data["derived"]),
        seconds=float(data["seconds"]),
        imports={str(k): [str(n) for n in v] for k, v in dict(data.get("imports") or {}).items()},
    )
    return entry if data.get("format") == CACHE_FORMAT else None


def load(path: Path) -> Entry | None:
    """The entry at ``path``; None when there is none; :class:`DamagedEntry` when it cannot be trusted."""
    return load_entry(path, _entry, "an entry")


def store(path: Path, entry: Entry) -> None:
    """Write ``entry`` atomically; an I/O failure raises :class:`~site_builder.errors.FileAccessError`."""
    body = json.dumps({"format": CACHE_FORMAT, **vars(entry)}, allow_nan=False, sort_keys=True).encode("utf-8")
    try:
        store_entry(path, body)
    except OSError as exc:
        raise os_error(exc, path, "cannot write the fixture cache") from None
