"""The built site: values in the right places, provenance on every number, and builds that fail safely.

The first half reads the session's strict build (``built_site``). The second
half builds temporary copies of the project (mkdocs.yml, docs/, templates/)
with one thing broken each, and checks that the build stops with one message
naming the file and the cause, and that the previous ``site/`` survives.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from lxml import etree
from lxml import html as lxml_html

from site_builder.chapters import PAGES, page
from site_builder.chapters.ch24 import GOLDEN_REPORT, GOLDEN_TRACE
from site_builder.facts import format_fact
from site_builder.render.regions import extract_region

from conftest import ROOT, SiteBuild, docs_snapshot, mkdocs_env

CH24 = page("ch24")
MINUS = "\u2212"
REGIONS = {
    "site_builder/nn.py#residual_add",
    "site_builder/chapters/ch24/fixtures.py#primary-fixture",
    "site_builder/chapters/ch24/fixtures.py#zero-branch-fixture",
    "site_builder/chapters/ch24/fixtures.py#stack-fixture",
    "site_builder/chapters/ch24/fixtures.py#gradient-check-fixture",
    "site_builder/chapters/ch24/report.py#report-renderer",
    "site_builder/chapters/ch24/trace.py#trace-writer",
}


@pytest.fixture(scope="module")
def facts():
    return dict(CH24.run().facts)


@pytest.fixture(scope="module")
def chapter(built_site: Path):
    return lxml_html.document_fromstring((built_site / "chapter-24" / "index.html").read_bytes())


def text(el) -> str:
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def svg(chapter, diagram_id: str):
    found = chapter.xpath(f"//svg[@id='{diagram_id}']")
    assert len(found) == 1, f"expected one svg#{diagram_id}"
    return found[0]


def node_values(diagram) -> dict[str, tuple[str, str, str]]:
    """data-trace key -> (node classes, shown text, format) for every value text of a diagram."""
    out = {}
    for t in diagram.xpath(".//g[contains(@class, 'node')]//text[@data-trace]"):
        group = t.getparent()
        out[t.get("data-trace")] = (group.get("class"), t.text, t.get("data-format"))
    return out


# -- the diagrams ----------------------------------------------------------------------


def test_forward_diagram_shows_each_trace_vector_in_its_node(chapter):
    values = node_values(svg(chapter, "routes-forward"))
    assert values["FORWARD.output"] == ("node output", f"[1, {MINUS}3.25]", "vector")
    assert values["FORWARD.branch"] == ("node learned", f"[{MINUS}1, {MINUS}2.25]", "vector")
    assert values["FORWARD.input"][1] == f"[2, {MINUS}1]"
    classes = {t.getparent().get("class") for t in svg(chapter, "routes-forward").xpath(".//text[@data-trace='FORWARD.input']")}
    assert classes == {"node input", "node identity"}, "the input and the identity path both show x"


def test_backward_diagram_shows_each_gradient_in_its_node(chapter):
    values = node_values(svg(chapter, "routes-backward"))
    assert values["BACKWARD.upstream"] == ("node input", "[1, 1]", "vector")
    assert values["BACKWARD.identity"] == ("node identity", "[1, 1]", "vector")
    assert values["BACKWARD.branch"] == ("node learned", f"[{MINUS}0.5, 2.25]", "vector")
    assert values["BACKWARD.input"] == ("node output", "[0.5, 3.25]", "vector")


@pytest.mark.parametrize("diagram_id", ["routes-forward", "routes-backward"])
def test_diagram_cues_survive_without_colour(chapter, diagram_id):
    d = svg(chapter, diagram_id)
    learned = d.xpath(".//g[contains(@class, 'edge') and contains(@class, 'learned')]/path")
    identity = d.xpath(".//g[contains(@class, 'edge') and contains(@class, 'identity')]/path")
    assert learned and all(p.get("stroke-dasharray") for p in learned), "learned edges are dashed"
    assert identity and not any(p.get("stroke-dasharray") for p in identity), "identity edges are solid"
    merges = d.xpath(".//g[contains(@class, 'node') and contains(@class, 'merge')]")
    assert len(merges) == 1
    assert len(merges[0].xpath("./ellipse")) == 2, "the merge has a double border"
    assert [text(t) for t in merges[0].xpath("./text")] == ["+", "merge"]


@pytest.mark.parametrize("diagram_id", ["routes-forward", "routes-backward"])
def test_diagram_is_clean_accessible_inline_svg(chapter, built_site, diagram_id):
    d = svg(chapter, diagram_id)
    assert d.get("role") == "img"
    title_id, desc_id = d.get("aria-labelledby").split()
    (title,) = d.xpath(f"./title[@id='{title_id}']")
    (desc,) = d.xpath(f"./desc[@id='{desc_id}']")
    assert text(title) and text(desc)
    assert desc.xpath(".//*[@data-trace]"), "the description states the values, with provenance"
    for el in d.iter():
        assert el.get("fill") is None and el.get("stroke") is None, f"hard-coded colour on <{el.tag}>"
    region = d.getparent()
    assert region.get("role") == "region" and region.get("tabindex") == "0" and region.get("aria-label")
    raw = (built_site / "chapter-24" / "index.html").read_text(encoding="utf-8")
    assert "<?xml" not in raw and "<!DOCTYPE svg" not in raw
    ids = [el.get("id") for el in chapter.iter() if isinstance(el.tag, str) and el.get("id")]
    assert len(ids) == len(set(ids)), "element ids are unique across both diagrams"


def test_figure_has_name_description_legend_and_panels(chapter):
    (figure,) = chapter.xpath("//figure[@id='routes-figure']")
    name = chapter.xpath(f"//*[@id='{figure.get('aria-labelledby')}']")
    description = chapter.xpath(f"//*[@id='{figure.get('aria-describedby')}']")
    assert name and description and text(description[0])
    assert len(figure.xpath("./figcaption")) == 1
    legend = text(figure.xpath(".//ul[contains(@class, 'routes-legend')]")[0])
    for cue in ("solid line", "dashed line", "double border"):
        assert cue in legend
    titles = [text(t) for t in figure.xpath(".//*[contains(@class, 'evidence-panel__title')]")]
    assert len(titles) == 5
    panels = {text(p) for p in figure.xpath(".//section[contains(@class, 'evidence-panel')]")}
    assert any("tolerance: 0.000002" in p and "passed: true" in p for p in panels)
    assert any(f"[2,2] ≠ branch [2]" in p for p in panels)


# -- the stack table, the questions and the answers --------------------------------------


def test_stack_table_has_six_rows_with_header_cells(chapter, facts):
    (table,) = chapter.xpath("//table[@id='stack-table']")
    assert [th.get("scope") for th in table.xpath("./thead/tr/th")] == ["col"] * 3
    rows = table.xpath("./tbody/tr")
    assert len(rows) == 6
    for depth, row in enumerate(rows[:5]):
        (th,) = row.xpath("./th[@scope='row']")
        assert text(th) == str(depth)
        plain, residual = row.xpath("./td/span[@data-trace]")
        assert plain.get("data-trace") == f"STACK[{depth}].plain"
        assert residual.get("data-trace") == f"STACK[{depth}].residual"
    assert text(rows[4].xpath("./td")[0]) == f"[0.007812, {MINUS}0.003906]"
    assert [s.get("data-trace") for s in rows[5].xpath("./td/span")] == ["STACK-GRADIENT.plain", "STACK-GRADIENT.residual"]
    assert text(rows[5].xpath("./td")[1]) == "[0.316406, 0.316406]"
    names = chapter.xpath("//p[contains(@class, 'stack-parameters')]//span[@data-trace]")
    assert [text(n) for n in names] == list(facts["STACK-GRADIENT.parameters"])


def test_eight_predictions_then_eight_collapsed_checks(chapter):
    (heading,) = chapter.xpath("//h2[@id='checks']")
    questions = heading.xpath("following-sibling::ol[1]/li")
    assert len(questions) == 8
    (details,) = heading.xpath("following-sibling::details[1]")
    assert details.get("open") is None, "the checks start collapsed"
    answers = details.xpath("./ol/li")
    assert len(answers) == 8
    assert "=[1,−3.25]." in text(answers[0]).replace(" ", "")
    assert "FORWARD.output[1]" in [el.get("data-trace") for el in answers[0].xpath(".//*[@data-trace]")]
    assert text(answers[7]).startswith("No.")
    assert "data-trace" in etree.tostring(answers[5]).decode()


def test_sections_come_in_the_specified_order(chapter):
    ids = [h.get("id") for h in chapter.xpath("//article//h2")]
    assert ids == ["predict", "formula", "roles", "history", "code", "figure", "checks", "next"]


def test_both_primary_sources_are_linked(chapter):
    hrefs = {a.get("href") for a in chapter.xpath("//a[contains(@class, 'citation')]")}
    assert hrefs == {"https://arxiv.org/abs/1512.03385", "https://arxiv.org/abs/1706.03762"}


# -- provenance -------------------------------------------------------------------------


def test_every_value_element_shows_what_its_key_and_format_give(chapter, facts):
    elements = chapter.xpath("//*[@data-trace]")
    assert len(elements) > 100
    for el in elements:
        key, fmt = el.get("data-trace"), el.get("data-format")
        assert fmt, f"{key} has no data-format"
        shown = "".join(el.itertext())
        if el.xpath("ancestor-or-self::math"):
            shown = re.sub(r"\s+", "", shown)
        assert shown.strip() == format_fact(facts, key, fmt), key


def test_the_page_shows_every_key_it_declares(chapter):
    shown = {el.get("data-trace") for el in chapter.xpath("//*[@data-trace]")}
    for entry in CH24.shows:
        key = entry.split()[-1]  # an entry may start with where the value is drawn
        assert key in shown or any(s.startswith(key + "[") for s in shown), entry


def test_numbers_in_math_carry_provenance(chapter):
    maths = chapter.xpath("//math")
    assert len(maths) > 20
    numbers = chapter.xpath("//math//mn")
    assert numbers
    for mn in numbers:
        parent = mn.getparent()
        assert parent.tag == "mrow" and parent.get("data-trace"), f"<mn>{mn.text}</mn> without provenance"


def test_prose_digits_come_only_from_provenance_or_citations(built_site):
    fresh = lxml_html.document_fromstring((built_site / "chapter-24" / "index.html").read_bytes())  # edited below
    (article,) = fresh.xpath("//article")
    for el in article.xpath(".//*[@data-trace] | .//*[@data-source] | .//a[contains(@class, 'citation')]"):
        el.clear(keep_tail=True)  # drop what is verified elsewhere, keep the prose around it
    leftover = re.findall(r"(?<![A-Za-z_])\d+", "".join(article.itertext()))
    assert leftover == []


def test_code_excerpts_are_the_current_source_regions(chapter):
    containers = chapter.xpath("//*[@data-source]")
    assert {c.get("data-source") for c in containers} == REGIONS
    for c in containers:
        path, region = c.get("data-source").split("#")
        code = "".join(c.xpath(".//pre/code")[0].itertext())
        assert code == extract_region(ROOT, path, region).text
        assert text(c.xpath("./figcaption")[0]) == f"{path}, region {region}"


def test_the_report_command_is_shown(chapter):
    assert any("site-builder report" in "".join(c.itertext()) for c in chapter.xpath("//pre/code"))


# -- files, hosts, log ------------------------------------------------------------------


def test_downloads_are_published_and_equal_the_golden_files(built_site, chapter):
    folder = built_site / "chapter-24"
    assert (folder / "residual-connections-v1.trace.txt").read_bytes() == GOLDEN_TRACE.read_bytes()
    assert (folder / "chapter-24-report.txt").read_bytes() == GOLDEN_REPORT.read_bytes()
    links = {a.get("href") for a in chapter.xpath("//a[@download]")}
    assert links == {"residual-connections-v1.trace.txt", "chapter-24-report.txt"}


def test_every_generated_page_and_download_is_built(built_site):
    for p in PAGES:
        stem = Path(p.page_path).with_suffix("")
        folder = stem.parent if stem.name == "index" else stem
        assert (built_site / folder / "index.html").is_file(), p.page_path
        for name in p.downloads:
            assert (built_site / folder / name).is_file(), name


def test_nothing_is_written_into_docs(site_build: SiteBuild):
    assert site_build.docs_after == site_build.docs_before
    generated = {p.page_path for p in PAGES}
    assert not generated & set(site_build.docs_after)


def test_the_site_requests_nothing_from_other_hosts(built_site):
    for file in built_site.rglob("*.html"):
        doc = lxml_html.document_fromstring(file.read_bytes())
        for el in doc.xpath("//script[@src] | //link[@href] | //img[@src] | //iframe | //source[@src]"):
            url = el.get("src") or el.get("href") or ""
            if el.tag == "link" and el.get("rel") in ("canonical",):
                continue
            assert not urlparse(url).netloc, f"{file.name}: <{el.tag}> loads {url}"
        assert "fonts.googleapis" not in file.read_text(encoding="utf-8")
    for file in built_site.rglob("*.css"):
        assert not re.search(r"url\((['\"]?)https?://", file.read_text(encoding="utf-8")), file.name


def test_the_build_log_has_one_summary_line(site_build: SiteBuild):
    lines = [line for line in site_build.log.splitlines() if "chapter-trace:" in line]
    assert len(lines) == 1, lines
    pages = len(PAGES)
    records = sum(len(p.golden_trace.read_text(encoding="utf-8").splitlines()) for p in PAGES)
    pattern = (
        rf"chapter-trace: {pages} pages?, {records} records, (\d+) diagrams? \((\d+) rendered, (\d+) cached\), \d+\.\d\d s$"
    )
    match = re.search(pattern, lines[0])
    assert match, lines[0]
    total, rendered, cached = map(int, match.groups())
    assert total == rendered + cached and total >= 2


# -- builds of a temporary copy ----------------------------------------------------------

EVERY_PAGE = """\
from site_builder.chapters import PAGES
"""

NAN_CHAPTER = """\
import dataclasses

