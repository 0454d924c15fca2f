"""The fixture cache: one entry per page, reused only while the code that decides it is unchanged.

An entry is ``.cache/fixtures/<slug>.json``: a first line with the SHA-256 of
the rest, then a JSON object holding the key it was made for (the hash of
every source file the fixtures depend on, the Python and NumPy versions), the
trace and report texts, the derived values and how long the run took. An entry
whose hash does not match its bytes, that does not parse, or that was made for
another key is never used: the page runs again and the entry is replaced. Only
the current entry of each page is kept.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from ..errors import os_error
from ..files import seal, unseal, write_atomic
from .sources import Roots, fixture_sources

CACHE_FORMAT = "site-builder fixture cache 2"


@dataclass(frozen=True)
class Entry:
    key: str
    trace: str
    report: str | None
    derived: Mapping[str, Any]
    seconds: float


class DamagedEntry(Exception):
    """A cache entry that cannot be trusted; the message says why."""


@lru_cache(maxsize=1)
def _numpy_version() -> str:
    try:
        return importlib.metadata.version("numpy")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def cache_key(page_folder: Path, pages_dir: Path, roots: Roots | None = None) -> str:
    """SHA-256 over the fixtures' source files (paths and bytes) and the interpreter and NumPy versions."""
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    for part in (page_folder.name, sys.version, _numpy_version()):
        digest.update(part.encode("utf-8") + b"\0")
    base = Path(pages_dir).resolve().parent
    for file in fixture_sources(page_folder, pages_dir, roots):
        try:
            name = file.relative_to(base).as_posix()
        except ValueError:
            name = file.name if "site_builder" not in file.parts else "/".join(file.parts[file.parts.index("site_builder"):])
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())  # the bytes, never a stamp: proven current
    return digest.hexdigest()


def entry_path(cache_dir: Path, slug: str) -> Path:
    return Path(cache_dir) / "fixtures" / f"{slug}.json"


def load(path: Path) -> Entry | None:
    """The entry at ``path``; None when there is none; :class:`DamagedEntry` when it cannot be trusted."""
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # no entry (or no cache folder: writing one says why)
    except IsADirectoryError:
        raise DamagedEntry("it is a folder, not a file") from None
    except OSError as exc:
        raise DamagedEntry(f"cannot read it: {os_error(exc).cause}") from None
    body = unseal(raw)
    if body is None:
        raise DamagedEntry("its content does not match its checksum")
    try:
        data = json.loads(body.decode("utf-8"))
        entry = Entry(
            key=str(data["key"]),
            trace=str(data["trace"]),
            report=None if data["report"] is None else str(data["report"]),
            derived=dict(data["derived"]),
            seconds=float(data["seconds"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise DamagedEntry(f"it does not hold an entry ({type(exc).__name__})") from None
    if data.get("format") != CACHE_FORMAT:
        return None
    return entry


def store(path: Path, entry: Entry) -> None:
    """Write ``entry`` atomically; an I/O failure raises :class:`~site_builder.errors.FileAccessError`."""
    body = json.dumps(
        {
            "format": CACHE_FORMAT,
            "key": entry.key,
            "trace": entry.trace,
            "report": entry.report,
            "derived": entry.derived,
            "seconds": entry.seconds,
        },
        allow_nan=False,
        sort_keys=True,
    ).encode("utf-8")
    try:
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
        write_atomic(path, seal(body))
    except OSError as exc:
        raise os_error(exc, path, "cannot write the fixture cache") from None
