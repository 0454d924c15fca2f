"""The built chapter-26 page: its order, its links both ways, its two diagrams, its sources and its collapsed code."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html as lxml_html

from helpers import PROJECT, SLUGS, next_links, resolves, shown_text

PAGE = PROJECT.page("ch26")
ROLES = ("query", "key", "value")


@pytest.fixture(scope="module")
def chapter(built_site: Path):
    return lxml_html.document_fromstring((built_site / PAGE.html_path).read_bytes())


def test_sections_come_in_the_learner_first_order(chapter):
    ids = [h.get("id") for h in chapter.xpath("//article//h2")]
    assert ids == [
        "predict",
        "formula",
        "figure",
        "backward",
        "history",
        "test-yourself",
        "cheat-sheet",
        "exercises",
        "code",
        "next",
    ]


def test_each_question_has_its_check_collapsed_below_it(chapter):
    for section, count, summary in (
        ("predict", 4, "Check your answer"),
        ("test-yourself", 9, "Check your answer"),
        ("exercises", 3, "Show the solution"),
    ):
        (heading,) = chapter.xpath(f"//h2[@id='{section}']")
        (listing,) = heading.xpath("following-sibling::ol[contains(@class, 'quiz')][1]")
        items = listing.xpath("./li")
        assert len(items) == count, section
        for item in items:
            (details,) = item.xpath("./details")
            assert details.get("open") is None and shown_text(details.xpath("./summary")[0]) == summary
            if section != "test-yourself":  # every prediction and solution shows a computed value
                assert details.xpath(".//*[@data-trace]"), shown_text(item)


def test_chapter_25_links_here_and_this_chapter_links_back(built_site, chapter):
    assert built_site / PAGE.html_path in next_links(built_site, "ch25")
    ch25 = PROJECT.page("ch25")
    # the first link of the lesson itself: the notation note under the title comes before it on every page
    first = chapter.xpath(
        "//article//a[not(contains(@class, 'headerlink')) and not(ancestor::p[contains(@class, 'notation-note')])]"
    )[0]
    assert resolves(built_site, PAGE.url, first.get("href")) == built_site / ch25.html_path


def test_the_next_section_links_to_chapter_27_once_it_exists(built_site):
    found = next_links(built_site, "ch26")
    if "ch27" in SLUGS:
        assert built_site / PROJECT.page("ch27").html_path in found
    else:
        assert found == []


def test_the_forward_diagram_draws_each_branch_with_its_own_weight_and_view(chapter):
    (svg,) = chapter.xpath("//svg[@id='qkv-forward']")
    for role in ROLES:
        shown = {
            t.get("data-trace")
            for t in svg.xpath(f".//g[contains(@class, 'node') and contains(@class, '{role}')]//text[@data-trace]")
        }
        assert shown == {f"PROJECTION[{role}].weights", f"PROJECTION[{role}].output"}, role
        edges = svg.xpath(f".//g[contains(@class, 'edge') and contains(@class, '{role}')]")
        assert len(edges) == 2, role  # from the input, and from the branch's own weight


def test_the_backward_diagram_merges_three_routes_at_one_input_gradient(chapter):
    (svg,) = chapter.xpath("//svg[@id='qkv-backward']")
    (merge,) = svg.xpath(".//g[contains(@class, 'node') and contains(@class, 'merge')]")
    assert merge.xpath(".//text")  # the sum, drawn with its own node
    edges = svg.xpath(".//g[contains(@class, 'edge')]")
    assert len(edges) == 3 * len(ROLES) + 1  # per branch: to its weight gradient, to its route, route to the sum
    (out,) = svg.xpath(".//g[contains(@class, 'node') and contains(@class, 'output')]//text[@data-trace]")
    assert out.get("data-trace") == "BACKWARD.input_gradient"
    for role in ROLES:
        shown = {
            t.get("data-trace")
            for t in svg.xpath(f".//g[contains(@class, 'node') and contains(@class, '{role}')]//text[@data-trace]")
        }
        assert shown == {f"BACKWARD.{role}_upstream", f"WEIGHT_GRADIENT[{role}].values", f"DERIVED.route.{role}"}


def test_the_legend_names_each_line_style_in_words(chapter):
    legend = chapter.xpath("//figure[@id='qkv-forward-figure']//ul[contains(@class, 'routes-legend')]")[0]
    words = shown_text(legend)
    assert all(w in words for w in ("solid", "dashed", "dotted", "double"))


def test_the_sources_are_linked(chapter):
    hrefs = {a.get("href") for a in chapter.xpath("//a[contains(@class, 'citation')]")}
    assert hrefs == {"https://arxiv.org/abs/1409.0473", "https://arxiv.org/abs/1706.03762"}


def test_the_refusals_quote_the_layer_in_the_course_order(chapter):
    rows = chapter.xpath("//table[@id='error-table']/tbody/tr")
    cases = [r.xpath(".//th/span[@data-trace]")[0] for r in rows]  # each case, said in words
    assert [c.get("data-trace") for c in cases] == [
        f"ERROR[{c}].case" for c in ("rank-two", "input-width", "branch-mismatch")
    ]
    assert shown_text(cases[1]) == "an input one feature too wide"
    assert shown_text(rows[1].xpath(".//q")[0]) == "Q/K/V input final width must equal model width 3, got 4"


def test_code_is_collapsed_and_comes_after_the_diagrams(chapter):
    excerpts = chapter.xpath("//figure[contains(@class, 'code-excerpt')]")
    assert len(excerpts) >= 7 and all(f.xpath("ancestor::details[not(@open)]") for f in excerpts)
    order = {el: i for i, el in enumerate(chapter.iter())}
    (backward,) = chapter.xpath("//svg[@id='qkv-backward']")
    assert order[backward] < min(order[f] for f in excerpts)


def test_the_downloads_are_the_goldens(built_site, chapter):
    folder = built_site / PAGE.url
    assert (folder / "qkv-projections-v1.trace.txt").read_bytes() == PAGE.golden_trace.read_bytes()
    assert (folder / "chapter-26-report.txt").read_bytes() == PAGE.golden_report.read_bytes()
