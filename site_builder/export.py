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
replaces ``OUT`` in one rename, so a failure writes nothing.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import SiteBuilderError, UsageError, os_error
from .files import write_atomic
from .project import Project

MARK = ".site-builder-export"  # a file that says a folder is an export this command may replace


class ExportError(SiteBuilderError):
    """The export cannot be written: a check failed, or the target is not an export."""


@dataclass(frozen=True)
class Exported:
    folder: Path
    pages: int
    files: int


def _load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise os_error(exc, path, "cannot read") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: cannot be exported: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a MkDocs configuration")
    return data


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
    from .check.document import Facts, PageReport, _Doc, check_numbers, parse_html
    from .pipeline import Pipeline
    from .plugin import nav_entries
    from .render.pages import PageRenderer

    config_file = Path(config_file or project.root / "mkdocs.yml")
    out = Path(out).resolve()
    precious = (project.root, project.docs_dir, project.pages_dir, project.templates_dir)
    if any(out == p or out in p.parents for p in precious):
        raise UsageError(f"{out}: the export replaces its folder; choose one that holds none of the project's files")
    if out.exists() and not (out / MARK).is_file():
        if not out.is_dir() or any(out.iterdir()):
            raise UsageError(f"{out} exists and is not an export of this command: give an empty or new folder")
    data = _load_yaml(config_file)

    pipeline = Pipeline(project, warn=warn)
    pages = project.pages()
    runs = pipeline.run(pages)
    issues = pipeline.goldens(runs)
    if issues:
        raise ExportError(issues[0].message())
    renderer = PageRenderer(project, pages)
    rendered = [renderer.render(run.page, run) for run in runs]
    convert = _markdown(config_file)
    for run, page in zip(runs, rendered):
        report = PageReport()
        root = parse_html(convert(page.markdown))
        check_numbers(_Doc.of(root, run.page.html_path), Facts(run.facts).names, report)
        if report.problems:
            p = report.problems[0]
            raise ExportError(f"{run.page.html_path}: {p.element}: {p.found} has no provenance")

    plugins = [
        entry
        for entry in data.get("plugins") or []
        if entry != "chapter-trace" and not (isinstance(entry, dict) and "chapter-trace" in entry)
    ]
    data["plugins"] = plugins
    nav = list(data.get("nav") or [])
    listed = {
        p for entry in nav for p in (entry.values() if isinstance(entry, dict) else [entry]) if isinstance(p, str)
    }
    data["nav"] = nav + nav_entries([p for p in pages if p.page_path not in listed])
    data["docs_dir"] = "docs"
    data.pop("site_dir", None)
    theme = data.get("theme")
    custom = theme.get("custom_dir") if isinstance(theme, dict) else None

    staging = out.parent / f".{out.name}-{uuid.uuid4().hex[:12]}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(project.docs_dir, staging / "docs")
        if isinstance(theme, dict) and custom:
            shutil.copytree(project.root / custom, staging / "overrides")
            theme["custom_dir"] = "overrides"
        files = 0
        for page in rendered:
            for path, text in {page.page.page_path: page.markdown, **page.files}.items():
                target = staging / "docs" / path
                if target.exists():
                    raise ExportError(f"docs/{path} collides with a generated file of page {page.page.slug}")
                write_atomic(target, text)
                files += 1
        import yaml

        write_atomic(staging / "mkdocs.yml", yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        (staging / MARK).write_text("written by site-builder render; replaced by the next one\n", encoding="utf-8")
        if out.exists():
            old = out.parent / f".{out.name}-old-{uuid.uuid4().hex[:12]}"
            out.rename(old)
            staging.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise os_error(exc, exc.filename or out, "cannot write the export") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Exported(out, len(rendered), files)
