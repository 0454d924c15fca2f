"""``site-builder check``: the rules on small pages, then the real built site and the command line."""

from __future__ import annotations

import base64
import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import PROJECT, faults, golden, page
from site_builder import check
from site_builder.check import ALLOWED, Facts, Fresh, Result, check_page, check_svg, html_path, refresh_command
from site_builder.check.excerpts import Sources
from site_builder.check.fresh import check_goldens
from site_builder.cli import main as cli_main
from site_builder.numerals import scan
from site_builder.pipeline import Pipeline

REPO = PROJECT.root
PAGE = page("ch24").html_path
CH24 = Pipeline(PROJECT, warn=lambda line: None).run_page("ch24")


CHAPTER_HEADING = (
    '<h1 id="top">Chapter <span class="tv" data-trace="PAGE.chapter" data-format="count">24</span>: '
    "Keep an identity path around each learned update</h1>"
)
HOME_HEADING = '<h1 id="top">Build an LLM from scratch</h1>'


def material(
    body: str,
    title: str = "Keep an identity path around each learned update - Course",
    nav: str = "",
    heading: str = CHAPTER_HEADING,
    footer: str = "",
    head: str = "",
) -> str:
    """A page shaped like Material's: title, navigation, content article, footer."""
    return (
        f"<!doctype html><html><head><title>{title}</title><style>.x{{width:12px}}</style>{head}</head><body>"
        f'<script>var a = 12;</script><div class="md-container"><nav class="md-nav" aria-label="Navigation">{nav}</nav>'
        f'<main><div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">'
        f"{heading}{body}</article></div></main>"
        f'<footer class="md-footer">{footer}</footer></div></body></html>'
    )


def tv(key: str, fmt: str, text: str | None = None, tag: str = "span") -> str:
    shown = text if text is not None else ch24_text(key, fmt)
    return f'<{tag} class="tv" data-trace="{key}" data-format="{fmt}">{shown}</{tag}>'


def ch24_text(key: str, fmt: str) -> str:
    from site_builder.facts import format_fact

    return format_fact(CH24.facts, key, fmt)


def report_of(prepared: check.Setup, html: str, page: str = PAGE) -> check.PageReport:
    """The page's own checks (values, excerpts, numbers), without the coverage of a whole chapter page."""
    return check.check_document(check.parse_html(html), page, prepared.facts_for(page), prepared.sources)


def lines(prepared: check.Setup, body: str, page: str = PAGE, **kw: str) -> list[str]:
    report = report_of(prepared, material(body, **kw), page)
    return [p.line() for p in report.problems]


# -- values with provenance ---------------------------------------------------------------


def test_values_that_match_pass_and_are_counted(prepared):
    body = f"<p>x is {tv('FORWARD.input', 'vector')}, y₂ is {tv('FORWARD.output[1]', 'short')}.</p>"
    report = report_of(prepared, material(body))
    assert report.problems == []
    assert report.values == 3  # the two, and the chapter number in the heading
    assert {s.key for s in report.shown} == {"FORWARD.input", "FORWARD.output[1]", "PAGE.chapter"}


def test_a_wrong_value_names_the_key_and_both_texts(prepared):
    found = lines(prepared, f"<h2 id='forward'>Forward</h2><p>y is {tv('FORWARD.output', 'vector', '[1, −3.26]')}</p>")
    assert found == [
        f'{PAGE}: span[data-trace=FORWARD.output] (section #forward): expected "[1, −3.25]", found "[1, −3.26]"'
    ]


def test_an_ascii_hyphen_is_not_the_displayed_minus(prepared):
    found = lines(prepared, f"<p>{tv('FORWARD.output[1]', 'short', '-3.25')}</p>")
    assert len(found) == 1 and 'expected "−3.25", found "-3.25"' in found[0]


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ('data-trace="FORWARD.nothing" data-format="short"', "unknown key 'FORWARD.nothing'"),
        ('data-trace="FORWARD.output[7]" data-format="short"', "unknown key 'FORWARD.output[7]'"),
        ('data-trace="FORWARD.output" data-format="fancy"', "data-format='fancy'"),
        ('data-trace="FORWARD.output"', "expected a data-format beside data-trace, found none"),
        ('data-format="short"', "expected a data-trace key beside data-format, found none"),
        ('data-trace="CONFIG.name" data-format="six"', "a value that format 'six' can show"),
    ],
)
def test_unknown_keys_formats_and_half_provenance_are_errors(prepared, attributes, message):
    found = lines(prepared, f"<p><span {attributes}>1</span></p>")
    assert len(found) == 1 and message in found[0], found


