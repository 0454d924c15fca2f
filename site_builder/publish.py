"""Publishing a build: ``site/`` is at every instant a complete old or a complete new site.

A build writes into a staging folder beside the site (``.site-NAME-HEX``) and
only a finished build takes the site's place:

- **one build at a time**: a build of ``site/`` holds an exclusive lock on
  ``.site-NAME.lock`` beside it (``fcntl.flock``, released by the kernel when
  the process ends, however it ends); a second build in the same checkout
  waits for it, saying so;
- **atomic swap**: on Linux the staging folder and the site trade places in
  one ``renameat2(RENAME_EXCHANGE)`` call, then the old site (now under the
  staging name) is removed. Where the platform has no such call, the site
  is renamed aside (``.site-NAME-old-HEX``) and the staging folder renamed
  into place, with interrupts held off between the two renames;
- **nothing left behind**: a build killed before the swap leaves its
  staging folder, one killed between the two renames leaves the site
  aside; the next build (under the lock) puts a site left aside back in
  place when ``site/`` is missing, and removes every other leftover;
- **read-only old sites**: an old site whose folders are read-only is made
  writable by its owner to be removed; what cannot be removed is a warning
  naming it (the next build tries again).

Every failure is a :class:`~site_builder.errors.FileAccessError`: one line
naming the path and the cause.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import re
import shutil
import signal
import stat
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import FileAccessError, os_error

Warn = Callable[[str], None]
RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100


def staging_name(site: Path) -> Path:
    return site.parent / f".site-{site.name}-{uuid.uuid4().hex[:12]}"


def old_name(site: Path) -> Path:
    return site.parent / f".site-{site.name}-old-{uuid.uuid4().hex[:12]}"


def lock_name(site: Path) -> Path:
    return site.parent / f".site-{site.name}.lock"


def _leftover(site: Path) -> re.Pattern[str]:
    return re.compile(rf"\.site-{re.escape(site.name)}-(?:(?P<old>old)-)?[0-9a-f]{{12}}")


class SiteLock:
    """The exclusive right to build ``site``: held from the start of a build until its swap is done."""

    def __init__(self, site: Path, waiting: Callable[[str], None]) -> None:
        self.path = lock_name(site)
        self.waiting = waiting
        self.fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise os_error(exc, self.path, "cannot create the build lock") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.waiting(
                f"another build of {self.path.parent / self.path.name[6:-5]} is running; "
                f"waiting for it to finish (lock {self.path})"
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        except OSError as exc:
            os.close(fd)
            raise os_error(exc, self.path, "cannot lock") from None
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None


def clean_leftovers(site: Path, warn: Warn) -> None:
    """Put back a site a killed build left aside, and remove every staging folder and old site left behind.

    Call it holding the :class:`SiteLock`: no other build of ``site`` is running then.
    """
    pattern = _leftover(site)
    try:
        names = sorted(os.listdir(site.parent))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise os_error(exc, site.parent, "cannot list") from None
    found = [(m["old"] is not None, site.parent / name) for name in names if (m := pattern.fullmatch(name))]
    if not os.path.lexists(site):
        aside = [path for old, path in found if old and path.is_dir()]
        if aside:
            try:
                os.rename(aside[0], site)  # killed between the two renames: the old site is complete
            except OSError as exc:
                raise os_error(exc, site, f"cannot put the previous site {aside[0].name} back") from None
            found = [(old, path) for old, path in found if path != aside[0]]
    for _, path in found:
        remove_tree(path, warn)


def remove_tree(path: Path, warn: Warn) -> None:
    """Remove ``path`` and everything in it, read-only folders included; what stays is one warning."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, onerror=_writable_and_again)
        elif os.path.lexists(path):
            path.unlink()
    except OSError as exc:
        warn(f"{os_error(exc, exc.filename or path, 'cannot remove a previous build')} (the next build tries again)")


def _writable_and_again(function: Callable[..., object], target: str, info: object) -> None:
    """``shutil.rmtree``'s error handler: make the folder and its parent writable by their owner, then try again.

    A failed removal is done again; a folder that could not be opened or listed is removed whole. Whatever
    still fails raises its OSError.
    """
    for folder in (os.path.dirname(target), target):
        if folder and os.path.isdir(folder) and not os.path.islink(folder):
            os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
    try:
        if function in (os.rmdir, os.unlink, os.remove):
            function(target)
        elif os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            os.unlink(target)
    except FileNotFoundError:
        pass


