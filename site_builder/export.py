"""``site-builder render OUT``: the generated pages as plain files, for any builder.

The export is a folder another site builder can take as it is: ``OUT/mkdocs.yml``
(this project's configuration without the ``chapter-trace`` plugin, with every
generated page in its navigation) and ``OUT/docs/`` (a copy of ``docs/`` plus
every generated page and download). MkDocs without the plugin, ProperDocs or
Zensical can build it, and ``site-builder check`` verifies the site they build.

Everything the build checks runs first, through the same pipeline: the
fixtures, the golden comparison, rendering, and the scan for numbers without
provenance (on the pages converted to HTML with the site's Markdown
extensions). Only then is the export written, into a staging folder that
replaces ``OUT`` in one swap (:func:`site_builder.publish.swap_in`), so a
failure writes nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import SiteBuilderError, UsageError, os_error
from .files import write_atomic
from .project import Project
from .publish import remove_tree, staging_name, swap_in

MARK = ".site-builder-export"  # a file that says a folder is an export this command may replace


class ExportError(SiteBuilderError):
    """The export cannot be written: a check failed, or the target is not an export."""


@dataclass(frozen=True)
class Exported:
    folder: Path
    pages: int
    files: int


def _translations(folder: str, names: list[str]) -> set[str]:
    from .i18n import SOURCE, source_name

    return {name for name in names if source_name(name)[1] != SOURCE}


def _markdown(config_file: Path) -> Callable[[str], str]:
    """Markdown to HTML with the site's own extensions, as MkDocs would convert a page's body."""
    import markdown
    from mkdocs.config import load_config

    config = load_config(str(config_file))
    md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)

    def convert(text: str) -> str:
        md.reset()
        body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
        return f"<html><body><article>{md.convert(body)}</article></body></html>"

    return convert


def export(
    project: Project, out: Path, config_file: Path | None = None, warn: Callable[[str], None] = print
) -> Exported:
    """Check everything, then write the export into ``out`` (replacing a previous export there)."""
    from .build import build_pages
    from .cache import Store
    from .check.document import unproven_numbers
    from .i18n import TRANSLATED
    from .project import nav_additions, read_mkdocs_yml

    config_file = Path(config_file or project.root / "mkdocs.yml")
    out = Path(out).resolve()
    precious = (project.root, project.docs_dir, project.pages_dir, project.templates_dir)
    if any(out == p or out in p.parents for p in precious):
        raise UsageError(f"{out}: the export replaces its folder; choose one that holds none of the project's files")
    if out.exists() and not (out / MARK).is_file():
        if not out.is_dir() or any(out.iterdir()):
            raise UsageError(f"{out} exists and is not an export of this command: give an empty or new folder")
    data = read_mkdocs_yml(config_file)

    pages = project.pages()
    try:
        built = build_pages(project, pages, Store(project.cache_dir, warn, project.display))
    except SiteBuilderError as exc:
        raise ExportError(str(exc)) from None
    convert = _markdown(config_file)
    for page in pages:
        rendered = built.pages[page.slug]
        problems = unproven_numbers(convert(rendered.markdown), page.html_path, frozenset(rendered.names))
        if problems:
            raise ExportError(f"{page.html_path}: {problems[0].element}: {problems[0].found} has no provenance")

    plugins = [
        entry
        for entry in data.get("plugins") or []
        if entry != "chapter-trace" and not (isinstance(entry, dict) and "chapter-trace" in entry)
    ]
    data["plugins"] = plugins
    nav = list(data.get("nav") or [])
    data["nav"] = nav + nav_additions(nav, pages)
    data["docs_dir"] = "docs"
    extra = data.get("extra")
    if isinstance(extra, dict):
        extra.pop("alternate", None)  # the export is the English site: no other language to switch to
    data.pop("site_dir", None)
    theme = data.get("theme")
    custom = theme.get("custom_dir") if isinstance(theme, dict) else None

    staging = staging_name(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # The export publishes the English site: a translation of a hand-written page stays behind with the
        # translated pages, which only the plugin's build places under their language's folder.
        shutil.copytree(project.docs_dir, staging / "docs", ignore=_translations)
        if isinstance(theme, dict) and custom:
            shutil.copytree(project.root / custom, staging / "overrides")
            theme["custom_dir"] = "overrides"
        files = 0
        for page in pages:
            rendered = built.pages[page.slug]
            english = {path: text for path, text in rendered.files.items() if path.split("/", 1)[0] not in TRANSLATED}
            for path, text in {page.page_path: rendered.markdown, **english}.items():
                target = staging / "docs" / path
                if target.exists():
                    raise ExportError(f"docs/{path} collides with a generated file of page {page.slug}")
                write_atomic(target, text)
                files += 1
        import yaml

        write_atomic(staging / "mkdocs.yml", yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        (staging / MARK).write_text("written by site-builder render; replaced by the next one\n", encoding="utf-8")
    except OSError as exc:
        remove_tree(staging, warn)
        raise os_error(exc, exc.filename or out, "cannot write the export") from None
    except BaseException:
        remove_tree(staging, warn)
        raise
    try:
        swap_in(staging, out, warn)  # the previous export, if any, goes in the same step
    except SiteBuilderError:
        remove_tree(staging, warn)
        raise
    return Exported(out, len(pages), files)