def test_mathml_values_compare_without_layout_whitespace(prepared):
    body = (
        "<math><mrow><msub><mi>x</mi><mn>2</mn></msub><mo>=</mo>"
        '<mrow data-trace="FORWARD.output" data-format="vector"><mo>[</mo><mn>1</mn><mo>,</mo>'
        "<mo>−</mo><mn>3.25</mn><mo>]</mo></mrow></mrow></math>"
    )
    assert lines(prepared, body) == []
    wrong = body.replace("<mn>3.25</mn>", "<mn>3.5</mn>")
    found = lines(prepared, wrong)
    assert len(found) == 1 and "mrow[data-trace=FORWARD.output] in math" in found[0] and 'found "[1,−3.5]"' in found[0]


# -- numbers without provenance -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "where", "number"),
    [
        ("<p>The output grows by 3 each time.</p>", "p", "'3'"),
        ("<h2 id='deep'>Depth 4</h2>", "h2", "'4'"),
        ("<table><tr><th>depth</th></tr><tr><td>0</td></tr></table>", "td in table row 2, column 1", "'0'"),
        ("<math><mrow><mi>x</mi><mo>+</mo><mn>5</mn></mrow></math>", "mn in math", "'5'"),
        ("<math><msup><mi>a</mi><mn>4</mn></msup></math>", "mn in math", "'4'"),
        ("<details><summary>Check</summary><p>It is −0.5.</p></details>", 'p in details "Check"', "'−0.5'"),
        ("<p>a (−0.25)⁴ factor</p>", "p", "'−0.25'"),
        ("<p>the 2x2 weight</p>", "p", "'2x2'"),
        ("<p>step 1e-6</p>", "p", "'1e-6'"),
        ("<p><a href='#x'>see 12</a></p>", "a", "'12'"),
        ("<p><code>residual.stack.7.branch.weight</code></p>", "code", "'residual.stack.7.branch.weight'"),
        ("<p>In 2015 deeper was worse.</p>", "p", "'2015'"),
        (
            "<svg id='forward'><g class='node'><title>out</title><text>y 3</text></g></svg>",
            "svg#forward node 'out' text",
            "'3'",
        ),
    ],
)
def test_a_number_without_provenance_is_an_error_naming_its_place(prepared, body, where, number):
    found = lines(prepared, body)
    assert any(f": {where}" in line and f"found {number}" in line for line in found), found


