"""How long each page's fixtures take on a cold run: one fresh interpreter per run, no cache.

    .venv/bin/python benchmarks/bench_fixtures.py [-n RUNS] [SLUG ...]

Each run starts a new interpreter with the fixture runner's environment (one
BLAS thread, as the build runs them), imports the page's fixtures and times
``run()`` alone, in CPU seconds of that one process and in wall seconds. Runs
of different pages are interleaved, so a busy neighbour slows all pages alike.
Prints the median of each page, the total of the medians, and the total of the
pages that train (those whose fixtures import ``site_builder.tasks``), which
must stay under sixty seconds of one core: with eight seeds and their twins for every
compared arm, and a learning-rate sweep run side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from site_builder.pipeline import FIXTURE_ENVIRONMENT
from site_builder.pipeline.sources import fixture_sources
from site_builder.project import Project

REPO = Path(__file__).resolve().parent.parent
BUDGET = 60.0  # CPU seconds for every training page's fixtures together

CHILD = """
import json, sys, time
sys.path.insert(0, "tests")
from helpers import PROJECT, page
fixtures = PROJECT.module(page(sys.argv[1]), "fixtures")
cpu, wall = time.process_time(), time.perf_counter()
fixtures.run()
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}))
"""


def one_run(slug: str) -> dict[str, float]:
    env = {**os.environ, **FIXTURE_ENVIRONMENT}
    done = subprocess.run([sys.executable, "-c", CHILD, slug], cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{slug}: the fixtures failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def trains(project: Project, slug: str) -> bool:
    page = project.page(slug)
    return any(
        path.name == "tasks.py" and path.parent.name == "site_builder"
        for path in fixture_sources(page.folder, project.pages_dir)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="pages to time (default: every page)")
    parser.add_argument("-n", "--runs", type=int, default=3, help="runs per page (default 3)")
    args = parser.parse_args(argv)

    project = Project.at(REPO)
    slugs = args.slugs or [p.slug for p in project.pages()]
    times: dict[str, list[dict[str, float]]] = {slug: [] for slug in slugs}
    for _ in range(args.runs):
        for slug in slugs:
            times[slug].append(one_run(slug))

    print(
        f"runs: {args.runs} per page, interleaved, each in a fresh interpreter (median of each); "
        f"OPENBLAS_NUM_THREADS={FIXTURE_ENVIRONMENT['OPENBLAS_NUM_THREADS']}"
    )
    print(f"  {'page':<16} {'CPU s':>7} {'wall s':>7}  trains")
    total = {"cpu": 0.0, "wall": 0.0}
    training = {"cpu": 0.0, "wall": 0.0}
    for slug in slugs:
        cpu = statistics.median(t["cpu"] for t in times[slug])
        wall = statistics.median(t["wall"] for t in times[slug])
        trained = trains(project, slug)
        print(f"  {slug:<16} {cpu:7.2f} {wall:7.2f}  {'yes' if trained else ''}")
        total["cpu"] += cpu
        total["wall"] += wall
        if trained:
            training["cpu"] += cpu
            training["wall"] += wall
    print(f"  {'all pages':<16} {total['cpu']:7.2f} {total['wall']:7.2f}")
    verdict = "within" if training["cpu"] < BUDGET else "OVER"
    print(
        f"  {'training pages':<16} {training['cpu']:7.2f} {training['wall']:7.2f}  {verdict} the budget of {BUDGET:.0f} CPU s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
