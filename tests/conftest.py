"""Shared fixtures: the site is built once per test session and reused by every test file.

``built_site`` is the folder of a real ``mkdocs build --strict`` of this
repository (the same command ``make site`` runs, into a temporary folder).
Tests read it; none may write to it. ``server`` serves it on 127.0.0.1 and
``browser`` is Debian's Chromium driven by Playwright, for the browser tests. ``prepared`` is the checker's set-up
(one fresh run of every page's fixtures) for the test file that asks for it.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def mkdocs_env(**overrides: str) -> dict[str, str]:
    """The environment for a ``mkdocs`` subprocess (without Material's end-of-life banner)."""
    env = dict(os.environ)
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.update(overrides)
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


@pytest.fixture(scope="session")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> SiteBuild:
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


@pytest.fixture(scope="module")
def prepared():
    """What ``site-builder check`` compares a site against: fresh facts and sources of every page."""
    from site_builder import check

    return check.setup()


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
