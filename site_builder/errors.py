"""The one error family every command reports, and the exit code of each.

Every failure the tool expects is a :class:`SiteBuilderError` whose message is
one line naming the path and the cause. The command line prints it and exits
with :func:`exit_code`; the MkDocs plugin turns it into a ``PluginError``,
which MkDocs prints without a traceback. Nothing else decides an exit code.

====  ==========================================================================
0     done; the site agrees with a fresh run
1     the project is wrong: a failed fixture, a stale or malformed golden, a
      template, diagram or math error, a site that disagrees with its trace
2     the command cannot do its work: a usage error, a file it cannot read or
      write, a missing tool
====  ==========================================================================
"""

from __future__ import annotations

import errno
import os

MAX_SHOWN = 200  # characters of a quoted value in a message; longer values are cut in the middle


class SiteBuilderError(Exception):
    """A failure the tool expects; ``str()`` is one line naming the path and the cause."""

    exit_code = 1


class UsageError(SiteBuilderError):
    """The command was asked for something that does not exist (an unknown page, a report a page lacks)."""

    exit_code = 2


class ToolMissingError(SiteBuilderError):
    """A program the build needs (Graphviz's ``dot``) is not installed."""

    exit_code = 2


class FileAccessError(SiteBuilderError):
    """A file or folder cannot be read or written: names the path and the operating system's reason."""

    exit_code = 2

    def __init__(self, path: object, cause: str):
        self.path = str(path)
        self.cause = cause
        super().__init__(f"{self.path}: {cause}")


def os_error(exc: OSError, path: object | None = None, doing: str = "") -> FileAccessError:
    """An :class:`OSError` as one line: ``PATH: cannot write: No space left on device``."""
    where = path if path is not None else (exc.filename or "?")
    reasons = {
        errno.ENOSPC: "no space left on the device",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EISDIR: "is a folder, not a file",
        errno.ENOTDIR: "a part of the path is not a folder",
        errno.ENOENT: "does not exist",
        errno.EDQUOT: "disk quota exceeded",
    }
    reason = reasons.get(exc.errno or 0) or exc.strerror or os.strerror(exc.errno or 0) or type(exc).__name__
    return FileAccessError(where, f"{doing}: {reason}" if doing else reason)


def _escaped(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(text: object, limit: int = MAX_SHOWN) -> str:
    """``text`` fit for a one-line message: control characters escaped, long text cut in the middle with its length.

    Only the kept ends are escaped, so a value of any size is shown in time proportional to ``limit``.
    """
    text = str(text)
    if len(text) <= limit:
        safe = _escaped(text)
        if len(safe) <= limit:
            return safe
    half = max(8, (limit - 24) // 2)
    head = _escaped(text[:half])[:half]
    tail = _escaped(text[-half:])[-half:]
    return f"{head}…[{len(text)} characters]…{tail}"


def exit_code(exc: BaseException) -> int:
    """The exit status a command ends with after ``exc``."""
    if isinstance(exc, SiteBuilderError):
        return exc.exit_code
    if isinstance(exc, OSError):
        return FileAccessError.exit_code
    return 1
