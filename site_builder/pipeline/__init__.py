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

# The fixture interpreters' environment on top of the caller's: a fixed hash seed, and one thread for the
# BLAS and OpenMP libraries, so a fixture's floats never depend on how many cores the machine has (a
# reduction split across threads may add in another order) and parallel page runs do not compete for cores.
# The floats must not depend on the processor either: NumPy picks its exp, tanh, log and reductions, and
# OpenBLAS its matrix kernels, by the instructions the processor has, and each choice rounds a last bit
# differently, which hundreds of training steps turn into a different printed digit. So both libraries are
# held to one level every x86-64 processor of the last decade has (x86-64-v3: AVX2 and FMA, Haswell's
# kernels); a trace written here is written the same on any such machine.
FIXTURE_ENVIRONMENT = {
    "PYTHONHASHSEED": "0",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR",
    "OPENBLAS_CORETYPE": "Haswell",
}


def pin_numeric_environment() -> bool:
    """Have this process compute as the fixture interpreters do (the page code it runs itself: traces read back,
    chart facts, charts), by setting :data:`FIXTURE_ENVIRONMENT` before NumPy is first imported; it also spares
    the process OpenBLAS's pool of threads. False when NumPy was imported already (nothing can be pinned then)."""
    import os
    import sys

    if "numpy" in sys.modules:
        return False
    os.environ.update(FIXTURE_ENVIRONMENT)
    return True


_CORE = {
    "FixtureRunError",
    "GoldenError",
    "GoldenIssue",
    "PageRun",
    "Pipeline",
    "golden_issues",
    "refresh_command",
    "page_code",
    "page_facts",
    "site_facts",
    "version_of",
    "write_golden",
}

if TYPE_CHECKING:
    from .core import (  # noqa: F401 - for type checkers; __getattr__ imports them at run time
        FixtureRunError,
        GoldenError,
        GoldenIssue,
        PageRun,
        Pipeline,
        golden_issues,
        page_code,
        page_facts,
        refresh_command,
        site_facts,
        version_of,
        write_golden,
    )


def __getattr__(name: str) -> Any:
    if name in _CORE:
        from . import core

        return getattr(core, name)
    raise AttributeError(name)
