"""The built site: values in the right places, provenance on every number, and builds that fail safely.

The first half reads the session's strict build (``built_site``). The second
half builds temporary copies of the project (mkdocs.yml, docs/, templates/)
with one thing broken each, and checks that the build stops with one message
naming the file and the cause, and that the previous ``site/`` survives.
"""

from __future__ import annotations

import gzip
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from lxml import etree
from lxml import html as lxml_html

from helpers import PAGES, ROOT, SiteBuild, docs_snapshot, faults, layout, mkdocs_env, page
from site_builder.facts import format_fact
from site_builder.render.regions import extract_region

CH24 = page("ch24")
GOLDEN_TRACE, GOLDEN_REPORT = CH24.golden_trace, CH24.golden_report
MINUS = "\u2212"
REGIONS = {
    "site_builder/nn.py#residual_add",
    "pages/ch24/fixtures.py#primary-fixture",
    "pages/ch24/fixtures.py#zero-branch-fixture",
    "pages/ch24/fixtures.py#stack-fixture",
    "pages/ch24/fixtures.py#gradient-check-fixture",
    "pages/ch24/exercises.py#exercise-depth",
}


@pytest.fixture(scope="module")
def facts(runs):
    return dict(runs["ch24"].facts)


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
    classes = {
        t.getparent().get("class") for t in svg(chapter, "routes-forward").xpath(".//text[@data-trace='FORWARD.input']")
    }
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
    assert any("They agreed within 0.000002." in p for p in panels), panels
    assert any("generic addition accepted the pair, and residual_add refused it" in p for p in panels), panels
    assert not any(re.search(r"\b(true|false)\b", p) for p in panels), "panels are sentences, not logs"


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
    assert [s.get("data-trace") for s in rows[5].xpath("./td/span")] == [
        "STACK-GRADIENT.plain",
        "STACK-GRADIENT.residual",
    ]
    assert text(rows[5].xpath("./td")[1]) == "[0.316406, 0.316406]"
    names = chapter.xpath("//p[contains(@class, 'stack-parameters')]//span[@data-trace]")
    assert [text(n) for n in names] == list(facts["STACK-GRADIENT.parameters"])


def quiz(chapter, section: str):
    (heading,) = chapter.xpath(f"//h2[@id='{section}']")
    (listing,) = heading.xpath("following-sibling::ol[contains(@class, 'quiz')][1]")
    return listing.xpath("./li")


def test_two_predictions_first_each_with_its_collapsed_check_below(chapter):
    items = quiz(chapter, "predict")
    assert len(items) == 2
    for item in items:
        (details,) = item.xpath("./details")
        assert details.get("open") is None and text(details.xpath("./summary")[0]) == "Check your answer"
    assert "=[1,−3.25]." in text(items[0].xpath("./details")[0]).replace(" ", "")
    before = "".join(chapter.xpath("//h2[@id='predict']/following-sibling::ol[1]/preceding::text()"))
    assert "3.25" not in before, "nothing above a check gives its answer away"
    article = text(chapter.xpath("//article")[0])
    assert "later" not in article.split("One formula")[0], "no promise of a reveal further down"


def test_eight_questions_each_with_its_collapsed_check(chapter):
    items = quiz(chapter, "test-yourself")
    assert len(items) == 8
    answers = [item.xpath("./details")[0] for item in items]
    assert all(a.get("open") is None for a in answers)
    assert "SHAPE-ERROR.identity" in [el.get("data-trace") for el in answers[0].xpath(".//*[@data-trace]")]
    assert text(answers[6]).removeprefix("Check your answer").strip().startswith("No.")
    assert "data-trace" in etree.tostring(answers[6]).decode()
    predictions = {text(item.xpath("./p")[0]) for item in quiz(chapter, "predict")}
    assert not predictions & {text(item.xpath("./p")[0]) for item in items}, "no question repeats a prediction"


def test_three_exercises_with_solutions_computed_and_collapsed(chapter):
    items = quiz(chapter, "exercises")
    assert len(items) == 3
    keys = {el.get("data-trace") for item in items for el in item.xpath("./details//*[@data-trace]")}
    assert {
        "MEASURED.exercise-cancel.input-gradient",
        "MEASURED.exercise-scale.residual",
        "MEASURED.exercise-depth.depth",
    } <= {k.split("[")[0] for k in keys}


def test_sections_come_in_the_specified_order(chapter):
    ids = [h.get("id") for h in chapter.xpath("//article//h2")]
    assert ids == [
        "problem",
        "predict",
        "formula",
        "figure",
        "backward",
        "depth",
        "transformer",
        "history",
        "test-yourself",
        "cheat-sheet",
        "exercises",
        "code",
        "next",
    ]


