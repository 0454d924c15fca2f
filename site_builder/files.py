"""Small file helpers: writes that either complete or leave the old file in place, and sealed cache entries."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


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


def seal(body: bytes) -> bytes:
    """A cache entry: a first line with the SHA-256 of ``body``, then ``body``."""
    return hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body


def unseal(raw: bytes) -> bytes | None:
    """The body of a sealed entry; None when it was cut, changed or never sealed."""
    head, newline, body = raw.partition(b"\n")
    if not newline or hashlib.sha256(body).hexdigest().encode("ascii") != head:
        return None
    return body
