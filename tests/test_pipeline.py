"""The pipeline: fixtures run in fresh interpreters, cached per page while their sources are unchanged.

Each test works on a copy of some page folders in a temporary project, so the
repository's pages, goldens and cache are never touched.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import ROOT, golden
from site_builder.cache import Store
from site_builder.pipeline import FixtureRunError, Pipeline, cache
from site_builder.pipeline.sources import fixture_sources
from site_builder.project import Project


def project_with(tmp_path: Path, *slugs: str) -> Project:
    for slug in slugs:
        shutil.copytree(ROOT / "pages" / slug, tmp_path / "pages" / slug, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    return Project.at(tmp_path)


def fixture_entry(project: Project, slug: str) -> Path:
    """The one fixture-cache entry of ``slug`` (``.cache/fixtures/SLUG-KEY``)."""
    (found,) = (project.cache_dir / "fixtures").glob(f"{slug}-*")
    return found


def forge(project: Project, slug: str, **changes) -> cache.Entry:
    """Write the page's entry again, under its own key, with ``changes``; the entry as it was."""
    path = fixture_entry(project, slug)
    store = Store(project.cache_dir, print)
    key = path.name[len(slug) + 1 :]
    entry = cache.load(store, slug, key)
    assert entry is not None
    cache.store_entry(store, slug, key, cache.Entry(**{**vars(entry), **changes}))
    return entry


class Log:
    def __init__(self) -> None:
        self.progress: list[str] = []
        self.warnings: list[str] = []

    def pipeline(self, project: Project, **kw) -> Pipeline:
        return Pipeline(project, progress=self.progress.append, warn=self.warnings.append, **kw)


def test_cold_then_warm_then_one_page_stale(tmp_path):
    project = project_with(tmp_path, "ch24", "path_expansion", "identity_init")
    log = Log()
    cold = log.pipeline(project).run()
    assert [r.cached for r in cold] == [False, False, False]
    assert [r.trace_text for r in cold] == [golden(s) for s in ("ch24", "identity_init", "path_expansion")]
    assert sorted(p.name.split("-")[0] for p in (tmp_path / ".cache" / "fixtures").iterdir()) == [
        "ch24",
        "identity_init",
        "path_expansion",
    ]
    assert any("ch24 ran in" in line for line in log.progress)

    warm = log.pipeline(project).run()
    assert [r.cached for r in warm] == [True, True, True]
    assert [r.facts for r in warm] == [r.facts for r in cold]

    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    fixtures.write_text(fixtures.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    mixed = log.pipeline(project).run()
    assert [r.cached for r in mixed] == [True, True, False]
    assert len(list((tmp_path / ".cache" / "fixtures").glob("path_expansion-*"))) == 2, (
        "the stale one stays until a build prunes it"
    )


def test_a_template_edit_keeps_the_cached_run(tmp_path):
    project = project_with(tmp_path, "path_expansion")
    Log().pipeline(project).run()
    template = tmp_path / "pages" / "path_expansion" / "page.md.j2"
    template.write_text(template.read_text(encoding="utf-8") + "\nMore prose.\n", encoding="utf-8")
    (tmp_path / "pages" / "path_expansion" / "page.toml").write_text(
        (tmp_path / "pages" / "path_expansion" / "page.toml").read_text(encoding="utf-8") + "\n", encoding="utf-8"
    )
    assert [r.cached for r in Log().pipeline(project).run()] == [True]


def test_the_fixtures_depend_on_the_engine_files_they_import():
    files = {p.relative_to(ROOT).as_posix() for p in fixture_sources(ROOT / "pages" / "ch24", ROOT / "pages")}
    assert {"pages/ch24/fixtures.py", "pages/ch24/trace.py", "pages/ch24/report.py"} <= files
    assert {"site_builder/autograd/tensor.py", "site_builder/trace/declare.py", "site_builder/run.py"} <= files
    assert not any(f.endswith((".j2", "page.toml")) or "/golden/" in f for f in files)
    assert "site_builder/plugin.py" not in files and "site_builder/render/pages.py" not in files


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), id="truncated"),
        pytest.param(lambda p: p.write_bytes(b"\x00garbage\xff"), id="garbage"),
        pytest.param(
            lambda p: p.write_text(p.read_text().replace("3.250000", "3.000000"), encoding="utf-8"),
            id="altered-without-its-checksum",
        ),
        pytest.param(lambda p: (p.unlink(), p.mkdir()), id="a-folder"),
    ],
)
def test_a_damaged_entry_is_run_again_with_one_warning(tmp_path, damage):
    project = project_with(tmp_path, "ch24")
    Log().pipeline(project).run()
    entry = fixture_entry(project, "ch24")
    damage(entry)
    log = Log()
    (run,) = log.pipeline(project).run()
    assert not run.cached and run.trace_text == golden("ch24")
    assert len(log.warnings) == 1 and f".cache/fixtures/{entry.name}: damaged cache entry (" in log.warnings[0]
    assert log.warnings[0].endswith("; running the fixtures again"), log.warnings
    (again,) = Log().pipeline(project).run()
    assert again.cached, "the entry is replaced by a good one"


