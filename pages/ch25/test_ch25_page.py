"""The built chapter-25 page: its order, its links both ways, its diagram, its sources and its collapsed code."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html as lxml_html

from helpers import PROJECT, resolves, shown_text

PAGE = PROJECT.page("ch25")


@pytest.fixture(scope="module")
def chapter(built_site: Path):
    return lxml_html.document_fromstring((built_site / PAGE.html_path).read_bytes())


def test_sections_come_in_the_learner_first_order(chapter):
    ids = [h.get("id") for h in chapter.xpath("//article//h2")]
    assert ids == [
        "predict",
        "formula",
        "figure",
        "scale",
        "contrast",
        "backward",
        "test-yourself",
        "cheat-sheet",
        "history",
        "code",
        "next",
    ]


def test_each_prediction_and_question_has_its_check_collapsed_below_it(chapter):
    for section, count in (("predict", 4), ("test-yourself", 8)):
        (heading,) = chapter.xpath(f"//h2[@id='{section}']")
        (listing,) = heading.xpath("following-sibling::ol[contains(@class, 'quiz')][1]")
        items = listing.xpath("./li")
        assert len(items) == count
        for item in items:
            (details,) = item.xpath("./details")
            assert details.get("open") is None and shown_text(details.xpath("./summary")[0]) == "Check your answer"
            if section == "predict":  # every check of a prediction shows the computed answer
                assert details.xpath(".//*[@data-trace]"), shown_text(item)


def test_chapter_24_links_to_this_chapter_and_the_link_resolves(built_site):
    ch24 = PROJECT.page("ch24")
    doc = lxml_html.document_fromstring((built_site / ch24.html_path).read_bytes())
    (heading,) = doc.xpath("//h2[@id='next']")
    links = [a.get("href") for el in heading.xpath("following-sibling::*") for a in el.xpath(".//a")]
    found = [resolves(built_site, ch24.url, h) for h in links if h]
    assert built_site / PAGE.html_path in found, links


def test_this_chapter_links_back_to_chapter_24s_transformer_section(built_site, chapter):
    ch24 = PROJECT.page("ch24")
    backs = [a.get("href") for a in chapter.xpath("//article//a[contains(@href, '#transformer')]")]
    assert backs
    doc = lxml_html.document_fromstring((built_site / ch24.html_path).read_bytes())
    assert doc.xpath("//h2[@id='transformer']")
    assert all(resolves(built_site, PAGE.url, h.split("#")[0]) == built_site / ch24.html_path for h in backs)


def test_the_navigation_lists_both_chapters_in_order(chapter):
    titles = [
        shown_text(a)
        for a in chapter.xpath("//nav[contains(@class, 'md-nav--primary')]//a[contains(@class, 'md-nav__link')]")
    ]
    ch24, ch25 = PROJECT.page("ch24").title, PAGE.title
    assert ch24 in titles and ch25 in titles and titles.index(ch24) < titles.index(ch25)


def test_the_pipeline_diagram_shows_each_step_in_its_node_and_the_identity_path_bypasses_it(chapter):
    (svg,) = chapter.xpath("//svg[@id='prenorm-block']")
    shown = {t.get("data-trace") for t in svg.xpath(".//text[@data-trace]")}
    assert {
        "PRIMARY.input",
        "PRIMARY.mean_square",
        "PRIMARY.inverse_rms",
        "PRIMARY.normalized",
        "PRIMARY.gain",
        "PRIMARY.output",
    } <= shown
    (cluster,) = svg.xpath(".//g[contains(@class, 'cluster')]")
    inside = {
        t.get("data-trace") for t in cluster.xpath("following-sibling::g[contains(@class, 'node')]//text[@data-trace]")
    }
    assert "PRIMARY.normalized" in inside
    identity = svg.xpath(".//g[contains(@class, 'edge') and contains(@class, 'identity')]")
    assert len(identity) == 1, "one identity edge, from the stream straight to the merge"


def test_the_sources_are_linked(chapter):
    hrefs = {a.get("href") for a in chapter.xpath("//a[contains(@class, 'citation')]")}
    papers = ("1502.03167", "1607.06450", "1910.07467", "2002.04745", "2302.13971")
    gpt2 = "https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf"
    assert hrefs == {f"https://arxiv.org/abs/{n}" for n in papers} | {gpt2}


def test_code_is_collapsed_and_comes_after_the_diagram(chapter):
    excerpts = chapter.xpath("//figure[contains(@class, 'code-excerpt')]")
    assert len(excerpts) >= 6 and all(f.xpath("ancestor::details[not(@open)]") for f in excerpts)
    order = {el: i for i, el in enumerate(chapter.iter())}
    (diagram,) = chapter.xpath("//svg[@id='prenorm-block']")
    assert order[diagram] < min(order[f] for f in excerpts)


def test_the_scale_table_has_the_three_modes_in_order(chapter):
    rows = chapter.xpath("//table[@id='scale-table']/tbody/tr")
    assert [shown_text(r.xpath("./th")[0]) for r in rows] == ["ideal", "production", "near-zero"]


def test_the_downloads_are_the_goldens(built_site, chapter):
    folder = built_site / PAGE.url
    assert (folder / "rmsnorm-v1.trace.txt").read_bytes() == PAGE.golden_trace.read_bytes()
    assert (folder / "chapter-25-report.txt").read_bytes() == PAGE.golden_report.read_bytes()
    assert {a.get("href") for a in chapter.xpath("//a[@download]")} == {"rmsnorm-v1.trace.txt", "chapter-25-report.txt"}