from site_builder.chapters import PAGES as ALL
from site_builder.chapters import ch24


def _run():
    return ch24.run(ch24.Constants(input=(float("nan"), -1.0))).result()


PAGES = [dataclasses.replace(p, run=_run) if p.slug == "ch24" else p for p in ALL]
"""

PREVIOUS = "<p>the previous site</p>\n"


class Project:
    """A copy of mkdocs.yml, docs/, overrides/ and templates/ whose plugin reads copies of the golden files (``golden/SLUG/``)."""

    def __init__(self, root: Path, cache: Path, pages_module: str = EVERY_PAGE):
        self.root = root
        shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
        shutil.copytree(ROOT / "docs", root / "docs")
        shutil.copytree(ROOT / "overrides", root / "overrides")
        shutil.copytree(ROOT / "templates", root / "templates")
        (root / "pages_under_test.py").write_text(pages_module, encoding="utf-8")
        for p in PAGES:
            golden = root / "golden" / p.slug
            golden.mkdir(parents=True)
            for path in (p.golden_trace, p.golden_report):
                if path is not None:
                    shutil.copy(path, golden / path.name)
        config = (root / "mkdocs.yml").read_text(encoding="utf-8")
        plugin = (
            "  - chapter-trace:\n"
            "      pages: pages_under_test:PAGES\n"
            "      golden_dir: golden\n"
            f"      cache_dir: {cache}\n"
        )
        assert "  - chapter-trace\n" in config
        (root / "mkdocs.yml").write_text(config.replace("  - chapter-trace\n", plugin), encoding="utf-8")
        (root / "site").mkdir()
        (root / "site" / "index.html").write_text(PREVIOUS, encoding="utf-8")

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        content = path.read_text(encoding="utf-8")
        assert old in content, f"{old!r} not in {relative}"
        path.write_text(content.replace(old, new, 1), encoding="utf-8")

    def insert_before(self, relative: str, marker: str, line: str) -> int:
        """Insert ``line`` before the first line that contains ``marker``; the inserted line's number."""
        path = self.root / relative
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        at = next(i for i, text in enumerate(lines) if marker in text)
        lines.insert(at, line)
        path.write_text("".join(lines), encoding="utf-8")
        return at + 1

    def build(self, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict"],
            cwd=self.root,
            env=mkdocs_env(**env),
            capture_output=True,
            text=True,
        )

    def previous_site_intact(self) -> bool:
        leftovers = [p.name for p in self.root.iterdir() if p.name.startswith(".site-")]
        return (self.root / "site" / "index.html").read_text(encoding="utf-8") == PREVIOUS and not leftovers

    def failure(self, **env: str) -> str:
        """Build, expecting a failure: its one ERROR line. The previous site must be left as it was."""
        message = the_error(self.build(**env))
        assert self.previous_site_intact()
        return message


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def project(tmp_path: Path, shared_cache: Path) -> Project:
    return Project(tmp_path, shared_cache)


def errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("ERROR")]


def the_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout + done.stderr
    found = errors(done)
    assert len(found) == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return found[0]


def test_a_good_build_of_the_copy_replaces_the_previous_site(project):
    done = project.build()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "<p>the previous site</p>" not in (project.root / "site" / "index.html").read_text(encoding="utf-8")
    assert (project.root / "site" / "chapter-24" / "index.html").is_file()
    assert not [p for p in project.root.iterdir() if p.name.startswith(".site-")]
    assert not (project.root / "docs" / "chapter-24").exists()


def test_missing_dot_fails_naming_graphviz_and_keeps_the_site(project, tmp_path):
    empty = tmp_path / "no-tools"
    empty.mkdir()
    message = project.failure(PATH=str(empty))
    assert "Graphviz's `dot` was not found; install the Debian package graphviz" in message
    assert "templates/ch24/" in message


def test_stale_golden_trace_names_file_line_and_refresh_command(project):
    project.edit("golden/ch24/trace.txt", "output=[1.000000,-3.250000]", "output=[1.000000,-3.000000]")
    message = project.failure()
    assert "golden/ch24/trace.txt:3:" in message
    assert "stale" in message and "output=[1.000000,-3.250000]" in message
    assert "`site-builder trace --write-golden`" in message


def test_stale_golden_report_names_its_refresh_command(project):
    project.edit("golden/ch24/report.txt", "residual_output=shape:[2] values:[1.000000,-3.250000]", "residual_output=shape:[2] values:[1.000000,-3.000000]")
    message = project.failure()
    assert "golden/ch24/report.txt:6:" in message
    assert "`site-builder report --write-golden`" in message


