"""Fault injection for the processes a test starts (``mkdocs build``, ``site-builder``), without privileges.

A test puts this folder on ``PYTHONPATH`` and describes the faults in the
environment variable ``SITE_BUILDER_FAULTS`` (JSON, a list of rules)::

    [{"op": "write", "match": "*/.cache/*", "errno": "ENOSPC"},
     {"op": "read", "match": "*/golden/trace.txt", "errno": "EACCES"},
     {"op": "write", "match": "*/.site-site-*/chapter-24/index.html", "action": "kill"}]

``op`` is what is done to a path matching ``match`` (an ``fnmatch`` pattern on
the absolute path): ``read`` and ``write`` (opening a file), ``mkdir``,
``rename`` (either side of a rename or replace), ``remove`` (unlink, rmdir).
The rule either raises the ``errno`` (for ``write`` with ``ENOSPC`` the file
is opened and each write fails, as on a full disk) or takes an ``action``:
``kill`` (SIGKILL, the process dies on the spot), ``term`` (SIGTERM, once) or
``pause`` (once: create the file ``mark``, then carry on only when the file
``until`` exists, so a test can hold a build at a chosen point).
The tests run as root in some places, where permission bits do not stop a
write, so read-only and full file systems are simulated here instead.

``SITE_BUILDER_FAKE_NOW`` (seconds since the epoch) sets the clock that
``datetime.now`` reads, for builds on different days.
"""

from __future__ import annotations

import builtins
import datetime as _datetime
import errno as _errno
import fnmatch
import io
import json
import os
import shutil
import signal
import time

_RULES = json.loads(os.environ.get("SITE_BUILDER_FAULTS") or "[]")
_FIRED: set[int] = set()
_FDS: dict[int, str] = {}


def _path(target: object) -> str | None:
    if isinstance(target, int):
        return _FDS.get(target)
    try:
        return os.path.abspath(os.fsdecode(target))  # type: ignore[arg-type]  # a path-like from the patched call
    except TypeError:
        return None


def _rule(op: str, target: object) -> dict | None:
    path = _path(target)
    if path is None:
        return None
    for i, rule in enumerate(_RULES):
        if rule["op"] == op and fnmatch.fnmatch(path, rule["match"]):
            if rule.get("action") in ("term", "pause") and i in _FIRED:
                continue
            _FIRED.add(i)
            return rule
    return None


def _act(rule: dict | None, target: object) -> None:
    if rule is None:
        return
    action = rule.get("action")
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "term":
        os.kill(os.getpid(), signal.SIGTERM)
    elif action == "pause":
        with _real_open(rule["mark"], "w"):
            pass
        deadline = time.monotonic() + 300  # a test that never releases the build does not hang the suite
        while not os.path.exists(rule["until"]) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif rule.get("errno") != "ENOSPC" or rule["op"] != "write":
        code = getattr(_errno, rule["errno"])
        raise OSError(code, os.strerror(code), _path(target))


class _FullDisk:
    """A file on a full disk: it opens, and every write fails with ENOSPC."""

    def __init__(self, handle, path):
        self._handle, self._path = handle, path

    def write(self, data):
        raise OSError(_errno.ENOSPC, os.strerror(_errno.ENOSPC), self._path)

    writelines = write

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self._handle.close()
        except OSError:
            pass
        return False

    def __iter__(self):
        return iter(self._handle)


def _writes(mode: str) -> bool:
    return any(c in mode for c in "wax+")


_real_open = io.open


def _open(file, mode="r", *args, **kwargs):
    op = "write" if _writes(mode) else "read"
    rule = _rule(op, file)
    _act(rule, file)
    handle = _real_open(file, mode, *args, **kwargs)
    if isinstance(file, (str, bytes, os.PathLike)):
        try:
            _FDS[handle.fileno()] = _path(file)
        except (OSError, ValueError, AttributeError):
            pass
    if rule is not None and rule.get("errno") == "ENOSPC":
        return _FullDisk(handle, _path(file))
    return handle


_real_os_open = os.open


def _os_open(path, flags, *args, **kwargs):
    op = "write" if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) else "read"
    rule = _rule(op, path)
    _act(rule, path)
    fd = _real_os_open(path, flags, *args, **kwargs)
    _FDS[fd] = _path(path)
    return fd


def _wrap(op: str, real, *positions: int):
    def wrapped(*args, **kwargs):
        for i in positions:
            if i < len(args):
                _act(_rule(op, args[i]), args[i])
        return real(*args, **kwargs)

    return wrapped


if _RULES:
    builtins.open = io.open = _open
    os.open = _os_open
    os.mkdir = _wrap("mkdir", os.mkdir, 0)
    os.rename = _wrap("rename", os.rename, 0, 1)
    os.replace = _wrap("rename", os.replace, 0, 1)
    os.unlink = _wrap("remove", os.unlink, 0)
    os.remove = _wrap("remove", os.remove, 0)
    os.rmdir = _wrap("remove", os.rmdir, 0)
    shutil._USE_CP_SENDFILE = False  # copies write through open(), where a full disk is simulated

_NOW = os.environ.get("SITE_BUILDER_FAKE_NOW")
if _NOW:
    _REAL_DATETIME = _datetime.datetime

    class _FakeDatetime(_REAL_DATETIME):
        @classmethod
        def now(cls, tz=None):
            return _REAL_DATETIME.fromtimestamp(int(_NOW), tz)

        @classmethod
        def utcnow(cls):
            return _REAL_DATETIME.utcfromtimestamp(int(_NOW))

        @classmethod
        def today(cls):
            return cls.now()

    _datetime.datetime = _FakeDatetime
