"""Running the pages' fixtures: in one fresh interpreter, cached by the hash of the code that decides them.

Every page whose cache entry is missing runs in the same fresh interpreter, so
NumPy and the engine are imported once per build rather than once per page.
A fresh interpreter means ``mkdocs serve`` sees an edited fixture on the next
rebuild instead of the module it imported at start-up. The cache key covers
the bytes of every file in the page's ``sources``, the module that lists the
pages, and the NumPy and Python versions; anything else changing the output
would be a bug in ``sources``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..chapters import PageSource, RunResult
from ..files import write_atomic

DEFAULT_PAGES = "site_builder.chapters:PAGES"
CACHE_FORMAT = b"site-builder fixture cache 1"


class FixtureRunError(RuntimeError):
    """A page's fixtures failed (NaN, a failed property, an exception); names the file and the cause."""


def load_pages(spec: str, search_path: Path | None = None) -> list[PageSource]:
    """The page list named by ``module:attribute`` (``search_path`` is importable, as for MkDocs hooks)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"pages must be written module:attribute, got {spec!r}")
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
    module = importlib.import_module(module_name)
    pages = getattr(module, attribute)
    return list(pages)


def _files(paths: Sequence[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            out += sorted(
                p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            )
        elif path.is_file():
            out.append(path)
    return out


def cache_key(page: PageSource, spec: str) -> str:
    digest = hashlib.sha256(CACHE_FORMAT)
    module = sys.modules.get(spec.partition(":")[0])
    listing = [Path(module.__file__)] if module is not None and getattr(module, "__file__", None) else []
    try:
        numpy_version = importlib.metadata.version("numpy")
    except importlib.metadata.PackageNotFoundError:
        numpy_version = "absent"
    for part in (spec, page.slug, page.trace_id, sys.version, numpy_version):
        digest.update(part.encode("utf-8") + b"\0")
    for file in _files([*listing, *page.sources]):
        digest.update(str(file.resolve()).encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


@dataclass
class FixtureRun:
    result: RunResult
    cached: bool


def _cache_file(page: PageSource, spec: str, cache_dir: Path) -> Path:
    return Path(cache_dir) / f"{page.slug}-{cache_key(page, spec)}.pickle"


def _load_cached(cache_file: Path) -> RunResult | None:
    if not cache_file.is_file():
        return None
    try:
        with cache_file.open("rb") as handle:
            result = pickle.load(handle)
    except Exception:  # an unreadable cache entry is simply recomputed
        return None
    return result if isinstance(result, RunResult) else None


def _store(cache_file: Path, result: RunResult) -> None:
    write_atomic(cache_file, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


def run_fixtures(pages: Sequence[PageSource], spec: str, cache_dir: Path, workdir: Path) -> list[FixtureRun]:
    """Each page's :class:`RunResult`, in order: from ``cache_dir``, the rest from one fresh interpreter.

    If several pages fail, the first one in ``pages`` is reported.
    """
    files = [_cache_file(page, spec, cache_dir) for page in pages]
    cached = [_load_cached(f) for f in files]
    missing = [page for page, result in zip(pages, cached) if result is None]
    fresh = _run_in_subprocess(missing, spec, workdir) if missing else {}
    runs: list[FixtureRun] = []
    for page, file, result in zip(pages, files, cached):
        if result is not None:
            runs.append(FixtureRun(result, True))
        else:
            _store(file, fresh[page.slug])
            runs.append(FixtureRun(fresh[page.slug], False))
    return runs


def _run_in_subprocess(pages: Sequence[PageSource], spec: str, workdir: Path) -> dict[str, RunResult]:
    with tempfile.TemporaryDirectory(prefix="site-builder-fixtures-") as tmp:
        out = Path(tmp) / "results.pickle"
        command = [sys.executable, "-m", "site_builder.render.runner", spec, str(out), *(p.slug for p in pages)]
        done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
        if done.returncode != 0 or not out.is_file():
            detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            slugs = ", ".join(p.slug for p in pages)
            raise FixtureRunError(f"pages {slugs}: the fixture process failed: {detail}")
        with out.open("rb") as handle:
            answers: dict[str, dict[str, Any]] = pickle.load(handle)
    results: dict[str, RunResult] = {}
    for page in pages:
        answer = answers[page.slug]
        if not answer["ok"]:
            where = f"{answer['file']}:{answer['line']}: " if answer.get("file") else ""
            raise FixtureRunError(f"{where}{answer['message']} (page {page.slug})")
        results[page.slug] = answer["result"]
    return results
