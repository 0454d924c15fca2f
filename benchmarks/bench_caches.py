"""What each kind of the cache store saves: a warm build with that kind's entries removed, against one with all.

    .venv/bin/python benchmarks/bench_caches.py [-n RUNS] [--kinds fixtures+pages,imports,...]

A copy of the project is built until every kind is filled; its cache is then kept aside. Each round restores
that cache, removes the entries of one kind (``none``: nothing; ``a+b``: both) and times one ``mkdocs build
--strict`` in a fresh process: CPU (the build's and its fixture processes') and wall time, the median of RUNS
rounds, the kinds interleaved so that they share the machine's noise. A kind pays when removing it costs more
than the noise: the ratio to ``none`` says by how much. ``fixtures`` alone costs nothing on a warm build (every
page comes from ``pages``); ``fixtures+pages`` is what a template edit of every page would cost without it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import REPO, Sample, measure, mkdocs  # noqa: E402 - the benchmarks share one way to measure

KINDS = "none,imports,pages,templates,diagrams,scan,shown,search,fixtures+pages,pages+diagrams+templates"


def copy_project(to: Path) -> Path:
    to.mkdir(parents=True)
    for name in ("mkdocs.yml", "docs", "overrides", "templates", "pages"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__", "test_*.py"))
        else:
            shutil.copy(source, to / name)
    return to


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--kinds", default=KINDS)
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-caches-") as tmp:
        project = copy_project(Path(tmp) / "p")
        build = mkdocs(project / "mkdocs.yml", project / "site")
        for _ in range(2):  # the second build fills what only a warm build writes (the scan verdicts)
            measure(build, project)
        cache, kept = project / ".cache", Path(tmp) / "kept"
        shutil.copytree(cache, kept)
        samples: dict[str, list[Sample]] = {kind: [] for kind in kinds}
        for _ in range(args.runs):
            for kind in kinds:
                shutil.rmtree(cache)
                shutil.copytree(kept, cache)
                for part in [] if kind == "none" else kind.split("+"):
                    shutil.rmtree(cache / part, ignore_errors=True)
                samples[kind].append(measure(build, project))
        base = statistics.median(s.cpu for s in samples.get("none") or samples[kinds[0]])
        print(f"warm build with one kind removed, median of {args.runs} interleaved runs")
        print(f"{'removed':28} {'CPU s':>8} {'wall s':>8} {'CPU / none':>11}")
        for kind in kinds:
            cpu = statistics.median(s.cpu for s in samples[kind])
            wall = statistics.median(s.wall for s in samples[kind])
            print(f"{kind:28} {cpu:8.2f} {wall:8.2f} {cpu / base:10.2f}x")


if __name__ == "__main__":
    main()
