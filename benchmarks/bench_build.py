"""How much our plugin adds to a MkDocs build: warm, cold, and at course scale.

    .venv/bin/python benchmarks/bench_build.py [-n RUNS] [--baseline REV] [--scale 5,10,20,40] [--no-compare]

"Bare" is Material building the very same generated pages without our plugin:
the export `site-builder render` writes (the pages and downloads as plain files,
the configuration without the plugin). Every measurement is a fresh process;
CPU is the child's user + system time (its fixture processes included), memory
its peak resident set, each the median of RUNS runs interleaved with the runs
it is compared to:

- warm: every cache filled (fixtures, rendered pages, compiled templates,
  diagram layouts, number-scan verdicts);
- cold: every cache under `.cache/` removed before each run except the fixture
  results and the import lists they are keyed by (their cost is the fixtures',
  printed per page by the build itself);
- scale: a temporary project of N scaffolded pages (`site-builder new`), built
  cold with nothing cached (fixtures included, run in parallel on all cores),
  then rebuilt warm after one page's template is edited, and once more with
  nothing edited.

``--baseline REV`` checks out git revision REV in a temporary worktree and
builds it in the same rounds (its own caches, the same pages), so a before and
after comparison shares the machine's noise instead of coming from two runs.
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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Every measured process may write bytecode caches, as Python does by default: with PYTHONDONTWRITEBYTECODE set,
# our editable package would be compiled from source in every process while MkDocs and Material (installed, with
# their .pyc files) would not, which measures the environment instead of the code.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"NO_MKDOCS_2_WARNING": "1"}


@dataclass
class Sample:
    cpu: float
    wall: float
    rss_mib: float


@dataclass(frozen=True)
class Side:
    """One way of building: its label, its project folder and the environment its processes run in."""

    label: str
    project: Path
    env: dict[str, str]


def measure(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Sample:
    """Run ``command`` once; its own CPU time, wall time and peak memory (from wait4, not the whole session)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        err = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} failed in {cwd}:\n{err}")
    if process.stderr:
        process.stderr.close()
    return Sample(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)


def mkdocs(config: Path, out: Path, strict: bool = True) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--quiet",
        *(["--strict"] if strict else []),
        "-f",
        str(config),
        "-d",
        str(out),
    ]


def median(samples: list[Sample], field: str) -> float:
    return statistics.median(getattr(s, field) for s in samples)