# Evidence pages that train, which the chapter's text does not link yet. Each links back to the chapter section it
# supports instead; a page leaves this set as soon as the chapter links it (the second test below says when).
def depth_section_hrefs(chapter) -> set[str]:
    (heading,) = chapter.xpath("//h2[@id='depth']")
    following = heading.xpath("following-sibling::*")
    section = []
    for el in following:
        if el.tag == "h2":
            break
        section.append(el)
    return {a.get("href") for el in section for a in el.xpath(".//a")}


def links_to(hrefs: set[str], url: str) -> bool:
    return any(h and h.rstrip("/").endswith(url.rstrip("/").rsplit("/", 1)[-1]) for h in hrefs)


def test_the_chapter_links_every_evidence_page_from_its_depth_section(chapter):
    hrefs = depth_section_hrefs(chapter)
    for p in PAGES:
        if p.section == "Evidence":
            assert links_to(hrefs, p.url), p.slug


@pytest.mark.parametrize("slug", [p.slug for p in PAGES if p.section == "Evidence"])
def test_every_evidence_page_links_back_to_a_section_of_the_chapter(built_site, slug):
    own = lxml_html.fromstring((built_site / page(slug).html_path).read_bytes())
    back = [
        a.get("href")
        for a in own.xpath("//article//a")
        if "chapter-24/" in (a.get("href") or "") and "#" in a.get("href")
    ]
    assert back, f"{slug} links to no section of the chapter"


def test_the_symbols_table_holds_meanings_not_the_worked_values(chapter):
    (table,) = chapter.xpath("//table[@id='roles-table']")
    assert not table.xpath(".//*[@data-trace]")


def test_code_is_collapsed_and_comes_after_the_first_diagram(chapter):
    excerpts = chapter.xpath("//figure[contains(@class, 'code-excerpt')]")
    assert excerpts and all(f.xpath("ancestor::details[not(@open)]") for f in excerpts)
    order = {el: i for i, el in enumerate(chapter.iter())}
    first_diagram = chapter.xpath("//svg[contains(@class, 'dg')]")[0]
    assert order[first_diagram] < min(order[f] for f in excerpts)
    assert not [
        f for f in excerpts if "report.py" in f.get("data-source", "") or "trace.py" in f.get("data-source", "")
    ]


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
    for entry in (*layout("ch24").keys(), *CH24.shows):
        key = entry.split()[-1]  # an entry may start with where the value is drawn
        assert key in shown or any(s.startswith(key + "[") for s in shown), entry


def test_numbers_in_math_carry_provenance(chapter):
    maths = chapter.xpath("//math")
    assert len(maths) > 20
    numbers = chapter.xpath("//math//mn")
    assert numbers

    def in_index(el) -> bool:  # inside the subscript of an msub/munder: an index such as l+1, not a quantity
        for child, parent in zip([el, *el.iterancestors()], el.iterancestors()):
            if parent.tag in ("msub", "msubsup", "munder", "munderover") and list(parent).index(child) == 1:
                return True
        return False

    for mn in numbers:
        parent = mn.getparent()
        if in_index(mn):
            continue
        assert parent.tag == "mrow" and parent.get("data-trace"), f"<mn>{mn.text}</mn> without provenance"


def test_prose_digits_come_only_from_provenance_or_citations(built_site):
    fresh = lxml_html.document_fromstring((built_site / "chapter-24" / "index.html").read_bytes())  # edited below
    (article,) = fresh.xpath("//article")
    for el in article.xpath(".//*[@data-trace] | .//*[@data-source] | .//a[contains(@class, 'citation')]"):
        el.clear(keep_tail=True)  # drop what is verified elsewhere, keep the prose around it
    for el in article.xpath(".//msub/*[2] | .//msubsup/*[2] | .//munder/*[2]"):
        el.clear(keep_tail=True)  # an index such as the l + 1 of x_(l+1) is not a quantity
    leftover = re.findall(r"(?<![A-Za-z0-9_])\d+", "".join(article.itertext()))
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
        assert (built_site / p.html_path).is_file(), p.page_path
        for name in p.download_names(layout(p.slug).version):
            assert (built_site / p.url / name).is_file(), name


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
    lines = [line for line in site_build.log.splitlines() if "chapter-trace:" in line and "fixtures:" not in line]
    assert len(lines) == 1, lines
    progress = [line for line in site_build.log.splitlines() if "chapter-trace: fixtures:" in line]
    assert not progress or re.search(
        r"fixtures: \d+ of \d+ pages ran, \d+ cached(, \d+ failed)?, \d+\.\d\d s on \d+ process(es)?$", progress[-1]
    ), progress
    pages = len(PAGES)
    records = sum(len(p.golden_trace.read_text(encoding="utf-8").splitlines()) for p in PAGES)
    pattern = (
        rf"chapter-trace: {pages} pages? \((\d+) unchanged, (\d+) rendered\), {records} records, "
        r"(\d+) diagrams? drawn \((\d+) laid out, (\d+) cached\), \d+\.\d\d s$"
    )
    match = re.search(pattern, lines[0])
    assert match, lines[0]
    unchanged, rendered_pages, total, laid_out, cached = map(int, match.groups())
    assert unchanged + rendered_pages == pages and total == laid_out + cached
    assert total >= 2 if rendered_pages == pages else True, "every page rendered draws every diagram"


