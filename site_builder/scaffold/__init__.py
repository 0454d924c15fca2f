"""``site-builder new SLUG --title TITLE``: write a working page folder.

The folder holds one record (a linear layer's input, weight, output and input
gradient), fixtures that fill it on the autograd engine, a template that shows
two values in prose, one diagram and one table, and the golden trace those
fixtures print. It builds with ``mkdocs build --strict`` and passes
``site-builder check`` with no other edit, and it appears in the navigation
after the last page (or where ``--order`` puts it).

The files are written into a temporary sibling first and moved into place in
one rename, so a failed scaffold leaves no half-written folder.
"""

from __future__ import annotations

import dataclasses
import shutil
import string
import tempfile
from pathlib import Path

from ..errors import SiteBuilderError, UsageError, os_error
from ..i18n import SOURCE, record_line, source_name
from ..project import SLUG_RE, Project, title_problem
from ..render.pages import double_quoted

FILES = Path(__file__).resolve().parent / "files"
SUBSTITUTED = ("page.toml", "trace.py")  # files with $title, $title_ru, $url, $order, $section and $version in them


def new_page(
    project: Project,
    slug: str,
    title: str,
    *,
    section: str | None = None,
    order: float | None = None,
    title_ru: str | None = None,
) -> Path:
    """Write ``pages/SLUG/`` in both languages and its golden trace; the folder's path.

    The Russian templates start with the record of the English file each translates, so the new page is current
    in both languages; ``title_ru`` is its Russian title (the English one until it is translated)."""
    from ..pipeline import Pipeline, write_golden

    if not SLUG_RE.fullmatch(slug):
        raise UsageError(f"{slug!r} is not a page slug: lower-case letters, digits and '_', starting with a letter")
    title = title.strip()
    title_ru = (title_ru or title).strip()
    problem = title_problem(title) or title_problem(title_ru)
    if problem:
        raise UsageError(problem)
    folder = project.pages_dir / slug
    if folder.exists():
        raise UsageError(f"{project.display(folder)} already exists")
    pages = project.pages() if project.pages_dir.is_dir() else []
    url = slug.replace("_", "-") + "/"
    if any(p.url == url for p in pages):
        raise UsageError(f"the url {url!r} is already page {next(p.slug for p in pages if p.url == url)}'s")
    if order is None:
        order = float(int(max((p.order for p in pages), default=0.0)) + 1)
    values = {
        "title": double_quoted(title),
        "title_ru": double_quoted(title_ru),
        "url": url,
        "order": format(order, "g"),
        "section": f"section = {double_quoted(section)}\n" if section else "",
        "version": f"{slug.replace('_', '-')}-v1",
    }
    try:
        project.pages_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{slug}-", dir=project.pages_dir))
    except OSError as exc:
        raise os_error(exc, project.display(project.pages_dir), "cannot write") from None
    try:
        for source in sorted(FILES.iterdir()):
            text = source.read_text(encoding="utf-8")
            if source.name in SUBSTITUTED:
                text = string.Template(text).substitute(values)
            english, lang = source_name(source.name)
            if lang != SOURCE:  # a translation records the English it was made from
                text = record_line(english, (FILES / english).read_bytes(), markdown=False) + text
            (staging / source.name).write_text(text, encoding="utf-8", newline="\n")
        staging.rename(folder)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise os_error(exc, project.display(folder), "cannot write") from None
    fresh = dataclasses.replace(project)  # a project that sees the new folder
    try:
        run = Pipeline(fresh, warn=lambda line: None).run_page(slug)
        write_golden(fresh, run, "trace")
    except SiteBuilderError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder
