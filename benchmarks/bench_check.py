"""How long ``site-builder check`` takes on a built site.

    .venv/bin/python benchmarks/bench_check.py [SITE_DIR] [-n RUNS]

Without SITE_DIR the site is built first (``mkdocs build``) into a temporary
folder. Prints the median of RUNS full checks (fixtures included, as the
command runs them), the median of the fixture runs alone, and for each page
and drawing the median time to parse and check it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from site_builder import check
from site_builder.check.document import check_document, parse_html, parse_svg
from site_builder.project import Project

REPO = Path(__file__).resolve().parent.parent


def timed(fn, runs: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def build(target: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(target)], cwd=REPO, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site_dir", nargs="?", help="built site (default: build one into a temporary folder)")
    parser.add_argument("-n", "--runs", type=int, default=7, help="runs per measurement (default 7)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        site = Path(args.site_dir) if args.site_dir else Path(tmp) / "site"
        if not args.site_dir:
            print(f"building the site into {site} ...", file=sys.stderr)
            build(site)

        project = Project.at(REPO)
        full, result = timed(lambda: check.check_site(site, check.setup(project)), args.runs)
        fixtures, fresh = timed(lambda: check.collect(project), args.runs)
        prepared = check.setup(fresh=fresh)  # type: ignore[arg-type]
        checked, _ = timed(lambda: check.check_site(site, prepared), args.runs)

        print(f"site: {site}")
        print(f"runs: {args.runs} (median of each)")
        print(f"full check (fixtures + site): {full:.3f} s   [{result.summary()}]")  # type: ignore[union-attr]
        print(f"  the pages' fresh runs (the check never reads the fixture cache) of {len(prepared.fresh.pages)} pages: {fixtures:.3f} s")
        print(f"  site against prepared facts: {checked:.3f} s")
        print("per file (parse + check):")
        files = sorted(site.rglob("*.html")) + sorted(site.rglob("*.svg"))
        for file in files:
            page = file.relative_to(site).as_posix()
            data = file.read_bytes()
            parse = parse_svg if file.suffix == ".svg" else parse_html
            seconds, report = timed(
                lambda: check_document(parse(data), page, prepared.facts_for(page), prepared.sources), args.runs
            )
            print(f"  {seconds * 1000:8.2f} ms  {len(data) / 1024:7.1f} KiB  {report.values:4d} values  {page}")  # type: ignore[union-attr]
    return 0


if __name__ == "__main__":
    sys.exit(main())