# -- builds of a temporary copy ----------------------------------------------------------

PREVIOUS = "<p>the previous site</p>\n"


class Project:
    """A copy of mkdocs.yml, docs/, overrides/, templates/ and pages/, with a site/ that holds a previous build.

    Its cache starts with the repository's fixture results (the session's build filled them), so a copy runs
    only the fixtures a test changes; its compiled templates and diagrams start cold.
    """

    def __init__(self, root: Path, cache: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for kind in ("fixtures", "imports"):
            seed = ROOT / ".cache" / kind
            if seed.is_dir() and not (cache / kind).exists():
                shutil.copytree(seed, cache / kind)
        shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
        for folder in ("docs", "overrides", "templates", "pages"):
            shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "test_*.py"))
        config = (root / "mkdocs.yml").read_text(encoding="utf-8")
        plugin = f"  - chapter-trace:\n      cache_dir: {cache}\n"
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
        return self.leftovers() == [] and (self.root / "site" / "index.html").read_text(encoding="utf-8") == PREVIOUS

    def leftovers(self) -> list[str]:
        """Staging folders and old sites beside the site (the build lock file stays: it is how builds take turns)."""
        return sorted(
            p.name for p in self.root.iterdir() if p.name.startswith(".site-") and p.name != ".site-site.lock"
        )

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
    assert project.leftovers() == []
    assert not (project.root / "docs" / "chapter-24").exists()


def test_missing_dot_fails_naming_graphviz_and_keeps_the_site(project, tmp_path):
    empty = tmp_path / "no-tools"
    empty.mkdir()
    message = project.failure(PATH=str(empty))
    assert "Graphviz's `dot` was not found; install the Debian package graphviz" in message
    assert "pages/ch24/" in message


def test_stale_golden_trace_names_file_line_and_refresh_command(project):
    project.edit("pages/ch24/golden/trace.txt", "output=[1.000000,-3.250000]", "output=[1.000000,-3.000000]")
    message = project.failure()
    assert "pages/ch24/golden/trace.txt:3:" in message
    assert "stale" in message and "output=[1.000000,-3.250000]" in message
    assert "`site-builder trace --page ch24 --write-golden`" in message


def test_stale_golden_report_names_its_refresh_command(project):
    project.edit(
        "pages/ch24/golden/report.txt",
        "residual_output=shape:[2] values:[1.000000,-3.250000]",
        "residual_output=shape:[2] values:[1.000000,-3.000000]",
    )
    message = project.failure()
    assert "pages/ch24/golden/report.txt:6:" in message
    assert "`site-builder report --page ch24 --write-golden`" in message


def test_malformed_golden_trace_names_line_and_column(project):
    project.edit("pages/ch24/golden/trace.txt", "FORWARD input=[2.000000,", "FORWARD input=[2.0,")
    message = project.failure()
    assert re.search(r"pages/ch24/golden/trace\.txt:3:\d+: ", message), message
    assert "six decimals" in message


def test_template_syntax_error_names_file_and_line(project):
    line = project.insert_before("pages/ch24/page.md.j2", "## One formula", "{% if %}\n")
    message = project.failure()
    assert f"pages/ch24/page.md.j2:{line}: template syntax error" in message


def test_undefined_template_value_names_file_and_line(project):
    line = project.insert_before("pages/ch24/_figure.html.j2", '<div class="evidence-panels">', "{{ no_such_value }}\n")
    message = project.failure()
    assert f"pages/ch24/_figure.html.j2:{line}: undefined value" in message
    assert "no_such_value" in message


