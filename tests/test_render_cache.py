"""The rendered-page cache, the number-scan verdicts, and what `mkdocs serve` shows while a page is broken.

A page is rendered again exactly when one of its inputs changed; a build from
the cache equals a build from nothing; a stale golden file or a typed number
still fails a warm build; a damaged entry is never used.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import SLUGS, copy_project, mkdocs_env
from site_builder.cache import Store, checksummed
from site_builder.i18n import mark_translated
from site_builder.pipeline import cache as fixture_cache
from site_builder.project import Project
from site_builder.render import cache as page_cache
from site_builder.render.cache import RenderedPage

# A test that builds a copied project's site, or serves it, is slow (`make test-fast` leaves it out).
builds_a_site = pytest.mark.slow


def build(root: Path, out: str = "site") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", out],
        cwd=root,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
    )


def summary(done: subprocess.CompletedProcess[str]) -> tuple[int, int]:
    """(unchanged, rendered) from the build's summary line."""
    return summary_of(done.stderr)


def summary_of(log: str) -> tuple[int, int]:
    found = re.search(r"\((\d+) unchanged, (\d+) rendered\)", log)
    assert found, log
    return int(found.group(1)), int(found.group(2))


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@builds_a_site
def test_warm_builds_read_unchanged_pages_and_equal_a_build_from_nothing(tmp_path, fixture_results):
    # The session's build from nothing (fixture_results): one line per page as its fixtures finish, then a summary.
    cold = (fixture_results / "build.log").read_text(encoding="utf-8")
    assert summary_of(cold) == (0, len(SLUGS))
    for slug in SLUGS:
        assert re.search(rf"fixtures: {slug} ran in \d+\.\d\d s", cold), cold
    assert re.search(rf"fixtures: {len(SLUGS)} of {len(SLUGS)} pages ran, 0 cached, \d+\.\d\d s on \d+ process", cold)
    root = copy_project(tmp_path / "p", results=fixture_results)  # the fixtures' results, nothing rendered yet
    first = build(root)
    assert first.returncode == 0, first.stderr
    assert summary(first) == (0, len(SLUGS))
    assert "fixtures: " not in first.stderr, "every page's fixture results were there to start from"
    assert tree(root / "site") == tree(fixture_results / "site"), "a build from the caches equals one from nothing"
    warm = build(root)
    assert warm.returncode == 0, warm.stderr
    assert summary(warm) == (len(SLUGS), 0)
    edit(root / "pages" / "ch24" / "page.md.j2", "\n", "\nA sentence added here.\n\n")
    mark_translated(root / "pages" / "ch24" / "page.ru.md.j2")  # as its translator does after following the change
    one = build(root)
    assert one.returncode == 0, one.stderr
    assert summary(one) == (len(SLUGS) - 1, 1), "only the page whose template changed is rendered again"
    # everything rendered is made again, and every page read again; the fixtures stay
    for kind in ("pages", "templates", "diagrams", "scan", "shown", "search"):
        shutil.rmtree(root / ".cache" / kind)
    whole = build(root, "whole")
    assert whole.returncode == 0, whole.stderr
    assert summary(whole) == (0, len(SLUGS))
    assert tree(root / "site") == tree(root / "whole"), "a page rendered again alone equals every page rendered anew"


@builds_a_site
def test_a_stale_golden_still_fails_a_warm_build(tmp_path, fixture_results):
    root = copy_project(tmp_path / "p", results=fixture_results, warm=True)  # as a clean build leaves it
    golden = root / "pages" / "path_expansion" / "golden" / "trace.txt"
    text = golden.read_text(encoding="utf-8")
    found = re.search(r"[0-9](?=\n)", text)  # the last digit of a value: still well formed, now wrong
    assert found
    digit = str((int(found.group()) + 1) % 10)
    golden.write_text(text[: found.start()] + digit + text[found.end() :], encoding="utf-8")
    done = build(root)
    assert done.returncode != 0 and "golden trace is stale" in done.stderr, done.stderr
    assert "site-builder trace --page path_expansion --write-golden" in done.stderr