@pytest.mark.parametrize(
    ("body", "where", "number"),
    [
        ("<p>Accuracy <sub>99.9</sub> percent</p>", "sub", "'99.9'"),
        ("<p>x<sub>2</sub> and y<sup>3</sup></p>", "sub", "'2'"),
        ("<p>x<sub>2</sub> and y<sup>3</sup></p>", "sup", "'3'"),
        ("<p>Accuracy ４２ percent</p>", "p", "'４２'"),
        ("<p>Accuracy ٤٢ percent</p>", "p", "'٤٢'"),
        ("<p>Accuracy ₄₂ percent</p>", "p", "'₄₂'"),
        ("<p>Accuracy 𝟒𝟐 percent, ½ of it</p>", "p", "'𝟒𝟐'"),
        ("<p>Accuracy 𝟒𝟐 percent, ½ of it</p>", "p", "'½'"),
        ("<p>step Ⅻ</p>", "p", "'Ⅻ'"),
        ("<math><msub><mi>x</mi><mrow><mi>a</mi><mo>+</mo><mn>0.5</mn></mrow></msub></math>", "mn in math", "'0.5'"),
        ("<math><msub><mi>x</mi><mrow><mi>a</mi><mo>×</mo><mn>2</mn></mrow></msub></math>", "mn in math", "'2'"),
        ("<math><munder><mo>∑</mo><mn>3</mn></munder></math>", "mn in math", "'3'"),
        ("<p><img alt='42 percent' src='a.png'></p>", "img[alt]", "'42'"),
        ("<p><abbr title='about 42'>it</abbr></p>", "abbr[title]", "'42'"),
        ("<p><span aria-label='42 of them'>many</span></p>", "span[aria-label]", "'42'"),
        ("<p><span aria-description='42 of them'>many</span></p>", "span[aria-description]", "'42'"),
        ("<ol start='42'><li>percent</li></ol>", "ol[start]", "'42'"),
        ("<svg id='s'><title>42 nodes</title></svg>", "svg#s title", "'42'"),
        ('<style>p::before { content: "Accuracy 4\\32 " }</style><p>x</p>', "style content", "'42'"),
        (
            "<p><img alt='' src='a.png'> <span data-trace='FORWARD.input' data-format='vector' title='42'>[2, −1]</span></p>",
            "span[title]",
            "'42'",
        ),
        (
            "<p><img alt='' src=\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'%3E%3Ctext%3E42%3C/text%3E"
            '%3C/svg%3E"></p>',
            "img[src]",
            "'42'",
        ),
        (
            f"<p><img alt='' src='data:image/svg+xml;base64,{base64.b64encode(b'<svg><text>42</text></svg>').decode()}'></p>",
            "img[src]",
            "'42'",
        ),
        ("<p><iframe srcdoc='&lt;p&gt;Accuracy 42 percent&lt;/p&gt;'></iframe></p>", "iframe[srcdoc]", "'42'"),
        (
            '<style>p { background: url("data:image/svg+xml,<svg><text>42</text></svg>") }</style><p>x</p>',
            "style content",
            "'42'",
        ),
    ],
)
def test_every_number_a_reader_sees_or_hears_is_read(prepared, body, where, number):
    found = lines(prepared, body)
    assert any(f": {where}" in line and f"found {number}" in line for line in found), found


def test_the_footer_the_head_and_shown_attributes_are_read(prepared):
    found = lines(
        prepared,
        "<p>x</p>",
        footer="<p>Accuracy 99.9 percent</p>",
        head="<meta name='description' content='Accuracy 42 percent'>",
    )
    assert any(": p " in line and "found '99.9'" in line for line in found), found
    assert any(": meta[name=description]" in line and "found '42'" in line for line in found), found
    shown = lines(prepared, "<style>p::after { content: attr(data-x) }</style><p data-x='42'>x</p>")
    assert any(": p[data-x]" in line and "found '42'" in line for line in shown), shown


def test_an_excerpt_figure_is_read_outside_its_code_and_its_caption_names_its_source(prepared):
    ref = "site_builder/nn.py#residual_add"
    code = excerpt(Sources(REPO).region(ref))
    caption = "<figcaption><code>site_builder/nn.py</code>, region <code>residual_add</code></figcaption>"
    figure = f'<figure class="code-excerpt" data-source="{ref}">{caption}{{}}{code.split(">", 1)[1][:-6]}</figure>'
    assert lines(prepared, figure.format("")) == []
    inside = lines(prepared, figure.format("<p>Accuracy 42 percent</p>"))
    assert len(inside) == 1 and ": p " in inside[0] and "found '42'" in inside[0], inside
    renamed = lines(prepared, figure.format("").replace("region <code>residual_add", "region <code>residual_42"))
    assert len(renamed) == 1 and 'expected "site_builder/nn.py, region residual_add"' in renamed[0], renamed


def test_the_404_heading_is_allowed_on_the_404_page_only(prepared):
    assert lines(prepared, "<h2>404 - Not found</h2>", page="404.html", heading=HOME_HEADING) == []
    found = lines(prepared, "<h2>404 - Not found</h2>", page="index.html", heading=HOME_HEADING)
    assert len(found) == 1 and "found '404'" in found[0], found


def test_a_superscript_exponent_is_a_number(prepared):
    found = lines(prepared, f"<p>{tv('DERIVED.plain-multiplier', 'exact')}⁴</p>")
    assert len(found) == 1 and "found '⁴'" in found[0]


def test_title_and_navigation_labels_are_read(prepared):
    found = lines(prepared, "<p>text</p>", title="Depth 4 - Course", nav="<a class='md-nav__link'>Top 10</a>")
    assert any(line.startswith(f"{PAGE}: title:") and "'4'" in line for line in found), found
    assert any("nav[aria-label=Navigation] a" in line and "'10'" in line for line in found), found