def test_unknown_fact_names_template_line_and_key(project):
    project.edit(
        "pages/ch24/page.md.j2", 'tv("SHAPE-ERROR.identity", "shape")', 'tv("SHAPE-ERROR.identities", "shape")'
    )
    message = project.failure()
    assert re.search(r"pages/ch24/page\.md\.j2:\d+: unknown fact 'SHAPE-ERROR\.identities'", message), message


def test_missing_source_region_is_named(project):
    project.edit("pages/ch24/page.md.j2", '"residual_add") }}', '"no-such-region") }}')
    message = project.failure()
    assert "source region 'no-such-region' not found in site_builder/nn.py" in message
    assert "pages/ch24/page.md.j2:" in message


def test_nan_in_a_fixture_names_the_fixture_and_its_file(project):
    project.edit(
        "pages/ch24/fixtures.py",
        "input: tuple[float, ...] = (2.0, -1.0)",
        'input: tuple[float, ...] = (float("nan"), -1.0)',
    )
    message = project.failure()
    assert "fixture 'constants'" in message and "NaN" in message
    assert "pages/ch24/fixtures.py:" in message


def test_a_number_typed_into_a_page_fails_the_build_naming_the_template_line(project):
    line = project.insert_before("pages/deep_stack/page.md.j2", "## The experiment", "We ran 42 experiments.\n\n")
    done = project.build()
    assert done.returncode != 0 and project.previous_site_intact()
    lines = (done.stdout + done.stderr).splitlines()
    # The edit also makes the Russian twin's translation stale; that warning names the Russian file.
    warnings = [w for w in lines if w.startswith("WARNING") and "translation is stale" not in w]
    assert len(warnings) == 1, warnings
    assert "evidence/deep-stack/index.html" in warnings[0] and "'42'" in warnings[0]
    assert f"(pages/deep_stack/page.md.j2:{line})" in warnings[0]


def test_a_title_with_a_colon_is_the_page_heading_and_nothing_leaks(project):
    project.edit("pages/claims/page.toml", 'title = "Claims, tested"', 'title = "Claims: tested, one by one"')
    done = project.build()
    assert done.returncode == 0, done.stdout + done.stderr
    html = (project.root / "site" / "evidence" / "claims" / "index.html").read_text(encoding="utf-8")
    assert '<h1 id="top">Claims: tested, one by one</h1>' in html
    assert "title:" not in html.split("<article", 1)[1]
    assert "<title>Claims: tested, one by one" in html


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


def test_serve_watches_the_package_the_pages_and_the_templates():
    from helpers import PROJECT
    from site_builder.plugin import ChapterTracePlugin

    plugin = ChapterTracePlugin()
    plugin.load_config({})
    plugin.project = PROJECT
    server = _Server()
    plugin.on_serve(server, config=None, builder=None)
    assert {str(ROOT / "site_builder"), str(ROOT / "pages"), str(ROOT / "templates")} <= set(server.watched)


@pytest.mark.slow
def test_serve_only_warns_about_a_stale_golden_and_serves_the_fresh_values(project):
    import socket
    import time
    import urllib.request

    project.edit("pages/ch24/golden/trace.txt", "output=[1.000000,-3.250000]", "output=[1.000000,-3.000000]")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "--no-livereload", "-a", f"127.0.0.1:{port}"],
        cwd=project.root,
        env=mkdocs_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        log: list[str] = []
        deadline = time.monotonic() + 120
        assert server.stdout is not None
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            log.append(line)
            if "Serving on" in line or server.poll() is not None:
                break
        text = "".join(log)
        assert "Serving on" in text, text
        warnings = [line for line in log if line.startswith("WARNING") and "stale" in line]
        assert len(warnings) == 1 and "`site-builder trace --page ch24 --write-golden`" in warnings[0], text
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/chapter-24/", timeout=30) as response:
            assert "Keep an identity path" in response.read().decode("utf-8")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_docs_snapshot_sees_a_new_file(tmp_path):
    (tmp_path / "a.md").write_text("a", encoding="utf-8")
    before = docs_snapshot(tmp_path)
    (tmp_path / "b.md").write_text("b", encoding="utf-8")
    assert docs_snapshot(tmp_path) != before


