"""The Jinja environments for pages and diagrams, and where in a template a failure happened."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import TracebackType
from typing import Any, Sequence

import jinja2

from ..errors import SiteBuilderError

Folders = Sequence[Path] | Path


def _folders(dirs: Folders) -> list[Path]:
    return [Path(dirs)] if isinstance(dirs, (str, Path)) else [Path(d) for d in dirs]


class TemplateFailure(SiteBuilderError):
    """Rendering a template failed; the message starts with ``FILE:LINE:`` when the line is known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(where + message)


def strict_environment(
    loader: jinja2.BaseLoader, compiled_dir: Path | None = None, **escaping: Any
) -> jinja2.Environment:
    """Jinja as every template here is written: strict about undefined names, a block tag's line left out.

    ``escaping`` says how a plain value is written (``autoescape``, ``finalize``). With ``compiled_dir``,
    compiled templates are kept there and reused by the next build while a template's source is unchanged.
    """
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        **escaping,
    )
    if compiled_dir is not None:
        env.bytecode_cache = _compiled_cache(env, Path(compiled_dir))
    return env


def _compiled_cache(env: jinja2.Environment, compiled_dir: Path) -> jinja2.BytecodeCache:
    """Jinja's compiled-template cache, in a folder named after what compiled code depends on besides the source.

    Jinja keys an entry by the template's name and checks its source; the Jinja version and the options that
    are compiled into the code (whitespace control, autoescaping, whether values are finalized) name the folder,
    so an environment built differently never loads another's code.
    """
    options = (
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
    folder.mkdir(parents=True, exist_ok=True)
    return jinja2.FileSystemBytecodeCache(str(folder))


def page_environment(templates_dirs: Folders, compiled_dir: Path | None = None) -> jinja2.Environment:
    """Jinja for Markdown pages, looking in each folder in turn: strict about undefined names, HTML-escaping values."""
    loader = jinja2.FileSystemLoader([str(d) for d in _folders(templates_dirs)])
    return strict_environment(loader, compiled_dir, autoescape=True)


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
