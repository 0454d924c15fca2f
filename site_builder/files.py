"""Small file helpers: writes that either complete or leave the old file in place, and sealed cache entries.

A cache entry is sealed twice: a SHA-256 (a cut or changed file is damaged, and said so) and an HMAC-SHA-256
under a per-user secret key kept outside the checkout (:func:`key_path`), so an entry counts only when this
user's build wrote it.
"""

from __future__ import annotations

import hashlib
import hmac
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


KEY_BYTES = 32


def key_path() -> Path:
    """Where this user's sealing key lives: outside every checkout, in the user's cache folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "site-builder" / "seal.key"


_KEYS: dict[str, bytes] = {}
_KEY_PROBLEMS: list[str] = []


def seal_key() -> bytes:
    """This user's secret sealing key, created (mode 0600) on first use.

    A cache entry counts only when its HMAC was made with this key: whoever can write ``.cache/`` but cannot
    read the key cannot forge an entry. When the key cannot be read or made (a read-only home), a key that
    lives only in this process is used: nothing is trusted from before, and :func:`key_problem` says why.
    """
    path = key_path()
    cached = _KEYS.get(str(path))
    if cached is not None:
        return cached
    key: bytes | None = None
    try:
        key = _read_key(path)
        if key is None:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                key = _read_key(path)  # another process made it first
            else:
                fresh = os.urandom(KEY_BYTES)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(fresh)
                key = fresh
        if key is None:
            raise ValueError("it is not a key this program wrote")
    except (OSError, ValueError) as exc:
        _KEY_PROBLEMS.append(
            f"{path}: cannot use the cache key ({getattr(exc, 'strerror', None) or exc}); "
            "the caches are rebuilt and trusted for this run only"
        )
        key = os.urandom(KEY_BYTES)
    _KEYS[str(path)] = key
    return key


def _read_key(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            data = handle.read(KEY_BYTES + 1)
    except FileNotFoundError:
        return None
    if info.st_mode & 0o077:
        raise ValueError("it can be read or written by other users; remove it and a new one is made")
    if len(data) != KEY_BYTES:
        raise ValueError("it is not a key this program wrote")
    return data


def key_problem() -> str | None:
    """Why the sealing key could not be used in this process, if it could not."""
    return _KEY_PROBLEMS[0] if _KEY_PROBLEMS else None


def key_notice() -> str | None:
    """Find or make the sealing key now, before any cache is read: why it cannot be used, if it cannot (for a
    command to say once, rather than a line per cache entry)."""
    seal_key()
    return key_problem()


def _mac(body: bytes) -> bytes:
    return hmac.new(seal_key(), body, hashlib.sha256).hexdigest().encode("ascii")


def seal(body: bytes) -> bytes:
    """A cache entry: a first line with the SHA-256 of ``body`` and its HMAC under this user's key, then ``body``."""
    return hashlib.sha256(body).hexdigest().encode("ascii") + b" " + _mac(body) + b"\n" + body


def store_sealed(path: Path, body: bytes) -> None:
    """Write the cache entry ``body`` at ``path``, sealed, atomically; raises OSError when it cannot be written.

    A folder standing where the entry goes (a damaged cache; never a link, which is replaced, not followed) is
    removed first, so writing the entry mends it.
    """
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    write_atomic(path, seal(body))


def remove_entry(path: Path) -> None:
    """Remove a cache entry, or a folder standing in its place (a link is removed, never followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


class Foreign(Exception):
    """An entry that is whole but was not sealed with this user's key (another user's, or forged)."""


def unseal(raw: bytes) -> bytes | None:
    """The body of an entry this user sealed; None when it was cut or changed; :class:`Foreign` when it is whole
    but its HMAC is not this user's (forged, or written with another key): never trusted either."""
    head, newline, body = raw.partition(b"\n")
    digest, _, mac = head.partition(b" ")
    if not newline or hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        return None
    if not hmac.compare_digest(mac, _mac(body)):
        raise Foreign()
    return body


class DamagedEntry(Exception):
    """A cache entry that cannot be trusted; the message says why."""


def load_sealed(
    path: Path, parse: Callable[[Any], T | None], holds: str, foreign: Callable[[], None] = lambda: None
) -> T | None:
    """The entry at ``path``, read by ``parse`` from its JSON body; None when there is none or it is not this user's
    (then ``foreign`` is called first).

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
    try:
        body = unseal(raw)
    except Foreign:
        foreign()
        return None  # whole, but not sealed with this user's key (forged, or another user's): run again
    if body is None:
        raise DamagedEntry("its content does not match its checksum")
    try:
        return parse(json.loads(body.decode("utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DamagedEntry(f"it does not hold {holds} ({type(exc).__name__})") from None
