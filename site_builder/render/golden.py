"""Golden files: the frozen trace and report must equal what the fixtures print now.

A golden file that no longer parses is reported with its line and column; one
that parses but differs is reported with its first differing line. Both
messages end with the one command that rewrites it.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Callable

from ..chapters import PageSource
from ..trace import TraceParseError, split_lines


class GoldenError(RuntimeError):
    """A golden file is missing, malformed or stale."""


CLI_DEFAULT_PAGE = "ch24"  # ``site-builder trace`` without --page


def refresh_command(page: PageSource, kind: str) -> str:
    """The command that rewrites this page's golden ``kind`` (trace or report)."""
    which = "" if page.slug == CLI_DEFAULT_PAGE else f" --page {page.slug}"
    return f"site-builder {kind}{which} --write-golden"


def display_path(path: Path, base: Path) -> str:
    try:
        relative = os.path.relpath(path, base)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


def chapter_parsers(page: PageSource) -> dict[str, Callable[[str, str], object]]:
    """The strict parsers a chapter package offers (``parse`` for traces, ``parse_report`` for reports)."""
    try:
        module = importlib.import_module(f"site_builder.chapters.{page.slug}")
    except ImportError:
        return {}
    found = {}
    for kind, name in (("trace", "parse"), ("report", "parse_report")):
        parser = getattr(module, name, None)
        if callable(parser):
            found[kind] = parser
    return found


def _generic_trace_check(text: str, source: str, trace_id: str) -> None:
    lines = split_lines(text, source)
    begin, end = f"TRACE {trace_id} BEGIN", f"TRACE {trace_id} END"
    if lines[0] != begin:
        raise TraceParseError(f"first line must be {begin!r}", 1, 1, source)
    if lines[-1] != end:
        raise TraceParseError(f"last line must be {end!r}", len(lines), 1, source)


def check_golden(
    page: PageSource,
    kind: str,
    golden: Path,
    fresh: str,
    base: Path,
) -> None:
    """Raise :class:`GoldenError` unless ``golden`` holds exactly ``fresh``."""
    shown = display_path(golden, base)
    command = refresh_command(page, kind)
    try:
        text = golden.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise GoldenError(f"{shown}: golden {kind} file is missing; write it with `{command}`") from None
    except UnicodeDecodeError as exc:
        raise GoldenError(f"{shown}: golden {kind} is not UTF-8 ({exc.reason} at byte {exc.start}); rewrite it with `{command}`") from None
    parser = chapter_parsers(page).get(kind)
    try:
        if parser is not None:
            parser(text, shown)
        elif kind == "trace":
            _generic_trace_check(text, shown, page.trace_id)
    except TraceParseError as exc:
        raise GoldenError(f"{exc} (malformed golden {kind}; rewrite it with `{command}`)") from None
    if text == fresh:
        return
    old, new = text.split("\n"), fresh.split("\n")
    for number, (a, b) in enumerate(zip(old, new), start=1):
        if a != b:
            break
    else:
        number = min(len(old), len(new)) + 1
        a = old[number - 1] if number <= len(old) else "(end of file)"
        b = new[number - 1] if number <= len(new) else "(end of file)"
    raise GoldenError(
        f"{shown}:{number}: golden {kind} is stale: the file has {a!r} where the fixtures now print {b!r}; "
        f"refresh it with `{command}`"
    )
