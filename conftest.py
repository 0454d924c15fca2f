"""Shared fixtures: the site is built once per test session and reused by every test file.

``built_site`` is the folder of a real ``mkdocs build --strict`` of this
repository (the same command ``make site`` runs, into a temporary folder).
Tests read it; none may write to it (``site_copy`` is a copy a test may change). ``server`` serves it on 127.0.0.1 and
``browser`` is Debian's Chromium driven by Playwright, for the browser tests. ``fixture_results`` is a copied project
whose every page's fixtures ran once, fresh, in a build from nothing; ``runs`` is every page's run read from those results, and ``prepared``
the checker's set-up made from them, for the test file that asks for it.
"""

from __future__ import annotations

import os
import sys

# Tests that run fixtures in this process compare them with goldens written by the fixture interpreters,
# so this process computes as those do: the same BLAS threads and the same NumPy and OpenBLAS code paths.
# The variables only work if they are set before NumPy is first imported.
from site_builder.pipeline import FIXTURE_ENVIRONMENT  # noqa: E402 (imports nothing numerical)

if "numpy" in sys.modules:
    raise RuntimeError("NumPy was imported before conftest.py could pin its code paths; run the tests with pytest")
os.environ.update(FIXTURE_ENVIRONMENT)

import functools
import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from axe_audit import AuditInBackground, SiteAudit, audit_site
from helpers import PROJECT, ROOT, SiteBuild, TwoThreadDigests, copy_project, docs_snapshot, mkdocs_env


@pytest.fixture(scope="session")
def site_build(fixture_results: Path, tmp_path_factory: pytest.TempPathFactory) -> SiteBuild:
    """``make site``'s build of this repository. Its fixtures ran once this session already, in the build from
    nothing of ``fixture_results``, whose results join this repository's cache: the session runs them once."""
    _join_repository_cache(fixture_results / ".cache")
    out = tmp_path_factory.mktemp("built") / "site"
    before = docs_snapshot(ROOT / "docs")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=ROOT,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
    )
    log = done.stdout + done.stderr
    if done.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {done.returncode}):\n{log}", pytrace=False)
    return SiteBuild(out, log, before, docs_snapshot(ROOT / "docs"))


@pytest.fixture(scope="session")
def built_site(site_build: SiteBuild) -> Path:
    """The folder of a strict build of this repository's site."""
    return site_build.site


@pytest.fixture
def site_copy(built_site: Path, tmp_path: Path) -> Path:
    """A copy of the built site that a test may change (tampering, removing files)."""
    target = tmp_path / "site"
    shutil.copytree(built_site, target)
    return target


@pytest.fixture(scope="session")
def fixture_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project built once from nothing (``mkdocs build --strict``, every page's fixtures run fresh,
    in processes of their own): its ``.cache`` holds their results, made for exactly this repository's sources,
    its ``site/`` the site a build from nothing makes and ``build.log`` what that build said. The tests that build
    after a change start from those results (``copy_project(root, results=...)``), and ``runs`` reads them."""
    root = copy_project(tmp_path_factory.mktemp("results") / "p")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "site"],
        cwd=root,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.fail(f"the copied project did not build:\n{done.stderr}", pytrace=False)
    (root / "build.log").write_text(done.stderr, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Every page's run through the pipeline, as the build and the checker see them, read through this repository's
    pipeline. When the session builds sites, every page's fixtures ran fresh this session, in the build from nothing
    of ``fixture_results``. Otherwise (``make test-fast``) no site is built: the pipeline reads the results in this
    repository's cache that are current (an entry is named by the sources, interpreter and NumPy that made it, as
    for a build) and runs the other pages' fixtures in processes of their own."""
    import dataclasses

    from site_builder.pipeline import Pipeline

    cache = tmp_path_factory.mktemp("runs") / "cache"
    results = ROOT / ".cache"
    if any(_uses(item, "fixture_results") for item in request.session.items):
        results = request.getfixturevalue("fixture_results") / ".cache"
    for kind in ("fixtures", "imports"):
        if (results / kind).is_dir():
            shutil.copytree(results / kind, cache / kind)
    read = Pipeline(dataclasses.replace(PROJECT, cache_dir=cache)).run()
    _join_repository_cache(cache)
    return {run.page.slug: run for run in read}


def _join_repository_cache(cache: Path) -> None:
    """The session's fixture results join this repository's cache, so a command run here (``site-builder trace``,
    ``mkdocs build``) reads them instead of running the fixtures again. Entries are named by what made them, so
    an entry there is one that command would write itself."""
    for kind in ("fixtures", "imports"):
        shutil.copytree(cache / kind, ROOT / ".cache" / kind, dirs_exist_ok=True)


@pytest.fixture(scope="session")
def fresh_pages(runs):
    """Every page's fresh run (the session's) as the checker sees it; its diagrams are drawn once, when first asked."""
    from site_builder.check.fresh import fresh_from

    pages = PROJECT.pages()
    return fresh_from(PROJECT, pages, [runs[p.slug] for p in pages])


