"""What the tests share: the project under test, its pages, and a few ways to look at them.

Importing this binds the ``pages`` package to the repository's page folders,
so a test can ``from pages.ch24.fixtures import run``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from site_builder.project import Page, Project, refresh_pages
from site_builder.trace import TraceLayout, layout_of

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Project.at(ROOT)
refresh_pages(PROJECT.pages_dir)
PAGES: list[Page] = PROJECT.pages()
SLUGS: list[str] = [p.slug for p in PAGES]


def copy_project(
    root: Path, slugs: tuple[str, ...] | None = None, results: Path | None = None, warm: bool = False
) -> Path:
    """A copy of the project at ``root`` (every page folder, or those of ``slugs``, without their tests); with
    ``results``, also the fixture results of that copied project (its ``.cache/fixtures`` and import lists), so a
    build there runs no fixture that did not change; with ``warm`` too, every other kind of its cache (rendered
    pages, diagrams, compiled templates, the verdicts on built pages), so a build there renders and reads again
    only what changed: those entries are named by contents, which a copy shares (all but the compiled code of the
    copy's own templates, which Jinja names by the file's path and a build that renders a page compiles anew)."""
    root.mkdir(parents=True, exist_ok=True)
    if results is not None:
        kinds = sorted(p.name for p in (results / ".cache").iterdir()) if warm else ["fixtures", "imports"]
        for kind in kinds:
            shutil.copytree(results / ".cache" / kind, root / ".cache" / kind)
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    for folder in ("docs", "overrides", "templates"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for slug in SLUGS if slugs is None else slugs:
        shutil.copytree(
            ROOT / "pages" / slug, root / "pages" / slug, ignore=shutil.ignore_patterns("__pycache__", "test_*.py")
        )
    return root


def page(slug: str) -> Page:
    return PROJECT.page(slug)


def layout(slug: str) -> TraceLayout[Any]:
    """The trace layout a page's trace.py declares."""
    return layout_of(PROJECT.module(page(slug), "trace").Trace)


def golden(slug: str, kind: str = "trace") -> str:
    return page(slug).golden(kind).read_text(encoding="utf-8")


def fresh_trace(slug: str, **changes: Any) -> str:
    """The trace text of a fresh in-process run of a page's fixtures (``changes`` go to its Constants)."""
    fixtures = PROJECT.module(page(slug), "fixtures")
    result = fixtures.run(fixtures.Constants(**changes)) if changes else fixtures.run()
    return layout_of(type(result.trace)).render(result.trace)


def mkdocs_env(**overrides: str) -> dict[str, str]:
    """The environment for a ``mkdocs`` subprocess (without Material's end-of-life banner)."""
    env = dict(os.environ)
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.update(overrides)
    return env


FAULTS = Path(__file__).resolve().parent / "faults"


def faults(*rules: dict[str, str], now: int | None = None) -> dict[str, str]:
    """Environment for a subprocess that meets ``rules`` (see ``faults/sitecustomize.py``), its clock at ``now``."""
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH", "")) if p),
        "SITE_BUILDER_FAULTS": json.dumps(list(rules)),
    }
    if now is not None:
        env["SITE_BUILDER_FAKE_NOW"] = str(now)
    return env