@contextmanager
def worktree(revision: str) -> Iterator[Side]:
    """REV checked out in a temporary folder; its processes import its own ``site_builder``."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-baseline-"))
    folder = tmp / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(folder), revision], cwd=REPO, check=True)
    try:
        env = {**ENV, "PYTHONPATH": str(folder) + os.pathsep + ENV.get("PYTHONPATH", "")}
        yield Side(f"@{revision}", folder, env)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=REPO, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def clear_caches(project: Path, keep: tuple[str, ...] = ("fixtures", "imports")) -> None:
    """Remove every cache under ``.cache/`` except those named in ``keep``."""
    cache = project / ".cache"
    if not cache.is_dir():
        return
    for entry in cache.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def compare(runs: int, baseline: str | None) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="bench-build-") as tmp,
        worktree(baseline) if baseline else _nothing() as base,
    ):
        tmp_path = Path(tmp)
        export = tmp_path / "export"
        subprocess.run(
            [sys.executable, "-m", "site_builder.cli", "render", str(export)],
            cwd=REPO,
            env=ENV,
            check=True,
            capture_output=True,
        )
        sides = [Side("plugin", REPO, ENV)] + ([base] if base else [])
        for side in sides:
            measure(mkdocs(side.project / "mkdocs.yml", tmp_path / "warmup"), side.project, side.env)  # fill caches
        measure(mkdocs(export / "mkdocs.yml", tmp_path / "warmup", strict=False), export)
        labels = [s.label for s in sides] + ["bare"]
        warm: dict[str, list[Sample]] = {label: [] for label in labels}
        cold: dict[str, list[Sample]] = {label: [] for label in labels}
        for run in range(runs):
            order = labels[run % len(labels) :] + labels[: run % len(labels)]  # each goes first in turn
            for label in order:
                if label == "bare":
                    warm[label].append(measure(mkdocs(export / "mkdocs.yml", tmp_path / "bare", False), export))
                    continue
                side = next(s for s in sides if s.label == label)
                warm[label].append(
                    measure(mkdocs(side.project / "mkdocs.yml", tmp_path / label), side.project, side.env)
                )
            for label in order:
                if label == "bare":  # bare has no caches: its cold build is its warm build
                    cold[label].append(measure(mkdocs(export / "mkdocs.yml", tmp_path / "bare", False), export))
                    continue
                side = next(s for s in sides if s.label == label)
                clear_caches(side.project)
                cold[label].append(
                    measure(mkdocs(side.project / "mkdocs.yml", tmp_path / label), side.project, side.env)
                )
        for side in sides:  # leave every cache filled again
            measure(mkdocs(side.project / "mkdocs.yml", tmp_path / "warmup"), side.project, side.env)
        print(f"{REPO} ({runs} interleaved runs, medians; ratios against bare)")
        for kind, samples in (("warm", warm), ("cold", cold)):
            for field, unit in (("cpu", "s"), ("wall", "s"), ("rss_mib", "MiB")):
                b = median(samples["bare"], field)
                cells = "  ".join(
                    f"{label} {median(samples[label], field):7.3f} {unit:3} ({median(samples[label], field) / b:4.2f}x)"
                    for label in labels
                    if label != "bare"
                )
                print(f"  {kind:4} {field:7} bare {b:7.3f} {unit:3}  {cells}")


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def scaffold(root: Path, n: int, source: Path, env: dict[str, str]) -> None:
    shutil.copy(source / "mkdocs.yml", root / "mkdocs.yml")
    for folder in ("docs", "templates", "overrides"):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, root / folder)
    (root / "docs" / "index.md").write_text("# A course\n\nThe pages of a course.\n", encoding="utf-8")
    (root / "pages").mkdir()
    for i in range(n):
        letters = "".join(chr(ord("a") + int(d)) for d in str(i))
        subprocess.run(
            [sys.executable, "-m", "site_builder.cli", "new", f"page_{letters}", "--title", f"Page {letters}"],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )


def scaled(counts: list[int], baseline: str | None) -> None:
    print(
        "scale: N scaffolded pages; cold (nothing cached, fixtures run on all cores), then a warm rebuild after "
        "one page's template is edited, then one with nothing edited"
    )
    with worktree(baseline) if baseline else _nothing() as base:
        sides = [Side("plugin", REPO, ENV)] + ([base] if base else [])
        for n in counts:
            for side in sides:
                with tempfile.TemporaryDirectory(prefix=f"bench-scale-{n}-") as tmp:
                    root = Path(tmp)
                    scaffold(root, n, side.project, side.env)
                    shutil.rmtree(root / ".cache", ignore_errors=True)
                    cold = measure(mkdocs(root / "mkdocs.yml", root / "site"), root, side.env)
                    template = root / "pages" / "page_a" / "page.md.j2"
                    template.write_text(
                        template.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8"
                    )
                    edit = measure(mkdocs(root / "mkdocs.yml", root / "site"), root, side.env)
                    still = measure(mkdocs(root / "mkdocs.yml", root / "site"), root, side.env)
                    print(
                        f"  {side.label:>9} {n:3} pages: cold {cold.wall:6.2f} s wall, {cold.cpu:6.2f} s CPU "
                        f"({cold.cpu / n * 1000:6.1f} ms CPU/page, {cold.wall / n * 1000:6.1f} ms wall/page); "
                        f"one edit {edit.cpu:5.2f} s CPU, {edit.wall:5.2f} s wall; "
                        f"no edit {still.cpu:5.2f} s CPU; edit - no edit {1000 * (edit.cpu - still.cpu):6.1f} ms"
                    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=7, help="interleaved runs per measurement (default 7)")
    parser.add_argument("--baseline", metavar="REV", help="also build git revision REV in the same rounds")
    parser.add_argument("--scale", default="", help="comma-separated page counts, e.g. 5,10,20,40")
    parser.add_argument("--no-compare", action="store_true", help="only the scale runs")
    args = parser.parse_args(argv)
    if not args.no_compare:
        compare(args.runs, args.baseline)
    if args.scale:
        scaled([int(n) for n in args.scale.split(",")], args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