@pytest.fixture(scope="module")
def prepared(fresh_pages):
    """What ``site-builder check`` compares a site against: every page's fresh run (the session's) and sources."""
    from site_builder import check

    return check.setup(PROJECT, fresh=fresh_pages)


@pytest.fixture(scope="session")
def clean_verdicts(built_site: Path, fresh_pages, tmp_path_factory: pytest.TempPathFactory):
    """A maker of the verdicts of one check of the untouched ``built_site``, every document found clean: a test that
    checks a copy with something changed passes them, so that, as in ``site-builder check``, the copy's unchanged
    documents are not read again and the changed ones are (the verdicts' keys are each document's bytes and inputs)."""
    from site_builder import check
    from site_builder.cache import Store

    folder = tmp_path_factory.mktemp("verdicts")

    def no_warning(message: str) -> None:
        raise AssertionError(f"the session's verdicts: {message}")

    def verdicts() -> check.Verdicts:
        return check.Verdicts(Store(folder, no_warning))

    first = verdicts()
    result = check.check_site(built_site, check.setup(PROJECT, fresh=fresh_pages), first)
    assert result.ok and first.stored > 0, result.render()
    return verdicts


SLOW_FIXTURES = {
    "fixture_results",  # a build of the whole site from nothing
    "site_build",
    "built_site",
    "site_copy",
    "project",
    "browser",
    "server",
    "shared_cache",
    "own_cache",
    "two_thread_digests",
    "site_audit",
    "clean_verdicts",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that builds a site or drives the browser is slow (`make test-fast` leaves it out). The tests that
    read the accessibility audit run last: the audit runs in the background meanwhile (``_background_work``)."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items[:] = [i for i in items if not _uses(i, "site_audit")] + [i for i in items if _uses(i, "site_audit")]


_DIGESTS: list[TwoThreadDigests] = []
_AUDIT: list[AuditInBackground] = []


def _uses(item: pytest.Item, fixture: str) -> bool:
    return fixture in getattr(item, "fixturenames", ())


def pytest_collection_finish(session: pytest.Session) -> None:
    """The pages whose tests compare their fixtures' bits with one and two BLAS threads are noted now; their fresh
    two-thread interpreters run in the background (``two_thread_digests``), after the accessibility audit if the session
    runs one, so that they and the audit run while the tests before them do."""
    if session.config.option.collectonly:
        return
    slugs = [item.callspec.params["slug"] for item in session.items if _uses(item, "two_thread_digests")]
    _DIGESTS.append(TwoThreadDigests(slugs))


@pytest.fixture(scope="session", autouse=True)
def _background_work(request: pytest.FixtureRequest) -> Iterator[None]:
    """Once the first test starts: when the session has tests that read the accessibility audit, the site is
    built and the audit starts on a thread of its own (then the two-thread digests); otherwise the digests start."""
    digests = _DIGESTS[0] if _DIGESTS else None
    if any(_uses(item, "site_audit") for item in request.session.items):
        site, url = request.getfixturevalue("built_site"), request.getfixturevalue("server")
        _AUDIT.append(AuditInBackground(site, url, CHROMIUM, CHROMIUM_ARGS, then=digests.start if digests else None))
    elif digests is not None:
        digests.start()
    yield


def pytest_sessionfinish(session: pytest.Session) -> None:
    for digests in _DIGESTS:
        digests.stop()


@pytest.fixture(scope="session")
def two_thread_digests() -> TwoThreadDigests:
    """The digest of a page's fixtures at full precision from a fresh interpreter with two BLAS threads (see
    ``helpers.TwoThreadDigests``), to hold against the digest of the session's run, whose interpreter had one."""
    if not _DIGESTS:
        _DIGESTS.append(TwoThreadDigests([]))
    return _DIGESTS[0]


@pytest.fixture(scope="session")
def site_audit(built_site: Path, server: str) -> SiteAudit:
    """The accessibility audit of ``built_site`` (see ``tests/axe_audit.py``): the one the session started in the
    background, or, when none was started, one run now."""
    if _AUDIT:
        return _AUDIT[0].result()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            return audit_site(b, server, built_site)
        finally:
            b.close()


@pytest.fixture(autouse=True)
def _keep_this_projects_page_modules():
    """A test that loads a project in another folder makes ``pages`` that folder's package (one at a time, see
    ``site_builder.project``); afterwards this repository's page modules are put back, so the classes of the
    session's runs stay the classes every later test imports."""
    from site_builder.project import PACKAGE

    def page_modules() -> dict:
        return {n: m for n, m in sys.modules.items() if n == PACKAGE or n.startswith(PACKAGE + ".")}

    before = page_modules()
    yield
    if page_modules() != before:
        for name in page_modules():
            del sys.modules[name]
        sys.modules.update(before)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture(scope="session")
def server(built_site):
    """The base URL of ``built_site`` served over HTTP on 127.0.0.1."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium; each test opens its own context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