def docs_snapshot(docs: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``docs`` with its size and modification time."""
    return {
        p.relative_to(docs).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(docs.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class SiteBuild:
    site: Path
    log: str  # everything mkdocs printed
    docs_before: dict[str, tuple[int, int]]
    docs_after: dict[str, tuple[int, int]]


def nan_stops(slug: str, **changes: Any) -> str:
    """The one-line message that stops a page whose Constants get ``changes`` (a NaN or an infinity).

    Either a fixture refuses the value itself, or the trace refuses to write it, naming the field's key.
    """
    import pytest

    from site_builder.errors import SiteBuilderError

    with pytest.raises(SiteBuilderError) as info:
        fresh_trace(slug, **changes)
    message = str(info.value)
    assert "\n" not in message
    assert any(word in message for word in ("NaN", "nan", "infinity", "inf", "not finite")), message
    return message


def nan_spirals_stop(slug: str, field: str) -> str:
    """The message that stops a training page whose spirals get a NaN ``field`` (see :func:`nan_stops`)."""
    import dataclasses
    import math

    from site_builder.tasks import SPIRALS

    return nan_stops(slug, task=dataclasses.replace(SPIRALS, **{field: math.nan}))


def assert_curve_ends_are_seed_means(trace: Any, columns: tuple[str, ...]) -> None:
    """A training trace's last CURVE line holds, for every stack, the mean of the seeds' FINAL losses."""
    import numpy as np
    import pytest

    for name in columns:
        mean = np.mean([getattr(f, name) for f in trace.finals])
        assert getattr(trace.curves[-1], name) == pytest.approx(mean, rel=1e-5), name


# A fresh interpreter runs a page's fixtures and prints the runner's digest of every value they produced at full
# precision (``site_builder.pipeline.runner.full_precision_digest``).
_DIGEST_PROGRAM = """
import sys
sys.path.insert(0, "tests")
from helpers import PROJECT, page
from site_builder.pipeline.runner import full_precision_digest

run = PROJECT.module(page(sys.argv[1]), "fixtures").run()
print(full_precision_digest(run.trace, dict(run.derived)))
"""


def two_thread_digest(slug: str) -> str:
    """The digest of a page's fixtures from a fresh interpreter with two BLAS and OpenMP threads (the build's
    fixture interpreters have one, and their runs carry the same digest: ``PageRun.digest``)."""
    return _digest_of(_digest_process(slug, 2))


def _digest_process(slug: str, threads: int) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.update({name: str(threads) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    return subprocess.Popen(
        [sys.executable, "-c", _DIGEST_PROGRAM, slug],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _digest_of(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate()
    assert process.returncode == 0, err
    return out.strip()


class TwoThreadDigests:
    """For each page in ``slugs``, :func:`two_thread_digest`, worked out on a thread of its own once :meth:`start`
    is called, one fresh interpreter at a time, while the tests before them run; :meth:`of` waits for a page's."""

    def __init__(self, slugs: list[str]):
        self._slugs = list(dict.fromkeys(slugs))
        self._ready = {slug: threading.Event() for slug in self._slugs}
        self._found: dict[str, str | BaseException] = {}
        self._stopped = False
        self._running: subprocess.Popen[str] | None = None
        self._thread = threading.Thread(target=self._work, name="two-thread-digests", daemon=True)
        self._start = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Start working out the digests, once (the first test that needs one starts them, if nothing did)."""
        with self._start:
            if not self._started:
                self._started = True
                self._thread.start()

    def _work(self) -> None:
        for slug in self._slugs:
            try:
                if self._stopped:
                    return
                self._running = _digest_process(slug, 2)
                self._found[slug] = _digest_of(self._running)
            except BaseException as exc:  # handed to the test that asks for this page
                self._found[slug] = exc
            finally:
                self._ready[slug].set()

    def of(self, slug: str) -> str:
        """The page's digest with two BLAS threads (computed now for a page not asked for at the start)."""
        if slug not in self._ready:
            return two_thread_digest(slug)
        self.start()
        self._ready[slug].wait()
        found = self._found[slug]
        if isinstance(found, BaseException):
            raise found
        return found

    def stop(self) -> None:
        self._stopped = True
        running = self._running
        if running is not None and running.poll() is None:
            running.kill()
            running.communicate()


def shown_text(el: Any) -> str:
    """An element's text as a reader sees it in one line: its words joined by single spaces."""
    return " ".join("".join(el.itertext()).split())


def resolves(built_site: Path, page_url: str, href: str) -> Path | None:
    """The built file a relative link on the page at ``page_url`` leads to, if there is one."""
    from urllib.parse import urljoin, urlparse

    target = urlparse(urljoin("http://site/" + page_url, href)).path.lstrip("/")
    for candidate in (built_site / target, built_site / target / "index.html"):
        if candidate.is_file():
            return candidate
    return None


def next_links(built_site: Path, slug: str) -> list[Path | None]:
    """Where the links of a chapter's closing "next" section lead."""
    from lxml import html as lxml_html

    p = PROJECT.page(slug)
    doc = lxml_html.document_fromstring((built_site / p.html_path).read_bytes())
    (heading,) = doc.xpath("//h2[@id='next']")
    hrefs = [a.get("href") for el in heading.xpath("following-sibling::*") for a in el.xpath(".//a")]
    return [resolves(built_site, p.url, h) for h in hrefs if h]