def test_generated_pages_are_added_to_the_nav_in_order_and_by_section():
    import dataclasses

    from site_builder.project import nav_additions

    chapter = dataclasses.replace(CH24, title="Chapter", url="chapter-24/")
    first = dataclasses.replace(CH24, title="First", url="evidence/first/", section="Evidence")
    alone = dataclasses.replace(CH24, title="Alone", url="notes/alone/")
    second = dataclasses.replace(CH24, title="Second", url="evidence/second/", section="Evidence")
    listed = [{"Home": "index.md"}, {"Listed": ["chapter-24/index.md"]}]
    assert nav_additions(listed, [chapter, first, alone, second]) == [
        {"Evidence": [{"First": "evidence/first/index.md"}, {"Second": "evidence/second/index.md"}]},
        {"Alone": "notes/alone/index.md"},
    ], "a page the navigation lists already, however deep, is not added again"
    assert nav_additions(None, [chapter, first, alone, second]) == [
        {"Chapter": "chapter-24/index.md"},
        {"Evidence": [{"First": "evidence/first/index.md"}, {"Second": "evidence/second/index.md"}]},
        {"Alone": "notes/alone/index.md"},
    ]


# -- the rendering pieces on their own ----------------------------------------------------


def test_diagram_text_survives_quotes_backslashes_and_markup(tmp_path):
    import jinja2

    from site_builder.cache import Store
    from site_builder.facts import FactBook
    from site_builder.project import EDGE_ROLES, NODE_ROLES
    from site_builder.render.diagrams import DiagramRenderer, dot_environment

    tricky = 'a "quoted" \\ back <b>&amp;'
    loader = jinja2.DictLoader(
        {
            "t.dot.j2": 'digraph t {\n{{ defaults }}\nn [{{ node("step") }}, label="name\\n{{ value("n", "K", "name") }}"];\n}\n'
        }
    )
    renderer = DiagramRenderer(Store(tmp_path, print))
    roles = {"node_roles": NODE_ROLES, "edge_roles": EDGE_ROLES}
    env = dot_environment(loader)
    drawn = renderer.render(
        env, "t.dot.j2", FactBook({"K": tricky}), {}, diagram_id="t", title="T <&>", description_html="d", **roles
    )
    root = etree.fromstring(drawn.svg.encode("utf-8"))
    (value,) = root.xpath("//*[@data-trace='K']")
    assert value.text == tricky and value.get("data-format") == "name"
    assert root.xpath("//title")[0].text == "T <&>"
    again = renderer.render(
        env, "t.dot.j2", FactBook({"K": tricky}), {}, diagram_id="t", title="T", description_html="d", **roles
    )
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
    (tmp_path / "f.py").write_text("# region: fn\n\ndef f():\n    return 1\n\n\n# endregion: fn\n", encoding="utf-8")
    assert extract_region(tmp_path, "f.py", "fn").text == "def f():\n    return 1\n"
    for name, why in (
        ("absent", "not found in m.py"),
        ("open", "has no '# endregion: open'"),
        ("twice", "appears 2 times"),
    ):
        with pytest.raises(RegionError, match=re.escape(why)):
            extract_region(tmp_path, "m.py", name)


def test_two_cold_builds_are_byte_identical(fixture_results, tmp_path):
    """Same commit, another day, time zone and LANG setting: identical pages, diagrams, downloads, sitemap and gzipped
    sitemap. The first build is the session's build from nothing (``fixture_results``); the second starts with
    only the fixture results (every page rendered and drawn again), its clock at November 2023 (a gzip file can
    carry the day it was written)."""
    project = Project(tmp_path / "copy", tmp_path / "cache")
    done = project.build(TZ="Pacific/Kiritimati", LANG="ru_RU.UTF-8", **faults(now=1_700_000_000))
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = []
    for site in (fixture_results / "site", project.root / "site"):
        outputs.append({p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()})
    assert outputs[0].keys() == outputs[1].keys()
    differing = [name for name in outputs[0] if outputs[0][name] != outputs[1][name]]
    assert differing == []
    assert any(b"<svg" in content for content in outputs[0].values())
    assert gzip.decompress(outputs[0]["sitemap.xml.gz"]).startswith(b"<?xml")