@builds_a_site
def test_a_typed_number_fails_every_strict_build_not_only_the_first(tmp_path, fixture_results):
    root = copy_project(tmp_path / "p", results=fixture_results, warm=True)  # as a clean build leaves it
    (root / "docs" / "index.md").write_text("# A course\n\nThe pages of a course, all 12 of them.\n", encoding="utf-8")
    for _ in range(2):
        done = build(root)
        assert done.returncode != 0 and "'12' in \"The pages" in done.stderr and "has no provenance" in done.stderr, (
            done.stderr
        )
        assert summary(done) == (len(SLUGS), 0), "a warm build: every generated page came from the cache"


# -- keys: every input of a page's rendering is part of its key ----------------------------------------------


@pytest.fixture
def keyed(tmp_path):
    root = copy_project(tmp_path / "p")
    project = Project.at(root)

    def keys() -> dict[str, str]:
        pages = Project.at(root).pages()
        fixture_keys = fixture_cache.page_keys(project, pages, None)
        render = page_cache.Keys(project.templates_dir, pages)
        return {p.slug: render.key(p, fixture_keys[p.slug]) for p in pages}

    return root, keys


@pytest.mark.parametrize(
    ("file", "old", "new", "changed"),
    [
        pytest.param("pages/path_expansion/page.md.j2", "\n", "\nMore.\n\n", {"path_expansion"}, id="page-template"),
        pytest.param("pages/path_expansion/page.toml", 'title = "', 'title = "The ', None, id="page-toml-title"),
        pytest.param(
            "pages/path_expansion/fixtures.py",
            "scale: float = 0.5",
            "scale: float = 0.25",
            {"path_expansion"},
            id="fixture-constant",
        ),
        pytest.param("pages/path_expansion/figures.py", "\n", "\n# a comment\n", {"path_expansion"}, id="figures"),
        pytest.param("templates/_trace_download.md.j2", "\n", "\n{# a comment #}\n", None, id="shared-template"),
    ],
)
def test_a_page_is_rendered_again_when_any_of_its_inputs_changes(keyed, file, old, new, changed):
    root, keys = keyed
    before = keys()
    edit(root / file, old, new)
    after = keys()
    differ = {slug for slug in before if before[slug] != after[slug]}
    # None: every page (a title is shown by links from other pages; a shared template any page may load)
    assert differ == (changed if changed is not None else set(before)), differ


def test_golden_files_are_not_an_input_of_the_rendered_page(keyed):
    root, keys = keyed
    before = keys()
    edit(root / "pages" / "path_expansion" / "golden" / "trace.txt", "\n", "\n\n")
    assert keys() == before, "goldens are compared on every build instead"


