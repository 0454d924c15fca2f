"""The verdict cache of ``site-builder check``: a page found clean before, with exactly the same inputs, is not
read again, and anything that could change its verdict has it checked again.

Each test checks a copy of the session's site against the repository, or a copy of the project, with a cache
folder of its own (it starts with the repository's fixture results, so no fixture runs unless a test changes
one; ``checked`` also starts with the verdicts of the session's one clean check of that site). The command runs
as a user runs it, in a process of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import PAGES, ROOT, faults, page
from site_builder.cache import Store, checksummed
from site_builder.check import Verdicts, check_site

CHAPTER = page("ch24").html_path


def project_copy(root: Path, cache: Path, slugs: tuple[str, ...] | None = None) -> Path:
    """mkdocs.yml, docs/, templates/ and the page folders (all, or those of ``slugs``) copied to ``root``, with the
    cache folder ``cache``, which starts with the repository's fixture results."""
    for kind in ("fixtures", "imports"):
        shutil.copytree(ROOT / ".cache" / kind, cache / kind)
    for folder in ("docs", "templates"):
        shutil.copytree(ROOT / folder, root / folder)
    for p in PAGES:
        if slugs is None or p.slug in slugs:
            shutil.copytree(
                p.folder, root / "pages" / p.slug, ignore=shutil.ignore_patterns("__pycache__", "test_*.py")
            )
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - chapter-trace\n" in config
    plugin = f"  - chapter-trace:\n      cache_dir: {cache}\n"
    (root / "mkdocs.yml").write_text(config.replace("  - chapter-trace\n", plugin), encoding="utf-8")
    return root


@pytest.fixture
def project(built_site: Path, tmp_path: Path) -> Path:
    """A copy of the project (after the session's build, so the fixture results it starts from are current)."""
    return project_copy(tmp_path / "project", tmp_path / "cache")


@pytest.fixture
def checked(project: Path, clean_verdicts) -> Path:
    """The project copy as a clean check of the session's site leaves it: its cache holds that check's verdicts
    (``clean_verdicts``, made in-process; a verdict is named by the document's path in the site and its inputs,
    not by where the site or the project is)."""
    kept = clean_verdicts().store.folder / "check"
    assert any(kept.iterdir())
    shutil.copytree(kept, project.parent / "cache" / "check")
    return project


