"""Writes that either complete or leave the old file in place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TypeVar

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
