"""``python -m site_builder.render.runner PAGES-SPEC OUT SLUG...``: run pages' fixtures, pickle the answers to OUT.

OUT holds ``{slug: answer}``. Each answer is ``{"ok": True, "result": RunResult}`` or ``{"ok": False, "message": ...,
"file": ..., "line": ...}`` naming the innermost frame of our own code that failed. The
shared value checks in ``site_builder/fixtures.py`` are passed over, so a failed check
names the page's fixtures file that called it.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from pathlib import Path


# The checks every page's fixtures call: an error raised there belongs to the caller.
_SHARED_CHECKS = Path(__file__).resolve().parents[1] / "fixtures.py"


def _where(exc: BaseException) -> tuple[str | None, int | None]:
    """The innermost frame outside the standard library, site-packages, this runner and the shared checks."""
    found: tuple[str | None, int | None] = (None, None)
    for frame in traceback.extract_tb(exc.__traceback__):
        if "site-packages" in frame.filename or frame.filename.startswith(sys.prefix + os.sep + "lib"):
            continue
        if frame.filename.endswith(os.sep + "runner.py") or Path(frame.filename).resolve() == _SHARED_CHECKS:
            continue
        found = (frame.filename, frame.lineno)
    return found


def _relative(path: str) -> str:
    try:
        return os.path.relpath(path, Path(__file__).resolve().parents[2])
    except ValueError:
        return path


def _answer(spec: str, slug: str) -> dict[str, object]:
    from .fixtures import load_pages

    try:
        pages = load_pages(spec, Path.cwd())
        matches = [p for p in pages if p.slug == slug]
        if not matches:
            raise LookupError(f"no page {slug!r} in {spec}")
        return {"ok": True, "result": matches[0].run()}
    except Exception as exc:
        file, line = _where(exc)
        return {
            "ok": False,
            "message": str(exc) or type(exc).__name__,
            "type": type(exc).__name__,
            "file": _relative(file) if file else None,
            "line": line,
        }


def main(argv: list[str]) -> int:
    spec, out, *slugs = argv
    answers = {slug: _answer(spec, slug) for slug in slugs}
    with open(out, "wb") as handle:
        pickle.dump(answers, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