def run(root: Path, site: Path, *options: str, env: dict[str, str] | None = None) -> tuple[int, list[str], list[str]]:
    """``site-builder check [OPTIONS] SITE`` in the project at ``root``: its exit status, output and error lines."""
    done = subprocess.run(
        [sys.executable, "-m", "site_builder.cli", "check", *options, str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    return done.returncode, done.stdout.splitlines(), done.stderr.splitlines()


def unchecked(root: Path, site: Path) -> list[str]:
    """What ``site-builder check SITE`` prints in the project at ``root`` when it holds no verdicts."""
    shutil.rmtree(root.parent / "cache" / "check", ignore_errors=True)
    code, out, err = run(root, site)
    assert err == []
    return out


def stored(cache: Path) -> dict[str, object]:
    """The verdicts kept, by entry name."""
    folder = cache / "check"
    return {p.name: json.loads(p.read_bytes().split(b"\n", 1)[1]) for p in folder.iterdir()} if folder.is_dir() else {}


def stamps(cache: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (cache / "check").iterdir()}


def test_a_second_check_of_an_unchanged_site_reuses_every_verdict_and_says_the_same(prepared, site_copy, tmp_path):
    heard: list[str] = []
    first = Verdicts(Store(tmp_path / "cache", heard.append))
    before = check_site(site_copy, prepared, first)
    documents = len(list(site_copy.rglob("*.html"))) + len(list(site_copy.rglob("*.svg")))
    assert before.ok and before.pages == documents, before.render()
    assert (first.stored, first.reused) == (documents, 0)

    again = Verdicts(Store(tmp_path / "cache", heard.append))
    after = check_site(site_copy, prepared, again)
    assert (again.stored, again.reused) == (0, documents)
    assert after.render() == before.render() == check_site(site_copy, prepared).render()
    assert (after.pages, after.values) == (before.pages, before.values) and after.values >= 1000
    assert heard == []


def test_the_command_checks_an_unchanged_site_once_and_prints_the_same_summary(project, site_copy):
    first = run(project, site_copy)
    assert first[0] == 0 and first[1][-1].endswith(", 0 problems") and first[2] == []
    written = stamps(project.parent / "cache")
    assert run(project, site_copy) == first
    assert stamps(project.parent / "cache") == written, "nothing new to keep"


def bump_a_value(html: str) -> str:
    """One digit inside the first six-decimal value changed."""
    m = re.search(r'data-format="six">[^<]*?(\d)', html)
    assert m is not None
    return html[: m.start(1)] + str((int(m[1]) + 1) % 10) + html[m.end(1) :]


@pytest.mark.parametrize(
    "tamper, found",
    [
        pytest.param(bump_a_value, "[data-trace=", id="a-digit-of-a-value"),
        pytest.param(
            lambda html: html.replace("</article>", "<p>About 42 of them.</p></article>"),
            "found '42'",
            id="a-typed-number",
        ),
    ],
)
def test_a_page_tampered_after_a_clean_check_is_still_caught(checked, site_copy, tamper, found):
    project = checked
    page_file = site_copy / CHAPTER
    page_file.write_text(tamper(page_file.read_text(encoding="utf-8")), encoding="utf-8")
    code, out, err = run(project, site_copy)
    assert code == 1 and err == []
    assert any(line.startswith(f"{CHAPTER}: ") and found in line for line in out), out
    assert out == unchecked(project, site_copy)
    assert run(project, site_copy) == (code, out, err), "a page with a problem is checked every time"


@pytest.mark.parametrize(
    "file, old, new, built, found",
    [
        pytest.param(
            "pages/ch24/page.toml",
            "square = { value = 2,",
            "square = { value = 3,",
            CHAPTER,
            '[data-trace=LIT.square] in math (section #figure): expected "3", found "2"',
            id="a-fact",
        ),
        pytest.param(
            "pages/ch24/exercises.py",
            '"""The smallest depth at which',
            '"""The least depth at which',
            CHAPTER,
            "[data-source=pages/ch24/exercises.py#exercise-depth]",
            id="a-source-region",
        ),
        pytest.param(
            "pages/path_expansion/figures.py",
            "height=180,",
            "height=190,",
            page("path_expansion").html_path,
            "svg#path-expansion-counts",
            id="a-chart",
        ),
    ],
)
def test_a_changed_fact_source_region_or_chart_has_the_page_checked_again(
    checked, site_copy, file, old, new, built, found
):
    project = checked
    path = project / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    code, out, err = run(project, site_copy)
    assert code == 1 and err == []
    assert any(line.startswith(f"{built}: ") and found in line for line in out), out
    assert out == unchecked(project, site_copy)


@pytest.mark.parametrize(
    "damage, said",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:300]), "damaged cache entry", id="truncated"),
        pytest.param(lambda p: p.write_bytes(b"\x00garbage\xff"), "damaged cache entry", id="garbage"),
        pytest.param(lambda p: (p.unlink(), p.mkdir()), "it is a folder, not a file", id="a-folder"),
        pytest.param(
            lambda p: p.write_bytes(checksummed(json.dumps({"values": "many"}).encode())),
            "it does not hold a verdict (KeyError)",
            id="whole-but-not-a-verdict",
        ),
    ],
)
def test_a_damaged_verdict_is_one_line_and_its_document_is_checked_again(checked, site_copy, damage, said):
    project = checked
    first = run(project, site_copy)
    assert first[0] == 0
    entry = sorted((project.parent / "cache" / "check").iterdir())[0]
    damage(entry)
    code, out, err = run(project, site_copy)
    assert (code, out) == first[:2]
    assert err == [f"{entry}: damaged cache entry ({said}); checking the document again"] or (
        len(err) == 1 and said in err[0] and str(entry) in err[0]
    ), err
    assert run(project, site_copy) == first, "the entry was written again, whole"


def test_fresh_neither_reads_nor_writes_the_verdicts(built_site, tmp_path, site_copy):
    root = project_copy(tmp_path / "project", tmp_path / "cache", slugs=("ch24", "path_expansion"))
    verdicts = tmp_path / "cache" / "check"
    fresh = run(root, site_copy, "--fresh")
    assert not verdicts.exists()
    cached = run(root, site_copy)
    assert cached == fresh and any(verdicts.iterdir())
    entry = sorted(verdicts.iterdir())[0]
    entry.write_bytes(b"\x00garbage\xff")
    assert run(root, site_copy, "--fresh") == fresh, "a damaged entry is not even read"
    assert entry.read_bytes() == b"\x00garbage\xff"


def test_only_the_verdicts_of_the_checked_documents_are_kept(checked, site_copy):
    project, cache = checked, checked.parent / "cache"
    written = stamps(cache)
    assert run(project, site_copy)[0] == 0
    assert stamps(cache) == written, "the command reuses the verdicts of the session's clean check, writing none"
    documents = stored(cache)
    assert len(documents) == len(list(site_copy.rglob("*.html")))
    (site_copy / "404.html").unlink()
    code, out, _ = run(project, site_copy)
    assert code == 0 and out[-1].startswith(f"check: {len(documents) - 1} pages, ")
    assert set(stored(cache)) < set(documents) and len(stored(cache)) == len(documents) - 1


def test_a_verdict_cache_that_cannot_be_written_is_one_line_and_the_check_succeeds(project, site_copy):
    cache = project.parent / "cache"
    code, out, err = run(project, site_copy, env=faults({"op": "write", "match": f"{cache}/*", "errno": "ENOSPC"}))
    assert code == 0 and out[-1].endswith(", 0 problems"), out + err
    assert len(err) == 1 and err[0].startswith(f"{cache / 'check'}/"), err
    assert err[0].endswith(
        ": cannot write the check cache: no space left on the device (the site is checked without it)"
    )
    assert stored(cache) == {}
