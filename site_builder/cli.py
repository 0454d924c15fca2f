"""Command line: ``site-builder trace|report [--page SLUG] [--write-golden]`` and ``site-builder check``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from .files import write_atomic


class NoSuchOutput(Exception):
    """The page asked for has no such output (an unknown slug, or a report on a page without one)."""


def _page_output(slug: str, kind: str, write_golden: bool) -> int:
    """Print (or freeze) one generated page's trace or report, run through its ``PAGES`` entry."""
    from .chapters import page

    try:
        source = page(slug)
    except KeyError as exc:
        raise NoSuchOutput(exc.args[0]) from None
    target = source.golden_trace if kind == "trace" else source.golden_report
    if target is None:
        raise NoSuchOutput(f"page {slug!r} has no {kind}; it publishes a trace only")
    run = source.run()
    text = run.trace_text if kind == "trace" else run.report_text
    assert text is not None
    if write_golden:
        write_atomic(target, text)
        print(f"wrote {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="site-builder",
        description="Run the chapter fixtures, print their trace or report, and check a built site against them.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for kind, what in (("trace", "the chapter trace (residual-connections-v1)"), ("report", "the learner report")):
        p = sub.add_parser(kind, help=f"run the fixtures and print {what}")
        p.add_argument(
            "--write-golden", action="store_true", help="write it to the frozen golden file instead of stdout"
        )
        p.add_argument(
            "--page", default="ch24", metavar="SLUG", help="which generated page (default: ch24, the chapter)"
        )
    check = sub.add_parser("check", help="verify every number on a built site against a fresh run")
    check.add_argument("site_dir", nargs="?", default="site", help="built site folder (default: site)")
    args = parser.parse_args(argv)

    try:
        if args.command in ("trace", "report"):
            return _page_output(args.page, args.command, args.write_golden)
        from .check import main as check_main

        return check_main(Path(args.site_dir))
    except Exception as exc:  # one clear line, not a traceback
        from .fixtures import FixtureError
        from .trace import NonFiniteValueError

        if isinstance(exc, NoSuchOutput):
            print(f"site-builder: error: {exc}", file=sys.stderr)
            return 2
        if isinstance(exc, (FixtureError, NonFiniteValueError, OSError)):
            print(f"site-builder: error: {exc}", file=sys.stderr)
            return 1 if not isinstance(exc, OSError) else 2
        raise


if __name__ == "__main__":
    sys.exit(main())