@pytest.mark.parametrize(
    ("body", "number"),
    [
        ("<p>Chapter 99 adds RMSNorm.</p>", "'99'"),
        ("<p>He, Zhang, Ren, Sun (2015) found it.</p>", "'2015'"),
        ("<p>as arXiv:1512.03385 says</p>", "'1512.03385'"),
    ],
)
def test_chapter_numbers_years_and_ids_need_provenance_too(prepared, body, number):
    found = lines(prepared, body)
    assert any(f"found {number}" in line for line in found), found


def test_a_citation_rendered_from_page_toml_passes(prepared):
    year = tv("CITE.he2015.year", "count")
    arxiv = tv("CITE.he2015.arxiv", "name")
    body = f"<p><a class='citation' href='https://arxiv.org/abs/1512.03385'>He et al. ({year}), arXiv:{arxiv}</a></p>"
    assert lines(prepared, body) == []
    assert 'expected "2015", found "2016"' in " ".join(lines(prepared, body.replace(">2015<", ">2016<")))


@pytest.mark.parametrize(
    "body",
    [
        "<p>h1, x2, float64, ch24, W12, log₁₀ and x₂</p>",
        "<math><msub><mi>x</mi><mn>2</mn></msub><msub><mi>log</mi><mn>10</mn></msub>"
        "<msub><mi>x</mi><mrow><mi>l</mi><mo>+</mo><mn>1</mn></mrow></msub></math>",
        "<p><code>residual.stack.0.branch.weight</code> and <code>residual.branch.weight</code></p>",
        "<p style='width: 10px' data-x='3'><img alt='' width='20' src='a1.svg'>words</p>",
    ],
)
def test_allowed_numbers_identifiers_known_names_and_attributes_pass(prepared, body):
    assert lines(prepared, body) == []


def test_every_allow_list_entry_says_why():
    assert ALLOWED and len(ALLOWED) <= 8
    for entry in ALLOWED:
        assert entry.name and len(entry.reason) > 20
        assert entry.pattern.search("nothing to see here 7") is None


def test_scan_finds_signed_decimal_and_exponent_forms():
    assert [f.text for f in scan("a −3.25, +2, -1.5e-3 and 0.00390625")] == ["−3.25", "+2", "-1.5e-3", "0.00390625"]


def test_scripts_styles_and_theme_chrome_are_not_read(prepared):
    report = report_of(prepared, material("<p>words</p>"))
    assert report.problems == []  # the skeleton's <script> and <style> both hold 12


# -- code excerpts --------------------------------------------------------------------------


def excerpt(code: str, ref: str = "site_builder/nn.py#residual_add") -> str:
    from html import escape

    return f'<div class="highlight" data-source="{ref}"><pre><span></span><code>{escape(code)}</code></pre></div>'


def test_an_excerpt_of_the_current_region_passes_and_its_numbers_are_not_prose(prepared):
    region = Sources(REPO).region("site_builder/nn.py#residual_add")
    assert "[2,2]" in region
    assert lines(prepared, excerpt(region)) == []


def test_an_edited_excerpt_is_named_with_the_line_that_differs(prepared):
    region = Sources(REPO).region("site_builder/nn.py#residual_add")
    report = report_of(prepared, material(excerpt(region.replace("[2,2] + [2]", "[3,2] + [2]"))))
    assert len(report.problems) == 1
    problem = report.problems[0]
    assert problem.element == "div[data-source=site_builder/nn.py#residual_add] (section #top)"
    assert "line 4 of site_builder/nn.py#residual_add" in problem.expected and "[3,2] + [2]" in problem.found
    assert any(d.startswith("+") and "[3,2]" in d for d in problem.detail)


def test_an_excerpt_of_a_missing_region_is_an_error(prepared):
    found = lines(prepared, excerpt("pass", "site_builder/nn.py#no-such-region"))
    assert len(found) == 1 and "a region 'no-such-region' in site_builder/nn.py" in found[0]


def test_an_excerpt_reference_without_a_region_names_what_it_found(prepared):
    found = lines(prepared, excerpt("pass", "site_builder/nn.py"))
    assert found == [
        f"{PAGE}: div[data-source=site_builder/nn.py] (section #top): "
        "expected a PATH#REGION reference, found 'site_builder/nn.py'"
    ]


