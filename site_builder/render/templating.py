"""The Jinja environments for pages and diagrams, and where in a template a failure happened."""

from __future__ import annotations

import hashlib
import io
import marshal
import os
import pickle
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import jinja2.bccache

from ..errors import SiteBuilderError, os_error
from ..files import entry_body, store_entry

Folders = Sequence[Path] | Path
Warn = Callable[[str], None]
CACHE_FORMAT = "site-builder compiled templates 2"  # part of the folder name: entries of another format are never read


def _folders(dirs: Folders) -> list[Path]:
    return [Path(dirs)] if isinstance(dirs, (str, Path)) else [Path(d) for d in dirs]


JINJA_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)  # an expression, statement or comment


def literal_lines(template: str) -> list[str]:
    """A template's lines with every Jinja tag blanked out, a tag over several lines included: what is left on a
    line is what that line writes as it is, and a line number still names its line."""
    return JINJA_TAG.sub(lambda tag: re.sub(r"[^\n]", " ", tag.group()), template).splitlines()


class TemplateFailure(SiteBuilderError):
    """Rendering a template failed; the message starts with ``FILE:LINE:`` when the line is known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(where + message)


def strict_environment(
    loader: jinja2.BaseLoader, compiled_dir: Path | None = None, warn: Warn | None = None, **escaping: Any
) -> jinja2.Environment:
    """Jinja as every template here is written: strict about undefined names, a block tag's line left out.

    ``escaping`` says how a plain value is written (``autoescape``, ``finalize``). With ``compiled_dir``,
    compiled templates are kept there and reused by the next build while a template's source is unchanged;
    ``warn`` hears about an entry that was damaged (and compiled again) or could not be written.
    """
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # Jinja's optimizer folds constant expressions while compiling: it costs more compile time (about a
        # seventh) than it can save in templates rendered once per build.
        optimized=False,
        **escaping,
    )
    if compiled_dir is not None:
        env.bytecode_cache = _compiled_cache(env, Path(compiled_dir), warn if warn is not None else (lambda line: None))
    return env


# Code compiled in this process, by (cache folder, template key, source checksum): the environments of one build
# (one per page) share their partials, and mkdocs serve builds again and again in one process.
_COMPILED: dict[tuple[str, str, str], Any] = {}
_COMPILED_LIMIT = 2048


def _remember(key: tuple[str, str, str], code: Any) -> None:
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    _COMPILED[key] = code


class CheckedBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled-template cache with every entry stored with its SHA-256 and checked when read.

    A cut, changed or unreadable entry is compiled again with one warning naming it, never loaded (Jinja's own
    cache would fail with a pickle or marshal error on every build); an entry that cannot be written is a
    warning too, and the build goes on without it.
    """

    def __init__(self, directory: Path, warn: Warn) -> None:
        super().__init__(str(directory))
        self.warn = warn

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        memory = _COMPILED.get((self.directory, bucket.key, bucket.checksum))
        if memory is not None:
            bucket.code = memory  # compiled earlier in this process (another page's environment, or mkdocs serve)
            return
        self._load_from_disk(bucket)
        if bucket.code is not None:
            _remember((self.directory, bucket.key, bucket.checksum), bucket.code)

    def _load_from_disk(self, bucket: jinja2.bccache.Bucket) -> None:
        path = self._get_cache_filename(bucket)
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            self._damaged(path, os_error(exc).cause)
            return
        body = entry_body(raw)
        if body is None:
            self._damaged(path, "its content does not match its checksum")
            return
        magic = jinja2.bccache.bc_magic
        if not body.startswith(magic):
            self._damaged(path, "not code compiled by this Jinja and Python")
            return
        stream = io.BytesIO(body[len(magic) :])
        try:
            checksum = pickle.load(stream)
            if checksum != bucket.checksum:
                return  # compiled from an older source of the template: compiled again, nothing is wrong
            bucket.code = marshal.load(stream)
        except Exception as exc:  # noqa: BLE001 - unpickling and unmarshalling fail in many ways
            bucket.reset()
            self._damaged(path, f"{type(exc).__name__} while loading it")

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.code is not None:
            _remember((self.directory, bucket.key, bucket.checksum), bucket.code)
        path = Path(self._get_cache_filename(bucket))
        try:
            store_entry(path, bucket.bytecode_to_string())
        except OSError as exc:
            self.warn(
                f"{os_error(exc, path, 'cannot write the compiled-template cache')} (the site is built without it)"
            )

    def _damaged(self, path: str, why: str) -> None:
        self.warn(f"{path}: damaged cache entry ({why}); compiling the template again")


