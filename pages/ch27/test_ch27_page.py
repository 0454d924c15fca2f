"""The built chapter-27 page: its order, its links, its diagram, its weights table and its collapsed code."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html as lxml_html

from helpers import PROJECT, SLUGS, next_links, shown_text

PAGE = PROJECT.page("ch27")


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
        ("predict", 3, "Check your answer"),
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
            if section != "test-yourself":
                assert details.xpath(".//*[@data-trace]"), shown_text(item)


def test_chapter_26_links_here_and_this_chapter_announces_28_without_a_dead_link(built_site, chapter):
    assert built_site / PAGE.html_path in next_links(built_site, "ch26")
    found = next_links(built_site, "ch27")
    assert None not in found
    if "ch28" not in SLUGS:
        (heading,) = chapter.xpath("//h2[@id='next']")
        assert found == [] and "Chapter 28" in shown_text(heading.getnext())


def test_the_weights_table_has_queries_as_rows_keys_as_columns_and_checked_cells(chapter):
    (table,) = chapter.xpath("//table[@id='weights-table']")
    assert [shown_text(th) for th in table.xpath("./thead/tr/th")] == ["query", "key 0", "key 1", "row sum"]
    rows = table.xpath("./tbody/tr")
    assert [shown_text(r.xpath("./th")[0]) for r in rows] == ["query 0", "query 1"]
    for i, row in enumerate(rows):
        cells = row.xpath("./td")
        keys = [c.xpath(".//strong/span[@data-trace]")[0].get("data-trace") for c in cells[:2]]
        assert keys == [f"PROBABILITY_ROW[{i}].values[{j}]" for j in range(2)]
        assert cells[2].xpath(".//*[@data-trace]")[0].get("data-trace") == f"PROBABILITY_ROW[{i}].sum"
    marked = [
        (i, j) for i, r in enumerate(rows) for j, c in enumerate(r.xpath("./td")[:2]) if "later key" in shown_text(c)
    ]
    assert marked == [(0, 1)]
    shades = [c.get("class") for r in rows for c in r.xpath("./td")[:2]]
    assert shades == ["weight-faint", "weight-strong", "weight-strong", "weight-faint"]


def test_the_diagram_shows_scores_weights_and_each_output_at_a_double_border(chapter):
    (svg,) = chapter.xpath("//svg[@id='attention-flow']")
    (grid,) = svg.xpath(".//g[contains(@class, 'node') and contains(@class, 'grid')]")
    assert {t.get("data-trace") for t in grid.xpath(".//text[@data-trace]")} == {"SCALED_SCORES.values"}
    mixes = svg.xpath(".//g[contains(@class, 'node') and contains(@class, 'mix')]")
    assert len(mixes) == 2
    for i, mix in enumerate(mixes):
        shown = {t.get("data-trace") for t in mix.xpath(".//text[@data-trace]")}
        assert {f"MIXTURE_ROW[{i}].terms", f"MIXTURE_ROW[{i}].output"} <= shown
        assert len(mix.xpath(".//*[contains(@class, 'dg-shape')]")) == 2  # the double border


def test_the_sources_are_linked(chapter):
    hrefs = {a.get("href") for a in chapter.xpath("//a[contains(@class, 'citation')]")}
    assert hrefs == {"https://arxiv.org/abs/1409.0473", "https://arxiv.org/abs/1706.03762"}


def test_code_is_collapsed_and_the_downloads_are_the_goldens(built_site, chapter):
    excerpts = chapter.xpath("//figure[contains(@class, 'code-excerpt')]")
    assert len(excerpts) >= 6 and all(f.xpath("ancestor::details[not(@open)]") for f in excerpts)
    folder = built_site / PAGE.url
    assert (folder / "self-attention-v1.trace.txt").read_bytes() == PAGE.golden_trace.read_bytes()
    assert (folder / "chapter-27-report.txt").read_bytes() == PAGE.golden_report.read_bytes()
