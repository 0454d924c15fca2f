"""The one cache store: every result the build keeps between runs, under ``.cache/KIND/NAME`` in the checkout.

An entry is content-addressed: its NAME is the SHA-256 of everything that decides it (computed by the kind's
owner, see :func:`name`), so an entry is never out of date, only unused. Its file holds a first line with the
SHA-256 of the body, then the body; a body that does not match is damaged. The store

- reads an entry (:meth:`Store.get`, or :meth:`Store.read` for a JSON body its kind parses), returning None
  when there is none or when it is damaged, in which case it says so in one warning and removes it (the caller
  makes it again);
- writes one atomically (:meth:`Store.put`); a write that fails (a full disk, a read-only folder) is one warning
  per kind and cause, and the build goes on without it;
- after a build in which every page built, removes every entry of the kinds it used that the build neither
  read, wrote nor :meth:`kept <Store.keep>` (:meth:`Store.prune`): the folder holds what the next build can use,
  nothing more.

The checksum guards against damage, not against a person: whoever can write ``.cache/`` can write the page code
the build runs anyway. Nothing is written outside the checkout. Deleting ``.cache/`` is always safe.

The kinds, each owned by one module (ARCHITECTURE.md measures what each saves):

``fixtures``
    a page's fixture results (:mod:`site_builder.pipeline.cache`);
``imports``
    a source file's import list, by its bytes (:mod:`site_builder.pipeline.sources`);
``pages``
    a rendered page (:mod:`site_builder.render.cache`);
``diagrams``
    Graphviz's SVG for one DOT text (:mod:`site_builder.render.diagrams`);
``templates``
    compiled Jinja templates, ours and the theme's (:mod:`site_builder.render.templating`);
``scan``
    a built page found free of numbers without provenance (:mod:`site_builder.scan`);
``shown``
    a built page found to show exactly the values of its golden list (:mod:`site_builder.scan`);
``search``
    a built page's entries in the theme's search index, by its content (:mod:`site_builder.search`);
``check``
    a document ``site-builder check`` found clean (:mod:`site_builder.check.verdicts`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from .errors import os_error
from .files import write_atomic

Warn = Callable[[str], None]
T = TypeVar("T")
LEGACY = ("imports.json", "scan.json", "check.json")  # one-file caches of earlier versions, removed by prune

# What each kind is called in a message (a kind not named here is "the KIND cache").
NAMES = {
    "fixtures": "fixture cache",
    "imports": "import-list cache",
    "pages": "rendered-page cache",
    "diagrams": "diagram cache",
    "templates": "compiled-template cache",
    "scan": "number-scan cache",
    "shown": "shown-values cache",
    "search": "search-entry cache",
    "check": "check cache",
}


def name(*parts: str | bytes) -> str:
    """An entry's name: the SHA-256 (hex) of ``parts``, each followed by a NUL byte."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update((part.encode("utf-8") if isinstance(part, str) else part) + b"\0")
    return digest.hexdigest()


def checksummed(body: bytes) -> bytes:
    """An entry's file: a first line with the SHA-256 of ``body``, then ``body``."""
    return hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body


def entry_body(raw: bytes) -> bytes | None:
    """The body of an entry's file; None when it was cut or changed (its SHA-256 is not the first line's)."""
    head, newline, body = raw.partition(b"\n")
    if not newline or hashlib.sha256(body).hexdigest().encode("ascii") != head:
        return None
    return body