def _compiled_cache(env: jinja2.Environment, compiled_dir: Path, warn: Warn) -> jinja2.BytecodeCache | None:
    """Jinja's compiled-template cache, in a folder named after what compiled code depends on besides the source.

    Jinja keys an entry by the template's name and checks its source; the Jinja version and the options that
    are compiled into the code (whitespace control, autoescaping, whether values are finalized) name the folder,
    so an environment built differently never loads another's code.
    """
    options = (
        CACHE_FORMAT,
        jinja2.__version__,
        env.trim_blocks,
        env.lstrip_blocks,
        env.keep_trailing_newline,
        env.newline_sequence,
        repr(env.autoescape) if isinstance(env.autoescape, bool) else getattr(env.autoescape, "__qualname__", "?"),
        env.finalize is not None,
        sorted(env.extensions),
    )
    folder = compiled_dir / hashlib.sha256(repr(options).encode("utf-8")).hexdigest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        warn(f"{os_error(exc, folder, 'cannot create the compiled-template cache')} (the site is built without it)")
        return None
    return CheckedBytecodeCache(folder, warn)


def theme_cache(env: jinja2.Environment, compiled_dir: Path, warn: Warn) -> jinja2.BytecodeCache | None:
    """The same compiled-template cache for another environment (the MkDocs theme's), in a folder of its
    own named after that environment's options."""
    return _compiled_cache(env, Path(compiled_dir), warn)


def page_environment(
    templates_dirs: Folders, compiled_dir: Path | None = None, warn: Warn | None = None
) -> jinja2.Environment:
    """Jinja for Markdown pages, looking in each folder in turn: strict about undefined names, HTML-escaping values."""
    loader = jinja2.FileSystemLoader([str(d) for d in _folders(templates_dirs)])
    return strict_environment(loader, compiled_dir, warn, autoescape=True)


def _display(path: str, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


def innermost_template_frame(tb: TracebackType | None, templates_dirs: Folders) -> tuple[str, int] | None:
    """(file, line) of the last traceback frame that runs template code (Jinja rewrites those frames)."""
    roots = [str(d.resolve()) + os.sep for d in _folders(templates_dirs)]
    found = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if any(filename.startswith(root) for root in roots) or filename.endswith(".j2"):
            found = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def describe_failure(exc: BaseException, templates_dirs: Folders, base: Path) -> TemplateFailure:
    """One message naming the template file, the line and the cause."""
    if isinstance(exc, TemplateFailure):
        return exc
    templates_dir = _folders(templates_dirs)[0]
    if isinstance(exc, jinja2.TemplateSyntaxError):
        path = exc.filename or (Path(templates_dir) / exc.name if exc.name else None)
        return TemplateFailure(
            f"template syntax error: {exc.message}", _display(str(path), base) if path else None, exc.lineno
        )
    if isinstance(exc, jinja2.TemplateNotFound):
        where = innermost_template_frame(exc.__traceback__, templates_dirs)
        searched = " or ".join(_display(str(d), base) for d in _folders(templates_dirs))
        message = f"template {exc.name!r} not found in {searched}"
        if where:
            return TemplateFailure(message, _display(where[0], base), where[1])
        return TemplateFailure(message)
    where = innermost_template_frame(exc.__traceback__, templates_dirs)
    if isinstance(exc, jinja2.UndefinedError):
        cause = f"undefined value: {exc.message}"
    elif isinstance(exc, KeyError) and exc.args:
        cause = str(exc.args[0])
    else:
        cause = str(exc) or type(exc).__name__
    if where:
        return TemplateFailure(cause, _display(where[0], base), where[1])
    return TemplateFailure(cause)
