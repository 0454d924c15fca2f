"""Raw HTML that Markdown passes through unchanged, kept out of its way while a page is converted.

A generated page carries its drawings (SVG charts and diagrams), its formulas
(MathML), its code excerpts (highlighted by :func:`~site_builder.render.pages.code_figure`),
its tables and its collapsed blocks as raw HTML: most of its Markdown. Markdown
copies such HTML to the page as it is, but reads every tag of it first, and
MkDocs reads it all once more looking for anchors; that reading was most of a
page's conversion.

:func:`stash` swaps each such element for an empty element of the same name
with a marker attribute (so Markdown meets the same block or inline element,
in the same place) and :meth:`Stash.restore` puts the originals back into the
converted HTML. Nothing is stashed on a Markdown heading line (the table of
contents reads a heading's text). When a marker does not come back exactly
once, verbatim (it sat in a code block, say), :meth:`Stash.restore` returns
``None`` and the page is converted again whole.

So these elements reach the page exactly as they were rendered, which is what
converting the page whole gives too, except where Markdown would have read into
them: MkDocs' ``md_in_html`` lays out again an element inside a ``markdown``
block, and text between the tags of inline HTML can be taken for emphasis.
Every page of this site converts to the very same HTML either way (a test
builds the export without the plugin and compares).
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from typing import Any

# An element Markdown passes through: a drawing, a formula, a figure (a code excerpt, a diagram), a table, a
# collapsed block. The shortest match is taken; one holding a second opening tag of its name (nested) is not
# swapped whole, but looked into.
_ELEMENT = re.compile(r"<(svg|math|figure|table|details)\b[^>]*>.*?</\1\s*>", re.S)
_HEADING_LINE = re.compile(r"[ ]{0,3}#")
# What MkDocs reads from raw HTML for its anchor check: id="…" (and <a name="…">).
_ANCHOR = re.compile(r'<([a-zA-Z][\w:-]*)\s[^>]*?\b(id|name)="([^"]*)"')


@dataclass(frozen=True)
class Stash:
    """The Markdown with its large raw HTML swapped out, and what to put back."""

    markdown: str
    marker: str  # the marker attribute's value prefix, unique to this Markdown
    elements: tuple[str, ...]

    def restore(self, converted: str) -> str | None:
        """The converted HTML with every element back in place; ``None`` if a marker did not come back once."""
        if not self.elements:
            return converted
        seen = [0] * len(self.elements)

        def put_back(m: re.Match[str]) -> str:
            i = int(m[2])
            seen[i] += 1
            return self.elements[i]

        restored = re.sub(
            rf'<(svg|math|figure|table|details) data-stash="{self.marker}-(\d+)"></\1>', put_back, converted
        )
        return restored if all(n == 1 for n in seen) else None

    def anchors(self) -> set[str]:
        """The ids (and ``<a name>``) inside the stashed elements, which MkDocs would have found in the Markdown."""
        found: set[str] = set()
        for element in self.elements:
            for tag, attr, value in _ANCHOR.findall(element):
                if attr == "id" or tag.lower() == "a":
                    found.add(html.unescape(value))
        return found


def stash(markdown: str) -> Stash:
    """``markdown`` with each drawing, formula, figure, table and collapsed block swapped for an empty element of
    the same name."""
    marker = hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:12]
    elements: list[str] = []
    out: list[str] = []
    pos = 0
    while (m := _ELEMENT.search(markdown, pos)) is not None:
        tag, text = m[1], m[0]
        out.append(markdown[pos : m.start()])
        line_start = markdown.rfind("\n", 0, m.start()) + 1
        if len(re.findall(rf"<{tag}\b", text)) != 1 or _HEADING_LINE.match(markdown, line_start):
            # nested elements of one name, or a heading's text: keep this opening tag and look inside it
            pos = markdown.index(">", m.start()) + 1
            out.append(markdown[m.start() : pos])
            continue
        out.append(f'<{tag} data-stash="{marker}-{len(elements)}"></{tag}>')
        elements.append(text)
        pos = m.end()
    out.append(markdown[pos:])
    return Stash("".join(out), marker, tuple(elements))


def stashed_render(page: Any) -> None:
    """Wrap ``page.render`` (a MkDocs page) to convert the page with its large raw HTML stashed, and put it back
    into the HTML after; a page whose elements do not come back as they went is converted whole."""
    convert = page.render

    def render(config: Any, files: Any) -> None:
        whole = page.markdown
        stashed = stash(whole or "")
        if not stashed.elements:
            return convert(config, files)
        page.markdown = stashed.markdown
        try:
            convert(config, files)
        finally:
            page.markdown = whole
        restored = stashed.restore(page.content)
        if restored is None:
            return convert(config, files)
        page.content = restored
        if page.present_anchor_ids is not None:
            page.present_anchor_ids = page.present_anchor_ids | stashed.anchors()
        return None

    page.render = render
