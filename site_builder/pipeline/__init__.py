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
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import FileAccessError, SiteBuilderError, os_error, shown
from ..project import Page, Project, refresh_pages
from ..trace import TraceParseError, layout_of
from . import cache
from .golden import GoldenError, GoldenIssue, compare, refresh_command

__all__ = ["FixtureRunError", "GoldenError", "GoldenIssue", "PageRun", "Pipeline", "refresh_command"]

Progress = Callable[[str], None]

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


class FixtureRunError(SiteBuilderError):
    """A page's fixtures failed (an exception, NaN, a failed property, a crashed process); names the file and cause."""


@dataclass(frozen=True)
class PageRun:
    """One page after its fixtures ran: the texts, the typed trace read back from its text, and its facts."""

    page: Page
    trace_text: str
    report_text: str | None
    trace: Any
    derived: Mapping[str, Any]
    figures: Any = field(default=None, repr=False, compare=False)  # the page's figures module, if it has one
    site_facts: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)  # every page's metadata
    cached: bool = False
    seconds: float = 0.0

    @cached_property
    def facts(self) -> dict[str, Any]:
        """Provenance key -> value for everything the page may show."""
        out: dict[str, Any] = dict(self.trace.facts())
        for key, value in self.derived.items():
            if key in out:
                raise FixtureRunError(f"{self.where}: derived value {key} has the key of a trace field")
            out[key] = tuple(value) if isinstance(value, list) else value
        chart_facts = getattr(self.figures, "chart_facts", None)
        if chart_facts is not None:
            out.update(page_code(self.page, "figures.chart_facts()", lambda: chart_facts(self.trace)))
        out.update(self.site_facts)
        out.update(page_facts(self.page))
        return out

    @cached_property
    def charts(self) -> dict[str, str]:
        """The page's charts as inline SVG, drawn from the trace and the facts (``figures.charts``)."""
        draw = getattr(self.figures, "charts", None)
        if draw is None:
            return {}
        return page_code(self.page, "figures.charts()", lambda: dict(draw(self.trace, self.facts)))

    @property
    def where(self) -> str:
        return f"pages/{self.page.slug}"

    @property
    def records(self) -> int:
        return len(self.trace_text.splitlines())

    def text(self, kind: str) -> str | None:
        return self.trace_text if kind == "trace" else self.report_text


def page_code(page: Page, what: str, call: Callable[[], Any]) -> Any:
    """``call()``, which runs code of the page folder in this process; its failure is one line naming file and line."""
    from .runner import innermost_own_frame

    try:
        return call()
    except SiteBuilderError:
        raise
    except Exception as exc:  # noqa: BLE001 - page code may raise anything; the message names where
        file, line = innermost_own_frame(exc)
        where = f"{_relative(file, page.folder.parents[1])}:{line}: " if file else f"pages/{page.slug}: "
        cause = shown(str(exc) or type(exc).__name__, 300)
        raise FixtureRunError(f"{where}{what} failed: {type(exc).__name__}: {cause} (page {page.slug})") from None


def _relative(file: str, root: Path) -> str:
    path = Path(file)
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def page_facts(page: Page) -> dict[str, Any]:
    """What a page folder declares, as facts: its chapter number, its citations' years and ids, its literals."""
    out: dict[str, Any] = {}
    if page.chapter is not None:
        out["PAGE.chapter"] = page.chapter
    for c in page.citations:
        out[f"CITE.{c.id}.year"] = c.year
        if c.arxiv:
            out[f"CITE.{c.id}.arxiv"] = c.arxiv
        if c.lecture is not None:
            out[f"CITE.{c.id}.lecture"] = c.lecture
    for lit in page.literals:
        out[f"LIT.{lit.id}"] = lit.value
    return out


def site_facts(pages: Sequence[Page]) -> dict[str, Any]:
    """What every page may say about the others: their chapter numbers (``PAGE[ch25].chapter``)."""
    return {f"PAGE[{p.slug}].chapter": p.chapter for p in pages if p.chapter is not None}


@dataclass
class _Answer:
    ok: bool
    data: dict[str, Any]


