"""The Jinja environments for pages and diagrams, and where in a template a failure happened."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import jinja2.bccache

from ..cache import Store, name
from ..errors import SiteBuilderError

Folders = Sequence[Path] | Path
KIND = "templates"
CACHE_FORMAT = "site-builder compiled templates 3"


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


def strict_environment(loader: jinja2.BaseLoader, store: Store | None = None, **escaping: Any) -> jinja2.Environment:
    """Jinja as every template here is written: strict about undefined names, a block tag's line left out.

    ``escaping`` says how a plain value is written (``autoescape``, ``finalize``). With ``store``, compiled
    templates are kept in the cache store and reused by the next build while a template's source is unchanged.
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
    if store is not None:
        env.bytecode_cache = compiled_cache(env, store)
    return env


# Code compiled in this process, by entry name: the environments of one build (one per page) share their
# partials, and mkdocs serve builds again and again in one process.
_COMPILED: dict[str, Any] = {}
_COMPILED_LIMIT = 2048


class StoredBytecodeCache(jinja2.BytecodeCache):
    """Jinja's compiled templates kept in the cache store (``.cache/templates/NAME``).

    NAME hashes what compiled code depends on: the template's name and source (Jinja's key and checksum), the
    Jinja and Python versions (Jinja's magic header) and the options compiled into the code (whitespace
    control, autoescaping, whether values are finalized), so an environment built differently never loads
    another's code. An entry that does not load is compiled again with one warning (by the store).
    """

    def __init__(self, store: Store, options: str) -> None:
        self.store = store
        self.options = options

    def _name(self, bucket: jinja2.bccache.Bucket) -> str:
        return name(CACHE_FORMAT, jinja2.bccache.bc_magic, self.options, bucket.key, bucket.checksum)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        entry = self._name(bucket)
        memory = _COMPILED.get(entry)
        if memory is not None:
            bucket.code = memory  # compiled earlier in this process (another page's environment, or mkdocs serve)
            self.store.keep(KIND, (entry,))
            return
        body = self.store.get(KIND, entry, "compiling the template again")
        if body is None:
            return
        try:
            bucket.bytecode_from_string(body)
        except Exception as exc:  # noqa: BLE001 - unpickling and unmarshalling fail in many ways
            bucket.reset()
            self.store.damaged(KIND, entry, f"{type(exc).__name__} while loading it", "compiling the template again")
            return
        if bucket.code is None:
            self.store.damaged(
                KIND, entry, "not code compiled by this Jinja and Python", "compiling the template again"
            )
            return
        _remember(entry, bucket.code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        entry = self._name(bucket)
        if bucket.code is not None:
            _remember(entry, bucket.code)
        self.store.put(KIND, entry, bucket.bytecode_to_string())


def _remember(entry: str, code: Any) -> None:
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    _COMPILED[entry] = code


def compiled_cache(env: jinja2.Environment, store: Store) -> StoredBytecodeCache:
    """The compiled-template cache for ``env`` (ours, or the MkDocs theme's), keyed by the options it compiles with."""
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
    return StoredBytecodeCache(store, repr(options))


class LocalizedLoader(jinja2.FileSystemLoader):
    """Templates of one language: a name's translation (``_figure.ru.html.j2`` for ``_figure.html.j2``) in any of the
    folders before the name itself, so a translated page includes the translated partials and diagrams its folder
    (or ``templates/``) holds, and the English ones where no translation is needed."""

    def __init__(self, folders: Sequence[str], lang: str) -> None:
        super().__init__(folders)
        self.lang = lang

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        from ..i18n import localized_name

        translated = localized_name(template, self.lang)
        if translated != template:
            try:
                return super().get_source(environment, translated)
            except jinja2.TemplateNotFound:
                pass
        return super().get_source(environment, template)


def page_environment(templates_dirs: Folders, store: Store | None = None, lang: str = "en") -> jinja2.Environment:
    """Jinja for Markdown pages in ``lang``, looking in each folder in turn (for a translation first): strict about
    undefined names, HTML-escaping values."""
    loader = LocalizedLoader([str(d) for d in _folders(templates_dirs)], lang)
    return strict_environment(loader, store, autoescape=True)


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
