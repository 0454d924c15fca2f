"""The golden lists of shown values: compared by every build, written by ``site-builder shown``, diffed by ``diff``.

Every build compares each generated page's shown values with its golden list (:class:`site_builder.scan.ShownLists`).
:func:`collect` builds the site (``mkdocs build``, into a temporary folder that is removed after) with the
plugin collecting each generated page's shown values instead of comparing them with its golden list, which
is what ``--write-golden`` freezes. :func:`diff` compares each page's golden list at a git revision with the
one in the working tree and writes the changes as Markdown, ready for a pull-request comment.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .check import places
from .errors import SiteBuilderError, UsageError
from .project import Page, Project
from .scan import Collected


def collect(project: Project) -> Collected:
    """Every generated page's shown values (by built path), as a build of the project shows them now."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    from .plugin import ChapterTracePlugin

    with tempfile.TemporaryDirectory(prefix="site-builder-shown-") as folder:
        quiet = logging.getLogger("mkdocs")
        level = quiet.level
        quiet.setLevel(logging.WARNING)
        try:
            config = load_config(str(project.root / "mkdocs.yml"), site_dir=str(Path(folder) / "site"))
            plugin = next((p for p in config.plugins.values() if isinstance(p, ChapterTracePlugin)), None)
            if plugin is None:
                raise UsageError("mkdocs.yml does not use the chapter-trace plugin: no page's values to collect")
            plugin.collected = {}
            build(config)
        except MkDocsException as exc:
            raise SiteBuilderError(f"the site did not build: {exc}") from None
        finally:
            quiet.setLevel(level)
        return dict(plugin.collected)


def write(project: Project, pages: list[Page]) -> list[Path]:
    """Freeze the shown values of ``pages`` in their golden lists; the paths of the lists that changed."""
    found = collect(project)
    written: list[Path] = []
    for twin in (page.twin(lang) for page in pages for lang in page.languages):
        values = found.get(twin.html_path)
        if values is None:
            raise SiteBuilderError(f"the build did not show {twin.html_path}")
        path = twin.golden_shown
        if places.write_golden(values, twin.html_path, path, twin.lang):
            written.append(path)
    return written


def _git(project: Project, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(project.root), *args], capture_output=True, timeout=60)
    except FileNotFoundError:
        raise UsageError("git is not installed: `site-builder diff` reads a revision with it") from None


def _at_revision(project: Project, rev: str, path: Path, name: str) -> tuple[places.ShownValue, ...] | None:
    """The golden list at ``path`` as revision ``rev`` holds it (None when it holds none)."""
    relative = path.relative_to(project.root).as_posix()
    done = _git(project, "show", f"{rev}:{relative}")
    if done.returncode != 0:
        return None
    try:
        return places.parse(done.stdout.decode("utf-8"), f"{rev}:{name}")
    except UnicodeDecodeError as exc:
        raise places.ShownListError(f"{rev}:{name}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def diff(project: Project, rev: str) -> str:
    """Markdown: for every page, the shown values that changed, appeared or disappeared since revision ``rev``."""
    if _git(project, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
        raise UsageError(f"{rev!r} is not a revision of the repository at {project.root}")
    lines = [f"### Shown values since `{rev}`", ""]
    changed = 0
    for page in (p.twin(lang) for p in project.pages() for lang in p.languages):
        path = page.golden_shown
        name = project.display(path)
        old = _at_revision(project, rev, path, name)
        new = places.read_golden(path, name)
        section = _page_changes(page, old, new)
        if section:
            changed += 1
            lines += section
    if not changed:
        lines.append("No shown value changed, appeared or disappeared.")
    return "\n".join(lines) + "\n"


def _page_changes(
    page: Page, old: tuple[places.ShownValue, ...] | None, new: tuple[places.ShownValue, ...] | None
) -> list[str]:
    if old is None and new is None:
        return []
    head = f"#### `{page.html_path}` ({page.slug})"
    if old is None:
        return [head, "", f"- a new list: {len(new or ())} values shown", ""]
    if new is None:
        return [head, "", f"- its list is gone: {len(old)} values no longer listed", ""]
    items = places.changes_text(places.compare(old, new))
    if not items:
        return []
    counts: Mapping[str, int] = {}
    for item in items:
        word = item[2:].split(":", 1)[0]
        counts = {**counts, word: counts.get(word, 0) + 1}
    summary = ", ".join(f"{n} {word}" for word, n in sorted(counts.items()))
    return [head, "", summary, "", *items, ""]