class Pipeline:
    """Runs a project's pages; ``progress`` hears one line per page whose fixtures ran, as each finishes."""

    def __init__(self, project: Project, *, progress: Progress | None = None, warn: Progress | None = None,
                 jobs: int | None = None) -> None:
        self.project = project
        self.progress = progress or (lambda line: None)
        self.warn = warn if warn is not None else (lambda line: print(line, file=sys.stderr))
        self.jobs = jobs or max(1, os.cpu_count() or 1)
        self._processes: list[subprocess.Popen[str]] = []
        self._lock = threading.Lock()

    def _stop_all(self) -> None:
        with self._lock:
            processes, self._processes = self._processes, []
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    # ------------------------------------------------------------------ fixtures
    def run(self, pages: Sequence[Page] | None = None, *, use_cache: bool = True) -> list[PageRun]:
        """Every page's run, in navigation order: from the cache where it is current, the rest run fresh."""
        project = self.project
        refresh_pages(project.pages_dir)  # an edited page module is read again (mkdocs serve rebuilds in one process)
        pages = list(project.pages() if pages is None else pages)
        everything = project.pages()
        shared = site_facts(everything)
        roots = cache.Roots(project.pages_dir)
        keys = {p.slug: self._key(p, roots) for p in pages} if use_cache else {}
        if use_cache and len(pages) == len(everything):
            self._prune({p.slug for p in everything})
        runs: dict[str, PageRun] = {}
        missing: list[Page] = []
        for p in pages:
            entry = self._cached(p, keys[p.slug]) if use_cache else None
            if entry is not None:
                try:
                    runs[p.slug] = self._page_run(p, entry.trace, entry.report, entry.derived, shared, True, entry.seconds)
                    continue
                except (TraceParseError, FixtureRunError) as exc:
                    self.warn(f"{project.display(cache.entry_path(project.cache_dir, p.slug))}: damaged cache entry "
                              f"({shown(str(exc), 160)}); running the fixtures again")
            missing.append(p)
        if missing:
            started = time.perf_counter()
            for p, answer in self._run_fresh(missing):
                data = answer.data
                run = self._page_run(p, data["trace"], data["report"], data["derived"], shared, False, data["seconds"])
                runs[p.slug] = run
                if use_cache:
                    self._store(p, cache.Entry(keys[p.slug], run.trace_text, run.report_text, data["derived"],
                                               data["seconds"]))
            self.progress(f"fixtures: {len(missing)} of {len(pages)} pages ran in {time.perf_counter() - started:.2f} s")
        return [runs[p.slug] for p in pages]

    def run_page(self, slug: str, *, use_cache: bool = True) -> PageRun:
        return self.run([self.project.page(slug)], use_cache=use_cache)[0]

    def _key(self, page: Page, roots: cache.Roots) -> str:
        try:
            return cache.cache_key(page.folder, self.project.pages_dir, roots)
        except OSError as exc:
            raise os_error(exc, None, "cannot read a source of the fixtures") from None

    def _prune(self, slugs: set[str]) -> None:
        """Remove the entries of pages that no longer exist (each page keeps only its current entry anyway)."""
        folder = self.project.cache_dir / "fixtures"
        try:
            stale = [f for f in folder.iterdir() if f.suffix == ".json" and f.stem not in slugs]
        except OSError:
            return  # no cache yet, or none that can be read: nothing to prune
        for file in stale:
            try:
                file.unlink()
            except OSError as exc:
                self.warn(f"{os_error(exc, self.project.display(file), 'cannot remove a stale cache entry')}")

    def _cached(self, page: Page, key: str) -> cache.Entry | None:
        path = cache.entry_path(self.project.cache_dir, page.slug)
        try:
            entry = cache.load(path)
        except cache.DamagedEntry as exc:
            self.warn(f"{self.project.display(path)}: damaged cache entry ({exc}); running the fixtures again")
            return None
        return entry if entry is not None and entry.key == key else None

    def _store(self, page: Page, entry: cache.Entry) -> None:
        path = cache.entry_path(self.project.cache_dir, page.slug)
        try:
            cache.store(path, entry)
        except FileAccessError as exc:
            self.warn(f"{self.project.display(Path(exc.path))}: {exc.cause} (the site is built without it)")

    def _page_run(self, page: Page, trace_text: str, report: str | None, derived: Mapping[str, Any],
                  shared: Mapping[str, Any], cached: bool, seconds: float) -> PageRun:
        """The typed trace read back from its text, the report checked against its declared keys."""
        project = self.project
        trace_module = page_code(page, "importing trace.py", lambda: project.module(page, "trace"))
        layout = layout_of(trace_module.Trace)
        trace = layout.parse(trace_text, f"{project.display(page.folder)} (fresh trace)")
        if report is not None:
            report_module = page_code(page, "importing report.py", lambda: project.module(page, "report"))
            report_module.REPORT.parse(report, f"{project.display(page.folder)} (fresh report)")
        figures = None
        if project.has_module(page, "figures"):
            figures = page_code(page, "importing figures.py", lambda: project.module(page, "figures"))
        return PageRun(page, trace_text, report, trace, dict(derived), figures, shared, cached, seconds)

    def _run_fresh(self, pages: list[Page]) -> list[tuple[Page, _Answer]]:
        """Run ``pages`` in up to ``jobs`` fresh interpreters; the answers in the order of ``pages``."""
        groups: list[list[Page]] = [[] for _ in range(min(self.jobs, len(pages)))]
        for i, p in enumerate(pages):
            groups[i % len(groups)].append(p)
        answers: dict[str, _Answer] = {}
        failures: list[str] = []
        lock = threading.Lock()

        def work(group: list[Page]) -> None:
            try:
                for slug, answer in self._interpreter(group):
                    with lock:
                        answers[slug] = answer
                        if answer.ok:
                            self.progress(f"fixtures: {slug} ran in {answer.data['seconds']:.2f} s")
            except FixtureRunError as exc:
                with lock:
                    failures.append(str(exc))

        threads = [threading.Thread(target=work, args=(g,), daemon=True) for g in groups[1:]]
        try:
            for t in threads:
                t.start()
            work(groups[0])
            for t in threads:
                t.join()
        except BaseException:
            self._stop_all()  # interrupted (Ctrl-C, SIGTERM): no fixture process outlives the build
            raise
        out: list[tuple[Page, _Answer]] = []
        for p in pages:  # the first page (in navigation order) that failed is the one reported
            answer = answers.get(p.slug)
            if answer is None:
                raise FixtureRunError(failures[0] if failures else f"pages/{p.slug}: the fixtures gave no answer")
            if not answer.ok:
                d = answer.data
                where = f"{d['file']}:{d['line']}: " if d.get("file") else f"{self.project.display(p.folder)}: "
                raise FixtureRunError(f"{where}{d['message']} (page {p.slug})")
            out.append((p, answer))
        return out

    def _interpreter(self, group: list[Page]) -> list[tuple[str, _Answer]]:
        """One fresh interpreter running ``group`` in order, its answers read line by line as they come."""
        command = [sys.executable, "-m", "site_builder.pipeline.runner", str(self.project.pages_dir),
                   *(p.slug for p in group)]
        env = {**os.environ, **FIXTURE_ENVIRONMENT}
        try:
            process = subprocess.Popen(command, cwd=self.project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=env, text=True, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise FixtureRunError(f"cannot start the fixture interpreter {sys.executable}: {exc.strerror or exc}") from None
        with self._lock:
            self._processes.append(process)
        errors: list[str] = []
        reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        out: list[tuple[str, _Answer]] = []
        assert process.stdout is not None
        for line in process.stdout:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            out.append((data["slug"], _Answer(bool(data.get("ok")), data)))
            if not data.get("ok"):
                break
        process.stdout.close()
        code = process.wait()
        reader.join()
        if len(out) < len(group) and (not out or out[-1][1].ok):
            pending = [p.slug for p in group[len(out):]]
            if code < 0:
                try:
                    how = f"was killed by signal {signal.Signals(-code).name}"
                except ValueError:
                    how = f"was killed by signal {-code}"
            else:
                how = f"exited with status {code}"
            last = [line for line in "".join(errors).strip().splitlines() if line.strip()][-1:] or ["no output"]
            raise FixtureRunError(
                f"pages/{pending[0]}: the fixture process {how} while running page {pending[0]}: {shown(last[0], 300)}"
            )
        return out

    # ------------------------------------------------------------------ goldens
    def goldens(self, runs: Sequence[PageRun]) -> list[GoldenIssue]:
        """Every golden file that does not hold exactly what its page's fixtures print now."""
        issues: list[GoldenIssue] = []
        for run in runs:
            layout = layout_of(self.project.module(run.page, "trace").Trace)
            found = compare(self.project, run.page, "trace", run.trace_text, layout.parse)
            if found:
                issues.append(found)
            if run.report_text is not None:
                report = self.project.module(run.page, "report").REPORT
                found = compare(self.project, run.page, "report", run.report_text, report.parse)
                if found:
                    issues.append(found)
        return issues


def version_of(project: Project, page: Page) -> str:
    """The version tag of a page's trace format."""
    return layout_of(project.module(page, "trace").Trace).version


def write_golden(project: Project, run: PageRun, kind: str) -> Path:
    """Freeze a page's fresh trace or report as its golden file."""
    from ..errors import os_error
    from ..files import write_atomic

    text = run.text(kind)
    path = run.page.golden(kind)
    if text is None:
        raise GoldenError(f"page {run.page.slug} publishes no {kind}")
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise os_error(exc, project.display(path), "cannot write") from None
    return path