_exchange: Callable[[bytes, bytes], int] | None = None
_exchange_looked_up = False


def _renameat2() -> Callable[[bytes, bytes], int] | None:
    """``renameat2(…, RENAME_EXCHANGE)`` from the C library, or None where there is none."""
    global _exchange, _exchange_looked_up
    if not _exchange_looked_up:
        _exchange_looked_up = True
        if sys.platform.startswith("linux"):
            try:
                # The symbols the process already has (the C library among them) first: find_library runs
                # `ldconfig -p` in a child process, about 15 ms of every build.
                try:
                    call = ctypes.CDLL(None, use_errno=True).renameat2
                except (OSError, AttributeError):
                    call = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).renameat2
                call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                call.restype = ctypes.c_int

                def exchange_names(a: bytes, b: bytes) -> int:
                    return int(call(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE))

                _exchange = exchange_names
            except (OSError, AttributeError):
                _exchange = None
    return _exchange


def exchange(a: Path, b: Path) -> bool:
    """Trade the places of two existing paths in one atomic step; False where the platform cannot."""
    call = _renameat2()
    if call is None:
        return False
    if call(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # an old kernel, or a file system without the exchange
    raise FileAccessError(b, f"cannot swap in the new site: {os_error(OSError(code, os.strerror(code))).cause}")


@contextmanager
def interrupts_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done (in the main thread; elsewhere nothing changes)."""
    held = {signal.SIGINT, signal.SIGTERM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def swap_in(staging: Path, site: Path, warn: Warn) -> None:
    """Make the finished ``staging`` folder the site; the old site, if any, is removed afterwards."""
    if os.path.lexists(site) and not site.is_dir():
        raise FileAccessError(site, "is not a folder; remove it, and the next build puts the site there")
    try:
        site.parent.mkdir(parents=True, exist_ok=True)
        with interrupts_held():
            if not os.path.lexists(site):
                os.rename(staging, site)
                return
            if exchange(staging, site):
                aside = staging  # the old site now lives under the staging name
            else:
                aside = old_name(site)
                os.rename(site, aside)
                os.rename(staging, site)
    except OSError as exc:
        raise os_error(exc, site, "cannot put the new site in place") from None
    remove_tree(aside, warn)


class Staging:
    """One build of ``site``: the lock held from :meth:`start` to :meth:`close`, a staging folder to build into,
    and :meth:`publish` to make it the site. ``say`` hears that the build waits for another; ``warn`` hears
    what could not be removed."""

    def __init__(self, site: Path, say: Warn, warn: Warn) -> None:
        self.site = site
        self.warn = warn
        self.lock = SiteLock(site, say)
        self.folder: Path | None = None

    def start(self, dirty: bool) -> Path:
        """Take the lock, remove what killed builds left, and make the staging folder (a copy of the site for a
        ``--dirty`` build); its path."""
        self.lock.acquire()
        clean_leftovers(self.site, self.warn)
        folder = self.folder = staging_name(self.site)
        try:
            if dirty and self.site.is_dir():
                shutil.copytree(self.site, folder, symlinks=True)
            else:
                folder.mkdir()
        except OSError as exc:
            raise os_error(exc, folder, "cannot create the staging folder") from None
        return folder

    def publish(self) -> None:
        """Swap the finished staging folder in as the site, then :meth:`close`."""
        if self.folder is not None:
            swap_in(self.folder, self.site, self.warn)
            self.folder = None
        self.close()

    def published(self, path: str | bytes) -> str:
        """A path in the staging folder as the reader knows it: where it would have been published."""
        shown = os.fsdecode(path)
        if self.folder is not None:
            try:
                return str(self.site / Path(shown).relative_to(self.folder))
            except ValueError:
                pass
        return shown

    def close(self) -> None:
        """Remove the staging folder (a build that did not finish leaves the old site) and release the lock."""
        if self.folder is not None:
            remove_tree(self.folder, self.warn)
            self.folder = None
        self.lock.release()


def sigterm_interrupts() -> Callable[[], None]:
    """Make SIGTERM raise KeyboardInterrupt, as Ctrl-C does, so a build cleans up its staging folder; returns
    what puts the previous handler back (nothing is changed outside the main thread)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)

    return restore
