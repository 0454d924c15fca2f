"""Command line: ``site-builder trace|report|shown|diff|check|new|render|translated|pages``.

Every command finds its project from the working folder (the nearest
``mkdocs.yml``). Failures are one line on standard error, and the exit status
comes from :func:`site_builder.errors.exit_code`, the only place that decides it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from .errors import SiteBuilderError, UsageError, exit_code, os_error, shown


def _output(args: argparse.Namespace) -> int:
    """Print (or freeze) one page's trace or report."""
    from .pipeline import Pipeline, write_golden
    from .project import Project

    project = Project.find()
    page = project.page(args.page)
    if args.command == "report" and not page.has_report:
        raise UsageError(f"page {page.slug!r} publishes no report (it has no report.py); it publishes a trace")
    run = Pipeline(project, progress=lambda line: print(line, file=sys.stderr)).run_page(page.slug)
    if args.write_golden:
        path = write_golden(project, run, args.command)
        print(f"wrote {project.display(path)}", file=sys.stderr)
    else:
        text = run.text(args.command)
        assert text is not None
        sys.stdout.write(text)
    return 0


def _shown(args: argparse.Namespace) -> int:
    """Print (or freeze) the values the built pages show, place by place."""
    from . import shown
    from .check import places
    from .project import Project

    project = Project.find()
    pages = [project.page(args.page)] if args.page else project.pages()
    if args.write_golden:
        for path in shown.write(project, pages):
            print(f"wrote {project.display(path)}", file=sys.stderr)
        return 0
    found = shown.collect(project)
    for page in pages:
        sys.stdout.write(places.render(found.get(page.html_path, ()), page.html_path))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from . import shown
    from .project import Project

    sys.stdout.write(shown.diff(Project.find(), args.rev))
    return 0


def _check(args: argparse.Namespace) -> int:
    from . import check
    from .i18n import LANGUAGES
    from .project import Project

    languages = frozenset(args.languages.split(",")) if args.languages else None
    if languages is not None and not languages <= set(LANGUAGES):
        raise UsageError(f"--languages {args.languages}: the site publishes {', '.join(LANGUAGES)}")
    return check.run(Path(args.site_dir), Project.find(), fresh=args.fresh, languages=languages)


def _new(args: argparse.Namespace) -> int:
    from .project import Project
    from .scaffold import new_page

    project = Project.find()
    folder = new_page(project, args.slug, args.title, section=args.section, order=args.order, title_ru=args.title_ru)
    print(f"wrote {project.display(folder)}/: build it with `mkdocs build` or `mkdocs serve`", file=sys.stderr)
    return 0


def _render(args: argparse.Namespace) -> int:
    from .export import export
    from .project import Project

    project = Project.find()
    done = export(project, Path(args.out), warn=lambda line: print(line, file=sys.stderr))
    print(
        f"wrote {done.folder}: mkdocs.yml and docs/ with {done.pages} generated pages ({done.files} files); "
        f"build it with `mkdocs build -f {done.folder}/mkdocs.yml`",
        file=sys.stderr,
    )
    return 0


def _translated(args: argparse.Namespace) -> int:
    """Record, in each translation named, the English file it now matches (after the translation was updated)."""
    from .i18n import mark_translated
    from .project import Project

    project = Project.find()
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"{name}: no such translation (a file like pages/SLUG/page.ru.md.j2 or docs/index.ru.md)")
        try:
            line = mark_translated(path)
        except ValueError as exc:
            raise UsageError(f"{name}: {exc}") from None
        print(f"{project.display(path)}: {line}", file=sys.stderr)
    return 0


def _pages(args: argparse.Namespace) -> int:
    from .project import Project

    for page in Project.find().pages():
        section = f"{page.section} / " if page.section else ""
        print(f"{page.slug}\t{page.url}\t{section}{page.title}\t{' '.join(page.languages)}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="site-builder",
        description="Run the pages' fixtures, print their traces and reports, scaffold a page, "
        "and check a built site against a fresh run.",
    )
    sub = top.add_subparsers(dest="command", required=True)
    for kind, what in (("trace", "the page's trace"), ("report", "the page's learner report")):
        p = sub.add_parser(kind, help=f"run a page's fixtures and print {what}")
        p.add_argument("--page", required=True, metavar="SLUG", help="which page (its folder's name; see `pages`)")
        p.add_argument("--write-golden", action="store_true", help="write it to the page's golden file instead")
        p.set_defaults(action=_output)
    listed = sub.add_parser("shown", help="build the site and print the values each page shows, place by place")
    listed.add_argument("--page", metavar="SLUG", help="only this page (default: every page)")
    listed.add_argument(
        "--write-golden", action="store_true", help="write each page's golden list of shown values instead"
    )
    listed.set_defaults(action=_shown)
    changes = sub.add_parser(
        "diff", help="print, as Markdown, the shown values that changed since a git revision (from the golden lists)"
    )
    changes.add_argument("rev", metavar="REV", help="the git revision to compare the working tree with")
    changes.set_defaults(action=_diff)
    check = sub.add_parser("check", help="verify every number on a built site against the fixtures' runs")
    check.add_argument("site_dir", nargs="?", default="site", help="built site folder (default: site)")
    check.add_argument(
        "--fresh",
        action="store_true",
        help="run every page's fixtures again instead of reusing the cache entries proven current",
    )
    check.add_argument(
        "--languages",
        metavar="LANG,…",
        help="check only the pages in these languages (en for the English export); default: every language",
    )
    check.set_defaults(action=_check)
    new = sub.add_parser("new", help="write a new, working page folder")
    new.add_argument("slug", help="the folder's name: lower-case letters, digits and '_'")
    new.add_argument("--title", required=True, help="the page's title")
    new.add_argument("--title-ru", default=None, help="the page's Russian title (default: the English one)")
    new.add_argument("--section", default=None, help="the navigation section to put it in")
    new.add_argument("--order", type=float, default=None, help="where it sits in the navigation (default: last)")
    new.set_defaults(action=_new)
    render = sub.add_parser("render", help="write the generated pages as plain files any site builder can build")
    render.add_argument("out", help="the folder to write (OUT/mkdocs.yml and OUT/docs/); a previous export is replaced")
    render.set_defaults(action=_render)
    translated = sub.add_parser(
        "translated", help="record that translations match their English files as they are now (after updating them)"
    )
    translated.add_argument("files", nargs="+", metavar="FILE", help="translated files, e.g. pages/ch24/page.ru.md.j2")
    translated.set_defaults(action=_translated)
    pages = sub.add_parser("pages", help="list the page folders, in navigation order")
    pages.set_defaults(action=_pages)
    return top


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so it stops as after Ctrl-C: fixture processes killed, files whole."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    from .pipeline import pin_numeric_environment

    pin_numeric_environment()
    args = parser().parse_args(argv)
    previous = (
        signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() else None
    )
    try:
        return int(args.action(args))
    except SiteBuilderError as exc:
        print(f"site-builder: error: {shown(str(exc), 2000)}", file=sys.stderr)
        return exit_code(exc)
    except OSError as exc:
        print(f"site-builder: error: {shown(str(os_error(exc)), 2000)}", file=sys.stderr)
        return exit_code(exc)
    except _Terminated:
        print("site-builder: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("site-builder: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
