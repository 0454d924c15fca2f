"""The one pipeline: run the pages' fixtures (with the cache), read their traces back, compare the goldens.

The MkDocs plugin, the command line and the checker all call :class:`Pipeline`:

1. :meth:`Pipeline.run` gives every page's :class:`PageRun`. A page whose cache
   entry is current is read from ``.cache/fixtures``; the others run in fresh
   interpreters (as many in parallel as there are cores), each page reported as
   it finishes. The trace text is parsed back strictly, so what the page shows
   is exactly what the trace says.
2. :meth:`PageRun.facts` are the values the page may show: every trace field,
   the derived values the fixtures computed at full precision, chart ticks, and
   what the page folder declares (chapter number, citations, literals).
3. :meth:`Pipeline.goldens` compares each page's golden files with its run.

Rendering (:mod:`site_builder.render`) takes it from there.

Importing this package is cheap: the pipeline itself (:mod:`.core`, which
brings in the trace machinery) is imported the first time one of its names is
used, so a build whose pages are all cached never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["FixtureRunError", "GoldenError", "GoldenIssue", "PageRun", "Pipeline", "refresh_command"]

_CORE = {
    "FIXTURE_ENVIRONMENT", "FixtureRunError", "GoldenError", "GoldenIssue", "PageRun", "Pipeline", "refresh_command", "page_code",
    "page_facts", "site_facts", "version_of", "write_golden",
}

if TYPE_CHECKING:
    from .core import (  # noqa: F401
        FIXTURE_ENVIRONMENT, FixtureRunError, GoldenError, GoldenIssue, PageRun, Pipeline, page_code, page_facts, refresh_command,
        site_facts, version_of, write_golden,
    )


def __getattr__(name: str) -> Any:
    if name in _CORE:
        from . import core

        return getattr(core, name)
    raise AttributeError(name)