def test_excerpt_regions_are_read_as_the_pages_read_them(tmp_path):
    (tmp_path / "code.py").write_text("# region: a\nx = 1\n# endregion: a\n# region: b\ny = 2\n")
    sources = Sources(tmp_path)
    assert sources.region("code.py#a") == "x = 1\n"
    with pytest.raises(check.excerpts.RegionError) as caught:
        sources.region("code.py#b")
    assert caught.value.expected == "a region 'b' in code.py"
    assert caught.value.found == "none: source region 'b' in code.py has no '# endregion: b' line"


def test_an_excerpt_of_a_file_that_is_not_utf8_is_an_error(tmp_path):
    (tmp_path / "code.py").write_bytes(b"# region: a\nx = '\xff'\n# endregion: a\n")
    with pytest.raises(check.excerpts.RegionError, match="a UTF-8 source file code.py, found invalid start byte"):
        Sources(tmp_path).region("code.py#a")


# -- drawings -------------------------------------------------------------------------------


def test_a_standalone_svg_is_read_with_its_namespace(prepared):
    svg = (
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" id="stack"><title>Stack</title>'
        '<g class="node"><title>depth4</title>'
        f'<text data-trace="STACK[4].plain" data-format="vector">{ch24_text("STACK[4].plain", "vector")}</text>'
        '<text data-trace="STACK[4].residual" data-format="vector">[1, 2]</text><text>4 layers</text></g></svg>'
    )
    report = check_svg(svg.encode(), "chapter-24/stack.svg", Facts(CH24.facts), prepared.sources)
    found = [p.line() for p in report.problems]
    assert found == [
        "chapter-24/stack.svg: svg#stack node 'depth4' text[data-trace=STACK[4].residual]: "
        'expected "[0.632812, −0.316406]", found "[1, 2]"',
        "chapter-24/stack.svg: svg#stack node 'depth4' text: expected a number with provenance (data-trace) "
        "or an allowed one, found '4' in \"4 layers\"",
    ]
    assert report.values == 2


# -- pages, goldens, facts --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("page_path", "built"),
    [
        ("chapter-24/index.md", "chapter-24/index.html"),
        ("index.md", "index.html"),
        ("about.md", "about/index.html"),
        ("evidence/deep.md", "evidence/deep/index.html"),
    ],
)
def test_built_page_paths_follow_directory_urls(page_path, built):
    assert html_path(page_path) == built


def test_a_site_file_belongs_to_the_generated_page_whose_folder_holds_it(prepared):
    fresh = prepared.fresh
    assert fresh.owner(PAGE).source.slug == "ch24"
    assert fresh.owner("chapter-24/stack.svg").source.slug == "ch24"
    assert fresh.owner("chapter-24/residual-connections-v1.trace.txt").source.slug == "ch24"
    assert fresh.owner("stack.svg") is None and fresh.owner("index.html") is None
    assert prepared.facts_for("index.html") is fresh.union


def test_a_malformed_shows_entry_names_what_it_found(prepared):
    from site_builder.check.site import check_coverage

    page = prepared.fresh.by_html_path[PAGE]
    page = dataclasses.replace(
        page, keys=(), source=dataclasses.replace(page.source, shows=("svg#a>g FORWARD.input", " "))
    )
    assert [p.line() for p in check_coverage(page, [])] == [
        f"{PAGE}: shows 'svg#a>g FORWARD.input': expected a selector made of a tag, #id and .class parts, found 'svg#a>g'",
        f"{PAGE}: shows ' ': expected a fact key, optionally after selectors, found ' '",
    ]


def test_refresh_commands_name_the_page():
    assert refresh_command(page("ch24"), "trace") == "site-builder trace --page ch24 --write-golden"
    assert refresh_command(page("claims"), "report") == "site-builder report --page claims --write-golden"


def chapter_only(prepared: check.Setup) -> Fresh:
    return Fresh(PROJECT, tuple(p for p in prepared.fresh.pages if p.source.slug == "ch24"))


