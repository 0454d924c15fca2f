"""Converting a page with its drawings, formulas and code excerpts stashed gives exactly the whole conversion.

The site's pages themselves are compared in ``test_builders.py`` (the export, built by MkDocs without our
plugin, gives the very pages our build gives); these are the cases a page could still get wrong.
"""

from __future__ import annotations

import markdown

from site_builder.render.stash import stash

# The Markdown extensions mkdocs.yml configures.
EXTENSIONS = [
    "attr_list",
    "md_in_html",
    "admonition",
    "tables",
    "toc",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.highlight",
]
SVG = (
    '<svg viewBox="0 0 10 10" role="img"><title>A drawing</title><g id="node-1"><text x="1">x &amp; y</text></g></svg>'
)
MATH = "<math><mi>x</mi><mo>*</mo><msub><mi>W</mi><mn>2</mn></msub><mo>_</mo></math>"
FIGURE = (
    '<figure class="code-excerpt" data-source="a.py#r"><figcaption><code>a.py</code></figcaption>'
    '<div class="highlight"><pre><span></span><code>x = *y*&#10;</code></pre></div></figure>'
)


def convert(text: str) -> str:
    return markdown.Markdown(extensions=EXTENSIONS).convert(text)


def stashed_convert(text: str) -> str | None:
    kept = stash(text)
    return kept.restore(convert(kept.markdown))


PAGE = f"""Some prose with a formula <span class="math-inline">{MATH}</span> in it, and *emphasis*.

<div class="chart-box">{SVG}</div>

{FIGURE}

| a | b |
|---|---|
| <span class="math-inline">{MATH}</span> | 1 |

- a list item with {MATH}
"""


def test_a_page_of_drawings_formulas_and_code_converts_exactly_as_whole():
    kept = stash(PAGE)
    assert len(kept.elements) == 5 and "<mi>" not in kept.markdown and "<title>" not in kept.markdown
    assert stashed_convert(PAGE) == convert(PAGE)


def test_an_element_reaches_the_page_as_rendered_even_where_markdown_would_lay_it_out_again():
    text = f'<details class="note" markdown>\n<summary>Open</summary>\n\n{FIGURE}\n\n</details>\n'
    assert FIGURE in stashed_convert(text)
    assert FIGURE not in convert(text)  # md_in_html parses the figure and writes it out again, reformatted


def test_an_element_in_a_code_block_does_not_come_back_so_the_page_is_converted_whole():
    text = f"Look:\n\n```html\n{SVG}\n```\n"
    assert stash(text).elements  # stashed, but Markdown escapes the marker inside the code block
    assert stashed_convert(text) is None


def test_a_heading_keeps_its_formula_for_the_table_of_contents():
    text = f"## Why {MATH} matters\n\nText.\n"
    assert stash(text).elements == ()
    assert stashed_convert(text) == convert(text)


def test_of_nested_elements_of_one_name_the_innermost_is_swapped():
    text = '<div class="chart-box"><svg role="img"><svg><text>a</text></svg></svg></div>\n'
    kept = stash(text)
    assert kept.elements == ("<svg><text>a</text></svg>",)
    assert stashed_convert(text) == convert(text)


def test_a_raw_table_and_a_collapsed_block_are_swapped_whole():
    table = '<table id="t"><thead><tr><th>a</th></tr></thead><tbody><tr><td>*1*</td></tr></tbody></table>'
    details = f'<details class="example"><summary>Code</summary>\n{FIGURE}\n</details>'
    text = f"Before.\n\n{table}\n\nBetween.\n\n{details}\n\nAfter.\n"
    kept = stash(text)
    assert kept.elements == (table, details) and kept.anchors() == {"t"}
    assert stashed_convert(text) == convert(text)


def test_the_anchors_inside_stashed_elements_are_still_found():
    kept = stash(f'<div class="chart-box">{SVG}</div>\n\n<svg><a name="here"></a><g id="a&amp;b"></g></svg>\n')
    assert kept.anchors() == {"node-1", "here", "a&b"}


def test_a_marker_typed_into_the_page_is_never_taken_for_an_element():
    kept = stash(f"<div>{SVG}</div>\n")
    typed = f'<svg data-stash="{kept.marker}-0"></svg>'
    text = f"<div>{SVG}</div>\n\n{typed}\n"
    assert stash(text).marker != kept.marker
    assert stashed_convert(text) == convert(text)