def test_the_package_and_the_installed_versions_are_inputs(keyed, monkeypatch, tmp_path):
    from site_builder.pipeline import sources

    root, keys = keyed
    before = keys()
    monkeypatch.setattr(sources, "_DISTRIBUTIONS", {**sources.distributions(), "latex2mathml": "0.0.0"})
    assert all(before[s] != v for s, v in keys().items())
    monkeypatch.undo()
    package = tmp_path / "site_builder"
    shutil.copytree(page_cache.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(page_cache, "PACKAGE_DIR", package)
    assert keys() == before
    edit(package / "render" / "math.py", "\n", "\n# a change of the renderer\n")
    assert all(before[s] != v for s, v in keys().items())


# -- entries ---------------------------------------------------------------------------------------------------


def _page() -> RenderedPage:
    return RenderedPage("# page\n", {"p/trace.txt": "T\n"}, 3, ("tanh",), "T\n", None, ("d",))


def test_an_entry_round_trips_and_a_damaged_one_is_refused_with_one_warning(tmp_path):
    heard: list[str] = []
    store = Store(tmp_path, heard.append)
    page_cache.store_page(store, "k", _page())
    assert page_cache.load(store, "k") == _page() and heard == []
    path = tmp_path / "pages" / "k"
    path.write_bytes(checksummed(b"[1, 2]"))
    assert page_cache.load(store, "k") is None
    assert heard == [
        f"{path}: damaged cache entry (it does not hold a rendered page (AttributeError)); rendering the page again"
    ]
    assert not path.exists()


# -- mkdocs serve ----------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.read().decode("utf-8", "replace")
    except OSError:
        return None


def _until(predicate, seconds: float = 120.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return None


@builds_a_site
def test_serve_shows_the_one_line_error_of_a_broken_page_and_recovers(tmp_path, fixture_results):
    root = copy_project(tmp_path / "p", results=fixture_results, warm=True)
    template = root / "pages" / "path_expansion" / "page.md.j2"
    good = template.read_text(encoding="utf-8")
    template.write_text(good + "\n{{ no_such_helper() }}\n", encoding="utf-8")
    port = _free_port()
    log = open(tmp_path / "serve.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
        cwd=root,
        env=mkdocs_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/evidence/path-expansion/"
    try:
        shown = _until(lambda: _get(url))
        assert shown is not None, (tmp_path / "serve.log").read_text()
        assert "This page did not build" in shown
        assert "pages/path_expansion/page.md.j2:" in shown and "no_such_helper" in shown
        other = _get(f"http://127.0.0.1:{port}/chapter-24/")
        assert other is not None and "This page did not build" not in other, "the other pages are built as usual"
        template.write_text(good, encoding="utf-8")
        assert _until(lambda: (_get(url) or "This page did not build").count("This page did not build") == 0), (
            "a fixed page is served again"
        )
        edit(
            root / "pages" / "path_expansion" / "fixtures.py",
            "def run(",
            "def run(*_: object) -> None:\n    raise RuntimeError('broken on purpose')\n\n\ndef unused_run(",
        )
        failed = _until(lambda: "broken on purpose" in (_get(url) or "") and _get(url))
        assert failed and "This page did not build" in failed, "a failing fixture is shown the same way"
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    assert "ERROR" in (tmp_path / "serve.log").read_text()


_REBUILDS = r"""
import os, sys, pathlib
os.environ["NO_MKDOCS_2_WARNING"] = "1"
from mkdocs.config import load_config
from mkdocs.commands.build import build

def site(out):
    config = load_config("mkdocs.yml", site_dir=out)
    config.site_url = "http://127.0.0.1:8000/"
    return config

first = site(sys.argv[1])
first.plugins.on_startup(command="serve", dirty=False)  # the plugin instance lives on, as under mkdocs serve
build(first, serve_url="http://127.0.0.1:8000/")
build(site(sys.argv[2]), serve_url="http://127.0.0.1:8000/")
index = pathlib.Path("docs/index.md")
index.write_text(index.read_text(encoding="utf-8") + "\nA sentence added between two rebuilds.\n", encoding="utf-8")
build(site(sys.argv[3]), serve_url="http://127.0.0.1:8000/")
"""

_ONE_BUILD = r"""
import os, sys
os.environ["NO_MKDOCS_2_WARNING"] = "1"
from mkdocs.config import load_config
from mkdocs.commands.build import build

config = load_config("mkdocs.yml", site_dir=sys.argv[1])
config.site_url = "http://127.0.0.1:8000/"
config.plugins.on_startup(command="serve", dirty=False)
build(config, serve_url="http://127.0.0.1:8000/")
"""


@builds_a_site
def test_serve_rebuilds_that_reuse_conversions_equal_a_first_build(tmp_path, fixture_results):
    root = copy_project(tmp_path / "p", results=fixture_results, warm=True)

    def run(script, *outs):
        return subprocess.run(
            [sys.executable, "-c", script, *map(str, outs)], cwd=root, env=mkdocs_env(), capture_output=True, text=True
        )

    done = run(_REBUILDS, tmp_path / "first", tmp_path / "again", tmp_path / "edited")
    assert done.returncode == 0, done.stderr
    assert tree(tmp_path / "again") == tree(tmp_path / "first"), "an unchanged site rebuilds the same"
    fresh = run(_ONE_BUILD, tmp_path / "fresh")  # a new process: nothing reused
    assert fresh.returncode == 0, fresh.stderr
    assert tree(tmp_path / "edited") == tree(tmp_path / "fresh"), "an edit shows, and the reused pages are right"
    assert "A sentence added between two rebuilds." in (tmp_path / "edited" / "index.html").read_text(encoding="utf-8")
