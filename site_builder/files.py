"""Small file helpers: writes that either complete or leave the old file in place, and cache entries.

A cache entry (under ``.cache/`` in the checkout, nothing outside it) starts with a line holding the SHA-256 of
the rest: a cut or changed entry is damaged, said so once, and made again. The checksum guards against damage,
not against a person: whoever can write ``.cache/`` can write the page code the build runs anyway.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .errors import os_error

T = TypeVar("T")


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8 with LF lines, or bytes) through a temporary sibling and an atomic rename.

    On any failure (a full disk, a read-only folder, an interrupt) the temporary file is removed and the old
    file, if any, is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if isinstance(content, bytes):
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def checksummed(body: bytes) -> bytes:
    """A cache entry: a first line with the SHA-256 of ``body``, then ``body``."""
    return hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body


def store_entry(path: Path, body: bytes) -> None:
    """Write the cache entry ``body`` at ``path``, with its checksum, atomically; raises OSError when it cannot be written.

    A folder standing where the entry goes (a damaged cache; never a link, which is replaced, not followed) is
    removed first, so writing the entry mends it.
    """
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    write_atomic(path, checksummed(body))


def remove_entry(path: Path) -> None:
    """Remove a cache entry, or a folder standing in its place (a link is removed, never followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def entry_body(raw: bytes) -> bytes | None:
    """The body of a cache entry; None when it was cut or changed (its SHA-256 is not the first line's).

    The first line's first word is the checksum; an entry written when the line also carried a second word
    (an HMAC under a per-user key, no longer made) still reads.
    """
    head, newline, body = raw.partition(b"\n")
    if not newline or hashlib.sha256(body).hexdigest().encode("ascii") != head.partition(b" ")[0]:
        return None
    return body


class DamagedEntry(Exception):
    """A cache entry that cannot be trusted; the message says why."""


def load_entry(path: Path, parse: Callable[[Any], T | None], holds: str) -> T | None:
    """The entry at ``path``, read by ``parse`` from its JSON body; None when there is none.

    Raises :class:`DamagedEntry` when it cannot be trusted: a folder, unreadable, cut or changed, or a body that
    ``parse`` cannot read (a ValueError, KeyError, TypeError or AttributeError: "it does not hold ``holds``").
    ``parse`` returns None for an entry that is whole but of another format.
    """
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # no entry (or no cache folder: writing one says why)
    except IsADirectoryError:
        raise DamagedEntry("it is a folder, not a file") from None
    except OSError as exc:
        raise DamagedEntry(f"cannot read it: {os_error(exc).cause}") from None
    body = entry_body(raw)
    if body is None:
        raise DamagedEntry("its content does not match its checksum")
    try:
        return parse(json.loads(body.decode("utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DamagedEntry(f"it does not hold {holds} ({type(exc).__name__})") from None