def test_malformed_golden_trace_names_line_and_column(project):
    project.edit("golden/ch24/trace.txt", "FORWARD input=[2.000000,", "FORWARD input=[2.0,")
    message = project.failure()
    assert re.search(r"golden/ch24/trace\.txt:3:\d+: ", message), message
    assert "six decimals" in message


def test_template_syntax_error_names_file_and_line(project):
    line = project.insert_before("templates/ch24/page.md.j2", "## One formula", "{% if %}\n")
    message = project.failure()
    assert f"templates/ch24/page.md.j2:{line}: template syntax error" in message


def test_undefined_template_value_names_file_and_line(project):
    line = project.insert_before("templates/ch24/_figure.html.j2", '<div class="evidence-panels">', "{{ no_such_value }}\n")
    message = project.failure()
    assert f"templates/ch24/_figure.html.j2:{line}: undefined value" in message
    assert "no_such_value" in message


def test_unknown_fact_names_template_line_and_key(project):
    project.edit("templates/ch24/page.md.j2", 'tv("CONFIG.shape", "shape")', 'tv("CONFIG.shapes", "shape")')
    message = project.failure()
    assert re.search(r"templates/ch24/page\.md\.j2:\d+: unknown fact 'CONFIG\.shapes'", message), message


def test_missing_source_region_is_named(project):
    project.edit("templates/ch24/page.md.j2", '"residual_add") }}', '"no-such-region") }}')
    message = project.failure()
    assert "source region 'no-such-region' not found in site_builder/nn.py" in message
    assert "templates/ch24/page.md.j2:" in message


