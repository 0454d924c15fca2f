"""How long `mkdocs serve` takes from an edit to the changed page, and what it serves while a build is broken.

    .venv/bin/python benchmarks/bench_serve.py [-n RUNS] [--baseline REV] [--timeout S]

Each side is a temporary copy of the project (its `.cache` included, so the
first build is warm) served by `mkdocs serve` on a free port of 127.0.0.1, with
live reload (MkDocs rebuilds only then). Each round, interleaved between the
sides, makes one edit and polls the page over HTTP every 20 ms until it shows
the change, and prints the medians of that wall time:

- template: a sentence added to (then removed from) a page template
  (`pages/path_expansion/page.md.j2`);
- docs: a sentence added to (then removed from) `docs/index.md`;
- fixture: a constant of `pages/path_expansion/fixtures.py` toggled, which
  changes the numbers on that page (its golden file is then stale: a warning
  under serve).

"bare" is MkDocs serving the export (`site-builder render`) without our
plugin, edited in its `docs/index.md`: MkDocs' own rebuild of the same site,
the floor. Finally each side's template is broken (a Jinja syntax error) and
the page is polled until it shows the error: a side that does not answer
within `--timeout` seconds is reported as hanging.

``--baseline REV`` serves a worktree of git revision REV the same way, in the
same rounds. The live-reload watcher of MkDocs polls the files every 0.5 s, so
about 0.25 s of every figure is that poll, in every side alike.
"""

from __future__ import annotations

import argparse
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import ENV, REPO, Side, worktree  # noqa: E402 - after the path to the benchmarks folder is set

_RELOAD = re.compile(rb"<script[^>]*>[^<]*livereload[^<]*</script>|<script src=\"/js/livereload.js\"></script>")
PROJECT_PARTS = ("mkdocs.yml", "docs", "pages", "templates", "overrides", ".cache")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return _RELOAD.sub(b"", answer.read())
    except (urllib.error.URLError, OSError):
        return None


@dataclass
class Served:
    label: str
    root: Path
    env: dict[str, str]
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    times: dict[str, list[float]] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def start(self) -> None:
        self.port = free_port()
        self.log = self.root / "serve.log"
        handle = open(self.log, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{self.port}"],
            cwd=self.root,
            env=self.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 300
        while fetch(self.url("")) is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{self.label}: mkdocs serve did not start:\n{self.log.read_text()}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def copy_project(source: Path, target: Path) -> None:
    target.mkdir(parents=True)
    for part in PROJECT_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, ignore=shutil.ignore_patterns("__pycache__"))
        elif (source / part).is_file():
            shutil.copy2(source / part, target / part)


def until_changed(side: Served, page: str, before: bytes, edit: Callable[[], None], timeout: float) -> float | None:
    """Make ``edit`` and poll ``page`` until it differs from ``before``; the seconds it took (None: timed out)."""
    started = time.perf_counter()
    edit()
    while time.perf_counter() - started < timeout:
        now = fetch(side.url(page))
        if now is not None and now != before:
            return time.perf_counter() - started
        time.sleep(0.02)
    return None


def toggle(path: Path, old: str, new: str) -> Callable[[], None]:
    def edit() -> None:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(old, new, 1) if old in text else text.replace(new, old, 1), encoding="utf-8")

    return edit


def edits(root: Path, bare: bool) -> dict[str, tuple[str, Callable[[], None]]]:
    """Each kind of edit: the page it shows on, and the edit (applying it twice restores the file)."""
    if bare:
        docs_page = root / "docs" / "index.md"
        return {"docs": ("", toggle(docs_page, "\n", "\n\nA sentence added by the benchmark.\n\n"))}
    template = root / "pages" / "path_expansion" / "page.md.j2"
    fixtures = root / "pages" / "path_expansion" / "fixtures.py"
    return {
        "template": ("evidence/path-expansion/", toggle(template, "\n", "\nA sentence added by the benchmark.\n\n")),
        "docs": ("", toggle(root / "docs" / "index.md", "\n", "\n\nA sentence added by the benchmark.\n\n")),
        "fixture": ("evidence/path-expansion/", toggle(fixtures, "scale: float = 0.5", "scale: float = 0.25")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=7, help="edits of each kind per side (default 7)")
    parser.add_argument("--baseline", metavar="REV", help="also serve git revision REV in the same rounds")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for a change (default 20)")
    args = parser.parse_args(argv)

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-serve-")))
        sides: list[Side] = [Side("plugin", REPO, ENV)]
        if args.baseline:
            base = stack.enter_context(worktree(args.baseline))
            for part in (".cache",):  # start warm like the current side
                if (REPO / part).is_dir() and not (base.project / part).exists():
                    shutil.copytree(REPO / part, base.project / part)
            sides.append(base)
        export = tmp / "export"
        subprocess.run(
            [sys.executable, "-m", "site_builder.cli", "render", str(export)],
            cwd=REPO,
            env=ENV,
            check=True,
            capture_output=True,
        )
        served: list[Served] = []
        for side in sides:
            root = tmp / side.label.strip("@").replace("/", "_")
            copy_project(side.project, root)
            served.append(Served(side.label, root, side.env))
        served.append(Served("bare", export, ENV))
        for s in served:
            stack.callback(s.stop)
            s.start()
        for run in range(args.runs):
            order = served[run % len(served) :] + served[: run % len(served)]
            for s in order:
                for kind, (page, edit) in edits(s.root, s.label == "bare").items():
                    before = fetch(s.url(page)) or b""
                    took = until_changed(s, page, before, edit, args.timeout)
                    s.times.setdefault(kind, []).append(took if took is not None else float("inf"))
                    time.sleep(0.3)  # let the watcher settle before the next edit
        print(
            f"mkdocs serve, edit to changed page ({args.runs} edits of each kind per side, interleaved; "
            "median wall seconds)"
        )
        for s in served:
            cells = "  ".join(f"{kind} {statistics.median(t):5.2f} s" for kind, t in s.times.items())
            print(f"  {s.label:>10}  {cells}")
        print(f"a template broken (a Jinja syntax error): what the page shows (waiting at most {args.timeout:.0f} s)")
        for s in served:
            if s.label == "bare":
                continue
            template = s.root / "pages" / "path_expansion" / "page.md.j2"
            page = "evidence/path-expansion/"
            before = fetch(s.url(page)) or b""
            took = until_changed(
                s,
                page,
                before,
                lambda t=template: t.write_text(t.read_text(encoding="utf-8") + "\n{% if %}\n", encoding="utf-8"),
                args.timeout,
            )
            shown = fetch(s.url(page)) if took is not None else None
            if took is None:
                print(f"  {s.label:>10}  no answer within {args.timeout:.0f} s (the request hangs)")
            else:
                found = re.search(rb"<code>([^<]*)</code></p>\s*<p>Fix the cause", shown or b"")
                line = found.group(1).decode("utf-8", "replace") if found else "(the page changed, no error line)"
                print(f"  {s.label:>10}  after {took:.2f} s: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