class Store:
    """The cache of one build (or check): reads, writes, damage and pruning of every kind in one place."""

    def __init__(
        self,
        folder: Path,
        warn: Warn,
        display: Callable[[Path], str] = str,
        without: str = "the site is built without it",
    ) -> None:
        self.folder = Path(folder)
        self.warn = warn
        self.display = display
        self.without = without  # what a write that failed leaves, said after it
        self.live: dict[str, set[str]] = {}  # kind -> names read, written or kept by this build
        self._said: set[tuple[str, str]] = set()  # (kind, cause) of writes that failed, said once

    def path(self, kind: str, entry: str) -> Path:
        return self.folder / kind / entry

    def keep(self, kind: str, names: Iterable[str]) -> None:
        """Entries this build still stands on without reading them (a cached page's fixtures and diagrams)."""
        self.live.setdefault(kind, set()).update(names)

    def get(self, kind: str, entry: str, redo: str) -> bytes | None:
        """The body of an entry; None when there is none, or when it is damaged (said, with what ``redo`` will
        be done instead, and removed)."""
        self.keep(kind, (entry,))
        path = self.path(kind, entry)
        try:
            raw = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None  # no entry (or no cache folder: writing one says why)
        except IsADirectoryError:
            self.damaged(kind, entry, "it is a folder, not a file", redo)
            return None
        except OSError as exc:
            self.damaged(kind, entry, f"cannot read it: {os_error(exc).cause}", redo)
            return None
        body = entry_body(raw)
        if body is None:
            self.damaged(kind, entry, "its content does not match its checksum", redo)
            return None
        return body

    def peek(self, kind: str, entry: str) -> bytes | None:
        """The body of an entry this build does not use (nor keep): None when it is absent, unreadable or damaged,
        said to no one (an old entry, read for a hint, is pruned like any other unused one)."""
        try:
            return entry_body(self.path(kind, entry).read_bytes())
        except OSError:
            return None

    def get_json(self, kind: str, entry: str, redo: str) -> Any:
        """The JSON body of an entry, or None as :meth:`get`; a body that is not JSON is damaged."""
        body = self.get(kind, entry, redo)
        if body is None:
            return None
        try:
            return json.loads(body.decode("utf-8"))
        except ValueError as exc:
            self.damaged(kind, entry, f"it does not hold JSON ({type(exc).__name__})", redo)
            return None

    def read(self, kind: str, entry: str, parse: Callable[[Any], T], holds: str, redo: str) -> T | None:
        """The JSON body of an entry as ``parse`` reads it; None as :meth:`get`, or when ``parse`` cannot read it
        (a ValueError, KeyError, TypeError or AttributeError: the entry "does not hold ``holds``", and is damaged)."""
        data = self.get_json(kind, entry, redo)
        if data is None:
            return None
        try:
            return parse(data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.damaged(kind, entry, f"it does not hold {holds} ({type(exc).__name__})", redo)
            return None

    def damaged(self, kind: str, entry: str, why: str, redo: str) -> None:
        """Say that an entry cannot be used, and why, in one warning; remove it so that it is made again."""
        path = self.path(kind, entry)
        self.warn(f"{self.display(path)}: damaged cache entry ({why}); {redo}")
        try:
            _remove(path)
        except OSError:
            pass  # writing it again replaces it, or says why it cannot
        return None

    def put(self, kind: str, entry: str, body: bytes) -> None:
        """Write an entry atomically; a failure is one warning per kind and cause, never an error."""
        self.keep(kind, (entry,))
        path = self.path(kind, entry)
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)  # a folder where the entry goes: writing the entry mends the cache
            write_atomic(path, checksummed(body))
        except OSError as exc:
            failure = os_error(exc, self.display(path), f"cannot write the {NAMES.get(kind, kind + ' cache')}")
            if (kind, failure.cause) not in self._said:
                self._said.add((kind, failure.cause))
                self.warn(f"{failure} ({self.without})")

    def put_json(self, kind: str, entry: str, data: Any) -> None:
        self.put(kind, entry, json.dumps(data, sort_keys=True, allow_nan=False).encode("utf-8"))

    def names(self, kind: str) -> list[str]:
        """The names of every entry of ``kind`` on disk, sorted (none when the folder cannot be read)."""
        try:
            return sorted(os.listdir(self.folder / kind))
        except OSError:
            return []

    def prune(self) -> None:
        """Remove the entries of every kind this build used that it neither read, wrote nor kept.

        Call it only after a build in which every page built: a page that failed still has its entries.
        Temporary files of a write that was cut (``.NAME.….tmp``) go too, and the one-file caches of earlier
        versions (:data:`LEGACY`).
        """
        for old in LEGACY:
            path = self.folder / old
            if path.is_file():
                try:
                    path.unlink()
                except OSError:
                    pass  # tried again by the next build
        for kind, live in sorted(self.live.items()):
            for entry in self.names(kind):
                if entry not in live:
                    path = self.path(kind, entry)
                    try:
                        _remove(path)
                    except OSError as exc:
                        self.warn(str(os_error(exc, self.display(path), "cannot remove an unused cache entry")))


def _remove(path: Path) -> None:
    """Remove an entry, or a folder standing in its place (a link is removed, never followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