def test_compiled_templates_are_reused_only_while_the_source_is_unchanged(tmp_path):
    from site_builder.cache import Store
    from site_builder.render.diagrams import dot_environment
    from site_builder.render.templating import page_environment

    templates, compiled = tmp_path / "templates", Store(tmp_path / "cache", print)
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }} one\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="<b>") == "&lt;b&gt; one\n"
    assert list((tmp_path / "cache" / "templates").iterdir()), "the compiled template is kept"
    (templates / "t.md.j2").write_text("{{ word }} two\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="<b>") == "&lt;b&gt; two\n"
    # An environment that escapes differently never loads the page environment's code.
    dot = dot_environment(page_environment(templates).loader, compiled)
    assert dot.get_template("t.md.j2").render(word='"') == '\\" two\n'


# -- damaged caches, killed and concurrent builds, I/O failures -------------------------------------


def warnings_of(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("WARNING")]


def new_site(project: Project) -> bool:
    """site/ holds a whole new build: every page, none of the previous site."""
    site = project.root / "site"
    return (
        (site / "chapter-24" / "index.html").is_file()
        and "the previous site" not in (site / "index.html").read_text(encoding="utf-8")
        and (site / "sitemap.xml.gz").is_file()
    )


@pytest.fixture
def own_cache(tmp_path: Path) -> Project:
    """A copy with a cache of its own, filled by one good build (its site then put back to the previous one)."""
    project = Project(tmp_path / "copy", tmp_path / "cache")
    done = project.build()
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(project.root / "site")
    (project.root / "site").mkdir()
    (project.root / "site" / "index.html").write_text(PREVIOUS, encoding="utf-8")
    return project


@pytest.fixture
def warm_copy(tmp_path: Path, fixture_results: Path) -> Project:
    """A copy with a cache of its own, as a good build of it leaves it: the cache of the session's build from
    nothing, made for a copy of the same files. Its entries are named by contents, which the copies share, except
    the compiled templates of the copy's own templates, named by their files' paths (``own_cache`` has those)."""
    shutil.copytree(fixture_results / ".cache", tmp_path / "cache")
    return Project(tmp_path / "copy", tmp_path / "cache")


def test_damaged_cache_entries_are_rebuilt_with_one_warning_each_and_strict_still_passes(own_cache, tmp_path):
    project, cache = own_cache, tmp_path / "cache"
    diagram = sorted((cache / "diagrams").iterdir())[0]
    diagram.write_bytes(diagram.read_bytes()[:200])
    compiled = sorted((cache / "templates").iterdir())[0]
    compiled.write_bytes(b"\x80\x04garbage")
    (fixtures,) = (cache / "fixtures").glob("claims-*")
    fixtures.unlink()
    fixtures.mkdir()
    rendered = sorted((cache / "pages").iterdir())[0]
    rendered.write_bytes(rendered.read_bytes()[:-10])
    for entry in (cache / "pages").iterdir():  # every other page is rendered again, so the caches under it are read
        if entry != rendered:
            entry.unlink()
    done = project.build()
    assert done.returncode == 0, done.stdout + done.stderr
    warned = warnings_of(done)
    assert len(warned) == 4, warned
    for damaged in (diagram, compiled, fixtures, rendered):
        assert any(damaged.name in line and "damaged cache entry" in line for line in warned), (damaged, warned)
    assert new_site(project) and project.leftovers() == []
    again = project.build()
    assert again.returncode == 0 and warnings_of(again) == [], "the entries were replaced by good ones"


def test_a_damaged_page_verdict_is_one_warning_and_the_next_build_mends_it(warm_copy, tmp_path):
    """A number-scan verdict, a shown-values verdict and a page's search entries each damaged: one warning each,
    each page read again."""
    damaged = [sorted((tmp_path / "cache" / kind).iterdir())[0] for kind in ("scan", "shown", "search")]
    for entry in damaged:
        entry.unlink()
        entry.mkdir()  # a folder where the entry goes: written over by the build, not warned about on every build
    done = warm_copy.build()
    assert done.returncode == 0, done.stdout + done.stderr
    warned = warnings_of(done)
    assert len(warned) == 3, warned
    for entry in damaged:
        said = f"{entry.parent.name}/{entry.name}: damaged cache entry (it is a folder, not a file)"
        assert any(said in line for line in warned), warned
    again = warm_copy.build()
    assert again.returncode == 0 and warnings_of(again) == [], warnings_of(again)
    assert all(entry.is_file() for entry in damaged)


def test_a_dot_that_exits_0_with_no_drawing_fails_the_build_and_poisons_no_later_one(warm_copy, tmp_path):
    import os

    from test_caches import fake_dot

    shutil.rmtree(tmp_path / "cache" / "diagrams")
    fake = fake_dot(tmp_path / "bin", b"<svg><g>")
    message = warm_copy.failure(PATH=f"{fake}{os.pathsep}{os.environ['PATH']}")
    assert "`dot` gave output that is not an SVG drawing" in message and "pages/ch24/" in message
    done = warm_copy.build()
    assert done.returncode == 0, done.stdout + done.stderr
    assert new_site(warm_copy)


def test_a_build_killed_mid_way_leaves_the_site_and_the_next_build_removes_its_leftovers(project):
    killed = project.build(**faults({"op": "write", "match": "*/.site-site-*/chapter-24/index.html", "action": "kill"}))
    assert killed.returncode == -9
    assert (project.root / "site" / "index.html").read_text(encoding="utf-8") == PREVIOUS
    assert len(project.leftovers()) == 1  # its staging folder, partly written
    terminated = project.build(
        **faults({"op": "write", "match": "*/.site-site-*/chapter-24/index.html", "action": "term"})
    )
    assert terminated.returncode != 0 and "Traceback" not in terminated.stderr
    assert project.previous_site_intact(), "SIGTERM cleans up as Ctrl-C does, and the killed build's folder went first"
    swapped_then_killed = project.build(**faults({"op": "remove", "match": "*/.site-site-*", "action": "kill"}))
    assert swapped_then_killed.returncode == -9 and new_site(project)  # killed while removing the old site
    done = project.build()
    assert done.returncode == 0 and new_site(project) and project.leftovers() == []


def test_two_builds_at_once_take_turns(project, tmp_path):
    mark, release = tmp_path / "first-is-writing", tmp_path / "go-on"
    first = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=project.root,
        text=True,
        env=mkdocs_env(
            **faults(
                {
                    "op": "write",
                    "match": "*/.site-site-*/sitemap.xml",
                    "action": "pause",
                    "mark": str(mark),
                    "until": str(release),
                }
            )
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        first_log = ""
        while not mark.exists():
            assert first.poll() is None, first.communicate()[0]
            subprocess.run(["sleep", "0.05"])
        second = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "build", "--strict"],
            cwd=project.root,
            text=True,
            env=mkdocs_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert second.stdout is not None
        second_log = ""
        while "waiting for it to finish" not in second_log:
            line = second.stdout.readline()
            assert line, second_log
            second_log += line
        release.write_text("", encoding="utf-8")
        first_log = first.communicate(timeout=300)[0]
        second_log += second.communicate(timeout=300)[0]
    finally:
        release.write_text("", encoding="utf-8")
        for process in (first, locals().get("second")):
            if process is not None and process.poll() is None:
                process.kill()
    assert first.returncode == 0 and second.returncode == 0, first_log + second_log
    assert "Traceback" not in first_log + second_log
    assert new_site(project) and project.leftovers() == []


def test_a_read_only_previous_site_is_replaced_and_removed(project):
    import os
    import stat

    old = project.root / "site"
    (old / "index.html").chmod(stat.S_IRUSR)
    old.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        done = project.build()
    finally:
        for folder in [p for p in project.root.glob(".site-*") if p.is_dir()] + [old]:
            if folder.exists():
                os.chmod(folder, stat.S_IRWXU)
    assert done.returncode == 0, done.stdout + done.stderr
    assert new_site(project) and project.leftovers() == [] and warnings_of(done) == []


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        (
            {"op": "write", "match": "*/.site-site-*/assets/*", "errno": "ENOSPC"},
            "site/assets/images/favicon.png: cannot build the site: no space left on the device",
        ),
        (
            {"op": "write", "match": "*/.site-site-*/chapter-24/index.html", "errno": "ENOSPC"},
            "site/chapter-24/index.html: cannot build the site: no space left on the device",
        ),
        (
            {"op": "mkdir", "match": "*/copy/.site-site-*", "errno": "EROFS"},
            "cannot create the staging folder: the file system is read-only",
        ),
        (
            {"op": "write", "match": "*/copy/.site-site.lock", "errno": "EACCES"},
            ".site-site.lock: cannot create the build lock: permission denied",
        ),
    ],
    ids=["disk-full-theme-assets", "disk-full-page", "read-only-root-staging", "read-only-root-lock"],
)
def test_a_site_that_cannot_be_written_is_one_line_and_the_old_site_stays(tmp_path, shared_cache, rule, words):
    project = Project(tmp_path / "copy", shared_cache)
    message = project.failure(**faults(rule))
    assert words in message, message


