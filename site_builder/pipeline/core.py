"""The pipeline itself (see the package's documentation): fixtures, the cache, goldens, facts."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..cache import Store
from ..errors import SiteBuilderError, os_error, shown
from ..i18n import SOURCE
from ..project import Page, Project, refresh_pages
from ..trace import TraceParseError, layout_of
from . import FIXTURE_ENVIRONMENT, cache
from .golden import GoldenError, GoldenIssue, golden_issues, refresh_command

__all__ = ["FixtureRunError", "GoldenError", "GoldenIssue", "PageRun", "Pipeline", "refresh_command"]

Progress = Callable[[str], None]


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
    digest: str = ""  # the runner's full_precision_digest of what run() returned, before any rounding

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

    @property
    def charts(self) -> dict[str, str]:
        """The page's charts in English (see :meth:`charts_for`)."""
        return self.charts_for(SOURCE)

    def charts_for(self, lang: str) -> dict[str, str]:
        """The page's charts as inline SVG in ``lang``, drawn from the trace and the facts (``figures.charts``).

        A ``charts(trace, facts, lang)`` draws its words in each language; a ``charts(trace, facts)`` draws the
        same charts for every language. Each language is drawn once per run.
        """
        drawn = self._charts
        if lang not in drawn:
            drawn[lang] = self._draw_charts(lang)
        return drawn[lang]

    @cached_property
    def _charts(self) -> dict[str, dict[str, str]]:
        return {}

    def _draw_charts(self, lang: str) -> dict[str, str]:
        draw = getattr(self.figures, "charts", None)
        if draw is None:
            return {}
        if "lang" in inspect.signature(draw).parameters:
            return page_code(self.page, "figures.charts()", lambda: dict(draw(self.trace, self.facts, lang)))
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
        if c.numbered_title:
            out[f"CITE.{c.id}.title"] = c.title
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


@dataclass(frozen=True)
class Attempt:
    """The pages whose fixtures gave a run, and the one-line error of each page that failed (by slug)."""

    runs: list[PageRun]
    failed: dict[str, str]


@dataclass
class _Answer:
    ok: bool
    data: dict[str, Any]