def test_nan_in_a_fixture_names_the_fixture_and_its_file(tmp_path, shared_cache):
    project = Project(tmp_path, shared_cache, NAN_CHAPTER)
    message = project.failure()
    assert "fixture 'primary'" in message and "NaN" in message
    assert "site_builder/chapters/ch24/fixtures.py:" in message


def test_a_strict_mode_warning_keeps_the_previous_site(project):
    (project.root / "docs" / "broken.md").write_text("# Broken\n\n[a link](nowhere.md)\n", encoding="utf-8")
    done = project.build()
    assert done.returncode != 0
    assert "nowhere.md" in done.stdout + done.stderr
    assert project.previous_site_intact()


# -- mkdocs serve behaviour, through the plugin's own hooks -------------------------------


class _Server:
    def __init__(self) -> None:
        self.watched: list[str] = []

    def watch(self, path: str) -> None:
        self.watched.append(path)


def test_serve_watches_the_package_and_the_templates():
    from site_builder.plugin import ChapterTracePlugin

    plugin = ChapterTracePlugin()
    plugin.load_config({})
    plugin.root = ROOT
    server = _Server()
    plugin.on_serve(server, config=None, builder=None)
    assert str(ROOT / "site_builder") in server.watched
    assert str(ROOT / "templates") in server.watched


