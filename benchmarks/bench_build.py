"""How much our plugin adds to a MkDocs build: warm, cold, and at course scale.

    .venv/bin/python benchmarks/bench_build.py [-n RUNS] [--scale 5,10,20,40]

"Bare" is Material building the very same generated pages without our plugin:
the export `site-builder render` writes (the pages and downloads as plain files,
the configuration without the plugin). Every measurement is a fresh process;
CPU is the child's user + system time, memory its peak resident set, each the
median of RUNS runs interleaved with the runs it is compared to:

- warm: every cache filled (fixtures, compiled templates, diagram layouts);
- cold: the compiled-template and diagram caches removed before each run, the
  fixture results kept (their cost is the fixtures', printed per page by the
  build itself);
- scale: a temporary project of N scaffolded pages (`site-builder new`), built
  cold with nothing cached (fixtures included, run in parallel on all cores),
  then rebuilt warm after one page's template is edited.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


@dataclass
class Sample:
    cpu: float
    wall: float
    rss_mib: float


def measure(command: list[str], cwd: Path) -> Sample:
    """Run ``command`` once; its own CPU time, wall time and peak memory (from wait4, not the whole session)."""
    import time

    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        err = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} failed in {cwd}:\n{err}")
    return Sample(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)


def mkdocs(config: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "mkdocs", "build", "--quiet", "-f", str(config), "-d", str(out)]


def median(samples: list[Sample], field: str) -> float:
    return statistics.median(getattr(s, field) for s in samples)


def report(label: str, ours: list[Sample], bare: list[Sample]) -> None:
    for field, unit in (("cpu", "s"), ("wall", "s"), ("rss_mib", "MiB")):
        a, b = median(ours, field), median(bare, field)
        print(f"  {label:5} {field:8} plugin {a:8.3f} {unit:3}  bare {b:8.3f} {unit:3}  ratio {a / b:5.2f}x")


def compare(project: Path, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        tmp_path = Path(tmp)
        export = tmp_path / "export"
        subprocess.run([sys.executable, "-m", "site_builder.cli", "render", str(export)], cwd=project, env=ENV,
                       check=True, capture_output=True)
        config = project / "mkdocs.yml"
        cache = project / ".cache"
        measure(mkdocs(config, tmp_path / "warmup"), project)  # fill every cache
        warm, bare, cold, bare_cold = [], [], [], []
        for _ in range(runs):
            warm.append(measure(mkdocs(config, tmp_path / "ours"), project))
            bare.append(measure(mkdocs(export / "mkdocs.yml", tmp_path / "bare"), export))
            for name in ("templates", "diagrams"):
                shutil.rmtree(cache / name, ignore_errors=True)
            cold.append(measure(mkdocs(config, tmp_path / "ours"), project))
            bare_cold.append(measure(mkdocs(export / "mkdocs.yml", tmp_path / "bare"), export))
        print(f"{project} ({runs} interleaved runs, medians):")
        report("warm", warm, bare)
        report("cold", cold, bare_cold)


def scaled(counts: list[int]) -> None:
    print("scale: a project of N scaffolded pages, cold (nothing cached), then warm after one template edit")
    for n in counts:
        with tempfile.TemporaryDirectory(prefix=f"bench-scale-{n}-") as tmp:
            root = Path(tmp)
            shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
            for folder in ("docs", "templates", "overrides"):
                if (REPO / folder).is_dir():
                    shutil.copytree(REPO / folder, root / folder)
            (root / "docs" / "index.md").write_text("# A course\n\nThe pages of a course.\n", encoding="utf-8")
            (root / "pages").mkdir()
            for i in range(n):
                letters = "".join(chr(ord("a") + int(d)) for d in str(i))
                subprocess.run([sys.executable, "-m", "site_builder.cli", "new", f"page_{letters}",
                                "--title", f"Page {letters}"], cwd=root, env=ENV, check=True, capture_output=True)
            shutil.rmtree(root / ".cache", ignore_errors=True)
            cold = measure(mkdocs(root / "mkdocs.yml", root / "site"), root)
            template = root / "pages" / "page_a" / "page.md.j2"
            template.write_text(template.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
            warm = measure(mkdocs(root / "mkdocs.yml", root / "site"), root)
            print(f"  {n:3} pages: cold {cold.wall:6.2f} s wall, {cold.cpu:6.2f} s CPU ({cold.wall / n * 1000:6.1f} ms/page);"
                  f" after one edit {warm.wall:5.2f} s wall, {warm.cpu:5.2f} s CPU")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=7, help="interleaved runs per measurement (default 7)")
    parser.add_argument("--scale", default="", help="comma-separated page counts, e.g. 5,10,20,40")
    args = parser.parse_args(argv)
    compare(REPO, args.runs)
    if args.scale:
        scaled([int(n) for n in args.scale.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
