"""What the browser renders: a value's text is what a reader sees, and whatever else writes text is read or refused.

Each case tampers the built chapter's HTML (or a copy of the site) and asserts the checker's one line for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import page
from site_builder.check import check_page, check_site
from site_builder.check.document import css_refused

CHAPTER = page("ch24").html_path
VALUE = '<span class="tv" data-trace="DERIVED.plain-multiplier" data-format="short">−0.25</span>'
WHERE = f"{CHAPTER}: span[data-trace=DERIVED.plain-multiplier] (section #depth)"


@pytest.fixture(scope="module")
def chapter(built_site: Path) -> str:
    html = (built_site / CHAPTER).read_text(encoding="utf-8")
    assert VALUE in html
    return html


def lines(prepared, html: str) -> list[str]:
    return [p.line() for p in check_page(prepared, CHAPTER, html).problems]


def first_value(prepared, chapter: str, tampered: str) -> list[str]:
    """The problems of the page with the first copy of VALUE replaced by ``tampered``."""
    return lines(prepared, chapter.replace(VALUE, tampered, 1))


VALUE_CASES = [
    (
        "hidden minus",
        VALUE.replace(">−0.25<", "><span hidden>−</span>0.25<"),
        "expected a value whose every character a reader sees, in its order, found a hidden <span>",
    ),
    (
        "template inside",
        VALUE.replace(">−0.25<", ">−0.<template>5</template>25<"),
        "expected a value whose every character a reader sees, in its order, found <template> inside it",
    ),
    (
        "display none inside",
        VALUE.replace(">−0.25<", '>−0.<span style="display:none">5</span>25<'),
        'expected a value whose every character a reader sees, in its order, found <span style="display:none">',
    ),
    (
        "bdo",
        VALUE.replace(">−0.25<", '><bdo dir="rtl">−0.25</bdo><'),
        "expected a value whose every character a reader sees, in its order, found a bidi override (<bdo dir=rtl>)",
    ),
    (
        "unicode-bidi",
        VALUE.replace(">−0.25<", '><span style="unicode-bidi:bidi-override;direction:rtl">−0.25</span><'),
        "expected a value whose every character a reader sees, in its order, found "
        '<span style="unicode-bidi:bidi-override;direction:rtl">',
    ),
    (
        "value hidden itself",
        VALUE.replace('class="tv"', 'class="tv" hidden'),
        "expected a value a reader sees as its text reads, found a hidden <span>",
    ),
    (
        "sign typed before",
        "− " + VALUE,
        'expected no sign written before a value, found "input by − " before it',
    ),
    (
        "unit typed after",
        VALUE + " %",
        'expected no unit written after a value, found " %; the plai" after it',
    ),
]


@pytest.mark.parametrize(("case", "tampered", "message"), VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_a_value_reads_as_a_reader_sees_it(prepared, chapter, case, tampered, message):
    found = first_value(prepared, chapter, tampered)
    assert f"{WHERE}: {message}" in found, found


def test_a_minus_typed_before_a_vector_in_math_is_caught(prepared, chapter):
    start = chapter.index('<mrow class="tv" data-trace="FORWARD.input[0]"')
    tampered = chapter[:start] + "<mo>&#x02212;</mo>" + chapter[start:]
    found = lines(prepared, tampered)
    assert any(
        "mrow[data-trace=FORWARD.input[0]] in math" in line
        and "expected no sign written before a value, found <mo>−</mo> before it" in line
        for line in found
    ), found


HEAD_CASES = [
    ("og:description", '<meta property="og:description" content="depth 42">', "meta[property=og:description]"),
    ("og:title", '<meta property="og:title" content="Chapter 42">', "meta[property=og:title]"),
    ("twitter:description", '<meta name="twitter:description" content="depth 42">', "meta[name=twitter:description]"),
    ("noscript in the head", "<noscript><p>depth 42</p></noscript>", ": p: "),
]


@pytest.mark.parametrize(("case", "tag", "where"), HEAD_CASES, ids=[c[0] for c in HEAD_CASES])
def test_what_the_head_shows_is_read(prepared, chapter, case, tag, where):
    found = lines(prepared, chapter.replace("</head>", tag + "</head>", 1))
    assert any(where in line and "found '42'" in line for line in found), found


ATTRIBUTE_CASES = [
    ("aria-level", '<h2 id="predict"', '<h2 aria-level="42" id="predict"', "h2[aria-level]"),
    ("aria-posinset", "<li>", '<li aria-posinset="42">', "li[aria-posinset]"),
    ("aria-rowindex", '<tr><th scope="row">', '<tr aria-rowindex="42"><th scope="row">', "tr[aria-rowindex]"),
    ("MathML alttext", '<math display="inline">', '<math display="inline" alttext="x = 42">', "math[alttext]"),
    ("theme configuration", '"Copied to clipboard"', '"Copied 42 values"', "script#__config string"),
]


@pytest.mark.parametrize(("case", "old", "new", "where"), ATTRIBUTE_CASES, ids=[c[0] for c in ATTRIBUTE_CASES])
def test_numbers_a_screen_reader_speaks_or_a_script_shows_are_read(prepared, chapter, case, old, new, where):
    assert old in chapter
    found = lines(prepared, chapter.replace(old, new, 1))
    assert any(where in line and "found '42'" in line for line in found), found


CSS_CASES = [
    ("counter", "p::before{content:counter(n)} p{counter-reset: n 42}", ["a counter() in content", "a counter set"]),
    ("quotes", 'q{quotes:"4" "2"} q::before{content:open-quote}', ["open-quote or close-quote", "quotes: with"]),
    ("var", 'p{--x:"42"} p::after{content:var(--x)}', ["a var() in content"]),
    ("counter-style", '@counter-style x{system:cyclic;symbols:"4" "2"}', ["@counter-style"]),
    ("bidi", "span{unicode-bidi:bidi-override;direction:rtl}", ["a bidi override"]),
]


@pytest.mark.parametrize(("case", "css", "refused"), CSS_CASES, ids=[c[0] for c in CSS_CASES])
def test_a_style_that_writes_text_the_check_cannot_read_is_refused(prepared, chapter, case, css, refused):
    found = [line for line in lines(prepared, chapter.replace("</head>", f"<style>{css}</style></head>", 1))]
    for what in refused:
        assert any(
            ": style: expected a style that writes only what the check reads, found " + what in line for line in found
        ), found


def test_the_theme_and_site_style_sheets_are_not_refused(built_site):
    for sheet in sorted(built_site.rglob("*.css")):
        assert css_refused(sheet.read_text(encoding="utf-8")) == [], sheet


def test_a_site_style_sheet_that_writes_a_counter_is_refused(prepared, site_copy, clean_verdicts):
    sheet = site_copy / "stylesheets" / "site.css"
    sheet.write_text(sheet.read_text(encoding="utf-8") + "\nh2::before{content:counter(h)}\n", encoding="utf-8")
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert found == [
        "stylesheets/site.css: file: expected the bytes of docs/stylesheets/site.css, found bytes that differ",
        "stylesheets/site.css: style sheet: expected a style that writes only what the check reads, "
        'found a counter() in content ("content:counter(h")',
    ]


@pytest.mark.parametrize("name", ["extra.CSS", "fig.SVG", "notes.txt", "page.htm"])
def test_files_are_judged_by_content_not_by_suffix(prepared, site_copy, name, clean_verdicts):
    if name.endswith("CSS"):
        text = 'p::before{content:"42"}'
    elif name.endswith(".SVG"):
        text = '<svg xmlns="http://www.w3.org/2000/svg"><text>42</text></svg>'
    else:
        text = "<!doctype html><html><body><p>depth 42</p></body></html>"
    (site_copy / name).write_text(text, encoding="utf-8")
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert any(line.startswith(f"{name}: ") and "'42'" in line for line in found), found


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("stray.png", b"\x89PNG\r\n\x1a\n"),  # a picture the check cannot read
        ("chapter-24/notes.bin", b"\x00\x01"),
        ("ru/extra.js", b"document.title = 'depth 42';"),
    ],
)
def test_a_file_no_build_step_writes_is_a_problem(prepared, site_copy, name, data, clean_verdicts):
    (site_copy / name).write_bytes(data)
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert found == [
        f"{name}: file: expected a file the build writes (a page, a download or a copied file), "
        "found a file no build step writes"
    ]


def test_a_copied_theme_file_whose_bytes_changed_is_a_problem(prepared, site_copy, clean_verdicts):
    icon = site_copy / "assets" / "images" / "favicon.png"
    icon.write_bytes(icon.read_bytes() + b"\x00")
    found = [p.line() for p in check_site(site_copy, prepared, clean_verdicts()).problems]
    assert len(found) == 1 and found[0].startswith("assets/images/favicon.png: file: expected the bytes of ")
    assert found[0].endswith("material/templates/assets/images/favicon.png, found bytes that differ")


EMBEDDED_CASES = [
    ("iframe", '<iframe src="notes.txt"></iframe>', "iframe: expected no frame of another document"),
    ("object", '<object data="table.html"></object>', "object: expected no frame of another document"),
    ("embed", '<embed src="x.pdf">', "embed: expected no frame of another document"),
    (
        "img",
        '<img src="../assets/plot.png" alt="">',
        'img[src]: expected a drawing the check can read (SVG) or text, found a raster picture "../assets/plot.png"',
    ),
    ("srcset", '<img src="a.svg" srcset="a.svg 1x, a@2x.webp 2x" alt="">', "img[srcset]: expected a drawing"),
    ("data png", '<img src="data:image/png;base64,iVBORw0KGgo=" alt="">', "img[src]: expected a drawing"),
    ("svg image", '<svg><image href="chart.jpg"/></svg>', "image[href]: expected a drawing"),
]


@pytest.mark.parametrize(("case", "tag", "message"), EMBEDDED_CASES, ids=[c[0] for c in EMBEDDED_CASES])
def test_a_frame_or_a_raster_picture_the_check_cannot_read_is_refused(prepared, chapter, case, tag, message):
    found = lines(prepared, chapter.replace("</article>", tag + "</article>", 1))
    assert len(found) == 1 and found[0].startswith(f"{CHAPTER}: ") and message in found[0], found


def test_a_frame_written_into_the_page_is_read_not_refused(prepared, chapter):
    frame = '<iframe srcdoc="&lt;p&gt;see above&lt;/p&gt;"></iframe><img src="data:image/svg+xml,%3Csvg/%3E" alt="">'
    assert lines(prepared, chapter.replace("</article>", frame + "</article>", 1)) == []