@pytest.mark.slow
def test_a_cache_that_cannot_be_written_is_one_warning_per_cache_and_the_build_succeeds(tmp_path):
    project = Project(tmp_path / "copy", tmp_path / "cache")
    shutil.rmtree(tmp_path / "cache" / "imports")  # every kind but the fixture results has something to write
    before = {p for p in (tmp_path / "cache").rglob("*") if p.is_file()}  # the fixture results it starts from
    done = project.build(**faults({"op": "write", "match": f"{tmp_path}/cache/*", "errno": "ENOSPC"}))
    assert done.returncode == 0, done.stdout + done.stderr
    warned = warnings_of(done)
    kinds = [
        "compiled-template cache",
        "diagram cache",
        "rendered-page cache",
        "import-list cache",
        "number-scan cache",
        "shown-values cache",
        "search-entry cache",
    ]
    if "fixtures: " in done.stderr:  # fixtures ran (their results were not all there to start from)
        kinds.append("fixture cache")
    assert len(warned) == len(kinds), warned
    for kind in kinds:
        assert any(f"cannot write the {kind}: no space left on the device" in line for line in warned), warned
    assert new_site(project)
    assert {p for p in (tmp_path / "cache").rglob("*") if p.is_file()} == before, "nothing half-written"
    read_only = Project(tmp_path / "copy2", tmp_path / "cache2")
    done = read_only.build(**faults({"op": "mkdir", "match": f"{tmp_path}/cache2*", "errno": "EROFS"}))
    assert done.returncode == 0, done.stdout + done.stderr
    assert any("the file system is read-only" in line for line in warnings_of(done)), warnings_of(done)


