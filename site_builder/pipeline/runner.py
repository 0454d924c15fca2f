"""``python -m site_builder.pipeline.runner PAGES_DIR SLUG...``: run pages' fixtures in a fresh interpreter.

With ``-`` instead of the slugs, the slugs are read from standard input, one line each, until it closes: the
build hands each interpreter its next page as the last one finishes.

Each page's answer is written to standard output as one JSON line as soon as
that page finishes, so the build can report progress; anything the fixtures
print goes to standard error instead. An answer is either::

    {"slug": ..., "ok": true, "trace": TEXT, "report": TEXT or null, "derived": {...}, "digest": HEX, "seconds": S}
    {"slug": ..., "ok": false, "message": ..., "file": ..., "line": ...}

The trace text is written here, by the page's declared format, so NaN and
infinities are refused with the field's key; derived values must be finite
numbers, booleans, strings or tuples of them. The digest is
:func:`full_precision_digest` of what ``run()`` returned, before any rounding,
so that two interpreters can be shown to compute the same bits. A failure
names the innermost frame of the page's own code (or of our engine) with its
file and line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from ..errors import shown
from ..project import Project
from ..trace import layout_of
from ..trace.numbers import NonFiniteValueError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


class _Unpublishable(ValueError):
    """A derived value that cannot be published (NaN, an infinity, an object that is not plain data)."""


def plain(key: str, value: Any) -> Any:
    """``value`` as plain JSON data (NumPy scalars and arrays become numbers and lists); refuses NaN and infinities."""
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        value = tolist()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Unpublishable(f"derived value {key} is {value!r}; NaN and infinities are never published")
        return value
    if isinstance(value, (tuple, list)):
        return [plain(f"{key}[{i}]", v) for i, v in enumerate(value)]
    raise _Unpublishable(f"derived value {key} is a {type(value).__name__}; give numbers, booleans, strings or tuples")


def full_precision_digest(trace: Any, derived: Any) -> str:
    """SHA-256 of a run's trace (a dataclass, field by field) and derived values (by sorted key), every number as
    the bytes of its float64: equal digests mean the same bits, not the same printed digits."""
    import numpy as np  # here, not at the top: the build imports this module before it pins NumPy's code paths

    def parts(value: Any) -> Any:
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                yield f.name.encode()
                yield from parts(getattr(value, f.name))
        elif isinstance(value, (tuple, list)):
            for item in value:
                yield from parts(item)
        elif isinstance(value, str):
            yield value.encode()
        else:
            yield np.asarray(value, dtype=np.float64).tobytes()

    digest = hashlib.sha256()
    for part in parts(trace):
        digest.update(part)
    for key in sorted(derived):
        digest.update(str(key).encode())
        for part in parts(derived[key]):
            digest.update(part)
    return digest.hexdigest()


def innermost_own_frame(exc: BaseException) -> tuple[str | None, int | None]:
    """The innermost frame of our own code (the page folder or the site_builder package, not this runner)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    found: tuple[str | None, int | None] = (None, None)
    for frame in traceback.extract_tb(exc.__traceback__):
        name = frame.filename
        if "site-packages" in name or name.startswith(("<", sys.base_prefix)) or name == __file__:
            continue
        if Path(name).resolve().is_relative_to(_PACKAGE_DIR / "pipeline"):
            continue
        found = (name, frame.lineno)
    return found


def answer(project: Project, slug: str) -> dict[str, Any]:
    """Run one page's fixtures and describe the result as JSON data."""
    started = time.perf_counter()
    returned_by: tuple[str, int | None] | None = None  # where run() is, once it has returned: its values are its doing
    try:
        page = project.page(slug)
        fixtures = project.module(page, "fixtures")
        run = getattr(fixtures, "run", None)
        if not callable(run):
            raise TypeError(f"{project.display(page.folder)}/fixtures.py defines no run() function")
        result = run()
        returned_by = (fixtures.__file__ or "", getattr(getattr(run, "__code__", None), "co_firstlineno", 0))
        trace_text = layout_of(type(result.trace)).render(result.trace)
        declared = layout_of(project.module(page, "trace").Trace)
        if declared is not layout_of(type(result.trace)):
            raise TypeError(f"run() returned a {type(result.trace).__qualname__}, not the Trace of trace.py")
        report = result.report
        if page.has_report and report is None:
            raise TypeError("the page has report.py, but run() returned no report")
        if report is not None and not page.has_report:
            raise TypeError("run() returned a report, but the page has no report.py declaring its keys")
        derived = {str(k): plain(str(k), v) for k, v in dict(result.derived).items()}
        return {
            "slug": slug,
            "ok": True,
            "trace": trace_text,
            "report": report,
            "derived": derived,
            "digest": full_precision_digest(result.trace, dict(result.derived)),
            "seconds": time.perf_counter() - started,
        }
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message naming its file and line
        file, line = innermost_own_frame(exc)
        if returned_by is not None and isinstance(exc, (NonFiniteValueError, _Unpublishable)):
            file, line = returned_by  # a NaN the trace or the derived values refuse came from run(), not from us
        return {
            "slug": slug,
            "ok": False,
            "message": shown(str(exc) or type(exc).__name__, 2000),
            "type": type(exc).__name__,
            "file": project.display(Path(file)) if file else None,
            "line": line,
        }


def main(argv: list[str]) -> int:
    pages_dir, *slugs = argv
    out: TextIO = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # fixtures that print must not corrupt the answers
    folder = Path(pages_dir).resolve()
    project = Project(
        folder.parent, folder, folder.parent / "templates", folder.parent / "docs", folder.parent / ".cache"
    )
    if slugs == ["-"]:  # the slugs come one line at a time on standard input, each after the last answer
        slugs = iter(lambda: sys.stdin.readline().strip(), "")  # type: ignore[assignment]  # any iterable of slugs
    for slug in slugs:
        out.write(json.dumps(answer(project, slug), allow_nan=False) + "\n")
        out.flush()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
