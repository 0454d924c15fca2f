"""How long ``site-builder check`` takes on a built site.

    .venv/bin/python benchmarks/bench_check.py [SITE_DIR] [-n RUNS] [--baseline REV]

Without SITE_DIR the site is built first (``mkdocs build``) into a temporary
folder. First the whole command, as a user runs it: the median CPU (user +
system, its fixture processes included) and wall time of RUNS processes of
``site-builder check SITE`` (reusing the fixture entries proven current and
the verdicts of documents found clean), of ``site-builder check --fresh
SITE``, and of ``site-builder check SITE`` with the verdict cache removed
before each run (the fixture entries kept), interleaved; with ``--baseline REV``
the command of git revision REV (a temporary worktree) runs in the same rounds.
Then, in this process, the median of RUNS full checks, of the fixture runs
alone, and for each page and drawing the median time to parse and check it.
"""

from __future__ import annotations

import argparse
import os
import shutil
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
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(target)], cwd=REPO, env=env, check=True
    )


def processes(site: Path, runs: int, baseline: str | None) -> None:
    """Whole ``site-builder check`` processes, interleaved: CPU from wait4 (children included) and wall time."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from contextlib import ExitStack

    from bench_build import ENV, measure, worktree

    verdicts = Project.at(REPO).cache_dir / "check"  # the cache store's kind for the checker's verdicts

    def keep() -> None:
        pass

    def forget() -> None:
        shutil.rmtree(verdicts, ignore_errors=True)

    with ExitStack() as stack:
        sides = [
            ("check", REPO, ENV, [], keep),
            ("check --fresh", REPO, ENV, ["--fresh"], keep),
            ("check, no verdicts", REPO, ENV, [], forget),
        ]
        if baseline:
            base = stack.enter_context(worktree(baseline))
            sides.append((f"check {base.label}", base.project, base.env, [], keep))

        def command(extra: list[str]) -> list[str]:
            return [sys.executable, "-m", "site_builder.cli", "check", *extra, str(site)]

        for _label, cwd, env, extra, _ in sides:  # warm-up: fill the caches and bytecode of each side
            measure(command(extra), cwd, env)
        samples: dict[str, list] = {label: [] for label, *_ in sides}
        for run in range(runs):
            order = sides[run % len(sides) :] + sides[: run % len(sides)]
            for label, cwd, env, extra, before in order:
                before()  # not timed
                samples[label].append(measure(command(extra), cwd, env))
        print(f"whole process ({runs} interleaved runs, medians):")
        for label, got in samples.items():
            cpu = statistics.median(s.cpu for s in got)
            wall = statistics.median(s.wall for s in got)
            print(f"  {label:<24} CPU {cpu:6.3f} s   wall {wall:6.3f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site_dir", nargs="?", help="built site (default: build one into a temporary folder)")
    parser.add_argument("-n", "--runs", type=int, default=7, help="runs per measurement (default 7)")
    parser.add_argument("--baseline", metavar="REV", help="also run the checker of git revision REV, interleaved")
    parser.add_argument("--processes-only", action="store_true", help="only the whole-process measurement")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        site = Path(args.site_dir).resolve() if args.site_dir else Path(tmp) / "site"  # the baseline runs elsewhere
        if not args.site_dir:
            print(f"building the site into {site} ...", file=sys.stderr)
            build(site)

        processes(site, args.runs, args.baseline)
        if args.processes_only:
            return 0
        project = Project.at(REPO)
        full, result = timed(lambda: check.check_site(site, check.setup(project)), args.runs)
        fixtures, fresh = timed(lambda: check.collect(project), args.runs)
        prepared = check.setup(fresh=fresh)  # type: ignore[arg-type]  # timed() hands back collect()'s Fresh untyped
        checked, _ = timed(lambda: check.check_site(site, prepared), args.runs)

        print(f"site: {site}")
        print(f"runs: {args.runs} (median of each)")
        print(f"full check (fixtures + site): {full:.3f} s   [{result.summary()}]")  # type: ignore[union-attr]  # timed() hands back the Result untyped
        print(
            f"  the pages' runs (fixture entries proven current reused) of {len(prepared.fresh.pages)} pages: {fixtures:.3f} s"
        )
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
            print(f"  {seconds * 1000:8.2f} ms  {len(data) / 1024:7.1f} KiB  {report.values:4d} values  {page}")  # type: ignore[union-attr]  # timed() hands back the report untyped
    return 0


if __name__ == "__main__":
    sys.exit(main())
