"""Where the build speaks: MkDocs's logger for what is about the site, two loggers of our own for the rest.

A warning on MkDocs's logger fails ``mkdocs build --strict``; what says nothing about the site being built (a
cache entry repaired, a leftover that could not be removed) and what ``mkdocs serve`` shows on the page itself
(a page that failed) go to loggers outside MkDocs's, written to stderr in MkDocs's look, so neither
``--strict`` nor ``mkdocs serve`` counts them.
"""

from __future__ import annotations

import logging
import re
import sys

from .errors import shown

NAME = "chapter-trace"
log = logging.getLogger("mkdocs.plugins.chapter_trace")


def _own_logger(name: str, level: int, label: str) -> logging.Logger:
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"{label}%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
        logger.setLevel(level)
    return logger


def info(line: str) -> None:
    log.info(f"{NAME}: {line}")


def warning(line: str) -> None:
    """A warning about the site: ``--strict`` fails on it."""
    log.warning(f"{NAME}: {line}")


def notice(line: str) -> None:
    """A warning that says nothing about the site built (caches, leftovers): shown, not counted."""
    _own_logger("site_builder.notices", logging.WARNING, "WARNING -  ").warning(f"{NAME}: {shown(line, 600)}")


def serve_error(line: str) -> None:
    """A page ``mkdocs serve`` shows as its error: said once here, never holding the served site back."""
    _own_logger("site_builder.serve_errors", logging.ERROR, "ERROR   -  ").error(f"{NAME}: {shown(line, 2000)}")


class WarningCounter(logging.Handler):
    """Counts MkDocs's warnings, to know before MkDocs does that ``--strict`` will abort the build."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class OSErrorEcho(logging.Filter):
    """Drops MkDocs's own ``Error building page 'x': [Errno 28] …`` line: the plugin says it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Error building page ") and re.search(r"': \[Errno \d+\] ", message))
