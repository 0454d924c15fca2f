"""The fixture cache: a page's fixture results, kept by the SHA-256 of everything that decides them.

An entry is ``.cache/fixtures/SLUG-KEY`` in the one cache store (:mod:`site_builder.cache`): KEY hashes every
source file the fixtures import (followed through their imports, :mod:`site_builder.pipeline.sources`), the
page's data files, the Python and NumPy versions and the environment the fixture interpreters run in; the body
is the trace and report texts, the derived values and how long the run took. A page whose key changed finds no
entry and runs; the entry of its old key is pruned after the build. The slug in front lets a page that must run
again learn how long it took last time (the longest pages start first).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import Store
from ..errors import os_error
from . import FIXTURE_ENVIRONMENT
from .sources import Roots, distributions, fixture_sources

KIND = "fixtures"
CACHE_FORMAT = "site-builder fixture cache 4"


@dataclass(frozen=True)
class Entry:
    """What a page's fixtures answered (see ``runner``): the trace and report texts, the derived values, the digest
    of every value at full precision and the seconds the run took."""

    trace: str
    report: str | None
    derived: Mapping[str, Any]
    digest: str
    seconds: float

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> Entry:
        return cls(answer["trace"], answer["report"], answer["derived"], answer["digest"], answer["seconds"])


def cache_key(page_folder: Path, pages_dir: Path, roots: Roots | None = None) -> str:
    """SHA-256 over the fixtures' source files (paths and bytes) and the interpreter and NumPy versions."""
    import hashlib

    roots = roots or Roots(pages_dir)
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    # The environment the fixture interpreters run in decides their floats too (threads, CPU code paths).
    numpy = distributions().get("numpy", "absent")
    for part in (page_folder.name, sys.version, numpy, json.dumps(FIXTURE_ENVIRONMENT, sort_keys=True)):
        digest.update(part.encode("utf-8") + b"\0")
    base = Path(pages_dir).resolve().parent
    named = []
    for file in fixture_sources(page_folder, pages_dir, roots):
        try:
            name = file.relative_to(base).as_posix()
        except ValueError:
            name = (
                file.name
                if "site_builder" not in file.parts
                else "/".join(file.parts[file.parts.index("site_builder") :])
            )
        named.append((name, file))
    # In the order of the names, not of the paths: the key of a page does not depend on where the project and the
    # package live (a copy of the project elsewhere reuses the results).
    for name, file in sorted(named):
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(roots.digest(file))  # the bytes, never a stamp: proven current
    return digest.hexdigest()


def page_keys(project: Any, pages: Sequence[Any], store: Store | None) -> dict[str, str]:
    """Every page's key, the sources shared between pages read and hashed once (and parsed only when the store
    has not seen their bytes before)."""
    roots = Roots(project.pages_dir, store)
    try:
        return {page.slug: cache_key(page.folder, project.pages_dir, roots) for page in pages}
    except OSError as exc:
        raise os_error(exc, None, "cannot read a source of the fixtures") from None


def entry_name(slug: str, key: str) -> str:
    return f"{slug}-{key}"


def load(store: Store, slug: str, key: str) -> Entry | None:
    """The entry for ``key``; None when there is none or it is damaged (said once, by the store)."""
    return store.read(KIND, entry_name(slug, key), _entry, "fixture results", "running the fixtures again")


def _entry(data: Any) -> Entry:
    if data.get("format") != CACHE_FORMAT:
        raise ValueError("another format")
    return Entry(
        trace=str(data["trace"]),
        report=None if data["report"] is None else str(data["report"]),
        derived=dict(data["derived"]),
        digest=str(data["digest"]),
        seconds=float(data["seconds"]),
    )


def store_entry(store: Store, slug: str, key: str, entry: Entry) -> None:
    store.put_json(KIND, entry_name(slug, key), {"format": CACHE_FORMAT, **vars(entry)})


def last_seconds(store: Store, slugs: Iterable[str]) -> dict[str, float]:
    """How long each page's fixtures took when they last ran, from an entry of an older key where one says so (an
    estimate, to start the longest pages first: an entry that cannot tell is passed over)."""
    wanted = set(slugs)
    found: dict[str, float] = {}
    for name in store.names(KIND):
        slug, _, key = name.rpartition("-")
        if slug not in wanted or slug in found or len(key) != 64:
            continue
        body = store.peek(KIND, name)
        try:
            found[slug] = float(json.loads(body or b"")["seconds"])
        except (ValueError, KeyError, TypeError):
            continue
    return found