def test_a_stale_golden_prints_a_diff_and_the_refresh_command(prepared, tmp_path):
    stale = tmp_path / "trace.txt"
    stale.write_text(golden("ch24").replace("output=[1.000000,-3.250000]", "output=[1.000000,-3.500000]"))
    problems = check_goldens(chapter_only(prepared), {("ch24", "trace"): stale})
    assert len(problems) == 1
    text = problems[0].text()
    assert text.startswith(f"{stale}: golden trace: expected the fresh run's trace (first difference on line 3) (")
    assert "refresh: site-builder trace --page ch24 --write-golden" in text
    assert "-FORWARD input=[2.000000,-1.000000] branch=[-1.000000,-2.250000] output=[1.000000,-3.500000]" in text
    assert "+FORWARD input=[2.000000,-1.000000] branch=[-1.000000,-2.250000] output=[1.000000,-3.250000]" in text


def test_the_repository_goldens_agree_with_a_fresh_run(prepared):
    assert check_goldens(prepared.fresh) == []


def test_a_golden_that_is_not_utf8_is_a_problem_not_a_crash(prepared, tmp_path):
    broken = tmp_path / "trace.txt"
    broken.write_bytes(b"TRACE \xff\n")
    problems = check_goldens(chapter_only(prepared), {("ch24", "trace"): broken})
    assert [p.line() for p in problems] == [
        f"{broken}: golden trace: expected a UTF-8 text (refresh: site-builder trace --page ch24 --write-golden), "
        "found bytes that are not UTF-8 (invalid start byte at byte 6)"
    ]


def test_a_missing_golden_names_the_command_that_writes_it(prepared, tmp_path):
    problems = check_goldens(chapter_only(prepared), {("ch24", "report"): tmp_path / "gone.txt"})
    assert [p.line() for p in problems] == [
        f"{tmp_path / 'gone.txt'}: golden report: expected a golden file "
        "(write: site-builder report --page ch24 --write-golden), found none"
    ]


def test_hand_written_pages_see_every_page_facts_and_disagreeing_keys_are_errors(prepared):
    body = f"<p>{tv('FORWARD.output', 'vector')}</p>"
    assert lines(prepared, body, page="index.html", heading=HOME_HEADING) == []
    first = prepared.fresh.pages[0]
    run = first.run
    changed = dataclasses.replace(run.trace, forward=dataclasses.replace(run.trace.forward, output=(9.0, 9.0)))
    twin_page = dataclasses.replace(first.source, slug="twin", url="twin/")
    other = dataclasses.replace(first, source=twin_page, run=dataclasses.replace(run, page=twin_page, trace=changed))
    twin = dataclasses.replace(prepared, fresh=Fresh(PROJECT, (first, other)))
    found = [p.line() for p in check_page(twin, "index.html", material(body, heading=HOME_HEADING)).problems]
    assert found == [
        "index.html: span[data-trace=FORWARD.output] (section #top): expected a key with one value across the site, found different values on ch24, twin"
    ]


def test_problems_print_in_a_stable_order_with_the_summary_last():
    result = Result(
        [
            check.Problem("b.html", 2, "p", "x", "y"),
            check.Problem("a.html", 9, "p", "x", "y"),
            check.Problem("a.html", 1, "td", "x", "y"),
            check.Problem("site_builder/g.txt", 0, "golden trace", "x", "y", ("-a", "+b"), group=0),
        ],
        pages=2,
        values=5,
    )
    assert result.render().splitlines() == [
        "site_builder/g.txt: golden trace: expected x, found y",
        "    -a",
        "    +b",
        "a.html: td: expected x, found y",
        "a.html: p: expected x, found y",
        "b.html: p: expected x, found y",
        "check: 2 pages, 5 values verified, 4 problems",
    ]


# -- the real build and the command line ----------------------------------------------------------