def test_serve_only_warns_about_a_stale_golden(tmp_path, caplog):
    from mkdocs.exceptions import PluginError

    from site_builder.chapters import RunResult
    from site_builder.plugin import ChapterTracePlugin

    golden = tmp_path / "ch24"
    golden.mkdir()
    (golden / "trace.txt").write_text(GOLDEN_TRACE.read_text(encoding="utf-8").replace("3.250000", "3.000000", 1))
    shutil.copy(GOLDEN_REPORT, golden / "report.txt")
    result = RunResult(GOLDEN_TRACE.read_text(encoding="utf-8"), GOLDEN_REPORT.read_text(encoding="utf-8"), {})

    plugin = ChapterTracePlugin()
    plugin.load_config({"golden_dir": str(tmp_path)})
    plugin.on_startup(command="serve", dirty=False)
    with caplog.at_level("WARNING"):
        plugin._check_golden(CH24, result)
    assert any("site-builder trace --write-golden" in r.getMessage() for r in caplog.records)

    plugin.on_startup(command="build", dirty=False)
    with pytest.raises(PluginError, match="stale"):
        plugin._check_golden(CH24, result)


def test_docs_snapshot_sees_a_new_file(tmp_path):
    (tmp_path / "a.md").write_text("a", encoding="utf-8")
    before = docs_snapshot(tmp_path)
    (tmp_path / "b.md").write_text("b", encoding="utf-8")
    assert docs_snapshot(tmp_path) != before


def test_generated_pages_missing_from_the_nav_are_added_by_folder():
    import dataclasses

    from site_builder.plugin import _nav_entries

    chapter = dataclasses.replace(CH24, title="Chapter", page_path="chapter-24/index.md")
    first = dataclasses.replace(CH24, title="First", page_path="evidence/first.md")
    second = dataclasses.replace(CH24, title="Second", page_path="evidence/second.md")
    alone = dataclasses.replace(CH24, title="Alone", page_path="notes/alone.md")
    assert _nav_entries([chapter, first, second, alone]) == [
        {"Chapter": "chapter-24/index.md"},
        {"Evidence": [{"First": "evidence/first.md"}, {"Second": "evidence/second.md"}]},
        {"Alone": "notes/alone.md"},
    ]


# -- the rendering pieces on their own ----------------------------------------------------


