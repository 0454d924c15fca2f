"""Other builders: ProperDocs runs our plugin, and `site-builder render` writes pages any builder can take.

ProperDocs must build the very site MkDocs builds (only the generator line
differs); the export, built by MkDocs without our plugin or by ProperDocs,
must pass `site-builder check`, and MkDocs must make the very pages of our build from it. Each build runs in a temporary folder.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, mkdocs_env
from site_builder.check.site import resolve_links
from site_builder.i18n import TRANSLATED

GENERATOR = re.compile(rb'<meta name="generator" content="[^"]*">')


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def run(*command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), cwd=cwd, env=mkdocs_env(), capture_output=True, text=True)


def check(site: Path) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, "-m", "site_builder.cli", "check", str(site))


@pytest.mark.slow
def test_properdocs_builds_the_same_site_as_mkdocs(built_site, tmp_path):
    out = tmp_path / "site"
    done = run(sys.executable, "-m", "properdocs", "build", "--strict", "-d", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    ours, theirs = files(built_site), files(out)
    assert ours.keys() == theirs.keys()
    differing = [name for name in ours if ours[name] != theirs[name]]
    for name in differing:
        assert name.endswith(".html"), name
        assert GENERATOR.sub(b"", ours[name]) == GENERATOR.sub(b"", theirs[name]), name
    assert b"ProperDocs" in theirs["index.html"]
    assert check(out).returncode == 0


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "out"
    done = run(sys.executable, "-m", "site_builder.cli", "render", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def export_builds(export: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The export built by each builder without our plugin, once for the tests below."""
    built = {}
    for builder in ("mkdocs", "properdocs"):
        out = tmp_path_factory.mktemp(f"export-{builder}") / "site"
        done = run(sys.executable, "-m", builder, "build", "--strict", "-f", str(export / "mkdocs.yml"), "-d", str(out))
        assert done.returncode == 0, done.stdout + done.stderr
        built[builder] = out
    return built


@pytest.mark.slow
@pytest.mark.parametrize("builder", ["mkdocs", "properdocs"])
def test_the_export_builds_without_the_plugin_and_passes_the_checker(export, export_builds, builder):
    config = (export / "mkdocs.yml").read_text(encoding="utf-8")
    assert "chapter-trace" not in config and "chapter-24/index.md" in config
    assert (export / "docs" / "chapter-24" / "index.md").is_file()
    assert (export / "docs" / "chapter-24" / "residual-connections-v1.trace.txt").is_file()
    checked = run(sys.executable, "-m", "site_builder.cli", "check", str(export_builds[builder]), "--languages", "en")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1].endswith(", 0 problems")


@pytest.mark.slow
def test_the_export_built_without_the_plugin_gives_the_very_pages_our_build_gives(export_builds, built_site):
    """Our build converts each page with its drawings, formulas and code excerpts stashed
    (site_builder/render/stash.py); MkDocs converting the whole Markdown must give the same HTML, byte for byte."""
    english = {name: data for name, data in files(built_site).items() if name.endswith(".html")}
    ours = {name: without_languages(data) for name, data in english.items() if name.split("/")[0] not in TRANSLATED}
    built = files(export_builds["mkdocs"])
    theirs = {name: without_languages(data) for name, data in built.items() if name.endswith(".html")}
    assert ours.keys() == theirs.keys()
    assert [name for name in ours if ours[name] != theirs[name]] == []


# The export is the English site: its pages have no hreflang links and no language switcher, the one part of our
# build's English pages it leaves out.
ALTERNATES = re.compile(rb'\n *<link rel="alternate" href="[^"]*" hreflang="[a-z]+">')
SWITCHER = re.compile(
    rb'\n *<div class="md-header__option">\s*<div class="md-select">.*?</ul>\s*</div>\s*</div>\s*</div>', re.S
)


BLANK_LINES = re.compile(rb"\n[ \t]*(?=\n)")  # the lines the theme's loops over the languages leave empty


def without_languages(html: bytes) -> bytes:
    return BLANK_LINES.sub(b"", SWITCHER.sub(b"", ALTERNATES.sub(b"", html)))


@pytest.mark.slow
def test_a_stale_golden_stops_the_export_before_anything_is_written(tmp_path):
    for folder in ("docs", "overrides", "templates", "pages"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "test_*.py"))
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    if (ROOT / ".cache" / "fixtures").is_dir():  # the fixture results the session's build made: run nothing twice
        shutil.copytree(ROOT / ".cache" / "fixtures", tmp_path / ".cache" / "fixtures")
    golden = tmp_path / "pages" / "ch24" / "golden" / "trace.txt"
    golden.write_text(golden.read_text(encoding="utf-8").replace("3.250000", "3.000000", 1), encoding="utf-8")
    done = run(sys.executable, "-m", "site_builder.cli", "render", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "pages/ch24/golden/trace.txt:3:" in done.stderr and "stale" in done.stderr
    assert not (tmp_path / "out").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out-")]


def test_the_export_never_replaces_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    done = run(sys.executable, "-m", "site_builder.cli", "render", str(tmp_path))
    assert done.returncode == 2 and "not an export" in done.stderr
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    inside = run(sys.executable, "-m", "site_builder.cli", "render", str(ROOT / "docs"))
    assert inside.returncode == 2 and "project's files" in inside.stderr


def test_a_download_link_counts_whatever_its_relative_form():
    page = "evidence/claims/index.html"
    forms = {
        "claims-v1.trace.txt",
        "./claims-v1.trace.txt",
        "../claims/claims-v1.trace.txt",
        "/evidence/claims/claims-v1.trace.txt",
        "claims-v1.trace.txt?download=1#top",
    }
    for href in forms:
        assert resolve_links(page, {href}) == {"evidence/claims/claims-v1.trace.txt"}, href
    assert resolve_links(page, {"https://example.org/claims-v1.trace.txt", "#top"}) == set()
    assert resolve_links(page, {"../deep-stack/"}) == {"evidence/deep-stack/index.html"}


def test_mkdocs_yml_is_read_one_way_and_a_tag_the_export_cannot_keep_is_refused_by_name(tmp_path):
    from site_builder.errors import UsageError
    from site_builder.project import read_mkdocs_yml

    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: S\nmarkdown_extensions:\n  - x:\n      f: !!python/name:math.sqrt\n", encoding="utf-8"
    )
    assert read_mkdocs_yml(config, ignore_tags=True) == {"site_name": "S", "markdown_extensions": [{"x": {"f": None}}]}
    with pytest.raises(UsageError) as refused:
        read_mkdocs_yml(config)
    assert str(refused.value).startswith(f"{config}: not valid YAML here: ") and "\n" not in str(refused.value)
    config.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(UsageError, match="not a MkDocs configuration"):
        read_mkdocs_yml(config, ignore_tags=True)