@pytest.mark.parametrize(
    ("breakage", "words"),
    [
        ("folder", "pages/ch24/golden/trace.txt: golden trace is a folder, not a file"),
        ("unreadable", "pages/ch24/golden/trace.txt: golden trace cannot be read: permission denied"),
        ("huge", "pages/ch24/golden/trace.txt:3:"),
    ],
)
def test_a_golden_that_cannot_be_read_is_one_bounded_line(project, breakage, words):
    golden = project.root / "pages" / "ch24" / "golden" / "trace.txt"
    env: dict[str, str] = {}
    if breakage == "folder":
        golden.unlink()
        golden.mkdir()
    elif breakage == "unreadable":
        env = faults({"op": "read", "match": "*/pages/ch24/golden/trace.txt", "errno": "EACCES"})
    else:
        project.edit(
            "pages/ch24/golden/trace.txt",
            "output=[1.000000,-3.250000]",
            "output=[1.000000,-3.25" + "9" * 5_000_000 + "]",
        )
    message = project.failure(**env)
    assert words in message and len(message) < 3000, message[:3000]
    if breakage == "huge":
        assert "characters]" in message


@pytest.mark.parametrize(
    ("slug", "lang"), [(p.slug, lang) for p in PAGES if p.slug != "notation" for lang in p.languages]
)
def test_every_page_links_the_notation_of_its_language_right_under_its_title(built_site, slug, lang):
    twin = page(slug).twin(lang)
    tree = lxml_html.fromstring((built_site / twin.html_path).read_bytes())
    (heading,) = tree.xpath("//article//h1")
    note = heading.getnext()
    assert note is not None and note.tag == "p" and "notation-note" in (note.get("class") or ""), (
        f"{twin.html_path}: the paragraph under the title is not the notation note"
    )
    target = page("notation").twin(lang).html_path
    hrefs = [a.get("href") or "" for a in note.xpath(".//a")]
    folder = posixpath.dirname(twin.html_path)
    resolved = [posixpath.normpath(posixpath.join(folder, href, "index.html")) for href in hrefs]
    assert target in resolved, f"{twin.html_path}: the notation note links {hrefs}, not {target}"


# A generator's seed, not the gradient a backward pass is seeded with ("Seed it with the upstream gradient").
SEED_WORD = {
    "en": re.compile(r"\bseeds\b|\b(?:a|one|the|each|every|same|its|with|from)\s+seeds?\b", re.IGNORECASE),
    "ru": re.compile(r"\bсид(?:а|у|ом|е|ы|ов|ам|ами|ах)?\b"),
}


def test_a_page_that_speaks_of_seeds_links_the_notations_seed_where_it_first_does(built_site):
    """A seed is defined once, on the notation page; every other page links that definition from the first
    paragraph, list item or caption of its article that uses the word."""
    speaking = set()
    for p in PAGES:
        if p.slug == "notation":
            continue
        for lang in p.languages:
            twin = p.twin(lang)
            tree = lxml_html.fromstring((built_site / twin.html_path).read_bytes())
            blocks = tree.xpath("//article//*[self::p or self::li or self::figcaption or self::td or self::summary]")
            first = next((b for b in blocks if SEED_WORD[lang].search(b.text_content())), None)
            if first is None:
                continue
            speaking.add(p.slug)
            folder = posixpath.dirname(twin.html_path)
            target = page("notation").twin(lang).html_path
            links = [
                posixpath.normpath(posixpath.join(folder, href.removesuffix("#seeds"), "index.html"))
                for href in (a.get("href") or "" for a in first.xpath(".//a"))
                if href.endswith("#seeds")
            ]
            assert target in links, f"{twin.html_path}: {first.text_content()[:120]!r} does not link {target}#seeds"
    assert {"blocks", "claims", "degradation", "init_schemes", "prenorm", "skip_patterns"} <= speaking, speaking