def test_diagram_text_survives_quotes_backslashes_and_markup(tmp_path):
    import jinja2

    from site_builder.facts import FactBook
    from site_builder.render.diagrams import DiagramRenderer, dot_environment

    tricky = 'a "quoted" \\ back <b>&amp;'
    loader = jinja2.DictLoader(
        {"t.dot.j2": 'digraph t {\n{{ defaults }}\nn [{{ node("learned") }}, label="name\\n{{ value("n", "K", "name") }}"];\n}\n'}
    )
    renderer = DiagramRenderer(dot_environment(loader), tmp_path)
    drawn = renderer.render("t.dot.j2", FactBook({"K": tricky}), {}, diagram_id="t", title="T <&>", description_html="d")
    root = etree.fromstring(drawn.svg.encode("utf-8"))
    (value,) = root.xpath("//*[@data-trace='K']")
    assert value.text == tricky and value.get("data-format") == "name"
    assert root.xpath("//title")[0].text == "T <&>"
    again = renderer.render("t.dot.j2", FactBook({"K": tricky}), {}, diagram_id="t", title="T", description_html="d")
    assert (drawn.cached, again.cached) == (False, True)


def test_math_numbers_come_from_facts_and_typed_digits_are_refused():
    from site_builder.facts import FactBook
    from site_builder.render.math import MathError, MathRenderer

    maths = MathRenderer(FactBook({"V": (1.5, -2.0)}))
    mathml = maths.render(r"v = \tvec{V}")
    assert '<mrow class="tv" data-trace="V[1]" data-format="short"><mn>−2</mn></mrow>' in mathml
    assert maths.render(r"\mathrm{Linear}_2") and "<mn>2</mn>" in maths.render(r"\mathrm{Linear}_2")
    with pytest.raises(MathError, match="digit"):
        maths.render("y = 2x")


def test_math_with_a_spoken_form_is_named_by_it():
    from site_builder.facts import FactBook
    from site_builder.render.math import MathError, MathRenderer

    maths = MathRenderer(FactBook({}))
    assert maths.render(r"\bar{y}", spoken="y bar").startswith('<math aria-label="y bar" display="inline">')
    assert "aria-label" not in maths.render(r"\bar{y}")
    with pytest.raises(MathError, match="without digits"):
        maths.render(r"x_2", spoken="x two or x 2")


def test_regions_name_what_is_wrong(tmp_path):
    from site_builder.render.regions import RegionError

    (tmp_path / "m.py").write_text(
        "# region: good\nx = 1\n# endregion: good\n# region: open\ny = 2\n# region: twice\n# endregion: twice\n"
        "# region: twice\n# endregion: twice\n",
        encoding="utf-8",
    )
    assert extract_region(tmp_path, "m.py", "good").text == "x = 1\n"
    for name, why in (("absent", "not found in m.py"), ("open", "has no '# endregion: open'"), ("twice", "appears 2 times")):
        with pytest.raises(RegionError, match=re.escape(why)):
            extract_region(tmp_path, "m.py", name)


def test_two_cold_builds_are_byte_identical(tmp_path):
    """Same commit, empty caches both times: identical pages, diagrams, downloads and sitemap."""
    outputs = []
    for n in range(2):
        root = tmp_path / f"copy{n}"
        root.mkdir()
        project = Project(root, tmp_path / f"cache{n}")
        done = project.build()
        assert done.returncode == 0, done.stdout + done.stderr
        site = root / "site"
        outputs.append({p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()})
    assert outputs[0].keys() == outputs[1].keys()
    differing = [name for name in outputs[0] if outputs[0][name] != outputs[1][name]]
    assert differing == []
    assert any(b"<svg" in content for content in outputs[0].values())


def test_compiled_templates_are_reused_only_while_the_source_is_unchanged(tmp_path):
    from site_builder.render.diagrams import dot_environment
    from site_builder.render.templating import page_environment

    templates, compiled = tmp_path / "templates", tmp_path / "compiled"
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }} one\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="<b>") == "&lt;b&gt; one\n"
    assert list(compiled.rglob("*.cache")), "the compiled template is kept"
    (templates / "t.md.j2").write_text("{{ word }} two\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="<b>") == "&lt;b&gt; two\n"
    # An environment that escapes differently never loads the page environment's code.
    dot = dot_environment(page_environment(templates).loader, compiled)
    assert dot.get_template("t.md.j2").render(word='"') == '\\" two\n'