def test_the_untouched_build_agrees_with_a_fresh_run(prepared, built_site):
    result = check.check_site(built_site, prepared)
    assert result.problems == [], result.render()
    assert result.pages >= 3 and result.values >= 100
    assert result.render().splitlines()[-1] == result.summary()


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "site_builder.cli", "check", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_the_command_exits_0_when_the_site_agrees_1_when_it_does_not_2_when_there_is_no_site(built_site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(built_site, copy)
    agrees = run_cli(str(copy))
    assert agrees.returncode == 0, agrees.stdout + agrees.stderr
    assert agrees.stdout.splitlines()[-1].endswith(", 0 problems") and agrees.stderr == ""

    page = copy / PAGE
    page.write_text(
        page.read_text(encoding="utf-8").replace("</article>", "<p>About 42 of them.</p></article>"), encoding="utf-8"
    )
    disagrees = run_cli(str(copy))
    assert disagrees.returncode == 1
    out = disagrees.stdout.splitlines()
    assert out[-1].endswith(", 1 problems") and out[0].startswith(f"{PAGE}: p ") and "found '42'" in out[0]

    missing = run_cli(str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert (
        missing.stderr.strip()
        == f"site-builder: error: no site folder at {tmp_path / 'nowhere'} (build it first: mkdocs build)"
    )

    not_a_folder = run_cli(str(page))
    assert not_a_folder.returncode == 2 and len(not_a_folder.stderr.strip().splitlines()) == 1

    (copy / "unreadable.html").write_text("<p>hidden</p>", encoding="utf-8")  # a page the checker cannot read
    unreadable = run_cli(str(copy), env=faults({"op": "read", "match": "*/unreadable.html", "errno": "EACCES"}))
    assert unreadable.returncode == 2 and unreadable.stdout == ""
    assert unreadable.stderr == f"site-builder: error: {copy / 'unreadable.html'}: cannot read: permission denied\n"


def test_an_empty_page_or_broken_drawing_is_a_problem_not_a_crash(prepared, built_site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(built_site, copy)
    (copy / "empty.html").write_bytes(b"")
    (copy / "broken.svg").write_bytes(b"<svg><text>unclosed")
    found = [p.line() for p in check.check_site(copy, prepared).problems]
    unwritten = "file: expected a file the build writes (a page, a download or a copied file), found a file no build step writes"
    assert len(found) == 4
    assert found[0] == f"broken.svg: {unwritten}"
    assert found[1].startswith("broken.svg: file: expected a readable SVG document, found ")
    assert found[2] == f"empty.html: {unwritten}"
    assert found[3] == "empty.html: file: expected a readable HTML document, found an empty file"


def test_the_command_reads_site_by_default_through_cli_main(built_site, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert cli_main(["check", str(built_site)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("check: ")


def test_a_golden_that_is_a_folder_or_unreadable_is_a_problem_not_a_crash(prepared, tmp_path, monkeypatch):
    folder = tmp_path / "trace.txt"
    folder.mkdir()
    problems = check_goldens(chapter_only(prepared), {("ch24", "trace"): folder})
    assert [p.line() for p in problems] == [
        f"{folder}: golden trace: expected a golden file (refresh: site-builder trace --page ch24 --write-golden), "
        "found a folder"
    ]
    locked = tmp_path / "locked.txt"
    locked.write_text(golden("ch24"), encoding="utf-8")
    real = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    problems = check_goldens(chapter_only(prepared), {("ch24", "trace"): locked})
    assert len(problems) == 1 and problems[0].found == "permission denied", problems


def test_a_checked_page_is_freed_at_once_so_memory_stays_flat_across_pages(built_site):
    """The build scans every page, and check reads every page: each page's tree must go as soon as it is done
    with, not wait for the garbage collector (a cycle holding it kept every page of a build alive)."""
    import gc
    import types

    from site_builder.check.document import PageReport, _Doc, check_numbers, parse_html, visible_text

    data = (built_site / PAGE).read_bytes()

    def read() -> None:
        root = parse_html(data)
        check_numbers(_Doc.of(root, PAGE), frozenset(), PageReport())
        visible_text(root)

    def ours(thing: object) -> bool:
        """Made by the checker or its parser (the session's background threads make garbage of their own)."""
        if isinstance(thing, types.FunctionType):
            return thing.__module__.startswith("site_builder")
        if isinstance(thing, types.FrameType):
            return "site_builder" in thing.f_code.co_filename
        return type(thing).__module__.startswith(("site_builder", "lxml"))

    read()  # first use: caches fill, modules finish loading
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector would free is kept in gc.garbage, to be looked at
    try:
        read()
        gc.collect()
        left = [thing for thing in gc.garbage if ours(thing)]
        assert left == [], "only the collector could free these"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_name_shown_as_words_reads_its_hyphens_as_spaces():
    from site_builder.facts import format_fact

    assert format_fact({"VERDICT.verdict": "does-not-hold"}, "VERDICT.verdict", "words") == "does not hold"
    assert format_fact({"VERDICT.verdict": "holds"}, "VERDICT.verdict", "words") == "holds"