class Pipeline:
    """Runs a project's pages; ``progress`` hears one line per page whose fixtures ran, as each finishes."""

    def __init__(
        self,
        project: Project,
        *,
        progress: Progress | None = None,
        warn: Progress | None = None,
        jobs: int | None = None,
        store: Store | None = None,
    ) -> None:
        self.project = project
        self.progress = progress or (lambda line: None)
        self.warn = warn if warn is not None else (lambda line: print(line, file=sys.stderr))
        self.jobs = jobs or max(1, os.cpu_count() or 1)
        self.store = store if store is not None else Store(project.cache_dir, self.warn, project.display)
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
    def keys(self, pages: Sequence[Page]) -> dict[str, str]:
        """Each page's fixture-cache key (the hash of every source its fixtures import, read and hashed now)."""
        return cache.page_keys(self.project, pages, self.store)

    def run(
        self, pages: Sequence[Page] | None = None, *, use_cache: bool = True, keys: Mapping[str, str] | None = None
    ) -> list[PageRun]:
        """Every page's run, in navigation order: from the cache where it is current, the rest run fresh; the
        first page that fails raises its one-line error."""
        return self.attempt(pages, use_cache=use_cache, keys=keys, keep_going=False).runs

    def attempt(
        self,
        pages: Sequence[Page] | None = None,
        *,
        use_cache: bool = True,
        keys: Mapping[str, str] | None = None,
        keep_going: bool = True,
    ) -> Attempt:
        """Like :meth:`run`; with ``keep_going`` a page whose fixtures fail is left out of the runs and its one-line
        error kept in the answer's ``failed`` (``mkdocs serve`` shows it), and the other pages go on.

        ``keys`` are the pages' cache keys when the caller computed them already.
        """
        project = self.project
        refresh_pages(project.pages_dir)  # an edited page module is read again (mkdocs serve rebuilds in one process)
        pages = list(project.pages() if pages is None else pages)
        shared = site_facts(project.pages())
        if use_cache and keys is None:
            keys = self.keys(pages)
        keys = keys or {}
        failed: dict[str, str] = {}
        runs: dict[str, PageRun] = {}
        missing: list[Page] = []
        for p in pages:
            entry = cache.load(self.store, p.slug, keys[p.slug]) if use_cache else None
            if entry is not None:
                try:
                    runs[p.slug] = self._page_run(p, entry, shared, cached=True)
                    continue
                except (TraceParseError, FixtureRunError) as exc:
                    self.store.damaged(
                        cache.KIND,
                        cache.entry_name(p.slug, keys[p.slug]),
                        shown(str(exc), 160),
                        "running the fixtures again",
                    )
            missing.append(p)
        if missing:
            started = time.perf_counter()
            for p in pages:  # the long-run view: which pages need no run at all
                if p.slug in runs:
                    self.progress(f"fixtures: {p.slug} cached (ran in {runs[p.slug].seconds:.2f} s when computed)")
            expected = cache.last_seconds(self.store, (p.slug for p in missing))  # the longest start first
            answers, failures = self._fresh_answers(missing, keep_going, expected)
            failed.update(failures)
            for p, answer in answers:
                fresh = cache.Entry.of(answer.data)
                try:
                    run = self._page_run(p, fresh, shared, cached=False)
                except SiteBuilderError as exc:
                    if not keep_going:
                        raise
                    failed[p.slug] = str(exc)
                    continue
                runs[p.slug] = run
                if use_cache:
                    cache.store_entry(self.store, p.slug, keys[p.slug], fresh)
            ran = sum(1 for p in missing if p.slug in runs)
            self.progress(
                f"fixtures: {ran} of {len(pages)} pages ran, {len(pages) - len(missing)} cached"
                + (f", {len(missing) - ran} failed" if len(missing) != ran else "")
                + f", {time.perf_counter() - started:.2f} s on {min(self.jobs, len(missing))} "
                f"process{'' if min(self.jobs, len(missing)) == 1 else 'es'}"
            )
        return Attempt([runs[p.slug] for p in pages if p.slug in runs], failed)

    def _fresh_answers(
        self, pages: list[Page], keep_going: bool, expected: Mapping[str, float] | None = None
    ) -> tuple[list[tuple[Page, _Answer]], dict[str, str]]:
        """Fresh answers of ``pages``, and the one-line error of each that failed: without ``keep_going`` the
        first failure is raised; with it, the pages are run again one by one to find which fail."""
        if not keep_going:
            return self._run_fresh(pages, expected), {}
        try:
            return self._run_fresh(pages, expected), {}
        except FixtureRunError:
            out: list[tuple[Page, _Answer]] = []
            failures: dict[str, str] = {}
            for page in pages:  # find which pages fail, and keep the others
                try:
                    out += self._run_fresh([page])
                except FixtureRunError as exc:
                    failures[page.slug] = str(exc)
            return out, failures

    def run_page(self, slug: str, *, use_cache: bool = True) -> PageRun:
        return self.run([self.project.page(slug)], use_cache=use_cache)[0]

    def _page_run(self, page: Page, entry: cache.Entry, shared: Mapping[str, Any], *, cached: bool) -> PageRun:
        """The typed trace read back from its text, the report checked against its declared keys."""
        project = self.project
        trace_text, report = entry.trace, entry.report
        trace_module = page_code(page, "importing trace.py", lambda: project.module(page, "trace"))
        layout = layout_of(trace_module.Trace)
        trace = layout.parse(trace_text, f"{project.display(page.folder)} (fresh trace)")
        if report is not None:
            report_module = page_code(page, "importing report.py", lambda: project.module(page, "report"))
            report_module.REPORT.parse(report, f"{project.display(page.folder)} (fresh report)")
        figures = None
        if project.has_module(page, "figures"):
            figures = page_code(page, "importing figures.py", lambda: project.module(page, "figures"))
        return PageRun(
            page, trace_text, report, trace, dict(entry.derived), figures, shared, cached, entry.seconds, entry.digest
        )

    def _run_fresh(self, pages: list[Page], expected: Mapping[str, float] | None = None) -> list[tuple[Page, _Answer]]:
        """Run ``pages`` in up to ``jobs`` fresh interpreters; the answers in the order of ``pages``.

        The interpreters take the pages one at a time from one queue, the longest first by ``expected`` (the
        seconds a page took when it last ran), so the cores finish together instead of one waiting for another.
        The first failure stops every interpreter taking further pages.
        """
        expected = expected or {}
        queue = sorted(pages, key=lambda p: -expected.get(p.slug, 0.0))  # stable: navigation order for ties
        queue.reverse()  # popped from the end
        answers: dict[str, _Answer] = {}
        failures: list[str] = []
        lock = threading.Lock()
        stop = threading.Event()

        def take() -> Page | None:
            with lock:
                if stop.is_set() or not queue:
                    return None
                return queue.pop()

        def work() -> None:
            try:
                for slug, answer in self._interpreter(take):
                    with lock:
                        answers[slug] = answer
                        if answer.ok:
                            self.progress(f"fixtures: {slug} ran in {answer.data['seconds']:.2f} s")
                        else:
                            stop.set()
                            self.progress(f"fixtures: {slug} failed")
            except FixtureRunError as exc:
                with lock:
                    stop.set()
                    failures.append(str(exc))

        threads = [threading.Thread(target=work, daemon=True) for _ in range(min(self.jobs, len(pages)) - 1)]
        try:
            for t in threads:
                t.start()
            work()
            for t in threads:
                t.join()
        except BaseException:
            self._stop_all()  # interrupted (Ctrl-C, SIGTERM): no fixture process outlives the build
            raise
        for p in pages:  # the first page (in navigation order) that failed is the one reported
            answer = answers.get(p.slug)
            if answer is not None and not answer.ok:
                d = answer.data
                where = f"{d['file']}:{d['line']}: " if d.get("file") else f"{self.project.display(p.folder)}: "
                raise FixtureRunError(f"{where}{d['message']} (page {p.slug})")
        if failures:
            raise FixtureRunError(failures[0])
        out: list[tuple[Page, _Answer]] = []
        for p in pages:
            answer = answers.get(p.slug)
            if answer is None:
                raise FixtureRunError(f"pages/{p.slug}: the fixtures gave no answer")
            out.append((p, answer))
        return out

    def _interpreter(self, take: Callable[[], Page | None]) -> list[tuple[str, _Answer]]:
        """One fresh interpreter running the pages ``take`` gives, one at a time, each answer read as it comes."""
        first = take()
        if first is None:
            return []
        command = [sys.executable, "-m", "site_builder.pipeline.runner", str(self.project.pages_dir), "-"]
        env = {**os.environ, **FIXTURE_ENVIRONMENT}
        try:
            process = subprocess.Popen(
                command,
                cwd=self.project.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as exc:
            raise FixtureRunError(
                f"cannot start the fixture interpreter {sys.executable}: {exc.strerror or exc}"
            ) from None
        with self._lock:
            self._processes.append(process)
        errors: list[str] = []
        reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)  # type: ignore[union-attr]  # stderr=PIPE
        reader.start()
        out: list[tuple[str, _Answer]] = []
        assert process.stdin is not None and process.stdout is not None
        page: Page | None = first
        pending: str | None = None
        try:
            while page is not None:
                pending = page.slug
                try:
                    process.stdin.write(page.slug + "\n")
                    process.stdin.flush()
                except OSError:
                    break  # the interpreter is gone: said below
                data = None
                for line in process.stdout:
                    try:
                        data = json.loads(line)
                        break
                    except ValueError:
                        continue
                if data is None:
                    break
                pending = None
                out.append((data["slug"], _Answer(bool(data.get("ok")), data)))
                if not data.get("ok"):
                    break
                page = take()
        except BaseException:
            self._stop_all()  # interrupted (Ctrl-C, SIGTERM) while waiting for an answer: kill, never wait
            raise
        try:
            process.stdin.close()
        except OSError:
            pass
        process.stdout.close()
        code = process.wait()
        reader.join()
        if pending is not None:
            if code < 0:
                try:
                    how = f"was killed by signal {signal.Signals(-code).name}"
                except ValueError:
                    how = f"was killed by signal {-code}"
            else:
                how = f"exited with status {code}"
            last = [line for line in "".join(errors).strip().splitlines() if line.strip()][-1:] or ["no output"]
            raise FixtureRunError(
                f"pages/{pending}: the fixture process {how} while running page {pending}: {shown(last[0], 300)}"
            )
        return out

    # ------------------------------------------------------------------ goldens
    def goldens(self, runs: Sequence[PageRun]) -> list[GoldenIssue]:
        """Every golden file that does not hold exactly what its page's fixtures print now."""
        return [
            issue for run in runs for issue in golden_issues(self.project, run.page, run.trace_text, run.report_text)
        ]


def version_of(project: Project, page: Page) -> str:
    """The version tag of a page's trace format."""
    return layout_of(project.module(page, "trace").Trace).version


def write_golden(project: Project, run: PageRun, kind: str) -> Path:
    """Freeze a page's fresh trace or report as its golden file."""
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