def test_an_entry_whose_trace_no_longer_parses_is_run_again(tmp_path):
    project = project_with(tmp_path, "path_expansion")
    Log().pipeline(project).run()
    entry = forge(project, "path_expansion")
    forge(project, "path_expansion", trace=entry.trace.replace("BRANCH", "BRUNCH", 1))
    log = Log()
    (run,) = log.pipeline(project).run()
    assert not run.cached and any("damaged" in w for w in log.warnings)


def test_a_failing_fixture_names_its_file_line_and_page(tmp_path):
    project = project_with(tmp_path, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    text = fixtures.read_text(encoding="utf-8")
    fixtures.write_text(
        text.replace("    weights = [", "    raise RuntimeError('broken on purpose')\n    weights = [", 1),
        encoding="utf-8",
    )
    with pytest.raises(FixtureRunError) as info:
        Log().pipeline(project).run()
    message = str(info.value)
    assert message.startswith("pages/path_expansion/fixtures.py:") and "broken on purpose" in message
    assert "(page path_expansion)" in message


@pytest.mark.parametrize(
    "how,words",
    [("os._exit(3)", "exited with status 3"), ("os.kill(os.getpid(), signal.SIGKILL)", "killed by signal SIGKILL")],
)
def test_a_fixture_process_that_dies_is_named_with_its_page_and_status(tmp_path, how, words):
    project = project_with(tmp_path, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    text = fixtures.read_text(encoding="utf-8")
    text = text.replace("import itertools\n", "import itertools\nimport os\nimport signal\n", 1)
    fixtures.write_text(text.replace("    weights = [", f"    {how}\n    weights = [", 1), encoding="utf-8")
    with pytest.raises(FixtureRunError, match=words) as info:
        Log().pipeline(project).run()
    assert "path_expansion" in str(info.value) and "\n" not in str(info.value)


def test_a_nan_derived_value_is_refused_with_its_key(tmp_path):
    project = project_with(tmp_path, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    text = fixtures.read_text(encoding="utf-8")
    fixtures.write_text(
        text.replace('"DERIVED.two-to-the-blocks": 2**BLOCKS,', '"DERIVED.two-to-the-blocks": float("nan"),'),
        encoding="utf-8",
    )
    with pytest.raises(FixtureRunError, match="DERIVED.two-to-the-blocks"):
        Log().pipeline(project).run()


def test_pages_run_in_parallel_give_what_one_interpreter_gives(tmp_path):
    project = project_with(tmp_path, "ch24", "deep_stack", "path_expansion", "identity_init")
    one = Log().pipeline(project, jobs=1).run(use_cache=False)
    two = Log().pipeline(project, jobs=2).run(use_cache=False)
    assert [r.trace_text for r in one] == [r.trace_text for r in two]
    assert [r.derived for r in one] == [r.derived for r in two]


def test_fixtures_run_with_one_blas_thread_whatever_the_caller_set(tmp_path, monkeypatch):
    project = project_with(tmp_path, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    text = fixtures.read_text(encoding="utf-8")
    variables = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED")
    seen = ", ".join(f'"MEASURED.env.{name}": __import__("os").environ.get("{name}", "unset")' for name in variables)
    fixtures.write_text(
        text.replace('"DERIVED.two-to-the-blocks": 2**BLOCKS,', f'"DERIVED.two-to-the-blocks": 2**BLOCKS, {seen},'),
        encoding="utf-8",
    )
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    run = Log().pipeline(project).run(use_cache=False)[0]
    assert {name: run.derived[f"MEASURED.env.{name}"] for name in variables} == {
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
    }


def test_pruning_after_a_run_removes_the_entries_of_old_keys_and_of_pages_that_no_longer_exist(tmp_path):
    project = project_with(tmp_path, "path_expansion", "identity_init")
    Log().pipeline(project).run()
    old = fixture_entry(project, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    fixtures.write_text(fixtures.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    shutil.rmtree(tmp_path / "pages" / "identity_init")
    project = Project.at(tmp_path)
    store = Store(project.cache_dir, print)
    Log().pipeline(project, store=store).run()
    store.prune()
    (kept,) = (tmp_path / ".cache" / "fixtures").iterdir()
    assert kept.name.startswith("path_expansion-") and kept != old


def test_a_cache_that_cannot_be_written_is_a_warning_and_the_run_goes_on(tmp_path):
    project = project_with(tmp_path, "path_expansion")
    (tmp_path / ".cache").write_text("a file where the cache folder should be", encoding="utf-8")
    log = Log()
    (run,) = log.pipeline(project).run()
    assert run.trace_text == golden("path_expansion")
    # One warning per kind that cannot be written: the import lists of the sources and the fixture results.
    assert len(log.warnings) == 2, log.warnings
    assert log.warnings[0].startswith(".cache/imports/") and "cannot write the import-list cache" in log.warnings[0]
    assert log.warnings[1].startswith(".cache/fixtures/path_expansion-")
    assert "cannot write the fixture cache" in log.warnings[1]


def test_the_checker_reuses_a_current_entry_and_fresh_reads_nothing(tmp_path):
    from site_builder.check import collect

    project = project_with(tmp_path, "path_expansion")
    Log().pipeline(project).run()
    entry = forge(project, "path_expansion")
    forge(project, "path_expansion", derived={**entry.derived, "DERIVED.two-to-the-blocks": 99})
    path = fixture_entry(project, "path_expansion")
    reused, _ = collect(project).pages  # the English page and its Russian twin, one run
    assert reused.run.cached and reused.facts["DERIVED.two-to-the-blocks"] == 99  # proven current
    before = path.read_bytes()
    fresh, _ = collect(project, fresh=True).pages
    assert (
        not fresh.run.cached and fresh.facts["DERIVED.two-to-the-blocks"] == entry.derived["DERIVED.two-to-the-blocks"]
    )
    assert path.read_bytes() == before, "--fresh neither reads nor writes the cache"


def test_an_entry_made_for_other_sources_is_never_used_by_the_checker(tmp_path):
    from site_builder.check import collect

    project = project_with(tmp_path, "path_expansion")
    Log().pipeline(project).run()
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    fixtures.write_text(fixtures.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    checked, _ = collect(project).pages
    assert not checked.run.cached


def test_nothing_is_written_outside_the_checkout(tmp_path, monkeypatch):
    from site_builder.check import collect

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    project = project_with(tmp_path / "checkout", "path_expansion")
    Log().pipeline(project).run()
    collect(project)
    assert list(home.iterdir()) == []
    assert (project.cache_dir / "fixtures").is_dir()


@pytest.mark.parametrize(
    ("file", "edit", "words"),
    [
        ("figures.py", "\nraise KeyError('no such axis')\n", "pages/path_expansion/figures.py:"),
        ("fixtures.py", "\ndef broken(:\n", "pages/path_expansion/fixtures.py:"),
        ("trace.py", "\nraise RuntimeError('no trace today')\n", "pages/path_expansion/trace.py:"),
    ],
)
def test_page_code_that_fails_outside_the_fixture_process_is_one_line(tmp_path, file, edit, words):
    project = project_with(tmp_path, "path_expansion")
    source = tmp_path / "pages" / "path_expansion" / file
    source.write_text(source.read_text(encoding="utf-8") + edit, encoding="utf-8")
    with pytest.raises(FixtureRunError) as info:
        _ = Log().pipeline(project).run()[0].charts
    message = str(info.value)
    assert message.startswith(words) and "(page path_expansion)" in message and "\n" not in message


LANGUAGE_CHARTS = """
import inspect as _inspect
_drawn = charts
def charts(t, facts, lang):
    given = (lang,) if "lang" in _inspect.signature(_drawn).parameters else ()
    return {name: svg.replace("<svg", f'<svg data-lang="{lang}"', 1) for name, svg in _drawn(t, facts, *given).items()}
"""


def test_charts_that_take_a_language_are_drawn_once_for_each_language_they_are_asked_in(tmp_path):
    project = project_with(tmp_path, "path_expansion")
    source = tmp_path / "pages" / "path_expansion" / "figures.py"
    source.write_text(source.read_text(encoding="utf-8") + LANGUAGE_CHARTS, encoding="utf-8")
    run = Log().pipeline(project).run()[0]
    english, russian = run.charts, run.charts_for("ru")
    assert english and english.keys() == russian.keys()
    assert all('data-lang="en"' in svg for svg in english.values())
    assert all('data-lang="ru"' in svg for svg in russian.values())
    assert run.charts_for("ru") is russian, "each language is drawn once per run"


def test_an_interrupted_run_leaves_no_fixture_process_behind(tmp_path):
    import os
    import signal
    import threading

    project = project_with(tmp_path, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    started = tmp_path / "started"
    text = fixtures.read_text(encoding="utf-8").replace(
        "import itertools\n", "import itertools\nimport os\nimport time\n", 1
    )
    fixtures.write_text(
        text.replace(
            "    weights = [",
            f"    open({str(started)!r}, 'w').write(str(os.getpid()))\n    time.sleep(600)\n    weights = [",
            1,
        ),
        encoding="utf-8",
    )

    def interrupt_when_running() -> None:
        while not started.exists() or not started.read_text():
            threading.Event().wait(0.02)
        # Ctrl-C, to the main thread that waits for the fixtures; SIGTERM in a build becomes the same interrupt.
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    # A shell that starts a command in the background without job control starts it with SIGINT ignored, and
    # Python keeps it so: Ctrl-C is put back for this test, as a reader's terminal gives it to a build.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_when_running, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            Log().pipeline(project).run()
    finally:
        signal.signal(signal.SIGINT, previous)
    with pytest.raises(ProcessLookupError):
        os.kill(int(started.read_text()), 0)


def test_site_builder_terminated_stops_its_fixture_processes_and_says_so_in_one_line(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    shutil.copytree(
        ROOT / "pages" / "path_expansion",
        tmp_path / "pages" / "path_expansion",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    started = tmp_path / "started"
    text = fixtures.read_text(encoding="utf-8").replace(
        "import itertools\n", "import itertools\nimport os\nimport time\n", 1
    )
    fixtures.write_text(
        text.replace(
            "    weights = [",
            f"    open({str(started)!r}, 'w').write(str(os.getpid()))\n    time.sleep(600)\n    weights = [",
            1,
        ),
        encoding="utf-8",
    )
    command = subprocess.Popen(
        [sys.executable, "-m", "site_builder.cli", "trace", "--page", "path_expansion"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not started.exists() or not started.read_text():
        assert command.poll() is None, command.communicate()
        time.sleep(0.02)
    command.send_signal(signal.SIGTERM)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 128 + signal.SIGTERM and err == "site-builder: terminated\n", err
    with pytest.raises(ProcessLookupError):
        os.kill(int(started.read_text()), 0)


def test_keys_parse_only_the_sources_whose_bytes_the_store_has_not_seen(tmp_path, monkeypatch):
    from site_builder.pipeline import sources

    project = project_with(tmp_path, "path_expansion")
    store = Store(project.cache_dir, print)
    parsed: list[str] = []
    real = sources._parse_imports
    monkeypatch.setattr(sources, "_parse_imports", lambda *a: parsed.append(a[1]) or real(*a))
    first = cache.page_keys(project, project.pages(), store)
    assert len(parsed) > 10 and len(list((project.cache_dir / "imports").iterdir())) == len(parsed)
    parsed.clear()
    assert cache.page_keys(project, project.pages(), Store(project.cache_dir, print)) == first
    assert parsed == [], "every import list came from the store"
    assert cache.page_keys(project, project.pages(), None) == first and parsed, "the store changes no key"
    parsed.clear()
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    fixtures.write_text(fixtures.read_text(encoding="utf-8") + "\nimport json\n", encoding="utf-8")
    assert cache.page_keys(project, project.pages(), Store(project.cache_dir, print)) != first
    assert parsed == [str(fixtures)], "only the file whose bytes changed"


def test_pages_run_longest_first_by_the_seconds_they_took_last_time(tmp_path):
    project = project_with(tmp_path, "ch24", "path_expansion")
    Log().pipeline(project).run()
    for slug, seconds in (("ch24", 0.01), ("path_expansion", 9.0)):  # stale keys, known durations
        forge(project, slug, seconds=seconds)
        path = fixture_entry(project, slug)
        path.rename(path.with_name(f"{slug}-{'0' * 64}"))
    log = Log()
    runs = log.pipeline(project, jobs=1).run()
    assert [r.page.slug for r in runs] == ["ch24", "path_expansion"], "answers stay in navigation order"
    ran = [line.split()[1] for line in log.progress if line.startswith("fixtures: ") and " ran in " in line]
    assert ran == ["path_expansion", "ch24"], log.progress


def test_a_stale_golden_names_the_field_that_changed_however_long_its_line(tmp_path):
    from site_builder.pipeline import golden_issues

    project = project_with(tmp_path, "path_expansion")
    (run,) = Log().pipeline(project).run()
    path = tmp_path / "pages" / "path_expansion" / "golden" / "trace.txt"
    text = path.read_text(encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if row.startswith("JACOBIAN "))
    assert len(text.splitlines()[line - 1]) > 150 and text.count(" paths=16 ") == 1
    path.write_text(text.replace(" paths=16 ", " paths=15 "), encoding="utf-8")
    (issue,) = golden_issues(project, run.page, run.trace_text, run.report_text)
    assert issue.message().startswith(
        f"pages/path_expansion/golden/trace.txt:{line}: golden trace is stale: "
        "its JACOBIAN line has 'paths=15' where the fixtures now print 'paths=16'; refresh it with"
    ), issue.message()


@pytest.mark.parametrize(
    "old, new, key",
    [
        ('"DERIVED.two-to-the-blocks": 2**BLOCKS,', '"DERIVED.two-to-the-blocks": float("nan"),', "DERIVED."),
        ("sum_norm=float(np.linalg.norm(total)),", 'sum_norm=float("nan"),', "LENGTH[0].sum-norm"),
    ],
    ids=["derived", "trace"],
)
def test_a_nan_the_page_cannot_publish_names_the_fixtures_run_function(tmp_path, old, new, key):
    project = project_with(tmp_path, "path_expansion")
    fixtures = tmp_path / "pages" / "path_expansion" / "fixtures.py"
    text = fixtures.read_text(encoding="utf-8")
    assert old in text
    fixtures.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(FixtureRunError) as info:
        Log().pipeline(project).run()
    line = next(n for n, row in enumerate(fixtures.read_text().splitlines(), start=1) if row.startswith("def run("))
    assert str(info.value).startswith(f"pages/path_expansion/fixtures.py:{line}: "), str(info.value)
    assert key in str(info.value)


def test_a_pages_key_does_not_depend_on_where_the_project_and_the_package_live(tmp_path, monkeypatch):
    from site_builder.pipeline import sources

    project = project_with(tmp_path / "m", "ch24")
    keys = {}
    for place in ("a", "z"):  # the package's copy sorts before, then after, the project's folder
        package = tmp_path / place / "site_builder"
        shutil.copytree(sources.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
        monkeypatch.setattr(sources, "PACKAGE_DIR", package)
        keys[place] = cache.page_keys(project, project.pages(), None)
    assert keys["a"] == keys["z"] == cache.page_keys(Project.at(ROOT), [Project.at(ROOT).page("ch24")], None)
